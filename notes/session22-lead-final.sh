#!/usr/bin/env bash
# Lead's verification call (session 22, issue 31) on main's candidate: the ring stage limits where
# two CTAs share an SM (DecodeConfig::stage_limit: FP8 copies 3, bf16 16-row page boxes 2, at head
# dim 128) and the split rule taking two CTAs an SM first for them. `ptxkit selftest --only decode`
# beside compute-sanitizer memcheck of every decode case; two bench processes over the contiguous
# caches, the 16- and 64-token pages (bf16 and FP8, shuffled, as served), the pages at the rule's
# stages (the old defaults' kernels), each followed by torch's SDPA (cuDNN, flash) on the contiguous
# problems; ncu of one cold launch of the FP8 contiguous cache and 16-token pages at 1 x 128k. Run
# as `DEADLINE_S=280 bash notes/session22-lead-final.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz, stripped; decode_attention_torch.py, rows_torch.py, torch_timing.py).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22d "${DEADLINE_S:-280}"
decode_checked 110
decode_benches 50 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!contiguous, 2|!contiguous e4m3, 3' 2 torch
decode_ncu "1x131072 contiguous e4m3|1x131072 paged 16 e4m3|!as served|!, " 25
pack
decode_checked_summary _st
decode_bench_counts
