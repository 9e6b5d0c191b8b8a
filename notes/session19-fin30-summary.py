"""fin30 (session 19, issue 30): the call's tables from its logs.

    python3 summary.py misses LOGS      # the cells below their bar (round 1), worst first:
                                        # `fwd|bwd:d:causal:seqlen ratio`, then those within 1 %
                                        # above it (`near`)
    python3 summary.py tables LOGS      # forward and backward, both rounds, ours / cuDNN / flash,
                                        # and every ncu log's kernels (ncu-*.txt)

LOGS holds bench-fwd-1.txt, bench-fwd-2.txt, bench-bwd-1.txt, bench-bwd-2.txt (the Rust benches'
Markdown rows), torch-fwd.txt and torch-bwd.txt (attention_torch.py --kit / --backward).
Bars (issue 30): forward >= 1.0 x cuDNN everywhere; backward >= 1.0 at d128, >= 0.95 at d64/d256.
"""

import os
import re
import sys

ORDER = [(d, causal, s) for causal in (False, True) for d in (128, 64, 256)
         for s in (4096, 8192, 16384)]


def rows(path):
    """The Markdown table rows of `path` whose first cell is a number, as lists of cells."""
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, errors="replace"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0].isdigit():
            out.append(cells)
    return out


def num(text):
    try:
        return float(text)
    except ValueError:
        return None


def ours(path):
    """(d, causal, seqlen) -> TFLOP/s of the Rust bench's rows of the library's pick (`default`
    forward, `bulk` backward; the last such row of a cell)."""
    out = {}
    for c in rows(path):
        if c[2] not in ("default", "bulk"):
            continue
        d, causal, seqlen = int(c[0]), c[1] == "true", int(c[3].split("x")[1])
        tf = num(c[6]) if len(c) > 6 else None
        if tf is not None:
            out[(d, causal, seqlen)] = tf
    return out


def torch_peers(path):
    """(d, causal, seqlen) -> (flash, cudnn) TFLOP/s of attention_torch.py's rows."""
    out = {}
    for c in rows(path):
        d, causal, seqlen = int(c[0]), c[1] == "true", int(c[2].split("x")[1])
        out[(d, causal, seqlen)] = (num(c[4]), num(c[5]))
    return out


def bar(pas, d):
    return 0.95 if pas == "bwd" and d != 128 else 1.0


def load(logs):
    data = {}
    for pas in ("fwd", "bwd"):
        data[pas] = (ours(f"{logs}/bench-{pas}-1.txt"), ours(f"{logs}/bench-{pas}-2.txt"),
                     torch_peers(f"{logs}/torch-{pas}.txt"))
    return data


def misses(logs):
    data = load(logs)
    out, near = [], []
    for pas in ("fwd", "bwd"):
        r1, _, peers = data[pas]
        for cell in ORDER:
            cudnn = peers.get(cell, (None, None))[1]
            if cell not in r1 or not cudnn:
                continue
            ratio = r1[cell] / cudnn
            d, causal, s = cell
            tag = f"{pas}:{d}:{str(causal).lower()}:{s}"
            if ratio < bar(pas, d):
                out.append((ratio - bar(pas, d), tag, ratio))
            elif ratio < bar(pas, d) + 0.01:
                near.append((ratio - bar(pas, d), tag, ratio))
    for _, tag, ratio in sorted(out):
        print(f"{tag} {ratio:.3f}")
    for _, tag, ratio in sorted(near):
        print(f"{tag} {ratio:.3f} near")


