//! Errors of kernel definition: each names the kernel and what was being declared.

use ptx_isa::Error as IsaError;

/// Why a kernel could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// An instruction, parameter or directive the PTX builder refused (form table, target,
    /// operand checks).
    #[error(transparent)]
    Isa(#[from] IsaError),
    /// Two scope ids disagree about a grid, block or cluster extent, or an extent is out of range.
    #[error("kernel `{kernel}`: inconsistent launch extents: {reason}")]
    Scope {
        /// The kernel.
        kernel: String,
        /// What disagrees.
        reason: String,
    },
    /// A parameter declaration is invalid (a shape extent that is neither a constant nor a
    /// symbolic extent, a parameter declared inside control flow...).
    #[error("kernel `{kernel}`: parameter `{param}`: {reason}")]
    Param {
        /// The kernel.
        kernel: String,
        /// The parameter.
        param: String,
        /// Why.
        reason: String,
    },
    /// A buffer operation is invalid (wrong rank, an index into registers that is not a
    /// constant, a view of a non-contiguous buffer, an unprovable vector alignment...).
    #[error("kernel `{kernel}`: buffer `{buffer}`: {reason}")]
    Buffer {
        /// The kernel.
        kernel: String,
        /// The buffer.
        buffer: String,
        /// Why.
        reason: String,
    },
    /// A kernel-specific check failed (a builder's own precondition on its compile-time
    /// parameters).
    #[error("kernel `{kernel}`: {reason}")]
    Invalid {
        /// The kernel.
        kernel: String,
        /// Why.
        reason: String,
    },
    /// Shared memory does not fit or could not be placed.
    #[error("kernel `{kernel}`: shared memory: {reason}")]
    SharedMemory {
        /// The kernel.
        kernel: String,
        /// Why.
        reason: String,
    },
}

/// Results of kernel definition.
pub type Result<T, E = KernelError> = std::result::Result<T, E>;

impl From<KernelError> for IsaError {
    /// For callers that speak ptx-isa errors (the built-in kernel table): an `Invalid` error
    /// carrying the message, or the ptx-isa error itself.
    fn from(e: KernelError) -> IsaError {
        match e {
            KernelError::Isa(e) => e,
            e => IsaError::new(ptx_isa::ErrorKind::Invalid, e.to_string()),
        }
    }
}
