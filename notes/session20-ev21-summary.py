"""Session 20, ev21 (issue 29): the call's compact summary from its logs folder (argument):
the large shapes (the tuner's pick, runs 1 and 2 against the baseline, then the rounds of the
pick, the rule's configuration and the baseline interleaved: ratios baseline µs / ours µs and
their geomeans over 4096³, 6144³, 8192³), and the L2-state rows (the pick and the baseline
after the bench's 256 MiB clear and after a clean read of as many bytes: medians over the
rounds)."""
import glob
import math
import os
import re
import statistics
import sys

d = sys.argv[1]
short = lambda n: re.sub(r"^gemm_(bf16|e4m3)_bf16_", "", n)
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
ROW = re.compile(r"^\| (\S[^|]*?) \| (\d+x\d+x\d+) \| (bf16|e4m3) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+|NaN) \| (\S+) \|")
RULE = re.compile(r"^\s+rule (\S+) (\w+) round (\d+): baseline ([\d.]+) µs, pick ([\d.]+) µs \(([\d.]+)\) (\S+), rule ([\d.]+) µs \(([\d.]+)\) (\S+)")
L2 = re.compile(r"^\s+l2 (\S+) (\w+) round (\d+): after the clear ours ([\d.]+) base ([\d.]+) µs \(([\d.]+)\); after a clean read ours ([\d.]+) base ([\d.]+) µs \(([\d.]+)\) (\S+)")



def read(f, pattern, fields):
    """The table rows of the log `f` (shape: ratio run 1, ratio run 2, pick) and its lines matching
    `pattern`, by shape (each `fields(match)`); its error lines printed."""
    rows, lines = {}, {}
    for line in open(f, errors="replace"):
        if m := ROW.match(line):
            rows[m[2]] = (float(m[6]), float(m[9]), m[11])
        elif m := pattern.match(line):
            lines.setdefault(m[1], []).append(fields(m))
        elif "error" in line:
            print(os.path.basename(f), line.strip()[:200])
    return rows, lines


for f in sorted(glob.glob(os.path.join(d, "large-*.txt"))):
    rows, rounds = read(f, RULE, lambda m: (float(m[6]), float(m[9]), m[10]))
    print(f"-- {os.path.basename(f)}: shape, pick, run 1 / 2, rounds pick | rule (rule's config)")
    per_round_p, per_round_r = {}, {}
    for shape, (r1, r2, pick) in rows.items():
        rs = rounds.get(shape, [])
        for i, (p, r, _) in enumerate(rs):
            per_round_p.setdefault(i, []).append(p)
            per_round_r.setdefault(i, []).append(r)
        rule = short(rs[0][2]) if rs else "?"
        print(f"{shape} {short(pick)} {r1:.3f}/{r2:.3f} | " + " ".join(f"{p:.3f}" for p, _, _ in rs)
              + " | " + " ".join(f"{r:.3f}" for _, r, _ in rs) + ("" if rule == short(pick) else f" ({rule})"))
    if rows:
        g1 = gm([v[0] for v in rows.values()])
        g2 = gm([v[1] for v in rows.values()])
        gp = [gm(v) for k, v in sorted(per_round_p.items()) if len(v) == len(rows)]
        gr = [gm(v) for k, v in sorted(per_round_r.items()) if len(v) == len(rows)]
        print(f"geomean run 1 / 2 {g1:.3f}/{g2:.3f}; rounds pick " + " ".join(f"{x:.3f}" for x in gp)
              + "; rule " + " ".join(f"{x:.3f}" for x in gr))

for f in sorted(glob.glob(os.path.join(d, "l2-*.txt"))):
    rows, l2 = read(f, L2, lambda m: tuple(float(m[i]) for i in range(4, 10)) + (m[10],))
    print(f"-- {os.path.basename(f)} (µs, medians of the rounds): row, pick, table run 1/2, after the clear ours/base (ratio), after a clean read ours/base (ratio), the clear costs ours/base")
    dirty, clean = [], []
    for shape, v in l2.items():
        med = [statistics.median(x[i] for x in v) for i in range(6)]
        r = rows.get(shape, (float("nan"), float("nan"), v[0][6]))
        dirty.append(med[2]); clean.append(med[5])
        print(f"{shape} {short(v[0][6])} {r[0]:.3f}/{r[1]:.3f} | {med[0]:.2f}/{med[1]:.2f} ({med[2]:.3f}) | "
              f"{med[3]:.2f}/{med[4]:.2f} ({med[5]:.3f}) | +{med[0] - med[3]:.2f}/+{med[1] - med[4]:.2f}")
    if dirty:
        print(f"geomean after the clear {gm(dirty):.3f}, after a clean read {gm(clean):.3f}; rows below 1.0: {sum(x < 1 for x in dirty)} / {sum(x < 1 for x in clean)} of {len(dirty)}")
