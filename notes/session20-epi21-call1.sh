#!/usr/bin/env bash
# (Session 21: its setup, bench steps and summary now call benches/gpu_steps.sh's epilogue_* functions; the same steps as ran.)
# (Built from branch epi21 before c9109d6: GemmConfig-free switches pace_ns, vectors_to_l1 and the probes; the L1 prefetch was taken out after this call. Kernel names: _pace{ns}, _l1vec, _probe_*.)
# epi21, session 20, device call 1: the epilogue warps paced, the epilogue's vectors prefetched
# into L1, and probes of the epilogue warps' TMA traffic (benches/gemm_epilogue.rs schedules),
# each fused kernel timed beside the library's plain GEMM (launches interleaved); the bench's
# bit comparison of every non-probe schedule against the default on a poisoned C; the example's
# check; ncu of plain, the default and the L1 variants. Run as `bash .gpu-epi21/call.sh`.
set -u
source benches/gpu_steps.sh
epilogue_call_start .gpu-epi21 /tmp/epi21-out 168 250
D="epilogue warps, staged"
S="$D;$D, paced 400;$D, paced 800;$D, vectors in L1;$D, vectors in L1, paced 400;$D, probe: no input load;$D, probe: input loaded twice;$D, probe: stores twice"
epilogue_bench "bench 4096" 75 4096 5 "$S"
step_at "example --check"
run_within example-check 30 $d/example_epi --check
S8="$D;$D, paced 400;$D, vectors in L1;$D, vectors in L1, paced 400"
epilogue_bench "bench 8192" 30 8192 3 "$S8"
kill $smi 2>/dev/null
M=gpu__time_duration.sum,gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct
epilogue_ncu "$M" "$D;$D, vectors in L1;$D, vectors in L1, paced 400" 'gemm_bf16_bf16_128x256|bias_(relu|gelu_tanh)_residual_epiwarps_staged(_l1vec|_pace400_l1vec)?$'
(cd "$out" && tar czf logs.tgz logs)
step_at "summary"
epilogue_ncu_summary
grep -h "FAIL\|ok$" "$out/logs/example-check.txt" | sed 's/bias+gelu+residual //' | cut -c1-110
grep -h "| bits |" "$out"/logs/bench-*.txt | sed 's/epilogue warps, staged/ew/' | cut -c1-150
epilogue_rounds "$out"/logs/bench-4096.txt "$out"/logs/bench-8192.txt
