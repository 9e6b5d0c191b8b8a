#!/usr/bin/env bash
# The attention forward's GPU steps (issue 30), in one device call:
#   benches/attention_gpu.sh KIT
# KIT holds the release `ptxkit`, the bench executable `bench-attention`, attention_torch.py,
# rows_torch.py and torch_timing.py. Steps, each under a timeout:
#   1. `ptxkit selftest --only attention` (every case's error shown); PTXKIT_ATTENTION_MATCH
#      narrows the kernels (parts of names, `selftest::attention`), say `_pair`;
#   2. with PTXKIT_MEMCHECK_ONLY (a kernel's name), compute-sanitizer memcheck of its cases;
#   3. the Rust bench (`benches/attention.rs`), PTXKIT_ATTENTION_SHAPE and
#      PTXKIT_ATTENTION_VARIANT narrowing it as there, the SM clock and power sampled beside it;
#   4. torch's SDPA (flash, cuDNN, efficient) on the kit's shapes, 3 timings each in turn
#      (PTXKIT_TORCH_ONLY: --d64, --d128 or --d256 keeps one head dim);
#   5. with PTXKIT_NCU_VARIANT (a variant's label), ncu of one launch of that variant at
#      PTXKIT_NCU_SHAPE (default 256:false:8192): the tensor pipe's active cycles
#      (`hmma`, which counts wgmma too), L2 and DRAM throughput,
#      the bytes L2 sends the SMs, and the warps' stall reasons per issued instruction.
# Logs go to $OUT (at most 8 files come back), a summary to stdout.
set -u
. "$(dirname "$0")/gpu_steps.sh"
kit_start "$1" /tmp/attention-out bench-attention
step "selftest attention ${PTXKIT_ATTENTION_MATCH:-}"
PTXKIT_ATTENTION_PROGRESS=1 timeout "${PTXKIT_SELFTEST_S:-120}" "$kit/ptxkit" selftest --only attention \
  >"$out/selftest.txt" 2>&1
grep -vE "^(case|  )" "$out/selftest.txt" | tail -5
grep -E "^case" "$out/selftest.txt" | tail -40
if [ -n "${PTXKIT_MEMCHECK_ONLY:-}" ]; then
  step "memcheck $PTXKIT_MEMCHECK_ONLY"
  PTXKIT_ATTENTION_MATCH= PTXKIT_ATTENTION_ONLY=$PTXKIT_MEMCHECK_ONLY PTXKIT_ATTENTION_LIMIT_S=50 \
    timeout 60 compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention \
    >"$out/memcheck.txt" 2>&1
  grep -E "ERROR SUMMARY|PASS|FAIL" "$out/memcheck.txt" | tail -4
fi
step "bench attention"
# The SM clock, power and temperature every 200 ms through the bench (clocks.txt): whether the
# rounds' drift is the clock.
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 \
  >"$out/clocks.txt" 2>&1 &
sampler=$!
timeout "${PTXKIT_BENCH_S:-150}" "$kit/bench-attention" --bench gpu-only >"$out/bench.txt" 2>&1
kill "$sampler"
grep -E "^\||device|stopped" "$out/bench.txt"
step "torch SDPA"
(cd "$kit" && timeout 90 python3 attention_torch.py --kit ${PTXKIT_TORCH_ONLY:-} --repeats 3) \
  >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
if [ -n "${PTXKIT_NCU_VARIANT:-}" ]; then
  shape=${PTXKIT_NCU_SHAPE:-256:false:8192}
  step "ncu: $PTXKIT_NCU_VARIANT at $shape"
  metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__cluster_dim_x
  for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle membar sleeping dispatch_stall no_instruction branch_resolving selected not_selected; do
    metrics=$metrics,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
  done
  PTXKIT_ATTENTION_SHAPE=$shape PTXKIT_ATTENTION_VARIANT=$PTXKIT_NCU_VARIANT PTXKIT_ATTENTION_REPEATS=1 \
    timeout 60 ncu --clock-control none --metrics "$metrics" -k "regex:attention_fwd" -c 1 \
    "$kit/bench-attention" --bench gpu-only >"$out/ncu.txt" 2>&1
  grep -E "attention_fwd|duration|gmma|throughput|sectors|bytes|hit_rate|inst_executed|registers|grid_size|cluster|stall" "$out/ncu.txt" | head -40
fi
step done
