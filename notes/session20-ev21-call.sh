#!/usr/bin/env bash
# Session 20, ev21 (issue 29): the large shapes' pick and the rest of the decode table's
# evidence, one GPU call of at most 300 s. Kit (.gpu-ev21): gemm_decode from branch ev21 (the
# tuner's finalists timed interleaved with the rule's configuration, which another candidate
# replaces only by tune::RULE_MARGIN; DECODE_RULE, DECODE_L2 and the several-name DECODE_PICK),
# stripped and xz-compressed; rows-both.txt (session 19's rows below 1.0 in both runs); the
# summary scripts notes/session20-ev21-{summary,ncu}.py. Steps in order of need, each under
# `run_within` (benches/gpu_steps.sh) and the call's deadline; logs packed into $OUT/logs.tgz,
# a compact summary printed last.
set -u
source benches/gpu_steps.sh
call_start .gpu-ev21 /tmp/ev21 "${DEADLINE_S:-290}"
D=$kit/gemm_decode
LARGE=4096x4096x4096,6144x6144x6144,8192x8192x8192
MET=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio
NCU="ncu --clock-control none --csv --page raw --print-units base --metrics $MET"

# 1. The large shapes, bf16 then e4m3: every candidate timed (only the pick compared with the
#    baseline's C), the finalists and the rule's configuration timed again interleaved with the
#    baseline, the pick (tune::pick_over_rule); runs 1 and 2 (pick and baseline interleaved);
#    then 4 rounds of the pick, the rule's configuration and the baseline interleaved.
for dt in bf16 e4m3; do
  step_at "large $dt"
  run_within large-$dt-1 40 env DECODE_LARGE=1 DECODE_CHECK=pick DECODE_NO_CHECKS=1 DECODE_RULE=4 \
    DECODE_DTYPE=$dt DECODE_SHAPE=$LARGE $D
  grep -E "^\| bench|rule .* round" "$L/large-$dt-1.txt" | cut -c1-230; pack
done

# 2. The L2 state: session 19's rows below 1.0 in both runs (tuned anew), then 3 rounds each of
#    the pick and the baseline interleaved after the 256 MiB clear and after a clean read.
for dt in bf16 e4m3; do
  shapes=$(grep "^$dt " $kit/rows-both.txt | awk '{print $2}' | paste -sd,)
  step_at "l2 $dt: $shapes"
  run_within l2-$dt 45 env DECODE_NO_CHECKS=1 DECODE_L2=3 DECODE_DTYPE=$dt DECODE_SHAPE=$shapes $D
  grep -c "^  l2 " "$L/l2-$dt.txt"; pack
done

# 3. ncu (ncu's cache flush, clocks as they run) of the 4 decode rows not profiled in session 19:
#    session 19's pick and the baseline (and the rule's configuration at bf16 128x8192x8192).
step_at "ncu decode rows"
run_within ncu-dec-bf16 35 env DECODE_PROFILE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=bf16 \
  DECODE_SHAPE=128x8192x8192,64x57344x8192,1x8192x28672 \
  DECODE_PICK=128x8192x8192=gemm_bf16_bf16_64x128x64_s9_g16_c2_pingpong,128x8192x8192=rule,64x57344x8192=gemm_bf16_bf16_64x64x64_s14_g16_pingpong,1x8192x28672=gemm_bf16_bf16_128x16x64_s8_g16_swapab \
  $NCU $D
run_within ncu-dec-e4m3 25 env DECODE_PROFILE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=e4m3 DECODE_SHAPE=64x57344x8192 \
  DECODE_PICK=64x57344x8192=gemm_e4m3_bf16_64x64x128_s14_g16_pingpong $NCU $D
for dt in bf16 e4m3; do python3 $kit/ncu.py "$L/ncu-dec-$dt.txt" > "$L/ncu-dec-summary-$dt.txt" 2>&1; done
pack

# 4. ncu of the large shapes: step 1's pick, the rule's configuration and the baseline.
for dt in bf16 e4m3; do
  picks=$(awk -F'|' '/^\| bench/ {gsub(/ /,"",$3); gsub(/ /,"",$12); print $3"="$12}' "$L/large-$dt-1.txt" | paste -sd,)
  pick="${picks:+$picks,}4096x4096x4096=rule,6144x6144x6144=rule,8192x8192x8192=rule"
  step_at "ncu large $dt: $pick"
  run_within ncu-large-$dt 60 env DECODE_LARGE=1 DECODE_PROFILE=1 DECODE_NO_CHECKS=1 DECODE_DTYPE=$dt \
    DECODE_SHAPE=$LARGE DECODE_PICK=$pick $NCU $D
  python3 $kit/ncu.py "$L/ncu-large-$dt.txt" > "$L/ncu-large-summary-$dt.txt" 2>&1; pack
done

# 5. The large shapes again, a second process each (the pick's and the ratios' repeatability).
for dt in bf16 e4m3; do
  step_at "large $dt again"
  run_within large-$dt-2 30 env DECODE_LARGE=1 DECODE_CHECK=pick DECODE_NO_CHECKS=1 DECODE_RULE=4 \
    DECODE_DTYPE=$dt DECODE_SHAPE=$LARGE $D
  pack
done

step_at "done"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader >> "$L/device.txt"
pack
echo "==== summary"
python3 $kit/summary.py "$L"
for f in ncu-large-summary-bf16 ncu-large-summary-e4m3 ncu-dec-summary-bf16 ncu-dec-summary-e4m3; do
  echo "-- $f (µs, MHz, tensor, SM, issue, warps, L2, L2 hit, DRAM %, DRAM rd MB, L2 MB)"
  awk -F'|' 'NR>2 {printf "%s", $2; for (i = 3; i <= 13; i++) printf "|%s", $i; printf "|%s\n", $15}' "$L/$f.txt" 2>/dev/null | sed 's/  */ /g' | cut -c1-230
done
pack
