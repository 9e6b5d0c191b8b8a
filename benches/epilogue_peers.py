"""The fused GEMM epilogue's peers on this GPU: how much bias + GELU(tanh) + residual costs
them over their own plain GEMM (the ratio `benches/gemm_epilogue.rs` reports for ptxkit).

    python3 benches/epilogue_peers.py [4096 8192]

Rows: cuBLAS's plain bf16 GEMM (`x @ w.T`); cuBLASLt's fused bias + GELU(tanh) epilogue
(`torch._addmm_activation(..., use_gelu=True)`, CUBLASLT_EPILOGUE_GELU_BIAS), then the residual
added by a second kernel; eager PyTorch (three kernels); and torch.compile's default mode (the
GEMM by cuBLAS, the epilogue one fused Triton kernel). Median of 50 launches, CUDA events
(`torch_timing.median_ms`)."""

import sys

import torch
import torch.nn.functional as F
from torch_timing import median_ms


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [4096, 8192]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| size | peer | ms | TFLOP/s | / plain cuBLAS |")
    print("| --- | --- | --- | --- | --- |")
    for n in sizes:
        g = torch.Generator(device="cuda").manual_seed(n)
        x = torch.rand(n, n, device="cuda", generator=g, dtype=torch.bfloat16) * 2 - 1
        w = torch.rand(n, n, device="cuda", generator=g, dtype=torch.bfloat16) * 2 - 1
        b = torch.rand(n, device="cuda", generator=g, dtype=torch.bfloat16) * 2 - 1
        r = torch.rand(n, n, device="cuda", generator=g, dtype=torch.bfloat16) * 2 - 1

        def eager():
            return F.gelu(x @ w.T + b, approximate="tanh") + r

        compiled = torch.compile(eager)
        rows = [
            ("cuBLAS plain", lambda: x @ w.T),
            ("cuBLASLt bias+GELU epilogue", lambda: torch._addmm_activation(b, x, w.T, use_gelu=True)),
            ("cuBLASLt bias+GELU epilogue, + residual", lambda: torch._addmm_activation(b, x, w.T, use_gelu=True) + r),
            ("eager bias+GELU+residual", eager),
            ("torch.compile bias+GELU+residual", compiled),
        ]
        ref = eager().float()
        plain = None
        for name, f in rows:
            if "+residual" in name.replace(", + residual", "+residual") and name != "cuBLASLt bias+GELU epilogue":
                err = ((f().float() - ref).norm() / ref.norm()).item()
                assert err < 2e-2, (name, err)
            ms = median_ms(f, iters=50, warmup=5)
            plain = plain or ms
            print(f"| {n} | {name} | {ms:.4f} | {2 * n**3 / ms / 1e9:.0f} | {plain / ms:.3f} |")


if __name__ == "__main__":
    main()
