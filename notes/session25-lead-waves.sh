#!/usr/bin/env bash
# Lead's call (session 25, issue 31): the unsplit problems (32 x 4k, 32 x 16k) on two consumer
# warpgroups at one CTA an SM (about two waves of CTAs, bench rows `two consumer warpgroups`)
# beside the default's one wave at two CTAs an SM; three bench processes, torch's SDPA after
# each. Run as `DEADLINE_S=300 bash notes/session25-lead-waves.sh` (carry .gpu-waves25:
# bench-decode.xz, decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-waves25" /tmp/waves25 "${DEADLINE_S:-300}"
gpu_log 200
drop='!padded|!evict|!ordinary|!clusters|!stages|!as served|!cp.async|!TMA boxes|!table|!touching|!prefetch|!in order|!in 2 MiB|!runs'
decode_benches 70 "32x16384 contiguous|32x4096 contiguous|32x16384 paged 64|32x4096 paged 64|$drop" 3 torch
decode_call_end
