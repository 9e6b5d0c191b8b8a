"""One call of torch's SDPA (cuDNN, then flash) on one contiguous decode problem of
`decode_attention_torch.py`'s (bf16, 32 query heads over 8 KV heads, head dim 128, one new token),
after a 256 MiB clear: the launches a profiler times (`ncu python3 benches/decode_sdpa_once.py
8 65536`), each kernel once.

    python3 benches/decode_sdpa_once.py BATCH CONTEXT
"""

import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

from decode_attention_torch import BACKENDS, D, HEADS, KV_HEADS


def main():
    batch, ctx = int(sys.argv[1]), int(sys.argv[2])
    q = torch.randn(batch, 1, HEADS, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    k, v = (torch.randn(batch, ctx, KV_HEADS, D, device="cuda", dtype=torch.bfloat16)
            .transpose(1, 2) for _ in range(2))
    clear = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _, backend in BACKENDS:
        with sdpa_kernel(backend):
            clear.zero_()
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
