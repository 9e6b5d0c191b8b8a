#!/usr/bin/env bash
# bwd17's one GPU call (issue 30, attention backward at d128): the selftest of the `_sahead` and
# `_pahead` configurations (the next trip's Sᵀ, or Sᵀ and dPᵀ, issued at the end of each trip), the
# bench of the default, `dvlate`, `sahead` and `pahead` at d128 in two rounds around torch 2.11's
# SDPA backward (d128, d256), d256 causal at the default, compute-sanitizer memcheck of a few
# `_sahead`/`_pahead` cases, ncu of the d128 main kernel (default, `_sahead`, `_pahead`) at 4x4096
# non-causal.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd17-out}
mkdir -p "$out"
chmod +x "$kit/ptxkit" "$kit/bench-attention_backward"
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "selftest attention_backward, _sahead _pahead"
PTXKIT_ATTENTION_MATCH=_sahead,_pahead PTXKIT_ATTENTION_PROGRESS=1 timeout 28 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
echo "rc $?"
grep -E "differ|FAIL|error" "$out/selftest.txt" | head -5
grep -E "^(PASS|FAIL)" "$out/selftest.txt" | tail -2
step "bench d128 round 1"
PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=bulk,dvlate,sahead,pahead timeout 38 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench1.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bench1.txt"
step "torch SDPA backward d128 d256"
(cd "$kit" && timeout 42 python3 attention_torch.py --backward --d128 --d256) >"$out/torch.txt" 2>&1
grep -E "^\| [0-9]|rror" "$out/torch.txt"
step "bench d128 round 2, d256 causal"
PTXKIT_ATTENTION_SHAPE=128:,256:true PTXKIT_ATTENTION_VARIANT=bulk,dvlate,sahead,pahead timeout 42 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench2.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bench2.txt"
step "memcheck bf16_d128_causal_varlen_sahead, bf16_d128_sahead_det, bf16_d128_causal_pahead"
PTXKIT_ATTENTION_MATCH=bf16_d128_causal_varlen_sahead,bf16_d128_sahead_det,bf16_d128_causal_pahead PTXKIT_ATTENTION_LIMIT_S=15 timeout 20 \
  compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|^PASS|^FAIL" "$out/memcheck.txt" | tail -4
m=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum
m=$m,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active
for s in wait long_scoreboard short_scoreboard barrier mio_throttle math_pipe_throttle dispatch_stall selected not_selected; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in bulk sahead pahead; do
  step "ncu d128 4x4096 non-causal $v"
  PTXKIT_ATTENTION_SHAPE=128:false:4096 PTXKIT_ATTENTION_VARIANT=$v timeout 15 \
    ncu --clock-control none --metrics $m -k "regex:attention_bwd_bf16_d128" -c 1 "$kit/bench-attention_backward" --bench gpu-only \
    >"$out/ncu-$v.txt" 2>&1
  grep -E "^  attention_bwd|duration|pct|ratio|inst_exec|registers" "$out/ncu-$v.txt"
done
step done
