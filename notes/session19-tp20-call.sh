#!/usr/bin/env bash
# tp20 (issue 32), one call on nvidia-h200-x2, at most ~230 s: the owners' variants of the pulled
# GEMM + reduce-scatter (`--rs-owners`: `once` = the peer's flag polled once a thread,
# `spFxE` = the staged partial loaded slab by slab from k-tile F every E k-tiles) checked, stressed
# and timed beside the default in the same processes, then ncu of rank 0's owner kernels.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/tp20-out}
mkdir -p "$out/logs"
start=$(date +%s)
deadline=${DEADLINE_S:-225}
left() { local l=$((deadline - ($(date +%s) - start))); [ "$l" -gt "$1" ] && l=$1; echo "$l"; }
# run NAME MAX CMD...: under min(MAX, time left) seconds, output in logs/NAME.txt.
run() {
  local name=$1 max; max=$(left "$2"); shift 2
  if [ "$max" -lt 5 ]; then echo "$name: skipped (deadline)" | tee -a "$out/logs/steps.txt"; return 125; fi
  local t0=$(date +%s)
  timeout -k 5 "$max" "$@" > "$out/logs/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s (limit $max)" | tee -a "$out/logs/steps.txt"
  return $rc
}
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv > "$out/logs/gpus.txt" 2>&1
nvidia-smi topo -m >> "$out/logs/gpus.txt" 2>&1
lib=""
for d in $(python3 -c "import site; print(' '.join(site.getsitepackages()))" 2>/dev/null) /opt /usr/lib /usr/local; do
  lib=$(find "$d" -name 'libnccl.so.2' 2>/dev/null | head -1); [ -n "$lib" ] && break
done
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
echo "nccl: $lib; sanitizer: $san; ncu: $ncu" >> "$out/logs/gpus.txt"
mkdir -p /tmp/tpnccl && ln -sf "$lib" /tmp/tpnccl/libnccl.so
export LD_LIBRARY_PATH=/tmp/tpnccl:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -dc "$kit/tp_gemm.xz" > /tmp/tp_gemm && chmod +x /tmp/tp_gemm
tp=/tmp/tp_gemm
V="once,sp2x8,once+sp2x8,once+sp1x16"

# A: correctness. Small runs of each changed path, compute-sanitizer on the combined one, beside
# the 1,000-iteration stress (and 1,000 back to back) of each changed path.
( run stress-once 40 $tp --tokens '' --stress 1000 --rs-pull --rs-owners once
  run stress-once-sp2x8 40 $tp --tokens '' --stress 1000 --rs-pull --rs-owners once+sp2x8
  run stress-sp2x8 40 $tp --tokens '' --stress 1000 --rs-pull --rs-owners sp2x8 ) &
spid=$!
for v in once sp2x8 once+sp2x8 once+sp1x16; do run small-$v 20 $tp --small --stress 2 --rs-pull --rs-owners $v; done
chk="$san --error-exitcode 7 --print-limit 20 --tool"
run memcheck 30 $chk memcheck $tp --small --stress 2 --rs-pull --rs-owners once+sp2x8
run racecheck 30 $chk racecheck $tp --small --stress 2 --rs-pull --rs-owners once+sp2x8
run synccheck 25 $chk synccheck $tp --small --stress 2 --rs-pull --rs-owners once+sp2x8
wait $spid
echo "A done at $(( $(date +%s) - start )) s" | tee -a "$out/logs/steps.txt"

# B: the benchmark, every variant beside the default in one process, the clocks sampled.
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv -lms 250 > "$out/logs/clocks.csv" 2>&1 &
smi=$!
run bench 90 $tp --stress 0 --tokens 4096,8192 --rs-only --rs-fused --rs-pull --rs-owners $V
run bench-4096-again 40 $tp --stress 0 --tokens 4096 --rs-only --rs-layers attn-out --rs-fused --rs-pull --rs-owners $V
kill $smi
echo "B done at $(( $(date +%s) - start )) s" | tee -a "$out/logs/steps.txt"

# C: ncu of rank 0's owner kernels at attn-out 4096 (launch order: fused check, pulled check,
# once check, once alone, fused check, fused alone, pulled check (streams waiting), pulled alone).
if [ -n "$ncu" ]; then
  run ncu 75 $ncu --clock-control none -k "regex:rs0of2_gated" -c 8 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters \
    --metrics gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    -o "$out/owners" -f $tp --stress 0 --tokens 4096 --rs-only --rs-layers attn-out --rs-fused --rs-pull --rs-owners once
  if [ -f "$out/owners.ncu-rep" ]; then
    timeout 20 $ncu -i "$out/owners.ncu-rep" --page details > "$out/logs/ncu-details.txt" 2>&1
    timeout 30 $ncu -i "$out/owners.ncu-rep" --page source --csv --print-source sass > /tmp/src.csv 2>"$out/logs/ncu-src-err.txt"
    python3 "$kit/stalls.py" /tmp/src.csv > "$out/logs/ncu-stalls.txt" 2>&1
  fi
fi
cd "$out" && tar czf logs.tgz logs && rm -rf logs/clocks.csv
echo "== summary ($(( $(date +%s) - start )) s)"
cat "$out/logs/steps.txt"
grep -h -E "^stress|ERROR SUMMARY|RACECHECK SUMMARY|differ" "$out"/logs/stress-*.txt "$out"/logs/small-*.txt "$out"/logs/*check.txt 2>/dev/null | cut -c1-300 | head -20
grep -h -E "gpu__time_duration|hmma|Duration|^  [a-z_]+.*\(132" "$out/logs/ncu-details.txt" 2>/dev/null | head -24
head -c 2500 "$out/logs/ncu-stalls.txt" 2>/dev/null
for f in bench bench-4096-again; do
  echo "== $f"; grep -A12 '^summary' "$out/logs/$f.txt" | sed -E 's/ \| rel err vs cuBLAS.*//' | cut -c1-1500
done
