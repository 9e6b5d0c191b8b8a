//! The opened devices and the built-and-loaded kernels, by configuration: a repeated call finds
//! its kernel here and neither builds its PTX nor JIT-loads it again.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ptx_isa::ScalarType;
use ptxkit::library::attention::AttentionConfig;
use ptxkit::library::gemm::GemmConfig;
use ptxkit::library::rows::RowConfig;
use ptxkit::parts::Activation;
use ptxkit::runtime::Device;
use pyo3::PyResult;

use crate::errors::{self, PtxkitError};

/// What one cached kernel was built for, with the device it is loaded on.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    /// A row kernel: its op's name and epsilon (bits), element type and configuration.
    Row {
        /// [`ptxkit::library::rows::RowOp::name`].
        op: &'static str,
        /// The epsilon's bits (0 for softmax).
        eps: u32,
        /// The element type.
        dtype: ScalarType,
        /// How it spreads a row.
        cfg: RowConfig,
        /// The device ordinal.
        device: usize,
    },
    /// The flat SwiGLU kernel.
    Swiglu {
        /// The element type.
        dtype: ScalarType,
        /// Whether it takes 16-byte vectors (the element count a multiple of their width).
        vector: bool,
        /// The device ordinal.
        device: usize,
    },
    /// An attention configuration.
    Attention(AttentionConfig, usize),
    /// A dense GEMM configuration (bf16/f16 or FP8).
    Gemm(GemmConfig, usize),
    /// A grouped GEMM configuration.
    Grouped(GemmConfig, usize),
    /// A bf16 GEMM configuration with the epilogue ops fused into it.
    GemmEpilogue(GemmConfig, FusedOps, usize),
}

/// The epilogue ops of a fused bf16 GEMM, in the order they apply: `act(a·bᵀ + bias) +
/// residual`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FusedOps {
    /// A bias `[n]` added to each row.
    pub bias: bool,
    /// The activation, if any.
    pub activation: Option<Activation>,
    /// A residual `[m, n]` added last.
    pub residual: bool,
}

/// A built kernel loaded on its device: a [`ptxkit::runtime::LoadedKernel`] (row, SwiGLU and
/// fused GEMM kernels), an [`ptxkit::library::attention::Attention`], a
/// [`ptxkit::library::gemm::Gemm`] or a [`ptxkit::library::gemm::grouped::GroupedGemm`], as its
/// key's kind says.
type Loaded = Arc<dyn Any + Send + Sync>;

static DEVICES: Mutex<Vec<Device>> = Mutex::new(Vec::new());
static KERNELS: Mutex<Vec<(Key, Loaded)>> = Mutex::new(Vec::new());
static BUILDS: AtomicU64 = AtomicU64::new(0);
static HITS: AtomicU64 = AtomicU64::new(0);

/// Device `ordinal` with its primary context (torch's), opened once: [`errors::NoGpuError`]
/// without a driver or such a GPU.
pub fn device(ordinal: usize) -> PyResult<Device> {
    let mut devices = DEVICES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(d) = devices.iter().find(|d| d.ordinal() == ordinal) {
        return Ok(d.clone());
    }
    let d = Device::new(ordinal).map_err(errors::runtime)?;
    devices.push(d.clone());
    Ok(d)
}

/// The kernel cached for `key`, or the one `build` builds and loads (then cached). A cached
/// entry of another type than `T` (a key kind built two ways: a bug of the ops) is an error
/// naming the key.
pub fn kernel<T: Any + Send + Sync>(
    key: Key,
    build: impl FnOnce() -> PyResult<T>,
) -> PyResult<Arc<T>> {
    let mut kernels = KERNELS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, k)) = kernels.iter().find(|(k, _)| *k == key) {
        HITS.fetch_add(1, Ordering::Relaxed);
        return k.clone().downcast::<T>().map_err(|_| {
            PtxkitError::new_err(format!("the cache entry of {key:?} is another kernel"))
        });
    }
    let loaded = Arc::new(build()?);
    BUILDS.fetch_add(1, Ordering::Relaxed);
    kernels.push((key, loaded.clone()));
    Ok(loaded)
}

/// How many kernels were built and loaded, and how many calls found theirs cached.
pub fn stats() -> (u64, u64) {
    (BUILDS.load(Ordering::Relaxed), HITS.load(Ordering::Relaxed))
}
