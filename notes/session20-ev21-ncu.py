"""Session 20, ev21 (issue 29): a compact table of an ncu `--csv --page raw --print-units base`
log of gemm_decode under DECODE_PROFILE (the CSV rows among the bench's own lines): per kernel
launch its duration, SM clock, tensor pipe active, SM throughput, issue slots busy, warps active,
L2 throughput and hit rate, DRAM throughput, DRAM read and L2 bytes, grid and cluster, and its
four largest stall reasons (warps stalled per issue)."""
import csv
import sys

# Each column's metric, heading, the factor from its base unit (ns, byte, Hz; the unit row
# rescales others) and digits.
COLS = [
    ("gpu__time_duration.sum", "µs", 1e-3, 2),
    ("sm__cycles_elapsed.avg.per_second", "MHz", 1e-6, 0),
    ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor %", 1, 1),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM %", 1, 1),
    ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue %", 1, 1),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "warps %", 1, 1),
    ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 %", 1, 1),
    ("lts__t_sector_hit_rate.pct", "L2 hit %", 1, 1),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM %", 1, 1),
    ("dram__bytes_read.sum", "DRAM rd MB", 1e-6, 0),
    ("lts__t_bytes.sum", "L2 MB", 1e-6, 0),
]
STALL = "smsp__average_warps_issue_stalled_"

lines = [l for l in open(sys.argv[1], errors="replace") if l.startswith('"')]
reader = csv.reader(lines)
head = next(reader, None)
if head is None:
    sys.exit("no CSV rows")
col = {h: i for i, h in enumerate(head)}
units = next(csv.reader(lines[1:2]), [""] * len(head))


def base(metric):
    """The factor from the unit row's unit of `metric` to its base unit (ns, byte, Hz)."""
    u = units[col[metric]].strip() if metric in col and len(units) == len(head) else ""
    if u.endswith("second") and "/" not in u:  # usecond, msecond, nsecond
        return {"n": 1, "u": 1e3, "m": 1e6}.get(u[:1], 1e9 if u == "second" else 1)
    if u in ("ns", "us", "ms", "s"):
        return {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[u]
    if u.lower().endswith("byte") or u.lower().endswith("hz"):
        p = u[: -4] if u.lower().endswith("byte") else u[: -2]
        return {"": 1, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9}.get(p, 1)
    return 1
print("| kernel | " + " | ".join(c[1] for c in COLS) + " | grid (cluster) | top stalls (warps per issue) |")
print("| --- " * (len(COLS) + 3) + "|")
for row in reader:
    if len(row) != len(head) or not row[col["ID"]].isdigit():
        continue
    name = row[col["Kernel Name"]].split("(")[0].split("<")[0].replace("void ", "")

    def num(metric):
        try:
            return float(row[col[metric]].replace(",", ""))
        except (KeyError, ValueError):
            return None

    cells = []
    for metric, _, scale, digits in COLS:
        v = num(metric)
        cells.append("n/a" if v is None else f"{v * base(metric) * scale:.{digits}f}")
    stalls = []
    for h, i in col.items():
        if h.startswith(STALL) and h.endswith("_per_issue_active.ratio"):
            v = num(h)
            if v is not None:
                stalls.append((v, h[len(STALL):-len("_per_issue_active.ratio")]))
    stalls.sort(reverse=True)
    grid = row[col["Grid Size"]] if "Grid Size" in col else ""
    cx, cy = num("launch__cluster_dim_x"), num("launch__cluster_dim_y")
    cl = f" ({int(cx)}x{int(cy or 1)})" if cx and cx > 1 or (cy and cy > 1) else ""
    print(f"| `{name[:58]}` | " + " | ".join(cells) + f" | {grid}{cl} | "
          + ", ".join(f"{r} {v:.2f}" for v, r in stalls[:4]) + " |")
