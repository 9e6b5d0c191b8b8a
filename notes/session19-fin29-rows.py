"""Session 19, fin29: the decode table's rows (gemm_decode's output) below 1.0, as
`dtype MxNxK pick ratio1 ratio2`: with `both` those below 1.0 in runs 1 and 2 (worst first),
with `either` those below 1.0 in one run only."""
import sys

mode, files = sys.argv[1], sys.argv[2:]
rows = []
for f in files:
    for line in open(f, errors="replace"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 13 or "x" not in cells[1] or cells[2] not in ("bf16", "e4m3"):
            continue
        try:
            r1, r2 = float(cells[5]), float(cells[8])
        except ValueError:
            continue
        both = r1 < 1.0 and r2 < 1.0
        either = (r1 < 1.0) != (r2 < 1.0)
        if (mode == "both" and both) or (mode == "either" and either):
            rows.append((cells[2], cells[1], cells[10], r1, r2))
rows.sort(key=lambda r: (r[0], min(r[3], r[4])))
for dtype, shape, pick, r1, r2 in rows:
    print(dtype, shape, pick, r1, r2)
