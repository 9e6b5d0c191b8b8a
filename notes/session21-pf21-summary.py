# Session 21, pf21 (issue 31): paged / contiguous FP8 with and without the cp.async copies' L2
# prefetch size (DecodeConfig::l2_prefetch), from decode bench logs (their table rows; the
# medians of each log's repeats; cold, back to back), one column a log (a bench process), and
# each prefetch row against its placement without it (time without / time with).
import os
import statistics as st
import sys

# benches/decode_table.py: beside this file in a GPU kit, else in the repository's benches/.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

logs = [decode_table.rows(p) for p in sys.argv[1:]]
meds = [{k: (st.median(v[0] for v in vs), st.median(v[1] for v in vs)) for k, vs in r.items()} for r in logs]
problems = sorted({k[0] for m in meds for k in m}, key=lambda x: (len(x), x))
base = "contiguous e4m3"
names = ["paged 16 e4m3", "paged 16 e4m3 in order", "paged 16 e4m3 as served", "paged 64 e4m3"]
for p in problems:
    print(p, " ".join("contig %.1f/%.1f us" % tuple(x * 1e3 for x in m[(p, base)]) for m in meds if (p, base) in m))
    for name in names:
        for suffix in ["", ", L2 prefetch 128B", ", L2 prefetch 256B"]:
            n = name + suffix
            cells, vs = [], []
            for m in meds:
                b, x, w = m.get((p, base)), m.get((p, n)), m.get((p, name))
                if not (b and x):
                    continue
                cells.append("%.3f %.3f" % (b[0] / x[0], b[1] / x[1]))
                if suffix and w:
                    vs.append("%.3f %.3f" % (w[0] / x[0], w[1] / x[1]))
            if cells:
                extra = ("  | vs without: " + "; ".join(vs)) if vs else ""
                print("  %-42s %s%s" % (n, "; ".join(cells), extra))
