"""Session 19, fin29: the call's compact summary from its logs (argument: the logs folder): the
decode table's geomeans by M (the printed ratios, baseline µs / ours µs, runs 1 and 2), the rows
below 1.0 in both runs with their gap timings, the large shapes, block-scaled against per-tensor
at the same tile, the checks and the sanitizer. With `both FILE...` or `either FILE...` instead:
the decode table's rows below 1.0 in both runs (worst first) or in one run only, as
`dtype MxNxK pick ratio1 ratio2` (what the call's ncu steps profile)."""
import math
import os
import re
import sys

d = sys.argv[1]


def read(name):
    p = os.path.join(d, name)
    return open(p, errors="replace").read() if os.path.exists(p) else ""


def table(text):
    rows, gaps = [], {}
    for line in text.splitlines():
        m = re.match(r"\s+gap (\d+x\d+x\d+) (\w+): cold interleaved ours ([\d.]+) base ([\d.]+) µs \(([\d.]+)\); back to back ours ([\d.]+) base ([\d.]+) µs \(([\d.]+)\)", line)
        if m:
            gaps[(m[2], m[1])] = (float(m[5]), float(m[8]), m[3], m[4], m[6], m[7])
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) < 13 or "x" not in c[1] or c[2] not in ("bf16", "e4m3"):
            continue
        try:
            b1, o1, b2, o2 = float(c[3]), float(c[4]), float(c[6]), float(c[7])
            q1, q2 = float(c[5]), float(c[8])
        except ValueError:
            print("  row error:", line[:160])
            continue
        rows.append((c[2], c[1], b1, o1, b2, o2, c[10], c[12], q1, q2))
    return rows, gaps


def below(mode, files):
    """The rows of `files` below 1.0 in both runs (`both`) or in one only (`either`)."""
    rows = [r for f in files for r in table(open(f, errors="replace").read())[0]]
    keep = [r for r in rows if (r[8] < 1 and r[9] < 1) == (mode == "both") and min(r[8], r[9]) < 1]
    for r in sorted(keep, key=lambda r: (r[0], min(r[8], r[9]))):
        print(r[0], r[1], r[6], r[8], r[9])


if d in ("both", "either"):
    below(d, sys.argv[2:])
    sys.exit(0)


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


for dt in ("bf16", "e4m3"):
    rows, gaps = table(read(f"table-{dt}.txt"))
    print(f"{dt}: {len(rows)} rows")
    for mm in ("1", "16", "64", "128", "all"):
        sel = [r for r in rows if mm == "all" or r[1].split("x")[0] == mm]
        r1 = [r[8] for r in sel]
        r2 = [r[9] for r in sel]
        both = sum(1 for a, b in zip(r1, r2) if a < 1 and b < 1)
        either = sum(1 for a, b in zip(r1, r2) if a < 1 or b < 1)
        print(f"  M {mm}: geomean {geo(r1):.3f} / {geo(r2):.3f}, < 1.0 in both {both} (either {either})")
    fails = [r for r in rows if r[7] != "0"]
    if fails:
        print("  candidates failed:", [(r[1], r[7][:80]) for r in fails])
    for r in rows:
        a, b = r[8], r[9]
        if a < 1 and b < 1:
            g = gaps.get((dt, r[1]))
            gs = f"gap cold {g[0]:.3f} ({g[3]}/{g[2]}), b2b {g[1]:.3f} ({g[5]}/{g[4]})" if g else "no gap line"
            print(f"  < 1.0: {r[1]} {r[6][len('gemm_'):]} {a:.3f}/{b:.3f} ({r[2]}/{r[3]}, {r[4]}/{r[5]}); {gs}")
for dt in ("bf16", "e4m3"):
    rows, _ = table(read(f"large-{dt}.txt"))
    r1 = [r[8] for r in rows]
    r2 = [r[9] for r in rows]
    for r in rows:
        print(f"large {dt} {r[1]}: {r[8]:.3f} / {r[9]:.3f} ({r[2]}/{r[3]}, {r[4]}/{r[5]}) {r[6][len('gemm_'):]}")
    print(f"large {dt} geomean: {geo(r1):.3f} / {geo(r2):.3f} ({len(rows)} rows)")
    for line in read(f"large-{dt}.txt").splitlines():
        if "error" in line:
            print("  ", line[:200])
bl = []
for line in read("block-same.txt").splitlines():
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) >= 5 and re.match(r"\d+x\d+x\d+$", c[0]):
        try:
            bl.append((c[0], c[1], float(c[2]), float(c[3]), float(c[4])))
        except ValueError:
            print("block error:", line[:200])
if bl:
    ok = [b for b in bl if b[4] >= 1.0]
    print(f"block vs per-tensor same tile: {len(ok)} of {len(bl)} >= 1.0, geomean {geo([b[4] for b in bl]):.3f}")
    for b in bl:
        if b[4] < 1.0:
            print(f"  {b[0]} {b[1][len('gemm_'):]}: {b[2]:.2f} / {b[3]:.2f} µs -> {b[4]:.3f}")
for name in ("memcheck-fixup", "memcheck-192-bf16", "memcheck-192-e4m3"):
    t = read(f"{name}.txt")
    summ = re.findall(r"ERROR SUMMARY: .*", t)
    print(f"{name}: {summ[-1] if summ else 'no summary'}; PASS {len(re.findall('PASS', t))}, FAIL {len(re.findall('FAIL', t))}")
    for line in t.splitlines():
        if "FAIL" in line or "192" in line and ("check" in line or "ours" in line):
            print("  ", line[:170])
