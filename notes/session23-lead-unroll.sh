#!/usr/bin/env bash
# Lead's call (session 23, issue 31): the folded combine's second pass reading 33 splits a step
# (build.rs FOLD_READS.sum_unroll; new) against 24 (main b8a48d7; old): 1 x 128k's 33-split
# pages in one step instead of two. `ptxkit selftest --only decode` (new; every case also on the
# combine kernel: the same bits) beside memcheck; the split problems' rows in three processes of
# each build, alternating. Run as `DEADLINE_S=150 bash notes/session23-lead-unroll.sh` (carry
# .gpu-unroll23: bench-decode.xz, bench-decode-old.xz, ptxkit.xz).
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ab: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-unroll23" /tmp/unroll23 "${DEADLINE_S:-150}"
decode_checked 70
ROWS='8x65536 contiguous|1x131072 contiguous|8x65536 paged|1x131072 paged|!as served|!in order|!MiB|!KiB|!table|!touching|!L2 prefetch|!splits|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA|!stages|!plain|!padded|!paged 128|!paged 256'
decode_ab 20 "$ROWS"
pack
decode_checked_summary _fold
decode_bench_counts
