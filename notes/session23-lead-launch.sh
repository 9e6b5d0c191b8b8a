#!/usr/bin/env bash
# Lead's call (session 23, issue 31): why our bf16 kernel pays more than cuDNN for the cold
# timing's dirty L2 lines at the unsplit problems (32 x 16k: 11 µs over back to back against 9.4;
# 32 x 4k 12.1 against 10.2): the contiguous bf16 cache launched as a programmatic dependent (the
# default) and as an ordinary kernel, and with evict-first loads, three processes, torch's SDPA
# after each. Run as `DEADLINE_S=100 bash notes/session23-lead-launch.sh` (carry .gpu-verify23).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-verify23" /tmp/launch23 "${DEADLINE_S:-100}"
decode_benches 25 '32x4096 contiguous|32x16384 contiguous|!e4m3|!padded|!stages' 3 torch
pack
decode_bench_counts
