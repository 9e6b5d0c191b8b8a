#!/usr/bin/env bash
# Session 19, bs20 (issue 29): block-scaled FP8 split-K at decode shapes (checks, memcheck,
# timing against the unsplit default and our per-tensor FP8 at the same tile) and memcheck of
# the clusters along N. gemm_fp8_block from branch bs20, gemm_decode from main (1e0f73a).
set -u
source benches/gpu_steps.sh
call_start .gpu-bs20 /tmp/bs20 "${DEADLINE_S:-112}"
compute-sanitizer --help 2>&1 | grep -A6 -- "--kernel-name" > "$L/sanitizer-filter-help.txt"
B=$kit/gemm_fp8_block
D=$kit/gemm_decode
MC="compute-sanitizer --tool memcheck --error-exitcode 9"
# 1. Block-scaled split-K: checks (C poisoned), fixup vs second launch bits, timing.
step_at "block split checks + timing"
run_within split 48 env FP8_BLOCK_SPLIT=1 FP8_BLOCK_CHECKS=0 $B; pack
# 2. memcheck of the split kernels' checks (GEMM parts and the second launch's sum).
step_at "memcheck split"
run_within memcheck-split 22 env FP8_BLOCK_SPLIT=checks FP8_BLOCK_CHECKS=0 $MC --kernel-name kns=splitk $B; pack
# 3. memcheck of the clusters along N: the cluster checks (kns=_n: _n2 and _n4), then the
#    decode table's live _n2 picks checked against the baseline on a poisoned C and timed.
step_at "memcheck clusters"
run_within memcheck-clusters 18 env DECODE_CHECK_ONLY=clusters $MC --kernel-name kns=_n $D; pack
run_within memcheck-pick-bf16 14 env DECODE_NO_CHECKS=1 DECODE_CHECK=pick DECODE_DTYPE=bf16 DECODE_SHAPE=128x57344x8192 \
  DECODE_PICK=128x57344x8192=gemm_bf16_bf16_128x256x64_s4_g16_n2 $MC --kernel-name kns=_n2 $D; pack
run_within memcheck-pick-e4m3 10 env DECODE_NO_CHECKS=1 DECODE_CHECK=pick DECODE_DTYPE=e4m3 DECODE_SHAPE=128x10240x8192 \
  DECODE_PICK=128x10240x8192=gemm_e4m3_bf16_128x80x128_s8_g16_n2 $MC --kernel-name kns=_n2 $D; pack
step_at "summary"
echo "== split checks"; grep -E "^split (check|bits)" "$L/split.txt" | sed 's/gemm_e4m3_bf16_//' | cut -c1-150
echo "== split timing"; grep -E "^\| [0-9]" "$L/split.txt" | sed 's/gemm_e4m3_bf16_//'
for f in memcheck-split memcheck-clusters memcheck-pick-bf16 memcheck-pick-e4m3; do
  echo "== $f: $(grep -c PASS $L/$f.txt) PASS, $(grep -c FAIL $L/$f.txt) FAIL; $(grep -h 'ERROR SUMMARY' $L/$f.txt | tail -1)"
  grep -E "^\| |check .*_n[24]|occupancy" "$L/$f.txt" | cut -c1-160 | head -12
done
tail -3 "$L/split.txt"
