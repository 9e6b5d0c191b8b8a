# Session 22, the lead's calls on the ring stage limits at head dims 64 and 256
# (notes/session22-lead-heads{,2}.sh): from the decode bench's tables (PTXKIT_DECODE_D), each
# process's medians of its repeats; each cache's default against the rule's stages (the old
# default), the paged / contiguous ratios and FP8 / bf16 tokens/s with the defaults.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

RULE = {(64, False): 6, (64, True): 12, (256, False): 3, (256, True): 6}
d = int(sys.argv[1])
procs = decode_table.medians(sys.argv[2:])


def col(p, name, i):
    return [m[(p, name)][i] for m in procs if (p, name) in m]


def speed(p, num, den, i):
    return " ".join(f"{b / a:.3f}" for a, b in zip(col(p, num, i), col(p, den, i)))


problems = sorted({k[0] for m in procs for k in m}, key=lambda p: (-int(p.split("x")[0]), int(p.split("x")[1])))
for p in problems:
    print(f"== d {d}, {p}: each value one process; cold / back to back")
    for cache, fp8 in [("contiguous", False), ("paged 16", False), ("contiguous e4m3", True),
                       ("paged 16 e4m3", True), ("paged 64 e4m3", True)]:
        rule = f"{cache}, {RULE[(d, fp8)]} stages"
        us = " / ".join(" ".join(f"{x * 1000:.1f}" for x in col(p, cache, i)) for i in (0, 1))
        old = " / ".join(" ".join(f"{x * 1000:.1f}" for x in col(p, rule, i)) for i in (0, 1))
        print(f"  {cache}: {us} µs; the rule's stages {old}; default / rule (speed) "
              f"{speed(p, cache, rule, 0)} / {speed(p, cache, rule, 1)}")
    for num, den in [("paged 16", "contiguous"), ("paged 16 e4m3", "contiguous e4m3"),
                     ("paged 64 e4m3", "contiguous e4m3"), ("contiguous e4m3", "contiguous")]:
        print(f"  {num} / {den}: " + " / ".join(speed(p, num, den, i) for i in range(4)))
