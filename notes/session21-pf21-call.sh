#!/usr/bin/env bash
# (Session 21: its selftest step now calls benches/gpu_steps.sh's decode_selftest, its bench steps
# decode_benches; the same steps as ran.)
# Session 21, pf21 (issue 31): the cp.async copies' L2 prefetch size (DecodeConfig::l2_prefetch,
# `cp.async.cg.shared.global.L2::128B/256B`, kernel suffix `_l2p128`/`_l2p256`) on the FP8 pages
# copied by cp.async. Run from the repository root as `DEADLINE_S=140 bash
# .gpu-pf21/call.sh` (carry .gpu-pf21: `ptxkit.xz`, `bench-decode.xz`, stripped, xz;
# `decode_table.py`, `summary.py`). `ptxkit selftest --only decode` (every cp.async case also
# with a 128- or 256-byte prefetch size: the same bits), then bench processes over the
# contiguous FP8 cache and the FP8 16-token pages (shuffled, in order, as served) and 64-token
# pages (shuffled), each with and without the prefetch sizes, then ncu of 32 x 16k.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-pf21" /tmp/pf21 "${DEADLINE_S:-140}"
decode_selftest 45
rows='contiguous e4m3|paged 16 e4m3|paged 64 e4m3|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!MiB|!KiB|!touching'
decode_benches 32 "$rows"
# ncu at 32 x 16k, L2 flushed, clocks as they run: the contiguous cache and the shuffled
# 16-token pages with and without the prefetch sizes (DRAM bytes, L2 hits: does the 256-byte
# prefetch bring the neighbouring head's slice?).
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
ncu_rows='32x16384 contiguous e4m3|32x16384 paged 16 e4m3|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!MiB|!KiB|!touching|!in order|!as served'
step_at ncu
run_within ncu 25 env PTXKIT_DECODE_ONCE=1 PTXKIT_DECODE_BENCH="$ncu_rows" ncu --clock-control none \
  -k regex:decode_e4m3 --metrics $metrics "$kit/bench-decode" --bench gpu_rows_only
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-300
echo "l2p case lines: $(grep '^case' "$L/selftest.txt" | grep -c '_l2p')"
for r in 1 2 3; do
  [ -f "$L/bench-$r.txt" ] || continue
  echo "bench $r rows: $(grep -cE '^\| [0-9]+x' "$L/bench-$r.txt"); failed: $(grep -c failed "$L/bench-$r.txt")"
  grep failed "$L/bench-$r.txt" | head -2
done
python3 "$kit/summary.py" "$L"/bench-*.txt
grep -E "decode_e4m3|gpu__time|dram__|lts__" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | cut -c1-120 | head -60
