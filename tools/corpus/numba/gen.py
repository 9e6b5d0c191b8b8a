"""numba-cuda kernels written here, compiled to PTX without a GPU (numba.cuda.compile_ptx, through the
NVVM of the nvidia-nvvm wheel), for several targets and flag sets. Issue 33's corpus.
Usage: python gen.py OUT_DIR."""
import math
import os
import sys

from numba import cuda, float32, int32


def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def strided_sum(x, out):
    acc = 0.0
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    cuda.atomic.add(out, 0, acc)


def shared_reduce(x, out):
    buf = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


def matmul(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[i, k] * b[k, j]
        c[i, j] = acc


def tiled_matmul(a, b, c):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    acc = float32(0.0)
    for t in range((a.shape[1] + 15) // 16):
        sa[ty, tx] = a[y, t * 16 + tx] if y < a.shape[0] and t * 16 + tx < a.shape[1] else 0.0
        sb[ty, tx] = b[t * 16 + ty, x] if x < b.shape[1] and t * 16 + ty < b.shape[0] else 0.0
        cuda.syncthreads()
        for k in range(16):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = acc


def math_ops(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        y[i] = math.exp(v) + math.log(abs(v) + 1) + math.sin(v) + math.sqrt(abs(v)) + math.tanh(v) + \
            math.erf(v) + math.floor(v) + math.pow(abs(v), 1.5) + math.atan2(v, 2.0) + math.fmod(v, 3.0)


def int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out[i] = x // (y | 1) + x % (y | 1) + (x << 3) + (x >> 2) + (x & y) + (x | y) + (x ^ y) + \
            cuda.popc(y) + cuda.clz(y) + cuda.brev(y) + min(x, y) + max(x, y)


def atomics(a, f, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(a, 0, 1)
        cuda.atomic.max(a, 1, i)
        cuda.atomic.min(a, 2, i)
        cuda.atomic.compare_and_swap(a[3:], 0, i)
        cuda.atomic.exch(a, 4, i)
        cuda.atomic.add(f, 0, 1.5)
        cuda.atomic.and_(a, 5, i)


def warp_ops(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else 0
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    b = cuda.ballot_sync(0xffffffff, v > 0)
    if cuda.laneid == 0:
        out[i // 32] = v + b + cuda.any_sync(0xffffffff, v == 3) + cuda.all_sync(0xffffffff, v > -1)
    cuda.syncwarp()


def local_array(x, out, k):
    buf = cuda.local.array(32, int32)
    i = cuda.grid(1)
    for j in range(32):
        buf[j] = x[(i + j) % x.size]
    if i < out.size:
        out[i] = buf[k % 32] + buf[(k + 7) % 32]


def double_ops(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        y[i] = v / 3.0 + math.sqrt(abs(v)) + math.exp(v) + math.cos(v) + math.fabs(v) + math.ceil(v)


def branches(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v & 7 == 0:
            v *= 3
        elif v & 7 == 1:
            v -= 9
        elif v & 7 == 2:
            v <<= 2
        else:
            v = 0
        while v > 100:
            v -= 17
        out[i] = v


def fp16_ops(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.fp16.hfma(x[i], y[i], x[i]) + cuda.fp16.hmax(x[i], y[i])


def stencil(a, b):
    i, j = cuda.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def grid_sync_free(x, out):
    i = cuda.grid(1)
    cuda.threadfence()
    cuda.threadfence_block()
    if i < x.size:
        out[i] = x[i] + cuda.blockDim.x + cuda.gridDim.x
    cuda.threadfence_system()


JOBS = [
    (axpy, "void(float32, float32[:], float32[:])"),
    (axpy, "void(float64, float64[:], float64[:])"),
    (strided_sum, "void(float32[:], float32[:])"),
    (strided_sum, "void(float64[:], float64[:])"),
    (shared_reduce, "void(float32[:], float32[:])"),
    (matmul, "void(float32[:,:], float32[:,:], float32[:,:])"),
    (tiled_matmul, "void(float32[:,:], float32[:,:], float32[:,:])"),
    (math_ops, "void(float32[:], float32[:])"),
    (int_ops, "void(int32[:], int32[:], int32[:])"),
    (int_ops, "void(int64[:], int64[:], int64[:])"),
    (atomics, "void(int32[:], float32[:], int32)"),
    (warp_ops, "void(int32[:], int32[:])"),
    (local_array, "void(int32[:], int32[:], int32)"),
    (double_ops, "void(float64[:], float64[:])"),
    (branches, "void(int32[:], int32[:])"),
    (fp16_ops, "void(float16[:], float16[:], float16[:])"),
    (stencil, "void(float32[:,:], float32[:,:])"),
    (grid_sync_free, "void(float32[:], float32[:])"),
]
FLAGS = {"default": {}, "fastmath": {"fastmath": True}, "lineinfo": {"lineinfo": True}, "debug": {"debug": True, "opt": False}}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ok = failed = 0
    for cc in [(7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0)]:
        for n, (fn, sig) in enumerate(JOBS):
            for tag, flags in FLAGS.items():
                path = os.path.join(out, f"{fn.__name__}{n}.sm_{cc[0]}{cc[1]}.{tag}.ptx")
                if os.path.exists(path):
                    ok += 1
                    continue
                try:
                    ptx, _ = cuda.compile_ptx(fn, sig, cc=cc, **flags)
                    open(path, "w").write(ptx)
                    ok += 1
                except Exception as e:
                    failed += 1
                    print(f"numba failed: {fn.__name__} {cc} {tag}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
    print(f"{ok} numba modules in {out} ({failed} not compiled)", file=sys.stderr)


if __name__ == "__main__":
    main()
