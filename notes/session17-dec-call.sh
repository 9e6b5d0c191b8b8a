#!/usr/bin/env bash
# Session 17, dec17 (issue 29): the one GPU call. Binaries from branch dec17 (release, stripped:
# the gemm_decode bench and the gemm_hopper example), carried in .gpu-dec17 as .xz. Each step
# under its own `timeout`, bounded by what is left of the call's 216 s; the logs are packed into
# $OUT/dec17-logs.tgz after every step. ncu_rows.py / ncu_summary.py are session 16's
# (notes/session16-dec-ncu-*.py).
set -uo pipefail
K=.gpu-dec17
START=$(date +%s); END=$((START + 216))
out="${OUT:-/tmp/dec17}"; mkdir -p "$out"; L=/tmp/L; mkdir -p $L
export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
for f in $K/*.xz; do timeout 30 xz -T0 -dkf "$f"; done
chmod +x $K/gemm_decode $K/gemm_hopper
pack() { timeout 10 tar czf "$out/dec17-logs.tgz" -C /tmp L 2>/dev/null; }
# cap: a step's limit, at most $1 s and what is left before the end less $2 s kept for later steps.
cap() { local left=$((END - $(date +%s) - $2)); [ $left -lt $1 ] && echo $((left > 3 ? left : 3)) || echo $1; }
step() { echo "== $1 ($(( $(date +%s) - START )) s)" | tee -a $L/steps.txt; }
timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $L/device.txt
step "gemm_hopper --small (poisoned C; the fixup variants among them)"
timeout $(cap 15 190) $K/gemm_hopper --small > $L/checks-hopper.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
echo "ok $(grep -cE ' ok$' $L/checks-hopper.txt), FAIL $(grep -c FAIL $L/checks-hopper.txt)" | tee -a $L/steps.txt; pack
step "DECODE_CHECK_ONLY=fixup gemm_decode (the one-launch splits, poisoned C; fixup == second launch bit for bit)"
DECODE_CHECK_ONLY=fixup timeout $(cap 25 170) $K/gemm_decode > $L/checks-fixup.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
echo "PASS $(grep -c PASS $L/checks-fixup.txt), FAIL $(grep -c FAIL $L/checks-fixup.txt)" | tee -a $L/steps.txt; pack
step "memcheck: the one-launch splits (kns=fixup)"
DECODE_CHECK_ONLY=fixup timeout $(cap 35 145) compute-sanitizer --tool memcheck --kernel-name kns=fixup \
  $K/gemm_decode > $L/memcheck.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -E "ERROR SUMMARY" $L/memcheck.txt | tail -1 | tee -a $L/steps.txt; echo "PASS $(grep -c PASS $L/memcheck.txt), FAIL $(grep -c FAIL $L/memcheck.txt)" | tee -a $L/steps.txt; pack
step "decode table: M 1, 16, 64, 128, bf16 then e4m3 (runs 1 and 2, each interleaved with the baseline)"
DECODE_NO_CHECKS=1 DECODE_DTYPE=bf16 timeout $(cap 55 85) $K/gemm_decode > $L/table-bf16.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -c "^| " $L/table-bf16.txt | tee -a $L/steps.txt; pack
step "e4m3"
DECODE_NO_CHECKS=1 DECODE_DTYPE=e4m3 timeout $(cap 55 30) $K/gemm_decode > $L/table-e4m3.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -c "^| " $L/table-e4m3.txt | tee -a $L/steps.txt; pack
step "ncu: ours (the pick) and the baseline at the rows below 1.0"
cat $L/table-bf16.txt $L/table-e4m3.txt > $L/table.txt; timeout 10 python3 $K/ncu_rows.py $L/table.txt > $L/ncu-rows.txt 2>&1; cat $L/ncu-rows.txt | tee -a $L/steps.txt
for dtype in e4m3 bf16; do
  shapes=$(grep "^$dtype " $L/ncu-rows.txt | head -5 | awk '{print $2}' | paste -sd,)
  picks=$(grep "^$dtype " $L/ncu-rows.txt | head -5 | awk '{print $2"="$3}' | paste -sd,)
  [ -z "$shapes" ] && continue
  DECODE_PROFILE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=$dtype DECODE_SHAPE=$shapes DECODE_PICK=$picks \
    timeout $([ $dtype = e4m3 ] && cap 30 12 || cap 30 1) ncu --clock-control none --metrics \
    gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
    $K/gemm_decode > $L/ncu-$dtype.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
  timeout 5 python3 $K/ncu_summary.py $L/ncu-$dtype.txt > $L/ncu-summary-$dtype.txt 2>&1
  grep -c "gpu__time_duration" $L/ncu-$dtype.txt | tee -a $L/steps.txt; pack
done
step done; pack
