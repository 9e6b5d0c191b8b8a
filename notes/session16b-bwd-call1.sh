#!/usr/bin/env bash
# bwd16b's one GPU call (120 s): the default's bench at d64 and d128 around torch's SDPA backward
# at d64 and d128; ncu (--clock-control none) of the preprocess and convert kernels before
# (bench-before: main's kernels, a warp per row) and after (4 rows a warp) at 4x4096, d128 and
# d64; selftest attention_backward (every configuration); memcheck of the changed kernels.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd16b-out}
mkdir -p "$out"
chmod +x "$kit/ptxkit" "$kit/bench-attention_backward" "$kit/bench-before"
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
step "bench d64 d128"
PTXKIT_ATTENTION_SHAPE=64:,128: PTXKIT_ATTENTION_VARIANT=bulk timeout 20 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/bench1.txt" 2>&1
grep -E "^\| [0-9]|stopped|rror" "$out/bench1.txt"
step "torch SDPA backward d64 d128"
(cd "$kit" && timeout 30 python3 attention_torch.py --backward --d64 --d128) >"$out/torch.txt" 2>&1
grep -E "^\| [0-9]|rror" "$out/torch.txt"
step "ncu preprocess, convert: before, after"
m=gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in before after; do
  bin="$kit/bench-attention_backward"; [ $v = before ] && bin="$kit/bench-before"
  PTXKIT_ATTENTION_SHAPE=128:false:4096,64:false:4096 PTXKIT_ATTENTION_VARIANT=bulk timeout 14 \
    ncu --clock-control none --metrics $m -k "regex:preprocess|convert" -c 4 "$bin" --bench gpu-only \
    >"$out/ncu-$v.txt" 2>&1
  grep -E "^  attention_bwd|duration|dram__" "$out/ncu-$v.txt"
done
step "selftest attention_backward"
PTXKIT_ATTENTION_PROGRESS=1 timeout 40 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
echo "rc $?"
grep -E "differ|FAIL|error" "$out/selftest.txt" | head -5
grep -E "^(PASS|FAIL)" "$out/selftest.txt" | tail -2
step "memcheck bf16_d64_causal_varlen, bf16_d128_det, f16_d256"
PTXKIT_ATTENTION_MATCH=bf16_d64_causal_varlen,bf16_d128_det,f16_d256_causal PTXKIT_ATTENTION_LIMIT_S=15 timeout 20 \
  compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|^PASS|^FAIL" "$out/memcheck.txt" | tail -4
step done
