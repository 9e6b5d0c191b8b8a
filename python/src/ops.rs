//! The ops: each reads its operands through DLPack ([`crate::operand`]), finds its kernel in
//! the cache by configuration (built and loaded on the first call), and launches it through
//! the library's own host code on the stream the operands' framework works on. Outputs are
//! passed in, allocated by the caller; nothing is copied.

use std::sync::Arc;

use ptx_isa::{ScalarType, Target, ty};
use ptxkit::kernel::{BuiltKernel, KernelBuilder, KernelError, TensorOpts};
use ptxkit::library::attention::{Attention, AttentionArgs, AttentionConfig, AttentionShape};
use ptxkit::library::gemm::grouped::{GroupedGemm, Grouping};
use ptxkit::library::gemm::{
    Fp8Epilogue, Fp8Scales, Gemm, GemmConfig, GemmKernel, HopperGemm, tune,
};
use ptxkit::library::rows::{RowArgs, RowConfig, RowKernel, RowOp, build_swiglu};
use ptxkit::parts::{Activation, Combine, Epilogue};
use ptxkit::runtime::cuda::CudaStream;
use ptxkit::runtime::{Arg, Device, JitOptions, LoadedKernel, TensorDesc, TensorMut, TensorRef};
use ptxkit::smem::pipeline::sync::WaitMode;
use pyo3::prelude::*;

use crate::cache::{self, FusedOps, Key};
use crate::errors::{self, ArgumentError, PtxkitError};
use crate::operand::{Operand, import};

/// The device and stream one call launches on: the first operand's device, and the stream its
/// framework lent (torch's current stream) or else the legacy default stream.
struct Launch {
    device: Device,
    stream: Arc<CudaStream>,
}

impl Launch {
    /// Places every operand ([`Operand::placed`]) and opens the first one's device.
    fn of(operands: &mut [&mut Operand]) -> PyResult<Launch> {
        Operand::placed(operands)?;
        let Some(first) = operands.first() else {
            return Err(PtxkitError::new_err("a launch of no operands"));
        };
        let device = cache::device(first.desc.device)?;
        let stream = match first.stream {
            // SAFETY: the producer's current work stream on the operand's device (the DLPack C
            // Exchange API), which lives in that device's primary context, the one `device`
            // holds; the producer keeps it alive while its tensors are in use, and the operands
            // are ready on it.
            Some(s) => unsafe { device.context().wrap_borrowed_stream(s as _) },
            None => device.default_stream(),
        };
        Ok(Launch { device, stream })
    }

    /// `built` JIT-loaded on the call's device.
    fn load(&self, built: &BuiltKernel) -> PyResult<LoadedKernel> {
        built
            .load(&self.device, &JitOptions::default())
            .map_err(errors::runtime)
    }

    /// Launches `kernel` on the call's stream.
    fn run(&self, kernel: &LoadedKernel, args: &mut [Arg<'_>]) -> PyResult<()> {
        kernel.launch(&self.stream, args).map_err(errors::runtime)?;
        Ok(())
    }
}

/// A tensor the kernel reads, borrowed from its framework.
fn borrowed(desc: TensorDesc) -> TensorRef<'static> {
    // SAFETY: `desc` was read from a live DLPack tensor on `desc.device`, which the Python
    // caller holds for the call; the launch goes on the stream its framework orders it on.
    unsafe { TensorRef::foreign(desc) }
}

/// A tensor the kernel writes, borrowed from its framework.
fn borrowed_mut(desc: TensorDesc) -> TensorMut<'static> {
    // SAFETY: as `borrowed`; the caller passes an output tensor it does not use elsewhere
    // meanwhile.
    unsafe { TensorMut::foreign(desc) }
}

/// A tensor the kernel reads, as a launch argument.
fn read(desc: TensorDesc) -> Arg<'static> {
    borrowed(desc).into()
}

