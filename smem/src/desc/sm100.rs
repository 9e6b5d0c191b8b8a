//! The sm_100a tcgen05 shared-memory descriptor (PTX ISA 9.7.16.4.1 "Shared Memory Descriptor",
//! Table 40).
//!
//! | bits  | field (PTX ISA 9.7.16.4.1, Table 40)                                   |
//! |-------|------------------------------------------------------------------------|
//! | 0-13  | matrix-descriptor-encode(matrix start address)                         |
//! | 16-29 | matrix-descriptor-encode(LBO, relative offset or absolute address)     |
//! | 32-45 | matrix-descriptor-encode(SBO)                                          |
//! | 46-48 | fixed constant `0b001` (the "version")                                 |
//! | 49-51 | matrix base offset                                                     |
//! | 52    | leading-dimension stride mode: 0 relative byte offset, 1 absolute address |
//! | 53-60 | fixed zero                                                             |
//! | 61-63 | swizzle: 0 none, 1 128B with 32B atomic, 2 128B, 4 64B, 6 32B (3, 5, 7 invalid) |
//!
//! The swizzle codes differ from the sm_90 ones, and take three bits instead of two.

use crate::alu::AluProgram;
use crate::desc::{
    DescError, DescField, address_program, check_base_offset, decode_common, encode_common,
    encode_field, start_address_methods,
};
use crate::swizzle::SwizzleMode;

/// Bits 14-15, 30-31 and 53-60: reserved or fixed zero.
const RESERVED: u64 = (0b11 << 14) | (0b11 << 30) | (0xFF << 53);
/// Bits 46-48 hold the fixed value `0b001`.
const VERSION: u64 = 1 << 46;

/// The tcgen05 swizzle field (bits 61-63).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UmmaSwizzle {
    /// 0: no swizzle (interleave).
    None,
    /// 1: 128-byte swizzle with 32-byte atomicity (`Swizzle<2,5,2>` in CuTe terms).
    B128Atom32,
    /// 2: 128-byte swizzle.
    B128,
    /// 4: 64-byte swizzle.
    B64,
    /// 6: 32-byte swizzle.
    B32,
}

impl UmmaSwizzle {
    /// The 3-bit code (PTX ISA 9.7.16.4.1, Table 40).
    pub const fn code(self) -> u64 {
        match self {
            UmmaSwizzle::None => 0,
            UmmaSwizzle::B128Atom32 => 1,
            UmmaSwizzle::B128 => 2,
            UmmaSwizzle::B64 => 4,
            UmmaSwizzle::B32 => 6,
        }
    }

    /// The mode for a code; 3, 5 and 7 are invalid.
    pub const fn from_code(code: u64) -> Result<UmmaSwizzle, DescError> {
        match code {
            0 => Ok(UmmaSwizzle::None),
            1 => Ok(UmmaSwizzle::B128Atom32),
            2 => Ok(UmmaSwizzle::B128),
            4 => Ok(UmmaSwizzle::B64),
            6 => Ok(UmmaSwizzle::B32),
            c => Err(DescError::BadSwizzleCode(c)),
        }
    }

    /// The TMA/byte mode with the same pattern, if any (`B128Atom32` has none of the four).
    pub const fn mode(self) -> Option<SwizzleMode> {
        match self {
            UmmaSwizzle::None => Some(SwizzleMode::None),
            UmmaSwizzle::B128Atom32 => None,
            UmmaSwizzle::B128 => Some(SwizzleMode::B128),
            UmmaSwizzle::B64 => Some(SwizzleMode::B64),
            UmmaSwizzle::B32 => Some(SwizzleMode::B32),
        }
    }
}

impl From<SwizzleMode> for UmmaSwizzle {
    fn from(mode: SwizzleMode) -> UmmaSwizzle {
        match mode {
            SwizzleMode::None => UmmaSwizzle::None,
            SwizzleMode::B32 => UmmaSwizzle::B32,
            SwizzleMode::B64 => UmmaSwizzle::B64,
            SwizzleMode::B128 => UmmaSwizzle::B128,
        }
    }
}

/// How bits 16-29 are read (bit 52).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LboMode {
    /// 0: LBO is a byte offset relative to the start address.
    Relative,
    /// 1: LBO is an absolute byte address (supported on sm_103a, PTX ISA 9.7.16.4.1.1).
    Absolute,
}

/// The tcgen05 shared-memory descriptor as typed fields, in bytes.
///
/// ```
/// use smem::desc::sm100::{LboMode, UmmaDesc, UmmaSwizzle};
/// let d = UmmaDesc {
///     start_addr: 0x400, lbo: 16, sbo: 1024, base_offset: 0,
///     lbo_mode: LboMode::Relative, swizzle: UmmaSwizzle::B128,
/// };
/// // Version bit 46 set, swizzle code 2 at bits 61-63.
/// assert_eq!(d.encode(), Ok(0x4000_4040_0001_0040));
/// assert_eq!(UmmaDesc::decode(0x4000_4040_0001_0040), Ok(d));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UmmaDesc {
    /// Shared-memory start address in bytes; 16-byte aligned, below 2^18.
    pub start_addr: u32,
    /// Leading-dimension byte offset, or absolute address with [`LboMode::Absolute`].
    pub lbo: u32,
    /// Stride-dimension byte offset.
    pub sbo: u32,
    /// Matrix base offset, 0-7.
    pub base_offset: u8,
    /// How `lbo` is read.
    pub lbo_mode: LboMode,
    /// The swizzle mode.
    pub swizzle: UmmaSwizzle,
}

