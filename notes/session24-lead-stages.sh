#!/usr/bin/env bash
# Lead's call (session 24, issue 31): the two-consumer kernels' ring stages. The bf16 handover's
# row statistics now in a buffer of their own (2 stages possible): `ptxkit selftest --only
# decode` beside memcheck; three bench processes of the split problems' contiguous rows (two
# consumer warpgroups: bf16 at 4 stages (default), 2 and 6 (the one-CTA kernel), FP8 at 6 and 12;
# one consumer warpgroup at the 2-CTA kernel's 3 / 6), each followed by torch's SDPA; ncu of one
# cold launch a row with the clocks free and at base. Run as
# `DEADLINE_S=420 bash notes/session24-lead-stages.sh` (carry .gpu-stages24: ptxkit.xz,
# bench-decode.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
# (Its steps rewritten after the call onto benches/gpu_steps.sh's decode_examples,
# decode_ncu_clocks and decode_call_end: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-stages24" /tmp/stages24 "${DEADLINE_S:-420}"
gpu_log 200
decode_checked 100
ROWS='8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!clusters|!cp.async|!splits|!contiguous, 2 stages|!e4m3, 3 stages|!e4m3, 4 stages'
decode_benches 60 "$ROWS" 3 torch
decode_ncu_clocks "$ROWS" 60
decode_call_end
