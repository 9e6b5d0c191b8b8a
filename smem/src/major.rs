//! Which dimension of an MMA operand is contiguous in shared memory.

use std::fmt;
use std::str::FromStr;

/// The contiguous ("major") dimension of an MMA operand.
///
/// For A (M x K) and B (N x K in the tensor-core convention), K-major means consecutive K
/// elements are adjacent in memory (A row-major, B column-major: "TN"); MN-major means
/// consecutive M (or N) elements are. The tcgen05 instruction descriptor calls MN-major
/// "transpose" (PTX ISA 9.7.16.4.2, bits 15-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Major {
    /// K is contiguous.
    K,
    /// M (for A) or N (for B) is contiguous.
    MN,
}

/// A string that names no major.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown major `{0}` (expected k or mn)")]
pub struct UnknownMajor(pub String);

impl fmt::Display for Major {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Major::K => "k",
            Major::MN => "mn",
        })
    }
}

impl FromStr for Major {
    type Err = UnknownMajor;

    fn from_str(s: &str) -> Result<Major, UnknownMajor> {
        match s.to_ascii_lowercase().as_str() {
            "k" => Ok(Major::K),
            "mn" | "m" | "n" => Ok(Major::MN),
            _ => Err(UnknownMajor(s.to_string())),
        }
    }
}
