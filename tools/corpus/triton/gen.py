"""Triton kernels written here, compiled to PTX without a GPU (triton.compile on an ASTSource for a
GPUTarget), for several targets and warp counts, the PTX version pinned to 9.0 or below.
Usage: python gen.py OUT_DIR. Issue 33's corpus; an oracle's output, never a dependency."""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def softmax(x, out, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(out + row * stride + cols, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=cols < n)


@triton.jit
def layernorm(x, w, b, out, mean_out, rstd_out, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    v = tl.load(x + row * stride + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n
    d = tl.where(m, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    y = d * rstd * tl.load(w + cols, mask=m) + tl.load(b + cols, mask=m)
    tl.store(out + row * stride + cols, y.to(out.dtype.element_ty), mask=m)
    tl.store(mean_out + row, mean)
    tl.store(rstd_out + row, rstd)


@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    npm = tl.cdiv(M, BM)
    npn = tl.cdiv(N, BN)
    group = pid // (GROUP * npn)
    first = group * GROUP
    size = min(npm - first, GROUP)
    pm = first + (pid % (GROUP * npn)) % size
    pn = (pid % (GROUP * npn)) // size
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        av = tl.load(a + rm[:, None] * sam + (k * BK + rk)[None, :] * sak,
                     mask=(rm[:, None] < M) & ((k * BK + rk)[None, :] < K), other=0.0)
        bv = tl.load(b + (k * BK + rk)[:, None] * sbk + rn[None, :] * sbn,
                     mask=((k * BK + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(av, bv, acc)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def reductions(x, out_sum, out_max, out_arg, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_sum, tl.sum(v, axis=0))
    tl.atomic_max(out_max, tl.max(v, axis=0))
    tl.store(out_arg + tl.program_id(0), tl.argmax(v, axis=0))


@triton.jit
def scan(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + tl.program_id(0) * n + offs, mask=offs < n, other=0)
    tl.store(out + tl.program_id(0) * n + offs, tl.cumsum(v, axis=0), mask=offs < n)


@triton.jit
def dropout(x, out, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    keep = tl.rand(seed, offs) > p
    tl.store(out + offs, tl.where(keep, tl.load(x + offs, mask=m) / (1 - p), 0.0), mask=m)


@triton.jit
def math_ops(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    r = tl.exp2(v) + tl.log(tl.abs(v) + 1) + tl.sin(v) * tl.cos(v) + tl.sqrt_rn(tl.abs(v)) + tl.rsqrt(tl.abs(v) + 1)
    r = r + tl.sigmoid(v) + tl.fdiv(v, 3.0) + tl.floor(v) + tl.ceil(v) + tl.erf(v) + tl.minimum(v, 0.5)
    tl.store(out + offs, r, mask=m)


@triton.jit
def int_ops(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1)
    b = tl.load(y + offs, mask=m, other=1)
    r = (a // b) + (a % b) + (a << 3) + (a >> 2) + (a & b) + (a | b) + (a ^ b) + tl.umulhi(a, b)
    r = r + tl.where(a > b, a, b) + tl.abs(a)
    tl.store(out + offs, r, mask=m)


@triton.jit
def gather_scatter(x, idx, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx + offs, mask=m, other=0)
    v = tl.load(x + i, mask=m)
    tl.atomic_add(out + i, v, mask=m)
    tl.atomic_cas(out + n, 0.0, 1.0) if False else None


@triton.jit
def transpose(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x + rm[:, None] * N + rn[None, :], mask=m)
    tl.store(out + rn[None, :] * M + rm[:, None], v, mask=m)


@triton.jit
def casts(x, o16, obf, o8, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    tl.store(o16 + offs, v.to(tl.float16), mask=m)
    tl.store(obf + offs, v.to(tl.bfloat16), mask=m)
    tl.store(o8 + offs, v.to(tl.int8), mask=m)


@triton.jit
def tma_matmul(a_desc_ptr, b_desc_ptr, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_desc_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_desc_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        av = a_desc.load([pm * BM, k])
        bv = b_desc.load([pn * BN, k])
        acc = tl.dot(av, bv.T, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def jobs():
    f32, f16, bf16 = "*fp32", "*fp16", "*bf16"
    yield "add_f32", add, {"x": f32, "y": f32, "out": f32, "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "add_f16", add, {"x": f16, "y": f16, "out": f16, "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}, 0
    for dt, name in [(f32, "f32"), (f16, "f16"), (bf16, "bf16")]:
        yield f"softmax_{name}", softmax, {"x": dt, "out": dt, "stride": "i32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "layernorm_f16", layernorm, {"x": f16, "w": f32, "b": f32, "out": f16, "mean_out": f32, "rstd_out": f32,
                                       "stride": "i32", "n": "i32", "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 2048}, 0
    for dt, name, acc, minor in [(f16, "f16", f16, 0), (bf16, "bf16", bf16, 80), (f32, "tf32", f32, 80),
                                 ("*fp8e4nv", "e4m3", f16, 89)]:
        for bm, bn, bk in [(64, 64, 32), (128, 128, 64)]:
            sig = {"a": dt, "b": dt, "c": acc, "M": "i32", "N": "i32", "K": "i32", "sam": "i32", "sak": "i32",
                   "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32",
                   "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP": "constexpr"}
            yield f"matmul_{name}_{bm}x{bn}x{bk}", matmul, sig, {"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, minor
    yield "reductions", reductions, {"x": f32, "out_sum": f32, "out_max": f32, "out_arg": "*i32", "n": "i32",
                                     "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "scan", scan, {"x": "*i32", "out": "*i32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "dropout", dropout, {"x": f32, "out": f32, "n": "i32", "p": "fp32", "seed": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "math_ops", math_ops, {"x": f32, "out": f32, "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}, 0
    yield "int_ops", int_ops, {"x": "*i32", "y": "*i32", "out": "*i32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}, 0
    yield "int64_ops", int_ops, {"x": "*i64", "y": "*i64", "out": "*i64", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}, 0
    yield "gather_scatter", gather_scatter, {"x": f32, "idx": "*i32", "out": f32, "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}, 0
    yield "transpose", transpose, {"x": f16, "out": f16, "M": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr"}, {"BM": 64, "BN": 64}, 0
    yield "casts", casts, {"x": f32, "o16": f16, "obf": bf16, "o8": "*i8", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "tma_matmul", tma_matmul, {"a_desc_ptr": f16, "b_desc_ptr": f16, "c": f16, "M": "i32", "N": "i32", "K": "i32",
                                     "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 128, "BK": 64}, 90


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ok = failed = 0
    # (capability, PTX version pinned): every generation Triton 3.9 targets, at or below PTX 9.0.
    for cc, ptx in [(80, 80), (86, 84), (89, 86), (90, 90), (100, 88), (120, 90)]:
        for name, fn, sig, consts, min_cc in jobs():
            if cc < min_cc:
                continue
            for warps, stages in [(4, 3), (8, 2)]:
                path = os.path.join(out, f"{name}.sm_{cc}.w{warps}.ptx")
                if os.path.exists(path):
                    ok += 1
                    continue
                try:
                    k = triton.compile(ASTSource(fn, sig, consts), target=GPUTarget("cuda", cc, 32),
                                       options={"num_warps": warps, "num_stages": stages, "ptx_version": ptx})
                    open(path, "w").write(k.asm["ptx"])
                    ok += 1
                except Exception as e:  # a kernel a target cannot take is skipped, and said
                    failed += 1
                    print(f"triton failed: {name} sm_{cc} w{warps}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
    print(f"{ok} Triton modules in {out} ({failed} not compiled)", file=sys.stderr)


if __name__ == "__main__":
    main()
