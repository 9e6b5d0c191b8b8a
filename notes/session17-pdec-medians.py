"""Medians and ratios of session 17's decode call (helper pdec17): reads the bench logs (each
row timed three times in turn) and torch's, prints per problem the median µs (cold, back to back,
after another) of each cache, and the bars' ratios: each paged cache against its contiguous one
(bf16 and e4m3, time contiguous / time paged), bf16 against torch's best backend (GB/s ours /
theirs) and e4m3 against bf16 tokens/s.

    python3 notes/session17-pdec-medians.py BENCH [BENCH_MAIN] TORCH
"""

import statistics
import sys


def rows(path):
    out = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 11 or not cells[0][:1].isdigit():
            continue
        try:
            cold, b2b, after = float(cells[4]), float(cells[7]), float(cells[10])
        except ValueError:
            continue
        out.setdefault((cells[0], cells[2]), []).append((cold, b2b, after, cells[3]))
    return {
        k: tuple(statistics.median(x[i] for x in v) * 1e3 for i in range(3)) + (v[0][3],)
        for k, v in out.items()
    }


def torch(path):
    out = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and cells[0][:1].isdigit():
            out[cells[0]] = (float(cells[4].split()[0]), float(cells[8].split()[0]), cells[4].split()[1], cells[8].split()[1])
    return out


def kv_bytes(problem, fp8):
    b, ctx = (int(x) for x in problem.split("x"))
    return b * ctx * 8 * 128 * 2 * (1 if fp8 else 2)


def main():
    paths = sys.argv[1:]
    new = rows(paths[0])
    old = rows(paths[1]) if len(paths) == 3 else {}
    peers = torch(paths[-1])
    problems = sorted({p for p, _ in new}, key=lambda p: [int(x) for x in p.split("x")][::-1])
    for p in problems:
        print(f"## {p}")
        for (q, cache), (c, b, a, s) in new.items():
            if q == p:
                was = old.get((q, cache))
                main_t = f"   main: {was[0]:7.1f} {was[1]:7.1f} {was[2]:7.1f}" if was else ""
                print(f"  {cache:45s} splits {s:>3}  cold {c:7.1f}  b2b {b:7.1f}  after {a:7.1f}{main_t}")
    print("\n# ratios (contiguous time / paged time, cold, b2b; same binary)")
    for p in problems:
        for base, fp8 in (("contiguous", False), ("contiguous e4m3", True)):
            if (p, base) not in new:
                continue
            bc, bb = new[(p, base)][:2]
            for (q, cache), (c, b, _, s) in new.items():
                if q != p or cache == base or not cache.startswith("paged") or (" e4m3" in cache) != fp8:
                    continue
                line = f"  {p:9s} {cache:45s} {bc / c:.3f} {bb / b:.3f}"
                if (p, base) in old and (p, cache) in old:
                    oc, ob = old[(p, base)][:2]
                    pc, pb = old[(p, cache)][:2]
                    line += f"   main: {oc / pc:.3f} {ob / pb:.3f}"
                print(line)
    print("\n# bf16 / torch best (GB/s), e4m3 / bf16 tokens/s (contiguous, same binary)")
    for p in problems:
        if p not in peers or (p, "contiguous") not in new:
            continue
        c, b = new[(p, "contiguous")][:2]
        tc, tb, nc, nb = peers[p]
        ours_c, ours_b = kv_bytes(p, False) / c / 1e3, kv_bytes(p, False) / b / 1e3
        line = f"  {p:9s} bf16 {ours_c / tc:.3f} ({nc}) {ours_b / tb:.3f} ({nb})"
        if (p, "contiguous, dependent launch") in new:
            dc, db = new[(p, "contiguous, dependent launch")][:2]
            line += f"  dependent launch {kv_bytes(p, False) / dc / 1e3 / tc:.3f} {kv_bytes(p, False) / db / 1e3 / tb:.3f}"
        if (p, "contiguous e4m3") in new:
            ec, eb = new[(p, "contiguous e4m3")][:2]
            line += f"  e4m3/bf16 {c / ec:.2f} {b / eb:.2f}"
        print(line)


if __name__ == "__main__":
    main()
