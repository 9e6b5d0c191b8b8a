//! The Python exceptions: every error ptxkit returns becomes one of three, by its kind.

use ptxkit::kernel::KernelError;
use ptxkit::library::attention::{AttentionError, ShapeError};
use ptxkit::library::gemm::GemmError;
use ptxkit::library::gemm::grouped::GroupedGemmError;
use ptxkit::runtime::RuntimeError;
use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;

create_exception!(
    ptxkit,
    PtxkitError,
    PyRuntimeError,
    "An error from ptxkit: building, loading or launching a kernel."
);
create_exception!(
    ptxkit,
    NoGpuError,
    PtxkitError,
    "No CUDA driver or no such GPU on this machine: what needs the GPU cannot run here."
);
create_exception!(
    ptxkit,
    ArgumentError,
    PtxkitError,
    "An argument a kernel does not take (its type, shape, strides, alignment or device); the \
     message names the argument."
);

/// A runtime error as its exception: no driver or device is [`NoGpuError`], a refused argument
/// [`ArgumentError`], anything else [`PtxkitError`].
pub fn runtime(e: RuntimeError) -> PyErr {
    use RuntimeError as E;
    let text = e.to_string();
    match e {
        E::NoDriver | E::NoDevice { .. } => NoGpuError::new_err(text),
        E::ArgCount { .. }
        | E::ArgKind { .. }
        | E::ArgDtype { .. }
        | E::ArgShape { .. }
        | E::SymbolMismatch { .. }
        | E::ExtentOverflow { .. }
        | E::ExtentFact { .. }
        | E::Misaligned { .. }
        | E::WrongDevice { .. }
        | E::TmaTensor { .. } => ArgumentError::new_err(text),
        _ => PtxkitError::new_err(text),
    }
}

/// A kernel that could not be built.
pub fn kernel(e: KernelError) -> PyErr {
    PtxkitError::new_err(format!("building the kernel: {e}"))
}

/// An attention error: operands that make no attention problem are [`ArgumentError`].
pub fn attention(e: AttentionError) -> PyErr {
    match e {
        AttentionError::Runtime(e) => runtime(e),
        // Query and KV heads that do not divide: the KV tensors' head count is what is off.
        AttentionError::Shape(ShapeError::Heads { .. }) => {
            ArgumentError::new_err(format!("argument `k`: {e}"))
        }
        AttentionError::Shape(_) => ArgumentError::new_err(e.to_string()),
        other => PtxkitError::new_err(other.to_string()),
    }
}

/// A GEMM error: operands or scales that do not fit are [`ArgumentError`].
pub fn gemm(e: GemmError) -> PyErr {
    match e {
        GemmError::Runtime(e) => runtime(e),
        GemmError::Build(_) => PtxkitError::new_err(e.to_string()),
        // The three operands' shapes disagree: the message shows each (A, B, C).
        GemmError::Operands(_) => {
            ArgumentError::new_err(format!("arguments `a` [m, k], `b` [n, k], `c` [m, n]: {e}"))
        }
        other => ArgumentError::new_err(other.to_string()),
    }
}

/// A grouped GEMM error: an operand that does not fit is [`ArgumentError`].
pub fn grouped(e: GroupedGemmError) -> PyErr {
    match e {
        GroupedGemmError::Gemm(e) => gemm(e),
        GroupedGemmError::Runtime(e) => runtime(e),
        GroupedGemmError::Operand { .. } => ArgumentError::new_err(e.to_string()),
        GroupedGemmError::NotGrouped(_) => PtxkitError::new_err(e.to_string()),
    }
}
