#!/usr/bin/env bash
# fin30 (session 19, issue 30): the final evidence call, one H200, everything under one deadline
# (`bash .gpu-fin30/call.sh` from the repository root; the kit in .gpu-fin30: main's `ptxkit`, the
# fin30 benches `bench-attention` (the forward over the whole grid) and `bench-attention_backward`,
# attention_torch.py, rows_torch.py, torch_timing.py, cudnn-ncu.py, summary.py).
#   B1. round 1: the forward bench (for_problem's pick, `default`) and the backward bench (the
#      default, `bulk`) over d64/d128/d256 x causal or not x 4x4096, 2x8192, 1x16384; then torch's
#      SDPA forward (flash, cuDNN, efficient) and backward (flash, cuDNN) on the same grid; the SM
#      clock, power and temperature sampled every 250 ms meanwhile (clocks.txt);
#   A. correctness, processes side by side (no timing runs meanwhile): `ptxkit selftest --only
#      attention` and `--only attention_backward`; compute-sanitizer memcheck and racecheck of one
#      forward and one backward kernel per head dim;
#   C. ncu (clocks as they run) of every cell below its bar in round 1, worst first, then of those
#      within 1 % above it: ours (the forward kernel; the backward's preprocess, main and convert
#      kernels), then cuDNN's kernels of the same cells in one torch process;
#   B2. round 2 of both benches.
# A short summary is printed last; the logs come back in logs.tgz. (The rounds' steps were inline in
# the run of 2026-11-29 18:29; `round` holds the same steps, written once after it.)
set -u
source benches/gpu_steps.sh
call_start "$(cd "$(dirname "$0")" && pwd)" /tmp/fin30-out "${DEADLINE_S:-287}"

# `round N FWD_MAX BWD_MAX [MORE]`: round N of both benches (for_problem's pick, the backward's
# default) with the SM clock, power and temperature sampled into clocks(-N).txt; with MORE, torch's
# SDPA forward and backward after them, still sampled.
round() {
  local clocks=clocks
  [ "$1" = 1 ] || clocks=clocks-$1
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 \
    >"$L/$clocks.txt" 2>&1 &
  local sampler=$!
  run_within "bench-fwd-$1" "$2" env PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=1 "$kit/bench-attention" --bench gpu-only
  run_within "bench-bwd-$1" "$3" env PTXKIT_ATTENTION_VARIANT=bulk "$kit/bench-attention_backward" --bench gpu-only
  if [ -n "${4:-}" ]; then
    run_within torch-fwd 45 bash -c "cd '$kit' && python3 -u attention_torch.py --kit"
    run_within torch-bwd 60 bash -c "cd '$kit' && python3 -u attention_torch.py --backward"
  fi
  kill "$sampler"
}

step_at "B1: round 1, torch"
round 1 45 70 torch

step_at "A: correctness, side by side"
# What is left after B1, less 100 s for C and B2, at most 90 s.
cap=$(( $(left 999) - 100 )); [ "$cap" -gt 90 ] && cap=90; [ "$cap" -lt 30 ] && cap=30
bg() { run_within "$@" >>"$L/rcs.txt" 2>&1 & }
bg selftest-fwd "$cap" env PTXKIT_ATTENTION_PROGRESS=1 PTXKIT_ATTENTION_LIMIT_S=20 "$kit/ptxkit" selftest --only attention
bg selftest-bwd "$cap" env PTXKIT_ATTENTION_PROGRESS=1 PTXKIT_ATTENTION_LIMIT_S=20 "$kit/ptxkit" selftest --only attention_backward
# One forward kernel per head dim (for_problem's picks: d64 causal, d128 non-causal 4k/8k, d256
# non-causal) and the default backward at each head dim, causal (GQA 4/2 at 2x197x333, 257x257,
# MQA 3/1 at 300x130).
FWD_D64=attention_fwd_bf16_d64_causal_m192_persistent_l2
FWD_D128=attention_fwd_bf16_d128_overlap_n176s2_tmastore
FWD_D256=attention_fwd_bf16_d256_overlap_n80s2_persistent_l2_tmastore
NOT='!varlen,!_det,!_red,!_inorder,!_intrip,!_dvlate,!_partials'
BWD_D64="attention_bwd_bf16_d64_causal_m128,$NOT"
BWD_D128="attention_bwd_bf16_d128_causal,$NOT,!_m"
BWD_D256="attention_bwd_bf16_d256_causal,$NOT,!_m"
for tool in memcheck racecheck; do
  for d in 64 128 256; do
    fwd=FWD_D$d bwd=BWD_D$d
    bg "$tool-fwd-d$d" "$cap" env PTXKIT_ATTENTION_ONLY="${!fwd}" PTXKIT_ATTENTION_LIMIT_S=90 \
      compute-sanitizer --tool "$tool" "$kit/ptxkit" selftest --only attention
    bg "$tool-bwd-d$d" "$cap" env PTXKIT_ATTENTION_MATCH="${!bwd}" PTXKIT_ATTENTION_PROGRESS=1 PTXKIT_ATTENTION_LIMIT_S=90 \
      compute-sanitizer --tool "$tool" "$kit/ptxkit" selftest --only attention_backward
  done
