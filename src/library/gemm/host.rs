//! Running the GEMM: the built kernel loaded, its launch derived from its own signature and
//! launch spec (the persistent grid sized to the device's residency, the tensor maps of A, B and
//! C built by the launcher from the tensors passed).

use ptx_isa::ScalarType;
use std::sync::Arc;

use crate::runtime::cuda::CudaStream;
use crate::runtime::{
    Arg, Device, DeviceTensor, Element, HangBuffer, JitOptions, Kernel, LaunchConfig, LoadedKernel,
    RuntimeError, StreamOrder, TensorDesc, TensorMut, TensorRef, Watch, debug_hang_from_env,
};

use super::GemmConfig;

/// What can go wrong building or running the GEMM.
#[derive(Debug, thiserror::Error)]
pub enum GemmError {
    /// The configuration is invalid or the kernel could not be built.
    #[error("building the GEMM kernel: {0}")]
    Build(#[from] ptx_isa::Error),
    /// A helper kernel (split-K's sum) could not be built.
    #[error("building a GEMM helper kernel: {0}")]
    Helper(#[from] crate::kernel::KernelError),
    /// Loading or launching failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Operands whose shapes or types do not fit the configuration.
    #[error("GEMM operands: {0}")]
    Operands(String),
    /// A block-scale tensor of [`super::Scaling::Block`] whose shape is not the block grid of
    /// the problem: `scale_a` must be `[ceil(k/128), m]`, `scale_b` `[ceil(n/128), ceil(k/128)]`.
    #[error("{operand} is {shape:?}; the block grid of this problem is {want:?}")]
    BlockScales {
        /// `"scale_a"` or `"scale_b"`.
        operand: &'static str,
        /// The shape given.
        shape: Vec<usize>,
        /// The shape the problem's blocks need.
        want: [usize; 2],
    },
    /// A kernel with its scales in the stages ([`GemmConfig::smem_scales`]) for an M that is
    /// not a multiple of 4: it loads `scale_a` `[ceil(k/128), m]` by TMA, whose tensor map
    /// needs a row pitch of a multiple of 16 bytes (CUDA Driver API `cuTensorMapEncodeTiled`).
    #[error("m = {m}: a kernel with its scales in the stages needs M a multiple of 4")]
    ScaleRowPitch {
        /// The M given.
        m: usize,
    },
    /// Epilogue operands ([`Fp8Epilogue`]) that do not match how the kernel was built
    /// ([`GemmConfig::bias`], [`GemmConfig::out_scale`]): one given to a kernel without it,
    /// one missing, a bias of the wrong type or length, an output scale passed the other way
    /// or not of one element.
    #[error("{operand}: {reason}")]
    Epilogue {
        /// `"bias"` or `"out_scale"`.
        operand: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Scales that do not match how the kernel was built: per-tensor scales to a kernel
    /// without them or with block scales, or none to a scaled kernel.
    #[error("{given} scales given to a kernel built with {built:?} scaling")]
    ScalingMismatch {
        /// What the call passed: "no", "per-tensor" or "block".
        given: &'static str,
        /// How the kernel was built.
        built: super::Scaling,
    },
    /// An 8-bit K that is not a multiple of 16: a tensor map's row pitch is a multiple of 16
    /// bytes (CUDA Driver API `cuTensorMapEncodeTiled`), and FP8 operands are not zero-padded.
    #[error("k = {k}: {input} operands need K a multiple of 16 (16-byte rows for TMA)")]
    UnalignedK {
        /// The K given.
        k: usize,
        /// A and B's type.
        input: &'static str,
    },
}

/// The optional epilogue operands of an FP8 GEMM ([`Gemm::run_fp8`],
/// [`Gemm::run_fp8_borrowed`]): `C = s·(scaled A·Bᵀ) + bias`, in f32 before C's cast.
#[derive(Clone, Default)]
pub struct Fp8Epilogue<'a> {
    /// The per-column bias, `[n]` of the kernel's bias type ([`GemmConfig::bias`]).
    pub bias: Option<TensorRef<'a>>,
    /// The output scale `s` ([`GemmConfig::out_scale`]).
    pub out_scale: Option<OutScaleArg<'a>>,
}

impl Fp8Epilogue<'_> {
    /// No epilogue operands: what a kernel without a bias or an output scale takes.
    pub const NONE: Fp8Epilogue<'static> = Fp8Epilogue {
        bias: None,
        out_scale: None,
    };
}

