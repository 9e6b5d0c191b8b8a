#!/usr/bin/env bash
# Lead's verification call (session 23, issue 31) on main 1811757 (the folded combine 4 columns a
# thread, every split launch of the rule's folded): `ptxkit selftest --only decode` (every case
# also on the combine kernel: the same bits) beside compute-sanitizer memcheck of every case; the
# example `decode_paged` (FP8 and bf16, memcheck of the FP8 run); three bench processes at head
# dim 128 over the contiguous caches, the 16- and 64-token pages (shuffled, as served), the combine
# kernel rows, every cache at 2 stages and bf16 at 4 splits (8 x 64k at two CTAs an SM), each
# followed by torch's SDPA; ncu of one cold launch of each contiguous cache's decode kernel at the
# split problems (the busiest SM against the average). Run as
# `DEADLINE_S=420 bash notes/session23-lead-verify.sh` (carry .gpu-verify23: bench-decode.xz,
# ptxkit.xz, decode_paged.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-verify23" /tmp/verify23 "${DEADLINE_S:-420}"
decode_checked 110
step_at "example"
run_within example-fp8 20 "$kit/decode_paged"
run_within example-bf16 20 "$kit/decode_paged" --bf16
run_within example-memcheck 40 compute-sanitizer --tool memcheck "$kit/decode_paged"
decode_benches 40 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!3 stages|!4 stages|!6 stages|!8 stages|!12 stages|!padded|!e4m3, 4 splits|!32 splits|!33 splits' 3 torch
step_at ncu
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__ctas_launched.max
m=$m,sm__ctas_launched.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
run_within ncu 60 env PTXKIT_DECODE_ONCE=cold PTXKIT_DECODE_BENCH='8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!stages|!splits|!clusters' \
  ncu --clock-control none -k regex:decode_ --metrics "$m" "$kit/bench-decode" --bench gpu_rows_only
pack
decode_checked_summary _fold
grep -hE "PASS|FAIL|ERROR SUMMARY" "$L"/example-*.txt | cut -c1-200
decode_bench_counts
grep -E "decode_|gpu__time|dram__|ctas_launched|cycles_" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | head -80
