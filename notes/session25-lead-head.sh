#!/usr/bin/env bash
# Lead's confirming call (session 25, issue 31) on main's head after the refactors (identical
# PTX for every configuration of DecodeConfig::all()): `ptxkit selftest --only decode` beside
# memcheck; the example; three bench processes at d 128 over the contiguous caches and the 16-
# and 64-token pages, torch's SDPA after each (the bars). Run as
# `DEADLINE_S=480 bash notes/session25-lead-head.sh` (carry .gpu-head25: ptxkit.xz,
# bench-decode.xz, decode_paged.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-head25" /tmp/head25 "${DEADLINE_S:-480}"
gpu_log 200
decode_checked 170
decode_examples
drop='!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!2 stages|!4 stages|!6 stages|!8 stages|!12 stages|!padded|!combine|!splits|!as served|!3 stages|!persistent|!two consumer|!one consumer|!alternate|!one wave'
decode_benches 80 "contiguous|paged 16|paged 64|$drop" 3 torch
decode_call_end
