#!/usr/bin/env bash
# Lead's call (session 23, issue 31): how the decode kernels' time and torch's SDPA kernels' time
# depend on the SM clock. Call `sample` logged the GPU drawing its 700 W limit in the decode bench
# (clock-event reason 0x4, the software power cap) and the SM clock falling to 1485-1935 MHz, so a
# GPU's share of that capping may be what moves the contiguous caches' time from machine to
# machine. ncu times one launch of each after a 256 MiB clear, with the clocks free
# (`--clock-control none`) and locked at base (`base`), twice each: our bf16 and FP8 contiguous
# caches at 32 x 16k, 8 x 64k and 1 x 128k, then torch's cuDNN and flash kernels at 32 x 16k and
# 8 x 64k (benches/decode_sdpa_once.py). Run as `DEADLINE_S=200 bash notes/session23-lead-clocks.sh`
# (carry .gpu-clocks23: bench-decode.xz; decode_sdpa_once.py, decode_attention_torch.py,
# rows_torch.py, torch_timing.py).
# (Rewritten after the call onto benches/gpu_steps.sh's decode_ncu_at: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-clocks23" /tmp/clocks23 "${DEADLINE_S:-200}"
nvidia-smi -q -d CLOCK >"$L/clocks.txt" 2>&1
rows='32x16384 contiguous|8x65536 contiguous|1x131072 contiguous|!padded|!combine|!plain|!evict|!ordinary|!one-CTA|!stages|!splits|!clusters|!TMA|!cp.async'
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__throughput.avg.pct_of_peak_sustained_elapsed
for r in 1 2; do
  for c in none base; do
    decode_ncu_at $c $c-$r "$rows" 50
    for p in "32 16384" "8 65536"; do
      (cd "$kit" && run_within "ncu-torch-$c-$r-${p/ /x}" 40 ncu --clock-control $c --metrics $m python3 decode_sdpa_once.py $p)
    done
  done
done
pack
grep -E "Default Applications|Max Clocks|Graphics|SM  " "$L/clocks.txt" | head -12
for f in "$L"/ncu-*.txt; do
  echo "== $(basename "$f" .txt)"
  grep -E "^  [a-zA-Z_].*\(|gpu__time|sm__cycles_elapsed|dram__" "$f" | sed 's/  */ /g' | cut -c1-110
done
