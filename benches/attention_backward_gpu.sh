#!/usr/bin/env bash
# The attention backward's GPU steps (issue 30), in one device call:
#   benches/attention_backward_gpu.sh KIT [memcheck]
# KIT holds the release `ptxkit`, the bench executable `bench-attention_backward`,
# attention_torch.py, rows_torch.py and torch_timing.py. Steps: `ptxkit selftest --only
# attention_backward` (every gradient's error shown), with `memcheck` compute-sanitizer memcheck
# of its bf16 d128 causal cases, the Rust bench, torch's SDPA backward (flash, cuDNN) on the
# same shapes. Logs go to $OUT, a summary to stdout.
set -u
kit=$1
out=${OUT:-/tmp/attention-backward-out}
mkdir -p "$out"
chmod +x "$kit"/ptxkit "$kit"/bench-attention_backward
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
step "selftest attention_backward"
PTXKIT_ATTENTION_PROGRESS=1 timeout 150 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
grep -vE "^(case|  )" "$out/selftest.txt" | tail -5
grep -E "^(case|  )" "$out/selftest.txt" | tail -40
if [ "${2:-}" = memcheck ]; then
  step "memcheck bf16 d128 causal"
  PTXKIT_ATTENTION_MATCH=bf16_d128_causal PTXKIT_ATTENTION_LIMIT_S=60 timeout 150 \
    compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
  grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
fi
# The bench runs whatever the check says (a failed case is in the log above).
step "bench attention_backward"
timeout 200 "$kit/bench-attention_backward" --bench gpu-only >"$out/bench.txt" 2>&1
grep -E "^\||device|stopped" "$out/bench.txt"
step "torch SDPA backward"
(cd "$kit" && timeout 200 python3 attention_torch.py --backward) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
step done