/// A tensor the kernel writes, as a launch argument.
fn write(desc: TensorDesc) -> Arg<'static> {
    borrowed_mut(desc).into()
}

fn refuse(msg: String) -> PyErr {
    ArgumentError::new_err(msg)
}

/// `desc`'s extents, or an error naming it unless it has `N` dimensions.
fn dims<const N: usize>(name: &str, desc: &TensorDesc) -> PyResult<[usize; N]> {
    <[usize; N]>::try_from(desc.shape.as_slice()).map_err(|_| {
        refuse(format!(
            "argument `{name}`: shape {:?}; it takes rank {N}",
            desc.shape
        ))
    })
}

/// `desc` read as `[rows, last]` (`matrix`) or flat (`!matrix`), as the row kernels take it.
fn reshaped(mut desc: TensorDesc, matrix: bool) -> TensorDesc {
    let n: usize = desc.shape.iter().product();
    desc.shape = match desc.shape.last() {
        Some(&c) if matrix && c > 0 => vec![n / c, c],
        _ => vec![n],
    };
    desc
}

/// Calls `$body` with `$t` the PTX element type of `$dtype` (f32, f16 or bf16).
macro_rules! with_elem {
    ($dtype:expr, $name:expr, $t:ident => $body:expr) => {
        match $dtype {
            ScalarType::F32 => {
                type $t = ty::F32;
                $body
            }
            ScalarType::F16 => {
                type $t = ty::F16;
                $body
            }
            ScalarType::Bf16 => {
                type $t = ty::Bf16;
                $body
            }
            other => {
                return Err(refuse(format!(
                    "argument `{}`: holds {}; the kernel takes float32, float16 or bfloat16",
                    $name,
                    other.name()
                )));
            }
        }
    };
}

/// A row op over `x`'s last dimension, every role's tensor given in `tensors` by its name.
fn rows(op: RowOp, tensors: &[(&'static str, &Bound<'_, PyAny>)]) -> PyResult<()> {
    let mut operands: Vec<(&str, Operand)> = tensors
        .iter()
        .map(|(name, obj)| Ok((*name, import(name, obj)?)))
        .collect::<PyResult<_>>()?;
    let launch = Launch::of(&mut operands.iter_mut().map(|(_, o)| o).collect::<Vec<_>>())?;
    let x = &operands[0].1.desc;
    let Some(&cols) = x.shape.last() else {
        return Err(refuse(
            "argument `x`: a scalar; the kernel takes rows".into(),
        ));
    };
    let cols = u32::try_from(cols).map_err(|_| refuse(format!("argument `x`: {cols} columns")))?;
    let dtype = x.dtype;
    let vector = cols.is_multiple_of(RowConfig::vec_for(dtype));
    let cfg = RowConfig::for_op(op, dtype, cols, vector);
    let eps = match op {
        RowOp::RmsNorm { eps } | RowOp::ResidualRmsNorm { eps } | RowOp::LayerNorm { eps } => eps,
        RowOp::Softmax | RowOp::LogSoftmax => 0.0,
    };
    let key = Key::Row {
        op: op.name(),
        eps: eps.to_bits(),
        dtype,
        cfg,
        device: launch.device.ordinal(),
    };
    let kernel = cache::kernel(key, || {
        let built =
            with_elem!(dtype, "x", T => RowKernel::build::<T>(launch.device.target(), op, cfg))
                .map_err(errors::kernel)?;
        launch.load(&built.built)
    })?;
    let mut args = RowArgs::default();
    for (name, o) in operands {
        match name {
            "x" => args.x = Some(read(reshaped(o.desc, true))),
            "residual" => args.residual = Some(write(reshaped(o.desc, true))),
            "w" => args.w = Some(read(o.desc)),
            "b" => args.b = Some(read(o.desc)),
            "y" => args.y = Some(write(reshaped(o.desc, true))),
            "mean" => args.mean = Some(write(reshaped(o.desc, false))),
            _ => args.rstd = Some(write(reshaped(o.desc, false))),
        }
    }
    let mut args = op.args(args).map_err(|e| refuse(e.to_string()))?;
    launch.run(&kernel, &mut args)
}

