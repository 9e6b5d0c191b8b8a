#!/usr/bin/env bash
# Lead's call (session 24, issue 31): two consumer warpgroups in the kernel for launches whose
# CTAs fit one an SM over an FP8 cache (DecodeConfig::solo_consumers 2, the new default) against
# one (main's kernel, the same PTX: the `one consumer warpgroup` rows). `ptxkit selftest --only
# decode` beside memcheck; three bench processes of the split problems' rows (the contiguous
# caches, and the FP8 16- and 64-token pages at the launcher's splits and at splits whose CTAs fit
# one an SM, each with one consumer warpgroup too); ncu of one cold launch a row with the clocks
# free and at base. Run as `DEADLINE_S=420 bash notes/session24-lead-pair.sh` (carry .gpu-pair24:
# ptxkit.xz, bench-decode.xz).
# (Its steps rewritten after the call onto benches/gpu_steps.sh's decode_examples,
# decode_ncu_clocks and decode_call_end: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-pair24" /tmp/pair24 "${DEADLINE_S:-420}"
gpu_log 200
decode_checked 90
drop='!as served|!in order|!MiB|!KiB|!table|!touching|!L2 prefetch|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA|!stages|!plain|!padded|!combine|! 4 splits|!32 splits|!33 splits'
ROWS="8x65536 contiguous|1x131072 contiguous|8x65536 paged 16 e4m3|1x131072 paged 16 e4m3|8x65536 paged 64 e4m3|1x131072 paged 64 e4m3|$drop"
decode_benches 70 "$ROWS" 3
NCU="8x65536 contiguous e4m3|1x131072 contiguous e4m3|8x65536 paged 16 e4m3, 2 splits|1x131072 paged 16 e4m3, 16 splits|$drop"
decode_ncu_clocks "$NCU" 60
decode_call_end
