#!/usr/bin/env bash
# Lead's verification call (session 22, issue 31) on main's candidate: the ring stage limits where
# two CTAs share an SM (DecodeConfig::stage_limit: FP8 copies 3, bf16 16-row page boxes 2, at head
# dim 128) and the split rule taking two CTAs an SM first for them. `ptxkit selftest --only decode`
# beside compute-sanitizer memcheck of every decode case; two bench processes over the contiguous
# caches, the 16- and 64-token pages (bf16 and FP8, shuffled, as served), the pages at the rule's
# stages (the old defaults' kernels), each followed by torch's SDPA (cuDNN, flash) on the contiguous
# problems; ncu of one cold launch of the FP8 contiguous cache and 16-token pages at 1 x 128k. Run
# as `DEADLINE_S=280 bash notes/session22-lead-final.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz, stripped; decode_attention_torch.py, rows_torch.py, torch_timing.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22d "${DEADLINE_S:-280}"
step_at "selftest decode, memcheck of every case"
PTXKIT_DECODE_LIMIT_S=100 timeout 110 compute-sanitizer --tool memcheck \
  "$kit/ptxkit" selftest --only decode >"$L/memcheck.txt" 2>&1 &
run_within selftest 60 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
wait
rows='contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!contiguous, 2|!contiguous e4m3, 3'
for i in 1 2; do
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
echo "selftest case lines: $(grep -c '^case' "$L/selftest.txt"), st3 $(grep '^case' "$L/selftest.txt" | grep -c '_st3'), st2 $(grep '^case' "$L/selftest.txt" | grep -c '_st2')"
decode_bench_counts
for i in 1 2; do grep -cE "^\| [0-9]+x" "$L/torch-$i.txt"; done
grep -E "decode_e4m3|gpu__time|dram__|ctas_launched|cycles_" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | head -30
