//! Running the built-in kernels on a GPU: fresh random inputs, poisoned outputs, a host reference,
//! and one line per example: what `ptxkit selftest` runs. (The programs in `examples/` hold
//! their own kernels, written as a user writes them, and check them themselves.)

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::kernel::BuiltKernel;
use crate::runtime::cuda::CudaStream;
use crate::runtime::{Device, DeviceTensor, Element, JitOptions, LoadedKernel, RuntimeError};
use ptx_isa::Target;

/// splitmix64 seeded from the clock: fresh data every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded from the clock.
    pub fn fresh() -> Rng {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(1);
        Rng(t as u64)
    }

    /// With a fixed seed.
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// `n` values uniform in [-1, 1).
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

/// The largest `|got - want|`, with NaN (a poisoned element never written) counting as infinite.
pub fn max_abs_err(got: &[f32], want: &[f32]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let d = f64::from(*g) - f64::from(*w);
            if d.is_nan() { f64::INFINITY } else { d.abs() }
        })
        .fold(0.0, f64::max)
}

/// What a GPU example reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The largest absolute error against the host reference.
    pub max_err: f64,
    /// The error allowed.
    pub tolerance: f64,
    /// Sizes and other details, one line.
    pub detail: String,
}

impl Report {
    /// Whether the error is within the tolerance.
    pub fn passed(&self) -> bool {
        self.max_err <= self.tolerance
    }
}

