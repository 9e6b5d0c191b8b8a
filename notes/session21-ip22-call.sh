#!/usr/bin/env bash
# Helper ip22's call (session 21, issue 27): C accumulated in place by the TMA store's reduction
# (Epilogue::accumulate). Run from the repository root as `bash .gpu-ip22/call.sh` (carry
# .gpu-ip22: `ptxkit.xz`, `example.xz` (examples/gemm_epilogue), `bench.xz`
# (benches/gemm_epilogue), stripped, xz). Steps: the example's `--check` beside the selftest's
# `gemm_epilogue` and `tile_epilogue` (correctness only, run at once); the bench alone, the default
# "epilogue warps, staged" and "epilogue warps, in place", 4096³ (8 rounds), then
# 4096x4096x2048 and 8192³ (3 rounds); then compute-sanitizer racecheck and memcheck of the
# example's `--check`, side by side, with the time left. A short summary last.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-ip22" /tmp/ip22 "${DEADLINE_S:-290}"
step_at "checks (example, selftests side by side)"
run_within check 70 "$kit/example" --check &
run_within selftest-gemm_epilogue 70 "$kit/ptxkit" selftest --only gemm_epilogue &
run_within selftest-tile_epilogue 70 "$kit/ptxkit" selftest --only tile_epilogue &
wait
pack
S="epilogue warps, staged;epilogue warps, in place"
bench() { run_within "$1" "$2" env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES="$3" GEMM_EPILOGUE_ROUNDS="$4" "$kit/bench"; }
step_at "bench 4096"
bench bench4096 45 4096 8
pack
step_at "bench half K and 8192"
bench benchk2-8192 45 4096x4096x2048,8192 3
pack
step_at "racecheck and memcheck side by side"
run_within racecheck 200 compute-sanitizer --tool racecheck "$kit/example" --check &
run_within memcheck 200 compute-sanitizer --tool memcheck "$kit/example" --check &
wait
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
echo "check: $(grep -c -- '-> ok' "$L/check.txt") ok, $(grep -ci fail "$L/check.txt") fail"
grep "in place" "$L/check.txt" | cut -c1-170 | head -24
grep -hE "^(PASS|FAIL|SKIP)" "$L"/selftest-*.txt | cut -c1-200
for f in bench4096 benchk2-8192; do
  [ -e "$L/$f.txt" ] || continue
  echo "-- $f"
  grep "bits" "$L/$f.txt" | awk -F'|' '{print $2"|"$3"|"$4"|"$6}'
  grep -v bits "$L/$f.txt" | awk -F'|' 'NF>7 && $5+0>0 {k=$2"|"$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sed 's/epilogue warps, staged/ew/; s/epilogue warps, in place/inplace/' | sort
  grep -iE "error|panic" "$L/$f.txt" | head -3
done
for t in racecheck memcheck; do
  [ -e "$L/$t.txt" ] || continue
  echo "$t: $(grep -c -- '-> ok' "$L/$t.txt") ok, $(grep -ci 'fail' "$L/$t.txt") fail; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$L/$t.txt" | tail -2 | tr '\n' ' ')"
done
