#!/usr/bin/env bash
# Lead's second call (session 18): `ptxkit tune` on N = 2112 (bf16, e4m3: the 256- and 192-wide
# candidates timed in one process), FP8 per-tensor at 4096x2112x7168 against cuBLASLt, and the GEMM
# bench old/new in alternating processes (four each; the 128x8192x8192 row moved 0.94-1.05 between
# rounds).
set -u
# Run from the repository root (the device tool's copy of the checkout): the shared step helpers.
source benches/gpu_steps.sh
oldnew_kit_start "$(cd "$(dirname "$0")" && pwd)" /tmp/final18b "${DEADLINE_S:-290}"
step_at "tune"
for d in bf16 e4m3; do
  run_within tune-$d 70 "$kit/new/ptxkit" tune gemm 4096 2112 7168 --dtype $d --iters 10 --cache "$out/tune.json"
  tail -40 "$out/logs/tune-$d.txt" | cut -c1-150
done
step_at "fp8 bench"
run_within fp8 75 "$kit/new/bench-gemm_fp8" --bench zz_table_only
grep -E "^(ours gemm_e4m3_bf16_128x192|\| 4096x2112)" "$out/logs/fp8.txt"
step_at "gemm old/new alternating"
for i in 1 2 3 4; do for b in old new; do run_within gemm-$b-$i 20 "$kit/$b/bench-gemm" --bench zz_table_only; done; done
for b in old new; do echo "gemm $b (ours, cuBLAS, ratio per round):"; for i in 1 2 3 4; do grep -E '^\| [0-9]' "$out/logs/gemm-$b-$i.txt" | awk -F'|' '{printf "%s %s/%s/%s; ", $2, $4, $5, $6}'; echo; done; done
step_at done
cd "$out" && tar czf logs.tgz logs && rm -rf logs
