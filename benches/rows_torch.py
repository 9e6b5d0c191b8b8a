"""Peers of `cargo bench --bench rows`: torch eager and torch.compile on the same shapes.

Prints GB/s (bytes read + written, as the Rust bench counts them) and the fraction of a
device-to-device copy measured in this same process. Run it in the same GPU call as the Rust
bench so the two tables compare on one machine:

    python3 benches/rows_torch.py

ROWS_ONLY="rmsnorm f32 16384x8192" times one case, "layernorm bf16,32768x1024" the cases whose
names contain either part (as the Rust bench's variable does); with
ROWS_PROFILE=1 one more call of its compiled kernel runs between cudaProfilerStart and Stop, for
`ncu --profile-from-start off python3 benches/rows_torch.py`.
"""

import os

import torch
import torch.nn.functional as F

import torch_timing

SHAPES = [(4096, 4096), (4096, 8192), (16384, 8192), (2048, 65536), (32768, 1024)]


FLUSH = None
# About 0.5 ms at the H100's 1.98 GHz boost clock.
SPIN_CYCLES = 1_000_000


def median_ms(fn, iters=20, warmup=3):
    """Median CUDA-event time of fn, each run from a cold L2 (a 256 MiB buffer cleared first, as
    triton.testing.do_bench does, and as ptxkit's median_ms with Before::ColdL2 does). The clear,
    and a spin of about 0.5 ms after it, keep the GPU busy while Python enqueues fn:
    torch.compile's host-side dispatch (guards, wrapper) can take longer than the clear alone,
    and would otherwise count as GPU time (run 5 saw compile's figure for one shape move from 2178 to 1147 GB/s)."""
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def cold():
        FLUSH.zero_()
        torch.cuda._sleep(SPIN_CYCLES)

    return torch_timing.median_ms(fn, iters, warmup, before=cold)


def copy_gbs():
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    return 2 * src.numel() / ms / 1e6


def softmax(x, w, b, r):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def rmsnorm(x, w, b, r):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)


def residual_rmsnorm(x, w, b, r):
    h = x + r
    r.copy_(h)
    return rmsnorm(h, w, b, r)


def layernorm(x, w, b, r):
    return F.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5).to(x.dtype)


def swiglu(g, u):
    return (F.silu(g.float()) * u.float()).to(g.dtype)


OPS = [("softmax", softmax, 2), ("rmsnorm", rmsnorm, 2), ("residual_rmsnorm", residual_rmsnorm, 4),
       ("layernorm", layernorm, 2)]


ONLY = os.environ.get("ROWS_ONLY")
PROFILE = os.environ.get("ROWS_PROFILE") is not None


def wanted(op_name, dtype_name, rows, cols):
    """Whether ROWS_ONLY (unset: every case) names this case: a comma-separated list of parts of
    case names, as the Rust bench reads it ("layernorm bf16,32768x1024")."""
    case = f"{op_name} {dtype_name} {rows}x{cols}"
    return ONLY is None or any(part.strip() in case for part in ONLY.split(","))


def profiled(fn):
    """One call of fn inside the profiler's range (only when ROWS_PROFILE is set)."""
    if PROFILE:
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


def main():
    # One specialised compile per shape (the fastest torch.compile offers), not a generic one.
    torch._dynamo.config.cache_size_limit = 256
    copy = copy_gbs()
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; copy {copy:.0f} GB/s")
    print("| op | dtype | rows x cols | eager GB/s | compile GB/s | compile of copy |")
    print("| --- | --- | --- | --- | --- | --- |")
    for rows, cols in SHAPES:
        for dtype, name in [(torch.float32, "f32"), (torch.bfloat16, "bf16")]:
            x = torch.randn(rows, cols, device="cuda", dtype=dtype)
            r = torch.randn_like(x)
            w = torch.randn(cols, device="cuda", dtype=dtype)
            b = torch.randn(cols, device="cuda", dtype=dtype)
            size = x.element_size() * x.numel()
            for op_name, fn, passes in OPS:
                if not wanted(op_name, name, rows, cols):
                    continue
                compiled = torch.compile(fn, dynamic=False)
                eager = passes * size / median_ms(lambda: fn(x, w, b, r)) / 1e6
                comp = passes * size / median_ms(lambda: compiled(x, w, b, r)) / 1e6
                print(f"| {op_name} | {name} | {rows}x{cols} | {eager:.0f} | {comp:.0f} | {comp / copy:.3f} |")
                profiled(lambda: compiled(x, w, b, r))
            if not wanted("swiglu", name, rows, cols):
                continue
            u = torch.randn_like(x)
            compiled = torch.compile(swiglu, dynamic=False)
            eager = 3 * size / median_ms(lambda: swiglu(x, u)) / 1e6
            comp = 3 * size / median_ms(lambda: compiled(x, u)) / 1e6
            print(f"| swiglu | {name} | {rows}x{cols} | {eager:.0f} | {comp:.0f} | {comp / copy:.3f} |")
            profiled(lambda: compiled(x, u))


if __name__ == "__main__":
    main()
