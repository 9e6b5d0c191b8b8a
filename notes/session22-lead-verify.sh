#!/usr/bin/env bash
# Lead's verification call (session 22, issue 31) on main's candidate with launches of up to 16
# splits folded (DecodeConfig::fold_up_to; the launcher's folded kernels): `ptxkit selftest --only
# decode` (every case also with every split launch on the combine kernel: the same bits) beside
# compute-sanitizer memcheck of every case; three bench processes at head dim 128 over the
# contiguous caches (the default and the combine kernel for every split launch, the old default),
# the 16- and 64-token pages (shuffled, as served), each followed by torch's SDPA. Run as
# `DEADLINE_S=260 bash notes/session22-lead-verify.sh` (carry .gpu-solo: bench-decode.xz,
# ptxkit.xz; decode_attention_torch.py, rows_torch.py, torch_timing.py).
# (Rewritten after the call onto benches/gpu_steps.sh's decode functions: the same steps as ran.)
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-solo" /tmp/verify22 "${DEADLINE_S:-260}"
decode_checked 110
decode_benches 40 'contiguous|paged 16|paged 64|!in order|!KiB|!MiB|!table|!TMA|!cp.async|!evict|!ordinary|!folded|!plain|!touching|!L2 prefetch|!clusters|!one-CTA|!splits|!stages|!padded' 3 torch
pack
decode_checked_summary _fold
decode_bench_counts
