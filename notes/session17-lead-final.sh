#!/usr/bin/env bash
# Lead's final call (session 17), on merged main: the full selftest, then old (de9cb9d, before the
# kernel parts) and new (merged main) builds alternating, each against its baseline in the same
# process: the GEMM's bench shapes (cuBLAS), FP8 block-scaled, the grouped GEMM, the attention's
# d128 defaults, FP8 per-tensor (cuBLASLt); every step skipped once the call's deadline is near.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/final17}
mkdir -p "$out"
for f in "$kit"/*/*.xz; do xz -d -f "$f"; done
chmod +x "$kit"/old/* "$kit"/new/*
start=$(date +%s)
deadline=${DEADLINE_S:-540}
step() { echo "== $1 ($(date +%T), $(( $(date +%s) - start )) s)"; }
# left MAX: seconds a step may take, at most MAX, 0 when none is left
left() { local l=$(( deadline - ($(date +%s) - start) )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 5 ] && l=0; echo $l; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step selftest
timeout 300 "$kit/new/ptxkit" selftest > "$out/selftest.txt" 2>&1
echo "selftest rc=$?"; grep -E "^(PASS|FAIL|SKIP)" "$out/selftest.txt" | cut -c1-140
grep -cE "^PASS" "$out/selftest.txt"; grep -cE "^FAIL" "$out/selftest.txt"
run() { # run NAME MAX CMD...: under the deadline
  local name=$1 max; max=$(left "$2"); shift 2
  if [ "$max" = 0 ]; then echo "$name: skipped (deadline)"; return; fi
  timeout "$max" "$@" > "$out/$name.txt" 2>&1; echo "$name rc=$?"
}
for b in old new; do
  d=$kit/$b
  step "$b gemm"
  run gemm-$b 60 "$d/bench-gemm" --bench zz_table_only
  grep -E '^\| [0-9]' "$out/gemm-$b.txt"
done
for b in old new; do
  d=$kit/$b
  step "$b fp8 block, grouped, attention"
  run fp8block-$b 40 env FP8_BLOCK_CHECKS=0 FP8_BLOCK_SECONDS=15 FP8_BLOCK_SHAPES=4096x4096x4096,8192x8192x8192 "$d/bench-gemm_fp8_block" --bench
  grep -E '^\| (4096|8192)x' "$out/fp8block-$b.txt" | head -4
  run grouped-$b 40 env GROUPED_ONLY=8x2048,8x4096 "$d/bench-gemm_grouped" --bench
  grep -E '^\| 8x' "$out/grouped-$b.txt" | head -4
  run attention-$b 50 env PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=3 "$d/bench-attention" --bench
  grep -E '^\| 128 ' "$out/attention-$b.txt"
done
for b in old new; do
  step "$b fp8 per-tensor"
  run fp8-$b 80 "$kit/$b/bench-gemm_fp8" --bench
  grep -E '^\| (4096|6144|8192)x(4096|6144|8192)x' "$out/fp8-$b.txt"
done
step done
