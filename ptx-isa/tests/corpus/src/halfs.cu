// f16/bf16 conversions and packed arithmetic, vector loads, a predicated tail.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void axpy_half2(__half2* y, const __half2* x, __half2 a, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) y[i] = __hfma2(a, x[i], y[i]);
}

extern "C" __global__ void bf16_to_f32(float4* out, const __nv_bfloat162* in, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float2 a = __bfloat1622float2(in[2 * i]);
        float2 b = __bfloat1622float2(in[2 * i + 1]);
        out[i] = make_float4(a.x, a.y, b.x, b.y);
    }
}

extern "C" __global__ void round_trip(__nv_bfloat16* o, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = __float2bfloat16_rn(__half2float(__float2half_rn(x[i])));
}
