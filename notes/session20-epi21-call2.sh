#!/usr/bin/env bash
# (Session 21: its setup, bench steps and summary now call benches/gpu_steps.sh's epilogue_* functions; the same steps as ran.)
# (Built from branch epi21 at c9109d6: EpiloguePace with MainLoop(75) the default there, "unpaced" = Off; the probes on top of MainLoop(75).)
# epi21, session 20, device call 2: the epilogue warps paced to a share of the main loop
# (EpiloguePace::MainLoop, the new default at 75 %) against unpaced, fixed pauses and other
# shares, at 4096^3, 4096x4096x2048 (half the K: the pass barely fits) and 8192^3, each fused
# kernel timed beside the library's plain GEMM (launches interleaved); every non-probe schedule's
# bits against the default's on a poisoned C; the probes of the TMA traffic again; the example's
# check (the default, paced, at the edge shapes); ncu. Run as `bash .gpu-epi21/call.sh`.
set -u
source benches/gpu_steps.sh
epilogue_call_start .gpu-epi21 /tmp/epi21-out 170 100
D="epilogue warps, staged"
P="$D, probe: no input load;$D, probe: input loaded twice;$D, probe: stores twice"
S="$D;$D, unpaced;$D, paced 800 ns;$D, paced 1200 ns;$D, paced to 60 %;$D, paced to 90 %;$P"
epilogue_bench "bench 4096" 60 4096 6 "$S"
epilogue_bench "bench 4096x4096x2048" 25 4096x4096x2048 4 "$D;$D, unpaced;$D, paced 800 ns;$D, paced to 90 %"
epilogue_bench "bench 8192" 30 8192 3 "$D;$D, unpaced;$D, paced 800 ns;$D, paced to 60 %;$D, paced to 90 %"
kill $smi 2>/dev/null
step_at "example --check"
run_within example-check 25 $d/example_epi --check
M=gpu__time_duration.sum,gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes_read.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
epilogue_ncu "$M" "$D;$D, unpaced;$D, probe: no input load;$D, probe: stores twice" 'gemm_bf16_bf16_128x256|bias_(relu|gelu_tanh)_residual_epiwarps_staged(_loop75)?(_probe_noload|_probe_store2)?$'
(cd "$out" && tar czf logs.tgz logs)
step_at "summary"
epilogue_ncu_summary
grep -h "FAIL\|ok$" "$out/logs/example-check.txt" | grep -v "cooperative\|ping-pong" | sed 's/bias+gelu+residual //' | cut -c1-110
grep -h "| bits |" "$out"/logs/bench-*.txt | sed 's/epilogue warps, staged/ew/; s/ differ from "ew"//' | cut -c1-120
epilogue_rounds "$out"/logs/bench-*.txt
