#!/usr/bin/env bash
# Lead's verification call (session 22, issue 31) on main's candidate with launches of up to 16
# splits folded (DecodeConfig::fold_up_to; the launcher's folded kernels): `ptxkit selftest --only
# decode` (every case also with every split launch on the combine kernel: the same bits) beside
# compute-sanitizer memcheck of every case; three bench processes at head dim 128 over the
# contiguous caches (the default and the combine kernel for every split launch, the old default),
# the 16- and 64-token pages (shuffled, as served), each followed by torch's SDPA. Run as
# `DEADLINE_S=260 bash notes/session22-lead-verify.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/verify22 "${DEADLINE_S:-260}"
step_at "selftest decode, memcheck of every case"
PTXKIT_DECODE_LIMIT_S=100 timeout 110 compute-sanitizer --tool memcheck \
  "$kit/ptxkit" selftest --only decode >"$L/memcheck.txt" 2>&1 &
run_within selftest 60 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
wait
rows='contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!stages|!padded'
for i in 1 2 3; do
  step_at "bench $i"
  run_within "bench-$i" 40 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
  step_at "torch $i"
  (cd "$kit" && run_within "torch-$i" 40 python3 decode_attention_torch.py)
done
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-200
grep -E "^(PASS|FAIL)" "$L/memcheck.txt" | cut -c1-160
grep -E "ERROR SUMMARY" "$L/memcheck.txt" | tail -2
echo "selftest case lines: $(grep -c '^case' "$L/selftest.txt"), _fold $(grep '^case' "$L/selftest.txt" | grep -c '_fold')"
decode_bench_counts
