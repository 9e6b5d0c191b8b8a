//! `ptxkit._ptxkit`: ptxkit's kernels for Python. The named kernels and their PTX (no GPU
//! needed), the devices, and the ops on DLPack tensors (torch's, zero-copy) launched on the
//! caller's current stream in the device's primary context (torch's). The `ptxkit` package
//! wraps the ops as torch custom ops.
//!
//! The CUDA driver is loaded dynamically: without it, or without a GPU, importing and listing
//! and dumping kernels work, and what needs the GPU raises `ptxkit.NoGpuError`.

mod cache;
mod errors;
mod operand;
mod ops;

use ptxkit::registry::{Home, registry};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;

/// Every named kernel: `(name, summary, library, hopper)`, `library` false for the self-test
/// harness's kernels, `hopper` true for those that need sm_90a.
#[pyfunction]
fn kernels() -> Vec<(&'static str, &'static str, bool, bool)> {
    registry()
        .iter()
        .map(|e| (e.name, e.summary, e.home == Home::Library, e.hopper))
        .collect()
}

/// The PTX of the named kernel for `target` (`sm_90a` unless given), built here with no GPU.
#[pyfunction]
#[pyo3(signature = (name, target = "sm_90a"))]
fn dump(name: &str, target: &str) -> PyResult<String> {
    let entry = ptxkit::registry::entry(name).ok_or_else(|| {
        PyKeyError::new_err(format!("no kernel `{name}`; ptxkit.kernels() names them"))
    })?;
    let target: ptx_isa::Target = target
        .parse()
        .map_err(|e: ptx_isa::Error| PyValueError::new_err(e.to_string()))?;
    (entry.build)(target)
        .and_then(|m| m.to_ptx())
        .map_err(|e| errors::PtxkitError::new_err(format!("{name} for {target}: {e}")))
}

/// How many CUDA devices the driver sees: 0 without a driver or a GPU (never an error).
#[pyfunction]
fn device_count() -> usize {
    ptxkit::runtime::device_count().unwrap_or(0)
}

/// The name and compute capability of device `ordinal`; `NoGpuError` without it.
#[pyfunction]
#[pyo3(signature = (ordinal = 0))]
fn device_name(ordinal: usize) -> PyResult<(String, (u32, u32))> {
    let d = cache::device(ordinal)?;
    let a = d.attributes();
    Ok((a.name.clone(), a.compute_capability))
}

/// `(built, cached)`: kernels built and JIT-loaded so far, and op calls that found theirs in
/// the cache.
#[pyfunction]
fn cache_stats() -> (u64, u64) {
    cache::stats()
}

#[pymodule]
fn _ptxkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PtxkitError", py.get_type::<errors::PtxkitError>())?;
    m.add("NoGpuError", py.get_type::<errors::NoGpuError>())?;
    m.add("ArgumentError", py.get_type::<errors::ArgumentError>())?;
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(dump, m)?)?;
    m.add_function(wrap_pyfunction!(device_count, m)?)?;
    m.add_function(wrap_pyfunction!(device_name, m)?)?;
    m.add_function(wrap_pyfunction!(cache_stats, m)?)?;
    m.add_function(wrap_pyfunction!(ops::rms_norm, m)?)?;
    m.add_function(wrap_pyfunction!(ops::residual_rms_norm, m)?)?;
    m.add_function(wrap_pyfunction!(ops::layer_norm, m)?)?;
    m.add_function(wrap_pyfunction!(ops::softmax, m)?)?;
    m.add_function(wrap_pyfunction!(ops::swiglu, m)?)?;
    m.add_function(wrap_pyfunction!(ops::attention, m)?)?;
    m.add_function(wrap_pyfunction!(ops::gemm, m)?)?;
    m.add_function(wrap_pyfunction!(ops::gemm_fp8, m)?)?;
    m.add_function(wrap_pyfunction!(ops::grouped_gemm, m)?)?;
    Ok(())
}
