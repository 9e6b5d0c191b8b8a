#!/usr/bin/env bash
# Lead's verification call (session 25, issue 31) on the final defaults (DecodeConfig::two_waves:
# a bf16 launch that fills two waves of one CTA an SM over pages of 8192 tokens or more takes
# the two-consumer kernel for one CTA an SM; DecodeConfig::persistent an option): `ptxkit
# selftest --only decode` beside memcheck; the example `decode_paged`; three bench processes at
# d 128 over the contiguous caches and the 16- and 64-token pages (the bars), with the
# `one wave of two CTAs an SM`, `two consumer warpgroups` and `persistent grid` rows, each
# followed by torch's SDPA; two processes at 32 x 8k, 32 x 12k and 24 x 16k (the two-wave
# rule's bounds). Run as `DEADLINE_S=480 bash notes/session25-lead-final.sh` (carry
# .gpu-final25: ptxkit.xz, bench-decode.xz, decode_paged.xz; decode_attention_torch.py,
# rows_torch.py, torch_timing.py, session23-lead-clocks-summary.py).
# The call ran the rule's first form (pages of at least 8192 tokens, 90 % of two waves); from its
# 32 x 8k, 32 x 12k and 24 x 16k rows the rule became keys a CTA and pages of at least 12288 and
# 70 % of two waves (DecodeConfig::LONG_RUN, DecodeConfig::takes_solo): the problems take
# the same kernels under both.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-final25" /tmp/final25 "${DEADLINE_S:-480}"
gpu_log 200
decode_checked 160
decode_examples
drop='!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!stages|!padded|!combine|!splits|!as served'
decode_benches 80 "contiguous|paged 16|paged 64|$drop" 3 torch
export PTXKIT_DECODE_PROBLEMS=32x8192,32x12288,24x16384
DECODE_TAG=mid decode_benches 60 "contiguous|!e4m3|!persistent|$drop" 2
unset PTXKIT_DECODE_PROBLEMS
decode_call_end
