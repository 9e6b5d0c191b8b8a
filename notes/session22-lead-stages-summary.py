# Session 22, the lead's calls on the FP8 copies' ring stages (DecodeConfig::stage_limit): from the
# decode bench's tables, one file a process, each process's medians of its repeats (cold, back to
# back); every row's times, then issue 31's ratios: paged / contiguous FP8, FP8 / bf16 tokens/s.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

procs = decode_table.medians(sys.argv[1:])


def us(p, name):
    xs = [m[(p, name)] for m in procs if (p, name) in m]
    return " / ".join(" ".join(f"{x[i] * 1000:.1f}" for x in xs) for i in range(2))


def ratios(p, num, den):
    """den's time / num's time (num's speed over den's) in each process: cold / back to back /
    after another / cleared, then another."""
    xs = [(m.get((p, num)), m.get((p, den))) for m in procs]
    xs = [(a, b) for a, b in xs if a and b]
    n = min((len(a) for a, _ in xs), default=0)
    return " / ".join(" ".join(f"{b[i] / a[i]:.3f}" for a, b in xs) for i in range(n))


problems = sorted({k[0] for m in procs for k in m}, key=lambda p: (-int(p.split("x")[0]), int(p.split("x")[1])))
for p in problems:
    print(f"== {p}: µs, each value one process, cold / back to back")
    for name in sorted({k[1] for m in procs for k in m if k[0] == p}):
        print(f"  {name}: {us(p, name)}")
    print("  -- ratios (speed), cold / back to back / after another / cleared, then another")
    for pages in ["paged 16 e4m3", "paged 16 e4m3 as served", "paged 64 e4m3"]:
        print(f"  {pages} / contiguous e4m3: {ratios(p, pages, 'contiguous e4m3')}")
    for pages in ["paged 16 e4m3", "paged 64 e4m3"]:
        print(f"  {pages}, 6 stages / contiguous e4m3: {ratios(p, pages + ', 6 stages', 'contiguous e4m3')}")
        print(f"  {pages} 3 stages (default) / 6: {ratios(p, pages, pages + ', 6 stages')}")
    for pages in ["paged 16", "paged 16 as served", "paged 64"]:
        print(f"  {pages} / contiguous: {ratios(p, pages, 'contiguous')}")
    print(f"  paged 16, 3 stages / contiguous: {ratios(p, 'paged 16, 3 stages', 'contiguous')}")
    print(f"  paged 16 2 stages (default) / 3: {ratios(p, 'paged 16', 'paged 16, 3 stages')}")
    print(f"  e4m3 / bf16 tokens/s, contiguous: {ratios(p, 'contiguous e4m3', 'contiguous')}")

# bf16 / torch's best SDPA backend (GB/s of K and V, cold / back to back), where the call's
# torch logs (`torch-N.txt` beside `bench-N.txt`) are there.
import re  # noqa: E402


def torch_best(path):
    out = {}
    for line in open(path):
        m = re.match(r"\| (\d+x\d+) \| 1 \| (\d+) \| (\d+) \| (\d+) \w+ \| \d+ \| (\d+) \| (\d+) \| (\d+)", line)
        if m:
            out[m.group(1)] = (int(m.group(4)), int(m.group(7)))
    return out


torch = [torch_best(p.replace("bench-", "torch-")) for p in sys.argv[1:] if os.path.exists(p.replace("bench-", "torch-"))]
if torch:
    print("== bf16 contiguous / torch's best SDPA backend, GB/s, each value one process: cold / back to back")
    for p in problems:
        b, ctx = map(int, p.split("x"))
        kv = b * ctx * 8 * 128 * 2 * 2
        xs = [(kv / m[(p, "contiguous")][0] / 1e6 / t[p][0], kv / m[(p, "contiguous")][1] / 1e6 / t[p][1]) for m, t in zip(procs, torch) if p in t]
        print(f"  {p}: " + " ".join(f"{a:.3f}" for a, _ in xs) + " / " + " ".join(f"{b:.3f}" for _, b in xs))
