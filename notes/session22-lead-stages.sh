#!/usr/bin/env bash
# Lead's exploratory call (session 22, issue 31): fewer K/V ring stages than the rule's
# (DecodeConfig::stage_limit; FP8 d128 rule 6, bf16 3), fewer bytes in flight an SM, on every
# problem: the contiguous bf16 and FP8 caches and the FP8 16-token pages (shuffled); then ncu of
# one cold launch a row at 1 x 128k (the SMs' active cycles: the tail). Run as `DEADLINE_S=150
# bash notes/session22-lead-stages.sh` (carry .gpu-solo: bench-decode.xz, stripped).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22 "${DEADLINE_S:-150}"
rows='contiguous|paged 16 e4m3|!as served|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!splits|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch|!clusters|!one-CTA'
decode_benches 40 "$rows"
step_at ncu
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.max,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
run_within ncu 30 env PTXKIT_DECODE_ONCE=cold PTXKIT_DECODE_BENCH="1x131072 contiguous e4m3|1x131072 paged 16 e4m3|${rows#*|*|}" \
  ncu --clock-control none -k regex:'decode_e4m3' --metrics $metrics "$kit/bench-decode" --bench gpu_rows_only
pack
echo "== summary ($(($(date +%s) - start)) s)"
decode_bench_counts
for f in "$L"/bench-*.txt; do grep -E "^\| [0-9]+x" "$f" | awk -F'|' '{printf "%-10s %-34s %s %s\n", $2, $4, $6, $9}'; done | sort -s -k1,1 | head -130
grep -E "decode_e4m3|gpu__time|dram__|ctas_launched|cycles_" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | head -60
