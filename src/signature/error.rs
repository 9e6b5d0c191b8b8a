//! Why a signature is not one any launch could satisfy.

/// A broken kernel signature, found when it is checked ([`super::KernelSignature::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// Two parameters with one name, an alignment that is not a power of two, a symbolic extent
    /// of a non-integer type.
    #[error("kernel `{kernel}`: invalid signature: {reason}")]
    Invalid {
        /// The kernel.
        kernel: String,
        /// Why.
        reason: String,
    },
    /// A symbolic-extent parameter that no tensor shape names, so no argument supplies it.
    #[error("symbolic extent `{symbol}` appears in no tensor parameter's shape")]
    UnboundSymbol {
        /// The symbol.
        symbol: String,
    },
}
