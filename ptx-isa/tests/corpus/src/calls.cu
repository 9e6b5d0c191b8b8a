// Device calls that stay calls (noinline), printf, recursion, a local array, math functions.
#include <cstdio>

__device__ __noinline__ float poly(float x, const float* c, int n) {
    float r = 0.f;
    for (int i = n - 1; i >= 0; --i) r = r * x + c[i];
    return r;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

extern "C" __global__ void calls(float* y, const float* x, int n, int verbose) {
    float c[8];
    for (int i = 0; i < 8; ++i) c[i] = 1.0f / (i + 1);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = poly(x[i], c, 8 - (i & 3));
    v += sinf(v) * __expf(-v) + sqrtf(fabsf(v)) + fib(i & 7);
    if (verbose && i == 0) printf("thread %d: %f (n = %d)\n", i, v, n);
    y[i] = v;
}

extern "C" __global__ void doubles(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = exp(x[i]) * log1p(fabs(x[i])) / (1.0 + x[i] * x[i]);
}
