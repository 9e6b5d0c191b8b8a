"""torch._grouped_mm on the shapes of benches/gemm_grouped.rs (bf16, N = K = 4096), beside a loop
of torch.mm per group: TFLOP/s by CUDA-event medians.

    python3 benches/gemm_grouped_torch.py

A is [M_total, K], B is ours [G, N, K] passed transposed (b.transpose(-2, -1), [G, K, N]), offs
the int32 cumulative row ends. If torch._grouped_mm is missing or refuses the arguments, the error
is printed and the loop alone is timed.
"""
import sys

import torch

from torch_timing import median_ms

N = K = 4096
# The same list as benches/gemm_grouped.rs's RAGGED64.
RAGGED64 = [827, 779, 409, 366, 0, 471, 508, 272, 177, 514, 784, 183, 1002, 0, 408, 863, 443, 765, 794, 435, 311, 945, 0, 366, 693, 169, 179, 960, 647, 824, 87, 0, 551, 15, 870, 417, 742, 165, 946, 405, 0, 947, 105, 732, 264, 442, 329, 904, 363, 0, 360, 75, 224, 47, 350, 970, 858, 166, 0, 871, 176, 292, 634, 11]


def cases():
    out = [(f"8x{m}", [m] * 8) for m in (128, 512, 2048, 4096)]
    out.append(("8xragged", [3000, 17, 2048, 0, 4096, 1500, 777, 2944]))
    out += [(f"64x{m}", [m] * 64) for m in (128, 512)]
    out.append(("64xragged", RAGGED64))
    return out


def main():
    dev = "cuda"
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    grouped = getattr(torch, "_grouped_mm", None)
    print("| G x M_g | torch._grouped_mm TFLOP/s | torch.mm loop TFLOP/s |")
    print("| --- | --- | --- |")
    for name, sizes in cases():
        groups, rows = len(sizes), sum(sizes)
        a = torch.randn(rows, K, device=dev, dtype=torch.bfloat16)
        b = torch.randn(groups, N, K, device=dev, dtype=torch.bfloat16)
        offs = torch.tensor(sizes, device=dev).cumsum(0).to(torch.int32)
        flops = 2.0 * rows * N * K
        iters = 10 if flops > 2e11 else 30
        gmm = "n/a"
        if grouped is not None:
            try:
                out = grouped(a, b.transpose(-2, -1), offs=offs)
                # Its result against the loop's, once.
                ref = torch.cat([a[s:e] @ b[g].t() for g, (s, e) in
                                 enumerate(zip([0] + offs.tolist()[:-1], offs.tolist()))])
                err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
                ms = median_ms(lambda: grouped(a, b.transpose(-2, -1), offs=offs), iters, warmup=2)
                gmm = f"{flops / ms / 1e9:.0f} (rel diff {err:.1e})"
            except Exception as e:  # noqa: BLE001 - print whatever torch says and go on
                gmm = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        starts = [0] + offs.tolist()[:-1]
        ends = offs.tolist()
        out_loop = torch.empty(rows, N, device=dev, dtype=torch.bfloat16)

        def loop():
            for g, (s, e) in enumerate(zip(starts, ends)):
                if e > s:
                    torch.mm(a[s:e], b[g].t(), out=out_loop[s:e])

        ms = median_ms(loop, iters, warmup=2)
        print(f"| {name} | {gmm} | {flops / ms / 1e9:.0f} |")
        del a, b, out_loop
        torch.cuda.empty_cache()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
