# What the GPU-step scripts (`attention_backward_gpu.sh`, `decode_gpu.sh`, `parts_gpu.sh`, the lead's
# call scripts in notes/) share,
# sourced after `set -u`: `kit_start KIT OUT_DEFAULT BENCH...` sets `kit` and `out` ($OUT, else OUT_DEFAULT,
# made), makes the kit's `ptxkit` and the named bench executables executable and prints the
# GPU's name and maximum clocks; `step NAME` prints a step's heading with the time.
kit_start() {
  kit=$1
  out=${OUT:-$2}
  shift 2
  mkdir -p "$out"
  for bin in ptxkit "$@"; do
    chmod +x "$kit/$bin"
  done
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
}
step() { echo "== $1 ($(date +%T))"; }

# A call's steps under one deadline: `deadline_start SECONDS` starts the clock; `left MAX` prints the
# seconds a step may take (at most MAX, 0 when fewer than 5 are left before the deadline); `run_within NAME MAX CMD...`
# runs CMD under that limit with its output in `$out/logs/NAME.txt` (skipped, said so, past the
# deadline) and prints its exit status and the seconds so far; `step_at NAME` a step's heading with the seconds so far.
deadline_start() {
  start=$(date +%s)
  deadline=$1
  mkdir -p "$out/logs"
}
left() {
  local l=$((deadline - ($(date +%s) - start)))
  [ "$l" -lt 5 ] && l=0
  [ "$l" -gt "$1" ] && l=$1
  echo "$l"
}
run_within() {
  local name=$1 max
  max=$(left "$2")
  shift 2
  if [ "$max" = 0 ]; then
    echo "$name: skipped (deadline)"
    return
  fi
  timeout "$max" "$@" >"$out/logs/$name.txt" 2>&1
  echo "$name rc=$? at $(($(date +%s) - start)) s"
}
step_at() { echo "== $1 ($(date +%T), $(($(date +%s) - start)) s)"; }

