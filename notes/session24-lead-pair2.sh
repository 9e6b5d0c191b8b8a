#!/usr/bin/env bash
# Lead's call (session 24, issue 31): two consumer warpgroups for launches whose CTAs fit one an
# SM over bf16 caches too (the second hands its O and row statistics to the first; the default
# for both caches now, DecodeConfig::solo_consumers). `ptxkit selftest --only decode` (every
# case at d 64/128 also on one consumer warpgroup, checked against the reference) beside
# memcheck; the example `decode_paged` (FP8 and bf16, memcheck of the FP8 run); three bench
# processes over the contiguous caches and the 16- and 64-token pages with the one-consumer
# rows, each followed by torch's SDPA; ncu of one cold launch a split problem's contiguous
# row with the clocks free and at base. Run as `DEADLINE_S=480 bash notes/session24-lead-pair2.sh`
# (carry .gpu-pair24b: ptxkit.xz, bench-decode.xz, decode_paged.xz; decode_attention_torch.py,
# rows_torch.py, torch_timing.py, session23-lead-clocks-summary.py).
# (Its steps rewritten after the call onto benches/gpu_steps.sh's decode_examples,
# decode_ncu_clocks and decode_call_end: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-pair24b" /tmp/pair24b "${DEADLINE_S:-480}"
gpu_log 200
decode_checked 100
decode_examples
run_within example-memcheck 40 compute-sanitizer --tool memcheck "$kit/decode_paged"
drop='!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!stages|!padded|!combine|! 4 splits|!32 splits|!33 splits|!as served'
decode_benches 60 "contiguous|paged 16|paged 64|$drop" 3 torch
NCU="8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!stages|!splits|!clusters"
decode_ncu_clocks "$NCU" 60
decode_call_end
