#!/usr/bin/env bash
# Lead's call (session 23, issue 31): do two CTAs an SM make the split problems' kernels less
# sensitive to the SM clock than one? ncu times one cold launch each, the clocks free and at base:
# at 8 x 64k the contiguous bf16 cache at 2 splits (one CTA an SM, the default) and 4 (two), FP8
# at 2 and at 4 splits with 3 stages; at 1 x 128k the contiguous FP8 cache at 16 splits and at 33
# with 3 stages, bf16 at 16 and 32. Run as `DEADLINE_S=120 bash notes/session23-lead-clocks2.sh`
# (carry .gpu-verify23).
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ncu_at: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-verify23" /tmp/clocks23b "${DEADLINE_S:-120}"
rows='8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!clusters|!TMA|!cp.async|!e4m3, 2 stages|!e4m3, 3 stages|!e4m3, 4 stages|!contiguous, 2 stages'
for r in 1 2; do
  for c in none base; do
    decode_ncu_at $c $c-$r "$rows" 40
  done
done
pack
python3 notes/session23-lead-clocks-summary.py "$L"
