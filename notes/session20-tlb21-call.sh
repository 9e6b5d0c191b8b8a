#!/usr/bin/env bash
# Session 20, tlb21 (issue 31): the page touch (DecodeConfig::touch_pages: each cp.async producer
# warp prefetches into L2 one line of the page its copies read N tiles later, so the address
# translation of a shuffled page is taken off the copies' path). Run from the repository root as
# `DEADLINE_S=110 bash .gpu-tlb21/call.sh` (carry .gpu-tlb21). Kit (.gpu-tlb21/, from branch
# tlb21's release build): ptxkit.xz, bench-decode.xz (decode_attention, stripped, xz), summary.py
# (notes/session20-tlb21-summary.py), call.sh (this file).
# 1. `ptxkit selftest --only decode` (every cp.async case also touching 8 or 24 tiles ahead:
#    the same bits); 2. one bench process: contiguous e4m3, 16-token e4m3 pages shuffled and as
#    served, each without and with the touch 4 and 16 tiles ahead, the four problems;
# 3. the summary last: paged / contiguous cold and back to back, the touch against none.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-tlb21" /tmp/tlb21 "${DEADLINE_S:-110}"
rows='contiguous e4m3|paged 16 e4m3|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!in order|!MiB|!KiB'
step_at "selftest decode"
run_within selftest 55 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
pack
step_at "bench"
run_within bench 45 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL|SKIP)|panicked|rror" "$L/selftest.txt" | cut -c1-300 | tail -4
echo "selftest case lines: $(grep -c '^case' "$L/selftest.txt"), of them with a touched kernel (_pt) the same bits: $(grep '^case' "$L/selftest.txt" | grep -c '_pt[0-9]')"
echo "bench table rows: $(grep -cE '^\| [0-9]+x' "$L/bench.txt") (want 7 rows x 4 problems x 3 repeats = 84); failed: $(grep -c 'failed' "$L/bench.txt")"
python3 "$kit/summary.py" "$L/bench.txt"
