#!/usr/bin/env bash
# Lead's call (session 22, issue 31): how far the contiguous caches' times move from one bench
# process to the next (the final call's two processes had bf16 2.3 % and FP8 4-6 % slower at 8 x 64k
# than session 22's earlier calls, torch's unchanged): five bench processes over the contiguous
# bf16 and FP8 caches and the 16-token pages at 32 x 16k, 8 x 64k and 1 x 128k, torch's SDPA after
# the first and the last. Run as `DEADLINE_S=150 bash notes/session22-lead-spread.sh` (carry
# .gpu-solo as notes/session22-lead-final.sh).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran;
# its logs were bench-1 to bench-5, here bench-1, bench-more-1 to -3 and bench-last-1.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/spread22 "${DEADLINE_S:-150}"
rows='32x16384 contiguous|8x65536 contiguous|1x131072 contiguous|8x65536 paged 16|1x131072 paged 16|!,|!as served'
decode_benches 25 "$rows" 1 torch
DECODE_TAG=more decode_benches 25 "$rows" 3
DECODE_TAG=last decode_benches 25 "$rows" 1 torch
pack
decode_bench_counts
