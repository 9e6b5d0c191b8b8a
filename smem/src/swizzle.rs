//! The byte-swizzle modes of TMA and the tensor-core descriptors, and 2-D offsets that apply them.
//!
//! The functor itself is [`layouts::Swizzle`] (re-exported as [`crate::Swizzle`]); this module
//! names the four byte modes the hardware knows and adds what a kernel needs around them: the
//! span and atom sizes, the TMA enum value, the alignment, the byte offset of element
//! `(row, col)` of a swizzled tile, and the swizzle as a straight-line ALU program.

use std::fmt;
use std::str::FromStr;

use layouts::Swizzle;

use crate::alu::{AluError, AluProgram, Value, Width};

/// One of the byte-swizzle modes shared by TMA (`CUtensorMapSwizzle`), the wgmma matrix
/// descriptor and the tcgen05 shared-memory descriptor.
///
/// Each mode permutes the 16-byte chunks of a row of `span_bytes()` inside an atom of 8 such
/// rows (PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout", the swizzling-mode figures; PTX
/// ISA 9.7.16.4.1 Table 41 for where each pattern repeats). `None` is the descriptors'
/// "interleave" (no swizzle) mode, whose core matrix is 8 rows of 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SwizzleMode {
    /// No swizzle: `Swizzle<0,4,3>`, 16-byte rows, 128-byte core matrix.
    None,
    /// 32-byte swizzle: `Swizzle<1,4,3>`, 256-byte atom.
    B32,
    /// 64-byte swizzle: `Swizzle<2,4,3>`, 512-byte atom.
    B64,
    /// 128-byte swizzle: `Swizzle<3,4,3>`, 1024-byte atom.
    B128,
}

/// A string that names no swizzle mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown swizzle mode `{0}` (expected none, 32B, 64B or 128B)")]
pub struct UnknownSwizzleMode(pub String);

/// Why a swizzled 2-D offset could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SwizzleOffsetError {
    /// The element size is zero.
    #[error("element size must be at least one byte")]
    ZeroElement,
    /// The row pitch is not a multiple of 16 bytes, so rows do not start on chunk boundaries
    /// and the swizzle would scatter an element across chunks.
    #[error("row pitch {pitch} bytes is not a multiple of 16")]
    PitchNotChunkAligned {
        /// The row pitch in bytes.
        pitch: u64,
    },
    /// The element does not fit in its row.
    #[error("column {col} x {elem_bytes} bytes does not fit in a row of {pitch} bytes")]
    ColumnOutOfRow {
        /// The column index.
        col: u64,
        /// The element size in bytes.
        elem_bytes: u64,
        /// The row pitch in bytes.
        pitch: u64,
    },
    /// The offset overflows 64 bits.
    #[error("offset of row {row} overflows")]
    Overflow {
        /// The row index.
        row: u64,
    },
    /// The pitch or element size does not fit the program's width.
    #[error(transparent)]
    Alu(#[from] AluError),
}

impl SwizzleMode {
    /// All four modes, narrowest first.
    pub const ALL: [SwizzleMode; 4] = [
        SwizzleMode::None,
        SwizzleMode::B32,
        SwizzleMode::B64,
        SwizzleMode::B128,
    ];

    /// The functor on byte offsets: `Swizzle<0|1|2|3, 4, 3>`.
    pub const fn swizzle(self) -> Swizzle {
        match self {
            SwizzleMode::None => Swizzle::NONE,
            SwizzleMode::B32 => Swizzle::B32,
            SwizzleMode::B64 => Swizzle::B64,
            SwizzleMode::B128 => Swizzle::B128,
        }
    }

    /// Bytes in one row of the atom: 16 (the interleave core matrix), 32, 64 or 128.
    pub const fn span_bytes(self) -> u32 {
        match self {
            SwizzleMode::None => 16,
            SwizzleMode::B32 => 32,
            SwizzleMode::B64 => 64,
            SwizzleMode::B128 => 128,
        }
    }

    /// Bytes in one atom of 8 rows: 128, 256, 512 or 1024 (equal to the functor's span).
    pub const fn atom_bytes(self) -> u32 {
        8 * self.span_bytes()
    }

    /// The `CUtensorMapSwizzle` value for `cuTensorMapEncodeTiled`:
    /// `CU_TENSOR_MAP_SWIZZLE_NONE = 0`, `_32B = 1`, `_64B = 2`, `_128B = 3` (CUDA driver API).
    pub const fn tma_code(self) -> u32 {
        match self {
            SwizzleMode::None => 0,
            SwizzleMode::B32 => 1,
            SwizzleMode::B64 => 2,
            SwizzleMode::B128 => 3,
        }
    }

    /// The address alignment at which the swizzle pattern starts, so that a tile placed there
    /// needs a zero descriptor base offset: 1024 / 512 / 256 bytes (PTX ISA 9.7.15.5.1.2.2 and
    /// 9.7.16.4.1 Table 41); 16 bytes (the descriptor's minimum) without swizzle.
    pub const fn alignment(self) -> u32 {
        match self {
            SwizzleMode::None => 16,
            _ => self.atom_bytes(),
        }
    }