/// An output scale as a launch passes it: by value ([`super::OutScale::Value`]) or as a device
/// tensor of one f32 ([`super::OutScale::Pointer`]).
#[derive(Clone)]
pub enum OutScaleArg<'a> {
    /// The scale itself.
    Value(f32),
    /// A device tensor `[1]` holding it.
    Device(TensorRef<'a>),
}

impl Fp8Epilogue<'_> {
    /// Checks the operands against how `cfg` was built, for a problem of `n` columns.
    fn check(&self, cfg: &GemmConfig, n: usize) -> Result<(), GemmError> {
        use super::OutScale;
        let bad = |operand, reason: String| Err(GemmError::Epilogue { operand, reason });
        match (cfg.bias, &self.bias) {
            (None, None) => {}
            (Some(t), Some(b)) if b.desc().dtype != t || b.desc().shape != [n] => {
                return bad(
                    "bias",
                    format!(
                        "{} {:?}; the kernel takes {} [{n}]",
                        b.desc().dtype.name(),
                        b.desc().shape,
                        t.name()
                    ),
                );
            }
            (Some(_), Some(_)) => {}
            (None, Some(_)) => return bad("bias", "given to a kernel built without one".into()),
            (Some(_), None) => return bad("bias", "the kernel was built with one".into()),
        }
        match (cfg.out_scale, &self.out_scale) {
            (OutScale::None, None) | (OutScale::Value, Some(OutScaleArg::Value(_))) => Ok(()),
            (OutScale::Pointer, Some(OutScaleArg::Device(t))) if t.desc().shape == [1] => Ok(()),
            (built, given) => bad(
                "out_scale",
                format!(
                    "{} given to a kernel built with {built:?}",
                    match given {
                        None => "none",
                        Some(OutScaleArg::Value(_)) => "a value",
                        Some(OutScaleArg::Device(_)) => "a device tensor (of one f32)",
                    }
                ),
            ),
        }
    }
}

/// A loaded GEMM kernel for one configuration.
pub struct Gemm {
    cfg: GemmConfig,
    /// The kernel, launched through its own signature and launch spec.
    kernel: LoadedKernel,
    /// Zero-pads K to a multiple of 8 for problems whose K is not.
    pad: Kernel,
    /// The hang-record buffer of a debug build ([`crate::runtime::DEBUG_HANG_ENV`] set).
    hang: Option<HangBuffer>,
    /// With split-K ([`GemmConfig::split_k`]): the sum of the parts and its workspace.
    split: Option<SplitSum>,
}

/// Split-K's second kernel ([`super::split`]; none with the in-kernel fixup,
/// [`GemmConfig::split_fixup`]), the f32 workspace the GEMM's parts write (`[split_k, m, n]`,
/// or the fixup's [`super::fixup::workspace_shape`]) and the fixup's counters, kept from one run to the next (made again, zeroed, when the
/// extents change; each launch leaves its counters zero).
struct SplitSum {
    kernel: Option<LoadedKernel>,
    workspace: std::sync::Mutex<Option<cudarc::driver::CudaSlice<f32>>>,
    counters: std::sync::Mutex<Option<cudarc::driver::CudaSlice<u32>>>,
}

impl Gemm {
    /// Builds the kernel's PTX and loads it on `device`. With `PTXKIT_DEBUG_HANG` set, the debug
    /// build: bounded waits, and [`Gemm::run`] waits for each launch so a hang comes back as
    /// [`RuntimeError::Hang`] naming the barrier.
    pub fn new(device: &Device, cfg: GemmConfig) -> Result<Gemm, GemmError> {
        Gemm::with_hang_bound(device, cfg, debug_hang_from_env()?)
    }

