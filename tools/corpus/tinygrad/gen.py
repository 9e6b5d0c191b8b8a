"""tinygrad's PTX renderer on tensor programs written here, without a GPU: the NULL device renders
through PTXRenderer (DEV=NULL:PTX:<arch>, PARALLEL=0), and each rendered kernel is kept with
tinygrad's own `.version`/`.target` substitution (compiler_cuda's PTXCompiler). Issue 33's corpus.
Usage: python gen.py OUT_DIR ARCH (run once per target; gen.sh does)."""
import os
import sys

from tinygrad.renderer import ptx as ptxmod
from tinygrad.runtime.support import compiler_cuda

out_dir, arch = sys.argv[1], sys.argv[2]
rendered = []


class Keep(compiler_cuda.PTXCompiler):
    """Stands in for the compiler (no CUDA library here): keeps the PTX as tinygrad would send it."""

    def __init__(self, arch, *_args, **_kw):
        self.arch, self.cachekey = arch, None

    def compile(self, src):
        rendered.append(self.patch(src))
        return b""

    def compile_cached(self, src):
        return self.compile(src)

    def patch(self, src):
        """compiler_cuda.PTXCompiler.compile's substitution, as tinygrad 0.14 writes it."""
        ver = int(self.arch[3:])
        return src.replace("TARGET", self.arch).replace("VERSION", "8.7" if ver >= 120 else ("7.8" if ver >= 89 else "7.5"))


compiler_cuda.NVPTXCompiler = Keep
compiler_cuda.PTXCompiler = Keep

from tinygrad import Tensor, dtypes  # noqa: E402  (after the compiler is replaced)


def programs():
    a, b = Tensor.rand(64, 64), Tensor.rand(64, 64)
    yield "matmul_relu_sum", lambda: (a @ b).relu().sum()
    yield "matmul_f16", lambda: (a.half() @ b.half()).float()
    yield "softmax", lambda: Tensor.rand(32, 1000).softmax(-1)
    yield "log_softmax", lambda: Tensor.rand(16, 513).log_softmax(-1)
    yield "layernorm", lambda: Tensor.rand(8, 768).layernorm()
    yield "conv2d", lambda: Tensor.rand(1, 3, 32, 32).conv2d(Tensor.rand(8, 3, 3, 3), padding=1)
    yield "maxpool", lambda: Tensor.rand(1, 4, 32, 32).max_pool2d()
    yield "elementwise", lambda: (Tensor.rand(4096).exp() + Tensor.rand(4096).log() * Tensor.rand(4096).sin()).sqrt()
    yield "int_ops", lambda: (Tensor.arange(4096) * 7 // 3 + (Tensor.arange(4096) % 5)).cast(dtypes.int32)
    yield "where_cmp", lambda: (Tensor.rand(2048) > 0.5).where(Tensor.rand(2048), -Tensor.rand(2048))
    yield "cumsum", lambda: Tensor.rand(1024).cumsum()
    yield "argmax", lambda: Tensor.rand(64, 128).argmax(-1)
    yield "gelu_silu", lambda: Tensor.rand(4096).gelu() + Tensor.rand(4096).silu()
    yield "transpose", lambda: Tensor.rand(128, 64).T.contiguous()
    yield "reduce_mean_var", lambda: Tensor.rand(256, 256).var(axis=1) + Tensor.rand(256, 256).mean(axis=0)
    yield "half_ops", lambda: (Tensor.rand(2048).half() * 2 + 1).relu()
    yield "bool_ops", lambda: ((Tensor.rand(1024) > 0.3) & (Tensor.rand(1024) < 0.8)).cast(dtypes.float)
    yield "double", lambda: Tensor.rand(512).cast(dtypes.float64).exp2()
    yield "uint8", lambda: (Tensor.rand(1024) * 255).cast(dtypes.uint8) + 3
    yield "int64", lambda: Tensor.arange(2048).cast(dtypes.int64) * 123456789
    yield "attention", lambda: Tensor.scaled_dot_product_attention(Tensor.rand(1, 2, 16, 32), Tensor.rand(1, 2, 16, 32),
                                                                   Tensor.rand(1, 2, 16, 32))


def main():
    os.makedirs(out_dir, exist_ok=True)
    n, seen = 0, set()
    for name, build in programs():
        rendered.clear()
        try:
            build().realize()
        except Exception as e:  # a program this version cannot render is skipped, and said
            print(f"tinygrad failed: {name} {arch}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
        for k, src in enumerate(rendered):
            if src in seen:  # the random-number kernels recur in every program
                continue
            seen.add(src)
            open(os.path.join(out_dir, f"{name}.{k}.{arch}.ptx"), "w").write(src)
            n += 1
    print(f"{n} tinygrad modules for {arch} in {out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
