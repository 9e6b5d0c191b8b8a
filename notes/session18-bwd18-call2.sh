#!/usr/bin/env bash
# bwd18's follow-up (not run: the helper's allowance was one call; about 60 s): where the d128 main kernel's
# warps wait, SASS instruction by instruction. ncu's source counters (warp-state samples per instruction) and
# warp-state statistics of the default main kernel at 4x4096 non-causal; the report itself comes back ($OUT,
# a few MB) and its source page as CSV (`--page source --print-source sass`: if this ncu lacks it, the report
# still opens in Nsight Compute). Kit: a folder with the bench executable `bench-attention_backward` of main
# (as notes/session18-bwd18-call1.sh: stripped, xz-compressed, carried). The question it answers: after the
# wait for dPᵀ (session 18: ptxas puts it after 4 of 32 ex2), is the consumer stalled on MUFU (ex2), on the
# named barrier (the warpgroups meeting for dSᵀ) or on wgmma waits, and how many cycles each.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd18-out2}
mkdir -p "$out"
step() { echo "== $1 ($(date +%T))"; }
[ -f "$kit/bench-attention_backward.xz" ] && xz -d -f "$kit/bench-attention_backward.xz"
chmod +x "$kit/bench-attention_backward"
step "ncu source counters, d128 4x4096 non-causal main kernel (default)"
PTXKIT_ATTENTION_SHAPE=128:false:4096 PTXKIT_ATTENTION_VARIANT=bulk timeout 90 \
  ncu --clock-control none --section SourceCounters --section WarpStateStats --section ComputeWorkloadAnalysis \
  -k "regex:^attention_bwd_bf16_d128$" -c 1 -o "$out/main" \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu-log.txt" 2>&1
echo "rc $?"
ncu -i "$out/main.ncu-rep" --page source --csv --print-source sass >"$out/source-sass.csv" 2>"$out/source-err.txt"
ncu -i "$out/main.ncu-rep" --page details >"$out/details.txt" 2>&1
grep -E "Duration|Stall|Warp Cycles|Issued|Pipe" "$out/details.txt" | head -30
head -c 1500 "$out/source-sass.csv"
step done
