#!/usr/bin/env bash
# The decode attention's GPU steps (issue 31), in one device call:
#   benches/decode_gpu.sh KIT
# KIT holds the release `ptxkit`, the bench executable `bench-decode_attention`,
# decode_attention_torch.py and rows_torch.py. Steps: `ptxkit selftest --only decode` (every
# case's error shown), compute-sanitizer memcheck of the same check, the Rust bench, the torch
# peers (cuDNN, flash) on the same contiguous problems. Logs go to $OUT, a summary to stdout.
# About 2.5 minutes of device time.
set -u
. "$(dirname "$0")/gpu_steps.sh"
kit_start "$1" /tmp/decode-out bench-decode_attention
step "selftest decode"
PTXKIT_DECODE_PROGRESS=1 timeout 120 "$kit/ptxkit" selftest --only decode >"$out/selftest.txt" 2>&1
grep -vE "^case" "$out/selftest.txt" | tail -5
grep -E "^case" "$out/selftest.txt" | sort -t: -k2 | tail -3
step "memcheck selftest decode"
PTXKIT_DECODE_LIMIT_S=60 timeout 200 compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only decode >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
# The benches run whatever the check says (a failed case is in the log above; its times are
# then only times).
step "bench decode_attention"
timeout 300 "$kit/bench-decode_attention" --bench >"$out/bench.txt" 2>&1
grep -E "^\||device" "$out/bench.txt"
step "torch peers"
(cd "$kit" && timeout 200 python3 decode_attention_torch.py) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
step done
