#!/usr/bin/env bash
# Lead's last call (session 21, issue 31): compute-sanitizer memcheck of the decode selftest's FP8
# cases with the KV heads' CTAs in pairs the FP8 default (every case also unpaired, the one-KV-head
# cases' second CTA of the pair ending at once). Run from the repository root as `bash
# notes/session21-lead-pairs-memcheck.sh` (carry .gpu-pairs, the kit of notes/session21-lead-pairs.sh).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-pairs" /tmp/pairs21m "${DEADLINE_S:-100}"
step_at "memcheck of the FP8 cases"
run_within memcheck 90 env PTXKIT_DECODE_CASES=fp8 PTXKIT_DECODE_LIMIT_S=80 compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only decode
pack
echo "== summary ($(($(date +%s) - start)) s)"
grep -E "^(PASS|FAIL)" "$L/memcheck.txt" | cut -c1-160
grep -E "ERROR SUMMARY" "$L/memcheck.txt" | tail -2
echo "case lines: $(grep -c '^case' "$L/memcheck.txt"), paired $(grep '^case' "$L/memcheck.txt" | grep -c '_ch2')"