/// `y = x / sqrt(mean(x²) + eps) * w` over `x`'s last dimension.
#[pyfunction]
pub fn rms_norm(
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    eps: f32,
) -> PyResult<()> {
    rows(RowOp::RmsNorm { eps }, &[("x", x), ("w", w), ("y", y)])
}

/// `residual += x`, then `y = rms_norm(residual, w)`.
#[pyfunction]
pub fn residual_rms_norm(
    x: &Bound<'_, PyAny>,
    residual: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    eps: f32,
) -> PyResult<()> {
    let tensors = [("x", x), ("residual", residual), ("w", w), ("y", y)];
    rows(RowOp::ResidualRmsNorm { eps }, &tensors)
}

/// `y = (x - mean) / sqrt(var + eps) * w + b`, with each row's mean and rstd (f32) written.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn layer_norm(
    x: &Bound<'_, PyAny>,
    w: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    mean: &Bound<'_, PyAny>,
    rstd: &Bound<'_, PyAny>,
    eps: f32,
) -> PyResult<()> {
    let tensors = [
        ("x", x),
        ("w", w),
        ("b", b),
        ("y", y),
        ("mean", mean),
        ("rstd", rstd),
    ];
    rows(RowOp::LayerNorm { eps }, &tensors)
}

/// `y = softmax(x)` over `x`'s last dimension.
#[pyfunction]
pub fn softmax(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
    rows(RowOp::Softmax, &[("x", x), ("y", y)])
}

/// `y = silu(g) * u` element by element.
#[pyfunction]
pub fn swiglu(g: &Bound<'_, PyAny>, u: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
    let (mut g, mut u, mut y) = (import("g", g)?, import("u", u)?, import("y", y)?);
    let launch = Launch::of(&mut [&mut g, &mut u, &mut y])?;
    let dtype = g.desc.dtype;
    let n: usize = g.desc.shape.iter().product();
    let vector = n.is_multiple_of(RowConfig::vec_for(dtype) as usize);
    let key = Key::Swiglu {
        dtype,
        vector,
        device: launch.device.ordinal(),
    };
    let kernel = cache::kernel(key, || {
        let built = with_elem!(dtype, "g", T => build_swiglu::<T>(launch.device.target(), vector))
            .map_err(errors::kernel)?;
        launch.load(&built)
    })?;
    let mut args = [
        read(reshaped(g.desc, false)),
        read(reshaped(u.desc, false)),
        write(reshaped(y.desc, false)),
    ];
    launch.run(&kernel, &mut args)
}

/// `o = softmax(q·kᵀ·scale [+ causal mask])·v` and each row's log-sum-exp: `q`, `o` `[batch,
/// seqlen_q, heads, d]`, `k`, `v` `[batch, seqlen_k, kv_heads, d]`, `lse` `[batch, heads,
/// seqlen_q]` f32.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    o: &Bound<'_, PyAny>,
    lse: &Bound<'_, PyAny>,
    scale: f32,
    causal: bool,
) -> PyResult<()> {
    let (mut q, mut k, mut v) = (import("q", q)?, import("k", k)?, import("v", v)?);
    let (mut o, mut lse) = (import("o", o)?, import("lse", lse)?);
    let launch = Launch::of(&mut [&mut q, &mut k, &mut v, &mut o, &mut lse])?;
    let [batch, seqlen_q, heads, head_dim] = dims("q", &q.desc)?;
    let [_, seqlen_k, kv_heads, _] = dims("k", &k.desc)?;
    let shape = AttentionShape {
        batch,
        seqlen_q,
        seqlen_k,
        heads,
        kv_heads,
        head_dim,
    };
    let cfg = AttentionConfig::for_problem(q.desc.dtype, &shape, causal);
    let key = Key::Attention(cfg, launch.device.ordinal());
    let kernel = cache::kernel(key, || {
        Attention::new(&launch.device, cfg).map_err(errors::attention)
    })?;
    let args = AttentionArgs {
        q: borrowed(q.desc),
        k: borrowed(k.desc),
        v: borrowed(v.desc),
        o: borrowed_mut(o.desc),
        lse: borrowed_mut(lse.desc),
        scale,
        seqs: None,
    };
    kernel
        .run_borrowed(&launch.stream, args)
        .map_err(errors::attention)
}

