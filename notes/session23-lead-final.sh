#!/usr/bin/env bash
# Lead's final call (session 23, issue 31) on a candidate (its FP8 limit not kept: BENCHMARKS.md,
# main has the rest): the folded combine 4 columns a
# thread, every split launch folded, and the contiguous FP8 cache at 3 stages (two CTAs an SM at
# the split problems, for the SM clock). `ptxkit selftest --only decode` beside memcheck of every
# case; the example (FP8, bf16); three bench processes at head dim 128 (the contiguous caches, the
# 16- and 64-token pages, the FP8 cache at its old 6 stages), torch's SDPA after each; ncu of one
# cold launch of the contiguous caches at the split problems, the clocks free and at base; the
# GPU's clocks and power logged. Run as `DEADLINE_S=300 bash notes/session23-lead-final.sh`
# (carry .gpu-final23: bench-decode.xz, ptxkit.xz, decode_paged.xz; decode_attention_torch.py,
# rows_torch.py, torch_timing.py).
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ncu_at: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-final23" /tmp/final23 "${DEADLINE_S:-300}"
gpu_log 100
decode_checked 110
step_at example
run_within example-fp8 20 "$kit/decode_paged"
run_within example-bf16 20 "$kit/decode_paged" --bf16
decode_benches 40 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!2 stages|!3 stages|!4 stages|!8 stages|!12 stages|!padded|!splits|!combine|!as served' 3 torch
rows='8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!clusters|!TMA|!cp.async|!stages|!splits'
for c in none base; do
  decode_ncu_at $c $c "$rows" 40
done
gpu_log_stop
pack
decode_checked_summary _fold
grep -hE "PASS|FAIL" "$L"/example-*.txt | cut -c1-200
decode_bench_counts
gpu_log_summary
python3 notes/session23-lead-clocks-summary.py "$L"
