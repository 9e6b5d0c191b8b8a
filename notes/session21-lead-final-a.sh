#!/usr/bin/env bash
# Lead's final call A (session 21) on merged main (epi22's folds and pf21's switch in): the full
# selftest (every check a child process, the planted hangs among them), then the fused epilogue's
# example checks under compute-sanitizer racecheck and memcheck (the folds changed the epilogue
# passes' code). Run from the repository root as `DEADLINE_S=500 bash
# notes/session21-lead-final-a.sh` (carry .gpu-final: `new/ptxkit.xz`, `new/gemm_epilogue.xz`
# (examples/gemm_epilogue), stripped, xz). A short summary last.
set -u
source benches/gpu_steps.sh
oldnew_kit_start "$(pwd)/.gpu-final" /tmp/final21a "${DEADLINE_S:-500}"
L=$out/logs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$L/device.txt"
step_at selftest
run_within selftest 330 "$kit/new/ptxkit" selftest
step_at "example --check"
run_within check 30 "$kit/new/gemm_epilogue" --check
step_at racecheck
run_within racecheck 80 compute-sanitizer --tool racecheck "$kit/new/gemm_epilogue" --check
step_at memcheck
run_within memcheck 50 compute-sanitizer --tool memcheck "$kit/new/gemm_epilogue" --check
pack
echo "== summary ($(($(date +%s) - start)) s)"
grep -E "^(FAIL|SKIP)" "$L/selftest.txt" | cut -c1-160
grep -E "^PASS hang" "$L/selftest.txt" | cut -c1-120
tail -1 "$L/selftest.txt"
echo "check: $(grep -c -- '-> ok' "$L/check.txt") ok, $(grep -ci fail "$L/check.txt") fail"
for t in racecheck memcheck; do
  echo "$t: $(grep -c -- '-> ok' "$L/$t.txt") ok; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$L/$t.txt" | tail -2 | tr '\n' ' ')"
done
