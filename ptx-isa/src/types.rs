//! PTX fundamental types (PTX ISA 5.2.1 "Fundamental Types", 5.2.2 "Restricted Use of Sub-Word
//! Sizes", 5.2.3 "Alternate Floating-Point Data Formats", 5.2.5 "Packed Data Types") and vectors
//! (5.4.2 "Vectors").

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};
use crate::target::{PtxVersion, v};

/// A PTX scalar (or packed) type as written in a type suffix: `.f32`, `.bf16x2`, `.e4m3`...
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum ScalarType {
    Pred,
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    Tf32,
    F32,
    /// Two `.f32` values in a `.b64` register (PTX ISA 5.2.5 "Packed Data Types"; an instruction
    /// type only: ptxas 13.0, "Type .f32x2 may only be used as an instruction type").
    F32x2,
    F64,
    E4m3,
    E5m2,
    E4m3x2,
    E5m2x2,
    E2m1,
    E2m3,
    E3m2,
    E2m1x2,
    E2m3x2,
    E3m2x2,
}

/// The kind of a type, for the operand type-agreement rules (PTX ISA 6.1 "Operand Type
/// Information": bit-size types agree with any type of the same size; signed and unsigned integers of
/// the same size agree; floating-point types agree only when equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKind {
    /// `.pred`
    Pred,
    /// `.bN`
    Bits,
    /// `.uN`
    Unsigned,
    /// `.sN`
    Signed,
    /// floating point, packed floating point and the alternate formats
    Float,
}

