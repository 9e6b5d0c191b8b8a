"""ptxkit's kernels as torch custom ops (``torch.ops.ptxkit.*``), each with a fake (meta)
implementation for ``torch.compile``.

Each public function allocates its outputs with torch and launches the kernel on torch's
current CUDA stream, reading the tensors through DLPack with no copy. An eager call that needs
nothing of the dispatcher (no compile tracing, no autograd, plain tensors) calls the kernel
directly, which saves the dispatcher's cost per call; any other call goes through the custom op.
The kernels are forward-only: a call on tensors that require grad goes through the custom op,
whose backward torch refuses.
"""

import math
from typing import Optional

import torch
from torch import Tensor

from ptxkit import _ptxkit as _k
from ptxkit._ptxkit import ArgumentError

_FP8 = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}


_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_PLAIN = (Tensor, torch.nn.Parameter)


def _direct(*tensors: Tensor) -> bool:
    """Whether an eager call may launch without the dispatcher: not while torch.compile
    traces, and only on plain tensors (or parameters) that autograd does not track."""
    if _compiling():
        return False
    if _grad_enabled():
        for t in tensors:
            if type(t) not in _PLAIN or t.requires_grad:
                return False
        return True
    for t in tensors:
        if type(t) not in _PLAIN:
            return False
    return True


def _rows_shape(x: Tensor) -> list:
    return list(x.shape[:-1])


# RMSNorm ---------------------------------------------------------------------------------


def _rms_norm(x: Tensor, w: Tensor, eps: float) -> Tensor:
    y = torch.empty_like(x)
    _k.rms_norm(x, w, y, eps)
    return y


@torch.library.custom_op("ptxkit::rms_norm", mutates_args=())
def _rms_norm_op(x: Tensor, w: Tensor, eps: float) -> Tensor:
    return _rms_norm(x, w, eps)


@_rms_norm_op.register_fake
def _(x: Tensor, w: Tensor, eps: float) -> Tensor:
    return torch.empty_like(x)


def rms_norm(x: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * w`` over the last dimension (f32 math)."""
    if _direct(x, w):
        return _rms_norm(x, w, eps)
    return _rms_norm_op(x, w, eps)


# Residual RMSNorm ------------------------------------------------------------------------


def _residual_rms_norm(x: Tensor, residual: Tensor, w: Tensor, eps: float) -> Tensor:
    y = torch.empty_like(x)
    _k.residual_rms_norm(x, residual, w, y, eps)
    return y


@torch.library.custom_op("ptxkit::residual_rms_norm", mutates_args=("residual",))
def _residual_rms_norm_op(x: Tensor, residual: Tensor, w: Tensor, eps: float) -> Tensor:
    return _residual_rms_norm(x, residual, w, eps)


@_residual_rms_norm_op.register_fake
def _(x: Tensor, residual: Tensor, w: Tensor, eps: float) -> Tensor:
    return torch.empty_like(x)


def residual_rms_norm(x: Tensor, residual: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    """``residual += x`` in place, then returns ``rms_norm(residual, w, eps)``."""
    if _direct(x, residual, w):
        return _residual_rms_norm(x, residual, w, eps)
    return _residual_rms_norm_op(x, residual, w, eps)


# LayerNorm -------------------------------------------------------------------------------


def _layer_norm(x: Tensor, w: Tensor, b: Tensor, eps: float):
    y = torch.empty_like(x)
    mean = torch.empty(_rows_shape(x), dtype=torch.float32, device=x.device)
    rstd = torch.empty_like(mean)
    _k.layer_norm(x, w, b, y, mean, rstd, eps)
    return y, mean, rstd


@torch.library.custom_op("ptxkit::layer_norm", mutates_args=())
def _layer_norm_op(x: Tensor, w: Tensor, b: Tensor, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    return _layer_norm(x, w, b, eps)


@_layer_norm_op.register_fake
def _(x: Tensor, w: Tensor, b: Tensor, eps: float):
    mean = x.new_empty(_rows_shape(x), dtype=torch.float32)
    return torch.empty_like(x), mean, torch.empty_like(mean)


def layer_norm(x: Tensor, w: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * w + b`` over the last dimension."""
    if _direct(x, w, b):
        return _layer_norm(x, w, b, eps)[0]
    return _layer_norm_op(x, w, b, eps)[0]


# Softmax ---------------------------------------------------------------------------------


def _softmax(x: Tensor) -> Tensor:
    y = torch.empty_like(x)
    _k.softmax(x, y)
    return y


@torch.library.custom_op("ptxkit::softmax", mutates_args=())
def _softmax_op(x: Tensor) -> Tensor:
    return _softmax(x)


@_softmax_op.register_fake
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x)


