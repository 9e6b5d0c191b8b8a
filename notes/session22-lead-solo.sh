#!/usr/bin/env bash
# Lead's exploratory call (session 22, issue 31): at the split problems (1 x 128k, 8 x 64k; one CTA
# an SM), the FP8 caches on the kernel built for two CTAs an SM (the default) against the one built
# for one (`one-CTA kernel`, DecodeConfig::solo), each unclustered, in pairs (the FP8 default) and in
# clusters of 4 and 8 KV heads; then ncu of one cold launch a row at 1 x 128k: the CTAs each SM ran
# (sm__ctas_launched min / max), the SMs' active cycles, DRAM. Run as `DEADLINE_S=150 bash
# notes/session22-lead-solo.sh` (carry .gpu-solo: bench-decode.xz, stripped).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/solo22 "${DEADLINE_S:-150}"
keep='1x131072 contiguous|1x131072 paged 16 e4m3|8x65536 contiguous e4m3|8x65536 paged 16 e4m3'
decode_benches 30 "$keep|!as served|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!splits|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch|!contiguous, clusters|!contiguous, one"
decode_ncu '1x131072 contiguous e4m3|1x131072 paged 16 e4m3|!as served|!in order|!table|!TMA|!cp.async|!evict|!ordinary|!splits|!folded|!plain|!MiB|!KiB|!touching|!L2 prefetch' 40
pack
decode_bench_counts