    /// The GEMM for a problem `m x n x k` of `input` A and B and `output` C on `device`, as the
    /// library picks it: the tuning cache's choice for the device first (`ptxkit tune`'s file,
    /// [`super::tune::TuneCache::default_path`]), the rule second
    /// ([`super::tune::config_for_problem`]); then [`Gemm::new`]. [`GemmConfig::for_problem`]
    /// is the rule alone. 8-bit inputs take per-tensor scales ([`Gemm::run_fp8`]).
    pub fn for_problem(
        device: &Device,
        (m, n, k): (usize, usize, usize),
        input: ScalarType,
        output: ScalarType,
    ) -> Result<Gemm, GemmError> {
        let problem = super::tune::TuneProblem::new(m, n, k, input, output);
        Gemm::new(device, super::tune::config_for_problem(device, &problem))
    }

    /// [`Gemm::new`] with the debug build chosen here: `Some(bound)` bounds every wait (no
    /// environment read).
    pub fn with_hang_bound(
        device: &Device,
        cfg: GemmConfig,
        bound: Option<std::time::Duration>,
    ) -> Result<Gemm, GemmError> {
        let gemm = super::build_with(&cfg, HangBuffer::wait_mode(bound))?;
        let kernel = gemm.built.load(device, &JitOptions::default())?;
        let module = kernel.kernel().module();
        let hang = HangBuffer::for_bound(module, gemm.sites, bound)?;
        if let Some(h) = &hang {
            // Armed once here for [`Gemm::enqueue`]; `run` re-arms before each launch.
            h.arm(module)?;
        }
        let split = match cfg.split_k {
            1 if !cfg.stream_k => None,
            _ => Some(SplitSum {
                kernel: match cfg.split_fixup || cfg.stream_k {
                    true => None,
                    false => Some(
                        super::split::reduce_kernel(
                            cfg.output,
                            cfg.split_k,
                            ptx_isa::Target::Sm90a,
                        )?
                        .load(device, &JitOptions::default())?,
                    ),
                },
                workspace: std::sync::Mutex::new(None),
                counters: std::sync::Mutex::new(None),
            }),
        };
        let pad_ptx = super::pad::pad_module(ptx_isa::Target::Sm90a)?.to_ptx()?;
        let pad = Kernel::new(
            device.clone(),
            device.load_ptx(&pad_ptx, &JitOptions::default())?,
            super::pad::pad_signature(cfg.input),
        )?;
        Ok(Gemm {
            hang,
            cfg,
            pad,
            kernel,
            split,
        })
    }

    /// For a kernel in clusters (`cluster_m = 2`, or `cluster_n` 2 or 4): how many clusters the
    /// GPU holds at once (the persistent grid's most clusters, read when the kernel was loaded);
    /// 0 otherwise.
    pub fn max_active_clusters(&self) -> u32 {
        self.kernel
            .residency()
            .and_then(|r| r.clusters)
            .map_or(0, |c| c.max(1))
    }

    /// The loaded kernel (its built PTX, signature and launch spec, and the device's residency).
    pub fn kernel(&self) -> &LoadedKernel {
        &self.kernel
    }

    /// A copy of `t` (`[rows, k]`) widened to `[rows, kp]` with zero columns.
    fn pad<I: Element>(
        &self,
        stream: &Arc<CudaStream>,
        t: &TensorRef<'_>,
        kp: usize,
    ) -> Result<DeviceTensor<I>, GemmError> {
        let rows = t.desc().shape[0];
        // SAFETY: uninitialised device memory that the pad kernel writes completely (one thread
        // per element of the [rows, kp] output) before anything reads it.
        let slice = unsafe { stream.alloc::<I>(rows * kp) }.map_err(RuntimeError::from)?;
        let mut out = DeviceTensor::new(slice, vec![rows, kp])?;
        let launch = LaunchConfig::for_elements(rows * kp, super::pad::BLOCK);
        self.pad.launch(
            stream,
            &launch,
            &mut [t.clone().into(), Arg::tensor_mut(&mut out)],
        )?;
        Ok(out)
    }

    /// [`Gemm::run_borrowed`] on zero-padded copies of A and B (of the input type `I`), their
    /// `k` widened to `kp`.
    fn run_padded<I: Element>(
        &self,
        stream: &Arc<CudaStream>,
        a: &TensorRef<'_>,
        b: &TensorRef<'_>,
        c: TensorMut<'_>,
        kp: usize,
        alpha_beta: Option<(f32, f32)>,
    ) -> Result<(), GemmError> {
        let (ap, bp) = (self.pad::<I>(stream, a, kp)?, self.pad::<I>(stream, b, kp)?);
        self.run_borrowed(stream, &(&ap).into(), &(&bp).into(), c, alpha_beta)
    }

