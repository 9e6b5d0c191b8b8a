// Reductions: warp shuffles, shared memory, atomics, votes and cooperative groups.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}

__global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float part[32];
  float v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0;
    v = warp_sum(v);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}

__global__ void cg_sum(const int* x, int* out, int n) {
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  int i = block.group_index().x * block.size() + block.thread_rank();
  int v = i < n ? x[i] : 0;
  v = cg::reduce(warp, v, cg::plus<int>());
  if (warp.thread_rank() == 0) atomicAdd(out, v);
}

__global__ void votes(const int* x, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int p = i < n && x[i] > 0;
  unsigned b = __ballot_sync(0xffffffff, p);
  int all = __all_sync(0xffffffff, p), any = __any_sync(0xffffffff, p);
  unsigned m = __match_any_sync(0xffffffff, i < n ? x[i] : 0);
#if __CUDA_ARCH__ >= 800
  m += __reduce_add_sync(0xffffffff, (unsigned)p);
#endif
  if (i < n) out[i] = b + all + any + m;
}

__global__ void atomics(int* a, unsigned long long* b, float* c, double* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicMax(a, i);
    atomicCAS(b, 0ull, (unsigned long long)i);
    atomicExch(a + 1, i);
    atomicAdd(c, 1.0f);
    atomicAdd(d, 1.0);
    atomicInc((unsigned*)a + 2, 100u);
    atomicAnd(a + 3, i);
  }
}
