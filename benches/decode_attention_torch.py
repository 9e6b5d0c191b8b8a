"""Peers of `cargo bench --bench decode_attention`: torch's scaled_dot_product_attention with
the cuDNN and flash backends on the same contiguous decode problems (bf16, 32 query heads over 8
KV heads with enable_gqa, head dim 128; batch x context 32 x 4k, 32 x 16k, 8 x 64k and 1 x 128k
with one new token).

Prints GB/s of K and V read (batch * context * kv_heads * d * 2 bytes * 2) and tokens per second,
each from the median CUDA-event time of 20 calls after 3 warm-up calls, each from a cold L2
(rows_torch.median_ms; the Rust bench's median_ms with Before::ColdL2 does the same), and back
to back: the mean of 20 calls between two events, alternating between two copies of the cache
(torch_timing.back_to_back_ms; the Rust bench's mean_ms_back_to_back does the same). Each
backend timed --repeats times in turn (3 unless given; the median of those). Run it in the same
GPU call as the Rust bench:

    python3 benches/decode_attention_torch.py

The cache is made (batch, context, kv_heads, d) as ptxkit's contiguous cache holds it and
transposed (a view). With several new tokens the mask is the bottom-right causal one
(token t sees keys up to context - q_len + t), passed as a boolean mask; one new token takes no
mask. A backend that refuses a problem prints "n/a". Also prints the device-to-device copy rate
(rows_torch.copy_gbs) the issue's fractions are of.
"""

import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

from rows_torch import SPIN_CYCLES, copy_gbs, median_ms
from torch_timing import back_to_back_ms, repeats

HEADS, KV_HEADS, D = 32, 8, 128
PROBLEMS = [(32, 4096, 1), (32, 16384, 1), (8, 65536, 1), (1, 131072, 1)]
BACKENDS = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)]


def main():
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    print(f"device-to-device copy: {copy_gbs():.0f} GB/s")
    names = " | ".join(f"{n} GB/s" for n, _ in BACKENDS)
    b2b_names = " | ".join(f"{n} back-to-back GB/s" for n, _ in BACKENDS)
    print(f"| batch x context | q_len | {names} | best GB/s | best tokens/s | {b2b_names} "
          f"| best back-to-back GB/s | best back-to-back tokens/s |")
    print("| --- | --- |" + " --- |" * (2 * len(BACKENDS) + 4))
    times = repeats(sys.argv[1:], 3)
    for batch, ctx, q_len in PROBLEMS:
        q = torch.randn(batch, q_len, HEADS, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        # Two copies of the cache: the back-to-back calls alternate between them.
        kvs = [[torch.randn(batch, ctx, KV_HEADS, D, device="cuda", dtype=torch.bfloat16)
                .transpose(1, 2) for _ in range(2)] for _ in range(2)]
        k, v = kvs[0]
        mask = None
        if q_len > 1:
            rows = torch.arange(q_len, device="cuda")[:, None]
            cols = torch.arange(ctx, device="cuda")[None, :]
            mask = cols <= rows + ctx - q_len
        kv_bytes = batch * ctx * KV_HEADS * D * 2 * 2
        ms = {name: [] for name, _ in BACKENDS}
        b2b = {name: [] for name, _ in BACKENDS}
        calls = [lambda kv=kv: F.scaled_dot_product_attention(
            q, kv[0], kv[1], attn_mask=mask, enable_gqa=True) for kv in kvs]
        for _ in range(times):
            for name, backend in BACKENDS:
                try:
                    with sdpa_kernel(backend):
                        ms[name].append(median_ms(calls[0]))
                        b2b[name].append(back_to_back_ms(
                            calls, before=lambda: torch.cuda._sleep(SPIN_CYCLES)))
                except RuntimeError:
                    pass

        def cells_of(times_of):
            cells, best = [], (0.0, "", 0.0)
            for name, _ in BACKENDS:
                if not times_of[name]:
                    cells.append("n/a")
                    continue
                t = sorted(times_of[name])[len(times_of[name]) // 2]
                gbs = kv_bytes / t / 1e6
                cells.append(f"{gbs:.0f}")
                if gbs > best[0]:
                    best = (gbs, name, batch * q_len / t * 1e3)
            return f"{' | '.join(cells)} | {best[0]:.0f} {best[1]} | {best[2]:.0f}"

        print(f"| {batch}x{ctx} | {q_len} | {cells_of(ms)} | {cells_of(b2b)} |")
        del q, k, v, kvs, calls


if __name__ == "__main__":
    main()
