//! The sm_90a wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor
//! Format").
//!
//! | bits  | field (PTX ISA 9.7.15.5.1.2.2)                                      |
//! |-------|---------------------------------------------------------------------|
//! | 0-13  | matrix-descriptor-encode(matrix start address)                      |
//! | 16-29 | matrix-descriptor-encode(leading dimension byte offset, LBO)        |
//! | 32-45 | matrix-descriptor-encode(stride dimension byte offset, SBO)         |
//! | 49-51 | matrix base offset (swizzled modes only)                            |
//! | 62-63 | swizzle: 0 none, 1 = 128B, 2 = 64B, 3 = 32B                         |
//!
//! All other bits are zero.

use crate::alu::AluProgram;
use crate::desc::{
    DescError, DescField, address_program, check_base_offset, decode_common, encode_common,
    encode_field, start_address_methods,
};
use crate::swizzle::SwizzleMode;

/// Bits 14-15, 30-31, 46-48 and 52-61: not fields of the sm_90 descriptor.
const RESERVED: u64 = (0b11 << 14) | (0b11 << 30) | (0b111 << 46) | (0x3FF << 52);

/// The wgmma matrix descriptor as typed fields, in bytes.
///
/// ```
/// use smem::desc::sm90::WgmmaDesc;
/// use smem::SwizzleMode;
/// // K-major, 128B-swizzled bf16 tile at shared address 0x400: LBO 16 (unused), SBO 1024.
/// let d = WgmmaDesc { start_addr: 0x400, lbo: 16, sbo: 1024, base_offset: 0, swizzle: SwizzleMode::B128 };
/// assert_eq!(d.encode(), Ok(0x4000_0040_0001_0040));
/// assert_eq!(WgmmaDesc::decode(0x4000_0040_0001_0040), Ok(d));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WgmmaDesc {
    /// Shared-memory (`.shared::cta`) start address in bytes; 16-byte aligned, below 2^18.
    pub start_addr: u32,
    /// Leading-dimension byte offset (LBO) in bytes. For K-major operands: the distance between
    /// K-adjacent core matrices (no-swizzle only; ignored, conventionally 16, when swizzled). For
    /// MN-major: the distance between MN-adjacent swizzle atoms (swizzled) or K-adjacent groups
    /// of 8 rows (no swizzle). PTX ISA 9.7.15.5.1.2.1 and CuTe `make_gmma_desc`.
    pub lbo: u32,
    /// Stride-dimension byte offset (SBO) in bytes: the distance between 8-row groups along the
    /// strided dimension (1024 for 128B-swizzled K-major atoms laid end to end).
    pub sbo: u32,
    /// Matrix base offset, 0-7: `(pattern start >> 7) & 7` when the swizzle pattern does not
    /// start at its natural boundary ([`crate::desc::base_offset_for`]).
    pub base_offset: u8,
    /// The swizzle mode.
    pub swizzle: SwizzleMode,
}

impl WgmmaDesc {
    /// The 2-bit swizzle code at bits 62-63: none 0, 128B 1, 64B 2, 32B 3 (PTX ISA
    /// 9.7.15.5.1.2.2).
    pub const fn swizzle_code(mode: SwizzleMode) -> u64 {
        match mode {
            SwizzleMode::None => 0,
            SwizzleMode::B128 => 1,
            SwizzleMode::B64 => 2,
            SwizzleMode::B32 => 3,
        }
    }

    /// The inverse of [`WgmmaDesc::swizzle_code`]; every 2-bit code is defined.
    pub const fn swizzle_from_code(code: u64) -> SwizzleMode {
        match code & 3 {
            0 => SwizzleMode::None,
            1 => SwizzleMode::B128,
            2 => SwizzleMode::B64,
            _ => SwizzleMode::B32,
        }
    }

