"""Peers of `cargo bench --bench attention`: torch's scaled_dot_product_attention with each
backend (flash, cuDNN, efficient) on the same shapes, bf16, queries = keys, batch x seqlen = 16k
tokens, heads x head dim = 2048, causal and not.

Prints TFLOP/s (4 * batch * heads * seqlen^2 * d, halved with the causal mask), each the median
CUDA-event time of 20 calls after 3 warm-up calls, each from a cold L2 (rows_torch.median_ms; the
Rust bench's median_ms with Before::ColdL2 does the same). Run it in the same GPU call as the Rust
bench:

    python3 benches/attention_torch.py          # seqlen 512 to 16k, head dims 64/128/256
    python3 benches/attention_torch.py --kit    # the shapes `cargo bench --bench attention` times
    python3 benches/attention_torch.py --kit --d128 --repeats 3   # head dim 128 only, each
                                                # backend timed 3 times in turn (median)
    python3 benches/attention_torch.py --kit --d64  # head dim 64 only (--d256 likewise)
    python3 benches/attention_torch.py --backward  # the backward (flash, cuDNN) on the shapes
                                                # (--d256 etc.: that head dim only;
                                                # --d128 --d256: those two)
                                                # `cargo bench --bench attention_backward` times

The backward is `torch.autograd.grad` of the forward's output (computed once under the same
backend) with a random dO, its TFLOP/s 2.5 times the forward's FLOPs over its time.

torch's tensors are (batch, heads, seq, dim); the inputs are made (batch, seq, heads, dim) as
ptxkit takes them and transposed (a view, as a model would pass them). A backend that refuses a
shape prints "n/a".
"""

import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

# The one timing method of the torch peers (cold L2, CUDA events, median), as the Rust bench's
# median_ms with Before::ColdL2 times.
from rows_torch import median_ms
from torch_timing import repeats

SEQLENS = [512, 1024, 2048, 4096, 8192, 16384]
TOKENS = 16384
HIDDEN = 2048
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def shapes(kit, only):
    """(head dim, causal, seqlen) in the order timed: every length at every head dim, or with
    --kit those of benches/attention.rs (head dims 128, 64 and 256 at 4k-16k,
    `attention_bench::shapes`); `only` (--d64, --d128, --d256) keeps that head dim only."""
    if kit:
        out = [(d, causal, s) for causal in [False, True] for d in [128, 64, 256]
               for s in [4096, 8192, 16384]]
    else:
        out = [(d, causal, s) for d in [64, 128, 256] for causal in [False, True] for s in SEQLENS]
    return [s for s in out if only is None or s[0] == only]


def backward_ms(q, k, v, causal, backend):
    """The median time of the backward of SDPA under `backend` (its forward run once)."""
    q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        d_o = torch.randn_like(out)
        return median_ms(lambda: torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True))


def forward_ms(q, k, v, causal, backend):
    """The median time of SDPA's forward under `backend`."""
    with sdpa_kernel(backend):
        return median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def header(backends, what):
    print(f"| head dim | causal | batch x seqlen | heads | "
          f"{' | '.join(f'{n} {what}' for n, _ in backends)} | best |")
    print("| --- | --- | --- | --- |" + " --- |" * (len(backends) + 1))


def row(d, causal, seqlen, backends, times, timed, flops_factor):
    """One table row: random (batch, seq, heads, d) bf16 inputs transposed to torch's layout,
    each backend's median time by `timed` (the backends in turn `times` times, so a clock drift
    reaches them alike; a backend that refuses the shape has none), as TFLOP/s of
    `flops_factor` times the forward's FLOPs."""
    heads = HIDDEN // d
    batch = TOKENS // seqlen
    q, k, v = (torch.randn(batch, seqlen, heads, d, device="cuda", dtype=torch.bfloat16)
               .transpose(1, 2) for _ in range(3))
    flops = flops_factor * 4 * batch * heads * seqlen * seqlen * d / (2 if causal else 1)
    ms = {name: [] for name, _ in backends}
    for _ in range(times):
        for name, backend in backends:
            try:
                ms[name].append(timed(q, k, v, causal, backend))
            except RuntimeError:
                pass
    cells, best = [], (0.0, "")
    for name, _ in backends:
        if not ms[name]:
            cells.append("n/a")
            continue
        tf = flops / sorted(ms[name])[len(ms[name]) // 2] / 1e9
        cells.append(f"{tf:.1f}")
        if tf > best[0]:
            best = (tf, name)
    print(f"| {d} | {str(causal).lower()} | {batch}x{seqlen} | {heads} | {' | '.join(cells)} "
          f"| {best[0]:.1f} {best[1]} |")


def main():
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    argv = sys.argv[1:]
    times = repeats(argv, 1)
    if "--backward" in argv:
        # The backward: head dims 128, 64 and 256 at 4k-16k, causal and not, flash and cuDNN
        # (`attention_bench::shapes`).
        backends = [b for b in BACKENDS if b[0] != "efficient"]
        header(backends, "bwd TFLOP/s")
        # `--d128 --d256` and the like: those head dims only.
        only = [d for d in (64, 128, 256) if f"--d{d}" in argv]
        for causal in [False, True]:
            for d in [d for d in (128, 64, 256) if not only or d in only]:
                for seqlen in (4096, 8192, 16384):
                    row(d, causal, seqlen, backends, times, backward_ms, 2.5)
        return
    header(BACKENDS, "TFLOP/s")
    only = next((d for d in (64, 128, 256) if f"--d{d}" in argv), None)
    for d, causal, seqlen in shapes("--kit" in argv, only):
        row(d, causal, seqlen, BACKENDS, times, forward_ms, 1)


if __name__ == "__main__":
    main()
