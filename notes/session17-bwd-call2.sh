#!/usr/bin/env bash
# bwd17's follow-up (not run: the helper's allowance was one call; about 90 s): what call 1 left out.
# The new default's d128 configurations the call did not run on the GPU (f16 packed, bf16 packed
# deterministic), then ncu of the d128 main kernel itself (call 1's filter also matched the
# preprocess, which launches first): the default (the scores ahead) against `intrip` (the order
# before) at 4x4096 non-causal. Binaries of branch bwd17 in the folder beside it (ptxkit,
# bench-attention_backward), as in notes/session17-bwd-call1.sh.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd17-out2}
mkdir -p "$out"
chmod +x "$kit/ptxkit" "$kit/bench-attention_backward"
step() { echo "== $1 ($(date +%T))"; }
step "selftest attention_backward, every d128 configuration"
PTXKIT_ATTENTION_MATCH=_d128 timeout 60 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
echo "rc $?"
grep -E "^(PASS|FAIL)" "$out/selftest.txt" | tail -2
m=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum
m=$m,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active
for s in wait long_scoreboard short_scoreboard barrier mio_throttle math_pipe_throttle dispatch_stall selected not_selected; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in bulk intrip; do
  step "ncu d128 4x4096 non-causal main kernel, $v"
  PTXKIT_ATTENTION_SHAPE=128:false:4096 PTXKIT_ATTENTION_VARIANT=$v timeout 15 \
    ncu --clock-control none --metrics $m -k "regex:^attention_bwd_bf16_d128(_intrip)?$" -c 1 \
    "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu-$v.txt" 2>&1
  grep -E "^  attention_bwd|duration|pct|ratio|inst_exec|registers" "$out/ncu-$v.txt"
done
step done