    /// The widest swizzled mode whose row (`span_bytes`) divides `bytes`, else `None` if 16
    /// divides it; `Option::None` when not even 16 does.
    pub const fn widest_dividing(bytes: u64) -> Option<SwizzleMode> {
        if bytes == 0 {
            None
        } else if bytes % 128 == 0 {
            Some(SwizzleMode::B128)
        } else if bytes % 64 == 0 {
            Some(SwizzleMode::B64)
        } else if bytes % 32 == 0 {
            Some(SwizzleMode::B32)
        } else if bytes % 16 == 0 {
            Some(SwizzleMode::None)
        } else {
            None
        }
    }

    /// Byte offset of element `(row, col)` of a tile with `elem_bytes`-byte elements and rows
    /// `pitch` bytes apart, with this swizzle applied: `swizzle(row * pitch + col * elem_bytes)`.
    ///
    /// The hardware (TMA writes and tensor-core reads) swizzles address bits, so this is the
    /// physical offset whenever the tile starts at [`SwizzleMode::alignment`]. Rows wider than
    /// the span (pitch 256 with 128B swizzle) are fine: the pattern follows the address.
    ///
    /// ```
    /// use smem::SwizzleMode;
    /// // bf16, 64 per row (128 bytes): element (1, 0) moves to chunk 1 of row 1.
    /// assert_eq!(SwizzleMode::B128.offset_2d(1, 0, 2, 128), Ok(128 + 16));
    /// ```
    pub fn offset_2d(
        self,
        row: u64,
        col: u64,
        elem_bytes: u64,
        pitch: u64,
    ) -> Result<u64, SwizzleOffsetError> {
        check_geometry(elem_bytes, pitch)?;
        let in_row = col
            .checked_mul(elem_bytes)
            .filter(|&b| b.checked_add(elem_bytes).is_some_and(|end| end <= pitch))
            .ok_or(SwizzleOffsetError::ColumnOutOfRow {
                col,
                elem_bytes,
                pitch,
            })?;
        let logical = row
            .checked_mul(pitch)
            .and_then(|r| r.checked_add(in_row))
            .ok_or(SwizzleOffsetError::Overflow { row })?;
        Ok(self.swizzle().apply(logical))
    }

    /// The swizzle as an ALU program from a logical byte offset to a physical one (see
    /// [`swizzle_program`]).
    pub fn program(self, width: Width) -> Result<AluProgram, AluError> {
        swizzle_program(self.swizzle(), width)
    }

    /// [`SwizzleMode::offset_2d`] as an ALU program of two inputs, `row` (`%v0`) and `col`
    /// (`%v1`): `swizzle(row * pitch + col * elem_bytes)`, each product a `shl` for a power of
    /// two and a `mul.lo` otherwise ([`AluProgram::mul_const`]), then the swizzle's `and`,
    /// `shr`, `xor`.
    ///
    /// Contract: for every `(row, col)` where `offset_2d` is `Ok` and `row * pitch + col *
    /// elem_bytes` fits in `width`, the program's [`AluProgram::eval_inputs`] equals it. The
    /// program cannot check `col` at run time: a column past the row wraps into the next one.
    /// Errors are those of `offset_2d` for any column (zero element, unaligned pitch, an element
    /// wider than the row), plus a pitch or element size too wide for `width`.
    ///
    /// ```
    /// use smem::alu::Width;
    /// use smem::SwizzleMode;
    /// let p = SwizzleMode::B128.offset_2d_program(2, 128, Width::U32).unwrap();
    /// assert_eq!(p.eval_inputs(&[1, 0]), Ok(128 + 16));
    /// assert_eq!(p.to_string().lines().count(), 6); // shl, shl, add, and, shr, xor
    /// ```
    pub fn offset_2d_program(
        self,
        elem_bytes: u64,
        pitch: u64,
        width: Width,
    ) -> Result<AluProgram, SwizzleOffsetError> {
        check_geometry(elem_bytes, pitch)?;
        if elem_bytes > pitch {
            return Err(SwizzleOffsetError::ColumnOutOfRow {
                col: 0,
                elem_bytes,
                pitch,
            });
        }
        let mut p = AluProgram::with_inputs(&[width, width])?;
        let (row, col) = (p.input(), Value(1));
        let row_bytes = p.mul_const(row, pitch)?;
        let col_bytes = p.mul_const(col, elem_bytes)?;
        let logical = p.add_value(row_bytes, col_bytes)?;
        append_swizzle(&mut p, self.swizzle(), logical)?;
        Ok(p)
    }
}

