#!/usr/bin/env bash
# Lead, session 17 call 2: where the fused epilogue's gap lies, by switching its parts off one at a
# time (probe only: outputs wrong where a part is off): the consumers' own last-tile ops (last), the
# epilogue warps' ops (ewops), the epilogue warps' residual TMA loads (resload).
set -u
d=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/lead17}
mkdir -p "$out"
chmod +x "$d/probe"
for s in 4096x4096x4096 8192x4096x4096 4096x4096x8192; do
  echo "== $s ($(date +%T))"
  SHAPE=$s VARIANTS=ew_none,ew_staged_bias+relu+residual \
    HINTS="none;last;ewops;resload;ewops,resload;last,ewops,resload" timeout 150 "$d/probe" > "$out/parts-$s.txt" 2>&1
  grep -E "round" "$out/parts-$s.txt" | sed -E 's/ TFLOP.s vs plain [0-9.]+//; s/^ew_staged_bias\+relu\+residual/fused/'
done
echo "== done ($(date +%T))"
