"""The decode bench's table (`benches/decode_attention.rs`, `gpu_rows_only`): each row's cold and
back-to-back ms by (problem, cache), one pair a repeat. What the session-20 summaries of decode
calls read (`notes/session20-tlb21-summary.py`, `notes/session20-lead-clu-summary.py`)."""
import re


def rows(path, on_bad=None):
    """{(problem, cache): [(cold ms, back-to-back ms, after-another ms, cleared-then-another
    ms), ...]} of the bench log at `path` (the last two where the log has them); `on_bad(line)`
    for a table row that does not parse."""
    out = {}
    for line in open(path):
        if not re.match(r"\| \d+x\d+ \|", line):
            continue
        c = [x.strip() for x in line.split("|")[1:-1]]
        try:
            times = [float(c[4]), float(c[7])] + [float(x) for x in c[10:12]]
            out.setdefault((c[0], c[2]), []).append(tuple(times))
        except (ValueError, IndexError):
            if on_bad:
                on_bad(line)
    return out


def medians(paths):
    """One dict a bench log of `paths`: {(problem, cache): each timing's median over the row's
    repeats}, the timings as `rows` gives them."""
    import statistics

    out = []
    for path in paths:
        r = rows(path)
        out.append({k: tuple(statistics.median(v[i] for v in vs) for i in range(len(vs[0]))) for k, vs in r.items()})
    return out
