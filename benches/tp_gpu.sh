#!/usr/bin/env bash
# The tensor-parallel GEMMs (`examples/tp_gemm.rs`, issue 32) on a machine with two or more GPUs.
#   here:  benches/tp_gpu.sh build [DIR]  (release tp_gemm, stripped and xz-compressed into DIR,
#                                          default .gpu-tp/, with run.sh)
#   there: bash DIR/run.sh                (carry DIR; logs under $OUT)
# The run (run.sh's head says more), with NVLink multicast off (NCCL_NVLS_ENABLE=0) and libnccl
# from torch's wheel: on every GPU, the 1,000-iteration stress of each reduce-scatter path beside
# compute-sanitizer's tools on the small run; then the benchmark alone on every GPU, then on
# the first two, every reduce-scatter path in each layer. A summary goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = build ]; then
  cargo build --release --example tp_gemm
  dir=${2:-.gpu-tp}
  mkdir -p "$dir"
  cp target/release/examples/tp_gemm /tmp/tp_gemm_s && strip /tmp/tp_gemm_s
  xz -T2 -6 -c /tmp/tp_gemm_s > "$dir/tp_gemm.xz"
  sed -n '/^# --- run.sh ---$/,$p' "$0" | tail -n +2 > "$dir/run.sh"
  chmod +x "$dir/run.sh"
  ls -la "$dir"
  exit 0
fi
echo "usage: benches/tp_gpu.sh build [DIR]" >&2
exit 2
# --- run.sh ---
#!/usr/bin/env bash
# The tensor-parallel GEMMs' checks, stress and benchmark on a machine of two or more GPUs, in
# one call of at most $BUDGET_S seconds (default 400), every step under its own timeout:
#   A (at once, ended by $A_S seconds, default 70), on every GPU: the 1,000-iteration stress of
#     the all-gather + GEMM and of the reduce-scatter, unfused, fused (--rs-fused) and pulled
#     (--rs-pull) || the small run (`--small`: no NCCL) of each, then compute-sanitizer's
#     memcheck (unfused and pulled), racecheck, synccheck and initcheck (pulled) on it;
#   B (alone on the GPUs, until $B_S seconds, default 170): the benchmark on every GPU at
#     $TOKENS (default 4096,8192,16384), each reduce-scatter layer beside the fused and pulled
#     paths whose small runs passed, the clocks and power sampled every 200 ms;
#   C (the rest): the same on GPUs 0 and 1 (CUDA_VISIBLE_DEVICES), at $TOKENS2 (default
#     4096,8192,16384), where the machine has more than two.
# $RS_STAGED (k-tiles, e.g. 2,6; default none): the pulled path's owners load their peer's
# partial under that k-tile (`--rs-staged-at`): its stress and sanitizer runs take the first,
# the benchmark times each beside the default (tp::PULLED_OWNERS: slab by slab, the flag polled once).
# $RS_OWNERS (e.g. middle,once; default none): more variants of the pulled path's owners
# (`--rs-owners`, `tp_gemm`'s head says the words), the same way.
# Logs under $OUT: steps.txt (GPUs, tools, each step's exit code and time), stress.log,
# sanitizer.log, bench.log (every GPU), bench2.log (two), clocks.csv. Prints a summary.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
cd "$(dirname "$0")"
start=$(date +%s)
budget=${BUDGET_S:-400}
until=${A_S:-70}
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
gpus=$(nvidia-smi -L | grep -c '^GPU')
lib=""
for d in $(python3 -c "import site; print(' '.join(site.getsitepackages()))" 2>/dev/null) /opt /usr/lib /usr/local; do
  lib=$(find "$d" -name 'libnccl.so.2' 2>/dev/null | head -1)
  [ -n "$lib" ] && break
done
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
echo "gpus: $gpus; nccl: $lib; compute-sanitizer: $san" >> "$steps"
"$san" --version >> "$steps" 2>&1
mkdir -p /tmp/tpnccl && ln -sf "$lib" /tmp/tpnccl/libnccl.so
export LD_LIBRARY_PATH=/tmp/tpnccl:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -dc tp_gemm.xz > /tmp/tp_gemm && chmod +x /tmp/tp_gemm
tp=/tmp/tp_gemm
staged=""; [ -n "${RS_STAGED:-}" ] && staged="--rs-staged-at $RS_STAGED"
[ -n "${RS_OWNERS:-}" ] && staged="$staged --rs-owners $RS_OWNERS"

# A: the stress beside the small runs (correctness only; nothing is timed here).
( step stress.log 40 $tp --tokens '' --stress 1000
  step stress.log 40 $tp --tokens '' --stress 1000 --rs-pull $staged
  step stress.log 40 $tp --tokens '' --stress 1000 --rs-fused ) &
stress_pid=$!
step sanitizer.log 20 $tp --small --stress 2
rs=""
step sanitizer.log 20 $tp --small --stress 2 --rs-fused && rs="--rs-fused"
step sanitizer.log 20 $tp --small --stress 2 --rs-pull $staged && rs="$rs --rs-pull"
echo "reduce-scatter paths whose small runs passed: ${rs:-none}" >> "$steps"
check="$san --error-exitcode 7 --print-limit 20 --tool"
pull=""; case "$rs" in *pull*) pull="--rs-pull $staged";; esac
step sanitizer.log 30 $check memcheck $tp --small --stress 2
[ -n "$pull" ] && step sanitizer.log 30 $check memcheck $tp --small --stress 2 $pull
step sanitizer.log 30 $check racecheck $tp --small --stress 2 $pull
step sanitizer.log 25 $check synccheck $tp --small --stress 2 $pull
step sanitizer.log 25 $check initcheck $tp --small --stress 2 $pull
wait "$stress_pid"
echo "A done at $(( $(date +%s) - start )) s" >> "$steps"

# B: the benchmark alone on every GPU, the clocks sampled every 200 ms; C: on two.
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
smi_pid=$!
until=${B_S:-170}
step bench.log 400 $tp --stress 0 --tokens "${TOKENS:-4096,8192,16384}" $rs $staged
until=$(( budget - 5 ))
if [ "$gpus" -gt 2 ]; then
  step bench2.log 400 env CUDA_VISIBLE_DEVICES=0,1 $tp --stress 0 --tokens "${TOKENS2:-4096,8192,16384}" $rs $staged
fi
kill "$smi_pid"
echo "B and C done at $(( $(date +%s) - start )) s" >> "$steps"
cat "$steps"
grep -h -E '^stress|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|Error' "$OUT/stress.log" "$OUT/sanitizer.log" 2>/dev/null | head -40
for f in bench.log bench2.log; do
  [ -f "$OUT/$f" ] || continue
  echo "== $f"
  grep -h -E '^(AG|GEMM)\+' "$OUT/$f" | sed -E 's/ \| rel err vs cuBLAS.*//' | cut -c1-400
  grep -h -A30 '^summary' "$OUT/$f"
done
