#!/usr/bin/env bash
# Lead's final call (session 16): merged main's full selftest, then the attention backward at the
# defaults (d64, d128, d256) around torch 2.11's SDPA backward in the same call.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/final-out}
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step selftest
timeout 250 "$kit/ptxkit" selftest > "$out/selftest.txt" 2>&1; echo "rc $?"
grep -E "FAIL|passed|failed" "$out/selftest.txt" | tail -5
grep -E "^(PASS|FAIL)" "$out/selftest.txt" | cut -c1-150 | grep -E "FAIL|attention_backward|decode|gemm_epilogue|attention |gemm "
step "bench backward d64 d128 d256"
PTXKIT_ATTENTION_SHAPE=64:,128:,256: PTXKIT_ATTENTION_VARIANT=bulk timeout 70 \
  "$kit/bench-attention_backward" --bench gpu-only > "$out/bwd-bench.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bwd-bench.txt"
step "torch SDPA backward d64 d128 d256"
(cd "$kit" && timeout 60 python3 attention_torch.py --backward --d64 --d128 --d256) > "$out/bwd-torch.txt" 2>&1
grep -E "^\| [0-9]|rror" "$out/bwd-torch.txt"
step done