# `oldnew_kit_start KIT OUT_DEFAULT DEADLINE`: a kit of `old/` and `new/` builds (executables
# xz-compressed, as carried): `kit`, `out` ($OUT, else OUT_DEFAULT), every executable unpacked and
# made executable, the deadline started.
oldnew_kit_start() {
  kit=$1
  out=${OUT:-$2}
  for f in "$kit"/*/*.xz; do xz -d -f "$f"; done
  chmod +x "$kit"/old/* "$kit"/new/*
  deadline_start "$3"
}

# `call_start KIT OUT_DEFAULT DEADLINE`: a call's kit `KIT` (a folder of xz-compressed executables
# and files, as carried), `out` ($OUT, else OUT_DEFAULT) and `L` ($out/logs), the deadline
# started, the driver's JIT cache kept in /tmp and large enough for a bench's kernels, every
# `*.xz` of the kit unpacked and made executable, the GPU's name, driver, clocks and power limit
# in $L/device.txt; `pack` puts $L into $out/logs.tgz (the device tool returns a few files).
call_start() {
  kit=$1
  out=${OUT:-$2}
  deadline_start "$3"
  L=$out/logs
  export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
  local f
  for f in "$kit"/*.xz; do
    [ -e "$f" ] || continue
    xz -T0 -d -f "$f" && chmod +x "${f%.xz}"
  done
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,temperature.gpu \
    --format=csv,noheader | tee "$L/device.txt"
}
pack() { (cd "$out" && tar czf logs.tgz logs 2>/dev/null); }

# `gpu_log MS`: the GPU's clocks, power, GPU and HBM temperatures and active clock-event (throttle)
# reasons every MS ms into $L/gpu-log.csv in the background until `gpu_log_stop` (the fields this
# driver knows: the throttle reasons' older name, then without them); `gpu_log_summary` prints
# each field's least and largest value.
gpu_log() {
  local f q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory
  for f in ,clocks_event_reasons.active ,clocks_throttle_reasons.active ""; do
    nvidia-smi --query-gpu="$q$f" --format=csv,noheader >/dev/null 2>&1 && break
  done
  nvidia-smi --query-gpu="$q$f" --format=csv -lms "$1" >"$L/gpu-log.csv" 2>&1 &
  gpu_log_pid=$!
}
gpu_log_stop() { kill "${gpu_log_pid:-}" 2>/dev/null; wait "${gpu_log_pid:-}" 2>/dev/null; }
gpu_log_summary() {
  python3 - "$L/gpu-log.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), skipinitialspace=True))
head, rows = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
for i, name in enumerate(head[1:], 1):
    vals = sorted({r[i] for r in rows}, key=lambda v: (len(v), v))
    print(f"{name}: {len(rows)} samples, {vals[0]} to {vals[-1]}" if vals else name)
PY
}

# The fused-epilogue calls (`benches/gemm_epilogue.rs`; notes/session19-epi20-call.sh,
# session20-epi21-call{1,2}.sh): `epilogue_call_start KIT OUT_DEFAULT DEADLINE MS` sets `d` and
# `out`, starts the deadline, keeps the driver's JIT cache in /tmp (as `call_start`), unpacks the
# kit's `bench_epi` and `example_epi`, writes the GPU's
# clocks and power limit to $out/logs/gpu.txt and logs its clocks every MS ms to
# $out/logs/clocks.csv in the background (`smi` its pid); `epilogue_bench NAME MAX SIZES ROUNDS
# SCHEDULES` runs the bench at GEMM_EPILOGUE_SIZES, _ROUNDS and _SCHEDULES as step NAME (its log
# `NAME` with spaces as dashes); `epilogue_ncu METRICS SCHEDULES KERNELS` runs it once at 4096³
# under ncu (step `ncu`, when ncu is there), the metrics METRICS of the first 7 launches of the
# kernels whose names match the regex KERNELS, and `epilogue_ncu_summary` prints their lines;
# `epilogue_rounds FILE...` prints each schedule's fused / plain ratio by round from the bench's logs.
epilogue_call_start() {
  d=$1
  out=${OUT:-$2}
  mkdir -p "$out"
  deadline_start "$3"
  export CUDA_CACHE_PATH=/tmp/cudacache CUDA_CACHE_MAXSIZE=4294967296
  xz -d -k -f "$d/bench_epi.xz" "$d/example_epi.xz" && chmod +x "$d/bench_epi" "$d/example_epi"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/logs/gpu.txt" 2>&1
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms "$4" >"$out/logs/clocks.csv" 2>&1 &
  smi=$!
}
# `epilogue_checks EXAMPLE CHECK_MAX SELFTEST_MAX`: the fused epilogue's correctness steps, the
# example EXAMPLE's `--check` (log `check`) and the kit's `ptxkit selftest --only` `gemm_epilogue` and
# `tile_epilogue` (logs `selftest-NAME`), each within its maximum of seconds.
epilogue_checks() {
  step_at "example --check"
  run_within check "$2" "$1" --check
  step_at selftest
  local c
  for c in gemm_epilogue tile_epilogue; do
    run_within "selftest-$c" "$3" "$kit/ptxkit" selftest --only "$c"
  done
}
epilogue_bench() {
  step_at "$1"
  run_within "${1// /-}" "$2" env GEMM_EPILOGUE_SIZES="$3" GEMM_EPILOGUE_ROUNDS="$4" GEMM_EPILOGUE_SCHEDULES="$5" "$d/bench_epi"
}
epilogue_ncu() {
  step_at "ncu"
  command -v ncu >/dev/null || return 0
  run_within ncu 40 env GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=1 GEMM_EPILOGUE_SCHEDULES="$2" \
    ncu --metrics "$1" -k "regex:$3" -c 7 "$d/bench_epi"
}
epilogue_ncu_summary() {
  grep -hE "^  [a-z_]+|gpu__time|cycles_active|hmma|wavefronts" "$out"/logs/ncu.txt 2>/dev/null | sed -E "s/ +/ /g" | cut -c1-90 | head -60
}
epilogue_rounds() {
  local f
  for f in "$@"; do
    echo "-- $f (ratio by round)"
    grep -h "^| [0-9]" "$f" | grep -v '| bits |' | awk -F'|' '{gsub(/ +$/,"",$3); gsub(/ +$/,"",$4); k=$3"|"$4; r[k]=r[k]" "$8+0} END {for (k in r) print k":"r[k]}' | sed 's/ epilogue warps, staged/ew/' | sort
  done
}

# `decode_selftest MAX`: step `selftest`, the kit's `ptxkit selftest --only decode` with each case's
# line printed as it runs (PTXKIT_DECODE_PROGRESS), its log `selftest`, within MAX seconds.
decode_selftest() {
  step_at selftest
  run_within selftest "$1" env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
}

# `decode_checked MAX [CASES]`: step `selftest decode, memcheck`: the kit's `ptxkit selftest --only
# decode` (log `selftest`, within MAX seconds) beside compute-sanitizer memcheck of it (log `memcheck`,
# within MAX seconds; only the cases CASES names, PTXKIT_DECODE_CASES, where given), both waited for;
# `decode_checked_summary [NAME]` prints both verdicts, memcheck's error summary and the selftest's
# case lines (and of them those naming NAME).
decode_checked() {
  step_at "selftest decode, memcheck"
  env ${2:+PTXKIT_DECODE_CASES=$2} PTXKIT_DECODE_LIMIT_S=$(($1 - 10)) timeout "$1" \
    compute-sanitizer --tool memcheck "$kit/ptxkit" selftest --only decode >"$L/memcheck.txt" 2>&1 &
  local memcheck=$!
  run_within selftest "$1" env PTXKIT_DECODE_PROGRESS=1 "$kit/ptxkit" selftest --only decode
  wait "$memcheck"
}
decode_checked_summary() {
  grep -E "^(PASS|FAIL)|panicked" "$L/selftest.txt" | cut -c1-200
  grep -E "^(PASS|FAIL)" "$L/memcheck.txt" | cut -c1-160
  grep -E "ERROR SUMMARY" "$L/memcheck.txt" | tail -2
  echo "selftest case lines: $(grep -c '^case' "$L/selftest.txt")${1:+, naming $1: $(grep '^case' "$L/selftest.txt" | grep -c "$1")}"
}

# `decode_benches MAX ROWS [N] [torch]`: steps `bench 1` to `bench N` (3 when not given), N
# processes of the kit's decode bench (`bench-decode`) over the rows ROWS (PTXKIT_DECODE_BENCH),
# logs `bench-1` to `bench-N` (`bench-TAG-1`... with DECODE_TAG set), each within MAX seconds;
# with `torch`, each followed by torch's SDPA on the contiguous problems (the kit's
# `decode_attention_torch.py`, logs `torch-1`...); `decode_bench_counts` prints each bench log's row
# count and failures. `DECODE_EXE` names another bench executable of the kit (`bench-decode` when unset).
decode_benches() {
  local r log
  for r in $(seq 1 "${3:-3}"); do
    log="bench-${DECODE_TAG:+$DECODE_TAG-}$r"
    step_at "$log"
    run_within "$log" "$1" env PTXKIT_DECODE_BENCH="$2" "$kit/${DECODE_EXE:-bench-decode}" --bench gpu_rows_only
    if [ "${4:-}" = torch ]; then
      step_at "torch $r"
      (cd "$kit" && run_within "torch-$r" 40 python3 decode_attention_torch.py)
    fi
  done
}
# `decode_ab MAX ROWS [N]`: N pairs (3 when not given) of bench processes over the rows ROWS, the
# kit's `bench-decode-old` then its `bench-decode` (logs `bench-oldR-1`, `bench-newR-1`), each within
# MAX seconds; `notes/session23-lead-ab-summary.py` compares them.
decode_ab() {
  local r
  for r in $(seq 1 "${3:-3}"); do
    DECODE_TAG=old$r DECODE_EXE=bench-decode-old decode_benches "$1" "$2" 1
    DECODE_TAG=new$r decode_benches "$1" "$2" 1
  done
}
decode_bench_counts() {
  local f
  for f in "$L"/bench-*.txt; do
    [ -f "$f" ] || continue
    echo "$(basename "$f" .txt) rows: $(grep -cE '^\| [0-9]+x' "$f"); failed: $(grep -c failed "$f")"
    grep -iE "failed|error|panick" "$f" | head -2
  done
}

# `decode_ncu_at CLOCK NAME ROWS MAX [EXE]`: step `ncu CLOCK NAME`, one launch a row of the rows ROWS
# after the cold timing's clear under ncu with `--clock-control CLOCK` (`none`: the clocks free;
# `base`), each decode kernel's time, SM clock and DRAM throughput, log `ncu-NAME`, within MAX
# seconds, of the kit's bench executable EXE (`bench-decode` when not given);
# `notes/session23-lead-clocks-summary.py` reads them.
decode_ncu_at() {
  local m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
  m=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed
  step_at "ncu $1 $2"
  run_within "ncu-$2" "$4" env PTXKIT_DECODE_ONCE=cold PTXKIT_DECODE_BENCH="$3" \
    ncu --clock-control "$1" -k regex:decode_ --metrics "$m" "$kit/${5:-bench-decode}" --bench gpu_rows_only
}

# `decode_ncu_clocks ROWS MAX`: `decode_ncu_at` with the clocks free, then at base (logs `ncu-none`,
# `ncu-base`).
decode_ncu_clocks() {
  local c
  for c in none base; do
    decode_ncu_at $c $c "$1" "$2"
  done
}

# `decode_examples`: step `example`, the kit's `decode_paged` over an FP8 and a bf16 cache (logs
# `example-fp8`, `example-bf16`), 20 seconds each.
decode_examples() {
  step_at "example"
  run_within example-fp8 20 "$kit/decode_paged"
  run_within example-bf16 20 "$kit/decode_paged" --bf16
}

# `decode_call_end`: a decode call's end: the clock logger stopped, the logs packed, then the
# selftest's and memcheck's verdicts, the examples', each bench log's row count, the clocks' range
# and the ncu logs' times (`notes/session23-lead-clocks-summary.py`, as the kit carries it).
decode_call_end() {
  gpu_log_stop
  pack
  decode_checked_summary
  grep -hE "PASS|FAIL" "$L"/example-*.txt 2>/dev/null | cut -c1-200
  decode_bench_counts
  gpu_log_summary
  python3 "$kit/session23-lead-clocks-summary.py" "$L"
}

# `decode_ncu ROWS MAX`: step `ncu`, one launch a row of the rows ROWS after the cold timing's clear
# (PTXKIT_DECODE_ONCE=cold) under ncu with the clocks free, the FP8 decode kernels' time, DRAM
# throughput, the CTAs an SM ran and the SMs' active cycles (the tail), log `ncu`, within MAX
# seconds; their lines printed.
decode_ncu() {
  local metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
  metrics=$metrics,sm__ctas_launched.min,sm__ctas_launched.max,sm__ctas_launched.sum
  metrics=$metrics,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
  step_at ncu
  run_within ncu "$2" env PTXKIT_DECODE_ONCE=cold PTXKIT_DECODE_BENCH="$1" ncu --clock-control none \
    -k regex:decode_e4m3 --metrics "$metrics" "$kit/bench-decode" --bench gpu_rows_only
  grep -E "decode_e4m3|gpu__time|dram__|ctas_launched|cycles_" "$L/ncu.txt" | grep -v "^==PROF" | sed 's/  */ /g' | head -80
}
