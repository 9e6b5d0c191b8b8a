#!/usr/bin/env bash
# Lead's call (session 22, issue 31): the ring stage limits at head dims 64 and 256, where the
# defaults have none (DecodeConfig::stage_limit is set at 128 only): two bench processes at each
# head dim (PTXKIT_DECODE_D) over the contiguous bf16 and FP8 caches and the bf16 16-token and FP8
# 16- and 64-token pages (shuffled), each also at 2, 3, 4, 6, 8 and 12 stages up to the rule's.
# Run as `DEADLINE_S=200 bash notes/session22-lead-heads.sh` (carry .gpu-solo: bench-decode.xz).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/heads22 "${DEADLINE_S:-200}"
rows='contiguous|paged 16|paged 64 e4m3|!as served|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits'
for d in 64 256; do
  for i in 1 2; do
    step_at "d $d bench $i"
    run_within "bench-d$d-$i" 45 env PTXKIT_DECODE_D=$d PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
  done
done
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
for f in "$L"/bench-*.txt; do echo "$(basename $f) rows: $(grep -cE '^\| [0-9]+x' $f), failed: $(grep -c failed $f)"; grep -m1 "device:" $f; done
