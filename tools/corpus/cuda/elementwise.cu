// Element-wise kernels: float, double, integer and half/bf16 arithmetic, fast-math intrinsics.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void daxpy(long n, double a, const double* x, double* y) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    y[i] = fma(a, x[i], y[i]);
}

__global__ void transcendental(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = __expf(v) + sinf(v) * cosf(v) + rsqrtf(fabsf(v) + 1.0f) + log2f(v + 2.0f) + tanhf(v);
  }
}

__global__ void integer_ops(int n, const unsigned* a, const int* b, unsigned long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned x = a[i];
    int y = b[i];
    unsigned long long r = __popc(x) + __clz(y) + __brev(x) + __ffs(y) + (x >> (y & 31)) + __umulhi(x, (unsigned)y);
    r += __byte_perm(x, (unsigned)y, 0x5410) + __funnelshift_l(x, (unsigned)y, 7) + (unsigned)__sad(y, 3, x);
    r += (unsigned long long)x * (unsigned long long)y / (unsigned long long)(y | 1) % 977;
    out[i] = r + __dp4a((int)x, y, 1);
  }
}

__global__ void half_ops(int n, const __half2* a, const __half2* b, __half2* c, const __nv_bfloat162* p,
                         __nv_bfloat162* q) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = __hfma2(a[i], b[i], __hmax2(a[i], b[i]));
    q[i] = __hmul2(p[i], __hadd2(p[i], p[i]));
    float2 f = __half22float2(c[i]);
    c[i] = __floats2half2_rn(f.x * 2.0f, f.y - 1.0f);
  }
}

__global__ void conversions(int n, const double* d, float* f, int* s, unsigned short* h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    f[i] = __double2float_rz(d[i]);
    s[i] = __float2int_rn(f[i]) + __double2int_rz(d[i]);
    h[i] = __half_as_ushort(__float2half_rn(f[i])) ^ __bfloat16_as_ushort(__float2bfloat16(f[i]));
  }
}
