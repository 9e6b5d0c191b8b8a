#!/usr/bin/env bash
# The decode attention's GPU steps (issue 31), in one device call:
#   benches/decode_gpu.sh KIT
# KIT holds the release `ptxkit`, the bench executable `bench-decode_attention`,
# decode_attention_torch.py, rows_torch.py and torch_timing.py. Steps: `ptxkit selftest --only
# decode` (every case's error shown), compute-sanitizer memcheck of the same check, the Rust
# bench (its criterion CPU benchmark filtered out), the torch peers (cuDNN, flash) on the same
# contiguous problems, and Nsight Compute on one launch of the FP8 kernel (32 x 16k,
# contiguous). Logs go to $OUT, a summary to stdout. About 2.5 minutes of device time.
set -u
. "$(dirname "$0")/gpu_steps.sh"
kit_start "$1" /tmp/decode-out bench-decode_attention
step "selftest decode"
PTXKIT_DECODE_PROGRESS=1 timeout 90 "$kit/ptxkit" selftest --only decode >"$out/selftest.txt" 2>&1
grep -vE "^case" "$out/selftest.txt" | tail -5
grep -E "^case" "$out/selftest.txt" | sort -g -k2 -t: | tail -3
step "memcheck selftest decode"
PTXKIT_DECODE_LIMIT_S=60 timeout 100 compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only decode >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
# The benches run whatever the check says (a failed case is in the log above; its times are
# then only times).
step "bench decode_attention"
timeout 150 "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/bench.txt" 2>&1
grep -E "^\||device|stopped" "$out/bench.txt"
step "torch peers"
(cd "$kit" && timeout 120 python3 decode_attention_torch.py) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
step "ncu e4m3 32x16k"
PTXKIT_DECODE_BENCH="32x16384 contiguous e4m3" timeout 90 ncu -k regex:decode_e4m3 -c 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SchedulerStats --section Occupancy \
  "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/ncu.txt" 2>&1
grep -E "Throughput|Duration|Warp Cycles|Stall|Eligible|Issued|Occupancy|Registers|Bandwidth" "$out/ncu.txt" | head -40
step done
