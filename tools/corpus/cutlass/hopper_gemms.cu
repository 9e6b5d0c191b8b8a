// Large real-world modules for issue 33's speed bench: CUTLASS 3.x Hopper GEMM kernels (the
// CollectiveBuilder's warp-specialized TMA + wgmma mainloops), several element types and tiles in
// one translation unit, so nvcc writes a module of a megabyte or more. Compiled by
// tools/corpus/gen.sh against the headers of the `nvidia-cutlass` wheel; nothing here runs.
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

using namespace cute;

template <class A, class B, class C, class Tile, class Cluster, class Schedule>
struct HopperGemm {
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, C, cutlass::layout::ColumnMajor,
      16 / sizeof(C), C, cutlass::layout::ColumnMajor, 16 / sizeof(C),
      cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, A, cutlass::layout::RowMajor,
      16 / sizeof(A), B, cutlass::layout::ColumnMajor, 16 / sizeof(B), float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      Schedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;
};

// One `__global__` per configuration: the kernel's entry point instantiated for the device.
#define GEMM(NAME, A, B, C, M, N, K, CM, CN, SCHEDULE)                                          \
  using NAME = HopperGemm<A, B, C, Shape<_##M, _##N, _##K>, Shape<_##CM, _##CN, _1>,          \
                          cutlass::gemm::SCHEDULE>::Kernel;                                       \
  template __global__ void cutlass::device_kernel<NAME>(CUTLASS_GRID_CONSTANT NAME::Params const);

GEMM(BfCoop, cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::bfloat16_t, 128, 256, 64, 2, 1,
     KernelTmaWarpSpecializedCooperative)
GEMM(BfPing, cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::bfloat16_t, 64, 128, 64, 1, 2,
     KernelTmaWarpSpecializedPingpong)
GEMM(HalfCoop, cutlass::half_t, cutlass::half_t, float, 128, 128, 64, 1, 1,
     KernelTmaWarpSpecializedCooperative)
GEMM(Fp8Coop, cutlass::float_e4m3_t, cutlass::float_e4m3_t, cutlass::bfloat16_t, 128, 128, 128, 1,
     2, KernelTmaWarpSpecializedCooperative)
GEMM(Tf32Ws, cutlass::tfloat32_t, cutlass::tfloat32_t, float, 128, 128, 32, 1, 1,
     KernelTmaWarpSpecialized)
GEMM(Fp8Ping, cutlass::float_e5m2_t, cutlass::float_e4m3_t, cutlass::half_t, 64, 256, 128, 1, 1,
     KernelTmaWarpSpecializedPingpong)
GEMM(BfWide, cutlass::bfloat16_t, cutlass::bfloat16_t, float, 256, 128, 64, 1, 2,
     KernelTmaWarpSpecializedCooperative)
