# Session 21, clu22 (issue 31): the KV heads' CTAs in clusters of 2, 4 and 8
# (DecodeConfig::cluster_heads), from the decode bench's tables, one file a process: each process's
# medians of its repeats (cold, back to back). FP8 pages / the unclustered contiguous FP8 cache;
# FP8 pages in clusters / the contiguous FP8 cache in the same clusters; each cache clustered /
# itself unclustered (the bf16 16-token pages against themselves).
import os
import statistics as st
import sys

# benches/decode_table.py: beside this file in a GPU kit, else in the repository's benches/.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

CLUSTERS = [1, 2, 4, 8]
CACHES = ["paged 16 e4m3", "paged 16 e4m3 as served", "contiguous e4m3", "paged 16"]


def name(cache, c):
    return cache if c == 1 else f"{cache}, clusters of {c} heads"


procs = []
for path in sys.argv[1:]:
    rows = decode_table.rows(path)
    procs.append({k: (st.median(v[0] for v in vs), st.median(v[1] for v in vs)) for k, vs in rows.items()})


def fmt(xs):
    return " ".join(f"{x:.3f}" for x in xs)


problems = sorted({k[0] for m in procs for k in m}, key=lambda p: (-int(p.split("x")[0]), int(p.split("x")[1])))
for p in problems:
    print(f"== {p}: each column one process, cold / back to back")
    base = [m.get((p, "contiguous e4m3")) for m in procs]
    for cache in ["paged 16 e4m3", "paged 16 e4m3 as served"]:
        for c in CLUSTERS:
            xs = [(b, m.get((p, name(cache, c)))) for b, m in zip(base, procs)]
            xs = [(b, x) for b, x in xs if b and x]
            if xs:
                print(f"  {name(cache, c)} / contiguous e4m3: "
                      f"{fmt(b[0] / x[0] for b, x in xs)} / {fmt(b[1] / x[1] for b, x in xs)}")
    for cache in ["paged 16 e4m3", "paged 16 e4m3 as served"]:
        for c in CLUSTERS[1:]:
            xs = [(m.get((p, name("contiguous e4m3", c))), m.get((p, name(cache, c)))) for m in procs]
            xs = [(b, x) for b, x in xs if b and x]
            if xs:
                print(f"  {name(cache, c)} / contiguous e4m3 in the same clusters: "
                      f"{fmt(b[0] / x[0] for b, x in xs)} / {fmt(b[1] / x[1] for b, x in xs)}")
    for cache in CACHES:
        for c in CLUSTERS[1:]:
            xs = [(m.get((p, cache)), m.get((p, name(cache, c)))) for m in procs]
            xs = [(b, x) for b, x in xs if b and x]
            if xs:
                print(f"  {name(cache, c)} / unclustered: "
                      f"{fmt(b[0] / x[0] for b, x in xs)} / {fmt(b[1] / x[1] for b, x in xs)}")
    for cache in ["contiguous e4m3"]:
        xs = [m.get((p, cache)) for m in procs]
        xs = [x for x in xs if x]
        print(f"  contiguous e4m3 us: {fmt(1000 * x[0] for x in xs)} / {fmt(1000 * x[1] for x in xs)}")
