#!/usr/bin/env bash
# bwd18's one GPU call (issue 30, d128 attention backward): selftest of the `_pin` configurations
# (Pᵀ's exponentials kept ahead of the wait for dPᵀ; `_dvf` with dV before dSᵀ's proxy fence),
# the d128 bench of the default (`bulk`), `pin` and `pinf` in two rounds around torch's SDPA
# backward (cuDNN) at d128, ncu of the d128 main kernel (default against `_pin_dvf`) at 4x4096
# non-causal, a short memcheck of two `_pin_dvf` configurations.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd18-out}
mkdir -p "$out"
step() { echo "== $1 ($(date +%T))"; }
(cd "$kit" && xz -d -f -T4 ptxkit.xz bench-attention_backward.xz && chmod +x ptxkit bench-attention_backward)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "selftest attention_backward _pin"
PTXKIT_ATTENTION_MATCH=_pin PTXKIT_ATTENTION_PROGRESS=1 timeout 40 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
echo "rc $?"
grep -E "differ|FAIL|error" "$out/selftest.txt" | head -5
grep -E "^(PASS|FAIL)" "$out/selftest.txt" | tail -2
step "bench d128 round 1"
PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=bulk,pin,pinf timeout 40 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench1.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bench1.txt"
step "torch SDPA backward d128"
(cd "$kit" && timeout 35 python3 attention_torch.py --backward --d128) >"$out/torch.txt" 2>&1
grep -E "^\| [0-9]|rror" "$out/torch.txt"
step "bench d128 round 2"
PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=bulk,pin,pinf timeout 40 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench2.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bench2.txt"
m=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum
m=$m,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active
for s in wait long_scoreboard short_scoreboard barrier mio_throttle math_pipe_throttle dispatch_stall selected not_selected; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in bulk pinf; do
  step "ncu d128 4x4096 non-causal main kernel, $v"
  PTXKIT_ATTENTION_SHAPE=128:false:4096 PTXKIT_ATTENTION_VARIANT=$v timeout 15 \
    ncu --clock-control none --metrics $m -k "regex:^attention_bwd_bf16_d128(_pin_dvf)?$" -c 1 \
    "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu-$v.txt" 2>&1
  grep -E "^  attention_bwd|duration|pct|ratio|inst_exec|registers" "$out/ncu-$v.txt"
done
step "memcheck bf16_d128_causal_varlen_pin_dvf, bf16_d128_pin_dvf_det"
PTXKIT_ATTENTION_MATCH=bf16_d128_causal_varlen_pin_dvf,bf16_d128_pin_dvf_det PTXKIT_ATTENTION_LIMIT_S=12 timeout 18 \
  compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|^PASS|^FAIL" "$out/memcheck.txt" | tail -4
step done
