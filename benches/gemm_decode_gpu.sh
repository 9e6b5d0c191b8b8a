#!/usr/bin/env bash
# The decode GEMMs' GPU call (issue 29): checks, memcheck and the decode table, each step under
# its own time limit so one slow step cannot eat the call. Binaries built here, stripped and
# xz-compressed into $kit (the tree that travels is capped at 64 MiB):
#
#   cargo build --release --bin ptxkit --example gemm_hopper --bench gemm_decode
#   benches/gemm_decode_gpu.sh pack .gpu-NAME      # here
#   SESSION=session12 benches/gemm_decode_gpu.sh run .gpu-NAME [checks|table|ncu]   # there
#
# Logs go under $OUT as $SESSION-decode-gemm-PART-*.txt.
set -uo pipefail
mode="${1:-}"
kit="${2:-.gpu-decode}"
case "$mode" in
pack)
  mkdir -p "$kit"
  cp target/release/ptxkit target/release/examples/gemm_hopper "$kit/"
  cp "$(ls -t target/release/deps/gemm_decode-* | grep -v '\.d$' | head -1)" "$kit/gemm_decode"
  cp benches/gemm_decode_gpu.sh "$kit/"
  strip "$kit/ptxkit" "$kit/gemm_hopper" "$kit/gemm_decode"
  rm -f "$kit"/*.xz
  xz -T2 -6 "$kit/ptxkit" "$kit/gemm_hopper" "$kit/gemm_decode"
  du -sh "$kit"
  ;;
run)
  part="${3:-all}"
  out="${OUT:-gpu-out}"
  mkdir -p "$out"
  for f in "$kit"/*.xz; do xz -dkf "$f"; done
  chmod +x "$kit/ptxkit" "$kit/gemm_hopper" "$kit/gemm_decode"
  log="$out/${SESSION:-session}-decode-gemm-$part"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$log-device.txt"
  # The fast checks first, then the table, then the slower checks and ncu, so that a call cut
  # short still has the checks of the new paths and the table. Each step's limit in seconds
  # from the environment (CHECK_S, TABLE_S, SELFTEST_S, MEMCHECK_S, NCU_S).
  if [ "$part" = all ] || [ "$part" = checks ]; then
    DECODE_CHECK_ONLY=1 timeout "${CHECK_S:-60}" "$kit/gemm_decode" >"$log-decode-checks.txt" 2>&1
    echo "decode checks: rc $?"; cat "$log-decode-checks.txt"
    timeout "${CHECK_S:-90}" "$kit/gemm_hopper" --check --small >"$log-check.txt" 2>&1
    echo "gemm_hopper --check --small: rc $?"; grep -cE ' ok$' "$log-check.txt"; grep -E 'FAIL|rror' "$log-check.txt"
  fi
  if [ "$part" = all ] || [ "$part" = table ]; then
    timeout "${TABLE_S:-240}" "$kit/gemm_decode" >"$log-table.txt" 2>&1
    echo "table: rc $?"; grep -E '^\||device|FAIL' "$log-table.txt"
  fi
  if [ "$part" = all ] || [ "$part" = checks ]; then
    timeout "${SELFTEST_S:-90}" "$kit/ptxkit" selftest --only gemm_fp8 >"$log-selftest.txt" 2>&1
    echo "selftest gemm_fp8: rc $?"; tail -3 "$log-selftest.txt" | cut -c1-400
    # MEMCHECK_ONLY=decode-widths: the sanitizer over those checks alone.
    DECODE_CHECK_ONLY="${MEMCHECK_ONLY:-1}" timeout "${MEMCHECK_S:-120}" compute-sanitizer --tool memcheck "$kit/gemm_decode" >"$log-memcheck.txt" 2>&1
    echo "memcheck: rc $?"; grep -c PASS "$log-memcheck.txt"; grep FAIL "$log-memcheck.txt"; tail -2 "$log-memcheck.txt"
  fi
  if [ "$part" = all ] || [ "$part" = ncu ]; then
    # What limits the rows below 1.0: DRAM and SM throughput of the candidates and the baseline
    # (those whose kernel names match $NCU_KERNELS, all by default) at each row of $NCU_ROWS.
    for row in ${NCU_ROWS:-bf16:64x4096x7168 e4m3:128x4096x7168}; do
      set -- ${row/:/ }
      DECODE_PROFILE=1 DECODE_DTYPE=$1 DECODE_SHAPE=$2 timeout "${NCU_S:-90}" ncu \
        --clock-control none --kernel-name "regex:${NCU_KERNELS:-.}" --metrics \
        gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum \
        "$kit/gemm_decode" >"$log-ncu-$1-$2.txt" 2>&1
      echo "ncu $1 $2: rc $?"
      grep -E '^  [a-z]|duration|dram__|sm__|lts__' "$log-ncu-$1-$2.txt" | awk '{print $1, $NF}' | paste - - - - - - | cut -c1-200
    done
  fi
  ;;
*)
  echo "usage: $0 pack|run KIT [checks|table|all]" >&2
  exit 2
  ;;
esac
