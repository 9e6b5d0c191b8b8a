#!/usr/bin/env bash
# Session 17, helper pdec17: decode attention (issue 31), the one GPU call. Run from the kit
# (.gpu-pdec17: the release `ptxkit` and bench `bench-decode_attention` of branch pdec17, the
# bench `bench-decode_attention-main` of main before it (session 16b's kernels), the torch peer
# scripts), every step under `timeout`, a step only while its deadline has not passed:
#   cd .gpu-pdec17 && timeout 198 bash ./session17-pdec-call.sh
# Logs under $OUT: summary (this script's stdout), selftest, memcheck, bench (pdec17's kernels),
# bench-main (main's kernels, the rows the page lookup touches), torch, ncu.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/pdec17-out}
mkdir -p "$out"
cd "$kit" || exit 1
chmod +x ptxkit bench-decode_attention bench-decode_attention-main
begin=$(date +%s)
step() { echo "== $1 ($(date +%T), $(($(date +%s) - begin)) s)"; }
left() { [ $(($(date +%s) - begin)) -lt "$1" ] || { echo "(past $1 s: $2 skipped)"; return 1; }; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader

step "selftest decode; memcheck of every case, every kernel instrumented"
PTXKIT_DECODE_LIMIT_S=50 timeout 70 compute-sanitizer --tool memcheck ./ptxkit selftest --only decode \
  >"$out/memcheck.txt" 2>&1 &
PTXKIT_DECODE_PROGRESS=1 timeout 50 ./ptxkit selftest --only decode >"$out/selftest.txt" 2>&1
grep -vE "^case" "$out/selftest.txt" | tail -4
grep -E "^case" "$out/selftest.txt" | sort -g -k2 -t: | tail -2
wait
grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4

# The rows: every cache and page load but the evict-first, plain-combine, folded, one-CTA-kernel
# and 2 MiB / 64 KiB placement rows (measured in sessions 14-16b).
rows='x|!evict-first|!plain combine|!folded|!one-CTA|!2 MiB|!64 KiB|!128 e4m3, cp.async|!256 e4m3, cp.async'
left 80 bench && step "bench, pdec17's kernels" &&
  PTXKIT_DECODE_BENCH="$rows" timeout 50 ./bench-decode_attention --bench gpu_rows_only >"$out/bench.txt" 2>&1

grep -cE "^\| [0-9]" "$out/bench.txt"
# main's kernels on the rows whose page lookup changed (and their contiguous caches).
old='contiguous|paged 16|paged 64|!evict-first|!plain combine|!folded|!one-CTA|!2 MiB|!64 KiB|!in order|!splits|!cp.async|!64 e4m3, TMA'
left 130 "bench main" && step "bench, main's kernels" &&
  PTXKIT_DECODE_BENCH="$old" timeout 30 ./bench-decode_attention-main --bench gpu_rows_only >"$out/bench-main.txt" 2>&1
grep -cE "^\| [0-9]" "$out/bench-main.txt"
left 160 torch && step "torch peers" &&
  timeout 25 python3 decode_attention_torch.py >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
# ncu at 32 x 16k, FP8: the contiguous cache (TMA), 16-token pages (cp.async, and TMA boxes) on
# pdec17's kernels, and 16-token pages (cp.async) on main's: duration, DRAM, instructions,
# long-scoreboard stalls.
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,sm__cycles_active.avg
ncu_rows='32x16384 contiguous e4m3|32x16384 paged 16 e4m3|!evict-first|!cp.async|!in order|!2 MiB|!64 KiB|!splits|!one-CTA|!dependent'
left 176 ncu && step "ncu e4m3 32x16k" && {
  PTXKIT_DECODE_ONCE=1 PTXKIT_DECODE_BENCH="$ncu_rows" timeout 14 ncu -k regex:decode_e4m3 --metrics $metrics \
    ./bench-decode_attention --bench gpu_rows_only >"$out/ncu.txt" 2>&1
  echo "== main's kernels" >>"$out/ncu.txt"
  PTXKIT_DECODE_ONCE=1 PTXKIT_DECODE_BENCH='32x16384 paged 16 e4m3|!evict-first|!TMA|!cp.async|!in order|!2 MiB|!64 KiB|!splits|!one-CTA' \
    timeout 8 ncu -k regex:decode_e4m3 --metrics $metrics ./bench-decode_attention-main --bench gpu_rows_only >>"$out/ncu.txt" 2>&1
}
grep -E "decode_e4m3|gpu__time|dram__|inst_executed|long_scoreboard|cycles_active|==" "$out/ncu.txt" | grep -v "^==PROF" | head -60
# A second process of pdec17's kernels on the rows the bars read, where time is left (the
# first's medians against a second run's).
left 150 "bench again" && step "bench again, pdec17's kernels, the bars' rows" &&
  PTXKIT_DECODE_BENCH='contiguous|paged 16|paged 64 e4m3|!evict-first|!plain combine|!folded|!one-CTA|!2 MiB|!64 KiB|!in order|!splits|!cp.async|!TMA' \
    timeout 25 ./bench-decode_attention --bench gpu_rows_only >"$out/bench-again.txt" 2>&1
grep -cE "^\| [0-9]" "$out/bench-again.txt"
step done
