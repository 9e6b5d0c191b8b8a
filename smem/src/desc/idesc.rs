//! The tcgen05.mma instruction descriptor for `.kind::f16`, `.kind::tf32`, `.kind::f8f6f4` and
//! `.kind::i8` (PTX ISA 9.7.16.4.2 "Instruction Descriptor", Table 42), with the legal shapes
//! of PTX ISA 9.7.16.2.1 "Matrix Shape", Table 39.
//!
//! | bits  | field (Table 42)                                                         |
//! |-------|--------------------------------------------------------------------------|
//! | 0-1   | sparsity selector (sparse only; always 0 here)                           |
//! | 2     | sparsity: dense 0 (only dense is supported here)                         |
//! | 3     | saturate (`.kind::i8` only)                                              |
//! | 4-5   | D format: F16 0, F32 1, S32 2                                             |
//! | 6     | reserved                                                                 |
//! | 7-9   | A format (per kind, see [`format_code`])                                 |
//! | 10-12 | B format                                                                 |
//! | 13/14 | negate A / negate B (not for `.kind::i8`)                                 |
//! | 15/16 | transpose A / B: K-major 0, MN-major 1                                    |
//! | 17-22 | N >> 3                                                                   |
//! | 23    | reserved                                                                 |
//! | 24-28 | M >> 4                                                                   |
//! | 29    | reserved                                                                 |
//! | 30-31 | maximum shift for `.ws` B-matrix reuse: none 0, 8 1, 16 2, 32 3           |

use crate::major::Major;
use ptx_isa::ScalarType;

pub use ptx_isa::builder::{CtaGroup, MmaKindTc};

/// The `.ws` maximum shift while attempting B-matrix reuse (bits 30-31).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaxShift {
    /// 0: no shift.
    None,
    /// 1: up to 8.
    By8,
    /// 2: up to 16.
    By16,
    /// 3: up to 32.
    By32,
}

impl MaxShift {
    const fn code(self) -> u32 {
        match self {
            MaxShift::None => 0,
            MaxShift::By8 => 1,
            MaxShift::By16 => 2,
            MaxShift::By32 => 3,
        }
    }

    const fn from_code(code: u32) -> MaxShift {
        match code & 3 {
            0 => MaxShift::None,
            1 => MaxShift::By8,
            2 => MaxShift::By16,
            _ => MaxShift::By32,
        }
    }
}

/// Which matrix of the MMA an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Matrix {
    /// The A operand.
    A,
    /// The B operand.
    B,
    /// The accumulator D.
    D,
}

