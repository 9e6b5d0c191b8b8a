#!/usr/bin/env bash
# The GPU steps of the kernel-parts rebuild (issue 27), in one device call each:
#   benches/parts_gpu.sh check KIT   correctness: `ptxkit selftest` (every registry check, the
#                                    planted hangs included), the epilogue example with its
#                                    timing against the plain GEMM, compute-sanitizer memcheck and
#                                    racecheck on the rebuilt kernels
#   benches/parts_gpu.sh final KIT   the merged build: `ptxkit selftest`, and ncu of the plain
#                                    GEMM beside the fused bias + GELU + residual and the residual
#                                    alone at 4096³ (new/ only)
#   benches/parts_gpu.sh time KIT    old and new builds alternating, each against its baseline in
#                                    the same process: the GEMM's seven bench shapes (cuBLAS), FP8
#                                    per-tensor (cuBLASLt) and block-scaled, the grouped GEMM, the
#                                    attention's d128 picks (bench `default` rows); then the fused
#                                    epilogues against the plain GEMM (bench gemm_epilogue)
#   benches/parts_gpu.sh staged KIT  the staged residual (HopperGemm::staged_input, new/ only):
#                                    both fused epilogue kernels at the edge shapes (stopping
#                                    there if they fail or hang), memcheck and racecheck, then
#                                    (unless QUICK is set) at 4096^3 and 8192^3 and the timing;
#                                    ncu of the plain, global-residual and staged-residual kernels
#                                    (L2 throughput too)
#   benches/parts_gpu.sh pingpong KIT  the ping-pong consumers (GemmConfig::pingpong, new/ only):
#                                    the GEMM's checks (its variants include ping-pong), both fused
#                                    epilogue kernels with either schedule, memcheck and racecheck,
#                                    the fused-epilogue timing, and ncu of the ping-pong kernels
# KIT holds new/ and old/ with xz-compressed binaries: ptxkit, gemm_hopper, gemm_epilogue (new
# only) and the bench executables bench-{gemm_fp8,gemm_fp8_block,gemm_grouped,attention} (and
# bench-gemm_epilogue, new only).
# Logs go to $OUT (one file per step) and a short summary to stdout.
set -u
what=$1
kit=$2
out=${OUT:-/tmp/parts-out}
mkdir -p "$out"
for f in "$kit"/*/*.xz; do xz -d -f "$f"; done
chmod +x "$kit"/*/*
N=$kit/new
O=$kit/old
. "$(dirname "$0")/gpu_steps.sh"
san() { compute-sanitizer --tool "$@" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL|check " | tail -6; }
case $what in
check)
  step selftest
  timeout 420 "$N/ptxkit" selftest >"$out/selftest.txt" 2>&1
  grep -E "FAIL|passed" "$out/selftest.txt"
  grep -E "gemm_epilogue|attention |gemm_debug|hang_" "$out/selftest.txt" | cut -c1-160
  step gemm_epilogue
  timeout 240 "$N/gemm_epilogue" >"$out/epilogue.txt" 2>&1
  cat "$out/epilogue.txt"
  step "memcheck gemm_epilogue --check"
  san memcheck timeout 120 "$N/gemm_epilogue" --check
  step "racecheck gemm_epilogue --check"
  san racecheck timeout 200 "$N/gemm_epilogue" --check
  step "memcheck + racecheck selftest gemm_epilogue"
  san memcheck timeout 120 "$N/ptxkit" selftest --only gemm_epilogue
  san racecheck timeout 200 "$N/ptxkit" selftest --only gemm_epilogue
  step "memcheck gemm_hopper --small"
  san memcheck timeout 120 "$N/gemm_hopper" --small
  step "memcheck the attention's d128 picks"
  export PTXKIT_ATTENTION_ONLY=attention_fwd_bf16_d128_overlap_n176s2_tmastore,attention_fwd_bf16_d128_n192s2_tmastore,attention_fwd_bf16_d128_causal_overlap_tmastore,attention_fwd_bf16_d128_causal_overlap_n176s2_tmastore,attention_fwd_bf16_d128_causal_n192s2_tmastore,attention_fwd_bf16_d128_persistent_l2
  san memcheck timeout 200 "$N/ptxkit" selftest --only attention
  step "racecheck the attention's 176-row overlap picks"
  export PTXKIT_ATTENTION_ONLY=attention_fwd_bf16_d128_overlap_n176s2_tmastore,attention_fwd_bf16_d128_causal_overlap_n176s2_tmastore
  san racecheck timeout 200 "$N/ptxkit" selftest --only attention
  unset PTXKIT_ATTENTION_ONLY
  step "memcheck the grouped GEMM"
  san memcheck timeout 200 "$N/ptxkit" selftest --only gemm_grouped
  ;;
final)
  step selftest
  timeout 420 "$N/ptxkit" selftest >"$out/selftest.txt" 2>&1
  grep -E "FAIL|passed" "$out/selftest.txt"
  step "ncu: the plain GEMM and the fused bias + GELU + residual at 4096^3"
  metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,launch__registers_per_thread
  for k in gemm_bf16_bf16_128x256 gemm_epi_bias_gelu_tanh_residual gemm_epi_residual; do
    GEMM_EPILOGUE_SIZES=4096 timeout 150 ncu --metrics "$metrics" -k "regex:$k" -c 1 \
      "$N/bench-gemm_epilogue" --bench >"$out/ncu-$k.txt" 2>&1
    grep -E "^  gemm_|duration|hmma|throughput|hit_rate|inst_executed|sectors|wavefronts|registers" "$out/ncu-$k.txt"
  done
  ;;
