#!/usr/bin/env bash
# Lead's call (session 21, issue 31) on main with the KV heads' CTAs in pairs the FP8 default
# (DecodeConfig::cluster_heads = 2 from `with_fp8`; a pair past an odd count of KV heads ends its
# second CTA at once). Run from the repository root as `DEADLINE_S=130 bash
# notes/session21-lead-pairs.sh` (carry .gpu-pairs: `ptxkit.xz`, `bench-decode.xz`, stripped, xz;
# `decode_table.py`, `summary.py`). `ptxkit selftest --only decode` (every case paired and not,
# the FP8 cases with one KV head among them: the same bits), then three bench processes over the
# contiguous bf16 and FP8 caches and the FP8 16-token pages (shuffled, as served), the FP8 rows
# with the default (pairs) and unclustered.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-pairs" /tmp/pairs21 "${DEADLINE_S:-130}"
decode_selftest 45
rows='contiguous|paged 16 e4m3|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!in order|!MiB|!KiB|!touching|!L2 prefetch|!clusters of'
decode_benches 26 "$rows"
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-200
echo "case lines: paired $(grep '^case' "$L/selftest.txt" | grep -c '_ch2'), in 4s $(grep '^case' "$L/selftest.txt" | grep -c '_ch4')"
decode_bench_counts
python3 "$kit/summary.py" "$L"/bench-*.txt
