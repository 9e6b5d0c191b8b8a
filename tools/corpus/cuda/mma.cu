// Tensor cores through WMMA (f16, bf16, tf32, s8 and f64 shapes) and a sm_90 cluster kernel.
#include <mma.h>
#include <cooperative_groups.h>
using namespace nvcuda;

// Nothing to do to a fragment of A after its load, but for tf32 (below).
template <typename Fragment>
__device__ __forceinline__ void round_a(Fragment&) {}

#if __CUDA_ARCH__ >= 800
// float input read as tf32: A rounded to tf32 after its load.
__device__ __forceinline__ void round_a(
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>& fa) {
  for (int t = 0; t < fa.num_elements; t++) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
}
#endif

// One M x N x K product, C = A·B: A row-major, B in `LayoutB`, C stored in `LayoutC`, every
// leading dimension M; `Frag` is the fragments' element type (`In`, or tf32 for float input).
template <int M, int N, int K, typename In, typename Frag, typename LayoutB, typename Acc,
          wmma::layout_t LayoutC>
__device__ __forceinline__ void wmma_product(const In* a, const In* b, Acc* c) {
  wmma::fragment<wmma::matrix_a, M, N, K, Frag, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, Frag, LayoutB> fb;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> fc;
  wmma::fill_fragment(fc, Acc(0));
  wmma::load_matrix_sync(fa, a, M);
  wmma::load_matrix_sync(fb, b, M);
  round_a(fa);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, M, LayoutC);
}

__global__ void wmma_f16(const half* a, const half* b, float* c) {
  wmma_product<16, 16, 16, half, half, wmma::col_major, float, wmma::mem_row_major>(a, b, c);
}

#if __CUDA_ARCH__ >= 800
__global__ void wmma_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
  wmma_product<16, 16, 16, __nv_bfloat16, __nv_bfloat16, wmma::row_major, float,
               wmma::mem_col_major>(a, b, c);
}

__global__ void wmma_tf32(const float* a, const float* b, float* c) {
  wmma_product<16, 16, 8, float, wmma::precision::tf32, wmma::col_major, float,
               wmma::mem_row_major>(a, b, c);
}

__global__ void wmma_f64(const double* a, const double* b, double* c) {
  wmma_product<8, 8, 4, double, double, wmma::col_major, double, wmma::mem_row_major>(a, b, c);
}
#endif

__global__ void wmma_s8(const signed char* a, const signed char* b, int* c) {
  wmma_product<16, 16, 16, signed char, signed char, wmma::col_major, int, wmma::mem_row_major>(
      a, b, c);
}

#if __CUDA_ARCH__ >= 900
__global__ void __cluster_dims__(2, 1, 1) cluster_exchange(int* out) {
  namespace cg = cooperative_groups;
  __shared__ int v;
  auto cluster = cg::this_cluster();
  v = cluster.block_rank();
  cluster.sync();
  int* peer = cluster.map_shared_rank(&v, (cluster.block_rank() + 1) % 2);
  out[blockIdx.x] = *peer;
  cluster.sync();
}
#endif
