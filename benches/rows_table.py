"""Joins the Rust row bench's table and rows_torch.py's into the one BENCHMARKS.md shows.

    python3 benches/rows_table.py bench-rows.txt rows-torch.txt

Each input is the text its program printed (markdown rows after a `device:` line). The output has
one row per op, dtype and shape: ptxkit's GB/s at the library's default configuration (named) and
its fraction of the same process's 1 GiB copy and of a copy of the same bytes, torch.compile's and
eager's GB/s and compile's fraction of its own process's copy, ptxkit / torch.compile, and the best
configuration of the bench's sweep (when it swept) with its GB/s.
"""

import sys


def rows(path):
    """(device line, {(op, dtype, shape): [cells]}) from a printed markdown table."""
    device, table = "", {}
    for line in open(path):
        if line.startswith("device:"):
            device = line.strip()
        if not line.startswith("| ") or line.startswith("| op ") or line.startswith("| ---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        table[(cells[0], cells[1], cells[2])] = cells[3:]
    return device, table


def main():
    ours_dev, ours = rows(sys.argv[1])
    torch_dev, torch = rows(sys.argv[2])
    print(f"ptxkit: {ours_dev}")
    print(f"torch: {torch_dev}")
    print()
    print("| op | dtype | rows x cols | ptxkit GB/s | config | of 1 GiB copy | of same-size copy "
          "| torch.compile GB/s | compile of its copy | eager GB/s | ptxkit / compile | best GB/s "
          "| best config |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (op, dtype, shape), cells in ours.items():
        if op == "copy":
            continue
        try:
            gbs = float(cells[0])
        except ValueError:
            continue
        # The default's fractions and name (`RowConfig`'s / `SwigluConfig`'s), the sweep's best.
        # A one-input op moves the bytes of a same-size copy; the residual norm and SwiGLU move
        # more, so their same-size figure is against the copy of one tensor of the shape.
        of_copy, of_same, config = cells[1], cells[2], cells[3]
        best, best_config = (cells[4], cells[5]) if len(cells) > 5 else ("", "")
        peer = torch.get((op, dtype, shape))
        if peer:
            eager, comp, comp_of_copy = peer
            ratio = f"{gbs / float(comp):.3f}"
        else:
            eager = comp = comp_of_copy = ratio = ""
        print(f"| {op} | {dtype} | {shape} | {gbs:.0f} | {config} | {of_copy} | {of_same} | {comp} "
              f"| {comp_of_copy} | {eager} | {ratio} | {best} | {best_config} |")


if __name__ == "__main__":
    main()
