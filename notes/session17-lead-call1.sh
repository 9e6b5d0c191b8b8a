#!/usr/bin/env bash
# Lead, session 17 call 1: the fused epilogue with L2 cache hints (residual loads evict_first,
# C stores evict_first, A/B loads evict_last) against the library's plain GEMM in the same process.
set -u
d=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/lead17}
mkdir -p "$out"
chmod +x "$d/probe"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > "$out/gpu.txt" 2>&1
for s in 4096x4096x4096 8192x8192x8192; do
  echo "== $s ($(date +%T))"
  SHAPE=$s VARIANTS=ew_staged_bias+gelu_tanh+residual,ew_staged_bias+relu+residual \
    HINTS="none;res;res,c;res,c,ab" timeout 150 "$d/probe" > "$out/hints-$s.txt" 2>&1
  grep -E "round|NaN|bit for bit" "$out/hints-$s.txt"
done
echo "== done ($(date +%T))"
