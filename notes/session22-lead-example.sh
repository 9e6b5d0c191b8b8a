#!/usr/bin/env bash
# Lead's call (session 22, issue 31): the new example `examples/decode_paged.rs` (a serving
# engine's decode step over a paged cache, from the public API) on the GPU: the FP8 cache and the
# bf16 one, each checked against the library's f64 reference and timed, then the FP8 run under
# compute-sanitizer memcheck. Run as `DEADLINE_S=90 bash notes/session22-lead-example.sh` (carry
# .gpu-ex: decode_paged.xz, stripped).
set -u
source benches/gpu_steps.sh
call_start "$(pwd)/.gpu-ex" /tmp/example22 "${DEADLINE_S:-90}"
step_at "example, FP8"
run_within fp8 20 "$kit/decode_paged"
step_at "example, bf16"
run_within bf16 20 "$kit/decode_paged" --bf16
step_at "memcheck, FP8"
run_within memcheck 40 compute-sanitizer --tool memcheck "$kit/decode_paged"
pack
echo "== summary ($(($(date +%s) - start)) s)"
grep -hE "PASS|FAIL|rror" "$L/fp8.txt" "$L/bf16.txt" "$L/memcheck.txt" | cut -c1-220
