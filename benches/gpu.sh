#!/usr/bin/env bash
# One GPU call for everything that needs a GPU (device time is scarce; see ../shared/GPU.md).
#
#   benches/gpu.sh build         # here (has Rust): build release binaries into .gpu/ (git-ignored)
#   benches/gpu.sh run           # there (no Rust): both parts below (over one call's 10 minutes)
#   benches/gpu.sh run checks    # selftest, examples, GPU tests, sanitizer, the GEMM and cuBLAS
#   benches/gpu.sh run rows      # the row kernels' checks, their sweep, torch eager and compile, ncu
#   benches/gpu.sh run attn      # attention: its check, TFLOP/s vs torch SDPA, memcheck/racecheck
#   benches/gpu.sh run grouped   # grouped GEMM: its checks, TFLOP/s vs a cuBLAS loop and
#                                # torch._grouped_mm, ncu, memcheck (benches/gemm_grouped_run.sh)
#
# `run` writes logs under $OUT (or ./gpu-out) and prints the tables last.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
case "$mode" in
build)
  cargo build --release --bins --examples
  cargo bench --no-run --bench rows --bench gemm --bench gemm_fp8 --bench gemm_fp8_block \
    --bench gemm_grouped \
    --bench attention 2>&1 | tee /tmp/ptxkit-bench-build.txt >&2
  # The tests with a GPU path (they skip, saying why, where there is none): run them there too.
  cargo test --release --no-run --test borrowed --test runtime_gpu 2>&1 |
    tee /tmp/ptxkit-test-build.txt >&2
  rm -rf .gpu && mkdir -p .gpu
  cp target/release/ptxkit target/release/examples/{softmax,vector_add,scale,tma_copy,cluster_exchange,gemm_hopper} .gpu/
  for b in rows gemm gemm_fp8 gemm_fp8_block gemm_grouped attention; do
    exe=$(grep -o "target/release/deps/$b-[0-9a-f]*" /tmp/ptxkit-bench-build.txt | head -1)
    cp "$exe" ".gpu/bench-$b"
  done
  for t in borrowed runtime_gpu; do
    exe=$(grep -o "target/release/deps/$t-[0-9a-f]*" /tmp/ptxkit-test-build.txt | head -1)
    cp "$exe" ".gpu/test-$t"
  done
  # The tree that travels to the GPU machine is capped at 64 MiB: drop the debug info.
  strip .gpu/*
  du -sh .gpu
  [ "$(du -sm .gpu | cut -f1)" -lt 60 ] || { echo ".gpu is too large to carry" >&2; exit 1; }
  ;;
run)
  # Every step runs whatever the one before it returned: one failing check must not cost the rest.
  set +e
  part="${2:-all}"
  out="${OUT:-gpu-out}"
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
  # Most important first; each step has its own time limit so one slow step cannot eat the call.
  if [ "$part" = all ] || [ "$part" = checks ]; then
    timeout 240 .gpu/ptxkit selftest 2>&1 | tee "$out/selftest.txt" | tail -30
    timeout 30 .gpu/softmax > "$out/softmax.txt" 2>&1; tail -5 "$out/softmax.txt"
    timeout 30 .gpu/vector_add > "$out/vector_add.txt" 2>&1; tail -2 "$out/vector_add.txt"
    timeout 30 .gpu/scale > "$out/scale.txt" 2>&1; grep -E 'PASS|FAIL|Error' "$out/scale.txt"
    timeout 30 .gpu/tma_copy > "$out/tma_copy.txt" 2>&1; grep -E 'PASS|FAIL|Error' "$out/tma_copy.txt"
    timeout 30 .gpu/cluster_exchange > "$out/cluster_exchange.txt" 2>&1
    grep -E 'PASS|FAIL|Error' "$out/cluster_exchange.txt"
    for t in borrowed runtime_gpu; do
      timeout 60 ".gpu/test-$t" --nocapture > "$out/test-$t.txt" 2>&1
      echo "test $t: $(grep '^test result' "$out/test-$t.txt")"
    done
    timeout 120 .gpu/bench-gemm --bench > "$out/bench-gemm.txt" 2>&1
    # Block-scaled FP8 beside our bf16 and per-tensor FP8 and cuBLASLt (its checks first).
    FP8_BLOCK_SECONDS=60 timeout 90 .gpu/bench-gemm_fp8_block --bench \
      > "$out/bench-gemm_fp8_block.txt" 2>&1
    timeout 30 .gpu/gemm_hopper > "$out/gemm_hopper.txt" 2>&1; tail -3 "$out/gemm_hopper.txt"
    for tool in memcheck racecheck synccheck; do
      timeout 90 compute-sanitizer --tool $tool .gpu/ptxkit selftest --only row_kernels \
        > "$out/$tool-rows.txt" 2>&1
      echo "$tool: $(tail -1 "$out/$tool-rows.txt")"
    done
    grep '^|\|^device' "$out/bench-gemm.txt" || tail -20 "$out/bench-gemm.txt"
    grep '^check.*FAIL\|^|\|^device' "$out/bench-gemm_fp8_block.txt" ||
      tail -20 "$out/bench-gemm_fp8_block.txt"
  fi
  if [ "$part" = all ] || [ "$part" = rows ]; then
    # The variants the bench sweeps are checked first (f64 reference, poisoned outputs).
    timeout 60 .gpu/ptxkit selftest --only row_kernels > "$out/selftest-rows.txt" 2>&1
    echo "row kernels selftest: $(tail -3 "$out/selftest-rows.txt" | tr '\n' ' ')"
    # Every configuration of the sweep (it stops sweeping after ROWS_SWEEP_SECONDS).
    ROWS_SWEEP_SECONDS=170 timeout 240 .gpu/bench-rows --bench > "$out/bench-rows.txt" 2>&1
    timeout 200 python3 benches/rows_torch.py > "$out/rows-torch.txt" 2>&1
    # The kernel's own duration, occupancy and L2 hit rate of the configuration that won each
    # case (its name is the table's sixth column), at the boost clock the event timings ran at.
    # torch.compile's profile of these cases is in notes/rows-run6-h100-ncu-boost.log.
    ncu_args=(--clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats
      --section MemoryWorkloadAnalysis)
    n=0
    for case in "rmsnorm bf16 4096x8192" "layernorm bf16 4096x8192" "rmsnorm f32 16384x8192"; do
      n=$((n + 1))
      set -- $case
      cfg=$(grep "^| $1 | $2 | $3 |" "$out/bench-rows.txt" | head -1 | cut -d'|' -f7 | tr -d ' ')
      ROWS_ONLY="$case" ROWS_CONFIG="$cfg" timeout 60 ncu "${ncu_args[@]}" -k regex:norm -s 3 -c 1 \
        .gpu/bench-rows --bench > "$out/ncu-ours-$n.txt" 2>&1
      echo "$case $cfg: $(grep -E '^ +(Duration|Achieved Occupancy|L2 Hit Rate) ' "$out/ncu-ours-$n.txt" |
        tr -s ' ' | tr '\n' ';')"
    done
    grep '^|\|^device' "$out/bench-rows.txt" || tail -20 "$out/bench-rows.txt"
    grep '^|\|^device\|copy' "$out/rows-torch.txt" || tail -20 "$out/rows-torch.txt"
    grep '^sweep' "$out/bench-rows.txt"
  fi
  if [ "$part" = all ] || [ "$part" = attn ]; then
    # The checks first (bf16/f16, d 64/128/256, causal or not, every schedule, persistent,
    # GQA/MQA, odd lengths; packed variable-length sequences), then the TFLOP/s of ours (one CTA
    # per tile and persistent) and of torch's SDPA backends on the same shapes, then the
    # sanitizers on the check.
    for check in attention attention_varlen; do
      timeout 120 .gpu/ptxkit selftest --only $check 2>&1 |
        tee "$out/selftest-$check.txt" | tail -3
    done
    timeout 120 .gpu/bench-attention --bench gpu > "$out/bench-attention.txt" 2>&1
    timeout 90 python3 benches/attention_torch.py --kit > "$out/attention-torch.txt" 2>&1
    for tool in memcheck racecheck; do
      timeout 150 compute-sanitizer --tool $tool .gpu/ptxkit selftest --only attention \
        > "$out/$tool-attention.txt" 2>&1
      echo "$tool: $(tail -1 "$out/$tool-attention.txt")"
    done
    grep '^|\|^device' "$out/bench-attention.txt" || tail -20 "$out/bench-attention.txt"
    grep '^|\|^device' "$out/attention-torch.txt" || tail -20 "$out/attention-torch.txt"
  fi
  if [ "$part" = all ] || [ "$part" = grouped ]; then
    # The grouped GEMM's checks, then its bench and torch._grouped_mm's, within 110 s.
    BIN=.gpu OUT="$out" bash benches/gemm_grouped_run.sh
  fi
  ;;
*)
  echo "usage: benches/gpu.sh build | run [checks|rows|attn|grouped]" >&2
  exit 2
  ;;
esac
