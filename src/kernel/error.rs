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
    #[error("kernel `{kernel}`: inconsistent launch extents: {reason} (at {at})")]
    Scope {
        /// The kernel.
        kernel: String,
        /// What disagrees.
        reason: String,
        /// The Rust call that was being built when the error was found.
        at: CallSite,
    },
    /// A parameter declaration is invalid (a shape extent that is neither a constant nor a
    /// symbolic extent, a parameter declared inside control flow...).
    #[error("kernel `{kernel}`: parameter `{param}`: {reason} (at {at})")]
    Param {
        /// The kernel.
        kernel: String,
        /// The parameter.
        param: String,
        /// Why.
        reason: String,
        /// The Rust call that was being built when the error was found.
        at: CallSite,
    },
    /// A buffer operation is invalid (wrong rank, an index into registers that is not a
    /// constant, a view of a non-contiguous buffer, an unprovable vector alignment...).
    #[error("kernel `{kernel}`: buffer `{buffer}`: {reason} (at {at})")]
    Buffer {
        /// The kernel.
        kernel: String,
        /// The buffer.
        buffer: String,
        /// Why.
        reason: String,
        /// The Rust call that was being built when the error was found.
        at: CallSite,
    },
    /// A kernel-specific check failed (a builder's own precondition on its compile-time
    /// parameters).
    #[error("kernel `{kernel}`: {reason} (at {at})")]
    Invalid {
        /// The kernel.
        kernel: String,
        /// Why.
        reason: String,
        /// The Rust call that was being built when the error was found.
        at: CallSite,
    },
    /// No tile-op variant takes the op (the table of every variant and why it declined), or the
    /// chosen one failed to write.
    #[error("kernel `{kernel}`: {error} (at {at})")]
    TileOp {
        /// The kernel.
        kernel: String,
        /// The dispatch error.
        error: Box<crate::tile::DispatchError>,
        /// The Rust call of the tile op.
        at: CallSite,
    },
    /// Shared memory does not fit or could not be placed.
    #[error("kernel `{kernel}`: shared memory: {reason} (at {at})")]
    SharedMemory {
        /// The kernel.
        kernel: String,
        /// Why.
        reason: String,
        /// The Rust call that was being built when the error was found.
        at: CallSite,
    },
}

/// Where in the kernel's Rust source an error was found: the builder call (`k.load(..)`,
/// `k.tensor(..)`) that met it, through `#[track_caller]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSite(pub &'static std::panic::Location<'static>);

impl CallSite {
    /// The call site of the caller (of the `#[track_caller]` chain).
    #[track_caller]
    pub fn here() -> CallSite {
        CallSite(std::panic::Location::caller())
    }
}

impl std::fmt::Display for CallSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.0.file(), self.0.line(), self.0.column())
    }
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
