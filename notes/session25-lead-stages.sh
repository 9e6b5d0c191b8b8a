#!/usr/bin/env bash
# Lead's call (session 25, issue 31): the contiguous bf16 cache's two-CTA kernel at head dim 128
# on 2 ring stages (DecodeConfig::measured_stage_limit, DecodeConfig::CONTIGUOUS_PAGE; the split
# rule keeps one CTA an SM first there), the final code of the session: `ptxkit selftest --only
# decode` (its new contiguous case of 40 sequences x 8 KV heads, past a wave) beside memcheck;
# the example; three bench processes at d 128 over the contiguous caches and the 16- and 64-token
# pages with the `3 stages` rows (the old ring), torch's SDPA after each. Run as
# `DEADLINE_S=480 bash notes/session25-lead-stages.sh` (carry .gpu-stages25: ptxkit.xz,
# bench-decode.xz, decode_paged.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py,
# session23-lead-clocks-summary.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-stages25" /tmp/stages25 "${DEADLINE_S:-480}"
gpu_log 200
decode_checked 170
decode_examples
drop='!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!2 stages|!4 stages|!6 stages|!8 stages|!12 stages|!padded|!combine|!splits|!as served|!e4m3, 3 stages'
decode_benches 80 "contiguous|paged 16|paged 64|$drop" 3 torch
decode_call_end
