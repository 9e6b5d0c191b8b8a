#!/usr/bin/env bash
# Lead's last call (session 22, issue 31): one more machine's bars on main `ca0664a` (the kernels
# of call `verify`): two bench processes at head dim 128 over the contiguous caches and the 16- and
# 64-token pages (shuffled, as served), each followed by torch's SDPA. Run as `DEADLINE_S=120 bash
# notes/session22-lead-sample.sh` (carry .gpu-solo as notes/session22-lead-verify.sh).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/sample22 "${DEADLINE_S:-120}"
decode_benches 40 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!stages|!padded|!combine' 2 torch
pack
decode_bench_counts
