#!/usr/bin/env bash
# The attention backward's GPU steps (issue 30), in one device call:
#   benches/attention_backward_gpu.sh KIT [memcheck] [ncu] [HEAD_DIM] [VARIANT]
# KIT holds the release `ptxkit`, the bench executable `bench-attention_backward`,
# attention_torch.py, rows_torch.py and torch_timing.py. Steps: `ptxkit selftest --only
# attention_backward` (every gradient's error shown), the Rust bench, torch's SDPA backward
# (flash, cuDNN) on the same shapes, with `memcheck` compute-sanitizer memcheck of the check's
# cases the names of PTXKIT_MEMCHECK_MATCH take (default the bf16 d128 causal packed ones, bulk
# and deterministic), with `ncu` one launch of the main kernel (VARIANT, default bulk; d128 or
# HEAD_DIM, 2x8192, not causal) profiled: the tensor pipe, shared-memory wavefronts and bank
# conflicts, and the warps' stall reasons per issued instruction.
# PTXKIT_ATTENTION_VARIANT (bulk,m64,m128,m80,dvlate,partials,red,det,pre) limits the bench's variants (the ncu step's
# kernel is the variant's). Logs go to $OUT, a summary to stdout.
set -u
. "$(dirname "$0")/gpu_steps.sh"
kit_start "$1" /tmp/attention-backward-out bench-attention_backward
step "selftest attention_backward"
PTXKIT_ATTENTION_PROGRESS=1 timeout 150 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
grep -vE "^(case|  )" "$out/selftest.txt" | tail -5
grep -E "^case|differ" "$out/selftest.txt" | tail -45
# The bench runs whatever the check says (a failed case is in the log above).
step "bench attention_backward"
timeout 200 "$kit/bench-attention_backward" --bench gpu-only >"$out/bench.txt" 2>&1
grep -E "^\||device|stopped" "$out/bench.txt"
step "torch SDPA backward"
# PTXKIT_TORCH_ONLY (--d64, --d128, --d256) keeps one head dim of torch's.
(cd "$kit" && timeout 200 python3 attention_torch.py --backward ${PTXKIT_TORCH_ONLY:-}) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
if [ "${2:-}" = memcheck ]; then
  match=${PTXKIT_MEMCHECK_MATCH:-bf16_d128_causal_varlen}
  step "memcheck $match"
  PTXKIT_ATTENTION_MATCH=$match PTXKIT_ATTENTION_LIMIT_S=60 timeout 100 \
    compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
  grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
fi
if [ "${3:-}" = ncu ]; then
  d=${4:-128}
  variant=${5:-bulk}
  case $variant in partials | red | det | m128 | m80 | dvlate) suffix=_$variant ;; *) suffix= ;; esac
  step "ncu: the main kernel, $variant dQ, d$d, 2x8192"
  metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,launch__registers_per_thread
  for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle membar sleeping dispatch_stall no_instruction branch_resolving selected not_selected; do
    metrics=$metrics,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
  done
  PTXKIT_ATTENTION_SHAPE=$d:false:8192 PTXKIT_ATTENTION_VARIANT=$variant timeout 90 \
    ncu --section WarpStateStats --metrics "$metrics" -k "regex:attention_bwd_bf16_d$d$suffix$" -c 1 \
    "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu.txt" 2>&1
  grep -E "attention_bwd|duration|hmma|throughput|hit_rate|inst_executed|wavefronts|conflicts|registers|Stall|stall|Warp Cycles|Issued" "$out/ncu.txt" | head -50
fi
step done
