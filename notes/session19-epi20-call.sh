#!/usr/bin/env bash
# epi20, session 19, the one device call: the epilogue warps storing C from registers
# (GemmConfig::epilogue_global_store) against the default (stmatrix back + TMA store), each fused
# kernel timed beside the library's plain GEMM (launches interleaved), rounds alternating.
# Run from the session checkout as `bash .gpu-epi20/call.sh` (carry .gpu-epi20).
set -u
d=.gpu-epi20
source benches/gpu_steps.sh
out=${OUT:-/tmp/epi20-out}; mkdir -p "$out"
deadline_start 140
xz -d -k -f $d/bench_epi.xz $d/example_epi.xz && chmod +x $d/bench_epi $d/example_epi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$out/logs/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 250 > "$out/logs/clocks.csv" 2>&1 &
smi=$!
step_at "example --check (edges, 3000x3000x200: handed tiles)"
run_within example-check 40 $d/example_epi --check
S="epilogue warps, staged;epilogue warps, staged, global store"
step_at "bench 4096"
run_within bench-4096 45 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=6 GEMM_EPILOGUE_SCHEDULES="$S" $d/bench_epi
step_at "bench 8192"
run_within bench-8192 40 env GEMM_EPILOGUE_SIZES=8192 GEMM_EPILOGUE_ROUNDS=3 GEMM_EPILOGUE_SCHEDULES="$S" $d/bench_epi
kill $smi 2>/dev/null
step_at "ncu (if time is left)"
if [ "$(left 30)" -ge 20 ] && command -v ncu >/dev/null; then
  for sched in "epilogue warps, staged" "epilogue warps, staged, global store"; do
    tag=$( [ "$sched" = "epilogue warps, staged" ] && echo default || echo global )
    run_within ncu-$tag 12 \
      env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=1 GEMM_EPILOGUE_SCHEDULES="$sched" ncu --section SpeedOfLight --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
      -k regex:bias_relu_residual -c 1 $d/bench_epi
  done
fi
(cd "$out" && tar czf logs.tgz logs)
step_at "summary"
grep -h "FAIL\|ok$" "$out/logs/example-check.txt" | sed 's/bias+gelu+residual //' | cut -c1-150
grep -h "^| [0-9]" "$out"/logs/bench-*.txt | awk -F"|" "{print \$2\"|\"\$3\"|\"\$4\"|\"\$5\"|\"\$7\"|\"\$8}" | sed 's/epilogue warps, staged/ew/'
grep -hE "Elapsed Cycles  |wavefronts|sectors|hmma" "$out"/logs/ncu-*.txt 2>/dev/null | head -12
