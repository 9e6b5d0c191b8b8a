# Session 21, the lead's call on the FP8 default of KV heads' CTAs in pairs
# (DecodeConfig::cluster_heads = 2 over an FP8 cache): from the decode bench's tables, one file a
# process, each process's medians of its repeats (cold, back to back). Issue 31's ratios with the
# new default and unclustered: FP8 16-token pages (shuffled, as served) / the contiguous FP8 cache,
# FP8 / bf16 tokens per second on the contiguous caches, and each FP8 cache paired / unclustered.
import os
import statistics as st
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

procs = []
for path in sys.argv[1:]:
    rows = decode_table.rows(path)
    procs.append({k: (st.median(v[0] for v in vs), st.median(v[1] for v in vs)) for k, vs in rows.items()})


def ratios(p, num, den):
    """den's time / num's time (num's speed over den's) in each process: cold, back to back."""
    xs = [(m.get((p, num)), m.get((p, den))) for m in procs]
    xs = [(a, b) for a, b in xs if a and b]
    cold = " ".join(f"{b[0] / a[0]:.3f}" for a, b in xs)
    b2b = " ".join(f"{b[1] / a[1]:.3f}" for a, b in xs)
    return f"{cold} / {b2b}"


NO = ", no clusters"
problems = sorted({k[0] for m in procs for k in m}, key=lambda p: (-int(p.split("x")[0]), int(p.split("x")[1])))
for p in problems:
    print(f"== {p}: each value one process, cold / back to back")
    for pages in ["paged 16 e4m3", "paged 16 e4m3 as served"]:
        print(f"  {pages} / contiguous e4m3, pairs (default): {ratios(p, pages, 'contiguous e4m3')}")
        print(f"  {pages} / contiguous e4m3, no clusters: {ratios(p, pages + NO, 'contiguous e4m3' + NO)}")
    # tokens/s FP8 over bf16 = bf16 time / FP8 time.
    print(f"  e4m3 / bf16 tokens/s, contiguous, pairs (default): {ratios(p, 'contiguous e4m3', 'contiguous')}")
    print(f"  e4m3 / bf16 tokens/s, contiguous, no clusters: {ratios(p, 'contiguous e4m3' + NO, 'contiguous')}")
    for cache in ["contiguous e4m3", "paged 16 e4m3", "paged 16 e4m3 as served"]:
        print(f"  {cache}: pairs / no clusters (speed): {ratios(p, cache, cache + NO)}")
