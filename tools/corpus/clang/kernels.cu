// CUDA C++ for clang's own CUDA front end (LLVM NVPTX back end), compiled without the CUDA headers
// (-nocudainc -nocudalib): the attributes and NVVM builtins are spelled out. Written here.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define tid() __nvvm_read_ptx_sreg_tid_x()
#define ntid() __nvvm_read_ptx_sreg_ntid_x()
#define ctaid() __nvvm_read_ptx_sreg_ctaid_x()
#define nctaid() __nvvm_read_ptx_sreg_nctaid_x()
typedef float float4 __attribute__((ext_vector_type(4)));
typedef int int2 __attribute__((ext_vector_type(2)));

__device__ int gidx() { return ctaid() * ntid() + tid(); }

__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = gidx();
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void daxpy(double a, const double* __restrict__ x, double* __restrict__ y, long n) {
  for (long i = gidx(); i < n; i += ntid() * nctaid()) y[i] = a * x[i] + y[i];
}

__global__ void int_ops(const int* a, const unsigned* b, int* out, int n) {
  int i = gidx();
  if (i >= n) return;
  int x = a[i];
  unsigned y = b[i];
  out[i] = (x / 7) + (x % 5) + (int)(y >> 3) + __builtin_popcount(y) + __builtin_clz(y | 1) +
           (x < 0 ? -x : x) + (int)(y / 3u) + (x * (int)y);
}

__global__ void wide_ops(const long long* a, unsigned long long* out, int n) {
  int i = gidx();
  if (i < n) {
    long long v = a[i];
    out[i] = (unsigned long long)(v * 3 / 11) ^ __builtin_popcountll(v) ^ ((unsigned long long)v >> 17) ^
             (unsigned long long)__builtin_clzll(v | 1);
  }
}

__global__ void float_math(const float* x, float* y, int n) {
  int i = gidx();
  if (i < n) {
    float v = x[i];
    y[i] = __builtin_sqrtf(v) + __builtin_fabsf(v) + __builtin_fminf(v, 1.0f) + __builtin_fmaxf(v, -1.0f) +
           __builtin_floorf(v) + __builtin_ceilf(v) + __builtin_truncf(v) + __nvvm_ex2_approx_f(v) +
           __nvvm_lg2_approx_f(v + 2.0f) + __nvvm_sin_approx_f(v) + __nvvm_rcp_rn_f(v + 3.0f) +
           __builtin_fmaf(v, v, 1.0f);
  }
}

__global__ void double_math(const double* x, double* y, int n) {
  int i = gidx();
  if (i < n) {
    double v = x[i];
    y[i] = __builtin_sqrt(v) + __builtin_fabs(v) + __builtin_fma(v, v, 1.0) + v / 3.0 + __nvvm_rcp_rn_d(v + 1.0);
  }
}

__global__ void conversions(const float* x, const double* d, int* a, unsigned short* h, double* o, int n) {
  int i = gidx();
  if (i < n) {
    a[i] = (int)x[i] + (int)d[i] + __nvvm_f2i_rn(x[i]);
    h[i] = (unsigned short)x[i];
    o[i] = (double)x[i] + (float)d[i] + (double)a[i] + (double)(unsigned)h[i];
  }
}

__global__ void shared_reduce(const float* x, float* out, int n) {
  __shared__ float buf[256];
  int t = tid();
  float v = 0;
  for (int i = gidx(); i < n; i += ntid() * nctaid()) v += x[i];
  buf[t] = v;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[ctaid()] = buf[0];
}

__global__ void warp_shuffle(const int* x, int* out, int n) {
  int i = gidx();
  int v = i < n ? x[i] : 0;
  for (int o = 16; o > 0; o >>= 1) v += __nvvm_shfl_sync_down_i32(0xffffffffu, v, o, 31);
  v = __nvvm_shfl_sync_idx_i32(0xffffffffu, v, 0, 31);
  unsigned b = __nvvm_vote_ballot_sync(0xffffffffu, v > 0);
  if ((tid() & 31) == 0) out[i / 32] = v + (int)b + __nvvm_vote_any_sync(0xffffffffu, v == 3);
}

