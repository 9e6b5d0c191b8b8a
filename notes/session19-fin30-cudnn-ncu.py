"""fin30 (session 19, issue 30): torch 2.11's SDPA under the cuDNN backend, once per cell, between
cudaProfilerStart and cudaProfilerStop, for `ncu --profile-from-start off`: each cell's kernels
(forward: the fprop kernel; backward: every kernel of `torch.autograd.grad` of the forward's
output) profiled, nothing else. Cells are `fwd|bwd:d:causal:seqlen` (16k tokens, hidden 2048, bf16,
inputs made (batch, seq, heads, d) and transposed, as benches/attention_torch.py makes them).
Each cell is run 3 times first (cuDNN's plan built and cached), and a line `cell CELL` printed
before its profiled run, so the ncu log's "==PROF== Profiling" lines that follow are its kernels.
"""

import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

TOKENS = 16384
HIDDEN = 2048


def runner(pas, d, causal, seqlen):
    heads, batch = HIDDEN // d, TOKENS // seqlen
    q, k, v = (torch.randn(batch, seqlen, heads, d, device="cuda", dtype=torch.bfloat16)
               .transpose(1, 2) for _ in range(3))
    if pas == "fwd":
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    d_o = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True)


def main():
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}", flush=True)
    for cell in sys.argv[1:]:
        pas, d, causal, seqlen = cell.split(":")
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            run = runner(pas, int(d), causal == "true", int(seqlen))
            for _ in range(3):
                run()
            torch.cuda.synchronize()
            print(f"cell {cell}", flush=True)
            torch.cuda.profiler.start()
            run()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
