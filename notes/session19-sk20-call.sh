#!/usr/bin/env bash
# Session 19, sk20 (issue 29): stream-K's one GPU call (at most 150 s). gemm_decode from branch
# sk20, stripped and xz-compressed in .gpu-sk20. Steps, each under run_within and the call's
# deadline: (1) DECODE_CHECK_ONLY=stream-k: stream-K bf16 and e4m3 on fresh random data with C
# poisoned, and twice bit for bit; (2) DECODE_STREAM_K timing of stream-K against the pick
# without it and cuBLAS / cuBLASLt fast at a few decode rows; (3) compute-sanitizer memcheck on
# the stream-K kernels of step 1. Logs packed into $OUT/logs.tgz; a compact summary last.
set -u
source benches/gpu_steps.sh
call_start .gpu-sk20 /tmp/sk20 "${DEADLINE_S:-140}"
D=$kit/gemm_decode

step_at "checks"
run_within checks 35 env DECODE_CHECK_ONLY=stream-k $D; pack

step_at "timing"
SHAPES=1x6144x4096,16x4096x4096,1x2112x7168,64x2112x7168,128x7168x2048,64x7168x16384
run_within timing 45 env DECODE_STREAM_K=1 DECODE_NO_CHECKS=1 DECODE_SHAPE=$SHAPES $D; pack

step_at "memcheck"
run_within memcheck 55 env DECODE_CHECK_ONLY=stream-k compute-sanitizer --tool memcheck --kernel-name kns=streamk $D; pack

step_at "summary"
echo "--- checks"
grep -E "^check" "$L/checks.txt" | sed -E 's/gemm_//' | cut -c1-150
echo "PASS $(grep -c PASS "$L/checks.txt") FAIL $(grep -c FAIL "$L/checks.txt")"
echo "--- memcheck"
grep -E "ERROR SUMMARY|PASS|FAIL" "$L/memcheck.txt" | sort | uniq -c | sed -E 's/gemm_//' | cut -c1-150 | tail -20
echo "--- timing"
grep -E "streamk|^\| " "$L/timing.txt" | sed -E 's/gemm_//g' | cut -c1-330
tail -2 "$L/timing.txt"