def softmax(x: Tensor) -> Tensor:
    """Softmax over the last dimension."""
    if _direct(x):
        return _softmax(x)
    return _softmax_op(x)


# SwiGLU ----------------------------------------------------------------------------------


def _swiglu(g: Tensor, u: Tensor) -> Tensor:
    y = torch.empty_like(g)
    _k.swiglu(g, u, y)
    return y


@torch.library.custom_op("ptxkit::swiglu", mutates_args=())
def _swiglu_op(g: Tensor, u: Tensor) -> Tensor:
    return _swiglu(g, u)


@_swiglu_op.register_fake
def _(g: Tensor, u: Tensor) -> Tensor:
    return torch.empty_like(g)


def swiglu(g: Tensor, u: Tensor) -> Tensor:
    """``silu(g) * u`` element by element (the Llama MLP's activation)."""
    if _direct(g, u):
        return _swiglu(g, u)
    return _swiglu_op(g, u)


# Attention -------------------------------------------------------------------------------


def _attention(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool):
    o = torch.empty_like(q)
    b, s, h, _ = q.shape
    lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    _k.attention(q, k, v, o, lse, scale, causal)
    return o, lse


@torch.library.custom_op("ptxkit::attention", mutates_args=())
def _attention_op(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool) -> tuple[Tensor, Tensor]:
    return _attention(q, k, v, scale, causal)


@_attention_op.register_fake
def _(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool):
    b, s, h, _ = q.shape
    return torch.empty_like(q), q.new_empty((b, h, s), dtype=torch.float32)


def attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = True, scale: Optional[float] = None
) -> Tensor:
    """``softmax(q @ k.T * scale [+ causal mask]) @ v`` per head, FlashAttention-3 style
    (Hopper): ``q`` ``[batch, seqlen_q, heads, d]``, ``k`` and ``v`` ``[batch, seqlen_k,
    kv_heads, d]`` (``kv_heads`` dividing ``heads``: GQA), bf16 or f16, ``d`` 64, 128 or 256.
    The causal mask is aligned to the bottom right. ``scale`` defaults to ``1/sqrt(d)``."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    if _direct(q, k, v):
        return _attention(q, k, v, scale, causal)[0]
    return _attention_op(q, k, v, scale, causal)[0]


# GEMMs -----------------------------------------------------------------------------------


def _gemm(
    a: Tensor,
    b: Tensor,
    bias: Optional[Tensor] = None,
    activation: Optional[str] = None,
    residual: Optional[Tensor] = None,
) -> Tensor:
    c = a.new_empty((a.shape[0], b.shape[0]))
    _k.gemm(a, b, c, bias, activation, residual)
    return c


@torch.library.custom_op("ptxkit::gemm", mutates_args=())
def _gemm_op(
    a: Tensor,
    b: Tensor,
    bias: Optional[Tensor] = None,
    activation: Optional[str] = None,
    residual: Optional[Tensor] = None,
) -> Tensor:
    return _gemm(a, b, bias, activation, residual)


@_gemm_op.register_fake
def _(a, b, bias=None, activation=None, residual=None):
    return a.new_empty((a.shape[0], b.shape[0]))


def gemm(
    a: Tensor,
    b: Tensor,
    bias: Optional[Tensor] = None,
    activation: Optional[str] = None,
    residual: Optional[Tensor] = None,
) -> Tensor:
    """``act(a @ b.T + bias) + residual`` (``a @ b.T`` is ``torch.nn.functional.linear(a, b)``):
    ``a`` ``[m, k]``, ``b`` ``[n, k]``, with f32 accumulation. Without an epilogue, bf16 or f16
    and any sizes. With one (any of ``bias`` ``[n]``, ``activation`` one of ``"relu"``,
    ``"gelu_tanh"``, ``"gelu"`` (erf) and ``"silu"``, ``residual`` ``[m, n]``), fused into the
    GEMM's epilogue in one kernel: every tensor bf16, ``k`` and ``n`` multiples of 8."""
    if _direct(*(t for t in (a, b, bias, residual) if t is not None)):
        return _gemm(a, b, bias, activation, residual)
    return _gemm_op(a, b, bias, activation, residual)


