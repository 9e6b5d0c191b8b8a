#!/usr/bin/env bash
# Lead's call (session 22, issue 31): how far the contiguous caches' times move from one bench
# process to the next (the final call's two processes had bf16 2.3 % and FP8 4-6 % slower at 8 x 64k
# than session 22's earlier calls, torch's unchanged): five bench processes over the contiguous
# bf16 and FP8 caches and the 16-token pages at 32 x 16k, 8 x 64k and 1 x 128k, torch's SDPA after
# the first and the last. Run as `DEADLINE_S=150 bash notes/session22-lead-spread.sh` (carry
# .gpu-solo as notes/session22-lead-final.sh).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/spread22 "${DEADLINE_S:-150}"
rows='32x16384 contiguous|8x65536 contiguous|1x131072 contiguous|8x65536 paged 16|1x131072 paged 16|!,|!as served'
for i in 1 2 3 4 5; do
  step_at "bench $i"
  run_within "bench-$i" 25 env PTXKIT_DECODE_BENCH="$rows" "$kit/bench-decode" --bench gpu_rows_only
  if [ $i = 1 ] || [ $i = 5 ]; then
    step_at "torch $i"
    (cd "$kit" && run_within "torch-$i" 40 python3 decode_attention_torch.py)
  fi
done
pack
echo "== summary ($(($(date +%s) - start)) s)"
cat "$L/device.txt"
for i in 1 2 3 4 5; do grep -cE "^\| [0-9]+x" "$L/bench-$i.txt"; done
