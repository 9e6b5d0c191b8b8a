"""What works without a GPU: importing, listing kernels, dumping their PTX, the argument checks
on tensors that are not on a GPU (each naming its argument), and the clear error for what needs
the GPU. Tensors come from numpy (a DLPack producer); the torch tests run where torch is."""

import pytest

import ptxkit
from ptxkit import _ptxkit as k

np = pytest.importorskip("numpy")


def test_kernels_are_listed():
    listed = ptxkit.kernels()
    names = [name for name, _, _, _ in listed]
    assert len(names) == len(set(names)) > 10
    for op in ("rmsnorm_bf16", "swiglu_bf16", "gemm", "attention"):
        assert any(n.startswith(op) for n in names), (op, names)
    library = [n for n, _, lib, _ in listed if lib]
    assert library and library != names  # library kernels and the self-test's


def test_dump_writes_ptx_for_each_target():
    name = next(n for n, _, lib, hopper in ptxkit.kernels() if lib and not hopper)
    for target in ("sm_90a", "sm_80"):
        ptx = ptxkit.dump(name, target)
        assert f".target {target}" in ptx
        assert ".visible .entry" in ptx
    hopper = next(n for n, _, lib, hopper in ptxkit.kernels() if lib and hopper)
    assert "wgmma" in ptxkit.dump(hopper) or "cp.async.bulk" in ptxkit.dump(hopper)


def test_dump_names_unknown_kernels_and_targets():
    with pytest.raises(KeyError, match="no kernel `nope`"):
        ptxkit.dump("nope")
    with pytest.raises(ValueError, match="unknown target `sm_1`"):
        ptxkit.dump(ptxkit.kernels()[0][0], "sm_1")


def test_exceptions_form_one_family():
    assert issubclass(ptxkit.NoGpuError, ptxkit.PtxkitError)
    assert issubclass(ptxkit.ArgumentError, ptxkit.PtxkitError)
    assert issubclass(ptxkit.PtxkitError, RuntimeError)


@pytest.mark.skipif(ptxkit.device_count() > 0, reason="a GPU is present")
def test_what_needs_the_gpu_raises_no_gpu_error():
    assert ptxkit.device_count() == 0
    with pytest.raises(ptxkit.NoGpuError, match="no CUDA (driver|device)"):
        ptxkit.device_name(0)


def rows(dtype=np.float32, shape=(4, 64)):
    return np.ones(shape, dtype=dtype)


def test_cpu_tensors_are_refused_by_name():
    x, w, y = rows(), np.ones(64, np.float32), rows()
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `x`: a tensor on the CPU"):
        k.rms_norm(x, w, y, 1e-6)
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `q`: a tensor on the CPU"):
        q = np.ones((1, 128, 2, 64), np.float32)
        k.attention(q, q, q, q, np.ones((1, 2, 128), np.float32), 0.125, True)


def test_unsupported_dtypes_are_refused_by_name():
    x = rows(np.int64)
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `g`: DLPack type \(code 0, 64 bits"):
        k.swiglu(x, x, x)


def test_strided_tensors_are_refused_by_name():
    x = rows(shape=(4, 128))[:, ::2]  # every other column: stride 2
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `x`: strides .* not dense row-major"):
        k.softmax(x, rows())
    # A size-1 dimension may have any stride.
    t = rows(shape=(1, 64)).T.copy().T
    with pytest.raises(ptxkit.ArgumentError, match="a tensor on the CPU"):
        k.softmax(t, t)


def test_later_arguments_are_named():
    x, w = rows(), np.ones(64, np.float64)
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `w`: DLPack type"):
        k.layer_norm(x, w, w, x, x, x, 1e-5)
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `input`: `e3m4`"):
        k.gemm_fp8(x, x, x, x, x, "e3m4")


def test_fused_gemm_arguments_are_checked_by_name():
    a, b, c = rows(shape=(64, 128)), rows(shape=(256, 128)), rows(shape=(64, 256))
    bias, res = np.ones(256, np.float32), rows(shape=(64, 256))
    cases = [
        ("activation", r"`gelu_exact`; the activations are", dict(activation="gelu_exact")),
        ("bias", r"shape \[255\]; it takes \[n\] = \[256\]", dict(bias=bias[:255])),
        ("residual", r"it takes \[m, n\] = \[64, 256\]", dict(residual=res[:32])),
        ("a", r"holds f32; the fused GEMM takes bfloat16", dict(activation="relu")),
    ]
    for name, message, kwargs in cases:
        with pytest.raises(ptxkit.ArgumentError, match=f"argument `{name}`: .*{message}"):
            k.gemm(a, b, c, **kwargs)
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `a`: k = 100; .* multiple of 8"):
        k.gemm(rows(shape=(64, 100)), rows(shape=(256, 100)), c, activation="silu")
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `b`: n = 250; .* multiple of 8"):
        k.gemm(a, rows(shape=(250, 128)), rows(shape=(64, 250)), activation="silu")
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `b`: shape \[256, 64\]"):
        k.gemm(a, rows(shape=(256, 64)), c, bias=bias)


def test_fused_gemm_refuses_cpu_tensors_with_torch():
    torch = pytest.importorskip("torch")
    a = torch.ones(64, 128, dtype=torch.bfloat16)
    b = torch.ones(256, 128, dtype=torch.bfloat16)
    bias = torch.ones(256, dtype=torch.bfloat16)
    with pytest.raises(ptxkit.ArgumentError, match=r"argument `a`: a tensor on the CPU"):
        ptxkit.gemm(a, b, bias=bias, activation="gelu")


def test_cache_stats_start_empty():
    built, hits = ptxkit.cache_stats()
    assert built >= 0 and hits >= 0


def test_fake_shapes_with_torch():
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(2, 8, 4096, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(4096, dtype=torch.bfloat16, device="cuda")
        assert ptxkit.rms_norm(x, w).shape == x.shape
        q = torch.empty(2, 256, 16, 128, dtype=torch.bfloat16, device="cuda")
        kv = torch.empty(2, 256, 4, 128, dtype=torch.bfloat16, device="cuda")
        assert ptxkit.attention(q, kv, kv).shape == q.shape
        a = torch.empty(64, 256, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(512, 256, dtype=torch.bfloat16, device="cuda")
        assert ptxkit.gemm(a, b).shape == (64, 512)
        bias = torch.empty(512, dtype=torch.bfloat16, device="cuda")
        res = torch.empty(64, 512, dtype=torch.bfloat16, device="cuda")
        fused = ptxkit.gemm(a, b, bias=bias, activation="gelu_tanh", residual=res)
        assert fused.shape == (64, 512) and fused.dtype == torch.bfloat16
        offs = torch.empty(4, dtype=torch.int32, device="cuda")
        bg = torch.empty(4, 512, 256, dtype=torch.bfloat16, device="cuda")
        assert ptxkit.grouped_gemm(a, bg, offs).shape == (64, 512)


def test_readme_shows_the_example_file():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    example = (root / "python" / "examples" / "torch_example.py").read_text()
    assert f"```python\n{example}```" in (root / "README.md").read_text()