/// Why an instruction descriptor is illegal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdescError {
    /// The kind does not take this format for this matrix.
    #[error(".kind::{kind} does not take {} for {matrix:?}", dtype.name())]
    Format {
        /// The kind.
        kind: MmaKindTc,
        /// The matrix.
        matrix: Matrix,
        /// The format given.
        dtype: ScalarType,
    },
    /// A and B must have the same format in `.kind::f16` and `.kind::tf32`.
    #[error(".kind::{kind} needs A and B of the same format, got {} and {}", a.name(), b.name())]
    MixedFormats {
        /// The kind.
        kind: MmaKindTc,
        /// A's format.
        a: ScalarType,
        /// B's format.
        b: ScalarType,
    },
    /// `.kind::f16` accumulates bf16 only in f32 (PTX ISA Table 39: D .f16 takes only .f16).
    #[error(".kind::f16 with {} inputs needs an f32 accumulator, got {}", a.name(), d.name())]
    Accumulator {
        /// The input format.
        a: ScalarType,
        /// The accumulator format.
        d: ScalarType,
    },
    /// M is not legal for the kind, CTA group and `.ws`.
    #[error("M = {m} is not legal for .kind::{kind} {variant}; M must be {legal}")]
    M {
        /// The kind.
        kind: MmaKindTc,
        /// `cta_group::1`, `cta_group::2` or `ws`.
        variant: &'static str,
        /// M.
        m: u32,
        /// The legal values.
        legal: &'static str,
    },
    /// N is not legal for the kind, CTA group and `.ws`.
    #[error("N = {n} is not legal for .kind::{kind} {variant}; N must be {legal}")]
    N {
        /// The kind.
        kind: MmaKindTc,
        /// `cta_group::1`, `cta_group::2` or `ws`.
        variant: &'static str,
        /// N.
        n: u32,
        /// The legal values.
        legal: &'static str,
    },
    /// `.kind::i8` cannot negate its inputs (Table 42: "No Negate = 0").
    #[error(".kind::{0} cannot negate A or B")]
    Negate(MmaKindTc),
    /// Only `.kind::i8` saturates (Table 42 bit 3).
    #[error(".kind::{0} has no saturate")]
    Saturate(MmaKindTc),
    /// MN-major ("transpose") is only valid for 8-, 16- and 32-bit formats (CUTLASS
    /// `cute/arch/mma_sm100_desc.hpp`, `InstrDescriptor::a_major_`).
    #[error("{matrix:?} in {} must be K-major", dtype.name())]
    MnMajor {
        /// The matrix.
        matrix: Matrix,
        /// Its format.
        dtype: ScalarType,
    },
    /// `.ws` exists only for `.cta_group::1` (Table 39).
    #[error(".ws is only valid with cta_group::1")]
    WsWithCtaGroup2,
    /// The maximum shift applies only to `.ws`.
    #[error("max shift is only valid with .ws")]
    MaxShiftWithoutWs,
    /// A descriptor being decoded sets bits this encoder never sets (reserved, or sparsity).
    #[error(
        "instruction descriptor {desc:#010x} sets unsupported bits {bits:#010x} (reserved or sparsity)"
    )]
    UnsupportedBits {
        /// The descriptor.
        desc: u32,
        /// The offending bits.
        bits: u32,
    },
    /// A format field holds a code the kind does not define.
    #[error("{matrix:?} format code {code} is not defined for .kind::{kind}")]
    FormatCode {
        /// The kind.
        kind: MmaKindTc,
        /// The matrix.
        matrix: Matrix,
        /// The code.
        code: u32,
    },
}

/// The format code of `dtype` for `matrix` in `kind` (PTX ISA 9.7.16.4.2, Table 42), or `None`
/// if the kind does not take it. D: F16 0, F32 1, S32 2. A/B: `.kind::f16` F16 0, BF16 1;
/// `.kind::tf32` TF32 2; `.kind::f8f6f4` E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5; `.kind::i8` U8 0,
/// S8 1.
pub const fn format_code(kind: MmaKindTc, matrix: Matrix, dtype: ScalarType) -> Option<u32> {
    match (matrix, kind, dtype) {
        (Matrix::D, MmaKindTc::F16, ScalarType::F16) => Some(0),
        // Table 42 lists only F32 for tf32 and f8f6f4 and only S32 for i8.
        (Matrix::D, MmaKindTc::F16 | MmaKindTc::Tf32 | MmaKindTc::F8f6f4, ScalarType::F32) => {
            Some(1)
        }
        (Matrix::D, MmaKindTc::I8, ScalarType::S32) => Some(2),
        (Matrix::D, _, _) => None,
        (_, MmaKindTc::F16, ScalarType::F16) => Some(0),
        (_, MmaKindTc::F16, ScalarType::Bf16) => Some(1),
        (_, MmaKindTc::Tf32, ScalarType::Tf32) => Some(2),
        (_, MmaKindTc::F8f6f4, ScalarType::E4m3) => Some(0),
        (_, MmaKindTc::F8f6f4, ScalarType::E5m2) => Some(1),
        (_, MmaKindTc::F8f6f4, ScalarType::E2m3) => Some(3),
        (_, MmaKindTc::F8f6f4, ScalarType::E3m2) => Some(4),
        (_, MmaKindTc::F8f6f4, ScalarType::E2m1) => Some(5),
        (_, MmaKindTc::I8, ScalarType::U8) => Some(0),
        (_, MmaKindTc::I8, ScalarType::S8) => Some(1),
        _ => None,
    }
}

