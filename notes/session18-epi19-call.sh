#!/usr/bin/env bash
# epi19, session 18, the one device call: the epilogue warps reading the staged residual directly
# from global memory into registers (HopperGemm::staged_input_direct) against the staged slabs
# (TMA + ldmatrix), each timed against the library's plain GEMM, launches interleaved.
# Run from the session checkout as `bash .gpu-epi19/run.sh` (carry .gpu-epi19: the bench and the
# example built from branch epi19).
set -u
OUT=${OUT:-/tmp/epi19-out}; mkdir -p "$OUT"
d=.gpu-epi19
start=$(date +%s)
left() { echo $(( 165 - ($(date +%s) - start) )); }
xz -d -k -f $d/bench_epi.xz $d/example_epi.xz && chmod +x $d/bench_epi $d/example_epi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 250 > "$OUT/clocks.csv" 2>&1 &
smi=$!
echo "== example --check, edge shapes ($(date +%T))"
timeout 35 $d/example_epi --check > "$OUT/example-check.txt" 2>&1; echo "rc $?"
S="epilogue warps, staged;epilogue warps, staged, direct;epilogue warps, staged, direct, no read-ahead"
echo "== bench 4096 ($(date +%T), $(left) s left)"
GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=5 GEMM_EPILOGUE_SCHEDULES="$S" \
  timeout 55 $d/bench_epi > "$OUT/bench-4096.txt" 2>&1; echo "rc $?"
echo "== bench 8192 ($(date +%T), $(left) s left)"
t=$(( $(left) - 5 )); [ $t -gt 50 ] && t=50
GEMM_EPILOGUE_SIZES=8192 GEMM_EPILOGUE_ROUNDS=3 GEMM_EPILOGUE_SCHEDULES="$S" \
  timeout $t $d/bench_epi > "$OUT/bench-8192.txt" 2>&1; echo "rc $?"
kill $smi 2>/dev/null
for sched in "epilogue warps, staged" "epilogue warps, staged, direct"; do
  t=$(( $(left) - 3 ))
  [ $t -lt 15 ] && break
  [ $t -gt 25 ] && t=25
  tag=$( [ "$sched" = "epilogue warps, staged" ] && echo staged || echo direct )
  echo "== ncu $tag ($(date +%T), $(left) s left)"
  GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=1 GEMM_EPILOGUE_SCHEDULES="$sched" timeout $t \
    ncu --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
    -k regex:bias_relu_residual -c 1 $d/bench_epi > "$OUT/ncu-$tag.txt" 2>&1; echo "rc $?"
done
echo "== summary ($(date +%T))"
grep -h "FAIL\|ok$" "$OUT/example-check.txt" | head -20
grep -h "|" "$OUT"/bench-*.txt | grep -v "\-\-\-" | head -80
grep -hE "Elapsed Cycles  |wavefronts|sectors|Duration|Tensor is|Shared is" "$OUT"/ncu-*.txt 2>/dev/null | head -30
