#!/usr/bin/env bash
# Lead's call (session 24, issue 31) after reading the whole change: the bf16 key halves' V
# clearing written as one loop with the one-consumer kernel's (an unsigned compare of the key
# against the keys left; the one-consumer and alternate-tile kernels' PTX unchanged, the key
# halves' changed). `ptxkit selftest --only decode` beside memcheck; two bench processes of the
# split problems' bf16 contiguous and 64-token-page rows. Run as
# `DEADLINE_S=240 bash notes/session24-lead-clear.sh` (carry .gpu-clear24: ptxkit.xz,
# bench-decode.xz, session23-lead-clocks-summary.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-clear24" /tmp/clear24 "${DEADLINE_S:-240}"
gpu_log 200
decode_checked 110
drop='!e4m3|!padded|!combine|!plain|!evict|!ordinary|!clusters|!splits|!one-CTA|!stages|!as served'
decode_benches 40 "8x65536 contiguous|1x131072 contiguous|8x65536 paged 64|1x131072 paged 64|$drop" 2
decode_call_end