/// The format with `code` for `matrix` in `kind`; the inverse of [`format_code`].
pub fn format_from_code(
    kind: MmaKindTc,
    matrix: Matrix,
    code: u32,
) -> Result<ScalarType, IdescError> {
    ScalarType::ALL
        .iter()
        .copied()
        .find(|&d| format_code(kind, matrix, d) == Some(code))
        .ok_or(IdescError::FormatCode { kind, matrix, code })
}

/// A tcgen05.mma instruction descriptor as typed fields (dense MMA only).
///
/// ```
/// use smem::desc::idesc::{InstrDesc, MmaKindTc};
/// use ptx_isa::ScalarType;
/// // bf16 x bf16 -> f32, M = 128, N = 256, both K-major.
/// let d = InstrDesc::new(MmaKindTc::F16, ScalarType::Bf16, ScalarType::Bf16, ScalarType::F32, 128, 256);
/// assert_eq!(d.encode(), Ok(0x0840_0490));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstrDesc {
    /// The `.kind`.
    pub kind: MmaKindTc,
    /// The CTA group (not encoded in the descriptor, but it decides the legal shapes).
    pub cta_group: CtaGroup,
    /// Whether the instruction is `tcgen05.mma.ws` (not encoded; decides shapes and max shift).
    pub ws: bool,
    /// A's format.
    pub a: ScalarType,
    /// B's format.
    pub b: ScalarType,
    /// D's format.
    pub d: ScalarType,
    /// M (rows of A and D), for the whole CTA group.
    pub m: u32,
    /// N (columns of B and D).
    pub n: u32,
    /// A's contiguous dimension.
    pub a_major: Major,
    /// B's contiguous dimension.
    pub b_major: Major,
    /// Negate A.
    pub negate_a: bool,
    /// Negate B.
    pub negate_b: bool,
    /// Saturate the integer result (`.kind::i8` only).
    pub saturate: bool,
    /// The `.ws` maximum shift.
    pub max_shift: MaxShift,
}

const fn variant_name(cta_group: CtaGroup, ws: bool) -> &'static str {
    match (ws, cta_group) {
        (true, _) => ".ws",
        (false, CtaGroup::One) => ".cta_group::1",
        (false, CtaGroup::Two) => ".cta_group::2",
    }
}

impl InstrDesc {
    /// A dense, K-major, `.cta_group::1`, non-negated descriptor.
    pub fn new(
        kind: MmaKindTc,
        a: ScalarType,
        b: ScalarType,
        d: ScalarType,
        m: u32,
        n: u32,
    ) -> InstrDesc {
        InstrDesc {
            kind,
            cta_group: CtaGroup::One,
            ws: false,
            a,
            b,
            d,
            m,
            n,
            a_major: Major::K,
            b_major: Major::K,
            negate_a: false,
            negate_b: false,
            saturate: false,
            max_shift: MaxShift::None,
        }
    }

    /// Checks every rule of Tables 39 and 42; the first broken one is the error.
    pub fn validate(&self) -> Result<(), IdescError> {
        let kind = self.kind;
        for (matrix, dtype) in [
            (Matrix::A, self.a),
            (Matrix::B, self.b),
            (Matrix::D, self.d),
        ] {
            if format_code(kind, matrix, dtype).is_none() {
                return Err(IdescError::Format {
                    kind,
                    matrix,
                    dtype,
                });
            }
        }
        if matches!(kind, MmaKindTc::F16 | MmaKindTc::Tf32) && self.a != self.b {
            return Err(IdescError::MixedFormats {
                kind,
                a: self.a,
                b: self.b,
            });
        }
        if kind == MmaKindTc::F16 && self.d == ScalarType::F16 && self.a != ScalarType::F16 {
            return Err(IdescError::Accumulator {
                a: self.a,
                d: self.d,
            });
        }
        for (matrix, dtype, major) in [
            (Matrix::A, self.a, self.a_major),
            (Matrix::B, self.b, self.b_major),
        ] {
            if major == Major::MN && dtype.bits() % 8 != 0 {
                return Err(IdescError::MnMajor { matrix, dtype });
            }
        }
        if kind == MmaKindTc::I8 && (self.negate_a || self.negate_b) {
            return Err(IdescError::Negate(kind));
        }
        if kind != MmaKindTc::I8 && self.saturate {
            return Err(IdescError::Saturate(kind));
        }
        if self.ws && self.cta_group == CtaGroup::Two {
            return Err(IdescError::WsWithCtaGroup2);
        }
        if !self.ws && self.max_shift != MaxShift::None {
            return Err(IdescError::MaxShiftWithoutWs);
        }
        self.validate_shape()
    }

