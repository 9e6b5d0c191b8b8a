#!/usr/bin/env bash
# Lead's final call (session 19) on merged main (run as `DEADLINE_S=300 bash
# notes/session19-lead-final.sh`, 301 s; the device helpers were tidied into `call_start` after): the selftest's checks, then the GEMM-with-epilogue
# example's checks (its edge shapes, 3000x3000x200 among them: tiles handed to the epilogue warps),
# and stream-K's checks (`gemm_decode`, DECODE_CHECK_ONLY=stream-k: two entries never run in sk20's
# call), every step under the call's deadline; a short summary last. The kit (`.gpu-lead/`):
# `ptxkit.xz`, `gemm_epilogue.xz`, `gemm_decode.xz` (stripped, xz-compressed).
set -u
# Run from the repository root (the device tool's copy of the checkout): the shared step helpers.
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-lead" /tmp/final19 "${DEADLINE_S:-330}"
# The selftest's checks one process each (`--only`), the GEMMs' first and the attention backward
# (checked on its own branch's call) last, so a short deadline drops the least new.
checks="gemm_fp8 gemm_fp8_block gemm_grouped gemm_grouped_masked gemm_grouped_fp8_block
  gemm_grouped_fp8_block_masked gemm_epilogue gemm_debug tile_epilogue vector_add scale tma_copy
  cluster_exchange tile_copies tile_matrix tile_tma tile_tma_multicast tile_wgmma_bf16
  tile_wgmma_f16 tile_wgmma_tf32 tile_wgmma_e4m3 tile_wgmma_e5m2 tile_wgmma_regs_a
  tile_bulk_cluster row_kernels row_kernels_packed bad_launches hang_baseline hang_expect_tx
  hang_wrong_phase hang_missing_arrive printf decode attention attention_varlen attention_backward"
step_at "stream-K checks (DECODE_CHECK_ONLY=stream-k, C poisoned, twice bit for bit)"
run_within streamk-checks 45 env DECODE_CHECK_ONLY=stream-k "$kit/gemm_decode"
step_at selftest
for c in $checks; do
  run_within "selftest-$c" 120 "$kit/ptxkit" selftest --only "$c" >/dev/null
  grep -hE "^(PASS|FAIL|SKIP)" "$out/logs/selftest-$c.txt" | cut -c1-150 >> "$out/selftest-lines.txt"
  grep -q -E "^(PASS|FAIL|SKIP)" "$out/logs/selftest-$c.txt" || echo "NONE $c" >> "$out/selftest-lines.txt"
done
step_at "gemm_epilogue --check"
run_within epilogue-check 60 "$kit/gemm_epilogue" --check
tar czf "$out/logs.tgz" -C "$out" logs selftest-lines.txt
echo "== summary"
echo "selftest: $(grep -c '^PASS' "$out/selftest-lines.txt") PASS, $(grep -c '^FAIL' "$out/selftest-lines.txt") FAIL of $(echo $checks | wc -w)"
grep -E '^(FAIL|NONE|SKIP)' "$out/selftest-lines.txt"
grep -E "ok|FAIL|rel" "$out/logs/epilogue-check.txt" | tail -25
echo "== stream-K checks"
grep -E "PASS|FAIL|same bits|refused|error" "$out/logs/streamk-checks.txt" | cut -c1-200 | tail -20
