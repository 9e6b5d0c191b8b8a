#!/usr/bin/env bash
# Session 15, dec15 (issue 29), a second call for the lead: split-K's sum as a programmatic
# dependent with its loads issued first (commit 38597dd), and the memcheck the first call
# missed (compute-sanitizer's filter is `kns=`, not `regex:`). Binaries from dec15 at 38597dd.
set -uo pipefail
K=.gpu-dec15
out="${OUT:-/tmp/dec15}"; mkdir -p "$out"
L="$out/session15-dec-call2"
for f in $K/*.xz; do xz -dkf "$f"; done
chmod +x $K/gemm_decode $K/gemm_hopper
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L-device.txt"
step "decode checks (split-K second launch and fixup, bit for bit; clusters along N)"
DECODE_CHECK_ONLY=1 timeout 40 $K/gemm_decode > "$L-checks-decode.txt" 2>&1; echo "rc $?"
grep -c PASS "$L-checks-decode.txt"; grep -E "FAIL|bit for bit|occupancy" "$L-checks-decode.txt" | cut -c1-160
step "gemm_hopper --small"
timeout 20 $K/gemm_hopper --small > "$L-checks-hopper.txt" 2>&1; echo "rc $?"
echo "ok: $(grep -cE ' ok$' "$L-checks-hopper.txt")"; grep -E "FAIL|rror" "$L-checks-hopper.txt" | cut -c1-160
step "memcheck: the _n4 kernels (cluster checks), then the split-K sum and parts (gemm_hopper --small)"
DECODE_CHECK_ONLY=clusters timeout 40 compute-sanitizer --tool memcheck --kernel-name kns=_n4 $K/gemm_decode > "$L-memcheck-clusters.txt" 2>&1; echo "rc $?"
grep -c PASS "$L-memcheck-clusters.txt"; grep -E "FAIL|ERROR SUMMARY" "$L-memcheck-clusters.txt" | tail -2
timeout 40 compute-sanitizer --tool memcheck --kernel-name kns=splitk $K/gemm_hopper --small > "$L-memcheck-splitk.txt" 2>&1; echo "rc $?"
grep -E "FAIL|ERROR SUMMARY" "$L-memcheck-splitk.txt" | tail -2
step "the split-K rows, every candidate (runs 1 and 2)"
DECODE_SHAPE=128x2112x7168,64x2112x7168 DECODE_NO_CHECKS=1 DECODE_ALL=1 timeout 45 $K/gemm_decode > "$L-rows.txt" 2>&1; echo "rc $?"
grep -E "^\||splitk[0-9]+:|splitk[0-9]+_swapab:" "$L-rows.txt" | cut -c1-200
step "ncu: the GEMM parts, the sum, cuBLAS's kernels"
DECODE_PROFILE=1 DECODE_DTYPE=bf16 DECODE_SHAPE=128x2112x7168 DECODE_NO_CHECKS=1 timeout 40 ncu \
  --clock-control none --kernel-name "regex:128x64x64_s8_g16_splitk4$|splitk4_sum|nvjet|[Rr]educe|splitK" --metrics \
  gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum \
  $K/gemm_decode > "$L-ncu-bf16-128x2112x7168.txt" 2>&1; echo "rc $?"
grep -E "^  [A-Za-z_].*\(|gpu__time" "$L-ncu-bf16-128x2112x7168.txt" | head -40
step done
