#!/bin/sh
# Regenerates the real-world corpus: nvcc 13.0 and Triton on a GPU machine (see GPU.md).
# Usage: gen.sh OUT_DIR
out=$1
here=$(dirname "$0")
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
$nvcc -ptx -arch=sm_80 "$here/reduce.cu" -o "$out/nvcc_reduce_sm80.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_90a "$here/reduce.cu" -o "$out/nvcc_reduce_sm90a.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_86 "$here/calls.cu" -o "$out/nvcc_calls_sm86.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_90 -G "$here/calls.cu" -o "$out/nvcc_calls_debug_sm90.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_89 -lineinfo "$here/halfs.cu" -o "$out/nvcc_halfs_lineinfo_sm89.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_80 "$here/inline_asm.cu" -o "$out/nvcc_inline_asm_sm80.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_90a "$here/hopper.cu" -o "$out/nvcc_hopper_sm90a.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_80 "$here/wmma.cu" -o "$out/nvcc_wmma_sm80.ptx" || echo FAILED: $?
$nvcc -ptx -arch=sm_100a "$here/reduce.cu" -o "$out/nvcc_reduce_sm100a.ptx" || echo FAILED: $?
python3 "$here/triton_gen.py" "$out" || echo FAILED: $?