    /// The configuration.
    pub fn config(&self) -> &GemmConfig {
        &self.cfg
    }

    /// `C = A·Bᵀ` (or `alpha·A·Bᵀ + beta·C` with `alpha_beta`) on `stream`: A is `[m, k]`, B
    /// `[n, k]`, C `[m, n]`, all row-major, any sizes. When `k` is not a multiple of 8, A and B are
    /// first copied into zero-padded buffers (a tensor map's row pitch is a multiple of 16 bytes,
    /// CUDA Driver API `cuTensorMapEncodeTiled`). [`Gemm::run_borrowed`] takes memory the
    /// caller owns.
    pub fn run<I: Element, O: Element>(
        &self,
        stream: &Arc<CudaStream>,
        a: &DeviceTensor<I>,
        b: &DeviceTensor<I>,
        c: &mut DeviceTensor<O>,
        alpha_beta: Option<(f32, f32)>,
    ) -> Result<(), GemmError> {
        self.run_borrowed(stream, &a.into(), &b.into(), c.into(), alpha_beta)
    }

    /// An FP8 kernel's `C = s·(scaled A·Bᵀ) + bias`: A `[m, k]` and B `[n, k]` of its 8-bit
    /// input types (`input`, `input_b`) with `k` a multiple of 16, C `[m, n]`, `scales` as the
    /// kernel was built ([`Fp8Scales`]: per tensor or per block, device tensors read by the
    /// kernel, so they may be computed on the device, as cuBLASLt's and `torch._scaled_mm`'s
    /// scales are) and the kernel's epilogue operands (see [`Fp8Epilogue`];
    /// [`Fp8Epilogue::NONE`] for a kernel without any). Scales of the wrong shapes are
    /// [`GemmError::BlockScales`] and epilogue operands that do not match the kernel
    /// [`GemmError::Epilogue`], before anything is enqueued. A release build does not wait for
    /// the kernel (the benchmarks time this call); a debug build does, as [`Gemm::run`].
    pub fn run_fp8<I: Element, J: Element, O: Element>(
        &self,
        stream: &Arc<CudaStream>,
        a: &DeviceTensor<I>,
        b: &DeviceTensor<J>,
        c: &mut DeviceTensor<O>,
        scales: Fp8Scales<'_>,
        epilogue: &Fp8Epilogue<'_>,
    ) -> Result<(), GemmError> {
        self.run_fp8_borrowed(stream, (&a.into(), &b.into(), c.into()), scales, epilogue)
    }

