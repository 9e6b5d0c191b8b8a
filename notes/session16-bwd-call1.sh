#!/usr/bin/env bash
# bwd16's one GPU call: selftest attention_backward (all), two rounds of the bench at d128 and
# d256 (default = causal longest first + dependent launches; inorder; serial at 4k) around torch's
# SDPA backward at d128 and d256, memcheck of longest-first causal kernels (the deterministic
# configurations' second run unwatched: programmatic dependents), ncu of the three kernels of one
# backward (where the wall time goes) and of the d256 causal main kernel at 2x8192.
set -u
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bwd16-out}
mkdir -p "$out"
chmod +x "$kit/ptxkit" "$kit/bench-attention_backward"
step() { echo "== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
step "selftest attention_backward"
PTXKIT_ATTENTION_PROGRESS=1 timeout 80 "$kit/ptxkit" selftest --only attention_backward >"$out/selftest.txt" 2>&1
echo "rc $?"
grep -E "differ|FAIL|error" "$out/selftest.txt" | head -5
grep -E "^(PASS|FAIL)" "$out/selftest.txt" | tail -2
bench() {
  PTXKIT_ATTENTION_SHAPE=128:,256: PTXKIT_ATTENTION_VARIANT=bulk,inorder timeout 30 \
    "$kit/bench-attention_backward" --bench gpu-only >"$out/bench$1.txt" 2>&1
  PTXKIT_ATTENTION_SHAPE=128:false:4096,128:true:4096,256:true:4096 PTXKIT_ATTENTION_VARIANT=bulk,serial timeout 12 \
    "$kit/bench-attention_backward" --bench gpu-only >>"$out/bench$1.txt" 2>&1
  grep -E "^\| [0-9]|stopped|rror" "$out/bench$1.txt"
}
step "bench round 1"
bench 1
step "torch SDPA backward d128 d256"
(cd "$kit" && timeout 45 python3 attention_torch.py --backward --d128 --d256) >"$out/torch.txt" 2>&1
cat "$out/torch.txt"
step "bench round 2"
bench 2
step "memcheck bf16_d256_causal_varlen, bf16_d128_causal_det"
PTXKIT_ATTENTION_MATCH=bf16_d256_causal_varlen,bf16_d128_causal_det PTXKIT_ATTENTION_LIMIT_S=20 timeout 30 \
  compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only attention_backward >"$out/memcheck.txt" 2>&1
grep -E "ERROR SUMMARY|^PASS|^FAIL" "$out/memcheck.txt" | tail -4
step "ncu: the three kernels of one backward, 128:true:4096 and 128:false:4096"
for s in 128:true:4096 128:false:4096; do
PTXKIT_ATTENTION_SHAPE=$s PTXKIT_ATTENTION_VARIANT=bulk timeout 15 \
  ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
  -k "regex:attention_bwd" -c 3 "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu-split-$s.txt" 2>&1
grep -E "attention_bwd|duration|dram__|^\| [0-9]" "$out/ncu-split-$s.txt" | head -14
done
step "ncu 256:true:8192 main kernel"
metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle dispatch_stall selected; do
  metrics=$metrics,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
PTXKIT_ATTENTION_SHAPE=256:true:8192 PTXKIT_ATTENTION_VARIANT=bulk timeout 20 \
  ncu --clock-control none --metrics "$metrics" -k "regex:attention_bwd_bf16_d256_causal$" -c 1 \
  "$kit/bench-attention_backward" --bench gpu-only >"$out/ncu.txt" 2>&1
grep -E "attention_bwd|duration|hmma|throughput|inst_executed|wavefronts|conflicts|registers|stall|hit_rate" "$out/ncu.txt" | head -30
step done
