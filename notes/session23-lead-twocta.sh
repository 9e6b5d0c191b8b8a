#!/usr/bin/env bash
# Lead's call (session 23, issue 31): the split problems' contiguous caches at one CTA an SM (the
# default: 8 x 64k 2 splits, 1 x 128k 16) against two (4 splits; 32 and 33; FP8 with 3 stages)
# in the bench's timings, four processes, the GPU's clocks and power logged every 50 ms (call
# `clocks2`: under ncu two CTAs an SM lose 1-5 % at base clocks where one loses 11-28 %, and FP8
# at 3 stages is level at free clocks). Run as `DEADLINE_S=120 bash notes/session23-lead-twocta.sh`
# (carry .gpu-verify23).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-verify23" /tmp/twocta23 "${DEADLINE_S:-120}"
gpu_log 50
decode_benches 30 '8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!clusters|!TMA|!cp.async|!e4m3, 2 stages|!e4m3, 3 stages|!e4m3, 4 stages|!contiguous, 2 stages' 4
gpu_log_stop
pack
decode_bench_counts
gpu_log_summary
