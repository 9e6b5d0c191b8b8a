#!/bin/bash
# helper ew3 (session 20): three epilogue warps (GemmConfig::epilogue_warp_count) against the default.
set -u
source benches/gpu_steps.sh
call_start .gpu-ew3 /tmp/ew3out 160
K=.gpu-ew3
S="epilogue warps, staged;3 epilogue warps, staged;3 epilogue warps, staged, paced 800 ns"
step_at check
run_within check 50 $K/gemm_epilogue --check
step_at bench4096
run_within bench4096 45 env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES=4096 GEMM_EPILOGUE_ROUNDS=8 $K/bench_epi
step_at bench2048
run_within benchhalfk 25 env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES=4096x4096x2048 GEMM_EPILOGUE_ROUNDS=3 $K/bench_epi
step_at bench8192
run_within bench8192 35 env GEMM_EPILOGUE_SCHEDULES="$S" GEMM_EPILOGUE_SIZES=8192 GEMM_EPILOGUE_ROUNDS=2 $K/bench_epi
pack
echo "== summary"
cat $L/device.txt
grep -E "check|FAIL" $L/check.txt | cut -c1-150
for f in bench4096 benchhalfk bench8192; do
  echo "-- $f"
  grep "bits" $L/$f.txt | awk -F'|' '{print $3"|"$4"|"$6}'
  # ratio per schedule per epilogue, rounds in order
  grep -v bits $L/$f.txt | awk -F'|' 'NF>7 && $5+0>0 {k=$3"|"$4; r[k]=r[k]" "$8+0; if(!(k in o)){o[k]=++n; key[n]=k}} END{for(i=1;i<=n;i++){split(r[key[i]],a," "); s=0; for(j in a) s+=a[j]; printf "%s:%s mean %.4f\n", key[i], r[key[i]], s/length(a)}}'
  tail -2 $L/$f.txt | grep -iv "^|" | head -3
done
