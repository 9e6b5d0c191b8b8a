"""Session 20, tlb21: paged / contiguous FP8 decode, with and without the page touch
(DecodeConfig::touch_pages), from one decode_attention bench log (its table rows; the medians of
the repeats, and each repeat's ratio for the spread). Usage: python3 THIS BENCH_LOG."""
import re
import os
import statistics as st
import sys

# benches/decode_table.py: beside this file in a GPU kit, else in the repository's benches/.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

rows = decode_table.rows(sys.argv[1], lambda line: print("failed row:", line.strip()[:200]))
problems = ["32x4096", "32x16384", "8x65536", "1x131072"]
touch = sorted({int(m.group(1)) for (_, n) in rows for m in [re.search(r"touching pages (\d+)", n)] if m})
names = [("shuffled", "paged 16 e4m3")] + [(f"shuf t{t}", f"paged 16 e4m3, touching pages {t} tiles ahead") for t in touch]
names += [("served", "paged 16 e4m3 as served")] + [(f"served t{t}", f"paged 16 e4m3 as served, touching pages {t} tiles ahead") for t in touch]
print("paged / contiguous e4m3 (contiguous ms / paged ms; median of repeats [min-max of each repeat's ratio]); bar 0.95")
verdict = {}
for p in problems:
    base = rows.get((p, "contiguous e4m3"))
    if not base:
        print(p, "no contiguous e4m3 row")
        continue
    bc = st.median(x[0] for x in base)
    bb = st.median(x[1] for x in base)
    print(f"{p}: contiguous e4m3 cold {bc*1e3:.1f} us, b2b {bb*1e3:.1f} us")
    for short, name in names:
        r = rows.get((p, name))
        if not r:
            print(f"  {short:11s} missing")
            continue
        n = min(len(r), len(base))
        each = [(base[i][0] / r[i][0], base[i][1] / r[i][1]) for i in range(n)]
        cold, b2b = bc / st.median(x[0] for x in r), bb / st.median(x[1] for x in r)
        lo = [min(e[j] for e in each) for j in (0, 1)]
        hi = [max(e[j] for e in each) for j in (0, 1)]
        print(f"  {short:11s} cold {cold:.3f} [{lo[0]:.3f}-{hi[0]:.3f}]  b2b {b2b:.3f} [{lo[1]:.3f}-{hi[1]:.3f}]")
        verdict.setdefault(short, []).append((p, cold, b2b))
print("verdict (touch against its own placement without it, b2b and cold ratio points, + = touch faster):")
for short, _ in names:
    if " t" not in short:
        continue
    own = "shuffled" if short.startswith("shuf") else "served"
    plain = dict((p, (c, b)) for p, c, b in verdict.get(own, []))
    got = verdict.get(short, [])
    d = [(p, c - plain[p][0], b - plain[p][1]) for p, c, b in got if p in plain]
    if not d:
        print(f"  {short}: no rows")
        continue
    text = " ".join(f"{p} {dc*100:+.1f}/{db*100:+.1f}" for p, dc, db in d)
    mean_b = sum(x[2] for x in d) / len(d)
    call = "FASTER" if mean_b > 0.005 else ("SLOWER" if mean_b < -0.005 else "EVEN")
    below = [p for p, c, b in got if b < 0.95]
    print(f"  {short}: cold/b2b {text}; mean b2b {mean_b*100:+.1f} points: {call}; below 0.95 b2b: {below or 'none'}")