impl ScalarType {
    /// Every type, in declaration order.
    pub const ALL: &'static [ScalarType] = &[
        ScalarType::Pred,
        ScalarType::B8,
        ScalarType::B16,
        ScalarType::B32,
        ScalarType::B64,
        ScalarType::B128,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::S8,
        ScalarType::S16,
        ScalarType::S32,
        ScalarType::S64,
        ScalarType::F16,
        ScalarType::F16x2,
        ScalarType::Bf16,
        ScalarType::Bf16x2,
        ScalarType::Tf32,
        ScalarType::F32,
        ScalarType::F32x2,
        ScalarType::F64,
        ScalarType::E4m3,
        ScalarType::E5m2,
        ScalarType::E4m3x2,
        ScalarType::E5m2x2,
        ScalarType::E2m1,
        ScalarType::E2m3,
        ScalarType::E3m2,
        ScalarType::E2m1x2,
        ScalarType::E2m3x2,
        ScalarType::E3m2x2,
    ];

    /// The suffix without its dot: `f32`, `bf16x2`.
    pub const fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Pred => "pred",
            B8 => "b8",
            B16 => "b16",
            B32 => "b32",
            B64 => "b64",
            B128 => "b128",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            F16 => "f16",
            F16x2 => "f16x2",
            Bf16 => "bf16",
            Bf16x2 => "bf16x2",
            Tf32 => "tf32",
            F32 => "f32",
            F32x2 => "f32x2",
            F64 => "f64",
            E4m3 => "e4m3",
            E5m2 => "e5m2",
            E4m3x2 => "e4m3x2",
            E5m2x2 => "e5m2x2",
            E2m1 => "e2m1",
            E2m3 => "e2m3",
            E3m2 => "e3m2",
            E2m1x2 => "e2m1x2",
            E2m3x2 => "e2m3x2",
            E3m2x2 => "e3m2x2",
        }
    }

    /// Size in bits (`.pred` counts as 1). The sub-byte formats have their own widths: `.e2m1`
    /// is 4 bits, `.e2m3` and `.e3m2` 6; packed in pairs, `.e2m1x2` fills a byte and the 6-bit
    /// pairs take 16 bits, one value in the low 6 bits of each byte (PTX ISA 5.2.3, 9.7.9.21 `cvt`:
    /// `.e2m3x2`/`.e3m2x2` results are `.b16`).
    pub const fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred => 1,
            E2m1 => 4,
            E2m3 | E3m2 => 6,
            B8 | U8 | S8 | E4m3 | E5m2 | E2m1x2 => 8,
            B16 | U16 | S16 | F16 | Bf16 | E4m3x2 | E5m2x2 | E2m3x2 | E3m2x2 => 16,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | Tf32 => 32,
            B64 | U64 | S64 | F64 | F32x2 => 64,
            B128 => 128,
        }
    }

    /// Size in bytes (`.pred` counts as 1; a sub-byte format rounds up to 1).
    pub const fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Size in bytes of a type that fills whole bytes, `None` for `.pred` and the sub-byte formats
    /// (`.e2m1`, `.e2m3`, `.e3m2`), which byte-addressed memory cannot hold one by one.
    pub const fn whole_bytes(self) -> Option<u32> {
        match self.bits() {
            8 | 16 | 32 | 64 | 128 => Some(self.bits() / 8),
            _ => None,
        }
    }

    /// The kind used by the type-agreement rules.
    pub const fn kind(self) -> TypeKind {
        use ScalarType::*;
        match self {
            Pred => TypeKind::Pred,
            B8 | B16 | B32 | B64 | B128 => TypeKind::Bits,
            U8 | U16 | U32 | U64 => TypeKind::Unsigned,
            S8 | S16 | S32 | S64 => TypeKind::Signed,
            _ => TypeKind::Float,
        }
    }

    /// True for the integer types (`.uN`, `.sN`).
    pub const fn is_int(self) -> bool {
        matches!(self.kind(), TypeKind::Unsigned | TypeKind::Signed)
    }

    /// The largest value of an integer type (`.uN`, `.sN`), `None` for the others: what a host
    /// value must not exceed to pass as a kernel argument of this type.
    pub const fn int_max(self) -> Option<u64> {
        use ScalarType::*;
        Some(match self {
            U8 => u8::MAX as u64,
            U16 => u16::MAX as u64,
            U32 => u32::MAX as u64,
            U64 => u64::MAX,
            S8 => i8::MAX as u64,
            S16 => i16::MAX as u64,
            S32 => i32::MAX as u64,
            S64 => i64::MAX as u64,
            _ => return None,
        })
    }

    /// True for the floating-point types, packed ones included.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), TypeKind::Float)
    }

    /// The bit-size type of the same width (`.b32` for `.f32`).
    pub const fn bits_type(self) -> ScalarType {
        match self.bits() {
            8 => ScalarType::B8,
            16 => ScalarType::B16,
            32 => ScalarType::B32,
            64 => ScalarType::B64,
            128 => ScalarType::B128,
            _ => ScalarType::Pred,
        }
    }

    /// Whether an operand of type `operand` agrees with an instruction of type `self`
    /// (PTX ISA 6.1 "Operand Type Information").
    pub fn agrees_with(self, operand: ScalarType) -> bool {
        if self == operand {
            return true;
        }
        if self.bits() != operand.bits() {
            return false;
        }
        match (self.kind(), operand.kind()) {
            (TypeKind::Pred, _) | (_, TypeKind::Pred) => false,
            (TypeKind::Bits, _) | (_, TypeKind::Bits) => true,
            (TypeKind::Unsigned | TypeKind::Signed, TypeKind::Unsigned | TypeKind::Signed) => true,
            _ => false,
        }
    }

    /// The integer type twice as wide (`mul.wide.s32` writes an `.s64`, PTX ISA 9.7.1.3); `None`
    /// for the others.
    pub const fn wide(self) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match self {
            U16 => U32,
            U32 => U64,
            S16 => S32,
            S32 => S64,
            _ => return None,
        })
    }

    /// The lowest PTX ISA version in which the type exists: the fundamental types of PTX ISA
    /// 5.2.1 (`.u32`, `.f16`, `.pred` ...) are PTX 1.0; `.f16x2` arrived with half-precision
    /// arithmetic in PTX 4.2 (ptxas 13.0: "Feature '.f16x2 packed data-type' requires PTX ISA
    /// .version 4.2 or later"); `.bf16`, `.bf16x2` and `.tf32` in PTX 7.0 (5.2.3); `.b128` in 8.3;
    /// the FP8 formats in 7.8, the FP6/FP4 ones and `.f32x2` (sm_100's packed arithmetic) in 8.6.
    pub const fn min_ptx(self) -> PtxVersion {
        match self {
            ScalarType::F16x2 => v(4, 2),
            ScalarType::Bf16 | ScalarType::Bf16x2 | ScalarType::Tf32 => v(7, 0),
            ScalarType::B128 => v(8, 3),
            ScalarType::E4m3 | ScalarType::E5m2 | ScalarType::E4m3x2 | ScalarType::E5m2x2 => {
                v(7, 8)
            }
            // The FP6/FP4 formats arrived with sm_100's conversions (PTX ISA 8.6).
            ScalarType::E2m1
            | ScalarType::E2m3
            | ScalarType::E3m2
            | ScalarType::E2m1x2
            | ScalarType::E2m3x2
            | ScalarType::E3m2x2
            | ScalarType::F32x2 => v(8, 6),
            _ => v(1, 0),
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.name())
    }
}

