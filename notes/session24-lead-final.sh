#!/usr/bin/env bash
# Lead's verification call (session 24, issue 31) on the final defaults (two consumer warpgroups
# for launches whose CTAs fit one an SM: bf16 on each key tile's halves at 3 stages, FP8 on
# alternate tiles): `ptxkit selftest --only decode` beside memcheck; the example `decode_paged`;
# three bench processes at d 128 over the contiguous caches and the 16- and 64-token pages (the
# bars), with the one-consumer and alternate-tile rows, each followed by torch's SDPA; ncu of one
# cold launch a split problem's contiguous row with the clocks free and at base. Run as
# `DEADLINE_S=420 bash notes/session24-lead-final.sh` (carry .gpu-final24: ptxkit.xz,
# bench-decode.xz, decode_paged.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
# (Its steps rewritten after the call onto benches/gpu_steps.sh's decode_examples,
# decode_ncu_clocks and decode_call_end: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-final24" /tmp/final24 "${DEADLINE_S:-420}"
gpu_log 200
decode_checked 110
decode_examples
drop='!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!stages|!padded|!combine|!splits|!as served'
decode_benches 70 "contiguous|paged 16|paged 64|$drop" 3 torch
NCU="8x65536 contiguous|1x131072 contiguous|!alternate|$drop"
decode_ncu_clocks "$NCU" 50
decode_call_end
