"""Old against new bench processes of a call (logs PREFIXbench-oldN-1.txt, PREFIXbench-newN-1.txt):
each row's median over the processes of its cold, back-to-back and after-another times (µs), and
new / old speed back to back (the median's, then each repeat's).
Usage: python3 notes/session23-lead-ab-summary.py PREFIX [OLD_TAG NEW_TAG]
(PREFIX: a call's logs folder with a trailing slash, or notes/session23-lead-fold-)"""
import glob
import statistics
import sys

d = sys.argv[1]
old_tag, new_tag = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("old", "new")


def rows(tag):
    out = {}
    for f in sorted(glob.glob(f"{d}bench-{tag}[0-9]*-1.txt")):
        for line in open(f):
            c = [x.strip() for x in line.split("|")]
            if len(c) < 12 or "x" not in c[1] or not c[1][0].isdigit():
                continue
            try:
                t = (float(c[5]) * 1e3, float(c[8]) * 1e3, float(c[11]) * 1e3)
            except ValueError:
                continue
            out.setdefault((c[1], c[3], c[4]), []).append(t)
    return out


o, n = rows(old_tag), rows(new_tag)
print("| problem | cache | splits | old cold / b2b / after (µs) | new cold / b2b / after | new / old speed b2b (each) |")
print("| --- | --- | --- | --- | --- | --- |")
for key in n:
    if key not in o:
        continue
    med = lambda ts, i: statistics.median(t[i] for t in ts)
    ot, nt = o[key], n[key]
    each = ", ".join(f"{a[1] / b[1]:.3f}" for a, b in zip(ot, nt))
    print(f"| {key[0]} | {key[1]} | {key[2]} | {med(ot,0):.1f} / {med(ot,1):.1f} / {med(ot,2):.1f} | "
          f"{med(nt,0):.1f} / {med(nt,1):.1f} / {med(nt,2):.1f} | {med(ot,1) / med(nt,1):.3f} ({each}) |")
