#!/usr/bin/env bash
# Lead's call (session 22, issue 31): the contiguous caches at head dim 128 with fewer ring stages
# (DecodeConfig::stage_limit, none by default there: bf16 2 of 3, FP8 3 and 4 of 6), where the
# split rule then takes two CTAs an SM (1 x 128k: 33 splits, 8 x 64k: 4): three bench processes.
# Run as `DEADLINE_S=100 bash notes/session22-lead-contig.sh` (carry .gpu-solo: bench-decode.xz).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/contig22 "${DEADLINE_S:-100}"
decode_benches 25 'contiguous|!folded|!plain|!splits|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA'
pack
echo "== summary ($(($(date +%s) - start)) s)"
decode_bench_counts
