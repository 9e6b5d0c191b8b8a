# What the GPU-step scripts (`attention_backward_gpu.sh`, `decode_gpu.sh`, `parts_gpu.sh`) share,
# sourced after `set -u`: `kit_start KIT OUT_DEFAULT BENCH...` sets `kit` and `out` ($OUT, else OUT_DEFAULT,
# made), makes the kit's `ptxkit` and the named bench executables executable and prints the
# GPU's name and maximum clocks; `step NAME` prints a step's heading with the time.
kit_start() {
  kit=$1
  out=${OUT:-$2}
  shift 2
  mkdir -p "$out"
  for bin in ptxkit "$@"; do
    chmod +x "$kit/$bin"
  done
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
}
step() { echo "== $1 ($(date +%T))"; }
