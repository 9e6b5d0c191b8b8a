#!/usr/bin/env bash
# The decode attention's GPU steps (issue 31), in one device call:
#   benches/decode_gpu.sh KIT
# KIT holds the release `ptxkit`, the bench executable `bench-decode_attention`,
# decode_attention_torch.py, rows_torch.py and torch_timing.py. Steps: `ptxkit selftest --only
# decode` (every case's error shown) beside compute-sanitizer memcheck of its cases chosen by
# `MEMCHECK_CASES` (`PTXKIT_DECODE_CASES`: `fp8` unless set, the FP8 caches with TMA boxes and
# with cp.async page loads; `fold`: the splits' combine three ways; `all`: every case;
# `MEMCHECK_KERNELS`, when set, the kernel names whose launches it checks; `MEMCHECK_S` its
# time limit, 60 s unless set), the Rust bench (its
# criterion CPU benchmark filtered out; `BENCH_ROWS`, when set, is its `PTXKIT_DECODE_BENCH`
# filter), the torch peers (cuDNN, flash) on the same contiguous problems, then Nsight Compute
# on one launch of each kept row (`PTXKIT_DECODE_ONCE`): its memory sections (with the L1, L2
# and DRAM tables: requests, sectors a request; `--print-details all`, without which session 15's
# call printed no table), scheduler sections, stall reasons and
# shared-memory bank conflicts, instructions executed on the FP8 kernels at 32 x 16k
# (`NCU_ROWS`, unless set the contiguous cache and the 16-token pages at their default loads,
# shuffled), and the kernels' durations
# with their SMs' active cycles (average and most: the ramp and tail), DRAM throughput and
# bytes read and written (clocks as they run) at 1 x 128k on the contiguous caches
# (`DURATION_ROWS`, unless set the launcher's kernels and the kernels built for one CTA an
# SM), twice: the L2 flushed clean by ncu, and after the cold timing's clear (ncu's cache
# control off, `PTXKIT_DECODE_ONCE=cold`: the clear's dirty lines in L2).
# Logs go to $OUT, a summary to stdout. A step starts only while less than `DEADLINE` seconds
# (150 unless set) have passed.
set -u
. "$(dirname "$0")/gpu_steps.sh"
kit_start "$1" /tmp/decode-out bench-decode_attention
begin=$(date +%s)
left() { [ $(($(date +%s) - begin)) -lt "${DEADLINE:-150}" ] || { echo "(past the deadline: $1 skipped)"; return 1; }; }
step "selftest decode, memcheck of the ${MEMCHECK_CASES:-fp8} cases"
PTXKIT_DECODE_CASES=${MEMCHECK_CASES:-fp8} PTXKIT_DECODE_LIMIT_S=50 timeout "${MEMCHECK_S:-60}" compute-sanitizer --tool memcheck ${MEMCHECK_KERNELS:+--kernel-name "kns=$MEMCHECK_KERNELS"} "$kit/ptxkit" selftest --only decode >"$out/memcheck.txt" 2>&1 &
PTXKIT_DECODE_PROGRESS=1 timeout 60 "$kit/ptxkit" selftest --only decode >"$out/selftest.txt" 2>&1
grep -vE "^case" "$out/selftest.txt" | tail -5
grep -E "^case" "$out/selftest.txt" | sort -g -k2 -t: | tail -3
wait
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
# The benches run whatever the check says (a failed case is in the log above; its times are
# then only times).
left bench && step "bench decode_attention" &&
  PTXKIT_DECODE_BENCH="${BENCH_ROWS:-}" timeout "${BENCH_S:-120}" "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/bench.txt" 2>&1
grep -E "^\||device|stopped" "$out/bench.txt"
left torch && step "torch peers" &&
  (cd "$kit" && timeout 60 python3 decode_attention_torch.py) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
left "ncu e4m3" && step "ncu e4m3 32x16k, one launch a row" &&
  PTXKIT_DECODE_ONCE=1 PTXKIT_DECODE_BENCH="${NCU_ROWS:-32x16384 contiguous e4m3|32x16384 paged 16 e4m3|!evict-first|!TMA boxes|!cp.async|!in order|!2 MiB|!64 KiB|!ordinary launch}" timeout "${NCU_S:-60}" ncu -k regex:decode_e4m3 --print-details all \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats \
    --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_bytes.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_lsu.sum \
    "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/ncu-e4m3.txt" 2>&1
grep -E "decode_e4m3|Duration|DRAM Throughput|L2 Cache Throughput|Issued Warp|dram__bytes_read|lts__t_sectors|bank_conflicts|stalled|inst_executed" "$out/ncu-e4m3.txt" | grep -v "^|" | head -120
durations="${DURATION_ROWS:-1x131072 contiguous|!evict-first|!folded|!plain combine|!splits|!cp.async}"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_elapsed.max
for how in flushed cold; do
  case $how in
    flushed) once=1; cache=all ;;
    cold) once=cold; cache=none ;;
  esac
  left "ncu durations $how" && step "ncu durations, L2 $how, one launch a row" &&
    PTXKIT_DECODE_ONCE=$once PTXKIT_DECODE_BENCH="$durations" timeout "${DURATIONS_S:-45}" ncu --clock-control none --cache-control $cache -k regex:decode \
      --metrics $metrics "$kit/bench-decode_attention" --bench gpu_rows_only >"$out/ncu-durations-$how.txt" 2>&1
  grep -E "decode_|gpu__time|sm__cycles|dram__throughput|dram__bytes" "$out/ncu-durations-$how.txt" | grep -v "^|" | head -150
done
step done
