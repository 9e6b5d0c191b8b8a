#!/usr/bin/env bash
# Generates issue 33's real-world corpus: nvcc 13.0.88 (from the PyPI wheels; an oracle, never a
# dependency) compiles the CUDA C++ in cuda/ for every target it has and several flag sets, into
# $OUT (default target/corpus/nvcc). Each module is also written at the lowest .version its
# target allows (into $OUT-lowest), so ptxas judges ptxkit's version gating from both sides.
# Usage: tools/corpus/gen.sh [OUT]. Then: PTXAS=... cargo test -p ptx-isa --test corpus -- --ignored
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/target/corpus/nvcc}"
tools="$root/target/corpus-tools"
nvcc="$tools/nvidia/cu13/bin/nvcc"
if [ ! -x "$nvcc" ]; then
  mkdir -p "$tools/wheels"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$tools/wheels" nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 \
    nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
  for w in "$tools"/wheels/*.whl; do python3 -m zipfile -e "$w" "$tools"; done
  chmod +x "$tools"/nvidia/cu13/bin/* "$tools"/nvidia/cu13/nvvm/bin/*
  rm -rf "$tools/wheels"
fi
mkdir -p "$out" "$out-lowest"
archs="sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 sm_100a sm_103 sm_110 sm_120 sm_120a sm_121"
flagsets=("O3:-O3" "fast:-O3 --use_fast_math" "lineinfo:-lineinfo" "O0:-O0 -Xptxas -O0" "G:-G" "rdc:-rdc=true")
n=0
for src in "$root"/tools/corpus/cuda/*.cu; do
  name="$(basename "$src" .cu)"
  for arch in $archs; do
    for fs in "${flagsets[@]}"; do
      tag="${fs%%:*}"
      flags="${fs#*:}"
      f="$out/$name.$arch.$tag.ptx"
      # Kept from an earlier run unless its source changed since.
      if [ "$f" -nt "$src" ]; then
        n=$((n + 1))
        continue
      fi
      # shellcheck disable=SC2086
      if "$nvcc" -ptx -arch="$arch" $flags "$src" -o "$f" 2> "$f.log"; then
        rm -f "$f.log"
        n=$((n + 1))
      else
        echo "nvcc failed: $name $arch $tag (kept in $f.log)" >&2
        rm -f "$f"
      fi
    done
  done
done
# The same modules at the lowest .version ptxas 13.0 reads their target with (PTX ISA chapter 13;
# PtxVersion::lowest_for_target holds the same table).
python3 - "$out" "$out-lowest" <<'PY'
import os, re, sys
lowest = {"sm_75": "6.3", "sm_80": "7.0", "sm_86": "7.1", "sm_87": "7.4", "sm_89": "7.8",
          "sm_90": "7.8", "sm_90a": "8.0", "sm_100": "8.6", "sm_100a": "8.6", "sm_103": "8.8",
          "sm_110": "9.0", "sm_120": "8.7", "sm_120a": "8.7", "sm_121": "8.8"}
src, dst = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(src)):
    if not f.endswith(".ptx"):
        continue
    text = open(os.path.join(src, f)).read()
    t = re.search(r"^\.target (\w+)", text, re.M).group(1)
    low = re.sub(r"^\.version \S+", ".version " + lowest[t], text, count=1, flags=re.M)
    open(os.path.join(dst, f), "w").write(low)
PY
echo "$n modules in $out and $out-lowest" >&2
