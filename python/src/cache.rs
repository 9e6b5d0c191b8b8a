//! The opened devices and the built-and-loaded kernels, by configuration: a repeated call finds
//! its kernel here and neither builds its PTX nor JIT-loads it again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ptx_isa::ScalarType;
use ptxkit::library::attention::{Attention, AttentionConfig};
use ptxkit::library::gemm::grouped::GroupedGemm;
use ptxkit::library::gemm::{Gemm, GemmConfig};
use ptxkit::library::rows::RowConfig;
use ptxkit::parts::Activation;
use ptxkit::runtime::{Device, LoadedKernel};
use pyo3::PyResult;

use crate::errors;

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

/// A built kernel loaded on its device.
pub enum Loaded {
    /// A row, SwiGLU or fused GEMM kernel.
    Kernel(LoadedKernel),
    /// Attention.
    Attention(Attention),
    /// A dense GEMM.
    Gemm(Gemm),
    /// A grouped GEMM.
    Grouped(GroupedGemm),
}

static DEVICES: Mutex<Vec<Device>> = Mutex::new(Vec::new());
static KERNELS: Mutex<Vec<(Key, Arc<Loaded>)>> = Mutex::new(Vec::new());
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

/// The kernel cached for `key`, or the one `build` builds and loads (then cached).
pub fn kernel(key: Key, build: impl FnOnce() -> PyResult<Loaded>) -> PyResult<Arc<Loaded>> {
    let mut kernels = KERNELS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, k)) = kernels.iter().find(|(k, _)| *k == key) {
        HITS.fetch_add(1, Ordering::Relaxed);
        return Ok(k.clone());
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
