//! What every GPU check shares: a device, a stream and fresh random data ([`GpuCtx`]), the
//! report of a run against its host reference ([`Report`]), why a run could not get that far
//! ([`GpuCheckError`]) and the line `ptxkit selftest` prints ([`result_line`]).

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

    /// `n` values uniform in [-1, 1), rounded to bf16.
    pub fn vec_bf16(&mut self, n: usize) -> Vec<half::bf16> {
        (0..n).map(|_| half::bf16::from_f32(self.f32())).collect()
    }
}

/// The rows a benchmark run by hand times, narrowed by two environment variables (unset or
/// empty: every row): `shapes` holds comma-separated beginnings of a row's shape key
/// (`128:false:8192`, or `128:` for all of head dim 128), `variants` comma-separated variant
/// names. An ncu run's one launch, or one variant to a process.
#[derive(Debug, Clone, Default)]
pub struct BenchFilter {
    shapes: Option<String>,
    variants: Option<String>,
}

impl BenchFilter {
    /// The filter the variables `shapes` and `variants` name.
    pub fn from_env(shapes: &str, variants: &str) -> BenchFilter {
        let var = |name: &str| std::env::var(name).ok().filter(|s| !s.is_empty());
        BenchFilter {
            shapes: var(shapes),
            variants: var(variants),
        }
    }

    /// Whether the shape with `key` is timed: some listed beginning starts it.
    pub fn shape(&self, key: &str) -> bool {
        self.shapes
            .as_deref()
            .is_none_or(|want| want.split(',').any(|w| key.starts_with(w)))
    }

    /// Whether the variant `name` is timed: it is listed.
    pub fn variant(&self, name: &str) -> bool {
        self.variants
            .as_deref()
            .is_none_or(|want| want.split(',').any(|v| v == name))
    }
}

/// Device 0 for an example or a benchmark run by hand, or `None` after printing `{why}: {error}`
/// on stderr when there is none (no driver, no device), so the program can end quietly.
pub fn device_or_skip(why: &str) -> Option<Device> {
    or_skip(Device::new(0), why)
}

/// Device 0, its default stream and what `make` opens on that stream (a cuBLAS or cuBLASLt
/// handle), or `None` after printing `{why}: {error}` on stderr when either is missing: the
/// start of a benchmark that times a kernel against a vendor library.
pub fn gpu_with_or_skip<T, E: std::fmt::Display>(
    why: &str,
    make: impl FnOnce(Arc<CudaStream>) -> Result<T, E>,
) -> Option<(Device, Arc<CudaStream>, T)> {
    let device = device_or_skip(why)?;
    let stream = device.default_stream();
    let handle = or_skip(make(stream.clone()), why)?;
    Some((device, stream, handle))
}

/// What `r` holds, or `None` after printing `{why}: {error}` on stderr: for what a benchmark run
/// by hand cannot do without (a device, a cuBLAS handle, its kernel), so it can end quietly.
pub fn or_skip<T, E: std::fmt::Display>(r: Result<T, E>, why: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            eprintln!("{why}: {e}");
            None
        }
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
    Gemm(#[from] crate::library::gemm::GemmError),
    /// Building or running the grouped GEMM failed.
    #[error(transparent)]
    GroupedGemm(#[from] crate::library::gemm::grouped::GroupedGemmError),
    /// The GEMM's cuBLAS comparison could not run.
    #[error(transparent)]
    GemmCheck(#[from] crate::library::gemm::check::CheckError),
    /// Building or running attention failed.
    #[error(transparent)]
    Attention(#[from] crate::library::attention::AttentionError),
    /// Decode attention failed to build or run.
    #[error(transparent)]
    Decode(#[from] crate::library::decode::DecodeError),
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

#[cfg(test)]
mod tests {
    use super::BenchFilter;

    /// Shapes match by a listed beginning, variants by a listed name; nothing listed times all.
    #[test]
    fn a_bench_filter_keeps_the_listed_rows() {
        let all = BenchFilter::default();
        assert!(all.shape("64:true:8192") && all.variant("det"));
        let some = BenchFilter {
            shapes: Some("128:,64:true".into()),
            variants: Some("bulk,red".into()),
        };
        assert!(some.shape("128:false:4096") && some.shape("64:true:8192"));
        assert!(!some.shape("64:false:8192"));
        assert!(some.variant("red") && !some.variant("det") && !some.variant("bul"));
    }
}
