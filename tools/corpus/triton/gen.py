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
def block_offsets(n, BLOCK: tl.constexpr):
    """This program's block of a vector of n: the offsets and the mask."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    return offs, offs < n


@triton.jit
def axpby(x, y, out, n, alpha, beta, BLOCK: tl.constexpr):
    offs, m = block_offsets(n, BLOCK)
    v = alpha * tl.load(x + offs, mask=m).to(tl.float32) + beta * tl.load(y + offs, mask=m).to(tl.float32)
    tl.store(out + offs, v.to(out.dtype.element_ty), mask=m)


@triton.jit
def online_softmax(x, out, stride, n, BLOCK: tl.constexpr):
    """Long rows in column blocks: a running max and sum, then a second pass that writes."""
    row = x + tl.program_id(0) * stride
    run_max = tl.full((), -float("inf"), tl.float32)
    run_sum = tl.zeros((), tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(row + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(v, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(v - new_max), axis=0)
        run_max = new_max
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(row + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        p = tl.exp(v - run_max) / run_sum
        tl.store(out + tl.program_id(0) * stride + cols, p.to(out.dtype.element_ty), mask=cols < n)


@triton.jit
def residual_rmsnorm(x, res, w, out, stride, n, eps, BLOCK: tl.constexpr):
    """h = x + res written back to res, then RMSNorm(h) * w."""
    base = tl.program_id(0) * stride
    cols = tl.arange(0, BLOCK)
    m = cols < n
    h = tl.load(x + base + cols, mask=m, other=0.0).to(tl.float32) + tl.load(res + base + cols, mask=m, other=0.0)
    tl.store(res + base + cols, h, mask=m)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n + eps)
    tl.store(out + base + cols, (h * rstd * tl.load(w + cols, mask=m)).to(out.dtype.element_ty), mask=m)


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
    offs, m = block_offsets(n, BLOCK)
    v = tl.load(x + offs, mask=m, other=0.0)
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
    offs, m = block_offsets(n, BLOCK)
    keep = tl.rand(seed, offs) > p
    tl.store(out + offs, tl.where(keep, tl.load(x + offs, mask=m) / (1 - p), 0.0), mask=m)


@triton.jit
def math_ops(x, out, n, BLOCK: tl.constexpr):
    offs, m = block_offsets(n, BLOCK)
    v = tl.load(x + offs, mask=m)
    r = tl.exp2(v) + tl.log(tl.abs(v) + 1) + tl.sin(v) * tl.cos(v) + tl.sqrt_rn(tl.abs(v)) + tl.rsqrt(tl.abs(v) + 1)
    r = r + tl.sigmoid(v) + tl.fdiv(v, 3.0) + tl.floor(v) + tl.ceil(v) + tl.erf(v) + tl.minimum(v, 0.5)
    tl.store(out + offs, r, mask=m)


@triton.jit
def int_ops(x, y, out, n, BLOCK: tl.constexpr):
    offs, m = block_offsets(n, BLOCK)
    a = tl.load(x + offs, mask=m, other=1)
    b = tl.load(y + offs, mask=m, other=1)
    r = (a // b) + (a % b) + (a << 3) + (a >> 2) + (a & b) + (a | b) + (a ^ b) + tl.umulhi(a, b)
    r = r + tl.where(a > b, a, b) + tl.abs(a)
    tl.store(out + offs, r, mask=m)


@triton.jit
def gather_scatter(x, idx, out, n, BLOCK: tl.constexpr):
    offs, m = block_offsets(n, BLOCK)
    i = tl.load(idx + offs, mask=m, other=0)
    v = tl.load(x + i, mask=m)
    tl.atomic_add(out + i, v, mask=m)
    tl.atomic_max(out + n, tl.max(v, axis=0))


@triton.jit
def transpose(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x + rm[:, None] * N + rn[None, :], mask=m)
    tl.store(out + rn[None, :] * M + rm[:, None], v, mask=m)


@triton.jit
def casts(x, o16, obf, o8, n, BLOCK: tl.constexpr):
    offs, m = block_offsets(n, BLOCK)
    v = tl.load(x + offs, mask=m)
    tl.store(o16 + offs, v.to(tl.float16), mask=m)
    tl.store(obf + offs, v.to(tl.bfloat16), mask=m)
    tl.store(o8 + offs, v.to(tl.int8), mask=m)


@triton.jit
def tma_matmul(a_desc_ptr, b_desc_ptr, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Persistent: each program walks tiles in steps of the grid, operands by in-kernel TMA descriptors."""
    a_desc = tl.make_tensor_descriptor(a_desc_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_desc_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    tiles_n = tl.cdiv(N, BN)
    for tile in range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, tl.num_programs(0)):
        off_m = (tile // tiles_n) * BM
        off_n = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
        rm = off_m + tl.arange(0, BM)
        rn = off_n + tl.arange(0, BN)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def jobs():
    f32, f16, bf16 = "*fp32", "*fp16", "*bf16"
    for dt, name in [(f32, "f32"), (f16, "f16"), (bf16, "bf16")]:
        yield f"axpby_{name}", axpby, {"x": dt, "y": dt, "out": dt, "n": "i32", "alpha": "fp32", "beta": "fp32",
                                       "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
        yield f"online_softmax_{name}", online_softmax, {"x": dt, "out": dt, "stride": "i32", "n": "i32",
                                                         "BLOCK": "constexpr"}, {"BLOCK": 1024}, 0
    yield "residual_rmsnorm_f16", residual_rmsnorm, {"x": f16, "res": f32, "w": f32, "out": f16, "stride": "i32",
                                                     "n": "i32", "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 2048}, 0
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
