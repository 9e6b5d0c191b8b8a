//! Running the GEMM: the kernel signature, tensor maps and launch configuration.

use std::sync::Arc;

use crate::runtime::cuda::CudaStream;
use crate::runtime::{
    Arg, DType, Device, DeviceTensor, Element, HangBuffer, JitOptions, Kernel, KernelSignature,
    L2Promotion, LaunchConfig, Param, RuntimeError, Swizzle, TensorMap, TensorMapDType,
    TensorMapDesc, Watch, debug_hang_from_env,
};
use smem::pipeline::sync::WaitMode;

use super::{GemmConfig, InType, OutType};

/// What can go wrong building or running the GEMM.
#[derive(Debug, thiserror::Error)]
pub enum GemmError {
    /// The configuration is invalid or the kernel could not be built.
    #[error("building the GEMM kernel: {0}")]
    Build(#[from] ptx_isa::Error),
    /// Loading or launching failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Operands whose shapes or types do not fit the configuration.
    #[error("GEMM operands: {0}")]
    Operands(String),
}

/// The signature of a GEMM kernel: the two tensor maps, C (`[m, n]`, its extents read from its
/// shape), `k`, and with `alpha_beta` the two scalars.
pub fn gemm_signature(cfg: &GemmConfig) -> KernelSignature {
    let out = match cfg.output {
        OutType::Bf16 => DType::BF16,
        OutType::F16 => DType::F16,
        OutType::F32 => DType::F32,
    };
    let mut params = vec![Param::tensor_map("tma"), Param::tensor_map("tmb")];
    if cfg.tma_store {
        params.push(Param::tensor_map("tmc"));
    }
    params.extend([
        Param::tensor("c", out, vec!["m".into(), "n".into()]),
        Param::extent_u32("m"),
        Param::extent_u32("n"),
        Param::scalar("k", DType::U32),
    ]);
    if cfg.alpha_beta {
        params.push(Param::scalar("alpha", DType::F32));
        params.push(Param::scalar("beta", DType::F32));
    }
    KernelSignature::new(cfg.name(), params)
}

/// A loaded GEMM kernel for one configuration.
pub struct Gemm {
    cfg: GemmConfig,
    kernel: Kernel,
    /// Zero-pads K to a multiple of 8 for problems whose K is not.
    pad: Kernel,
    sms: u32,
    /// Clusters that fit on the GPU at once (cluster_m = 2), so the persistent grid is one wave.
    max_clusters: u32,
    /// The hang-record buffer of a debug build ([`crate::runtime::DEBUG_HANG_ENV`] set).
    hang: Option<HangBuffer>,
}

impl Gemm {
    /// Builds the kernel's PTX and loads it on `device`. With `PTXKIT_DEBUG_HANG` set, the debug
    /// build: bounded waits, and [`Gemm::run`] waits for each launch so a hang comes back as
    /// [`RuntimeError::Hang`] naming the barrier.
    pub fn new(device: &Device, cfg: GemmConfig) -> Result<Gemm, GemmError> {
        Gemm::with_hang_bound(device, cfg, debug_hang_from_env()?)
    }

    /// [`Gemm::new`] with the debug build chosen here: `Some(bound)` bounds every wait (no
    /// environment read).
    pub fn with_hang_bound(
        device: &Device,
        cfg: GemmConfig,
        bound: Option<std::time::Duration>,
    ) -> Result<Gemm, GemmError> {
        let mode = if bound.is_some() {
            WaitMode::Bounded
        } else {
            WaitMode::Spin
        };
        let (module, sites) = super::build_with(&cfg, mode)?;
        let ptx = module.to_ptx()?;
        let module = device.load_ptx(&ptx, &JitOptions::default())?;
        let hang = match bound {
            Some(b) => {
                let h = HangBuffer::new(&module, sites, b)?;
                // Armed once here for [`Gemm::enqueue`]; `run` re-arms before each launch.
                h.arm(&module)?;
                Some(h)
            }
            None => None,
        };
        let kernel = Kernel::new(device.clone(), module, gemm_signature(&cfg))?;
        let pad_ptx = super::pad::pad_module(ptx_isa::Target::Sm90a)?.to_ptx()?;
        let pad_dtype = match cfg.input {
            InType::Bf16 => DType::BF16,
            InType::F16 => DType::F16,
        };
        let pad = Kernel::new(
            device.clone(),
            device.load_ptx(&pad_ptx, &JitOptions::default())?,
            super::pad::pad_signature(pad_dtype),
        )?;
        let sms = device.attributes().sm_count;
        let max_clusters = if cfg.cluster_m == 2 {
            let probe = LaunchConfig::new([sms / 2 * 2, 1, 1], [GemmConfig::THREADS, 1, 1])
                .with_cluster([2, 1, 1])
                .with_dynamic_smem(cfg.smem_bytes());
            kernel.max_active_clusters(&probe)?.max(1)
        } else {
            0
        };
        Ok(Gemm {
            hang,
            cfg,
            pad,
            kernel,
            sms,
            max_clusters,
        })
    }

