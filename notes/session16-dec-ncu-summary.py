"""Session 16, dec16: a compact table of an ncu --metrics log (gemm_decode under DECODE_PROFILE):
per kernel launch its duration, DRAM and SM throughput, tensor pipe, warps active, L2 and DRAM
bytes, grid and cluster, and its three largest stall reasons (warps stalled per issue)."""
import re
import sys

SHORT = {
    "gpu__time_duration.sum": "us",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm%",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor%",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occ%",
    "lts__t_bytes.sum": "L2",
    "dram__bytes_read.sum": "dram rd",
    "launch__grid_size": "grid",
    "launch__cluster_dim_x": "cx",
    "launch__cluster_dim_y": "cy",
}
SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}
launches = []
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("  ") and not line.startswith("   ") and ", Context" in line:
        head = line[: line.rfind(")x(")]
        name = head[: head.rfind(" (")].strip()
        if name.startswith("void "):
            name = name[5:]
        launches.append({"name": name.split("<")[0], "stalls": {}})
        continue
    if not launches:
        continue
    parts = line.split()
    if len(parts) < 2:
        continue
    name, value = parts[0], parts[-1].replace(",", "")
    unit = parts[1] if len(parts) == 3 else ""
    try:
        v = float(value)
    except ValueError:
        continue
    if name.startswith("smsp__average_warps_issue_stalled_"):
        reason = name[len("smsp__average_warps_issue_stalled_"):].replace("_per_issue_active.ratio", "")
        launches[-1]["stalls"][reason] = v
    elif name in SHORT:
        if SHORT[name] in ("L2", "dram rd"):
            v = v * SCALE.get(unit, 1) / 1e6
        if SHORT[name] == "us":
            v = v * SCALE.get(unit, 1)
        launches[-1][SHORT[name]] = v
print("| kernel | µs | DRAM % | DRAM read MB | L2 MB | SM % | tensor pipe % | warps active % | grid (cluster) | top stalls (warps per issue) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for l in launches:
    top = sorted(l["stalls"].items(), key=lambda kv: -kv[1])[:3]
    g = l.get("grid", float("nan"))
    c = f", cluster {int(l['cx'])}x{int(l.get('cy', 1))}" if l.get("cx", 0) > 0 else ""
    f = lambda k, d=1: ("%.*f" % (d, l[k])) if k in l else "n/a"
    print(f"| `{l['name'][:60]}` | {f('us', 2)} | {f('dram%')} | {f('dram rd')} | {f('L2')} | {f('sm%')} | {f('tensor%')} | {f('occ%')} | {int(g) if g == g else ''}{c} | "
          + ", ".join(f"{r} {v:.2f}" for r, v in top) + " |")