impl ScalarType {
    /// The type named `name` (without its dot), or `None`: what [`FromStr`] reads, without
    /// building an error for every modifier that is no type (the validator and the builder ask
    /// this of every modifier they see).
    pub fn from_name(name: &str) -> Option<ScalarType> {
        use ScalarType::*;
        // A match, not a scan of `ALL`: every modifier of every instruction is asked (issue 33).
        Some(match name {
            "pred" => Pred,
            "b8" => B8,
            "b16" => B16,
            "b32" => B32,
            "b64" => B64,
            "b128" => B128,
            "u8" => U8,
            "u16" => U16,
            "u32" => U32,
            "u64" => U64,
            "s8" => S8,
            "s16" => S16,
            "s32" => S32,
            "s64" => S64,
            "f16" => F16,
            "f16x2" => F16x2,
            "bf16" => Bf16,
            "bf16x2" => Bf16x2,
            "tf32" => Tf32,
            "f32" => F32,
            "f32x2" => F32x2,
            "f64" => F64,
            "e4m3" => E4m3,
            "e5m2" => E5m2,
            "e4m3x2" => E4m3x2,
            "e5m2x2" => E5m2x2,
            "e2m1" => E2m1,
            "e2m3" => E2m3,
            "e3m2" => E3m2,
            "e2m1x2" => E2m1x2,
            "e2m3x2" => E2m3x2,
            "e3m2x2" => E3m2x2,
            _ => return None,
        })
    }
}

impl FromStr for ScalarType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let s = s.strip_prefix('.').unwrap_or(s);
        ScalarType::from_name(s)
            .ok_or_else(|| Error::new(ErrorKind::UnknownType, format!("unknown PTX type `.{s}`")))
    }
}

/// A vector width suffix (PTX ISA 5.4.2 "Vectors"): `.v2`, `.v4`, and `.v8` (for 32-bit and narrower
/// elements in a few instructions, PTX 8.3+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorWidth {
    /// `.v2`
    V2,
    /// `.v4`
    V4,
    /// `.v8`
    V8,
}

impl VectorWidth {
    /// The number of elements.
    #[allow(clippy::len_without_is_empty)] // a vector width is never empty
    pub const fn len(self) -> usize {
        match self {
            VectorWidth::V2 => 2,
            VectorWidth::V4 => 4,
            VectorWidth::V8 => 8,
        }
    }

    /// The suffix without its dot.
    pub const fn name(self) -> &'static str {
        match self {
            VectorWidth::V2 => "v2",
            VectorWidth::V4 => "v4",
            VectorWidth::V8 => "v8",
        }
    }

    /// The width for `n` elements: `None` for 1 (a scalar access), an error for other counts.
    pub fn for_len(n: usize) -> Result<Option<VectorWidth>, usize> {
        match n {
            1 => Ok(None),
            2 => Ok(Some(VectorWidth::V2)),
            4 => Ok(Some(VectorWidth::V4)),
            8 => Ok(Some(VectorWidth::V8)),
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ScalarType::ALL {
            assert_eq!(t.name().parse::<ScalarType>().unwrap(), *t);
            assert_eq!(format!("{t}").parse::<ScalarType>().unwrap(), *t);
        }
        assert!("f8".parse::<ScalarType>().is_err());
    }

    #[test]
    fn type_agreement_follows_the_manual() {
        use ScalarType::*;
        assert!(F32.agrees_with(B32));
        assert!(B32.agrees_with(F32));
        assert!(U32.agrees_with(S32));
        assert!(!U32.agrees_with(F32));
        assert!(!F32.agrees_with(U32));
        assert!(!F16.agrees_with(Bf16));
        assert!(F16x2.agrees_with(B32));
        assert!(!U32.agrees_with(U64));
        assert!(!Pred.agrees_with(B8));
    }
}
