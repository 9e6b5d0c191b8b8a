#!/usr/bin/env bash
# Session 20, bs21 (issue 29): block-scaled FP8 against our per-tensor FP8 at the same tile at
# DeepSeek-V3's decode shapes, with split-K's new pipelined promotion. One GPU call (300 s):
# the same-tile timing of all 24 rows (the decode default and the other promotion, the
# per-tensor twin, the unsplit default; checks off), the checks of the pipelined split kernels
# (C poisoned, fresh data), ncu of 4 rows, memcheck of the pipelined split checks. gemm_fp8_block
# from branch bs21, stripped and xz-compressed in .gpu-bs21.
set -u
source benches/gpu_steps.sh
call_start .gpu-bs21 /tmp/bs21 "${DEADLINE_S:-286}"
B=$kit/gemm_fp8_block
NCU_METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
ROWS=1x7168x16384,16x32768x512,64x2112x7168,128x4096x7168

step_at "same tile, 24 rows"
run_within same-tile 150 env FP8_BLOCK_SAME_TILE=1 FP8_BLOCK_CHECKS=0 $B; pack
step_at "checks of the pipelined split kernels"
run_within checks-pp 50 env FP8_BLOCK_SPLIT=checks-pp FP8_BLOCK_CHECKS=0 $B; pack
step_at "ncu"
run_within ncu 50 env FP8_BLOCK_SAME_TILE=1 FP8_BLOCK_CHECKS=0 FP8_BLOCK_RUNS=1 FP8_BLOCK_SHAPES=$ROWS \
  ncu --clock-control none -k regex:gemm_ --metrics "$NCU_METRICS" $B
python3 notes/session16-dec-ncu-summary.py "$L/ncu.txt" > "$L/ncu-summary.txt" 2>&1; pack
step_at "memcheck"
run_within memcheck-pp 60 env FP8_BLOCK_SPLIT=checks-pp FP8_BLOCK_CHECKS=0 \
  compute-sanitizer --tool memcheck --error-exitcode 9 --kernel-name regex=_pp.*splitk $B
step_at "done"; pack
echo "==== summary"
grep -E "^\| [0-9]" "$L/same-tile.txt"; tail -1 "$L/same-tile.txt"
echo "== checks-pp: $(grep -c PASS $L/checks-pp.txt) PASS, $(grep -c FAIL $L/checks-pp.txt) FAIL"
grep -E "^split (check|bits)" "$L/checks-pp.txt" | sed 's/gemm_e4m3_bf16_//' | cut -c1-120
echo "== ncu"; cut -c1-230 "$L/ncu-summary.txt" | sed 's/gemm_e4m3_bf16_//'
echo "== memcheck: $(grep -c PASS $L/memcheck-pp.txt 2>/dev/null) PASS, $(grep -c FAIL $L/memcheck-pp.txt 2>/dev/null) FAIL; $(grep -h 'ERROR SUMMARY' $L/memcheck-pp.txt 2>/dev/null | tail -1)"
