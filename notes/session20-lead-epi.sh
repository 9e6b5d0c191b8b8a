#!/usr/bin/env bash
# (Session 21: its check and selftest steps now call benches/gpu_steps.sh's epilogue_checks; the same steps as ran.)
# Lead's last call (session 20, issue 27) on main with three epilogue warps the default (ew3),
# run from the repository root as `DEADLINE_S=240 bash notes/session20-lead-epi.sh` (carry
# .gpu-epi: `ptxkit.xz`, `gemm_epilogue.xz` (the example), `bench_epi.xz`, stripped, xz). Steps:
# the example's checks (edge shapes, outputs poisoned, every schedule); the selftest's
# `gemm_epilogue` and `tile_epilogue`; compute-sanitizer racecheck and memcheck of the example's
# checks (the three warps' slab protocol: bands by three warps, a named barrier, one TMA store);
# two against three warps at 4096³ and at half the K, interleaved with the plain GEMM.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-epi" /tmp/epi20 "${DEADLINE_S:-240}"
epilogue_checks "$kit/gemm_epilogue" 40 30
step_at racecheck
run_within racecheck 80 compute-sanitizer --tool racecheck "$kit/gemm_epilogue" --check
step_at memcheck
run_within memcheck 45 compute-sanitizer --tool memcheck "$kit/gemm_epilogue" --check
pack
S="epilogue warps, staged;2 epilogue warps, staged"
step_at "bench 4096"
run_within bench4096 40 env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=6 "$kit/bench_epi"
step_at "bench half K"
run_within benchhalfk 25 env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES=4096x4096x2048 GEMM_EPILOGUE_ROUNDS=3 "$kit/bench_epi"
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
echo "check: $(grep -c -- '-> ok' "$L/check.txt") ok, $(grep -ci fail "$L/check.txt") fail"
grep -hE "^(PASS|FAIL|SKIP)" "$L"/selftest-*.txt | cut -c1-140
for t in racecheck memcheck; do
  echo "$t: $(grep -c -- '-> ok' "$L/$t.txt") ok; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$L/$t.txt" | tail -2 | tr '\n' ' ')"
done
for f in bench4096 benchhalfk; do
  echo "-- $f"
  grep "bits" "$L/$f.txt" | awk -F'|' '{print $3"|"$4"|"$6}'
  grep -v bits "$L/$f.txt" | awk -F'|' 'NF>7 && $5+0>0 {k=$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sort
done
