#!/usr/bin/env bash
# (Built from branch epi21 before c9109d6: GemmConfig-free switches pace_ns, vectors_to_l1 and the probes; the L1 prefetch was taken out after this call. Kernel names: _pace{ns}, _l1vec, _probe_*.)
# epi21, session 20, device call 1: the epilogue warps paced, the epilogue's vectors prefetched
# into L1, and probes of the epilogue warps' TMA traffic (benches/gemm_epilogue.rs schedules),
# each fused kernel timed beside the library's plain GEMM (launches interleaved); the bench's
# bit comparison of every non-probe schedule against the default on a poisoned C; the example's
# check; ncu of plain, the default and the L1 variants. Run as `bash .gpu-epi21/call.sh`.
set -u
d=.gpu-epi21
source benches/gpu_steps.sh
out=${OUT:-/tmp/epi21-out}; mkdir -p "$out"
deadline_start 168
export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
xz -d -k -f $d/bench_epi.xz $d/example_epi.xz && chmod +x $d/bench_epi $d/example_epi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$out/logs/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 250 > "$out/logs/clocks.csv" 2>&1 &
smi=$!
D="epilogue warps, staged"
S="$D;$D, paced 400;$D, paced 800;$D, vectors in L1;$D, vectors in L1, paced 400;$D, probe: no input load;$D, probe: input loaded twice;$D, probe: stores twice"
step_at "bench 4096"
run_within bench-4096 75 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=5 GEMM_EPILOGUE_SCHEDULES="$S" $d/bench_epi
step_at "example --check"
run_within example-check 30 $d/example_epi --check
S8="$D;$D, paced 400;$D, vectors in L1;$D, vectors in L1, paced 400"
step_at "bench 8192"
run_within bench-8192 30 env GEMM_EPILOGUE_SIZES=8192 GEMM_EPILOGUE_ROUNDS=3 GEMM_EPILOGUE_SCHEDULES="$S8" $d/bench_epi
kill $smi 2>/dev/null
step_at "ncu"
if command -v ncu >/dev/null; then
  M=gpu__time_duration.sum,gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct
  run_within ncu 40 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=1 \
    GEMM_EPILOGUE_SCHEDULES="$D;$D, vectors in L1;$D, vectors in L1, paced 400" \
    ncu --metrics "$M" -k 'regex:gemm_bf16_bf16_128x256|bias_(relu|gelu_tanh)_residual_epiwarps_staged(_l1vec|_pace400_l1vec)?$' -c 7 $d/bench_epi
fi
(cd "$out" && tar czf logs.tgz logs)
step_at "summary"
grep -hE "^  [a-z_]+|gpu__time|cycles_active|hmma|wavefronts" "$out"/logs/ncu.txt 2>/dev/null | sed -E "s/ +/ /g" | cut -c1-90 | head -60
grep -h "FAIL\|ok$" "$out/logs/example-check.txt" | sed 's/bias+gelu+residual //' | cut -c1-110
grep -h "| bits |" "$out"/logs/bench-*.txt | sed 's/epilogue warps, staged/ew/' | cut -c1-150
for f in "$out"/logs/bench-4096.txt "$out"/logs/bench-8192.txt; do
  echo "-- $f (ratio by round)"
  grep -h "^| [0-9]" "$f" | grep -v '| bits |' | awk -F'|' '{gsub(/ +$/,"",$3); gsub(/ +$/,"",$4); k=$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sed 's/ epilogue warps, staged/ew/' | sort
done