    /// [`Gemm::run_fp8`] on memory the caller owns, borrowed as [`Gemm::run_borrowed`] borrows it; waits for a debug
    /// build's kernel as [`Gemm::run`].
    pub fn run_fp8_borrowed(
        &self,
        stream: &Arc<CudaStream>,
        operands: (&TensorRef<'_>, &TensorRef<'_>, TensorMut<'_>),
        scales: Fp8Scales<'_>,
        epilogue: &Fp8Epilogue<'_>,
    ) -> Result<(), GemmError> {
        let wait = self.hang.is_some();
        let scales = match scales {
            Fp8Scales::PerTensor(s) => Scales::PerTensor(s),
            Fp8Scales::Block(s) => Scales::Block(s),
        };
        self.run_with(stream, operands, None, scales, epilogue, wait)
    }

    /// Whether this is the debug build (bounded waits).
    pub fn is_debug(&self) -> bool {
        self.hang.is_some()
    }

    /// [`Gemm::run`] without waiting for the kernel, even in a debug build (for timing it): a
    /// hang then shows as a launch failure at the next synchronize, and [`Gemm::hang_report`]
    /// reads its records.
    pub fn enqueue<I: Element, O: Element>(
        &self,
        stream: &Arc<CudaStream>,
        a: &DeviceTensor<I>,
        b: &DeviceTensor<I>,
        c: &mut DeviceTensor<O>,
        alpha_beta: Option<(f32, f32)>,
    ) -> Result<(), GemmError> {
        let operands = (&a.into(), &b.into(), c.into());
        let epilogue = Fp8Epilogue::default();
        self.run_with(stream, operands, alpha_beta, Scales::None, &epilogue, false)
    }

    /// The hang records of a debug build's launches (none in a release build).
    pub fn hang_report(&self) -> Result<Option<crate::runtime::HangDiagnosis>, GemmError> {
        match &self.hang {
            Some(h) => Ok(h.report()?),
            None => Ok(None),
        }
    }

    /// [`Gemm::run`] on memory the caller owns, with no copy: A, B and C borrowed from cudarc
    /// slices or views (at any offset into larger allocations, each with its shape), on the
    /// caller's `stream`. A and B are read through tensor maps of their own addresses, so each
    /// must be 16-byte aligned; C must be as aligned as [`GemmConfig::c_align`] says. A refused
    /// operand is an error before anything is enqueued (but the zero-padding copies of a `k`
    /// that is not a multiple of 8, which are enqueued first).
    ///
    /// ```no_run
    /// use half::bf16;
    /// use ptxkit::library::gemm::{Gemm, GemmConfig};
    /// use ptxkit::runtime::{Device, TensorMut, TensorRef};
    ///
    /// let device = Device::new(0)?;
    /// let stream = device.new_stream()?;
    /// let (m, n, k) = (256, 512, 128);
    /// // One allocation holding A then B, as a framework's arena might.
    /// let ab = stream.alloc_zeros::<bf16>(m * k + n * k)?;
    /// let mut c = stream.alloc_zeros::<bf16>(m * n)?;
    /// let (a, b) = (ab.slice(..m * k), ab.slice(m * k..));
    /// let gemm = Gemm::new(&device, GemmConfig::for_problem(m, n, device.attributes().sm_count))?;
    /// gemm.run_borrowed(
    ///     &stream,
    ///     &TensorRef::view(&a, [m, k])?,
    ///     &TensorRef::view(&b, [n, k])?,
    ///     TensorMut::slice(&mut c, [m, n])?,
    ///     None,
    /// )?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_borrowed(
        &self,
        stream: &Arc<CudaStream>,
        a: &TensorRef<'_>,
        b: &TensorRef<'_>,
        c: TensorMut<'_>,
        alpha_beta: Option<(f32, f32)>,
    ) -> Result<(), GemmError> {
        let epilogue = Fp8Epilogue::default();
        let wait = self.hang.is_some();
        self.run_with(stream, (a, b, c), alpha_beta, Scales::None, &epilogue, wait)
    }

