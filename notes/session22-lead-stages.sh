#!/usr/bin/env bash
# Lead's exploratory call (session 22, issue 31): fewer K/V ring stages than the rule's
# (DecodeConfig::stage_limit; FP8 d128 rule 6, bf16 3), fewer bytes in flight an SM, on every
# problem: the contiguous bf16 and FP8 caches and the FP8 16-token pages (shuffled); then ncu of
# one cold launch a row at 1 x 128k (the SMs' active cycles: the tail). Run as `DEADLINE_S=150
# bash notes/session22-lead-stages.sh` (carry .gpu-solo: bench-decode.xz, stripped).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22 "${DEADLINE_S:-150}"
rows='contiguous|paged 16 e4m3|!as served|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!splits|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch|!clusters|!one-CTA'
decode_benches 40 "$rows"
decode_ncu "1x131072 contiguous e4m3|1x131072 paged 16 e4m3|${rows#*|*|}" 30
pack
decode_bench_counts