    /// The descriptor without its start address: everything the kernel can fold into a
    /// constant; [`WgmmaDesc::address_program`] ORs the run-time address in.
    pub fn constant_part(&self) -> Result<u64, DescError> {
        check_base_offset(self.base_offset, self.swizzle != SwizzleMode::None)?;
        Ok(encode_common(self.lbo, self.sbo, self.base_offset)?
            | (WgmmaDesc::swizzle_code(self.swizzle) << 62))
    }

    /// The typed fields of a 64-bit descriptor; errors if a bit outside the fields is set or a
    /// base offset is given without swizzle.
    pub fn decode(desc: u64) -> Result<WgmmaDesc, DescError> {
        let (start_addr, lbo, sbo, base_offset) = decode_common(desc, RESERVED)?;
        let d = WgmmaDesc {
            start_addr,
            lbo,
            sbo,
            base_offset,
            swizzle: WgmmaDesc::swizzle_from_code(desc >> 62),
        };
        check_base_offset(d.base_offset, d.swizzle != SwizzleMode::None)?;
        Ok(d)
    }
}

start_address_methods!(WgmmaDesc, |d| {
    format!(
        "wgmma descriptor: LBO {}, SBO {}, base offset {}, swizzle {}",
        d.lbo, d.sbo, d.base_offset, d.swizzle
    )
});

#[cfg(test)]
mod tests {
    use super::*;

    fn k_major_sw128(addr: u32) -> WgmmaDesc {
        WgmmaDesc {
            start_addr: addr,
            lbo: 16,
            sbo: 1024,
            base_offset: 0,
            swizzle: SwizzleMode::B128,
        }
    }

    #[test]
    fn fast_cu_constant() {
        // fast.cu / ThunderKittens `make_smem_desc` for a 128B-swizzled K-major bf16 tile:
        // encode(16) << 16 | encode(1024) << 32 | 1 << 62.
        assert_eq!(k_major_sw128(0).constant_part(), Ok(0x4000_0040_0001_0000));
        assert_eq!(k_major_sw128(0).encode(), Ok(0x4000_0040_0001_0000));
    }

    #[test]
    fn swizzle_codes() {
        let codes: Vec<u64> = SwizzleMode::ALL
            .iter()
            .map(|&m| WgmmaDesc::swizzle_code(m))
            .collect();
        assert_eq!(codes, [0, 3, 2, 1]);
        for m in SwizzleMode::ALL {
            assert_eq!(WgmmaDesc::swizzle_from_code(WgmmaDesc::swizzle_code(m)), m);
        }
    }

    #[test]
    fn range_errors_name_the_field() {
        let mut d = k_major_sw128(0x40000);
        assert!(matches!(
            d.encode(),
            Err(DescError::OutOfRange {
                field: DescField::StartAddress,
                ..
            })
        ));
        d = k_major_sw128(0x400);
        d.sbo = 1000;
        assert_eq!(
            d.encode(),
            Err(DescError::Misaligned {
                field: DescField::StrideByteOffset,
                value: 1000
            })
        );
        d = k_major_sw128(0);
        d.base_offset = 8;
        assert_eq!(d.encode(), Err(DescError::BaseOffsetOutOfRange(8)));
        d = k_major_sw128(0);
        d.swizzle = SwizzleMode::None;
        d.base_offset = 1;
        assert_eq!(d.encode(), Err(DescError::BaseOffsetWithoutSwizzle(1)));
    }

    #[test]
    fn reserved_bits_are_rejected() {
        for bit in [14, 15, 30, 31, 46, 47, 48, 52, 61] {
            let bad = 0x4000_0040_0001_0000u64 | (1 << bit);
            assert_eq!(
                WgmmaDesc::decode(bad),
                Err(DescError::ReservedBits {
                    desc: bad,
                    bits: 1 << bit
                })
            );
        }
    }

    #[test]
    fn address_program_completes_the_descriptor() {
        let p = k_major_sw128(0).address_program().unwrap();
        for addr in (0..0x40000u32).step_by(16 * 97) {
            assert_eq!(
                p.eval(u64::from(addr)),
                k_major_sw128(addr).encode().unwrap()
            );
        }
        assert_eq!(p.steps().len(), 4);
    }
}
