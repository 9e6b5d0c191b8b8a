#!/usr/bin/env bash
# Lead's call (session 22, issue 31) on main's candidate with the FP8 copies' 3 ring stages where
# two CTAs share an SM (DecodeConfig::stage_limit) and the split rule taking two CTAs an SM first
# for them (1 x 128k: 33 splits, 8 x 64k: 4): `ptxkit selftest --only decode` beside
# compute-sanitizer memcheck of its FP8 cases; three bench processes over the contiguous bf16 and
# FP8 caches, the 16- and 64-token pages (bf16 and FP8, shuffled, as served), the FP8 pages with
# the rule's 6 stages (the old default's kernel) and bf16 pages with 2 stages, each process followed
# by torch's SDPA (cuDNN, flash) on the contiguous problems; ncu of one cold launch of the FP8
# contiguous cache and 16-token pages at 1 x 128k (the SMs' active cycles: the tail). Run as
# `DEADLINE_S=300 bash notes/session22-lead-stages3.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz, stripped; decode_attention_torch.py, rows_torch.py, torch_timing.py).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/stages22c "${DEADLINE_S:-300}"
decode_checked 60 fp8
decode_benches 50 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!contiguous, 2|!contiguous e4m3, 3' 3 torch
decode_ncu "1x131072 contiguous e4m3|1x131072 paged 16 e4m3|!as served|!, " 25
pack
decode_checked_summary _st3
decode_bench_counts
