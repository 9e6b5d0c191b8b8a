#!/usr/bin/env bash
# CUTLASS-sized modules for issue 33's speed bench (`cargo bench -p ptx-isa --bench parse`, group
# `real`): nvcc 13.0.88 (the wheels gen.sh fetches) on cutlass/hopper_gemms.cu, written here, with
# the headers of the `nvidia-cutlass` 4.2.0.0 wheel. The headers and nvcc are oracles' inputs, never
# dependencies; nothing they produce is committed.
# Usage: tools/corpus/cutlass.sh [OUT] (default target/corpus/cutlass); gen.sh must have fetched nvcc.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/target/corpus/cutlass}"
tools="$root/target/corpus-tools"
nvcc="$tools/nvidia/cu13/bin/nvcc"
inc="$tools/cutlass/cutlass_library/source/include"
if [ ! -x "$nvcc" ]; then
  echo "no nvcc at $nvcc: run tools/corpus/gen.sh first (it fetches the wheels)" >&2
  exit 1
fi
if [ ! -d "$inc" ]; then
  mkdir -p "$tools/cutlass"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$tools/cutlass" nvidia-cutlass==4.2.0.0 >&2
  python3 -m zipfile -e "$tools"/cutlass/nvidia_cutlass-*.whl "$tools/cutlass"
fi
mkdir -p "$out"
src="$root/tools/corpus/cutlass/hopper_gemms.cu"
for fs in "O3:-O3" "lineinfo:-O3 -lineinfo"; do
  tag="${fs%%:*}"
  f="$out/hopper_gemms.sm_90a.$tag.ptx"
  [ "$f" -nt "$src" ] && continue
  # shellcheck disable=SC2086
  "$nvcc" -ptx -arch=sm_90a -std=c++17 --expt-relaxed-constexpr ${fs#*:} -I "$inc" "$src" -o "$f"
done
ls -l "$out" >&2