def _fp8_format(a: Tensor, b: Tensor) -> str:
    fmt = _FP8.get(a.dtype)
    if fmt is None:
        raise ArgumentError(
            f"argument `a`: holds {a.dtype}; the FP8 GEMMs take torch.float8_e4m3fn or "
            "torch.float8_e5m2"
        )
    if b.dtype != a.dtype:
        raise ArgumentError(f"argument `b`: holds {b.dtype}; `a` holds {a.dtype}")
    return fmt


def _gemm_fp8(a, b, scale_a, scale_b, out_dtype, block: bool) -> Tensor:
    fmt = _fp8_format(a, b)
    c = torch.empty((a.shape[0], b.shape[0]), dtype=out_dtype, device=a.device)
    # 8-bit operands go as their bytes with the format named: DLPack before 1.1 has no codes
    # for them.
    _k.gemm_fp8(a.view(torch.uint8), b.view(torch.uint8), c, scale_a, scale_b, fmt, block)
    return c


@torch.library.custom_op("ptxkit::gemm_fp8", mutates_args=())
def _gemm_fp8_op(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype) -> Tensor:
    return _gemm_fp8(a, b, scale_a, scale_b, out_dtype, block=False)


@_gemm_fp8_op.register_fake
def _(a, b, scale_a, scale_b, out_dtype):
    return a.new_empty((a.shape[0], b.shape[0]), dtype=out_dtype)


def gemm_fp8(
    a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype = torch.bfloat16
) -> Tensor:
    """``scale_a * scale_b * (a @ b.T)``: ``a`` ``[m, k]``, ``b`` ``[n, k]`` float8 (e4m3fn or
    e5m2, ``k`` a multiple of 16), ``scale_a``, ``scale_b`` one-element f32 tensors (as
    ``torch._scaled_mm`` takes them)."""
    if _direct(a, b, scale_a, scale_b):
        return _gemm_fp8(a, b, scale_a, scale_b, out_dtype, block=False)
    return _gemm_fp8_op(a, b, scale_a, scale_b, out_dtype)


@torch.library.custom_op("ptxkit::gemm_fp8_block", mutates_args=())
def _gemm_fp8_block_op(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype) -> Tensor:
    return _gemm_fp8(a, b, scale_a, scale_b, out_dtype, block=True)


@_gemm_fp8_block_op.register_fake
def _(a, b, scale_a, scale_b, out_dtype):
    return a.new_empty((a.shape[0], b.shape[0]), dtype=out_dtype)


def gemm_fp8_block(
    a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype = torch.bfloat16
) -> Tensor:
    """The block-scaled FP8 GEMM (DeepSeek-V3's scales): ``a`` ``[m, k]``, ``b`` ``[n, k]``
    float8, ``scale_a`` ``[ceil(k/128), m]`` (one scale per 128 columns of each row of ``a``),
    ``scale_b`` ``[ceil(n/128), ceil(k/128)]`` (one per 128 x 128 block of ``b``), f32."""
    if _direct(a, b, scale_a, scale_b):
        return _gemm_fp8(a, b, scale_a, scale_b, out_dtype, block=True)
    return _gemm_fp8_block_op(a, b, scale_a, scale_b, out_dtype)


def _grouped_gemm(a: Tensor, b: Tensor, offs: Tensor) -> Tensor:
    c = a.new_empty((a.shape[0], b.shape[1]))
    _k.grouped_gemm(a, b, offs, c)
    return c


@torch.library.custom_op("ptxkit::grouped_gemm", mutates_args=())
def _grouped_gemm_op(a: Tensor, b: Tensor, offs: Tensor) -> Tensor:
    return _grouped_gemm(a, b, offs)


@_grouped_gemm_op.register_fake
def _(a: Tensor, b: Tensor, offs: Tensor) -> Tensor:
    return a.new_empty((a.shape[0], b.shape[1]))


def grouped_gemm(a: Tensor, b: Tensor, offs: Tensor) -> Tensor:
    """The mixture-of-experts grouped GEMM: ``a`` ``[m_total, k]`` holds every group's rows one
    group after another, ``offs`` int32 ``[groups]`` their cumulative ends (as
    ``torch._grouped_mm``'s), ``b`` ``[groups, n, k]``; row ``i`` of group ``g`` of the result is
    ``a[i] @ b[g].T``."""
    if _direct(a, b, offs):
        return _grouped_gemm(a, b, offs)
    return _grouped_gemm_op(a, b, offs)
