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


# What a call passes besides tensors; everything else it passes is held to `_direct`.
_NOT_TENSORS = (type(None), bool, int, float, str, torch.dtype)


def _op(name: str, impl, fake, mutates_args=(), schema=None):
    """``impl`` as the torch custom op ``ptxkit::{name}`` (its schema ``schema``, or read from
    ``impl``'s annotations), with ``fake`` as its fake (meta) kernel for ``torch.compile``."""
    op = torch.library.custom_op(f"ptxkit::{name}", impl, mutates_args=mutates_args, schema=schema)
    op.register_fake(fake)
    return op


def _call(impl, op, *args):
    """``impl(*args)``, the kernel launched straight away, when the call may skip the dispatcher
    (``_direct`` of its tensors), else the custom op ``op``."""
    if _direct(*(a for a in args if not isinstance(a, _NOT_TENSORS))):
        return impl(*args)
    return op(*args)


def _rows_shape(x: Tensor) -> list:
    return list(x.shape[:-1])


# RMSNorm ---------------------------------------------------------------------------------


def _rms_norm(x: Tensor, w: Tensor, eps: float) -> Tensor:
    y = torch.empty_like(x)
    _k.rms_norm(x, w, y, eps)
    return y


_rms_norm_op = _op("rms_norm", _rms_norm, lambda x, w, eps: torch.empty_like(x))


