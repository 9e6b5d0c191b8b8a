#!/usr/bin/env bash
# Lead's call (session 24, issue 31): two bf16 consumer warpgroups on each key tile's halves
# (DecodeConfig::key_halves: both on every tile, S over 32 keys each, the rule's 3 stages)
# against alternate tiles (the default, 4 stages) and one consumer. `ptxkit selftest --only
# decode` (key halves checked against the reference in every bf16 case at d 64/128) beside
# memcheck; the example `decode_paged` (FP8 and bf16); three bench processes at d 128 over the
# split problems' contiguous caches and 64-token pages, each followed by torch's SDPA; ncu of
# one cold launch a contiguous row with the clocks free and at base; two processes at d 64 over
# the split problems' contiguous rows (the two-consumer default there too). Run as
# `DEADLINE_S=480 bash notes/session24-lead-halves.sh` (carry .gpu-halves24: ptxkit.xz,
# bench-decode.xz, decode_paged.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
# (Its steps rewritten after the call onto benches/gpu_steps.sh's decode_examples,
# decode_ncu_clocks and decode_call_end: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-halves24" /tmp/halves24 "${DEADLINE_S:-480}"
gpu_log 200
decode_checked 110
decode_examples
drop='!padded|!combine|!plain|!evict|!ordinary|!clusters|!cp.async|!TMA|!splits|!one-CTA|!stages|!table|!touching|!L2 prefetch|!as served|!in order'
ROWS="8x65536 contiguous|1x131072 contiguous|8x65536 paged 64|1x131072 paged 64|$drop"
decode_benches 60 "$ROWS" 3 torch
NCU="8x65536 contiguous|1x131072 contiguous|!e4m3|$drop"
decode_ncu_clocks "$NCU" 50
PTXKIT_DECODE_D=64 DECODE_TAG=d64 decode_benches 40 "8x65536 contiguous|1x131072 contiguous|$drop" 2
decode_call_end
