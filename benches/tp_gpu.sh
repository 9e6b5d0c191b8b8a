#!/usr/bin/env bash
# The tensor-parallel GEMMs (`examples/tp_gemm.rs`, issue 32) on a machine with two or more GPUs.
#   here:  benches/tp_gpu.sh build      (release tp_gemm, stripped and xz-compressed into .gpu-tp/)
#   there: bash .gpu-tp/run.sh          (carry .gpu-tp; logs under $OUT)
# The run: a quick pass (4096 tokens, 50 stress iterations; on failure again with the register
# epilogue), then the full pass (4096-16384 tokens, 1,000 stress iterations of each path), with
# NVLink multicast off (NCCL_NVLS_ENABLE=0) and libnccl from torch's wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = build ]; then
  cargo build --release --example tp_gemm
  mkdir -p .gpu-tp
  cp target/release/examples/tp_gemm /tmp/tp_gemm_s && strip /tmp/tp_gemm_s
  xz -T2 -6 -c /tmp/tp_gemm_s > .gpu-tp/tp_gemm.xz
  sed -n '/^# --- run.sh ---$/,$p' "$0" | tail -n +2 > .gpu-tp/run.sh
  chmod +x .gpu-tp/run.sh
  ls -la .gpu-tp
  exit 0
fi
echo "usage: benches/tp_gpu.sh build" >&2
exit 2
# --- run.sh ---
#!/usr/bin/env bash
# The tensor-parallel GEMM check + stress + benchmark on the two-GPU machine (session 9, helper tp).
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
cd "$(dirname "$0")"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$OUT/gpus.txt" 2>&1
nvidia-smi topo -m >> "$OUT/gpus.txt" 2>&1
lib=""
for d in $(python3 -c "import site; print(' '.join(site.getsitepackages()))" 2>/dev/null) /usr/lib /usr/local; do
  lib=$(find "$d" -name 'libnccl.so.2' 2>/dev/null | head -1)
  [ -n "$lib" ] && break
done
echo "nccl: $lib" | tee -a "$OUT/gpus.txt"
mkdir -p /tmp/tpnccl && ln -sf "$lib" /tmp/tpnccl/libnccl.so
export LD_LIBRARY_PATH=/tmp/tpnccl:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -dc tp_gemm.xz > /tmp/tp_gemm && chmod +x /tmp/tp_gemm
flag=""
timeout ${QUICK_S:-80} /tmp/tp_gemm --quick --stress 50 > "$OUT/session9-tp-quick.log" 2>&1
rc=$?
echo "quick rc=$rc" | tee -a "$OUT/gpus.txt"
if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
  timeout 45 /tmp/tp_gemm --quick --stress 50 --rs-register-epilogue > "$OUT/session9-tp-quick-regepi.log" 2>&1
  rc2=$?
  echo "quick (register epilogue) rc=$rc2" | tee -a "$OUT/gpus.txt"
  [ $rc2 -eq 0 ] && flag="--rs-register-epilogue"
fi
if [ $rc -ne 124 ]; then
  timeout ${FULL_S:-170} /tmp/tp_gemm --stress 1000 $flag > "$OUT/session9-tp-bench.log" 2>&1
  echo "full rc=$?" | tee -a "$OUT/gpus.txt"
fi
tail -c 6000 "$OUT/session9-tp-quick.log"
tail -c 5000 "$OUT/session9-tp-bench.log" 2>/dev/null
