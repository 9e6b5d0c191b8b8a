#!/usr/bin/env bash
# Session 21, clu22 (issue 31): the KV heads' CTAs in clusters of 2, 4 and 8
# (DecodeConfig::cluster_heads, kernel suffix `_chN`). Run from the repository root as
# `DEADLINE_S=112 bash .gpu-clu22/call.sh` (carry .gpu-clu22: `ptxkit.xz`, `bench-decode.xz`,
# stripped, xz; `decode_table.py`, `summary.py`). `ptxkit selftest --only decode` (every case with
# an even KV head count also in clusters: the same bits), then bench processes over the
# contiguous FP8 cache and 16-token pages (FP8 shuffled and as served, bf16 shuffled), each
# unclustered and in clusters of 2, 4 and 8 heads.
# (Its bench steps now call benches/gpu_steps.sh's decode_benches and decode_bench_counts: the same
# steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-clu22" /tmp/clu22 "${DEADLINE_S:-112}"
decode_selftest 40
rows='contiguous e4m3|paged 16|!paged 16 as served|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!in order|!MiB|!KiB|!touching|!L2 prefetch'
decode_benches 30 "$rows"
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-300
echo "cluster case lines: $(grep '^case' "$L/selftest.txt" | grep -c '_ch[0-9]') (ch2 $(grep '^case' "$L/selftest.txt" | grep -c '_ch2'), ch4 $(grep '^case' "$L/selftest.txt" | grep -c '_ch4'), ch8 $(grep '^case' "$L/selftest.txt" | grep -c '_ch8'))"
decode_bench_counts
python3 "$kit/summary.py" "$L"/bench-*.txt
