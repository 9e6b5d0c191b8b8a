#!/usr/bin/env bash
# Lead's exploratory call (session 22, issue 31): at the split problems (1 x 128k, 8 x 64k; one CTA
# an SM), the FP8 caches on the kernel built for two CTAs an SM (the default) against the one built
# for one (`one-CTA kernel`, DecodeConfig::solo), each unclustered, in pairs (the FP8 default) and in
# clusters of 4 and 8 KV heads; then ncu of one cold launch a row at 1 x 128k: the CTAs each SM ran
# (sm__ctas_launched min / max), the SMs' active cycles, DRAM. Run as `DEADLINE_S=150 bash
# notes/session22-lead-solo.sh` (carry .gpu-solo: bench-decode.xz, stripped).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/solo22 "${DEADLINE_S:-150}"
keep='1x131072 contiguous|1x131072 paged 16 e4m3|8x65536 contiguous e4m3|8x65536 paged 16 e4m3'
drop='!as served|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!splits|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch|!contiguous, clusters|!contiguous, one'
decode_benches 30 "$keep|$drop"
step_at ncu
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.min,sm__ctas_launched.max,sm__ctas_launched.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
rows='1x131072 contiguous e4m3|1x131072 paged 16 e4m3|!as served|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!splits|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch'
run_within ncu 40 env PTXKIT_DECODE_ONCE=cold PTXKIT_DECODE_BENCH="$rows" ncu --clock-control none \
  -k regex:'decode_e4m3' --metrics $metrics "$kit/bench-decode" --bench gpu_rows_only
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
decode_bench_counts
grep -E "^\| (1x131072|8x65536)" "$L/bench-1.txt" | awk -F'|' '{printf "%-60s %s %s\n", $4, $6, $9}'
grep -E "decode_e4m3|gpu__time|dram__|ctas_launched|cycles_" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | head -80