/// The dense GEMM kernel of `cfg` on the call's device, cached.
fn dense(launch: &Launch, cfg: GemmConfig) -> PyResult<Arc<Gemm>> {
    cache::kernel(Key::Gemm(cfg, launch.device.ordinal()), || {
        Gemm::new(&launch.device, cfg).map_err(errors::gemm)
    })
}

/// The SM count the GEMM configurations are picked for.
fn sms(launch: &Launch) -> u32 {
    launch.device.attributes().sm_count
}

/// The configuration of the GEMM `a·bᵀ` into a C of `output` on `launch`'s device: the tuning
/// cache's choice for the device first (`ptxkit tune`'s file, `$PTXKIT_TUNE_CACHE`), the rule
/// second ([`tune::config_for_problem`]).
fn tuned_or_rule(
    launch: &Launch,
    a: &Operand,
    b: &Operand,
    output: ScalarType,
) -> PyResult<GemmConfig> {
    let ([m, k], [n, _]) = (dims("a", &a.desc)?, dims("b", &b.desc)?);
    let problem = tune::TuneProblem::new(m, n, k, a.desc.dtype, output);
    Ok(tune::config_for_problem(&launch.device, &problem))
}

/// `c = a·bᵀ`: `a` `[m, k]`, `b` `[n, k]`, `c` `[m, n]`, 16-bit. The configuration: the tuning
/// cache's choice first, the rule second ([`tuned_or_rule`]). With an epilogue (`bias`
/// `[n]`, `activation`, `residual` `[m, n]`, any of them), `c = act(a·bᵀ + bias) + residual`
/// in one kernel ([`fused`]); without, the library's GEMM.
#[pyfunction]
#[pyo3(signature = (a, b, c, bias = None, activation = None, residual = None))]
pub fn gemm(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    c: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    activation: Option<&str>,
    residual: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let activation = activation.map(activation_named).transpose()?;
    let (mut a, mut b, mut c) = (import("a", a)?, import("b", b)?, import("c", c)?);
    if bias.is_some() || activation.is_some() || residual.is_some() {
        let bias = bias.map(|t| import("bias", t)).transpose()?;
        let residual = residual.map(|t| import("residual", t)).transpose()?;
        return fused([a, b, c], bias, activation, residual);
    }
    let launch = Launch::of(&mut [&mut a, &mut b, &mut c])?;
    let cfg = tuned_or_rule(&launch, &a, &b, c.desc.dtype)?;
    let (ra, rb, wc) = (borrowed(a.desc), borrowed(b.desc), borrowed_mut(c.desc));
    dense(&launch, cfg)?
        .run_borrowed(&launch.stream, &ra, &rb, wc, None)
        .map_err(errors::gemm)
}

/// The activation `name` names: `relu`, `gelu_tanh`, `gelu` (erf) or `silu`.
fn activation_named(name: &str) -> PyResult<Activation> {
    match name {
        "relu" => Ok(Activation::Relu),
        "gelu_tanh" => Ok(Activation::GeluTanh),
        "gelu" => Ok(Activation::GeluErf),
        "silu" => Ok(Activation::Silu),
        other => Err(refuse(format!(
            "argument `activation`: `{other}`; the activations are `relu`, `gelu_tanh`, `gelu` \
             (erf) and `silu`"
        ))),
    }
}