    /// The launch behind [`Gemm::run_borrowed`], [`Gemm::enqueue`] and
    /// [`Gemm::run_fp8_borrowed`]; `scales` are an FP8 kernel's `[scale_a, scale_b]`; `wait`
    /// waits for a debug build's kernel (so a hang comes back as its records).
    #[allow(clippy::too_many_arguments)]
    fn run_with(
        &self,
        stream: &Arc<CudaStream>,
        (a, b, mut c): (&TensorRef<'_>, &TensorRef<'_>, TensorMut<'_>),
        alpha_beta: Option<(f32, f32)>,
        scales: Scales<'_>,
        epilogue: &Fp8Epilogue<'_>,
        wait: bool,
    ) -> Result<(), GemmError> {
        let (m, n, k) = check_operands(&self.cfg, a.desc(), b.desc(), c.desc(), alpha_beta)?;
        let blocks = scales.check(&self.cfg, (m, n, k))?;
        epilogue.check(&self.cfg, n)?;
        if self.split.is_some() && !self.cfg.stream_k && m > super::split::MAX_ROWS {
            return Err(GemmError::Operands(format!(
                "split-K sums at most {} rows, not {m}",
                super::split::MAX_ROWS
            )));
        }
        if k % 8 != 0 {
            // Tensor maps need 16-byte row pitches: multiply zero-padded copies instead.
            let kp = k.next_multiple_of(8);
            return match self.cfg.input {
                ScalarType::Bf16 => self.run_padded::<half::bf16>(stream, a, b, c, kp, alpha_beta),
                ScalarType::F16 => self.run_padded::<half::f16>(stream, a, b, c, kp, alpha_beta),
                other => Err(GemmError::Operands(format!(
                    "no zero-padding copy for {} inputs",
                    other.name()
                ))),
            };
        }
        // The launch the kernel states for these extents: its persistent grid sized to the
        // device's residency (read at load), its block, cluster and shared memory. Evaluated
        // here from the extents `check_operands` read, so the arguments are checked once, by
        // the launch itself (against the signature: A, B and C, their tensor maps built from
        // them, and m, n, k read from their shapes).
        // Swap-AB ([`GemmConfig::swap_ab`]): the kernel's m is the problem's n, its A the
        // problem's B (and C, `[m, n]`, its `[n, m]`).
        let (km, kn) = if self.cfg.swap_ab { (n, m) } else { (m, n) };
        let fixup_tiles = super::fixup::fixup_tiles(&self.cfg, (km, kn));
        let symbols = [("m", km), ("n", kn), ("k", k)]
            .into_iter()
            .chain(
                blocks
                    .map(|[kb, nb]| [("k_blocks", kb), ("n_blocks", nb)])
                    .into_iter()
                    .flatten(),
            )
            .map(|(name, v)| (name.to_string(), v as u64))
            .collect();
        let residency = self
            .kernel
            .residency()
            .ok_or_else(|| RuntimeError::InvalidLaunch {
                reason: "the GEMM's persistent grid needs the device's residency".into(),
            })?;
        let launch = self.kernel.built().launch_config_on(&symbols, residency)?;
        if self.cfg.stream_k {
            check_stream_k(&self.cfg, (km, kn, k), launch.grid[0])?;
        }
        // Split-K: the parts go to the workspace, summed into C after the GEMM.
        // The partials' shape as the kernel declares it: the problem's `[m, n]` per part, or
        // the fixup's blocks in fragment order ([`super::fixup::workspace_shape`]).
        // Stream-K's: two slots a CTA of the launch's grid
        // ([`super::fixup::stream_workspace_shape`]).
        let parts: Vec<usize> = if self.cfg.stream_k {
            super::fixup::stream_workspace_shape(&self.cfg, launch.grid[0] as usize).into()
        } else if self.cfg.split_fixup {
            super::fixup::workspace_shape(&self.cfg, (km, kn)).into()
        } else {
            vec![self.cfg.split_k as usize, m, n]
        };
        let mut workspace = match &self.split {
            None => None,
            Some(split) => Some(split.workspace(stream, parts.iter().product())?),
        };
        let mut counters = match (&self.split, self.cfg.split_fixup || self.cfg.stream_k) {
            (Some(split), true) => Some(split.counters(stream, fixup_tiles)?),
            _ => None,
        };
        let (first, second) = if self.cfg.swap_ab { (b, a) } else { (a, b) };
        let mut args: Vec<Arg<'_>> = vec![first.clone().into(), second.clone().into()];
        match workspace.as_mut().and_then(|w| w.as_mut()) {
            Some(w) => {
                args.push(TensorMut::slice(w, parts.clone())?.into());
                // The fixup's C and counters follow the partials.
                if let Some(Some(counters)) = counters.as_deref_mut() {
                    args.push(c.reborrow().into());
                    args.push(TensorMut::slice(counters, [fixup_tiles])?.into());
                }
            }
            None => args.push(c.reborrow().into()),
        }
        if let Some((alpha, beta)) = alpha_beta {
            args.push(Arg::scalar(alpha));
            args.push(Arg::scalar(beta));
        }
        if let Scales::PerTensor([sa, sb]) | Scales::Block([sa, sb]) = scales {
            args.push(sa.into());
            args.push(sb.into());
        }
        // The epilogue operands, in the order the kernel declares them.
        if let Some(bias) = &epilogue.bias {
            args.push(bias.clone().into());
        }
        match &epilogue.out_scale {
            Some(OutScaleArg::Value(s)) => args.push(Arg::scalar(*s)),
            Some(OutScaleArg::Device(t)) => args.push(t.clone().into()),
            None => {}
        }
        match self.hang.as_ref().filter(|_| wait) {
            // A debug build waits for the kernel, so a hang comes back as its records.
            Some(h) => {
                let watch = Watch {
                    timeout: None,
                    hang: Some(h),
                };
                self.kernel
                    .kernel()
                    .launch_watched(stream, &launch, &mut args, &watch)?;
            }
            None => {
                self.kernel.kernel().launch(stream, &launch, &mut args)?;
            }
        }
        drop(args);
        if let (Some(kernel), Some(Some(w))) = (
            self.split.as_ref().and_then(|s| s.kernel.as_ref()),
            workspace.as_deref(),
        ) {
            // A programmatic dependent of the GEMM ([`super::split`]): scheduled once every CTA
            // of the GEMM has issued its last loads, it reads the parts after the GEMM ends.
            let mut sum = [TensorRef::slice(w, parts)?.into(), c.reborrow().into()];
            kernel.launch_within(stream, &mut sum, None, StreamOrder::Dependent)?;
        }
        Ok(())
    }
}

/// Stream-K's partition on the device is 32-bit arithmetic on `k-iterations x grid`
/// ([`crate::parts::stream_k_units`]): a problem whose product reaches 2³² is refused.
fn check_stream_k(
    cfg: &GemmConfig,
    (m, n, k): (usize, usize, usize),
    grid: u32,
) -> Result<(), GemmError> {
    let tiles = m.div_ceil(cfg.bm() as usize) * n.div_ceil(cfg.bn as usize);
    let iters = tiles as u64 * k.div_ceil(cfg.bk() as usize) as u64;
    if iters.saturating_mul(u64::from(grid)) >= 1 << 32 {
        return Err(GemmError::Operands(format!(
            "stream-K over {iters} k-iterations and {grid} CTAs: their product must stay below 2^32"
        )));
    }
    Ok(())
}

/// A device buffer kept between runs: locked for the run, made (zeroed) or made again when
/// its length is not `len`. `what` names it in the error of a lock a panicking run poisoned.
type Kept<'a, T> = std::sync::MutexGuard<'a, Option<cudarc::driver::CudaSlice<T>>>;

fn kept<'a, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    slot: &'a std::sync::Mutex<Option<cudarc::driver::CudaSlice<T>>>,
    stream: &Arc<CudaStream>,
    len: usize,
    what: &str,
) -> Result<Kept<'a, T>, GemmError> {
    let mut guard = slot.lock().map_err(|_| {
        GemmError::Operands(format!("split-K's {what}: poisoned by a panicking run"))
    })?;
    if guard.as_ref().is_none_or(|w| w.len() != len) {
        *guard = Some(stream.alloc_zeros::<T>(len).map_err(RuntimeError::from)?);
    }
    Ok(guard)
}

