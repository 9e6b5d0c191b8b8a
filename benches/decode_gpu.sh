#!/usr/bin/env bash
# The decode attention's GPU steps (issue 31), in one device call:
#   benches/decode_gpu.sh KIT
# KIT holds the release `ptxkit`, the bench executable `bench-decode_attention`,
# decode_attention_torch.py, rows_torch.py and torch_timing.py. Steps: `ptxkit selftest --only
# decode` (every case's error shown) beside compute-sanitizer memcheck of its cases that run the
# splits' combine both ways (`PTXKIT_DECODE_CASES=fold`), the Rust bench (its criterion CPU
# benchmark filtered out), the torch peers (cuDNN, flash) on the same contiguous problems,
# Nsight Compute's kernel durations (clocks as they run, L2 flushed clean) of the 1 x 128k
# calls, and its sections on one launch of the FP8 kernel over 16-token pages (32 x 16k). Logs go
# to $OUT, a summary to stdout. A step starts only while less than `DEADLINE` seconds (150
# unless set) have passed. About 2.5 minutes of device time.
set -u
. "$(dirname "$0")/gpu_steps.sh"
kit_start "$1" /tmp/decode-out bench-decode_attention
begin=$(date +%s)
left() { [ $(($(date +%s) - begin)) -lt "${DEADLINE:-150}" ] || { echo "(past the deadline: $1 skipped)"; return 1; }; }
step "selftest decode, memcheck of the folded cases"
PTXKIT_DECODE_CASES=fold PTXKIT_DECODE_LIMIT_S=60 timeout 80 compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only decode >"$out/memcheck.txt" 2>&1 &
PTXKIT_DECODE_PROGRESS=1 timeout 60 "$kit/ptxkit" selftest --only decode >"$out/selftest.txt" 2>&1
grep -vE "^case" "$out/selftest.txt" | tail -5
grep -E "^case" "$out/selftest.txt" | sort -g -k2 -t: | tail -3
wait
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
# The benches run whatever the check says (a failed case is in the log above; its times are
# then only times).
left bench && step "bench decode_attention" &&
  timeout 100 "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/bench.txt" 2>&1
grep -E "^\||device|stopped" "$out/bench.txt"
left torch && step "torch peers" &&
  (cd "$kit" && timeout 60 python3 decode_attention_torch.py) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
left "ncu durations" && step "ncu durations 1x131072" &&
  PTXKIT_DECODE_BENCH="1x131072 contiguous" timeout 45 ncu --clock-control none -k regex:decode -c 200 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --print-summary per-kernel \
    "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/ncu-durations.txt" 2>&1
grep -E "decode_|gpu__time|dram__bytes" "$out/ncu-durations.txt" | grep -v "^|" | head -40
left "ncu paged" && step "ncu e4m3 32x16k paged 16" &&
  PTXKIT_DECODE_BENCH="32x16384 paged 16 e4m3" timeout 40 ncu -k regex:decode_e4m3 -c 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section WarpStateStats --section SchedulerStats --section Occupancy \
    "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/ncu-paged.txt" 2>&1
grep -E "Throughput|Duration|Warp Cycles|Stall|Eligible|Issued|Occupancy|Registers|Bandwidth|Hit Rate" "$out/ncu-paged.txt" | head -40
step done
