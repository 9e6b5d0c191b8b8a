#!/usr/bin/env bash
# The tensor-parallel GEMMs (`examples/tp_gemm.rs`, issue 32) on a machine with two or more GPUs.
#   here:  benches/tp_gpu.sh build      (release tp_gemm, stripped and xz-compressed into .gpu-tp/)
#   there: bash .gpu-tp/run.sh          (carry .gpu-tp; logs under $OUT)
# The run (run.sh's head says more), with NVLink multicast off (NCCL_NVLS_ENABLE=0) and libnccl
# from torch's wheel: the 1,000-iteration stress of both paths beside compute-sanitizer's tools
# on the small run, then the benchmark alone at 4096, 8192 and 16384 tokens, then the
# reduce-scatter's layers again beside its fused sum.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = build ]; then
  cargo build --release --example tp_gemm
  mkdir -p .gpu-tp
  cp target/release/examples/tp_gemm /tmp/tp_gemm_s && strip /tmp/tp_gemm_s
  xz -T2 -6 -c /tmp/tp_gemm_s > .gpu-tp/tp_gemm.xz
  sed -n '/^# --- run.sh ---$/,$p' "$0" | tail -n +2 > .gpu-tp/run.sh
  chmod +x .gpu-tp/run.sh
  ls -la .gpu-tp
  exit 0
fi
echo "usage: benches/tp_gpu.sh build" >&2
exit 2
# --- run.sh ---
#!/usr/bin/env bash
# The tensor-parallel GEMMs' checks, stress and benchmark on a machine of two or more GPUs, in
# one call of at most $BUDGET_S seconds (default 400), every step under its own timeout:
#   A (at once, ended by $A_S seconds, default 190): the 1,000-iteration stress of both paths,
#     then again with the reduce-scatter's sum fused || the small run (`--small`: no NCCL),
#     plain and fused, then under compute-sanitizer's memcheck (plain and fused), racecheck,
#     synccheck and initcheck (fused, where the plain fused run passed: it runs every kernel);
#   B (alone on the GPUs, the rest): the benchmark at 4096, 8192 and 16384 tokens, the GPUs'
#     clocks and power sampled beside it; then the reduce-scatter layers again beside the fused
#     sum (where the small fused run passed).
# Logs under $OUT: steps.txt (GPUs, tools, each step's exit code and time), stress.log,
# sanitizer.log, bench.log, fused.log, clocks.csv.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
cd "$(dirname "$0")"
start=$(date +%s)
budget=${BUDGET_S:-400}
until=${A_S:-190}
steps="$OUT/steps.txt"
# step LOG MAX_S CMD...: runs CMD (output appended to $OUT/LOG) under a timeout of MAX_S
# seconds, less where less is left until $until seconds from the start; returns its status.
step() {
  local log=$1 max=$2; shift 2
  local left=$(( until - ($(date +%s) - start) - 5 ))
  [ "$left" -lt "$max" ] && max=$left
  if [ "$max" -le 5 ]; then echo "$*: skipped, no time left" >> "$steps"; return 125; fi
  echo "### $*" >> "$OUT/$log"
  local t0=$(date +%s)
  timeout -k 5 "$max" "$@" >> "$OUT/$log" 2>&1
  local rc=$?
  echo "$*: rc=$rc in $(( $(date +%s) - t0 )) s (limit $max s)" >> "$steps"
  return $rc
}
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv > "$steps" 2>&1
nvidia-smi topo -m >> "$steps" 2>&1
lib=""
for d in $(python3 -c "import site; print(' '.join(site.getsitepackages()))" 2>/dev/null) /opt /usr/lib /usr/local; do
  lib=$(find "$d" -name 'libnccl.so.2' 2>/dev/null | head -1)
  [ -n "$lib" ] && break
done
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
echo "nccl: $lib; compute-sanitizer: $san" >> "$steps"
"$san" --version >> "$steps" 2>&1
mkdir -p /tmp/tpnccl && ln -sf "$lib" /tmp/tpnccl/libnccl.so
export LD_LIBRARY_PATH=/tmp/tpnccl:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -dc tp_gemm.xz > /tmp/tp_gemm && chmod +x /tmp/tp_gemm
tp=/tmp/tp_gemm

# A: the stress beside the small runs (correctness only; nothing is timed here).
( step stress.log 120 $tp --tokens '' --stress 1000
  step stress.log 120 $tp --tokens '' --stress 1000 --rs-fused ) &
stress_pid=$!
step sanitizer.log 20 $tp --small --stress 2
fz=--rs-fused
step sanitizer.log 20 $tp --small --stress 2 $fz || fz=""
echo "fused small run: ${fz:-failed}" >> "$steps"
check="$san --error-exitcode 7 --print-limit 20 --tool"
step sanitizer.log 50 $check memcheck $tp --small --stress 2
[ -n "$fz" ] && step sanitizer.log 40 $check memcheck $tp --small --stress 2 $fz
step sanitizer.log 50 $check racecheck $tp --small --stress 2 $fz
step sanitizer.log 40 $check synccheck $tp --small --stress 2 $fz
step sanitizer.log 30 $check initcheck $tp --small --stress 2 $fz
wait "$stress_pid"
echo "A done at $(( $(date +%s) - start )) s" >> "$steps"

# B: the benchmark alone, the clocks sampled every 200 ms.
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
smi_pid=$!
until=$(( budget - 10 ))
step bench.log 400 $tp --stress 0 --tokens 4096,8192,16384
[ -n "$fz" ] && step fused.log 400 $tp --stress 0 --tokens 4096,8192,16384 --rs-only --rs-fused
kill "$smi_pid"
echo "B done at $(( $(date +%s) - start )) s" >> "$steps"
cat "$steps"
grep -h -E 'stress|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|Error' "$OUT/stress.log" "$OUT/sanitizer.log" 2>/dev/null | head -40
grep -h -A30 '^summary' "$OUT/bench.log" "$OUT/fused.log" 2>/dev/null
