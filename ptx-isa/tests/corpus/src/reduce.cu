// Block reduction with warp shuffles, shared memory and a global atomic (nvcc -ptx corpus source).
#include <cstdint>

template <typename T>
__device__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <typename T, int BLOCK>
__global__ void block_sum(const T* __restrict__ x, T* out, int n) {
    __shared__ T partial[BLOCK / 32];
    T v = 0;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) v += x[i];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < BLOCK / 32 ? partial[threadIdx.x] : T(0);
        v = warp_sum(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
}

template __global__ void block_sum<float, 256>(const float*, float*, int);
template __global__ void block_sum<double, 128>(const double*, double*, int);
template __global__ void block_sum<int, 512>(const int*, int*, int);

extern "C" __global__ void histogram(const uint8_t* data, unsigned* bins, size_t n) {
    __shared__ unsigned local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}
