#!/usr/bin/env bash
# Session 19, fin29 (issue 29): the final evidence call, one GPU call of at most 300 s. Binaries:
# gemm_decode, gemm_fp8, gemm_fp8_block from branch fin29 (7783ceb + the benches' switches
# DECODE_CHECK=pick, FP8_CHECK_ONLY, FP8_BLOCK_SAME_TILE and the table's finer digits), the gemm
# bench from main (7783ceb), stripped and xz-compressed in .gpu-fin29. Steps in order of need,
# each under `run_within` (benches/gpu_steps.sh) and the call's deadline; the logs are packed
# into $OUT/logs.tgz and a compact summary is printed last. The kit's none.py and summary.py are
# notes/session19-fin29-{none,summary}.py (the call took the rows' selection from a rows.py of
# its own, folded since into summary.py's `both` / `either`: the same selection).
set -u
source benches/gpu_steps.sh
call_start .gpu-fin29 /tmp/fin29 "${DEADLINE_S:-286}"
D=$kit/gemm_decode
NCU_METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio

# 1. The decode table, bf16 then e4m3 (runs 1 and 2 each interleaved with the baseline; each
#    row's gap timings after its run 2: cold interleaved and back to back).
for dt in bf16 e4m3; do
  step_at "table $dt"
  run_within table-$dt 50 env DECODE_NO_CHECKS=1 DECODE_GAP=1 DECODE_DTYPE=$dt $D
  grep -c "^| [A-Z]" "$L/table-$dt.txt"; pack
done
python3 $kit/summary.py both "$L/table-bf16.txt" "$L/table-e4m3.txt" > "$L/rows-both.txt"
python3 $kit/summary.py either "$L/table-bf16.txt" "$L/table-e4m3.txt" > "$L/rows-either.txt"
cat "$L/rows-both.txt"

# 2. ncu (clocks as they run, ncu's own cache flush) of our pick and the baseline at every row
#    below 1.0 in both runs (at most 10 a dtype).
for dt in bf16 e4m3; do
  shapes=$(grep "^$dt " "$L/rows-both.txt" | head -10 | awk '{print $2}' | paste -sd,)
  picks=$(grep "^$dt " "$L/rows-both.txt" | head -10 | awk '{print $2"="$3}' | paste -sd,)
  [ -z "$shapes" ] && continue
  step_at "ncu $dt: $shapes"
  run_within ncu-$dt 30 env DECODE_PROFILE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=$dt DECODE_SHAPE=$shapes \
    DECODE_PICK=$picks ncu --clock-control none --metrics "$NCU_METRICS" $D
  python3 notes/session16-dec-ncu-summary.py "$L/ncu-$dt.txt" > "$L/ncu-summary-$dt.txt" 2>&1; pack
done

# 3. compute-sanitizer memcheck: the one-launch splits (29 checks, C poisoned), the 192-wide
#    picks at 4096x2112x7168 (bf16: the gemm bench's check, poisoned C against an f32 cuBLAS
#    reference, then its timing runs; e4m3: the FP8 bench's checks against cuBLASLt promoted).
step_at "memcheck"
run_within memcheck-fixup 35 env DECODE_CHECK_ONLY=fixup compute-sanitizer --tool memcheck --kernel-name kns=fixup $D
run_within memcheck-192-bf16 25 env GEMM_SHAPES=4096x2112x7168 compute-sanitizer --tool memcheck --kernel-name kns=128x192 $kit/gemm --bench zz_table_only
run_within memcheck-192-e4m3 25 env FP8_CHECK_ONLY=1 compute-sanitizer --tool memcheck --kernel-name kns=128x192 $kit/gemm_fp8
grep -h "ERROR SUMMARY" "$L"/memcheck-*.txt; pack

# 4. The large shapes, bf16 and e4m3, every candidate timed (only the pick compared with the
#    baseline's C: DECODE_CHECK=pick), runs 1 and 2 interleaved with the baseline.
for dt in bf16 e4m3; do
  step_at "large $dt"
  run_within large-$dt 40 env DECODE_LARGE=1 DECODE_CHECK=pick DECODE_NO_CHECKS=1 DECODE_DTYPE=$dt \
    DECODE_SHAPE=4096x4096x4096,6144x6144x6144,8192x8192x8192 $D
  pack
done

# 5. Block-scaled FP8 against our per-tensor FP8 at the same tile, DeepSeek-V3's shapes at
#    M = 1, 16, 64, 128, cold and interleaved.
step_at "block-scaled"
run_within block-same 30 env FP8_BLOCK_SAME_TILE=1 FP8_BLOCK_CHECKS=0 $kit/gemm_fp8_block; pack

# 6. Where the event-timed call's time outside the kernel goes: ncu's durations of the kernels
#    in the bench's own timed runs (each after its 256 MB clear; no ncu flush, clocks as they
#    run), at the rows below 1.0 in both runs (at most 5 a dtype, worst first; ncu stops profiling after 1,000 launches).
for dt in bf16 e4m3; do
  shapes=$(grep "^$dt " "$L/rows-both.txt" | head -5 | awk '{print $2}' | paste -sd,)
  picks=$(grep "^$dt " "$L/rows-both.txt" | head -5 | awk '{print $2"="$3}' | paste -sd,)
  [ -z "$shapes" ] && continue
  step_at "ncu in the timed runs $dt: $shapes"
  run_within none-$dt 35 env DECODE_NO_CHECKS=1 DECODE_DTYPE=$dt DECODE_SHAPE=$shapes DECODE_PICK=$picks \
    ncu --cache-control none --clock-control none --launch-count 1000 --metrics gpu__time_duration.sum --csv --page raw --print-units base $D
  python3 $kit/none.py "$L/none-$dt.txt" > "$L/none-summary-$dt.txt" 2>&1; pack
done

step_at "done"
pack
echo "==== summary"
python3 $kit/summary.py "$L"
for dt in bf16 e4m3; do echo "-- ncu $dt (µs, DRAM %, L2 MB)"; awk -F'|' 'NR>2 {print $2, $3, $4, $6}' "$L/ncu-summary-$dt.txt" 2>/dev/null | cut -c1-110 | head -22; done
for dt in bf16 e4m3; do echo "-- in the timed runs $dt"; cut -c1-110 "$L/none-summary-$dt.txt" 2>/dev/null | head -24; done
pack