/// An error naming `name` unless its shape is `want` (`what` spells `want` out).
fn shaped(name: &str, o: &Operand, want: &[usize], what: &str) -> PyResult<()> {
    if o.desc.shape == want {
        return Ok(());
    }
    Err(refuse(format!(
        "argument `{name}`: shape {:?}; it takes {what} = {want:?}",
        o.desc.shape
    )))
}

/// The fused GEMM `c = act(a·bᵀ + bias) + residual`, all bf16: the library's Hopper GEMM with
/// an [`Epilogue`] of the given ops, built per configuration and epilogue. The kernel reads A
/// and B through tensor maps and stores C by TMA (the configuration
/// [`GemmConfig::for_problem`] picks), so `k` and `n` must be multiples of 8 (16-byte row
/// pitches); other shapes are refused (the plain GEMM pads K, the fused one does not).
fn fused(
    [mut a, mut b, mut c]: [Operand; 3],
    mut bias: Option<Operand>,
    activation: Option<Activation>,
    mut residual: Option<Operand>,
) -> PyResult<()> {
    let ([m, k], [n, kb]) = (dims("a", &a.desc)?, dims("b", &b.desc)?);
    if kb != k {
        return Err(refuse(format!(
            "argument `b`: shape [{n}, {kb}]; `a` is [{m}, {k}] and `b` must be [n, {k}]"
        )));
    }
    if !k.is_multiple_of(8) {
        return Err(refuse(format!(
            "argument `a`: k = {k}; the fused GEMM takes k a multiple of 8 (the plain \
             `gemm` pads other k)"
        )));
    }
    if !n.is_multiple_of(8) {
        return Err(refuse(format!(
            "argument `b`: n = {n}; the fused GEMM takes n a multiple of 8"
        )));
    }
    shaped("c", &c, &[m, n], "[m, n]")?;
    if let Some(t) = &bias {
        shaped("bias", t, &[n], "[n]")?;
    }
    if let Some(t) = &residual {
        shaped("residual", t, &[m, n], "[m, n]")?;
    }
    let named = [("a", Some(&a)), ("b", Some(&b)), ("c", Some(&c))];
    let extra = [("bias", bias.as_ref()), ("residual", residual.as_ref())];
    for (name, o) in named.into_iter().chain(extra) {
        match o.map(|o| o.desc.dtype) {
            Some(ScalarType::Bf16) | None => {}
            Some(t) => {
                return Err(refuse(format!(
                    "argument `{name}`: holds {}; the fused GEMM takes bfloat16",
                    t.name()
                )));
            }
        }
    }
    let mut operands: Vec<&mut Operand> = vec![&mut a, &mut b, &mut c];
    operands.extend(bias.as_mut());
    operands.extend(residual.as_mut());
    let launch = Launch::of(&mut operands)?;
    let ops = FusedOps {
        bias: bias.is_some(),
        activation,
        residual: residual.is_some(),
    };
    let cfg = GemmConfig::for_problem(m, n, sms(&launch));
    let key = Key::GemmEpilogue(cfg, ops, launch.device.ordinal());
    let kernel = cache::kernel(key, || {
        let built = ops.build(cfg).map_err(errors::kernel)?;
        launch.load(&built.built)
    })?;
    // The kernel's tensors in the order it declares them: A, B, C, then the epilogue's.
    let mut args = vec![read(a.desc), read(b.desc), write(c.desc)];
    args.extend(bias.map(|t| read(t.desc)));
    args.extend(residual.map(|t| read(t.desc)));
    launch.run(&kernel, &mut args)
}