    /// Table 39 (dense): the legal M and N for the kind, CTA group and `.ws`.
    fn validate_shape(&self) -> Result<(), IdescError> {
        let (kind, m, n) = (self.kind, self.m, self.n);
        let variant = variant_name(self.cta_group, self.ws);
        let (m_ok, m_legal, n_ok, n_legal) = match (self.ws, self.cta_group, kind) {
            (true, _, _) => (
                matches!(m, 32 | 64 | 128),
                "32, 64 or 128",
                matches!(n, 64 | 128 | 256),
                "64, 128 or 256",
            ),
            // `.kind::i8` rows of Table 39 could not be read in the manual copy available here;
            // these are CUTLASS's checks (`SM100_MMA_S8_SS`, `SM100_MMA_S8_2x1SM_SS`).
            (false, CtaGroup::One, MmaKindTc::I8) => (
                matches!(m, 64 | 128),
                "64 or 128",
                n == 8 || (n % 16 == 0 && (16..=256).contains(&n)),
                "8 or a multiple of 16 from 16 to 256",
            ),
            (false, CtaGroup::Two, MmaKindTc::I8) => (
                matches!(m, 128 | 256),
                "128 or 256",
                n % 32 == 0 && (32..=256).contains(&n),
                "a multiple of 32 from 32 to 256",
            ),
            (false, CtaGroup::One, _) => (
                matches!(m, 64 | 128),
                "64 or 128",
                n % 8 == 0 && (8..=256).contains(&n),
                "a multiple of 8 from 8 to 256",
            ),
            (false, CtaGroup::Two, _) => (
                matches!(m, 128 | 256),
                "128 or 256",
                n % 16 == 0 && (16..=256).contains(&n),
                "a multiple of 16 from 16 to 256",
            ),
        };
        if !m_ok {
            return Err(IdescError::M {
                kind,
                variant,
                m,
                legal: m_legal,
            });
        }
        if !n_ok {
            return Err(IdescError::N {
                kind,
                variant,
                n,
                legal: n_legal,
            });
        }
        Ok(())
    }

    /// The 32-bit descriptor, after [`InstrDesc::validate`].
    pub fn encode(&self) -> Result<u32, IdescError> {
        self.validate()?;
        let code = |matrix, dtype| format_code(self.kind, matrix, dtype).unwrap_or(0);
        let bit = |b: bool, at: u32| u32::from(b) << at;
        Ok(bit(self.saturate, 3)
            | (code(Matrix::D, self.d) << 4)
            | (code(Matrix::A, self.a) << 7)
            | (code(Matrix::B, self.b) << 10)
            | bit(self.negate_a, 13)
            | bit(self.negate_b, 14)
            | bit(self.a_major == Major::MN, 15)
            | bit(self.b_major == Major::MN, 16)
            | ((self.n >> 3) << 17)
            | ((self.m >> 4) << 24)
            | (self.max_shift.code() << 30))
    }

