#!/usr/bin/env bash
# Lead's call (session 22, issue 31) on main's candidate with the FP8 copies' 3 ring stages where
# two CTAs share an SM (DecodeConfig::stage_limit) and the split rule taking two CTAs an SM first
# for them (1 x 128k: 33 splits, 8 x 64k: 4): `ptxkit selftest --only decode` beside
# compute-sanitizer memcheck of its FP8 cases; three bench processes over the contiguous bf16 and
# FP8 caches, the 16- and 64-token pages (bf16 and FP8, shuffled, as served), the FP8 pages with
# the rule's 6 stages (the old default's kernel) and bf16 pages with 2 stages, each process followed
# by torch's SDPA (cuDNN, flash) on the contiguous problems; ncu of one cold launch of the FP8
# contiguous cache and 16-token pages at 1 x 128k (the SMs' active cycles: the tail). Run as
# `DEADLINE_S=300 bash notes/session22-lead-stages3.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz, stripped; decode_attention_torch.py, rows_torch.py, torch_timing.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22c "${DEADLINE_S:-300}"
step_at "selftest decode, memcheck of its FP8 cases"
PTXKIT_DECODE_CASES=fp8 PTXKIT_DECODE_LIMIT_S=50 timeout 60 compute-sanitizer --tool memcheck \
  "$kit/ptxkit" selftest --only decode >"$L/memcheck.txt" 2>&1 &
run_within selftest 60 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
wait
rows='contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!contiguous, 2|!contiguous e4m3, 3'
for i in 1 2 3; do
  step_at "bench $i"
  run_within "bench-$i" 50 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
  step_at "torch $i"
  (cd "$kit" && run_within "torch-$i" 40 python3 decode_attention_torch.py)
done
step_at ncu
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.max,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
run_within ncu 25 env PTXKIT_DECODE_ONCE=cold PTXKIT_DECODE_BENCH="1x131072 contiguous e4m3|1x131072 paged 16 e4m3|!as served|!, " \
  ncu --clock-control none -k regex:'decode_e4m3' --metrics $metrics "$kit/bench-decode" --bench gpu_rows_only
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-200
grep -E "^(PASS|FAIL)" "$L/memcheck.txt" | cut -c1-160
grep -E "ERROR SUMMARY" "$L/memcheck.txt" | tail -2
echo "selftest case lines: $(grep -c '^case' "$L/selftest.txt"), st3 $(grep '^case' "$L/selftest.txt" | grep -c '_st3')"
decode_bench_counts
for i in 1 2 3; do grep -cE "^\| [0-9]+x" "$L/torch-$i.txt"; done
grep -E "decode_e4m3|gpu__time|dram__|ctas_launched|cycles_" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | head -30