    /// For cluster_m = 2: how many CTA pairs the GPU holds at once (the persistent grid's size).
    pub fn max_active_clusters(&self) -> u32 {
        self.max_clusters
    }

    /// A copy of `t` (`[rows, k]`) widened to `[rows, kp]` with zero columns.
    fn pad<I: Element>(
        &self,
        stream: &Arc<CudaStream>,
        t: &DeviceTensor<I>,
        kp: usize,
    ) -> Result<DeviceTensor<I>, GemmError> {
        let rows = t.shape()[0];
        // SAFETY: uninitialised device memory that the pad kernel writes completely (one thread
        // per element of the [rows, kp] output) before anything reads it.
        let slice = unsafe { stream.alloc::<I>(rows * kp) }.map_err(RuntimeError::from)?;
        let mut out = DeviceTensor::new(slice, vec![rows, kp])?;
        let launch = LaunchConfig::for_elements(rows * kp, super::pad::BLOCK);
        self.pad.launch(
            stream,
            &launch,
            &mut [Arg::tensor(t), Arg::tensor_mut(&mut out)],
        )?;
        Ok(out)
    }

    /// The configuration.
    pub fn config(&self) -> &GemmConfig {
        &self.cfg
    }

    /// The tensor map of a K-major operand `[rows, k]` loaded in boxes of `box_rows` x 64.
    fn operand_map<T: Element>(
        &self,
        t: &DeviceTensor<T>,
        box_rows: u32,
    ) -> Result<TensorMap, GemmError> {
        let dtype = match self.cfg.input {
            InType::Bf16 => TensorMapDType::BF16,
            InType::F16 => TensorMapDType::F16,
        };
        let desc =
            TensorMapDesc::row_major(dtype, t.addr(), t.shape(), &[box_rows, GemmConfig::BK])
                .with_swizzle(Swizzle::B128)
                .with_l2_promotion(L2Promotion::B256);
        Ok(self.kernel_device().encode_tensor_map(&desc)?)
    }

    fn kernel_device(&self) -> &Device {
        self.kernel.device()
    }

    /// `C = A·Bᵀ` (or `alpha·A·Bᵀ + beta·C` with `alpha_beta`) on `stream`: A is `[m, k]`, B
    /// `[n, k]`, C `[m, n]`, all row-major, any sizes. When `k` is not a multiple of 8, A and B are
    /// first copied into zero-padded buffers (a tensor map's row pitch is a multiple of 16 bytes,
    /// CUDA Driver API `cuTensorMapEncodeTiled`).
    pub fn run<I: Element, O: Element>(
        &self,
        stream: &Arc<CudaStream>,
        a: &DeviceTensor<I>,
        b: &DeviceTensor<I>,
        c: &mut DeviceTensor<O>,
        alpha_beta: Option<(f32, f32)>,
    ) -> Result<(), GemmError> {
        self.run_with(stream, a, b, c, alpha_beta, self.hang.is_some())
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
        self.run_with(stream, a, b, c, alpha_beta, false)
    }

    /// The hang records of a debug build's launches (none in a release build).
    pub fn hang_report(&self) -> Result<Option<crate::runtime::HangDiagnosis>, GemmError> {
        match &self.hang {
            Some(h) => Ok(h.report()?),
            None => Ok(None),
        }
    }

