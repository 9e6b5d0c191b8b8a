#!/usr/bin/env bash
# (Session 21: its selftest step now calls benches/gpu_steps.sh's decode_selftest; the same step as ran.)
# Lead's call (session 20, issue 31, branch clu21): the KV heads' CTAs in clusters of 8
# (DecodeConfig::cluster_heads). Run from the repository root as `DEADLINE_S=110 bash
# notes/session20-lead-clu.sh` (carry .gpu-clu: `ptxkit.xz`, `bench-decode.xz`, stripped, xz).
# `ptxkit selftest --only decode` (every case with an even KV head count also in clusters: the
# same bits), then one bench process over the contiguous FP8 cache and 16-token pages (FP8
# shuffled and as served, bf16 shuffled) with and without clusters of 8 heads.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-clu" /tmp/clu20 "${DEADLINE_S:-110}"
decode_selftest 50
rows='contiguous e4m3|paged 16|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!in order|!MiB|!KiB|!touching'
step_at bench
run_within bench 50 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-200
echo "cluster case lines: $(grep '^case' "$L/selftest.txt" | grep -c '_ch[0-9]')"
echo "bench rows: $(grep -cE '^\| [0-9]+x' "$L/bench.txt"); failed: $(grep -c failed "$L/bench.txt")"
grep failed "$L/bench.txt" | head -3
python3 notes/session20-lead-clu-summary.py "$L/bench.txt"
