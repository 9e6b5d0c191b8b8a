#!/usr/bin/env bash
# Session 16b, dec16b (issue 29): the one GPU call. Binaries from branch dec16b (release: the
# gemm_decode bench and the gemm_hopper example), carried in .gpu-dec16b as .xz. Each step under
# its own `timeout`, bounded by what is left of the call's 200 s; the logs are packed into
# $OUT/dec16b-logs.tgz after every step. The large shapes run last with the most time left.
set -uo pipefail
K=.gpu-dec16b
START=$(date +%s); END=$((START + 194))
out="${OUT:-/tmp/dec16b}"; mkdir -p "$out"; L=/tmp/L; mkdir -p $L
export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
for f in $K/*.xz; do timeout 20 xz -dkf "$f"; done
chmod +x $K/gemm_decode $K/gemm_hopper
pack() { timeout 10 tar czf "$out/dec16b-logs.tgz" -C /tmp L 2>/dev/null; }
# cap: a step's limit, at most $1 s and what is left before the end less $2 s kept for later steps.
cap() { local left=$((END - $(date +%s) - $2)); [ $left -lt $1 ] && echo $((left > 3 ? left : 3)) || echo $1; }
step() { echo "== $1 ($(( $(date +%s) - START )) s)" | tee -a $L/steps.txt; }
timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $L/device.txt
step "gemm_hopper --small (poisoned C; CTA pairs and clusters among its variants)"
timeout $(cap 15 170) $K/gemm_hopper --small > $L/checks-hopper.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
echo "ok $(grep -cE ' ok$' $L/checks-hopper.txt), FAIL $(grep -c FAIL $L/checks-hopper.txt)" | tee -a $L/steps.txt; pack
step "DECODE_CHECK_ONLY=decode-widths gemm_decode (pairs, split pairs, clusters along N)"
DECODE_CHECK_ONLY=decode-widths timeout $(cap 25 150) $K/gemm_decode > $L/checks-decode.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
echo "PASS $(grep -c PASS $L/checks-decode.txt), FAIL $(grep -c FAIL $L/checks-decode.txt)" | tee -a $L/steps.txt; pack
# A cluster kernel that failed or hung stays out of every later step.
if grep -qE "(_c2|_n2).*FAIL" $L/checks-decode.txt $L/checks-hopper.txt || ! grep -q "occupancy" $L/checks-decode.txt; then
  export DECODE_SKIP=_c2,_n2; echo "DECODE_SKIP=$DECODE_SKIP" | tee -a $L/steps.txt
fi
step "memcheck: the CTA pairs (kns=_c2)"
DECODE_CHECK_ONLY=pairs timeout $(cap 25 125) compute-sanitizer --tool memcheck --kernel-name kns=_c2 \
  $K/gemm_decode > $L/memcheck.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -E "ERROR SUMMARY" $L/memcheck.txt | tail -1 | tee -a $L/steps.txt; echo "PASS $(grep -c PASS $L/memcheck.txt)" | tee -a $L/steps.txt; pack
step "decode table: M 1, 16, 64, 128, bf16 and e4m3 (runs 1 and 2), each row's gap timings"
DECODE_GAP=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=bf16 timeout $(cap 30 100) $K/gemm_decode > $L/table-bf16.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -c "^| " $L/table-bf16.txt | tee -a $L/steps.txt; pack
DECODE_GAP=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=e4m3 timeout $(cap 30 75) $K/gemm_decode > $L/table-e4m3.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt
grep -c "^| " $L/table-e4m3.txt | tee -a $L/steps.txt; pack
step "large shapes 4096^3, 6144^3, 8192^3, bf16 then e4m3 (runs 1 and 2)"
DECODE_LARGE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=bf16 DECODE_SHAPE=4096x4096x4096,6144x6144x6144,8192x8192x8192 \
  timeout $(cap 50 55) $K/gemm_decode > $L/large-bf16.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt; pack
DECODE_LARGE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=e4m3 DECODE_SHAPE=4096x4096x4096,6144x6144x6144,8192x8192x8192 \
  timeout $(cap 60 0) $K/gemm_decode > $L/large-e4m3.txt 2>&1; echo "rc $?" | tee -a $L/steps.txt; pack
step done; pack