/// Why an example could not run to its comparison (a wrong result is a failed [`Report`]).
#[derive(Debug, thiserror::Error)]
pub enum GpuCheckError {
    /// Building the kernel failed.
    #[error("building the kernel: {0}")]
    Build(#[from] crate::kernel::KernelError),
    /// Loading, a copy, a tensor map or a launch failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Building a hang-check kernel (its barrier protocol) failed.
    #[error(transparent)]
    RingBuild(#[from] super::hang_checks::RingBuildError),
    /// Building or running the GEMM failed.
    #[error(transparent)]
    Gemm(#[from] super::gemm::GemmError),
    /// The GEMM's cuBLAS comparison could not run.
    #[error(transparent)]
    GemmCheck(#[from] super::gemm::check::CheckError),
    /// cuBLAS could not start.
    #[error("cuBLAS: {0}")]
    Blas(#[from] cudarc::cublas::result::CublasError),
    /// Building a module with the PTX builder failed.
    #[error(transparent)]
    Ptx(#[from] ptx_isa::Error),
    /// A driver call (a synchronisation) failed.
    #[error("CUDA: {0}")]
    Driver(#[from] crate::runtime::cuda::DriverError),
    /// One case of a check failed: which case, and why.
    #[error("{case}: {source}")]
    Case {
        /// The case (`Softmax cols 4096`).
        case: String,
        /// Why it failed.
        source: Box<GpuCheckError>,
    },
    /// The check itself saw something it does not expect (a launch that should have been refused,
    /// a refusal with the wrong error, an output written by a refused launch).
    #[error("{check}: {detail}")]
    Unexpected {
        /// What was checked.
        check: String,
        /// What happened.
        detail: String,
    },
}

/// An example run: its report, or why it did not get that far.
pub type RunResult = Result<Report, GpuCheckError>;

/// A device, a stream and a random source.
pub struct GpuCtx {
    /// The device.
    pub dev: Device,
    /// The stream everything runs on.
    pub stream: Arc<CudaStream>,
    /// Fresh random data.
    pub rng: Rng,
}

impl GpuCtx {
    /// Opens device 0.
    pub fn open() -> Result<GpuCtx, RuntimeError> {
        let dev = Device::new(0)?;
        let stream = dev.default_stream();
        Ok(GpuCtx {
            dev,
            stream,
            rng: Rng::fresh(),
        })
    }

    /// The PTX target for this device ([`Device::target`]).
    pub fn target(&self) -> Target {
        self.dev.target()
    }

    /// Loads a built kernel.
    pub fn load(&self, k: &BuiltKernel) -> Result<LoadedKernel, GpuCheckError> {
        Ok(k.load(&self.dev, &JitOptions::default())?)
    }

    /// A device tensor holding `data`.
    pub fn upload<T: Element>(
        &self,
        data: &[T],
        shape: &[usize],
    ) -> Result<DeviceTensor<T>, GpuCheckError> {
        Ok(DeviceTensor::from_host(&self.stream, data, shape.to_vec())?)
    }

    /// A device tensor of `shape` filled with NaN (so an element the kernel misses shows).
    pub fn poisoned(&self, shape: &[usize]) -> Result<DeviceTensor<f32>, GpuCheckError> {
        let n = shape.iter().product();
        self.upload(&vec![f32::NAN; n], shape)
    }

    /// Copies a tensor back.
    pub fn download<T: Element>(&self, t: &DeviceTensor<T>) -> Result<Vec<T>, GpuCheckError> {
        Ok(t.to_host(&self.stream)?)
    }
}

/// One GPU example: its name, what it checks, its kernel builder and its run.
pub struct GpuExample {
    /// The name (`ptxkit selftest` prints it; `ptxkit selftest --only NAME` runs it alone).
    pub name: &'static str,
    /// What it computes.
    pub summary: &'static str,
    /// Builds its kernel for a target with its default sizes.
    pub build: fn(Target) -> crate::kernel::Result<BuiltKernel>,
    /// Runs it on fresh random data and checks it against the host.
    pub run: fn(&mut GpuCtx) -> RunResult,
    /// Whether it needs Hopper (sm_90: TMA, clusters); skipped on older devices.
    pub hopper: bool,
}

/// Every GPU example, in the order `ptxkit selftest` runs them.
pub const GPU_EXAMPLES: &[GpuExample] = &[
    GpuExample {
        name: "vector_add",
        summary: "c = a + b over f32 vectors of a symbolic length n",
        build: super::vector_add::build,
        run: super::vector_add::run,
        hopper: false,
    },
    GpuExample {
        name: "scale",
        summary: "y = s * x over f32[m, 64], s a runtime scalar, vector loads",
        build: super::scale::build,
        run: super::scale::run,
        hopper: false,
    },
    GpuExample {
        name: "tma_copy",
        summary: "2-D TMA load (128B swizzle, mbarrier) -> shared -> TMA store",
        build: super::tma_copy::build,
        run: super::tma_copy::run,
        hopper: true,
    },
    GpuExample {
        name: "cluster_exchange",
        summary: "4-CTA clusters read a neighbour's shared memory (mapa, barrier.cluster)",
        build: super::cluster_exchange::build,
        run: super::cluster_exchange::run,
        hopper: true,
    },
    GpuExample {
        name: "tile_copies",
        summary: "tile ops: copy.vector, copy_async.cp_async, copy.scalar into a 128B-swizzled tile",
        build: super::tile_checks::build_copies,
        run: super::tile_checks::tile_copies,
        hopper: false,
    },
    GpuExample {
        name: "tile_matrix",
        summary: "tile ops: copy.ldmatrix x4 and copy.stmatrix x4 round trip",
        build: super::tile_checks::build_matrix,
        run: super::tile_checks::tile_matrix,
        hopper: true,
    },
    GpuExample {
        name: "tile_tma",
        summary: "tile ops: copy_async.tma_load / tma_store, 128B swizzle, mbarrier",
        build: super::tile_checks::build_tma_plain,
        run: super::tile_checks::tile_tma,
        hopper: true,
    },
    GpuExample {
        name: "tile_tma_multicast",
        summary: "tile ops: copy_async.tma_multicast into both CTAs of a cluster",
        build: super::tile_checks::build_tma_mc,
        run: super::tile_checks::tile_tma_multicast,
        hopper: true,
    },
    GpuExample {
        name: "tile_wgmma_bf16",
        summary: "tile ops: TMA + gemm_async.wgmma (bf16) + copy.fragment, 64x64x64",
        build: super::tile_checks::build_wgmma_bf16,
        run: super::tile_checks::tile_wgmma_bf16,
        hopper: true,
    },
    GpuExample {
        name: "tile_wgmma_f16",
        summary: "tile ops: TMA + gemm_async.wgmma (f16) + copy.fragment, 64x64x64",
        build: super::tile_checks::build_wgmma_f16,
        run: super::tile_checks::tile_wgmma_f16,
        hopper: true,
    },
    GpuExample {
        name: "tile_wgmma_tf32",
        summary: "tile ops: TMA + gemm_async.wgmma (tf32) + copy.fragment, 64x64x32",
        build: super::tile_checks::build_wgmma_tf32,
        run: super::tile_checks::tile_wgmma_tf32,
        hopper: true,
    },
    GpuExample {
        name: "tile_wgmma_e4m3",
        summary: "tile ops: TMA + gemm_async.wgmma (e4m3) + copy.fragment, 64x64x128",
        build: super::tile_checks::build_wgmma_e4m3,
        run: super::tile_checks::tile_wgmma_e4m3,
        hopper: true,
    },
    GpuExample {
        name: "tile_wgmma_e5m2",
        summary: "tile ops: TMA + gemm_async.wgmma (e5m2) + copy.fragment, 64x64x128",
        build: super::tile_checks::build_wgmma_e5m2,
        run: super::tile_checks::tile_wgmma_e5m2,
        hopper: true,
    },
    GpuExample {
        name: "tile_wgmma_regs_a",
        summary: "tile ops: A in registers (copy.fragment_view) x B by TMA 32B, gemm_async.wgmma",
        build: super::tile_checks::build_wgmma_regs,
        run: super::tile_checks::tile_wgmma_regs_a,
        hopper: true,
    },
    GpuExample {
        name: "tile_bulk_cluster",
        summary: "tile ops: copy_async.bulk_cluster between the two CTAs of a cluster",
        build: super::tile_checks::build_bulk_cluster,
        run: super::tile_checks::tile_bulk_cluster,
        hopper: true,
    },
    GpuExample {
        name: "tile_epilogue",
        summary: "tile ops: copy.fragment_view (pitch, bounds), cast.registers, elementwise at a matrix edge",
        build: super::epilogue_check::build,
        run: super::epilogue_check::run,
        hopper: false,
    },
    GpuExample {
        name: "row_kernels",
        summary: "softmax, log-softmax, rmsnorm (+residual), layernorm over f32/f16/bf16 rows of 1 to 8192 columns",
        build: super::rows::check::build,
        run: super::rows::check::run,
        hopper: false,
    },
    GpuExample {
        name: "bad_launches",
        summary: "wrong shape, dtype, misaligned map, too much smem, too large a cluster are refused",
        build: super::vector_add::build,
        run: super::bad_launches::run,
        hopper: false,
    },
];

impl GpuExample {
    /// Runs it on `ctx`, or `None` (skipped) when it needs Hopper and the device is older.
    pub fn run_on(&self, ctx: &mut GpuCtx) -> Option<RunResult> {
        if self.hopper && ctx.dev.attributes().compute_capability.0 < 9 {
            return None;
        }
        Some((self.run)(ctx))
    }
}

/// The example called `name`.
pub fn gpu_example(name: &str) -> Option<&'static GpuExample> {
    GPU_EXAMPLES.iter().find(|e| e.name == name)
}

/// One result line: `PASS name  max err E (tol T)  detail` or `FAIL name  reason`.
pub fn result_line(name: &str, r: &RunResult) -> String {
    match r {
        Ok(rep) => format!(
            "{} {name:<17} max err {:.3e} (tol {:.0e})  {}",
            if rep.passed() { "PASS" } else { "FAIL" },
            rep.max_err,
            rep.tolerance,
            rep.detail
        ),
        Err(e) => format!("FAIL {name:<17} {}", e.to_string().replace('\n', " | ")),
    }
}
