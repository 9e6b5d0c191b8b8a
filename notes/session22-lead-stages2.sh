#!/usr/bin/env bash
# Lead's call (session 22, issue 31) on the FP8 copies' new default of 3 ring stages where two
# CTAs share an SM (DecodeConfig::stage_limit; the split problems' launches, one CTA an SM, take
# a second kernel with the rule's 6): `ptxkit selftest --only decode`; three bench processes over
# the contiguous caches, the FP8 16- and 64-token pages (shuffled, as served), the old default
# (6 stages) beside, and at the split problems two CTAs an SM (32 and 33 splits at 1 x 128k, 4 at
# 8 x 64k) on the 3-stage kernels; compute-sanitizer memcheck of the selftest's FP8 cases. Run as
# `DEADLINE_S=200 bash notes/session22-lead-stages2.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz, stripped).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22b "${DEADLINE_S:-200}"
decode_selftest 50
decode_benches 40 'contiguous|paged 16 e4m3|paged 64 e4m3|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch|!clusters|!one-CTA|!contiguous, 3|!contiguous, 4 splits|!contiguous, 6|!contiguous, 1|!contiguous, 2 splits'
step_at "memcheck of the FP8 cases"
run_within memcheck 45 env PTXKIT_DECODE_CASES=fp8 PTXKIT_DECODE_LIMIT_S=40 compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only decode
pack
decode_checked_summary _st3
decode_bench_counts
