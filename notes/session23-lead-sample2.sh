#!/usr/bin/env bash
# Lead's second sampling call (session 23, issue 31; the same steps as call `sample`): a machine's bars on main 1811757 with its clocks,
# power, GPU and HBM temperatures and clock-event reasons logged every 100 ms (gpu_log): three
# bench processes at head dim 128 over the contiguous caches and the 16- and 64-token pages, bf16
# at 2 stages and at 4 splits (8 x 64k at two CTAs an SM), each followed by torch's SDPA. Run as
# `DEADLINE_S=150 bash notes/session23-lead-sample2.sh` (carry .gpu-verify23).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-verify23" /tmp/sample23b "${DEADLINE_S:-150}"
gpu_log 100
decode_benches 40 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!3 stages|!4 stages|!6 stages|!8 stages|!12 stages|!padded|!e4m3, 4 splits|!32 splits|!33 splits|!combine|!as served' 3 torch
gpu_log_stop
pack
decode_bench_counts
gpu_log_summary
