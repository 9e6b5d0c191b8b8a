#!/usr/bin/env bash
# epi18, session 18, the one device call: the fused GEMM epilogue (bias + ReLU/GELU + staged
# residual on epilogue warps) against the library's plain GEMM in the same process, by variant
# (zz_epi18_probe, interleaved medians of 20 launches), its outputs against the epilogue
# emulated on the host from the plain GEMM's C; ncu (full set) of plain and the ReLU variants
# at 4096^3; then the committed bench's epilogue-warp rows.
# Run from the session checkout as `bash .gpu-epi18/run.sh` (carry .gpu-epi18: the probe, bench and
# example binaries built from branch epi18 before its clean-up; the probe is examples/zz_epi18_probe.rs,
# git-excluded, its source kept as notes/session18-epi18-probe.rs).
set -u
OUT=${OUT:-/tmp/epi18}; mkdir -p "$OUT"
d=.gpu-epi18
start=$(date +%s)
left() { echo $(( 225 - ($(date +%s) - start) )); }
xz -d -k -f $d/zz_epi18_probe.xz $d/bench_epi.xz $d/example_epi.xz && chmod +x $d/zz_epi18_probe $d/bench_epi $d/example_epi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
smi=$!
echo "== example --check, edge shapes ($(date +%T))"
timeout 25 $d/example_epi --check > "$OUT/example-check.txt" 2>&1; echo "rc $?"
echo "== probe 4096 ($(date +%T))"
SHAPES=4096 ROUNDS=5 VARIANTS=none:coop,none:coop:cm2,relu:old,relu,relu:packed,relu:cm2,relu:g8,relu:g32,gelu:old,gelu,gelu:cm2 \
  timeout 60 $d/zz_epi18_probe > "$OUT/probe-4096.txt" 2>&1; echo "rc $?"
echo "== probe 8192 ($(date +%T))"
SHAPES=8192 ROUNDS=3 VARIANTS=none:coop,relu:old,relu,relu:packed,relu:cm2,gelu:old,gelu,gelu:cm2 \
  timeout 50 $d/zz_epi18_probe > "$OUT/probe-8192.txt" 2>&1; echo "rc $?"
kill $smi 2>/dev/null
echo "== ncu ($(date +%T), $(left) s left)"
t=$(( $(left) - 45 )); [ $t -gt 100 ] && t=100
SHAPES=4096 ROUNDS=0 VARIANTS=relu:old,relu,relu:packed timeout $t \
  ncu --set full -k regex:gemm -c 4 -f -o "$OUT/ncu" $d/zz_epi18_probe > "$OUT/ncu-run.txt" 2>&1; echo "rc $?"
if [ -f "$OUT/ncu.ncu-rep" ]; then
  ncu --import "$OUT/ncu.ncu-rep" --page details > "$OUT/ncu-details.txt" 2>&1
  ncu --import "$OUT/ncu.ncu-rep" --page raw --csv > "$OUT/ncu-raw.csv" 2>&1
  ncu --import "$OUT/ncu.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-source.csv" 2>&1
  xz -T4 -6 "$OUT/ncu-source.csv" "$OUT/ncu-raw.csv"
  rm -f "$OUT/ncu.ncu-rep"
fi
echo "== bench ($(date +%T), $(left) s left)"
t=$(( $(left) - 5 )); [ $t -gt 5 ] && GEMM_EPILOGUE_SCHEDULES="epilogue warps, staged;epilogue warps, staged, ops in bf16" \
  timeout $t $d/bench_epi > "$OUT/bench.txt" 2>&1; echo "rc $?"
echo "== summary ($(date +%T))"
grep -h "FAIL\|ok$" "$OUT/example-check.txt" | head -20
grep -h "check\|round" "$OUT"/probe-*.txt | sed -E 's/ TFLOP.s//' | grep -v "^$" | head -120
grep -E "^  (gemm|Duration|Executed Ipc|SM Busy|Issue Slots)" "$OUT/ncu-details.txt" 2>/dev/null | head -40
grep "|" "$OUT/bench.txt" 2>/dev/null | tail -30
