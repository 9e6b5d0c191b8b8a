#!/usr/bin/env bash
# (Session 21: its setup, bench steps and summary now call benches/gpu_steps.sh's epilogue_* functions; the same steps as ran, but for the driver's JIT cache now kept in /tmp.)
# epi20, session 19, the one device call: the epilogue warps storing C from registers
# (GemmConfig::epilogue_global_store) against the default (stmatrix back + TMA store), each fused
# kernel timed beside the library's plain GEMM (launches interleaved), rounds alternating.
# Run from the session checkout as `bash .gpu-epi20/call.sh` (carry .gpu-epi20).
set -u
source benches/gpu_steps.sh
epilogue_call_start .gpu-epi20 /tmp/epi20-out 140 250
step_at "example --check (edges, 3000x3000x200: handed tiles)"
run_within example-check 40 $d/example_epi --check
S="epilogue warps, staged;epilogue warps, staged, global store"
epilogue_bench "bench 4096" 45 4096 6 "$S"
epilogue_bench "bench 8192" 40 8192 3 "$S"
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
