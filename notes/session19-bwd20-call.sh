#!/usr/bin/env bash
# bwd20 (session 19, issue 30): the d256 preprocess's dQ-accumulator stores vectorized and whole
# sectors; one H200 call (bash .gpu-bwd20/call.sh from the repository root). Kit: `ptxkit` and
# `bench-new` (branch bwd20), `bench-old` (main's attention_backward bench), attention_torch.py,
# rows_torch.py, torch_timing.py.
#   1. `ptxkit selftest --only attention_backward` (every configuration, f16 `_red`/`_det` new, the
#      bad calls) as four processes side by side, split by PTXKIT_ATTENTION_MATCH;
#   2. timing alone: the new bench's `pre` (the preprocess kernel alone) and `bulk` at d128 and d256,
#      all six shapes each; torch's SDPA backward at d256 (flash, cuDNN); main's bench `bulk` at d256.
set -u
source benches/gpu_steps.sh
call_start "$(cd "$(dirname "$0")" && pwd)" /tmp/bwd20-out "${DEADLINE_S:-112}"

step_at "selftest attention_backward, four processes"
bg() { run_within "$@" >>"$L/rcs.txt" 2>&1 & }
for part in bf16_d64 bf16_d128 bf16_d256,f16_d256 f16_d64,f16_d128; do
  bg "selftest-${part//,/+}" 45 env PTXKIT_ATTENTION_MATCH="$part" PTXKIT_ATTENTION_PROGRESS=1 PTXKIT_ATTENTION_LIMIT_S=20 \
    "$kit/ptxkit" selftest --only attention_backward
done
wait
cat "$L/rcs.txt"

step_at "timing"
run_within bench-new 40 env PTXKIT_ATTENTION_SHAPE=128:,256: PTXKIT_ATTENTION_VARIANT=pre,bulk "$kit/bench-new" --bench gpu-only
run_within torch-bwd 25 bash -c "cd '$kit' && python3 -u attention_torch.py --backward --d256"
run_within bench-old 20 env PTXKIT_ATTENTION_SHAPE=256: PTXKIT_ATTENTION_VARIANT=bulk "$kit/bench-old" --bench gpu-only
(cd "$out" && tar czf logs.tgz logs)

step_at summary
echo "== steps"; sort "$L/rcs.txt" | tr '\n' ' '; echo
echo "== selftest"
for f in "$L"/selftest-*.txt; do
  echo "$(basename "$f" .txt): $(grep -hE '^(PASS|FAIL)' "$f" | cut -c1-170) | $(grep -cE '^case ' "$f") case lines, $(grep -cE '^case .*_det ' "$f") _det, $(grep -cE '^case attention_bwd_f16.*_(red|det) ' "$f") f16 red/det"
  grep -hE "differ|FAIL|Error|error" "$f" | head -3
done
echo "== new bench (pre = the preprocess alone)"; grep -E "^\|" "$L/bench-new.txt"
echo "== main's bench, d256"; grep -E "^\|" "$L/bench-old.txt"
echo "== torch d256"; grep -E "^\||device" "$L/torch-bwd.txt"
step_at done
