#!/usr/bin/env bash
# Lead's call (session 22, issue 31): at the split problems (8 x 64k: 2 splits, 1 x 128k: 16), the
# contiguous caches' splits combined in the decode kernel by the last split to arrive
# (`folded`, DecodeConfig::fold) and by the combine kernel launched as an ordinary kernel (`plain
# combine`) beside the default (the combine kernel as a programmatic dependent): three bench
# processes. Run as `DEADLINE_S=90 bash notes/session22-lead-fold.sh` (carry .gpu-solo).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/fold22 "${DEADLINE_S:-90}"
decode_benches 25 '8x65536 contiguous|1x131072 contiguous|!splits|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA|!stages'
pack
echo "== summary ($(($(date +%s) - start)) s)"
decode_bench_counts
