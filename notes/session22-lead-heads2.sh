#!/usr/bin/env bash
# Lead's call (session 22, issue 31) on the ring stage limits at every head dim
# (DecodeConfig::measured_stage_limit: 64 3 of any cache, 128 FP8 copies 3 and bf16 16-row page
# boxes 2, 256 FP8 4 and bf16 2): `ptxkit selftest --only decode` beside compute-sanitizer
# memcheck of every case, then two bench processes at head dims 64 and 256 (PTXKIT_DECODE_D) over
# the contiguous bf16 and FP8 caches and the bf16 16-token and FP8 16- and 64-token pages
# (shuffled), each also at the other stage counts up to the rule's (the rule's: the old default).
# Run as `DEADLINE_S=220 bash notes/session22-lead-heads2.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/heads22b "${DEADLINE_S:-220}"
step_at "selftest decode, memcheck of every case"
PTXKIT_DECODE_LIMIT_S=100 timeout 110 compute-sanitizer --tool memcheck \
  "$kit/ptxkit" selftest --only decode >"$L/memcheck.txt" 2>&1 &
run_within selftest 60 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
wait
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
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-200
grep -E "^(PASS|FAIL)" "$L/memcheck.txt" | cut -c1-160
grep -E "ERROR SUMMARY" "$L/memcheck.txt" | tail -2
echo "selftest case lines: $(grep -c '^case' "$L/selftest.txt"), _st $(grep '^case' "$L/selftest.txt" | grep -c '_st')"
for f in "$L"/bench-*.txt; do echo "$(basename $f) rows: $(grep -cE '^\| [0-9]+x' $f), failed: $(grep -c failed $f)"; done