done
wait
cat "$L/rcs.txt"

step_at "C: ncu of the cells below their bar"
python3 "$kit/summary.py" misses "$L" >"$L/misses.txt" 2>&1
cat "$L/misses.txt"
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,smsp__inst_executed.sum
M=$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle membar sleeping dispatch_stall no_instruction branch_resolving selected not_selected; do
  M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
# Round 2 keeps 50 s, the cuDNN profile 30 s more.
profiled=()
while read -r tag _ near; do
  avail=$(( $(left 999) - 80 )); [ "$avail" -gt 25 ] && avail=25
  [ "$avail" -lt 10 ] && { echo "ncu: no time left for $tag${near:+ (near)}"; continue; }
  IFS=: read -r pas d c s <<<"$tag"
  if [ "$pas" = fwd ]; then
    run_within "ncu-ours-$pas-d$d-$c-$s" "$avail" env PTXKIT_ATTENTION_SHAPE="$d:$c:$s" PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=1 \
      ncu --clock-control none --metrics "$M" -k "regex:^attention_fwd_bf16_d$d" -c 1 "$kit/bench-attention" --bench gpu-only
  else
    run_within "ncu-ours-$pas-d$d-$c-$s" "$avail" env PTXKIT_ATTENTION_SHAPE="$d:$c:$s" PTXKIT_ATTENTION_VARIANT=bulk \
      ncu --clock-control none --metrics "$M" -k "regex:^attention_bwd_bf16_d$d" -c 3 "$kit/bench-attention_backward" --bench gpu-only
  fi
  profiled+=("$tag")
done <"$L/misses.txt"
if [ ${#profiled[@]} -gt 0 ]; then
  avail=$(( $(left 999) - 50 )); [ "$avail" -gt 30 ] && avail=30; [ "$avail" -lt 10 ] && avail=0
  [ "$avail" = 0 ] && echo "ncu-cudnn: no time left" || run_within ncu-cudnn "$avail" bash -c "cd '$kit' && ncu --profile-from-start off --clock-control none --metrics '$M' python3 -u cudnn-ncu.py ${profiled[*]}"
fi

step_at "B2: round 2"
round 2 20 35

step_at summary
python3 "$kit/summary.py" tables "$L" >"$L/summary.txt" 2>&1
(cd "$out" && tar czf logs.tgz logs)
echo "== steps"; cat "$L/rcs.txt" | sort | tr '\n' ' '; echo
echo "== selftest"
grep -hE "^(PASS|FAIL)" "$L/selftest-fwd.txt" "$L/selftest-bwd.txt" | cut -c1-400
grep -hcE "^case " "$L/selftest-fwd.txt" "$L/selftest-bwd.txt" | tr '\n' ' '; echo "case lines (fwd, bwd)"
grep -hE "differ|FAILED" "$L/selftest-bwd.txt" "$L/selftest-fwd.txt" | head -5
echo "deterministic cases: $(grep -cE '^case .*_det ' "$L/selftest-bwd.txt")"
echo "== sanitizer"
for f in "$L"/memcheck-*.txt "$L"/racecheck-*.txt; do
  echo "$(basename "$f" .txt): $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1) | $(grep -hcE '^case ' "$f") bwd case lines | $(grep -hE '^(PASS|FAIL)' "$f" | cut -c1-100)"
done
echo "== clocks (SM MHz min/median/max, round 1 / round 2)"
for f in clocks clocks-2; do
  awk -F', ' 'NR>1 && $2+0>0 {print $2+0}' "$L/$f.txt" | sort -n | awk '{a[NR]=$1} END {if (NR) print NR" samples: "a[1]" / "a[int((NR+1)/2)]" / "a[NR]}'
done
echo "== tables"
cat "$L/summary.txt"
step_at done