    fn run_with<I: Element, O: Element>(
        &self,
        stream: &Arc<CudaStream>,
        a: &DeviceTensor<I>,
        b: &DeviceTensor<I>,
        c: &mut DeviceTensor<O>,
        alpha_beta: Option<(f32, f32)>,
        wait: bool,
    ) -> Result<(), GemmError> {
        let (sa, sb, sc) = (a.shape().to_vec(), b.shape().to_vec(), c.shape().to_vec());
        if sa.len() != 2 || sb.len() != 2 || sc.len() != 2 || sa[1] != sb[1] || sc != [sa[0], sb[0]]
        {
            return Err(GemmError::Operands(format!(
                "A {sa:?}, B {sb:?}, C {sc:?}: want [m, k], [n, k], [m, n]"
            )));
        }
        let (m, n, k) = (sa[0], sb[0], sa[1]);
        let want_in = match self.cfg.input {
            InType::Bf16 => DType::BF16,
            InType::F16 => DType::F16,
        };
        if I::DTYPE != want_in {
            return Err(GemmError::Operands(format!(
                "A and B are {:?}; this kernel takes {want_in:?}",
                I::DTYPE
            )));
        }
        if k == 0 {
            return Err(GemmError::Operands("k = 0: nothing to multiply".into()));
        }
        if k % 8 != 0 {
            // Tensor maps need 16-byte row pitches: multiply zero-padded copies instead.
            let kp = k.next_multiple_of(8);
            let (ap, bp) = (self.pad(stream, a, kp)?, self.pad(stream, b, kp)?);
            return self.run(stream, &ap, &bp, c, alpha_beta);
        }
        if (n % 2 == 0) != self.cfg.n_even {
            return Err(GemmError::Operands(format!(
                "n = {n} but the kernel was built with n_even = {}",
                self.cfg.n_even
            )));
        }
        if self.cfg.alpha_beta != alpha_beta.is_some() {
            return Err(GemmError::Operands(
                "alpha/beta given to a kernel built without them, or missing".into(),
            ));
        }
        if self.cfg.tma_store && n % 8 != 0 {
            return Err(GemmError::Operands(format!(
                "n = {n}: the TMA-store epilogue needs a multiple of 8"
            )));
        }
        let tma = self.operand_map(a, GemmConfig::BM)?;
        // In a CTA pair each CTA loads half of the B tile.
        let tmb = self.operand_map(b, self.cfg.bn / self.cfg.cluster_m)?;
        // C in 64 x 64 boxes with the 128B swizzle of the staging slabs; the TMA clips at the
        // edges.
        let tmc = if self.cfg.tma_store {
            let dtype = match self.cfg.output {
                OutType::F16 => TensorMapDType::F16,
                _ => TensorMapDType::BF16,
            };
            let desc = TensorMapDesc::row_major(dtype, c.addr(), c.shape(), &[64, 64])
                .with_swizzle(Swizzle::B128);
            Some(self.kernel_device().encode_tensor_map(&desc)?)
        } else {
            None
        };
        let tiles = m.div_ceil(GemmConfig::BM as usize) * n.div_ceil(self.cfg.bn as usize);
        let launch = if self.cfg.cluster_m == 2 {
            // Clusters of two CTAs walk pairs of M-tiles.
            let pairs = m.div_ceil(2 * GemmConfig::BM as usize) * n.div_ceil(self.cfg.bn as usize);
            let clusters = (pairs as u32).min(self.max_clusters).max(1);
            LaunchConfig::new([2 * clusters, 1, 1], [GemmConfig::THREADS, 1, 1])
                .with_cluster([2, 1, 1])
        } else {
            let grid = (tiles as u32).min(self.sms).max(1);
            LaunchConfig::new([grid, 1, 1], [GemmConfig::THREADS, 1, 1])
        }
        .with_dynamic_smem(self.cfg.smem_bytes());
        let mut args = vec![Arg::tensor_map(&tma), Arg::tensor_map(&tmb)];
        if let Some(tmc) = &tmc {
            args.push(Arg::tensor_map(tmc));
        }
        args.extend([Arg::tensor_mut(c), Arg::scalar(k as u32)]);
        if let Some((alpha, beta)) = alpha_beta {
            args.push(Arg::scalar(alpha));
            args.push(Arg::scalar(beta));
        }
        match self.hang.as_ref().filter(|_| wait) {
            // A debug build waits for the kernel, so a hang comes back as its records.
            Some(h) => {
                let watch = Watch {
                    timeout: None,
                    hang: Some(h),
                };
                self.kernel
                    .launch_watched(stream, &launch, &mut args, &watch)?;
            }
            None => {
                self.kernel.launch(stream, &launch, &mut args)?;
            }
        }
        Ok(())
    }
}
