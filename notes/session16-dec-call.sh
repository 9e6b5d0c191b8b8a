#!/usr/bin/env bash
# Session 16, dec16 (issue 29): the one GPU call. Binaries from branch dec16 (release: the
# gemm_decode bench and the gemm_hopper example), carried in .gpu-dec16 as .xz. Each step under
# its own `timeout`, bounded by what is left of the call's 210 s; the logs are packed into
# $OUT/dec16-logs.tgz after every step (at most 8 files come back). ncu_rows.py is
# notes/session16-dec-ncu-rows.py; the step limits (cap) left the large shapes too little.
set -uo pipefail
K=.gpu-dec16
START=$(date +%s); END=$((START + 208))
out="${OUT:-/tmp/dec16}"; mkdir -p "$out"; L=/tmp/L; mkdir -p $L
export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
for f in $K/*.xz; do timeout 20 xz -dkf "$f"; done
chmod +x $K/gemm_decode $K/gemm_hopper $K/ncu_rows.py
pack() { timeout 20 tar czf "$out/dec16-logs.tgz" -C /tmp L 2>/dev/null; }
# cap: a step's limit, at most $1 s and what is left before the end less $2 s kept for later steps.
cap() { local left=$((END - $(date +%s) - $2)); [ $left -lt $1 ] && echo $((left > 3 ? left : 3)) || echo $1; }
step() { echo "== $1 ($(( $(date +%s) - START )) s)" | tee -a $L/steps.txt; }
timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $L/device.txt
step "gemm_hopper --small (poisoned C; the split pairs among its variants)"
timeout $(cap 20 180) $K/gemm_hopper --small > $L/checks-hopper.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
echo "ok $(grep -cE ' ok$' $L/checks-hopper.txt), FAIL $(grep -c FAIL $L/checks-hopper.txt)" | tee -a $L/steps.txt; pack
step "DECODE_CHECK_ONLY=pairs gemm_decode (pairs and split pairs, bit for bit)"
DECODE_CHECK_ONLY=pairs timeout $(cap 20 160) $K/gemm_decode > $L/checks-pairs.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
echo "PASS $(grep -c PASS $L/checks-pairs.txt), FAIL $(grep -c FAIL $L/checks-pairs.txt)" | tee -a $L/steps.txt; pack
# A split pair that failed or hung (no "done" line: the checks print the occupancy lines last)
# stays out of every later step.
if grep -q "pingpong_splitk.*FAIL" $L/checks-pairs.txt $L/checks-hopper.txt || ! grep -q "occupancy" $L/checks-pairs.txt; then
  export DECODE_SKIP=pingpong_splitk; echo "DECODE_SKIP=$DECODE_SKIP" | tee -a $L/steps.txt
fi
step "memcheck: the split pairs and their sums (kns=splitk)"
DECODE_CHECK_ONLY=pairs timeout $(cap 30 135) compute-sanitizer --tool memcheck --kernel-name kns=splitk \
  $K/gemm_decode > $L/memcheck.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -E "ERROR SUMMARY" $L/memcheck.txt | tail -1 | tee -a $L/steps.txt; echo "PASS $(grep -c PASS $L/memcheck.txt)" | tee -a $L/steps.txt; pack
step "decode table: M 1, 16, 64, 128, bf16 and e4m3 (runs 1 and 2)"
DECODE_NO_CHECKS=1 DECODE_DTYPE=bf16 timeout $(cap 45 90) $K/gemm_decode > $L/table-bf16.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -c "^| " $L/table-bf16.txt | tee -a $L/steps.txt; pack
DECODE_NO_CHECKS=1 DECODE_DTYPE=e4m3 timeout $(cap 45 60) $K/gemm_decode > $L/table-e4m3.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -c "^| " $L/table-e4m3.txt | tee -a $L/steps.txt; pack
step "large shapes 4096^3, 6144^3, 8192^3 (runs 1 and 2)"
DECODE_LARGE=1 DECODE_NO_CHECKS=1 DECODE_SHAPE=4096x4096x4096,6144x6144x6144,8192x8192x8192 \
  timeout $(cap 20 42) $K/gemm_decode > $L/large.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt; pack
step "ncu: ours (the pick) and the baseline at every row below 1.0"
cat $L/table-bf16.txt $L/table-e4m3.txt > $L/table.txt; timeout 10 python3 $K/ncu_rows.py $L/table.txt > $L/ncu-rows.txt 2>&1; cat $L/ncu-rows.txt | tee -a $L/steps.txt
for dtype in bf16 e4m3; do
  shapes=$(grep "^$dtype " $L/ncu-rows.txt | awk '{print $2}' | paste -sd,)
  picks=$(grep "^$dtype " $L/ncu-rows.txt | awk '{print $2"="$3}' | paste -sd,)
  [ -z "$shapes" ] && continue
  DECODE_PROFILE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=$dtype DECODE_SHAPE=$shapes DECODE_PICK=$picks \
    timeout $([ $dtype = bf16 ] && cap 30 18 || cap 30 2) ncu --clock-control none --metrics \
    gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
    $K/gemm_decode > $L/ncu-$dtype.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
  grep -c "gpu__time_duration" $L/ncu-$dtype.txt | tee -a $L/steps.txt; pack
done
step done; pack
