#!/usr/bin/env bash
# Lead's call (session 22, issue 31): the ring stage limits at head dims 64 and 256, where the
# defaults have none (DecodeConfig::stage_limit is set at 128 only): two bench processes at each
# head dim (PTXKIT_DECODE_D) over the contiguous bf16 and FP8 caches and the bf16 16-token and FP8
# 16- and 64-token pages (shuffled), each also at 2, 3, 4, 6, 8 and 12 stages up to the rule's.
# Run as `DEADLINE_S=200 bash notes/session22-lead-heads.sh` (carry .gpu-solo: bench-decode.xz).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/heads22 "${DEADLINE_S:-200}"
rows='contiguous|paged 16|paged 64 e4m3|!as served|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits'
for d in 64 256; do
  DECODE_TAG=d$d PTXKIT_DECODE_D=$d decode_benches 45 "$rows" 2
done
pack
decode_bench_counts
