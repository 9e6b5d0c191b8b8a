//! Element types of shared-memory buffers and tensor-core operands.

use std::fmt;
use std::str::FromStr;

/// An element type, named as PTX names it (`.f16`, `.bf16`, `.e4m3`...).
///
/// Sub-byte formats (`e2m3`, `e3m2` are 6 bits, `e2m1` 4 bits) exist for the tcgen05
/// instruction descriptor; byte-addressed helpers ([`Dtype::bytes`]) reject them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    S8,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 16-bit integer.
    S16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    S32,
    /// Unsigned 64-bit integer.
    U64,
    /// Signed 64-bit integer.
    S64,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// TensorFloat-32, stored in 32 bits.
    TF32,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// FP8 with 4 exponent and 3 mantissa bits.
    E4M3,
    /// FP8 with 5 exponent and 2 mantissa bits.
    E5M2,
    /// FP6 with 2 exponent and 3 mantissa bits.
    E2M3,
    /// FP6 with 3 exponent and 2 mantissa bits.
    E3M2,
    /// FP4 with 2 exponent bits and 1 mantissa bit.
    E2M1,
}

/// A string that names no [`Dtype`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown element type `{0}` (expected one of {list})", list = Dtype::NAMES.join(", "))]
pub struct UnknownDtype(pub String);

impl Dtype {
    /// Every type, in the order [`Dtype::NAMES`] lists them.
    pub const ALL: [Dtype; 18] = [
        Dtype::U8,
        Dtype::S8,
        Dtype::U16,
        Dtype::S16,
        Dtype::U32,
        Dtype::S32,
        Dtype::U64,
        Dtype::S64,
        Dtype::F16,
        Dtype::BF16,
        Dtype::TF32,
        Dtype::F32,
        Dtype::F64,
        Dtype::E4M3,
        Dtype::E5M2,
        Dtype::E2M3,
        Dtype::E3M2,
        Dtype::E2M1,
    ];

    /// The PTX spelling of every type, without the leading dot.
    pub const NAMES: [&'static str; 18] = [
        "u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f16", "bf16", "tf32", "f32", "f64",
        "e4m3", "e5m2", "e2m3", "e3m2", "e2m1",
    ];

    /// The PTX spelling without the leading dot (`bf16`).
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::S8 => "s8",
            Dtype::U16 => "u16",
            Dtype::S16 => "s16",
            Dtype::U32 => "u32",
            Dtype::S32 => "s32",
            Dtype::U64 => "u64",
            Dtype::S64 => "s64",
            Dtype::F16 => "f16",
            Dtype::BF16 => "bf16",
            Dtype::TF32 => "tf32",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::E4M3 => "e4m3",
            Dtype::E5M2 => "e5m2",
            Dtype::E2M3 => "e2m3",
            Dtype::E3M2 => "e3m2",
            Dtype::E2M1 => "e2m1",
        }
    }

    /// Width of one element in bits.
    pub const fn bits(self) -> u32 {
        match self {
            Dtype::U8 | Dtype::S8 | Dtype::E4M3 | Dtype::E5M2 => 8,
            Dtype::U16 | Dtype::S16 | Dtype::F16 | Dtype::BF16 => 16,
            Dtype::U32 | Dtype::S32 | Dtype::TF32 | Dtype::F32 => 32,
            Dtype::U64 | Dtype::S64 | Dtype::F64 => 64,
            Dtype::E2M3 | Dtype::E3M2 => 6,
            Dtype::E2M1 => 4,
        }
    }

    /// Width of one element in bytes, or `None` for the sub-byte formats.
    pub const fn bytes(self) -> Option<u32> {
        match self.bits() {
            8 => Some(1),
            16 => Some(2),
            32 => Some(4),
            64 => Some(8),
            _ => None,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = UnknownDtype;

    /// Parses the PTX spelling, with or without the leading dot, in any case.
    fn from_str(s: &str) -> Result<Dtype, UnknownDtype> {
        let t = s.strip_prefix('.').unwrap_or(s).to_ascii_lowercase();
        Dtype::NAMES
            .iter()
            .position(|&n| n == t)
            .map(|i| Dtype::ALL[i])
            .ok_or_else(|| UnknownDtype(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (d, n) in Dtype::ALL.into_iter().zip(Dtype::NAMES) {
            assert_eq!(d.name(), n);
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
            assert_eq!(
                format!(".{}", d.name().to_uppercase()).parse::<Dtype>(),
                Ok(d)
            );
        }
        assert!("f8".parse::<Dtype>().is_err());
    }

    #[test]
    fn widths() {
        assert_eq!(Dtype::BF16.bytes(), Some(2));
        assert_eq!(Dtype::TF32.bytes(), Some(4));
        assert_eq!(Dtype::E2M1.bytes(), None);
        assert_eq!(Dtype::E3M2.bits(), 6);
    }
}