impl SplitSum {
    /// The fixup's counters, one u32 per 64-row block, zeroed when made (each launch leaves
    /// them zero).
    fn counters(&self, stream: &Arc<CudaStream>, rows: usize) -> Result<Kept<'_, u32>, GemmError> {
        kept(&self.counters, stream, rows, "counters")
    }

    /// The workspace, holding `len` f32.
    fn workspace(&self, stream: &Arc<CudaStream>, len: usize) -> Result<Kept<'_, f32>, GemmError> {
        kept(&self.workspace, stream, len, "workspace")
    }
}

/// An FP8 launch's scales on the device, `[scale_a, scale_b]`.
pub enum Fp8Scales<'a> {
    /// Per tensor ([`super::Scaling::PerTensor`]): each `[1]` f32, `C = sa·sb·A·Bᵀ`.
    PerTensor([TensorRef<'a>; 2]),
    /// Per block ([`super::Scaling::Block`]), `C[i, j] = Σ_kb sa[kb, i]·sb[j / 128, kb]·Σ_{k in
    /// kb} A[i, k]·B[j, k]`: f32 `[ceil(k/128), m]` (M-major, as DeepGEMM takes A's scales) and
    /// `[ceil(n/128), ceil(k/128)]`; `k` any multiple of 16 (the last k-block may be partial).
    Block([TensorRef<'a>; 2]),
}

impl<'a> Fp8Scales<'a> {
    /// [`Fp8Scales::PerTensor`] of two owned device tensors.
    pub fn per_tensor([sa, sb]: [&'a DeviceTensor<f32>; 2]) -> Fp8Scales<'a> {
        Fp8Scales::PerTensor([sa.into(), sb.into()])
    }

    /// [`Fp8Scales::Block`] of two owned device tensors.
    pub fn block([sa, sb]: [&'a DeviceTensor<f32>; 2]) -> Fp8Scales<'a> {
        Fp8Scales::Block([sa.into(), sb.into()])
    }
}

/// The scales a launch passes: `[scale_a, scale_b]`, per tensor or per block.
enum Scales<'a> {
    None,
    PerTensor([TensorRef<'a>; 2]),
    Block([TensorRef<'a>; 2]),
}

impl Scales<'_> {
    /// Checks the scales against how `cfg` was built and, for block scales, their shapes
    /// against the problem's block grid; returns that grid `[k_blocks, n_blocks]`.
    fn check(
        &self,
        cfg: &GemmConfig,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Option<[usize; 2]>, GemmError> {
        use super::Scaling;
        let given = match self {
            Scales::None => "no",
            Scales::PerTensor(_) => "per-tensor",
            Scales::Block(_) => "block",
        };
        match (self, cfg.scaling) {
            (Scales::None, Scaling::None) | (Scales::PerTensor(_), Scaling::PerTensor) => Ok(None),
            (Scales::Block([sa, sb]), Scaling::Block) => {
                let block = super::SCALE_BLOCK as usize;
                let (kb, nb) = (k.div_ceil(block), n.div_ceil(block));
                for (operand, t, want) in [("scale_a", sa, [kb, m]), ("scale_b", sb, [nb, kb])] {
                    if t.desc().shape != want {
                        return Err(GemmError::BlockScales {
                            operand,
                            shape: t.desc().shape.clone(),
                            want,
                        });
                    }
                }
                if cfg.smem_scales && m % 4 != 0 {
                    return Err(GemmError::ScaleRowPitch { m });
                }
                Ok(Some([kb, nb]))
            }
            (_, built) => Err(GemmError::ScalingMismatch { given, built }),
        }
    }
}

/// Checks A, B and C against `cfg` and each other and returns `(m, n, k)`: A `[m, k]`, B
/// `[n, k]`, C `[m, n]`, A and B of the kernel's input type, `k > 0` (a multiple of 16 for 8-bit
/// inputs: [`GemmError::UnalignedK`]), N's parity and the epilogue
/// as the kernel was built, and alpha/beta given exactly when it takes them. C's dtype,
/// alignment and device, and the tensor-map rules of A, B (and C) are the launcher's checks (the
/// kernel's signature, [`super::GemmKernel::signature`]).
pub fn check_operands(
    cfg: &GemmConfig,
    a: &TensorDesc,
    b: &TensorDesc,
    c: &TensorDesc,
    alpha_beta: Option<(f32, f32)>,
) -> Result<(usize, usize, usize), GemmError> {
    let (sa, sb, sc) = (&a.shape, &b.shape, &c.shape);
    if sa.len() != 2 || sb.len() != 2 || sc.len() != 2 || sa[1] != sb[1] || *sc != [sa[0], sb[0]] {
        return Err(GemmError::Operands(format!(
            "A {sa:?}, B {sb:?}, C {sc:?}: want [m, k], [n, k], [m, n]"
        )));
    }
    let (m, n, k) = (sa[0], sb[0], sa[1]);
    if a.dtype != cfg.input || b.dtype != cfg.b_type() {
        return Err(GemmError::Operands(format!(
            "A is {}, B {}; this kernel takes {}{}",
            a.dtype.name(),
            b.dtype.name(),
            cfg.input.name(),
            if cfg.b_type() == cfg.input {
                String::new()
            } else {
                format!(" A and {} B", cfg.b_type().name())
            }
        )));
    }
    if k == 0 {
        return Err(GemmError::Operands("k = 0: nothing to multiply".into()));
    }
    if cfg.input.bytes() == 1 && k % 16 != 0 {
        return Err(GemmError::UnalignedK {
            k,
            input: cfg.input.name(),
        });
    }
    if (n % 2 == 0) != cfg.n_even {
        return Err(GemmError::Operands(format!(
            "n = {n} but the kernel was built with n_even = {}",
            cfg.n_even
        )));
    }
    if cfg.alpha_beta != alpha_beta.is_some() {
        return Err(GemmError::Operands(
            "alpha/beta given to a kernel built without them, or missing".into(),
        ));
    }
    if cfg.tma_store && n % 8 != 0 {
        return Err(GemmError::Operands(format!(
            "n = {n}: the TMA-store epilogue needs a multiple of 8"
        )));
    }
    Ok((m, n, k))
}
