#!/usr/bin/env bash
# Lead's verification call (session 21) on main with ip22 merged (`Epilogue::accumulate`, the
# residual added in place by the TMA store's reduction): the example's checks (its in-place
# check's "not added" rule now with a floor of 2⁻⁶, changed after ip22's call), the selftest's
# `gemm_epilogue` and `tile_epilogue`, memcheck of the example's checks, then the fused epilogue
# staged and in place beside the plain GEMM at 4096³ (12 rounds), 8192³ and 4096x4096x2048 (3).
# Run from the repository root as `DEADLINE_S=170 bash notes/session21-lead-verify.sh` (carry
# .gpu-verify: `ptxkit.xz`, `gemm_epilogue.xz` (the example), `bench_epi.xz`, stripped, xz).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-verify" /tmp/verify21 "${DEADLINE_S:-170}"
d=$kit
epilogue_checks "$kit/gemm_epilogue" 40 25
step_at memcheck
run_within memcheck 40 compute-sanitizer --tool memcheck "$kit/gemm_epilogue" --check
pack
S="epilogue warps, staged;epilogue warps, in place"
epilogue_bench "epi 4096" 40 4096 12 "$S"
epilogue_bench "epi 8192" 25 8192 3 "$S"
epilogue_bench "epi 4096x4096x2048" 15 4096x4096x2048 3 "$S"
pack
echo "== summary ($(($(date +%s) - start)) s)"
echo "check: $(grep -c -- '-> ok' "$L/check.txt") ok, $(grep -ci fail "$L/check.txt") fail"
grep -i "in place" "$L/check.txt" | cut -c1-150
grep -hE "^(PASS|FAIL|SKIP)" "$L"/selftest-*.txt | cut -c1-120
echo "memcheck: $(grep -c -- '-> ok' "$L/memcheck.txt") ok; $(grep 'ERROR SUMMARY' "$L/memcheck.txt" | tail -1)"
grep -h "bits" "$L"/epi-*.txt | awk -F'|' '{print $2"|"$3"|"$4"|"$6}' | cut -c1-160
for f in "$L"/epi-*.txt; do
  echo "-- $f"
  grep -v bits "$f" | awk -F'|' 'NF>7 && $5+0>0 {k=$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sort
done
