#!/usr/bin/env bash
# Lead, session 17 call 3: the staged residual's other tiles prefetched into L2 at the main loop's
# middle k-tile (pf), with the residual's loads evict-first (res); ping-pong fused for reference.
set -u
d=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/lead17}
mkdir -p "$out"
chmod +x "$d/probe"
for s in 4096x4096x4096 8192x4096x4096 8192x8192x8192; do
  echo "== $s ($(date +%T))"
  SHAPE=$s ROUNDS=5 VARIANTS=ew_staged_bias+relu+residual,ew_staged_bias+gelu_tanh+residual \
    HINTS="none;pf;pf,res" timeout 150 "$d/probe" > "$out/pf-$s.txt" 2>&1
  grep -E "round|NaN|bit for bit" "$out/pf-$s.txt" | sed -E 's/ TFLOP.s vs plain [0-9.]+//; s/^ew_staged_bias\+//'
  SHAPE=$s ROUNDS=3 VARIANTS=pp_none,pp_staged_bias+relu+residual timeout 100 "$d/probe" > "$out/pp-$s.txt" 2>&1
  grep -E "round|NaN" "$out/pp-$s.txt" | sed -E 's/ TFLOP.s vs plain [0-9.]+//'
done
echo "== done ($(date +%T))"
