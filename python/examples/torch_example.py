import torch
import ptxkit

x = torch.randn(4, 2048, 4096, device="cuda", dtype=torch.bfloat16)
w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
h = ptxkit.rms_norm(x, w, eps=1e-6)               # torch.ops.ptxkit.rms_norm, torch's stream
q = torch.randn(4, 2048, 16, 128, device="cuda", dtype=torch.bfloat16)
kv = torch.randn(4, 2048, 4, 128, device="cuda", dtype=torch.bfloat16)
o = ptxkit.attention(q, kv, kv, causal=True)      # [batch, seq, heads, dim], GQA
y = ptxkit.gemm(h.view(-1, 4096), torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16))
f = torch.compile(lambda x, w: ptxkit.swiglu(ptxkit.rms_norm(x, w), x), fullgraph=True)
print(o.shape, y.shape, f(x, w).shape, ptxkit.cache_stats())
