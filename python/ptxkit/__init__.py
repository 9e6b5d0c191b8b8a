"""ptxkit: GPU kernels written straight to PTX from Rust, for PyTorch.

Importing needs neither a GPU nor the CUDA toolkit: :func:`kernels` lists the named kernels and
:func:`dump` writes their PTX anywhere. What needs a GPU raises :class:`NoGpuError` where there
is none. With torch installed, the ops (:func:`rms_norm`, :func:`attention`, :func:`gemm`, ...)
are torch custom ops (``torch.ops.ptxkit.*``) that ``torch.compile(fullgraph=True)`` traces;
they run on torch's current CUDA stream, on torch's tensors through DLPack without a copy.
"""

from ptxkit._ptxkit import (
    ArgumentError,
    NoGpuError,
    PtxkitError,
    cache_stats,
    device_count,
    device_name,
    dump,
    kernels,
)

__all__ = [
    "ArgumentError",
    "NoGpuError",
    "PtxkitError",
    "cache_stats",
    "device_count",
    "device_name",
    "dump",
    "kernels",
]

try:
    import torch as _torch  # noqa: F401
except ImportError:  # the ops need torch; listing and dumping kernels do not
    pass
else:
    from ptxkit.ops import (  # noqa: F401
        attention,
        gemm,
        gemm_fp8,
        gemm_fp8_block,
        grouped_gemm,
        layer_norm,
        residual_rms_norm,
        rms_norm,
        softmax,
        swiglu,
    )

    __all__ += [
        "attention",
        "gemm",
        "gemm_fp8",
        "gemm_fp8_block",
        "grouped_gemm",
        "layer_norm",
        "residual_rms_norm",
        "rms_norm",
        "softmax",
        "swiglu",
    ]
