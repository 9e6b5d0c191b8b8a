"""Hugging Face ``transformers`` with ptxkit's kernels: attention registered through
transformers' attention interface as ``"ptxkit"``, and a Llama-architecture model's RMSNorm and
MLP activation replaced by ptxkit ops.

    import ptxkit.hf
    ptxkit.hf.register()                       # attn_implementation="ptxkit"
    model.set_attn_implementation("ptxkit")
    ptxkit.hf.use_ptxkit_layers(model)         # RMSNorm and SwiGLU
"""

import types

import torch

import ptxkit
from ptxkit import ArgumentError

NAME = "ptxkit"


def attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' attention-function interface: ``query`` ``[batch, heads, seq, d]``,
    ``key`` and ``value`` ``[batch, kv_heads, seq, d]`` (GQA); returns ``([batch, seq, heads,
    d], None)``. Causal (as the module says), without padding: the mask function registered
    with it gives ``None`` then, and a mask given is refused."""
    if attention_mask is not None:
        raise ArgumentError(
            "argument `attention_mask`: ptxkit attention takes no padding (a causal mask only)"
        )
    if dropout:
        raise ArgumentError("argument `dropout`: ptxkit attention is inference-only (dropout 0)")
    # transformers' projections are [batch, seq, heads, d] in memory, seen transposed.
    q, k, v = (t.transpose(1, 2).contiguous() for t in (query, key, value))
    causal = bool(getattr(module, "is_causal", True)) and q.shape[1] > 1
    return ptxkit.attention(q, k, v, causal=causal, scale=scaling), None


def register() -> None:
    """Registers :func:`attention_forward` as ``attn_implementation="ptxkit"``, with a mask
    function that gives ``None`` for a causal mask without padding (flash attention's, else
    sdpa's)."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, attention_forward)
    from transformers import masking_utils

    mask = getattr(masking_utils, "flash_attention_mask", None) or masking_utils.sdpa_mask
    masking_utils.AttentionMaskInterface.register(NAME, mask)


def _rms_norm_forward(self, hidden_states):
    return ptxkit.rms_norm(hidden_states, self.weight, self.variance_epsilon)


def _mlp_forward(self, x):
    return self.down_proj(ptxkit.swiglu(self.gate_proj(x), self.up_proj(x)))


def use_ptxkit_layers(model: torch.nn.Module) -> int:
    """Replaces the forward of every RMSNorm (a module with ``weight`` and
    ``variance_epsilon``) by :func:`ptxkit.rms_norm` and of every gated SiLU MLP (``gate_proj``,
    ``up_proj``, ``down_proj`` and a SiLU ``act_fn``) by :func:`ptxkit.swiglu` between its
    projections. Returns how many modules were replaced."""
    replaced = 0
    for m in model.modules():
        if hasattr(m, "variance_epsilon") and isinstance(getattr(m, "weight", None), torch.Tensor):
            m.forward = types.MethodType(_rms_norm_forward, m)
            replaced += 1
        elif all(hasattr(m, p) for p in ("gate_proj", "up_proj", "down_proj", "act_fn")):
            if isinstance(m.act_fn, torch.nn.SiLU) or type(m.act_fn).__name__ == "SiLUActivation":
                m.forward = types.MethodType(_mlp_forward, m)
                replaced += 1
    return replaced