def ncu_kernels(path):
    """[(kernel, grid, {metric: value})] of an ncu text log, in order."""
    out = []
    head = re.compile(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context")
    metric = re.compile(r"^\s{4}([a-z]\S+)\s+(\S+)?\s+(-?[\d,.]+)\s*$")
    for line in open(path, errors="replace"):
        m = head.match(line)
        if m:
            out.append((m.group(1), "x".join(m.group(2, 3, 4)), {}))
            continue
        m = metric.match(line)
        if m and out:
            v = float(m.group(3).replace(",", ""))
            if m.group(1) == "gpu__time_duration.sum":
                # In ms whatever unit ncu picked.
                v /= {"us": 1e3, "usecond": 1e3, "ns": 1e6, "nsecond": 1e6, "s": 1e-3,
                      "second": 1e-3}.get(m.group(2), 1.0)
            out[-1][2][m.group(1)] = v
    return out


def ncu_line(name, grid, m):
    short = {"barrier": "barrier", "long_scoreboard": "long_sb", "short_scoreboard": "short_sb",
             "wait": "wait", "math_pipe_throttle": "math", "mio_throttle": "mio",
             "lg_throttle": "lg", "membar": "membar", "sleeping": "sleep",
             "dispatch_stall": "dispatch", "no_instruction": "no_inst",
             "branch_resolving": "branch", "selected": "selected", "not_selected": "not_sel"}
    stalls = []
    for key, label in short.items():
        v = m.get(f"smsp__average_warps_issue_stalled_{key}_per_issue_active.ratio")
        if v is not None:
            stalls.append((v, label))
    top = ", ".join(f"{label} {v:.2f}" for v, label in sorted(stalls, reverse=True)[:5])

    def g(key, fmt="{:.1f}"):
        v = m.get(key)
        return "n/a" if v is None else fmt.format(v)
    return (f"  {name[:90]} grid {grid}: {g('gpu__time_duration.sum', '{:.3f}')} ms, SM {g('sm__cycles_elapsed.avg.per_second', '{:.2f}')} GHz, "
            f"tensor {g('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active')} %, "
            f"SM {g('sm__throughput.avg.pct_of_peak_sustained_elapsed')} %, "
            f"L1 {g('l1tex__throughput.avg.pct_of_peak_sustained_active')} %, "
            f"L2 {g('lts__throughput.avg.pct_of_peak_sustained_elapsed')} % "
            f"(hit {g('lts__t_sector_hit_rate.pct')} %), "
            f"DRAM {g('dram__throughput.avg.pct_of_peak_sustained_elapsed')} %, "
            f"inst {g('smsp__inst_executed.sum', '{:.4g}')}, regs {g('launch__registers_per_thread', '{:.0f}')}; "
            f"stalls/issue: {top}")


def tables(logs):
    data = load(logs)
    for pas in ("fwd", "bwd"):
        r1, r2, peers = data[pas]
        print(f"{pas}: d causal BxS | ours r1, r2 | cuDNN | flash | ours/cuDNN r1, r2 | bar")
        for cell in ORDER:
            d, causal, s = cell
            flash, cudnn = peers.get(cell, (None, None))
            a, b = r1.get(cell), r2.get(cell)

            def f(x):
                return "-" if x is None else f"{x:.1f}"

            def r(x):
                return "-" if x is None or not cudnn else f"{x / cudnn:.3f}"
            worst = min([x / cudnn for x in (a, b) if x is not None and cudnn] or [9])
            flag = " MISS" if worst < bar(pas, d) else ""
            print(f"  {d:3} {'c ' if causal else 'nc'} {16384 // s}x{s:5} | {f(a)}, {f(b)} | "
                  f"{f(cudnn)} | {f(flash)} | {r(a)}, {r(b)} | {bar(pas, d)}{flag}")
    for name in sorted(os.listdir(logs)):
        if name.startswith("ncu-") and name.endswith(".txt"):
            print(f"{name}:")
            cells = [line.split()[1] for line in open(f"{logs}/{name}", errors="replace")
                     if line.startswith("cell ")]
            if cells:
                print(f"  cells in order: {' '.join(cells)}")
            for k in ncu_kernels(f"{logs}/{name}"):
                print(ncu_line(*k))


if __name__ == "__main__":
    {"misses": misses, "tables": tables}[sys.argv[1]](sys.argv[2])
