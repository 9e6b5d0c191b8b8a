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
