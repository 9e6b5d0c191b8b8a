"""Session 16, dec16: the rows of the decode table (gemm_decode's output) below 1.0 in run 1 or
run 2, as `dtype MxNxK pick ratio1 ratio2`, both-run rows first (what the call's ncu step
profiles, the pick and the baseline at each)."""
import sys

rows = []
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 13 or "x" not in cells[1] or cells[2] not in ("bf16", "e4m3"):
        continue
    try:
        r1, r2 = float(cells[5]), float(cells[8])
    except ValueError:
        continue
    if min(r1, r2) < 1.0:
        rows.append((max(r1, r2) >= 1.0, cells[2], cells[1], cells[10], r1, r2))
rows.sort(key=lambda r: (r[0], min(r[4], r[5])))
# Per dtype: every row below 1.0 in both runs, then those below 0.97 in one, at most 8.
kept = {}
for either, dtype, shape, pick, r1, r2 in rows:
    if either and min(r1, r2) >= 0.97:
        continue
    if len(kept.setdefault(dtype, [])) < 8:
        kept[dtype].append((shape, pick, r1, r2))
for dtype, items in kept.items():
    for shape, pick, r1, r2 in items:
        print(dtype, shape, pick, r1, r2)