def rms_norm(x: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * w`` over the last dimension (f32 math)."""
    return _call(_rms_norm, _rms_norm_op, x, w, eps)


# Residual RMSNorm ------------------------------------------------------------------------


def _residual_rms_norm(x: Tensor, residual: Tensor, w: Tensor, eps: float) -> Tensor:
    y = torch.empty_like(x)
    _k.residual_rms_norm(x, residual, w, y, eps)
    return y


_residual_rms_norm_op = _op(
    "residual_rms_norm",
    _residual_rms_norm,
    lambda x, residual, w, eps: torch.empty_like(x),
    mutates_args=("residual",),
)


def residual_rms_norm(x: Tensor, residual: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    """``residual += x`` in place, then returns ``rms_norm(residual, w, eps)``."""
    return _call(_residual_rms_norm, _residual_rms_norm_op, x, residual, w, eps)


# LayerNorm -------------------------------------------------------------------------------


def _layer_norm(x: Tensor, w: Tensor, b: Tensor, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    y = torch.empty_like(x)
    mean = torch.empty(_rows_shape(x), dtype=torch.float32, device=x.device)
    rstd = torch.empty_like(mean)
    _k.layer_norm(x, w, b, y, mean, rstd, eps)
    return y, mean, rstd


def _layer_norm_fake(x, w, b, eps):
    mean = x.new_empty(_rows_shape(x), dtype=torch.float32)
    return torch.empty_like(x), mean, torch.empty_like(mean)


_layer_norm_op = _op("layer_norm", _layer_norm, _layer_norm_fake)


def layer_norm(x: Tensor, w: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * w + b`` over the last dimension."""
    return _call(_layer_norm, _layer_norm_op, x, w, b, eps)[0]


# Softmax ---------------------------------------------------------------------------------


def _softmax(x: Tensor) -> Tensor:
    y = torch.empty_like(x)
    _k.softmax(x, y)
    return y


_softmax_op = _op("softmax", _softmax, lambda x: torch.empty_like(x))


def softmax(x: Tensor) -> Tensor:
    """Softmax over the last dimension."""
    return _call(_softmax, _softmax_op, x)


# SwiGLU ----------------------------------------------------------------------------------


def _swiglu(g: Tensor, u: Tensor) -> Tensor:
    y = torch.empty_like(g)
    _k.swiglu(g, u, y)
    return y


_swiglu_op = _op("swiglu", _swiglu, lambda g, u: torch.empty_like(g))


def swiglu(g: Tensor, u: Tensor) -> Tensor:
    """``silu(g) * u`` element by element (the Llama MLP's activation)."""
    return _call(_swiglu, _swiglu_op, g, u)


# Attention -------------------------------------------------------------------------------


def _attention(q: Tensor, k: Tensor, v: Tensor, scale: float, causal: bool) -> tuple[Tensor, Tensor]:
    o = torch.empty_like(q)
    b, s, h, _ = q.shape
    lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    _k.attention(q, k, v, o, lse, scale, causal)
    return o, lse


def _attention_fake(q, k, v, scale, causal):
    b, s, h, _ = q.shape
    return torch.empty_like(q), q.new_empty((b, h, s), dtype=torch.float32)


_attention_op = _op("attention", _attention, _attention_fake)


def attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = True, scale: Optional[float] = None
) -> Tensor:
    """``softmax(q @ k.T * scale [+ causal mask]) @ v`` per head, FlashAttention-3 style
    (Hopper): ``q`` ``[batch, seqlen_q, heads, d]``, ``k`` and ``v`` ``[batch, seqlen_k,
    kv_heads, d]`` (``kv_heads`` dividing ``heads``: GQA), bf16 or f16, ``d`` 64, 128 or 256.
    The causal mask is aligned to the bottom right. ``scale`` defaults to ``1/sqrt(d)``."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    return _call(_attention, _attention_op, q, k, v, scale, causal)[0]


# GEMMs -----------------------------------------------------------------------------------


def _gemm(a, b, bias=None, activation=None, residual=None) -> Tensor:
    c = a.new_empty((a.shape[0], b.shape[0]))
    _k.gemm(a, b, c, bias, activation, residual)
    return c


# The schema written out: the epilogue's operands are optional.
_gemm_op = _op(
    "gemm",
    _gemm,
    lambda a, b, bias=None, activation=None, residual=None: a.new_empty((a.shape[0], b.shape[0])),
    schema="(Tensor a, Tensor b, Tensor? bias=None, str? activation=None, Tensor? residual=None) -> Tensor",
)


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
    return _call(_gemm, _gemm_op, a, b, bias, activation, residual)


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


def _fp8(name: str, block: bool):
    """The FP8 GEMM (block-scaled when ``block``) and its custom op ``ptxkit::{name}``."""

    def gemm_fp8(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype) -> Tensor:
        fmt = _fp8_format(a, b)
        c = torch.empty((a.shape[0], b.shape[0]), dtype=out_dtype, device=a.device)
        # 8-bit operands go as their bytes with the format named: DLPack before 1.1 has no codes
        # for them.
        _k.gemm_fp8(a.view(torch.uint8), b.view(torch.uint8), c, scale_a, scale_b, fmt, block)
        return c

    def fake(a, b, scale_a, scale_b, out_dtype):
        return a.new_empty((a.shape[0], b.shape[0]), dtype=out_dtype)

    return gemm_fp8, _op(name, gemm_fp8, fake)


_gemm_fp8, _gemm_fp8_op = _fp8("gemm_fp8", block=False)
_gemm_fp8_block, _gemm_fp8_block_op = _fp8("gemm_fp8_block", block=True)


def gemm_fp8(
    a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype = torch.bfloat16
) -> Tensor:
    """``scale_a * scale_b * (a @ b.T)``: ``a`` ``[m, k]``, ``b`` ``[n, k]`` float8 (e4m3fn or
    e5m2, ``k`` a multiple of 16), ``scale_a``, ``scale_b`` one-element f32 tensors (as
    ``torch._scaled_mm`` takes them)."""
    return _call(_gemm_fp8, _gemm_fp8_op, a, b, scale_a, scale_b, out_dtype)


def gemm_fp8_block(
    a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype = torch.bfloat16
) -> Tensor:
    """The block-scaled FP8 GEMM (DeepSeek-V3's scales): ``a`` ``[m, k]``, ``b`` ``[n, k]``
    float8, ``scale_a`` ``[ceil(k/128), m]`` (one scale per 128 columns of each row of ``a``),
    ``scale_b`` ``[ceil(n/128), ceil(k/128)]`` (one per 128 x 128 block of ``b``), f32."""
    return _call(_gemm_fp8_block, _gemm_fp8_block_op, a, b, scale_a, scale_b, out_dtype)


def _grouped_gemm(a: Tensor, b: Tensor, offs: Tensor) -> Tensor:
    c = a.new_empty((a.shape[0], b.shape[1]))
    _k.grouped_gemm(a, b, offs, c)
    return c


_grouped_gemm_op = _op(
    "grouped_gemm", _grouped_gemm, lambda a, b, offs: a.new_empty((a.shape[0], b.shape[1]))
)


def grouped_gemm(a: Tensor, b: Tensor, offs: Tensor) -> Tensor:
    """The mixture-of-experts grouped GEMM: ``a`` ``[m_total, k]`` holds every group's rows one
    group after another, ``offs`` int32 ``[groups]`` their cumulative ends (as
    ``torch._grouped_mm``'s), ``b`` ``[groups, n, k]``; row ``i`` of group ``g`` of the result is
    ``a[i] @ b[g].T``."""
    return _call(_grouped_gemm, _grouped_gemm_op, a, b, offs)
