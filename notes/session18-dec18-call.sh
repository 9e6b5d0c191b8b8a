#!/usr/bin/env bash
# Session 18, helper dec18: decode attention (issue 31), the one GPU call (200 s). Run from the
# kit (.gpu-dec18: the release `ptxkit` and bench `bench-decode_attention` of branch dec18, xz
# compressed, and the torch peer scripts), every step under `timeout`, a step only while its
# deadline has not passed:
#   cd .gpu-dec18 && timeout 196 bash ./session18-dec18-call.sh
# Logs under $OUT: summary (this script's stdout), selftest, memcheck (the FP8 cases, the
# table-window kernels instrumented), bench-1 and bench-2 (two processes of the same rows, torch
# between them), torch, ncu-32x16k (the FP8 kernels' duration, DRAM, L2 sectors and requests,
# instructions, stalls and the SMs' active cycles: the tail), ncu-128k (1 x 128k contiguous FP8
# and bf16: where the FP8 kernel's time goes).
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/dec18-out}
mkdir -p "$out"
cd "$kit" || exit 1
begin=$(date +%s)
step() { echo "== $1 ($(date +%T), $(($(date +%s) - begin)) s)"; }
left() { [ $(($(date +%s) - begin)) -lt "$1" ] || { echo "(past $1 s: $2 skipped)"; return 1; }; }
xz -d -T4 ptxkit.xz bench-decode_attention.xz 2>&1
chmod +x ptxkit bench-decode_attention
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader

step "selftest decode; memcheck of the FP8 cases, the table-window kernels instrumented"
PTXKIT_DECODE_CASES=fp8 PTXKIT_DECODE_LIMIT_S=50 timeout 60 compute-sanitizer --tool memcheck \
  --kernel-name kns=_tw ./ptxkit selftest --only decode >"$out/memcheck.txt" 2>&1 &
PTXKIT_DECODE_PROGRESS=1 timeout 50 ./ptxkit selftest --only decode >"$out/selftest.txt" 2>&1
grep -vE "^case" "$out/selftest.txt" | tail -4
grep -E "^case" "$out/selftest.txt" | sort -g -k2 -t: | tail -2
wait
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4

# The rows: bf16 and FP8 contiguous caches, 16- and 64-token pages (shuffled, FP8 16 also in
# order and as served), the table-window rows and the cp.async rows at one CTA an SM.
rows='x|!evict-first|!plain combine|!folded|!one-CTA|!ordinary launch|!splits|!2 MiB|!64 KiB|!128 e4m3|!256 e4m3|!TMA boxes|!contiguous e4m3, cp.async'
for round in 1 2; do
  left $((40 + 50 * round)) "bench $round" && step "bench round $round" &&
    PTXKIT_DECODE_BENCH="$rows" timeout 40 ./bench-decode_attention --bench gpu_rows_only >"$out/bench-$round.txt" 2>&1
  grep -cE "^\| [0-9]" "$out/bench-$round.txt"
  if [ $round = 1 ]; then
    left 115 torch && step "torch peers" && timeout 30 python3 decode_attention_torch.py >"$out/torch.txt" 2>&1
    tail -6 "$out/torch.txt"
  fi
done

# ncu at 32 x 16k, FP8, clocks as they run, L2 flushed: the contiguous cache, 16-token pages
# (the default, the table window), shuffled and as served.
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__issue_active.avg.pct_of_peak_sustained_active
ncu_rows='32x16384 contiguous e4m3|32x16384 paged 16 e4m3|!evict-first|!cp.async|!in order|!2 MiB|!64 KiB|!splits|!one-CTA|!ordinary|!TMA'
left 165 ncu && step "ncu e4m3 32x16k" &&
  PTXKIT_DECODE_ONCE=1 PTXKIT_DECODE_BENCH="$ncu_rows" timeout 22 ncu --clock-control none -k regex:decode_e4m3 --metrics $metrics \
    ./bench-decode_attention --bench gpu_rows_only >"$out/ncu-32x16k.txt" 2>&1
grep -E "decode_e4m3|gpu__time|dram__|lts__|inst_executed|long_scoreboard|cycles_|issue_active" "$out/ncu-32x16k.txt" | grep -v "^==PROF" | head -80
# 1 x 128k contiguous, FP8 and bf16: the pipes, issue and the warps' stall reasons.
left 178 "ncu 128k" && step "ncu 1x128k contiguous" &&
  PTXKIT_DECODE_ONCE=1 PTXKIT_DECODE_BENCH='1x131072 contiguous|!evict-first|!folded|!plain|!splits|!one-CTA|!ordinary|!cp.async' timeout 14 ncu --clock-control none -k regex:decode_ \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    ./bench-decode_attention --bench gpu_rows_only >"$out/ncu-128k.txt" 2>&1
grep -E "decode_|Duration|DRAM Throughput|Issue Active|Issued Warp|Eligible|Warp Cycles Per Issued|Pipe Tensor|Pipe Alu|Pipe Fma " "$out/ncu-128k.txt" | grep -v "^==PROF" | head -40
step done
