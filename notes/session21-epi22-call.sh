#!/usr/bin/env bash
# (Its check and selftest steps call benches/gpu_steps.sh's epilogue_checks since; the same steps as ran.)
# Helper epi22's call (session 21, issue 27): fewer instructions a value in the fused epilogue's
# passes (the bf16 pairs widened by shifts, GELU's half folded into the residual's add or the
# bias's). Run from the repository root as `bash .gpu-epi22/call.sh` (carry .gpu-epi22:
# `ptxkit.xz`, `example_new.xz` (examples/gemm_epilogue), `bench_new.xz`, `bench_main.xz`
# (benches/gemm_epilogue of the branch and of main `da1b991`), stripped, xz). Steps: the example's
# checks (edge shapes, every schedule, outputs poisoned); the selftest's `gemm_epilogue` and
# `tile_epilogue`; the bench, main's build and the branch's alternating, at 4096³ (6 rounds), then
# 4096x4096x2048 and 8192³ (3 rounds), then 4096³ again while time is left; the consumers' and
# the epilogue warps' staged schedules (the branch's build also compares the folded GELU
# kernel's bits with its ops unfolded).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-epi22" /tmp/epi22 "${DEADLINE_S:-140}"
epilogue_checks "$kit/example_new" 35 20
pack
S="cooperative, staged;epilogue warps, staged"
bench() { run_within "$1" "$2" env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES="$3" GEMM_EPILOGUE_ROUNDS="$4" "$kit/bench_$5"; }
step_at "bench 4096, main then new"
bench bench4096-main 25 4096 6 main
bench bench4096-new 25 4096 6 new
pack
step_at "bench half K and 8192, main then new"
bench benchk2-8192-main 25 4096x4096x2048,8192 3 main
bench benchk2-8192-new 25 4096x4096x2048,8192 3 new
pack
step_at "bench 4096 again"
bench bench4096-main2 20 4096 6 main
bench bench4096-new2 20 4096 6 new
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
echo "check: $(grep -c -- '-> ok' "$L/check.txt") ok, $(grep -ci fail "$L/check.txt") fail"
grep -hE "^(PASS|FAIL|SKIP)" "$L"/selftest-*.txt | cut -c1-140
for f in bench4096-main bench4096-new benchk2-8192-main benchk2-8192-new bench4096-main2 bench4096-new2; do
  [ -e "$L/$f.txt" ] || continue
  echo "-- $f"
  grep "bits" "$L/$f.txt" | grep -v "0 differ" | awk -F'|' '{print $2"|"$3"|"$4"|"$6}'
  grep "unfolded" "$L/$f.txt" | awk -F'|' '{print $2"|"$3"|"$6}'
  grep -v bits "$L/$f.txt" | awk -F'|' 'NF>7 && $5+0>0 {k=$2"|"$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sed 's/epilogue warps, staged/ew/; s/cooperative, staged/coop/' | sort
done
