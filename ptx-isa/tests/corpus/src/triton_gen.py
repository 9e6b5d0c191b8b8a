"""Writes the PTX Triton generates for a few kernels (run on a machine with a GPU and Triton)."""
import os
import sys

import torch
import triton
import triton.language as tl

OUT = sys.argv[1]


@triton.jit
def add(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@triton.jit
def softmax(o, x, stride, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + r * stride + c, mask=c < cols, other=-float("inf"))
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(o + r * stride + c, e / tl.sum(e, axis=0), mask=c < cols)


@triton.jit
def layernorm(o, x, w, b, stride, n, eps, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n
    v = tl.load(x + r * stride + c, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n
    d = tl.where(m, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    y = d * rstd * tl.load(w + c, mask=m) + tl.load(b + c, mask=m)
    tl.store(o + r * stride + c, y.to(o.dtype.element_ty), mask=m)


@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ka = k * BK + rk
        ta = tl.load(a + rm[:, None] * sam + ka[None, :] * sak,
                     mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        tb = tl.load(b + ka[:, None] * sbk + rn[None, :] * sbn,
                     mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(ta, tb)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        ta = a_desc.load([pm * BM, k])
        tb = b_desc.load([pn * BN, k])
        acc = tl.dot(ta, tb.T, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.bfloat16))


def save(name, compiled):
    path = os.path.join(OUT, f"triton_{name}.ptx")
    with open(path, "w") as f:
        f.write(compiled.asm["ptx"])
    print("wrote", path)


def main():
    dev = "cuda"
    n = 4096
    x = torch.randn(n, device=dev)
    y = torch.randn(n, device=dev)
    o = torch.empty_like(x)
    save("add", add[(n // 1024,)](x, y, o, n, BLOCK=1024))
    m = torch.randn(64, 1000, device=dev)
    om = torch.empty_like(m)
    save("softmax", softmax[(64,)](om, m, m.stride(0), 1000, BLOCK=1024))
    h = torch.randn(64, 768, device=dev, dtype=torch.float16)
    w = torch.randn(768, device=dev, dtype=torch.float16)
    b = torch.randn(768, device=dev, dtype=torch.float16)
    oh = torch.empty_like(h)
    save("layernorm", layernorm[(64,)](oh, h, w, b, h.stride(0), 768, 1e-5, BLOCK=1024))
    A = torch.randn(512, 256, device=dev, dtype=torch.bfloat16)
    B = torch.randn(256, 384, device=dev, dtype=torch.bfloat16)
    C = torch.empty(512, 384, device=dev, dtype=torch.bfloat16)
    k = matmul[(4, 3)](A, B, C, 512, 384, 256, A.stride(0), A.stride(1), B.stride(0),
                       B.stride(1), C.stride(0), C.stride(1), BM=128, BN=128, BK=64)
    save("matmul", k)
    ref = (A.float() @ B.float()).to(torch.bfloat16)
    print("matmul max err", (C.float() - ref.float()).abs().max().item())
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=dev))
        Bt = B.t().contiguous()
        ad = TensorDescriptor.from_tensor(A, [128, 64])
        bd = TensorDescriptor.from_tensor(Bt, [128, 64])
        cd = TensorDescriptor.from_tensor(C, [128, 128])
        k = matmul_tma[(4, 3)](ad, bd, cd, 256, BM=128, BN=128, BK=64)
        save("matmul_tma", k)
        print("matmul_tma max err", (C.float() - ref.float()).abs().max().item())
    except Exception as e:  # older Triton: no host tensor descriptors
        print("matmul_tma skipped:", e)


main()
