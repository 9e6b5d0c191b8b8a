#!/usr/bin/env bash
# The grouped GEMM's GPU steps, within a time budget (seconds, BUDGET, default 110): its selftest
# checks (block-scaled FP8 contiguous and masked against an f64 reference, bf16 contiguous and
# masked against an f32 one, poisoned C), the benchmark (ours, every bench configuration, vs a
# loop of cuBLAS bf16 GEMMs; grouped FP8 beside grouped bf16), torch._grouped_mm on the same
# shapes, an ncu SpeedOfLight line of the best bf16 configuration on the main case (G=8,
# M_g=2048, N=K=4096) and memcheck of the masked FP8 check, as long as the budget lasts.
# SHORT=1 times only G=8 with M_g 2048 and 4096 and skips torch and ncu (a 60 s kit).
#
#   BIN=.gpu bash benches/gemm_grouped_run.sh            # from benches/gpu.sh run grouped
#   bash .gpu-grouped/run.sh                             # a kit: BIN is the script's folder
#
# Full logs go to $OUT/grouped/; stdout is a short summary (PASS/FAIL per check with its error,
# the benchmark tables).
set +e
here="$(cd "$(dirname "$0")" && pwd)"
bin="${BIN:-$here}"
torch_py="$bin/gemm_grouped_torch.py"
[ -f "$torch_py" ] || torch_py="$here/gemm_grouped_torch.py"
out="${OUT:-gpu-out}/grouped"
mkdir -p "$out"
budget="${BUDGET:-110}"
start=$SECONDS
# Seconds for the next step: at most $1, and never past the budget (less 2 s for the summary).
left() {
  local rest=$((budget - (SECONDS - start) - 2))
  [ "$rest" -lt "$1" ] && echo "$rest" || echo "$1"
}
step() { # step NAME CAP CMD...: runs CMD with the time left, logs to $out/NAME.txt
  local name="$1" cap="$2"
  shift 2
  local t
  t=$(left "$cap")
  if [ "$t" -le 1 ]; then
    echo "$name: skipped (budget spent)"
    return 124
  fi
  timeout "$t" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  [ $rc -eq 124 ] && echo "$name: TIMEOUT after ${t}s"
  return $rc
}
selftest() { # selftest CHECK CAP: one self-test check, its first line (PASS/FAIL, error)
  step "selftest-$1" "$2" "$bin/ptxkit" selftest --only "$1"
  echo "$1: $(head -c 400 "$out/selftest-$1.txt" | head -3 | tr '\n' ' ') ($((SECONDS - start)) s)"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
selftest gemm_grouped_fp8_block 12
selftest gemm_grouped_fp8_block_masked 10
if [ -n "$SHORT" ]; then
  step bench 16 env GROUPED_ONLY=8x2048,8x4096 "$bin/bench-gemm_grouped"
else
  step bench 60 "$bin/bench-gemm_grouped"
fi
grep '^check' "$out/bench.txt"
grep '^config 8x2048\|^cublas-loop 8x2048\|^masked\|^fp8 ' "$out/bench.txt"
grep '^|\|^device' "$out/bench.txt" || tail -5 "$out/bench.txt"
if [ -z "$SHORT" ]; then
  # A kit's copy of the script finds torch_timing.py here.
  PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" step torch 35 python3 "$torch_py"
  grep '^|\|^torch' "$out/torch.txt" || tail -5 "$out/torch.txt"
  best=$(grep '^| 8x2048 |' "$out/bench.txt" | cut -d'|' -f3 | tr -d ' ')
  if [ -n "$best" ]; then
    step ncu 25 env GROUPED_ONLY=8x2048 GROUPED_CONFIG="$best" ncu --clock-control none \
      --section SpeedOfLight -k regex:gemm_grouped -c 1 "$bin/bench-gemm_grouped"
    echo "ncu $best: $(grep -E '^ +(Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput) ' \
      "$out/ncu.txt" | tr -s ' ' | tr '\n' ';')"
  fi
fi
step memcheck "${MEMCHECK_CAP:-30}" compute-sanitizer --tool memcheck "$bin/ptxkit" selftest \
  --only gemm_grouped_fp8_block_masked
echo "memcheck gemm_grouped_fp8_block_masked: $(grep -E 'ERROR SUMMARY' "$out/memcheck.txt" | tail -1)" \
  "$(grep -oE '(PASS|FAIL) [a-z_0-9]+ +max err [^ ]+' "$out/memcheck.txt" | head -1)"
selftest gemm_grouped 8
selftest gemm_grouped_masked 8
echo "grouped steps took $((SECONDS - start)) s of $budget"