/// The checks of [`SwizzleMode::offset_2d`] that do not depend on the element's place.
fn check_geometry(elem_bytes: u64, pitch: u64) -> Result<(), SwizzleOffsetError> {
    if elem_bytes == 0 {
        return Err(SwizzleOffsetError::ZeroElement);
    }
    if pitch % 16 != 0 {
        return Err(SwizzleOffsetError::PitchNotChunkAligned { pitch });
    }
    Ok(())
}

impl From<SwizzleMode> for Swizzle {
    fn from(mode: SwizzleMode) -> Swizzle {
        mode.swizzle()
    }
}

/// The straight-line program computing `x ^ ((x & yyy_mask) >> S)`: one `and`, one `shr`, one
/// `xor` (none for the identity). Its [`AluProgram::eval`] equals [`Swizzle::apply`] on every
/// offset that fits in `width`.
pub fn swizzle_program(sw: Swizzle, width: Width) -> Result<AluProgram, AluError> {
    let mut p = AluProgram::new(width);
    let x = p.input();
    append_swizzle(&mut p, sw, x)?;
    Ok(p)
}

/// Appends `x ^ ((x & yyy_mask) >> S)` on `x` to `p` and returns the swizzled value (`x` itself
/// for the identity, which adds no step).
pub fn append_swizzle(p: &mut AluProgram, sw: Swizzle, x: Value) -> Result<Value, AluError> {
    if sw.is_identity() {
        return Ok(x);
    }
    let masked = p.and(x, sw.yyy_mask())?;
    let moved = p.shr(masked, u64::from(sw.shift()))?;
    p.xor(x, moved)
}

impl fmt::Display for SwizzleMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SwizzleMode::None => "none",
            SwizzleMode::B32 => "32B",
            SwizzleMode::B64 => "64B",
            SwizzleMode::B128 => "128B",
        })
    }
}

impl FromStr for SwizzleMode {
    type Err = UnknownSwizzleMode;

    /// Accepts `none`/`interleave`, and `32B`/`64B`/`128B` (case-insensitive, `B` optional).
    fn from_str(s: &str) -> Result<SwizzleMode, UnknownSwizzleMode> {
        let t = s.to_ascii_lowercase();
        let t = t.strip_suffix('b').unwrap_or(&t);
        match t {
            "none" | "interleave" | "0" => Ok(SwizzleMode::None),
            "32" => Ok(SwizzleMode::B32),
            "64" => Ok(SwizzleMode::B64),
            "128" => Ok(SwizzleMode::B128),
            _ => Err(UnknownSwizzleMode(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_codes() {
        let rows: Vec<_> = SwizzleMode::ALL
            .iter()
            .map(|m| (m.span_bytes(), m.atom_bytes(), m.tma_code(), m.alignment()))
            .collect();
        assert_eq!(
            rows,
            [
                (16, 128, 0, 16),
                (32, 256, 1, 256),
                (64, 512, 2, 512),
                (128, 1024, 3, 1024)
            ]
        );
        for m in SwizzleMode::ALL {
            assert_eq!(u64::from(m.atom_bytes()), m.swizzle().span());
        }
    }

    #[test]
    fn parse_and_print() {
        for m in SwizzleMode::ALL {
            assert_eq!(m.to_string().parse::<SwizzleMode>(), Ok(m));
        }
        assert_eq!("128b".parse::<SwizzleMode>(), Ok(SwizzleMode::B128));
        assert!("16B".parse::<SwizzleMode>().is_err());
    }

    #[test]
    fn offsets_follow_the_128b_pattern() {
        // Row r of a 128-byte-row atom has its chunk c at chunk c ^ (r % 8).
        for r in 0..16u64 {
            for c in 0..8u64 {
                let off = SwizzleMode::B128.offset_2d(r, c * 8, 2, 128).unwrap();
                assert_eq!(off, r * 128 + ((c ^ (r % 8)) * 16));
            }
        }
    }

    #[test]
    fn offset_errors() {
        let m = SwizzleMode::B64;
        assert_eq!(
            m.offset_2d(0, 0, 0, 64),
            Err(SwizzleOffsetError::ZeroElement)
        );
        assert_eq!(
            m.offset_2d(0, 0, 2, 40),
            Err(SwizzleOffsetError::PitchNotChunkAligned { pitch: 40 })
        );
        assert_eq!(
            m.offset_2d(0, 32, 2, 64),
            Err(SwizzleOffsetError::ColumnOutOfRow {
                col: 32,
                elem_bytes: 2,
                pitch: 64
            })
        );
        assert_eq!(
            m.offset_2d(u64::MAX, 0, 2, 64),
            Err(SwizzleOffsetError::Overflow { row: u64::MAX })
        );
    }

    #[test]
    fn widest_dividing() {
        assert_eq!(SwizzleMode::widest_dividing(256), Some(SwizzleMode::B128));
        assert_eq!(SwizzleMode::widest_dividing(96), Some(SwizzleMode::B32));
        assert_eq!(SwizzleMode::widest_dividing(48), Some(SwizzleMode::None));
        assert_eq!(SwizzleMode::widest_dividing(8), None);
    }
}