time)
  for run in 1 2; do
    for b in old new; do
      d=$kit/$b
      step "$b round $run"
      timeout 150 "$d/gemm_hopper" >"$out/gemm-$b-$run.txt" 2>&1
      echo "gemm $b $run: $(grep -c ' ok' "$out/gemm-$b-$run.txt") ok, $(grep -c FAIL "$out/gemm-$b-$run.txt") FAIL"
      grep '^| [0-9]' "$out/gemm-$b-$run.txt"
      FP8_BLOCK_CHECKS=0 FP8_BLOCK_SHAPES=4096x4096x4096,8192x8192x8192 timeout 100 \
        "$d/bench-gemm_fp8_block" --bench >"$out/fp8block-$b-$run.txt" 2>&1
      echo "fp8 block $b $run:"; grep -E '^\| (4096|8192)x' "$out/fp8block-$b-$run.txt"
      GROUPED_ONLY=8x2048,8x4096 timeout 100 "$d/bench-gemm_grouped" --bench >"$out/grouped-$b-$run.txt" 2>&1
      echo "grouped $b $run:"; grep -E '^\| 8x' "$out/grouped-$b-$run.txt" | head -4
      PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=3 timeout 120 \
        "$d/bench-attention" --bench >"$out/attention-$b-$run.txt" 2>&1
      echo "attention $b $run:"; grep -E '^\| 128 ' "$out/attention-$b-$run.txt"
    done
  done
  for b in old new; do
    step "fp8 per-tensor $b"
    timeout 150 "$kit/$b/bench-gemm_fp8" --bench >"$out/fp8-$b.txt" 2>&1
    grep -E '^\| (4096|8192)x(4096|8192)x' "$out/fp8-$b.txt"
  done
  step "fused epilogues"
  timeout 150 "$N/bench-gemm_epilogue" --bench >"$out/epilogue-bench.txt" 2>&1
  grep -E '^\| [0-9]' "$out/epilogue-bench.txt"
  ;;
staged)
  step "gemm_epilogue --check"
  if ! timeout 60 "$N/gemm_epilogue" --check >"$out/epilogue-check.txt" 2>&1; then
    cut -c1-160 "$out/epilogue-check.txt"; echo "the edge checks failed or hung: stopping"; exit 1
  fi
  cut -c1-160 "$out/epilogue-check.txt"
  step "memcheck + racecheck gemm_epilogue --check"
  san memcheck timeout 100 "$N/gemm_epilogue" --check | tee "$out/memcheck.txt"
  san racecheck timeout 150 "$N/gemm_epilogue" --check | tee "$out/racecheck.txt"
  if [ -z "${QUICK:-}" ]; then
    step gemm_epilogue
    timeout 150 "$N/gemm_epilogue" >"$out/epilogue.txt" 2>&1
    cut -c1-160 "$out/epilogue.txt"
    step "fused epilogues"
    timeout 200 "$N/bench-gemm_epilogue" --bench >"$out/epilogue-bench.txt" 2>&1
    grep -E '^\| [0-9]' "$out/epilogue-bench.txt"
  fi
  step "ncu at 4096^3"
  metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum
  for k in gemm_epi_none gemm_epi_residual_staged gemm_epi_bias_gelu_tanh_residual gemm_epi_bias_gelu_tanh_residual_staged gemm_epi_none_pingpong gemm_epi_bias_gelu_tanh_residual_pingpong_staged; do
    GEMM_EPILOGUE_SIZES=4096 timeout 60 ncu --metrics "$metrics" -k "regex:^$k\$" -c 1 \
      "$N/bench-gemm_epilogue" --bench >"$out/ncu-$k.txt" 2>&1
    echo "$k: $(grep -E 'duration|hmma|hit_rate|lts__throughput|dram__|inst_executed' "$out/ncu-$k.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
  done
  ;;
pingpong)
  step "gemm_hopper --check"
  timeout 150 "$N/gemm_hopper" --check >"$out/gemm-check.txt" 2>&1
  echo "gemm check: $(grep -c ' ok' "$out/gemm-check.txt") ok, $(grep -c FAIL "$out/gemm-check.txt") FAIL"
  grep -E "pingpong|FAIL" "$out/gemm-check.txt" | cut -c1-150 | head -12
  step gemm_epilogue
  timeout 240 "$N/gemm_epilogue" >"$out/epilogue.txt" 2>&1
  cut -c1-160 "$out/epilogue.txt"
  step "memcheck + racecheck gemm_epilogue --check"
  san memcheck timeout 150 "$N/gemm_epilogue" --check
  san racecheck timeout 240 "$N/gemm_epilogue" --check
  step "fused epilogues"
  timeout 200 "$N/bench-gemm_epilogue" --bench >"$out/epilogue-bench.txt" 2>&1
  grep -E '^\| [0-9]' "$out/epilogue-bench.txt" | grep -E '\| 3 \||\| 1 \|'
  step "ncu at 4096^3"
  metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread
  for k in gemm_epi_none_pingpong gemm_epi_bias_gelu_tanh_residual_pingpong gemm_epi_bias_gelu_tanh_residual_pingpong_noprefetch; do
    GEMM_EPILOGUE_SIZES=4096 timeout 100 ncu --metrics "$metrics" -k "regex:^$k\$" -c 1 \
      "$N/bench-gemm_epilogue" --bench >"$out/ncu-$k.txt" 2>&1
    echo "$k: $(grep -E 'duration|hmma|hit_rate|dram__|registers' "$out/ncu-$k.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
  done
  ;;
esac
