#!/usr/bin/env bash
# Lead's call (session 22, issue 31): at the split problems (8 x 64k: 2 splits, 1 x 128k: 16; the pages 4 and 33), the
# contiguous caches' and the bf16 16-token and FP8 16- and 64-token pages' splits combined in the decode kernel by the last split to arrive
# (`folded`, DecodeConfig::fold) and by the combine kernel launched as an ordinary kernel (`plain
# combine`) beside the default (the combine kernel as a programmatic dependent): three bench
# processes. Run as `DEADLINE_S=90 bash notes/session22-lead-fold2.sh` (carry .gpu-solo).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/fold22b "${DEADLINE_S:-90}"
decode_benches 30 '8x65536 contiguous|1x131072 contiguous|8x65536 paged 16|1x131072 paged 16|8x65536 paged 64 e4m3|1x131072 paged 64 e4m3|!as served|!in order|!MiB|!KiB|!table|!touching|!L2 prefetch|!splits|!one-CTA|!clusters|!evict|!ordinary|!cp.async|!TMA|!stages'
pack
decode_bench_counts
