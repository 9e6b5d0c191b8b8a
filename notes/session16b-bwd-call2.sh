#!/usr/bin/env bash
# bwd16b's follow-up (not run: the helper's allowance was one call; about 60 s): what call 1
# left out. torch's SDPA backward at d64 and d128 (call 1 lacked rows_torch.py), the default's
# bench at d64 and d128 again (same-call ratios), the f16 configurations of the selftest (call 1's
# 40 s timeout cut it after 120 bf16 cases and 6 f16 ones), ncu of the d64 preprocess and
# convert before and after.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd16b-out}
mkdir -p "$out"
chmod +x "$kit/ptxkit" "$kit/bench-attention_backward" "$kit/bench-before"
step() { echo "== $1 ($(date +%T))"; }
step "torch SDPA backward d64 d128"
(cd "$kit" && timeout 30 python3 attention_torch.py --backward --d64 --d128) >"$out/torch.txt" 2>&1
grep -E "^\| [0-9]|rror" "$out/torch.txt"
step "bench d64 d128"
PTXKIT_ATTENTION_SHAPE=64:,128: PTXKIT_ATTENTION_VARIANT=bulk timeout 30 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bench.txt"
step "selftest attention_backward, f16"
PTXKIT_ATTENTION_MATCH=attention_bwd_f16 timeout 25 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest-f16.txt" 2>&1
echo "rc $?"
grep -E "^(PASS|FAIL)" "$out/selftest-f16.txt" | tail -2
step "ncu d64 preprocess, convert: before, after"
m=gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in before after; do
  bin="$kit/bench-attention_backward"; [ $v = before ] && bin="$kit/bench-before"
  PTXKIT_ATTENTION_SHAPE=64:false:4096 PTXKIT_ATTENTION_VARIANT=bulk timeout 12 \
    ncu --clock-control none --metrics $m -k "regex:preprocess|convert" -c 2 "$bin" --bench gpu-only \
    >"$out/ncu-d64-$v.txt" 2>&1
  grep -E "^  attention_bwd|duration|dram__" "$out/ncu-d64-$v.txt"
done
step done
