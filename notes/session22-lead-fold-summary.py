# Session 22, the lead's fold calls (notes/session22-lead-fold{,2}.sh): each cache's splits
# combined in the decode kernel (`folded`) and by the combine kernel launched as an ordinary
# kernel (`plain combine`) against the default (the combine kernel as a programmatic dependent),
# speed, each value one process: cold / back to back / after another / cleared, then another.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "benches")]
import decode_table  # noqa: E402

procs = decode_table.medians(sys.argv[1:])
for p in ["8x65536", "1x131072"]:
    for cache in ["contiguous", "contiguous e4m3", "paged 16", "paged 16 e4m3", "paged 64 e4m3"]:
        for how in ["folded", "plain combine"]:
            xs = [(m[(p, cache)], m[(p, f"{cache}, {how}")]) for m in procs if (p, f"{cache}, {how}") in m]
            if xs:
                print(f"{p} {cache}, {how} / default: " + " / ".join(
                    " ".join(f"{a[i] / b[i]:.3f}" for a, b in xs) for i in range(4)))
        xs = [m[(p, cache)] for m in procs if (p, cache) in m]
        print(f"{p} {cache} µs: " + " / ".join(" ".join(f"{x[i] * 1000:.1f}" for x in xs) for i in range(2)))
