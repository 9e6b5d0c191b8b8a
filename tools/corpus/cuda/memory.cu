// Memory: shared-memory transpose, vector loads, __ldg, cp.async pipelines, dynamic shared memory.
#include <cuda_pipeline.h>

__global__ void transpose(const float* in, float* out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void vec4_copy(const float4* __restrict__ in, float4* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 v = __ldg(in + i); v.x += v.w; out[i] = v; }
}

__global__ void async_copy(const int4* in, int4* out, int n) {
  extern __shared__ int4 buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __pipeline_memcpy_async(&buf[threadIdx.x], &in[i], sizeof(int4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n) out[i] = buf[blockDim.x - 1 - threadIdx.x];
}

__constant__ float coeffs[16];

__global__ void stencil(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 8 && i < n - 8) {
    float acc = 0;
#pragma unroll
    for (int k = -8; k < 8; k++) acc += coeffs[k + 8] * in[i + k];
    out[i] = acc;
  }
}

__device__ __noinline__ float helper(float a, float b) { return a * b + 1.0f; }

__global__ void calls(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = helper(in[i], in[n - 1 - i]);
  if (i == 0) printf("n = %d, first = %f\n", n, in[0]);
}