__global__ void atomics(int* a, unsigned* b, float* c, unsigned long long* d, int n) {
  int i = gidx();
  if (i < n) {
    __nvvm_atom_add_gen_i(a, i);
    __nvvm_atom_max_gen_i(a + 1, i);
    __nvvm_atom_min_gen_ui(b, (unsigned)i);
    __nvvm_atom_xchg_gen_i(a + 2, i);
    __nvvm_atom_cas_gen_i(a + 3, 0, i);
    __nvvm_atom_add_gen_f(c, 1.0f);
    __nvvm_atom_add_gen_ll((long long*)d, 1);
    __nvvm_atom_and_gen_i(a + 4, i);
    __nvvm_atom_or_gen_i(a + 5, i);
    __nvvm_atom_xor_gen_i(a + 6, i);
  }
}

struct Pair { float a; int b; double c; };

__device__ __attribute__((noinline)) Pair make_pair(float a, int b) { return Pair{a, b, (double)a * b}; }

__device__ __attribute__((noinline)) float poly(float x, int k) {
  float r = 0;
  for (int j = 0; j < k; ++j) r = r * x + (float)j;
  return r;
}

__global__ void calls(const float* x, Pair* out, float* y, int n) {
  int i = gidx();
  if (i < n) {
    out[i] = make_pair(x[i], i);
    y[i] = poly(x[i], i & 7);
  }
}

__global__ void branches(const int* x, int* out, int n) {
  int i = gidx();
  if (i >= n) return;
  int v = x[i];
  switch (v & 7) {
    case 0: v = v * 3; break;
    case 1: v = v - 9; break;
    case 2: v = v << 2; break;
    case 3: v = ~v; break;
    case 5: v = v / 5; break;
    default: v = 0;
  }
  while (v > 100) v -= 17;
  out[i] = v;
}

__device__ int table[16] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597};
__device__ float scale = 2.5f;
__attribute__((constant)) float coeffs[4] = {1.0f, 0.5f, 0.25f, 0.125f};

__global__ void globals(const int* x, float* out, int n) {
  int i = gidx();
  if (i < n) out[i] = (float)table[x[i] & 15] * scale + coeffs[i & 3];
}

__global__ void vectors(const float4* x, float4* y, const int2* p, int2* q, int n) {
  int i = gidx();
  if (i < n) {
    float4 v = x[i];
    y[i] = v.wzyx;
    int2 w = p[i];
    q[i] = w.yx + (int2){1, -1};
  }
}

__global__ void local_array(const int* x, int* out, int n, int k) {
  int buf[32];
  int i = gidx();
  for (int j = 0; j < 32; ++j) buf[j] = x[(i + j) % n];
  out[i % n] = buf[k & 31] + buf[(k + 7) & 31];
}

__global__ void dynamic_smem(const float* x, float* y, int n) {
  extern __shared__ float dyn[];
  int t = tid();
  dyn[t] = x[gidx() % n];
  __syncthreads();
  y[gidx() % n] = dyn[ntid() - 1 - t];
}

__global__ void clocks(unsigned long long* out) {
  unsigned long long t0 = __nvvm_read_ptx_sreg_clock64();
  long long c = __builtin_readcyclecounter();
  out[gidx()] = t0 + (unsigned long long)c + __nvvm_read_ptx_sreg_laneid() + __nvvm_read_ptx_sreg_warpid() +
                __nvvm_read_ptx_sreg_smid();
}

__global__ void fences(int* flag, int* data) {
  data[gidx()] = 1;
  __nvvm_membar_gl();
  __nvvm_membar_cta();
  __nvvm_membar_sys();
  if (tid() == 0) __nvvm_atom_add_gen_i(flag, 1);
}
