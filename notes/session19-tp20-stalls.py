"""Top SASS lines by warp-stall samples in each kernel of an ncu source-page CSV (tp20)."""
import csv, sys

rows = list(csv.reader(open(sys.argv[1], newline="", errors="replace")))
blocks, cur, head = [], None, None
for r in rows:
    if any("Stall Sampling" in c for c in r) and any(c.strip() in ("Source", "# Address", "Address") for c in r):
        head = r
        cur = {"head": r, "rows": [], "title": blocks and "" or ""}
        blocks.append(cur)
        continue
    if cur is not None and len(r) == len(head):
        cur["rows"].append(r)
    elif r and cur is not None and len(r) < 3:
        cur["title"] = " ".join(r)[:200]
print(f"{len(blocks)} kernels in the source page")
for i, b in enumerate(blocks):
    h = b["head"]
    src = next((j for j, c in enumerate(h) if c.strip() == "Source"), 1)
    alls = [j for j, c in enumerate(h) if "Stall Sampling" in c]
    col = alls[0]
    def num(x):
        try:
            return float(x.replace(",", ""))
        except ValueError:
            return 0.0
    total = sum(num(r[col]) for r in b["rows"])
    print(f"== kernel {i + 1}: {len(b['rows'])} SASS lines, {h[col]} total {total:.0f}")
    top = sorted(b["rows"], key=lambda r: -num(r[col]))[:14]
    for r in top:
        extra = " ".join(f"{num(r[j]):.0f}" for j in alls[1:2])
        print(f"  {num(r[col]):8.0f} {extra:>8} {100 * num(r[col]) / max(total, 1):5.1f}%  {r[src][:90]}")
