# Session 20 (issue 31): paged / contiguous with and without the KV heads' CTAs in clusters of 8,
# from the decode bench's table (medians of the repeats; cold, back to back). bf16 16-token pages
# against themselves without clusters (the call timed no contiguous bf16 cache).
import os
import statistics as st
import sys

# benches/decode_table.py: beside this file in a GPU kit, else in the repository's benches/.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

rows = decode_table.rows(sys.argv[1])
med = {k: (st.median(v[0] for v in vs), st.median(v[1] for v in vs)) for k, vs in rows.items()}
for p in sorted({k[0] for k in med}, key=lambda x: (len(x), x)):
    print(p)
    for name, base in [("paged 16 e4m3", "contiguous e4m3"), ("paged 16 e4m3 as served", "contiguous e4m3"),
                       ("paged 16", "paged 16"), ("contiguous e4m3", "contiguous e4m3")]:
        b = med.get((p, base))
        for n in [name, name + ", clusters of 8 heads"]:
            if (p, n) in med and b:
                x = med[(p, n)]
                print("  %-42s cold %.3f  b2b %.3f  (%.1f / %.1f us)" % (n, b[0] / x[0], b[1] / x[1], x[0] * 1e3, x[1] * 1e3))