impl FusedOps {
    /// The Hopper GEMM of `cfg` with these ops as its epilogue: A, B, C, then the tensors
    /// `bias` `[n]` and `residual` `[m, n]` (those it has), all bf16; the residual staged
    /// (`HopperGemm::staged_input`) with the TMA-store epilogue.
    pub fn build(self, cfg: GemmConfig) -> Result<GemmKernel, KernelError> {
        let mut k = KernelBuilder::new("gemm_epilogue", Target::Sm90a);
        let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
        let (m, n) = (gemm.m(), gemm.n());
        let mut epilogue = Epilogue::new();
        if self.bias {
            let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
            epilogue = epilogue.cols(&bias, Combine::Add);
        }
        if let Some(a) = self.activation {
            epilogue = epilogue.activation(a);
        }
        if self.residual && cfg.tma_store {
            // Loaded by TMA into each consumer's C staging block under its main loop.
            epilogue = epilogue.residual(&gemm.staged_input(&mut k, "residual")?);
        } else if self.residual {
            let align = TensorOpts::default().align(cfg.c_align());
            let residual = k.tensor::<ty::Bf16>("residual", [m, n], align)?;
            epilogue = epilogue.residual(&residual);
        }
        gemm.with_epilogue(epilogue).build(k)
    }
}

/// The 8-bit format `input` names (`e4m3` or `e5m2`).
fn fp8_format(input: &str) -> PyResult<ScalarType> {
    match input {
        "e4m3" => Ok(ScalarType::E4m3),
        "e5m2" => Ok(ScalarType::E5m2),
        other => Err(refuse(format!(
            "argument `input`: `{other}`; the 8-bit formats are `e4m3` and `e5m2`"
        ))),
    }
}

/// An 8-bit operand read as `format`: one DLPack gives in that format, or its bytes (uint8; a
/// DLPack before 1.1 has no 8-bit float codes).
fn fp8_operand(name: &str, obj: &Bound<'_, PyAny>, format: ScalarType) -> PyResult<Operand> {
    let mut o = import(name, obj)?;
    match o.desc.dtype {
        ScalarType::U8 => o.desc.dtype = format,
        t if t == format => {}
        t => {
            return Err(refuse(format!(
                "argument `{name}`: holds {}; the call takes {} (or its bytes as uint8)",
                t.name(),
                format.name()
            )));
        }
    }
    Ok(o)
}

/// The FP8 GEMMs: `a` `[m, k]`, `b` `[n, k]` 8-bit (`input` names the format), `c` `[m, n]`
/// 16-bit. Per-tensor (`block` false): `c = sa·sb·a·bᵀ`, `scale_a`, `scale_b` `[1]` f32 on the
/// device (the configuration the tuning cache's first, [`tuned_or_rule`]). Block-scaled (`block`, DeepSeek-V3's scales): `scale_a` `[ceil(k/128), m]` and
/// `scale_b` `[ceil(n/128), ceil(k/128)]` f32.
#[pyfunction]
#[pyo3(signature = (a, b, c, scale_a, scale_b, input, block = false))]
#[allow(clippy::too_many_arguments)]
pub fn gemm_fp8(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    c: &Bound<'_, PyAny>,
    scale_a: &Bound<'_, PyAny>,
    scale_b: &Bound<'_, PyAny>,
    input: &str,
    block: bool,
) -> PyResult<()> {
    let format = fp8_format(input)?;
    let (mut a, mut b) = (fp8_operand("a", a, format)?, fp8_operand("b", b, format)?);
    let mut c = import("c", c)?;
    let (mut sa, mut sb) = (import("scale_a", scale_a)?, import("scale_b", scale_b)?);
    let launch = Launch::of(&mut [&mut a, &mut b, &mut c, &mut sa, &mut sb])?;
    let cfg = match block {
        // Block scales: the rule, K split at decode shapes ([`GemmConfig::fp8_block_split`]).
        true => {
            let ([m, k], [n, _]) = (dims("a", &a.desc)?, dims("b", &b.desc)?);
            GemmConfig::fp8_block_split(m, n, k, sms(&launch), format, c.desc.dtype)
        }
        false => tuned_or_rule(&launch, &a, &b, c.desc.dtype)?,
    };
    let kernel = dense(&launch, cfg)?;
    let (ra, rb, wc) = (borrowed(a.desc), borrowed(b.desc), borrowed_mut(c.desc));
    let scales = [borrowed(sa.desc), borrowed(sb.desc)];
    let scales = match block {
        true => Fp8Scales::Block(scales),
        false => Fp8Scales::PerTensor(scales),
    };
    let epilogue = Fp8Epilogue::default();
    kernel
        .run_fp8_borrowed(&launch.stream, (&ra, &rb, wc), scales, &epilogue)
        .map_err(errors::gemm)
}

