#!/usr/bin/env bash
# Lead's final call (session 18) on merged main: the full selftest; then old (de9cb9d, before the
# kernel parts) and new builds in alternating processes, each against its baseline in its process:
# the attention's causal 4x4096 (three processes each, the row that measured 0.983-0.992 in three
# rounds), the GEMM's bench shapes (a third round), the grouped GEMM and FP8 block-scaled (a second);
# every step skipped once the call's deadline is near. A short summary is printed last.
set -u
# Run from the repository root (the device tool's copy of the checkout): the shared step helpers.
source benches/gpu_steps.sh
oldnew_kit_start "$(cd "$(dirname "$0")" && pwd)" /tmp/final18 "${DEADLINE_S:-400}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step_at selftest
run_within selftest 260 "$kit/new/ptxkit" selftest
grep -E "^(PASS|FAIL|SKIP)" "$out/logs/selftest.txt" | cut -c1-150 > "$out/selftest-lines.txt"
echo "selftest: $(grep -c '^PASS' "$out/selftest-lines.txt") PASS, $(grep -c '^FAIL' "$out/selftest-lines.txt") FAIL"
grep '^FAIL' "$out/selftest-lines.txt"
step_at "N = 2112 (the rule's 192-wide tile)"
run_within gemm-shapes 70 env GEMM_SHAPES=4096x2112x7168,2048x2112x7168,1024x5120x8192 "$kit/new/bench-gemm" --bench zz_table_only
grep -E '^(check|\| [0-9])' "$out/logs/gemm-shapes.txt"
run_within fp8 45 "$kit/new/bench-gemm_fp8" --bench zz_table_only
grep -E "^(ours|\\| (4096x2112|4096x4096x4096|8192x8192))" "$out/logs/fp8.txt"
run_within tune-e4m3 60 "$kit/new/ptxkit" tune gemm 4096 2112 7168 --dtype e4m3 --cache "$out/tune.json"
tail -12 "$out/logs/tune-e4m3.txt"
step_at "attention causal 4x4096, alternating"
for i in 1 2 3; do for b in old new; do
  run_within att-$b-$i 30 env PTXKIT_ATTENTION_SHAPE=128:true:4096 PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=5 "$kit/$b/bench-attention" --bench zz_table_only
done; done
for b in old new; do echo "att $b: $(cat "$out"/logs/att-$b-*.txt | grep -E '^\| 128 ' | awk -F'|' '{printf "%s ", $8}')"; done
for b in new old; do
  step_at "gemm $b"
  run_within gemm-$b 60 "$kit/$b/bench-gemm" --bench zz_table_only
done
for b in old new; do echo "gemm $b:"; grep -E '^\| [0-9]' "$out/logs/gemm-$b.txt" | awk -F'|' '{print "  ", $2, $4, $5, $6}'; done
for b in new old; do
  step_at "grouped, fp8 block $b"
  run_within grouped-$b 40 env GROUPED_ONLY=8x2048,8x4096 "$kit/$b/bench-gemm_grouped" --bench zz_table_only
  run_within fp8block-$b 40 env FP8_BLOCK_CHECKS=0 FP8_BLOCK_SECONDS=15 FP8_BLOCK_SHAPES=4096x4096x4096,8192x8192x8192 "$kit/$b/bench-gemm_fp8_block" --bench zz_table_only
done
for b in old new; do echo "grouped $b:"; grep -E '^\| 8x' "$out/logs/grouped-$b.txt" | head -4; echo "fp8 block $b:"; grep -E '^\| (4096|8192)x' "$out/logs/fp8block-$b.txt" | head -4; done
step_at done
cd "$out" && tar czf logs.tgz logs && rm -rf logs
