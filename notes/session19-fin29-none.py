"""Session 19, fin29: ncu's `--csv --page raw` log of gemm_decode's own timed runs (each after the
bench's 256 MB L2 clear, `--cache-control none --clock-control none`, gpu__time_duration only):
per kernel and grid, in order of first launch, the launches, their median µs and the 10th/90th
percentiles (most launches of a row follow a clear: warm-ups and check runs are 8 % of them)."""
import csv
import statistics
import sys

order, times = [], {}
with open(sys.argv[1], errors="replace") as f:
    lines = [l for l in f if l.startswith('"')]
reader = csv.reader(lines)
head = next(reader, None)
if head is None:
    sys.exit("no CSV rows")
col = {h: i for i, h in enumerate(head)}
for row in reader:
    if len(row) != len(head) or not row[col["ID"]].isdigit():
        continue
    name = row[col["Kernel Name"]].split("(")[0].split("<")[0].replace("void ", "")
    key = (name, row[col["Grid Size"]] if "Grid Size" in col else "")
    try:
        v = float(row[col["gpu__time_duration.sum"]].replace(",", ""))
    except (KeyError, ValueError):
        continue
    if key not in times:
        order.append(key)
        times[key] = []
    times[key].append(v)
# The unit row (ns or us) follows the header in --page raw.
unit = "ns"
for l in csv.reader(lines[1:2]):
    unit = l[col["gpu__time_duration.sum"]] if len(l) == len(head) else unit
scale = 1e-3 if unit.strip().lower().startswith("n") else (1e3 if unit.strip().lower().startswith("m") else 1.0)
print("| kernel | grid | launches | median µs | p10 | p90 |")
print("| --- | --- | --- | --- | --- | --- |")
for key in order:
    t = sorted(x * scale for x in times[key])
    q = lambda p: t[min(len(t) - 1, int(p * len(t)))]
    print(f"| `{key[0][:64]}` | {key[1]} | {len(t)} | {statistics.median(t):.2f} | {q(0.1):.2f} | {q(0.9):.2f} |")
