#!/usr/bin/env bash
# Lead's call (session 22, issue 31): the contiguous FP8 cache at 8 x 64k took 238-244 µs back to
# back in some bench processes and 253-299 in others (calls `stages3`, `final`, `fold2`). Eight
# bench processes, each over the contiguous bf16 and FP8 caches at 8 x 64k and 1 x 128k and the
# same with each sequence 64 tokens further on than its length (one page of ctx + 64 tokens a
# sequence: sequences not a power of two apart). Run as `DEADLINE_S=110 bash
# notes/session22-lead-camp.sh` (carry .gpu-solo: bench-decode.xz).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/camp22 "${DEADLINE_S:-110}"
decode_benches 12 '8x65536 contiguous|1x131072 contiguous|!folded|!plain|!splits|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA|!stages' 8
pack
decode_bench_counts
