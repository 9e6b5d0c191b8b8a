#!/usr/bin/env bash
# Lead's decode-attention call (session 20, issue 31), run as `DEADLINE_S=170 bash
# notes/session20-lead-decode.sh` from the repository root: `ptxkit selftest --only decode` beside
# compute-sanitizer memcheck of its FP8 cases, then the decode bench's default rows (contiguous,
# 16- and 64-token pages shuffled and as served, bf16 and e4m3; five timings each, two of them new:
# `cleared, then another` and `another, then a small clear`) and torch's SDPA on the same
# problems, twice (two processes each). The kit (`.gpu-lead/`): `ptxkit.xz`, `bench-decode.xz`
# (stripped, xz-compressed), `decode_attention_torch.py` with `rows_torch.py`, `torch_timing.py`.
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-lead" /tmp/dec20 "${DEADLINE_S:-170}"
rows='contiguous|paged 16|paged 64|!,|!in order|!KiB|!MiB'
step_at "selftest decode, memcheck of its FP8 cases"
PTXKIT_DECODE_CASES=fp8 PTXKIT_DECODE_LIMIT_S=50 timeout 60 compute-sanitizer --tool memcheck \
  "$kit/ptxkit" selftest --only decode >"$L/memcheck.txt" 2>&1 &
run_within selftest 60 env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
wait
for i in 1 2; do
  step_at "bench $i"
  run_within "bench-$i" 50 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
  step_at "torch $i"
  (cd "$kit" && run_within "torch-$i" 40 python3 decode_attention_torch.py)
done
pack
echo "== summary"
cat "$L/device.txt"
grep -vE "^case" "$L/selftest.txt" | tail -3
grep -E "ERROR SUMMARY" "$L/memcheck.txt" | tail -2
for i in 1 2; do
  echo "-- bench $i"
  grep -E "^\| [0-9]" "$L/bench-$i.txt" | awk -F'|' '{printf "%s|%s|%s|%s|%s|%s|%s|%s\n", $2,$4,$5,$6,$9,$12,$13,$14}' | sort | uniq | head -100
  echo "-- torch $i"
  grep -vE "^\s*$" "$L/torch-$i.txt" | tail -12
done