/// The grouped GEMM over contiguous groups: `a` `[m_total, k]`, `b` `[groups, n, k]`, `offs`
/// int32 `[groups]` (each group's cumulative row end), `c` `[m_total, n]`; `c`'s rows of group
/// `g` are `a`'s rows of group `g` times `b[g]ᵀ`.
#[pyfunction]
pub fn grouped_gemm(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    offs: &Bound<'_, PyAny>,
    c: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let (mut a, mut b) = (import("a", a)?, import("b", b)?);
    let (mut offs, mut c) = (import("offs", offs)?, import("c", c)?);
    let launch = Launch::of(&mut [&mut a, &mut b, &mut offs, &mut c])?;
    let [m, _] = dims("a", &a.desc)?;
    let [groups, n, _] = dims("b", &b.desc)?;
    let per_group = m / groups.max(1);
    let cfg = GemmConfig::grouped(
        Grouping::Contiguous,
        groups,
        per_group,
        n,
        sms(&launch),
        a.desc.dtype,
        a.desc.dtype,
    );
    let kernel = cache::kernel(Key::Grouped(cfg, launch.device.ordinal()), || {
        GroupedGemm::new(&launch.device, cfg).map_err(errors::grouped)
    })?;
    let (ra, rb, ro) = (borrowed(a.desc), borrowed(b.desc), borrowed(offs.desc));
    kernel
        .run(&launch.stream, &ra, &rb, &ro, None, borrowed_mut(c.desc))
        .map_err(errors::grouped)
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::Target;
    use ptxkit::library::gemm::GemmConfig;
    use ptxkit::parts::Activation;

    use crate::cache::FusedOps;

    /// Every epilogue the fused GEMM builds (each activation, with and without bias and
    /// residual) at the configurations `for_problem` picks for an edge shape and 4096², with
    /// the parameters it declares, held to ptxas where `$PTXAS` names it: it assembles. (Spills
    /// are printed, not refused: bias + SiLU spills 4 bytes in the library's epilogue.)
    #[test]
    fn every_fused_epilogue_assembles() {
        let ptxas = ptxkit::isa::ptxas::for_tests().unwrap();
        let activations = [
            None,
            Some(Activation::Relu),
            Some(Activation::GeluTanh),
            Some(Activation::GeluErf),
            Some(Activation::Silu),
        ];
        for cfg in [
            GemmConfig::for_problem(300, 520, 132),
            GemmConfig::for_problem(4096, 4096, 132),
        ] {
            for activation in activations {
                for (bias, residual) in [(false, false), (true, false), (false, true), (true, true)]
                {
                    let ops = FusedOps {
                        bias,
                        activation,
                        residual,
                    };
                    let kernel = ops.build(cfg).unwrap();
                    let names = kernel.signature().param_names();
                    assert_eq!(names.contains(&"bias"), bias, "{ops:?}: {names:?}");
                    assert_eq!(names.contains(&"residual"), residual, "{ops:?}: {names:?}");
                    let Some(ptxas) = &ptxas else { continue };
                    let out = ptxas
                        .assemble(kernel.built.ptx(), Target::Sm90a, &["-v"])
                        .unwrap();
                    assert!(out.ok, "{ops:?}: {}", out.log);
                    if !out.log.contains(" 0 bytes spill stores") {
                        let line = out.log.lines().find(|l| l.contains("spill stores"));
                        println!("spills: bn {} {ops:?}: {}", cfg.bn, line.unwrap_or("?"));
                    }
                }
            }
        }
    }
}
