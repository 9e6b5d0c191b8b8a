#!/usr/bin/env bash
# Lead's final call (session 20) on merged main, run from the repository root as
# `DEADLINE_S=280 bash notes/session20-lead-final.sh` (carry .gpu-final: `ptxkit.xz`,
# `bench-decode.xz`, `bench-fp8block.xz`, `bench-epi.xz`, stripped and xz-compressed, and
# tlb21's `summary.py`). Steps, most needed first: the block-scaled decode rule's pick at all 24
# decode shapes against the f64 reference (`FP8_BLOCK_SPLIT=checks-rule`, C poisoned); the
# selftest's block-scaled, epilogue and decode checks, one process each; tlb21's page-touch rows
# (FP8 16-token pages shuffled and as served, touching 4 and 16 tiles ahead, beside none and the
# contiguous cache); the fused epilogue's default against the plain GEMM at 4096³ and 8192³.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-final" /tmp/final20 "${DEADLINE_S:-280}"
step_at "block-scaled rule checks"
run_within rule-checks 60 env FP8_BLOCK_CHECKS=0 FP8_BLOCK_SPLIT=checks-rule "$kit/bench-fp8block"
step_at selftest
for c in gemm_fp8_block gemm_grouped_fp8_block gemm_epilogue tile_epilogue decode; do
  run_within "selftest-$c" 60 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only "$c"
done
pack
step_at "decode page touch"
rows='contiguous e4m3|paged 16 e4m3|!table|!TMA|!cp.async|!evict|!ordinary|!one-CTA|!splits|!folded|!plain|!in order|!MiB|!KiB'
run_within bench-decode 45 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
pack
D="epilogue warps, staged"
step_at "epilogue 4096"
run_within epi-4096 45 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=5 GEMM_EPILOGUE_SCHEDULES="$D" "$kit/bench-epi"
step_at "epilogue 8192"
run_within epi-8192 35 env GEMM_EPILOGUE_SIZES=8192 GEMM_EPILOGUE_ROUNDS=2 GEMM_EPILOGUE_SCHEDULES="$D" "$kit/bench-epi"
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
echo "rule checks: $(grep -c PASS "$L/rule-checks.txt") PASS, $(grep -c FAIL "$L/rule-checks.txt") FAIL"
grep -iE "fail|error|panick" "$L/rule-checks.txt" | head -5
for c in gemm_fp8_block gemm_grouped_fp8_block gemm_epilogue tile_epilogue decode; do
  grep -hE "^(PASS|FAIL|SKIP)" "$L/selftest-$c.txt" | cut -c1-160 || true
  grep -qE "^(PASS|FAIL|SKIP)" "$L/selftest-$c.txt" || echo "NONE $c"
done
echo "decode touched same-bits case lines: $(grep '^case' "$L/selftest-decode.txt" | grep -c '_pt[0-9]')"
echo "decode bench rows: $(grep -cE '^\| [0-9]+x' "$L/bench-decode.txt") (want 84); failed: $(grep -c 'failed' "$L/bench-decode.txt")"
python3 "$kit/summary.py" "$L/bench-decode.txt"
for f in epi-4096 epi-8192; do
  echo "-- $f"
  grep -h "^| [0-9]" "$L/$f.txt" | grep -v '| bits |' | awk -F'|' '{gsub(/ +$/,"",$3); gsub(/ +$/,"",$4); k=$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sort
done
