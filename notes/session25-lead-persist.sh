#!/usr/bin/env bash
# Lead's call (session 25, issue 31): the persistent grid (DecodeConfig::persistent, bf16: one
# CTA an SM walking the items, two consumer warpgroups on each tile's key halves). `ptxkit
# selftest --only decode` (its new case of 40 sequences x 8 KV heads) beside memcheck; three
# bench processes of the bf16 contiguous and 16-/64-token page rows at every problem, default,
# `persistent grid` and (unsplit problems) `two consumer warpgroups`, torch's SDPA after each.
# Run as `DEADLINE_S=420 bash notes/session25-lead-persist.sh` (carry .gpu-persist25: ptxkit.xz,
# bench-decode.xz, decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-persist25" /tmp/persist25 "${DEADLINE_S:-420}"
gpu_log 200
decode_checked 180
drop='!e4m3|!padded|!combine|!plain|!evict|!ordinary|!clusters|!splits|!one-CTA|!stages|!as served|!one consumer|!alternate|!in order'
decode_benches 70 "contiguous|paged 16|paged 64|$drop" 3 torch
decode_call_end
