#!/usr/bin/env bash
# (Built from branch epi21 at c9109d6: EpiloguePace with MainLoop(75) the default there, "unpaced" = Off; the probes on top of MainLoop(75).)
# epi21, session 20, device call 2: the epilogue warps paced to a share of the main loop
# (EpiloguePace::MainLoop, the new default at 75 %) against unpaced, fixed pauses and other
# shares, at 4096^3, 4096x4096x2048 (half the K: the pass barely fits) and 8192^3, each fused
# kernel timed beside the library's plain GEMM (launches interleaved); every non-probe schedule's
# bits against the default's on a poisoned C; the probes of the TMA traffic again; the example's
# check (the default, paced, at the edge shapes); ncu. Run as `bash .gpu-epi21/call.sh`.
set -u
d=.gpu-epi21
source benches/gpu_steps.sh
out=${OUT:-/tmp/epi21-out}; mkdir -p "$out"
deadline_start 170
export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
xz -d -k -f $d/bench_epi.xz $d/example_epi.xz && chmod +x $d/bench_epi $d/example_epi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$out/logs/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 > "$out/logs/clocks.csv" 2>&1 &
smi=$!
D="epilogue warps, staged"
P="$D, probe: no input load;$D, probe: input loaded twice;$D, probe: stores twice"
S="$D;$D, unpaced;$D, paced 800 ns;$D, paced 1200 ns;$D, paced to 60 %;$D, paced to 90 %;$P"
step_at "bench 4096"
run_within bench-4096 60 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=6 GEMM_EPILOGUE_SCHEDULES="$S" $d/bench_epi
step_at "bench 4096x4096x2048"
run_within bench-4096x4096x2048 25 env GEMM_EPILOGUE_SIZES=4096x4096x2048 GEMM_EPILOGUE_ROUNDS=4 GEMM_EPILOGUE_SCHEDULES="$D;$D, unpaced;$D, paced 800 ns;$D, paced to 90 %" $d/bench_epi
step_at "bench 8192"
run_within bench-8192 30 env GEMM_EPILOGUE_SIZES=8192 GEMM_EPILOGUE_ROUNDS=3 GEMM_EPILOGUE_SCHEDULES="$D;$D, unpaced;$D, paced 800 ns;$D, paced to 60 %;$D, paced to 90 %" $d/bench_epi
kill $smi 2>/dev/null
step_at "example --check"
run_within example-check 25 $d/example_epi --check
step_at "ncu"
if command -v ncu >/dev/null; then
  M=gpu__time_duration.sum,gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes_read.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  run_within ncu 40 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=1 \
    GEMM_EPILOGUE_SCHEDULES="$D;$D, unpaced;$D, probe: no input load;$D, probe: stores twice" \
    ncu --metrics "$M" -k 'regex:gemm_bf16_bf16_128x256|bias_(relu|gelu_tanh)_residual_epiwarps_staged(_loop75)?(_probe_noload|_probe_store2)?$' -c 7 $d/bench_epi
fi
(cd "$out" && tar czf logs.tgz logs)
step_at "summary"
grep -hE "^  [a-z_]+|gpu__time|cycles_active|hmma|wavefronts" "$out"/logs/ncu.txt 2>/dev/null | sed -E "s/ +/ /g" | cut -c1-90 | head -60
grep -h "FAIL\|ok$" "$out/logs/example-check.txt" | grep -v "cooperative\|ping-pong" | sed 's/bias+gelu+residual //' | cut -c1-110
grep -h "| bits |" "$out"/logs/bench-*.txt | sed 's/epilogue warps, staged/ew/; s/ differ from "ew"//' | cut -c1-120
for f in "$out"/logs/bench-*.txt; do
  echo "-- $f (ratio by round)"
  grep -h "^| [0-9]" "$f" | grep -v '| bits |' | awk -F'|' '{gsub(/ +$/,"",$3); gsub(/ +$/,"",$4); k=$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sed 's/ epilogue warps, staged/ew/' | sort
done
