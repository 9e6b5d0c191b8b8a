#!/usr/bin/env bash
# Lead's final call B (session 21) on merged main, right after call A: issue 27's bars. First the
# fused epilogue (bias + ReLU + residual, bias + GELU(tanh) + residual, residual alone, staged, on
# three epilogue warps: the default) beside the library's plain GEMM, launches interleaved, at
# 4096³ (8 rounds), 8192³ (3) and 4096x4096x2048 (3); then old (de9cb9d, before the kernel parts)
# against new builds in alternating processes, each against its baseline in its process: the GEMM's
# bench shapes (three rounds), the attention's causal 4x4096 d128 pick (two), FP8 per tensor, the
# grouped GEMM, FP8 block-scaled; every step skipped once the call's deadline is near. Run from the repository root as
# `DEADLINE_S=500 bash notes/session21-lead-final-b.sh` (carry .gpu-final: `old/` and `new/`
# `bench-{gemm,gemm_fp8,gemm_grouped,gemm_fp8_block,attention}.xz`, `new/bench_epi.xz`, stripped,
# xz). A short summary last.
set -u
source benches/gpu_steps.sh
oldnew_kit_start "$(pwd)/.gpu-final" /tmp/final21b "${DEADLINE_S:-500}"
L=$out/logs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$L/device.txt"
d=$kit/new
S="epilogue warps, staged"
epilogue_bench "epi 4096" 70 4096 8 "$S"
epilogue_bench "epi 8192" 50 8192 3 "$S"
epilogue_bench "epi 4096x4096x2048" 25 4096x4096x2048 3 "$S"
pack
step_at "gemm old/new alternating"
for i in 1 2 3; do for b in old new; do run_within gemm-$b-$i 22 "$kit/$b/bench-gemm" --bench zz_table_only; done; done
pack
step_at "attention causal 4x4096, alternating"
for i in 1 2; do for b in old new; do
  run_within att-$b-$i 30 env PTXKIT_ATTENTION_SHAPE=128:true:4096 PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=5 "$kit/$b/bench-attention" --bench zz_table_only
done; done
pack
for b in old new; do
  step_at "fp8 $b"
  run_within fp8-$b 40 "$kit/$b/bench-gemm_fp8" --bench zz_table_only
done
for b in new old; do
  step_at "grouped, fp8 block $b"
  run_within grouped-$b 30 env GROUPED_ONLY=8x2048,8x4096 "$kit/$b/bench-gemm_grouped" --bench zz_table_only
  run_within fp8block-$b 45 env FP8_BLOCK_CHECKS=0 FP8_BLOCK_SECONDS=25 FP8_BLOCK_SHAPES=4096x4096x4096,8192x8192x8192 "$kit/$b/bench-gemm_fp8_block" --bench zz_table_only
done
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
epilogue_rounds "$L"/epi-*.txt
for b in old new; do echo "gemm $b (ours/cuBLAS/ratio a round):"; for i in 1 2 3; do grep -E '^\| [0-9]' "$L/gemm-$b-$i.txt" 2>/dev/null | awk -F'|' '{printf "%s %s/%s/%s;", $2, $4, $5, $6}'; echo; done; done
for b in old new; do echo "fp8 $b:"; grep -E '^\| [0-9]' "$L/fp8-$b.txt" | awk -F'|' '{print "  ", $2, $4, $5, $6}' | head -12; done
for b in old new; do echo "grouped $b:"; grep -E '^\| 8x' "$L/grouped-$b.txt" | head -4; echo "fp8 block $b:"; grep -E '^\| (4096|8192)x' "$L/fp8block-$b.txt" | head -4; done
for b in old new; do echo "att $b: $(cat "$L"/att-$b-*.txt | grep -E '^\| 128 ' | awk -F'|' '{printf "%s ", $8}')"; done
