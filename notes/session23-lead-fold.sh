#!/usr/bin/env bash
# Lead's call (session 23, issue 31): the folded combine reading 4 adjacent columns a thread (one
# 16-byte load a split) with the first pass's LSEs in one step of up to 64 splits and the second's in
# steps of 24 (build.rs FOLD_READS), against main 1c3244e's fold (4 elements a thread, 16 splits a
# step of each pass). `ptxkit selftest --only decode` (every case also on the combine kernel: the
# same bits) beside compute-sanitizer memcheck of every case; then the split problems' rows (the
# contiguous caches, the bf16 16-token and FP8 16- and 64-token pages, each folded and by the
# combine kernel) in three processes of each build, alternating old and new.
# Run as `DEADLINE_S=330 bash notes/session23-lead-fold.sh` (carry .gpu-fold23: bench-decode.xz,
# bench-decode-old.xz, ptxkit.xz).
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ab: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-fold23" /tmp/fold23 "${DEADLINE_S:-330}"
decode_checked 110
ROWS='8x65536 contiguous|1x131072 contiguous|8x65536 paged 16|1x131072 paged 16|8x65536 paged 64 e4m3|1x131072 paged 64 e4m3|!as served|!in order|!MiB|!KiB|!table|!touching|!L2 prefetch|!splits|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA|!stages|!plain|!padded'
decode_ab 32 "$ROWS"
pack
decode_checked_summary _fold
decode_bench_counts
