"""CUDA-event timing for the torch peers in benches/ (and python/bench/gpu_check.py). The peers
run as scripts, so Python puts this folder first on sys.path and `import torch_timing` finds it.
"""

import torch


def repeats(argv, default):
    """``--repeats N`` from ``argv`` (``default`` unless given, at least 1): how many times a peer
    times each of its backends, in turn."""
    if "--repeats" in argv:
        return max(1, int(argv[argv.index("--repeats") + 1]))
    return default


def median_ms(fn, iters=20, warmup=3, before=None):
    """Median CUDA-event milliseconds of `fn` over `iters` runs, after `warmup` untimed ones;
    `before`, when given, runs ahead of each timed run, outside the events (a cold-L2 clear)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if before is not None:
            before()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def back_to_back_ms(fns, iters=20, warmup=3, before=None):
    """Milliseconds one call takes in a stream of calls, as a model's decode loop issues them:
    `warmup` untimed calls, then `iters` calls back to back between two CUDA events (no clear,
    no wait between them), the total over `iters`; call i is ``fns[i % len(fns)]`` (two inputs,
    each larger than the L2, keep every call's reads cold). ptxkit's mean_ms_back_to_back does
    the same. `before`, when given, runs ahead of the first timed call, outside the events (a
    spin that keeps the GPU busy while Python enqueues the calls)."""
    for i in range(warmup):
        fns[i % len(fns)]()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if before is not None:
        before()
    start.record()
    for i in range(iters):
        fns[i % len(fns)]()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters
