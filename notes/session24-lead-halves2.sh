#!/usr/bin/env bash
# Lead's call (session 24, issue 31): two bf16 consumer warpgroups on each key tile's halves at
# 4 ring stages (the candidate default: DecodeConfig::key_halves on, the pair's stages made even)
# against halves at 2, 3 and 6 (the one-CTA kernel), alternate tiles (4) and one consumer (3).
# `ptxkit selftest --only decode` (alternate tiles checked against the reference in every bf16
# case at d 64/128) beside memcheck; the example `decode_paged` (FP8 and bf16); three bench
# processes at d 128 over the split problems' contiguous caches and 64-token pages, each followed
# by torch's SDPA; ncu of one cold launch a contiguous bf16 row with the clocks free and at base.
# Run as `DEADLINE_S=420 bash notes/session24-lead-halves2.sh` (carry .gpu-halves24b: ptxkit.xz,
# bench-decode.xz, decode_paged.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
# (Its steps rewritten after the call onto benches/gpu_steps.sh's decode_examples,
# decode_ncu_clocks and decode_call_end: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-halves24b" /tmp/halves24b "${DEADLINE_S:-420}"
gpu_log 200
decode_checked 110
decode_examples
drop='!padded|!combine|!plain|!evict|!ordinary|!clusters|!cp.async|!TMA|!splits|!one-CTA kernel,|!e4m3, one-CTA|!, 2 stages, |!e4m3, 3 stages|!e4m3, 4 stages|!contiguous, 2 stages|!table|!touching|!L2 prefetch|!as served|!in order'
ROWS="8x65536 contiguous|1x131072 contiguous|8x65536 paged 64|1x131072 paged 64|$drop"
decode_benches 70 "$ROWS" 3 torch
NCU="8x65536 contiguous|1x131072 contiguous|!e4m3|!warpgroups, 2 stages|$drop"
decode_ncu_clocks "$NCU" 50
decode_call_end
