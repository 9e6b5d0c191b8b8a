#!/usr/bin/env bash
# Generates issue 33's real-world corpus into $OUT (default target/corpus), one folder per generator,
# from sources written here (the generators are oracles, never dependencies):
#   nvcc, nvcc-lowest  nvcc 13.0.88 (PyPI wheels) on cuda/*.cu, every target, six flag sets; each
#                      module also at the lowest .version its target allows (ptxkit's version gating
#                      judged from both sides)
#   nvrtc              NVRTC 13.0.88 on the same sources (nvrtc/gen.py)
#   triton             Triton 3.9 kernels (triton/gen.py), no GPU: triton.compile on a GPUTarget
#   numba              numba-cuda kernels through NVVM 13.0.88 (numba/gen.py)
#   tinygrad           tinygrad 0.14's PTX renderer (tinygrad/gen.py)
#   cutlass            nvcc 13.0.88 on CUTLASS 3.x Hopper GEMMs (cutlass/hopper_gemms.cu, the
#                      `nvidia-cutlass` wheel's headers): megabyte-sized modules, the speed bench's input
#   clang              clang-14's CUDA front end and LLVM 14 NVPTX (clang/kernels.cu; Debian clang-14)
#   llvm               llvmlite's newer LLVM NVPTX on clang-14's bitcode of the same file (clang/llvm.py)
#   ptxkit             ptxkit's own built-in kernels (`ptxkit dump`; $PTXKIT names the binary)
# A generator whose tool is missing is skipped, and said. Existing outputs are kept.
# Usage: tools/corpus/gen.sh [OUT] (ONLY=cutlass: the cutlass modules only). Then: PTXAS=... cargo test -p ptx-isa --test corpus -- --ignored
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
corpus="${1:-$root/target/corpus}"
out="$corpus/nvcc"
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
# CUTLASS-sized modules (and the speed bench's input, `cargo bench -p ptx-isa --bench parse`, groups
# `real` and `real-cpu`): nvcc on cutlass/hopper_gemms.cu, written here, against the headers of the
# `nvidia-cutlass` 4.2.0.0 wheel; a megabyte and more each. `ONLY=cutlass` stops after them.
inc="$tools/cutlass/cutlass_library/source/include"
if [ ! -d "$inc" ]; then
  mkdir -p "$tools/cutlass"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$tools/cutlass" nvidia-cutlass==4.2.0.0 >&2
  python3 -m zipfile -e "$tools"/cutlass/nvidia_cutlass-*.whl "$tools/cutlass"
fi
mkdir -p "$corpus/cutlass"
src="$root/tools/corpus/cutlass/hopper_gemms.cu"
for fs in "O3:-O3" "lineinfo:-O3 -lineinfo"; do
  f="$corpus/cutlass/hopper_gemms.sm_90a.${fs%%:*}.ptx"
  if [ ! "$f" -nt "$src" ]; then
    # shellcheck disable=SC2086
    "$nvcc" -ptx -arch=sm_90a -std=c++17 --expt-relaxed-constexpr ${fs#*:} -I "$inc" "$src" -o "$f"
  fi
done
if [ "${ONLY:-}" = cutlass ]; then
  exit 0
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

# The Python generators, in a virtual environment of their own (pinned versions).
venv="$tools/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check triton==3.9.0 numba-cuda==0.30.4 \
    tinygrad==0.14.0 llvmlite==0.50.0 nvidia-nvvm==13.0.88 nvidia-cuda-nvrtc==13.0.88 \
    "nvidia-cuda-runtime>=13.0,<13.1" "nvidia-cuda-cccl>=13.0,<13.1" >&2
fi
py="$venv/bin/python"
here="$root/tools/corpus"
"$py" "$here/nvrtc/gen.py" "$here/cuda" "$tools/nvidia/cu13/include" "$corpus/nvrtc"
TRITON_DEFAULT_FP_FUSION=1 "$py" "$here/triton/gen.py" "$corpus/triton"
"$py" "$here/numba/gen.py" "$corpus/numba"
for arch in sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120; do
  PARALLEL=0 DEV="NULL:PTX:$arch" "$py" "$here/tinygrad/gen.py" "$corpus/tinygrad" "$arch"
done

# clang-14 (Debian's clang-14 package): its CUDA front end without the CUDA headers, at each target
# with the PTX versions LLVM 14 writes and four optimization levels; then its bitcode through
# llvmlite's newer LLVM for the targets LLVM 14 lacks.
if command -v clang-14 > /dev/null; then
  mkdir -p "$corpus/clang"
  for at in sm_35:ptx60 sm_50:ptx63 sm_60:ptx64 sm_70:ptx65 sm_72:ptx70 sm_75:ptx71 sm_80:ptx72 sm_86:ptx75; do
    arch="${at%%:*}"
    for opt in O0 O1 O2 O3; do
      clang-14 -x cuda --cuda-device-only --cuda-gpu-arch="$arch" -Xclang -target-feature \
        -Xclang "+${at#*:}" -nocudainc -nocudalib "-$opt" -S "$here/clang/kernels.cu" \
        -o "$corpus/clang/kernels.$arch.$opt.ptx"
    done
  done
  clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -Xclang -target-feature -Xclang +ptx70 \
    -nocudainc -nocudalib -O1 -emit-llvm -c "$here/clang/kernels.cu" -o "$tools/kernels.bc"
  "$py" "$here/clang/llvm.py" "$tools/kernels.bc" "$corpus/llvm" kernels
else
  echo "clang-14 missing: no clang or llvm modules" >&2
fi

# ptxkit's own kernels: every built-in `ptxkit dump` writes.
ptxkit="${PTXKIT:-$root/target/release/ptxkit}"
if [ -x "$ptxkit" ]; then
  mkdir -p "$corpus/ptxkit"
  "$ptxkit" dump --list | while read -r name _; do
    "$ptxkit" dump "$name" > "$corpus/ptxkit/$name.ptx" || rm -f "$corpus/ptxkit/$name.ptx"
  done
else
  echo "no ptxkit binary at $ptxkit: no ptxkit modules" >&2
fi
find "$corpus" -name '*.ptx' | awk -F/ '{print $(NF-1)}' | sort | uniq -c >&2