    /// The typed fields of a descriptor for `kind`, `cta_group` and `ws` (which the 32 bits do
    /// not hold), validated like [`InstrDesc::encode`].
    pub fn decode(
        kind: MmaKindTc,
        cta_group: CtaGroup,
        ws: bool,
        desc: u32,
    ) -> Result<InstrDesc, IdescError> {
        // Bits 0-2 (sparsity), 6, 23 and 29 (reserved) are never set by a dense descriptor.
        let unsupported = desc & (0b111 | (1 << 6) | (1 << 23) | (1 << 29));
        if unsupported != 0 {
            return Err(IdescError::UnsupportedBits {
                desc,
                bits: unsupported,
            });
        }
        let major = |at: u32| {
            if desc & (1 << at) != 0 {
                Major::MN
            } else {
                Major::K
            }
        };
        let d = InstrDesc {
            kind,
            cta_group,
            ws,
            saturate: desc & (1 << 3) != 0,
            d: format_from_code(kind, Matrix::D, (desc >> 4) & 3)?,
            a: format_from_code(kind, Matrix::A, (desc >> 7) & 7)?,
            b: format_from_code(kind, Matrix::B, (desc >> 10) & 7)?,
            negate_a: desc & (1 << 13) != 0,
            negate_b: desc & (1 << 14) != 0,
            a_major: major(15),
            b_major: major(16),
            n: ((desc >> 17) & 0x3F) << 3,
            m: ((desc >> 24) & 0x1F) << 4,
            max_shift: MaxShift::from_code(desc >> 30),
        };
        d.validate()?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16(a: ScalarType, d: ScalarType, m: u32, n: u32) -> InstrDesc {
        InstrDesc::new(MmaKindTc::F16, a, a, d, m, n)
    }

    #[test]
    fn field_positions() {
        let base = f16(ScalarType::F16, ScalarType::F32, 64, 8);
        let e = base.encode().unwrap();
        assert_eq!(e, (1 << 4) | (1 << 17) | (4 << 24));
        let mut t = base;
        t.a_major = Major::MN;
        t.negate_b = true;
        assert_eq!(t.encode().unwrap(), e | (1 << 15) | (1 << 14));
        let i8 = InstrDesc {
            saturate: true,
            ..InstrDesc::new(
                MmaKindTc::I8,
                ScalarType::S8,
                ScalarType::U8,
                ScalarType::S32,
                128,
                16,
            )
        };
        assert_eq!(
            i8.encode().unwrap(),
            (1 << 3) | (2 << 4) | (1 << 7) | (2 << 17) | (8 << 24)
        );
        let ws = InstrDesc {
            ws: true,
            max_shift: MaxShift::By32,
            ..f16(ScalarType::F16, ScalarType::F16, 32, 64)
        };
        assert_eq!(ws.encode().unwrap(), (8 << 17) | (2 << 24) | (3 << 30));
    }

    #[test]
    fn kinds_and_formats() {
        assert_eq!(
            f16(ScalarType::Bf16, ScalarType::F16, 128, 128).encode(),
            Err(IdescError::Accumulator {
                a: ScalarType::Bf16,
                d: ScalarType::F16
            })
        );
        assert_eq!(
            InstrDesc::new(
                MmaKindTc::F16,
                ScalarType::F16,
                ScalarType::Bf16,
                ScalarType::F32,
                128,
                128
            )
            .encode(),
            Err(IdescError::MixedFormats {
                kind: MmaKindTc::F16,
                a: ScalarType::F16,
                b: ScalarType::Bf16
            })
        );
        assert_eq!(
            InstrDesc::new(
                MmaKindTc::Tf32,
                ScalarType::F32,
                ScalarType::F32,
                ScalarType::F32,
                128,
                128
            )
            .encode(),
            Err(IdescError::Format {
                kind: MmaKindTc::Tf32,
                matrix: Matrix::A,
                dtype: ScalarType::F32
            })
        );
        assert_eq!(
            InstrDesc::new(
                MmaKindTc::I8,
                ScalarType::S8,
                ScalarType::S8,
                ScalarType::F32,
                128,
                128
            )
            .encode(),
            Err(IdescError::Format {
                kind: MmaKindTc::I8,
                matrix: Matrix::D,
                dtype: ScalarType::F32
            })
        );
        // f8f6f4 mixes formats freely.
        let mixed = InstrDesc::new(
            MmaKindTc::F8f6f4,
            ScalarType::E4m3,
            ScalarType::E2m1,
            ScalarType::F32,
            128,
            64,
        );
        assert_eq!((mixed.encode().unwrap() >> 7) & 0x3F, 5 << 3); // A = E4M3 (0), B = E2M1 (5)
        let mn = InstrDesc {
            b_major: Major::MN,
            ..mixed
        };
        assert_eq!(
            mn.encode(),
            Err(IdescError::MnMajor {
                matrix: Matrix::B,
                dtype: ScalarType::E2m1
            })
        );
        let neg = InstrDesc {
            negate_a: true,
            ..InstrDesc::new(
                MmaKindTc::I8,
                ScalarType::S8,
                ScalarType::S8,
                ScalarType::S32,
                64,
                8,
            )
        };
        assert_eq!(neg.encode(), Err(IdescError::Negate(MmaKindTc::I8)));
        assert_eq!(
            InstrDesc {
                saturate: true,
                ..f16(ScalarType::F16, ScalarType::F32, 64, 8)
            }
            .encode(),
            Err(IdescError::Saturate(MmaKindTc::F16))
        );
    }

    #[test]
    fn shapes_follow_table_39() {
        let one = |m, n| {
            f16(ScalarType::Bf16, ScalarType::F32, m, n)
                .encode()
                .is_ok()
        };
        let two = |m, n| {
            InstrDesc {
                cta_group: CtaGroup::Two,
                ..f16(ScalarType::Bf16, ScalarType::F32, m, n)
            }
            .encode()
            .is_ok()
        };
        assert!(one(64, 8) && one(128, 8) && one(128, 256) && one(64, 136));
        assert!(!one(256, 128) && !one(32, 64) && !one(128, 4) && !one(128, 264) && !one(128, 12));
        assert!(two(128, 16) && two(256, 256));
        assert!(!two(64, 64) && !two(256, 8) && !two(256, 24));
        assert_eq!(
            f16(ScalarType::F16, ScalarType::F32, 96, 64).encode(),
            Err(IdescError::M {
                kind: MmaKindTc::F16,
                variant: ".cta_group::1",
                m: 96,
                legal: "64 or 128"
            })
        );
        let i8n = |n| {
            InstrDesc::new(
                MmaKindTc::I8,
                ScalarType::U8,
                ScalarType::U8,
                ScalarType::S32,
                128,
                n,
            )
            .encode()
            .is_ok()
        };
        assert!(i8n(8) && i8n(16) && i8n(48) && !i8n(24));
        let ws = InstrDesc {
            ws: true,
            cta_group: CtaGroup::Two,
            ..f16(ScalarType::F16, ScalarType::F32, 64, 64)
        };
        assert_eq!(ws.encode(), Err(IdescError::WsWithCtaGroup2));
        let shift = InstrDesc {
            max_shift: MaxShift::By8,
            ..f16(ScalarType::F16, ScalarType::F32, 64, 64)
        };
        assert_eq!(shift.encode(), Err(IdescError::MaxShiftWithoutWs));
    }

    #[test]
    fn decode_rejects_sparsity_and_reserved_bits() {
        let good = f16(ScalarType::F16, ScalarType::F32, 128, 128)
            .encode()
            .unwrap();
        for bit in [0, 1, 2, 6, 23, 29] {
            assert_eq!(
                InstrDesc::decode(MmaKindTc::F16, CtaGroup::One, false, good | (1 << bit)),
                Err(IdescError::UnsupportedBits {
                    desc: good | (1 << bit),
                    bits: 1 << bit
                })
            );
        }
        assert_eq!(
            InstrDesc::decode(MmaKindTc::F8f6f4, CtaGroup::One, false, good | (2 << 7)),
            Err(IdescError::FormatCode {
                kind: MmaKindTc::F8f6f4,
                matrix: Matrix::A,
                code: 2
            })
        );
    }
}