impl UmmaDesc {
    /// A descriptor at start address 0 (set it with `with_start`, or let
    /// `smem::emit::emit_desc` or a register's address in at run time), `lbo` relative (PTX ISA
    /// 9.7.16.4.1), base offset 0.
    pub const fn relative(lbo: u32, sbo: u32, swizzle: UmmaSwizzle) -> UmmaDesc {
        UmmaDesc {
            start_addr: 0,
            lbo,
            sbo,
            base_offset: 0,
            lbo_mode: LboMode::Relative,
            swizzle,
        }
    }

    /// The descriptor without its start address (version bit included).
    pub fn constant_part(&self) -> Result<u64, DescError> {
        check_base_offset(self.base_offset, self.swizzle != UmmaSwizzle::None)?;
        let mode = match self.lbo_mode {
            LboMode::Relative => 0,
            LboMode::Absolute => 1u64 << 52,
        };
        Ok(encode_common(self.lbo, self.sbo, self.base_offset)?
            | VERSION
            | mode
            | (self.swizzle.code() << 61))
    }

    /// The typed fields of a 64-bit descriptor; checks the version, the fixed-zero bits and the
    /// swizzle code.
    pub fn decode(desc: u64) -> Result<UmmaDesc, DescError> {
        let (start_addr, lbo, sbo, base_offset) = decode_common(desc, RESERVED)?;
        let version = (desc >> 46) & 7;
        if version != 1 {
            return Err(DescError::BadVersion(version));
        }
        let d = UmmaDesc {
            start_addr,
            lbo,
            sbo,
            base_offset,
            lbo_mode: if desc & (1 << 52) != 0 {
                LboMode::Absolute
            } else {
                LboMode::Relative
            },
            swizzle: UmmaSwizzle::from_code(desc >> 61)?,
        };
        check_base_offset(d.base_offset, d.swizzle != UmmaSwizzle::None)?;
        Ok(d)
    }
}

start_address_methods!(UmmaDesc, |d| {
    format!(
        "tcgen05 smem descriptor: LBO {}, SBO {}, base offset {}, swizzle {:?}, LBO mode {:?}",
        d.lbo, d.sbo, d.base_offset, d.swizzle, d.lbo_mode
    )
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_codes_match_table_40() {
        let all = [
            UmmaSwizzle::None,
            UmmaSwizzle::B128Atom32,
            UmmaSwizzle::B128,
            UmmaSwizzle::B64,
            UmmaSwizzle::B32,
        ];
        let codes: Vec<u64> = all.iter().map(|s| s.code()).collect();
        assert_eq!(codes, [0, 1, 2, 4, 6]);
        for s in all {
            assert_eq!(UmmaSwizzle::from_code(s.code()), Ok(s));
        }
        for bad in [3, 5, 7] {
            assert_eq!(
                UmmaSwizzle::from_code(bad),
                Err(DescError::BadSwizzleCode(bad))
            );
        }
        for m in SwizzleMode::ALL {
            assert_eq!(UmmaSwizzle::from(m).mode(), Some(m));
        }
    }

    #[test]
    fn version_and_mode_bits() {
        let d = UmmaDesc {
            start_addr: 0,
            lbo: 0,
            sbo: 0,
            base_offset: 0,
            lbo_mode: LboMode::Absolute,
            swizzle: UmmaSwizzle::None,
        };
        assert_eq!(d.encode(), Ok((1 << 46) | (1 << 52)));
        assert_eq!(UmmaDesc::decode(0), Err(DescError::BadVersion(0)));
        assert_eq!(UmmaDesc::decode(3 << 46), Err(DescError::BadVersion(3)));
        let bad = (1 << 46) | (1 << 55);
        assert_eq!(
            UmmaDesc::decode(bad),
            Err(DescError::ReservedBits {
                desc: bad,
                bits: 1 << 55
            })
        );
        assert_eq!(
            UmmaDesc::decode((1 << 46) | (5 << 61)),
            Err(DescError::BadSwizzleCode(5))
        );
    }

    #[test]
    fn sm90_and_sm100_differ_only_where_the_manual_says() {
        // Same K-major SW128 operand: sm_90 swizzle 1 at 62-63, sm_100 code 2 at 61-63 + version.
        use crate::desc::sm90::WgmmaDesc;
        let w = WgmmaDesc {
            start_addr: 0x800,
            lbo: 16,
            sbo: 1024,
            base_offset: 0,
            swizzle: SwizzleMode::B128,
        };
        let u = UmmaDesc {
            start_addr: 0x800,
            lbo: 16,
            sbo: 1024,
            base_offset: 0,
            lbo_mode: LboMode::Relative,
            swizzle: SwizzleMode::B128.into(),
        };
        let (w, u) = (w.encode().unwrap(), u.encode().unwrap());
        assert_eq!(w & ((1 << 46) - 1), u & ((1 << 46) - 1));
        assert_eq!(w >> 46, 1 << 16);
        assert_eq!(u >> 46, (2 << 15) | 1);
    }
}
