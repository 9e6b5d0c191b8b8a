#!/usr/bin/env bash
# bwd15b's one GPU call: selftest attention_backward (all), bench d128 (bulk, m80) around torch's
# SDPA backward at d128, memcheck of m80 kernels, ncu of the m80 kernel (shared-store conflicts),
# a second bench round if time is left.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd15b-out}
mkdir -p "$out"
chmod +x "$kit/ptxkit" "$kit/bench-attention_backward"
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
step "selftest attention_backward"
PTXKIT_ATTENTION_PROGRESS=1 timeout 120 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
echo "rc $?"
grep -vE "^(case|  )" "$out/selftest.txt" | grep -E "PASS|FAIL|error|differ" | tail -5
export PTXKIT_ATTENTION_SHAPE=128:
export PTXKIT_ATTENTION_VARIANT=bulk,m80
step "bench round 1"
timeout 25 "$kit/bench-attention_backward" --bench gpu-only >"$out/bench1.txt" 2>&1
grep -E "^\||stopped" "$out/bench1.txt"
step "torch SDPA backward d128"
(cd "$kit" && timeout 30 python3 attention_torch.py --backward --d128) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
unset PTXKIT_ATTENTION_SHAPE PTXKIT_ATTENTION_VARIANT
step "memcheck bf16_d128_varlen_m80, bf16_d128_causal_m80"
PTXKIT_ATTENTION_MATCH=bf16_d128_varlen_m80,bf16_d128_causal_m80 PTXKIT_ATTENTION_LIMIT_S=25 timeout 40 \
  compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
step "ncu 128:false:8192 m80"
metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,launch__registers_per_thread
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle dispatch_stall selected; do
  metrics=$metrics,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
PTXKIT_ATTENTION_SHAPE=128:false:8192 PTXKIT_ATTENTION_VARIANT=m80 timeout 30 \
  ncu --section WarpStateStats --metrics "$metrics" -k "regex:attention_bwd_bf16_d128_m80$" -c 1 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu.txt" 2>&1
grep -E "attention_bwd|duration|hmma|throughput|inst_executed|wavefronts|conflicts|registers|stall" "$out/ncu.txt" | head -30
step "bench round 2"
PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=bulk,m80 timeout 25 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench2.txt" 2>&1
grep -E "^\||stopped" "$out/bench2.txt"
step done
