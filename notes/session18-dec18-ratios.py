"""Session 18, helper dec18: the FP8 16-token pages against the contiguous FP8 cache (time
contiguous / time paged, cold and back to back, medians of each process's three timings) in
both bench processes of the call, for the call's default and the variants.

    python3 notes/session18-dec18-ratios.py notes/session18-dec18-bench-1.txt notes/session18-dec18-bench-2.txt
"""

import importlib.util
import pathlib
import sys

# The bench log's rows, medians of each row's timings: session 17's parser.
_spec = importlib.util.spec_from_file_location(
    "medians", pathlib.Path(__file__).with_name("session17-pdec-medians.py")
)
_medians = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_medians)
rows = _medians.rows


COLUMNS = [
    ("shuffled, tile ahead (call's default)", "paged 16 e4m3"),
    ("shuffled, window", "paged 16 e4m3, table window"),
    ("shuffled, cp.async + window at 1 CTA/SM", "paged 16 e4m3, cp.async at one CTA an SM, table window"),
    ("shuffled, cp.async, tile ahead, at 1 CTA/SM", "paged 16 e4m3, cp.async at one CTA an SM"),
    ("in order, tile ahead", "paged 16 e4m3 in order"),
    ("in order, window", "paged 16 e4m3 in order, table window"),
    ("as served, tile ahead (call's default)", "paged 16 e4m3 as served"),
    ("as served, window", "paged 16 e4m3 as served, table window"),
    ("as served, cp.async + window at 1 CTA/SM", "paged 16 e4m3 as served, cp.async at one CTA an SM, table window"),
    ("paged 64, tile ahead", "paged 64 e4m3"),
    ("paged 64, window", "paged 64 e4m3, table window"),
    ("bf16 paged 16 shuffled", "paged 16"),
    ("bf16 paged 16 as served", "paged 16 as served"),
]


def main():
    runs = [rows(p) for p in sys.argv[1:]]
    problems = ["32x4096", "32x16384", "8x65536", "1x131072"]
    for label, cache in COLUMNS:
        cells = []
        for p in problems:
            base = "contiguous" if " e4m3" not in cache else "contiguous e4m3"
            r = []
            for run in runs:
                if (p, cache) in run and (p, base) in run:
                    (bc, bb), (c, b) = run[(p, base)][:2], run[(p, cache)][:2]
                    r.append(f"{bc / c:.3f} / {bb / b:.3f}")
            cells.append("; ".join(r))
        print(f"| {label} | " + " | ".join(cells) + " |")


main()
