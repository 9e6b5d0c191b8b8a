#!/usr/bin/env bash
# Lead's call (session 22, issue 31) on the ring stage limits at every head dim
# (DecodeConfig::measured_stage_limit: 64 3 of any cache, 128 FP8 copies 3 and bf16 16-row page
# boxes 2, 256 FP8 4 and bf16 2): `ptxkit selftest --only decode` beside compute-sanitizer
# memcheck of every case, then two bench processes at head dims 64 and 256 (PTXKIT_DECODE_D) over
# the contiguous bf16 and FP8 caches and the bf16 16-token and FP8 16- and 64-token pages
# (shuffled), each also at the other stage counts up to the rule's (the rule's: the old default).
# Run as `DEADLINE_S=220 bash notes/session22-lead-heads2.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/heads22b "${DEADLINE_S:-220}"
decode_checked 110
rows='contiguous|paged 16|paged 64 e4m3|!as served|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits'
for d in 64 256; do
  DECODE_TAG=d$d PTXKIT_DECODE_D=$d decode_benches 45 "$rows" 2
done
pack
decode_checked_summary _st
decode_bench_counts
