#!/usr/bin/env bash
# Lead's call (session 23, issue 31): the decode consumers' per-tile work cut where it does
# nothing (new) against main 1811757's (old): O's rescale skipped by a warp whose rows all kept
# their max over the tile (`rescale_unless_held`: the factor is exactly 1 there) and the FP8
# consumer's V masks only in the tile that holds the sequence's end. Call `clocks` found the
# split problems' kernels (one CTA an SM) 10 % (bf16) and 26 % (FP8) slower with the SM clock at
# base (1.35 GHz) than free (1.74-1.78 GHz, the power cap), cuDNN's 1 %: the consumers' per-tile
# work is on the critical path. `ptxkit selftest --only decode` beside memcheck of every case and the
# example (new); bench processes alternating old and new (three each, the d 128 table's rows);
# ncu of one cold launch of the contiguous caches and the FP8 16-token pages, old and new, the
# clocks free and at base; the GPU's clocks and power logged. Run as
# `DEADLINE_S=400 bash notes/session23-lead-skip.sh` (carry .gpu-skip23: bench-decode.xz,
# bench-decode-old.xz, ptxkit.xz, decode_paged.xz). The call ran out of time after the selftest
# and memcheck (both logged: PASS, 0 errors): decode_checked's `wait` then waited for gpu_log's
# logger too (fixed: it waits for memcheck alone); `SKIP_CHECKED=1` (call `skip2`) runs the rest.
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ncu_at: the same steps as ran.)
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ab: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-skip23" /tmp/skip23 "${DEADLINE_S:-400}"
gpu_log 100
[ -n "${SKIP_CHECKED:-}" ] || decode_checked 110
step_at example
run_within example-fp8 20 "$kit/decode_paged"
run_within example-bf16 20 "$kit/decode_paged" --bf16
ROWS='contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!stages|!padded|!splits|!combine|!as served'
decode_ab 40 "$ROWS"
rows='32x16384 contiguous|8x65536 contiguous|1x131072 contiguous|1x131072 paged 16 e4m3|8x65536 paged 16 e4m3|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!stages|!splits|!clusters|!TMA|!cp.async|!as served|!in order|!KiB|!MiB|!table|!touching|!L2'
for c in none base; do
  decode_ncu_at $c $c-old "$rows" 50 bench-decode-old
  decode_ncu_at $c $c-new "$rows" 50
done
gpu_log_stop
pack
[ -n "${SKIP_CHECKED:-}" ] || decode_checked_summary _fold
grep -hE "PASS|FAIL" "$L"/example-*.txt | cut -c1-200
decode_bench_counts
gpu_log_summary
