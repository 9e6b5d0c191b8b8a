//! Tensor-core descriptors: the sm_90 wgmma shared-memory matrix descriptor ([`sm90`]), the
//! sm_100 tcgen05 shared-memory descriptor ([`sm100`]) and the tcgen05.mma instruction
//! descriptor ([`idesc`]); plus the split of a shared-memory descriptor into a constant and a
//! run-time address part.
//!
//! Both shared-memory descriptors store the start address, LBO and SBO with
//! `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4` in 14-bit fields at bits 0-13, 16-29 and
//! 32-45 (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format", 9.7.16.4.1 "Shared Memory
//! Descriptor"). The typed structs here hold byte values and refuse, rather than mask, a value
//! that is not 16-byte aligned or does not fit.

pub mod idesc;
pub mod sm100;
pub mod sm90;

use crate::alu::{AluError, AluProgram, Width};

/// Which 14-bit address field of a shared-memory descriptor a value is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DescField {
    /// Matrix start address, bits 0-13.
    StartAddress,
    /// Leading-dimension byte offset (LBO), bits 16-29.
    LeadingByteOffset,
    /// Stride-dimension byte offset (SBO), bits 32-45.
    StrideByteOffset,
}

impl DescField {
    /// The field's least significant bit in the descriptor.
    pub const fn shift(self) -> u32 {
        match self {
            DescField::StartAddress => 0,
            DescField::LeadingByteOffset => 16,
            DescField::StrideByteOffset => 32,
        }
    }
}

/// Why a shared-memory descriptor could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescError {
    /// Start address, LBO and SBO must be 16-byte aligned (the encoding drops 4 bits).
    #[error("{field:?} {value:#x} is not a multiple of 16 bytes")]
    Misaligned {
        /// The field.
        field: DescField,
        /// The byte value.
        value: u64,
    },
    /// The value does not fit the 14-bit field (bytes `0..=0x3FFF0`).
    #[error("{field:?} {value:#x} does not fit the 14-bit field (at most {max:#x} bytes)")]
    OutOfRange {
        /// The field.
        field: DescField,
        /// The byte value.
        value: u64,
        /// The largest encodable value in bytes.
        max: u64,
    },
    /// The base offset is a 3-bit field.
    #[error("base offset {0} does not fit in 3 bits")]
    BaseOffsetOutOfRange(u8),
    /// The base offset only applies to swizzled layouts (PTX ISA 9.7.15.5.1.2.2).
    #[error("base offset {0} is set but the layout is not swizzled")]
    BaseOffsetWithoutSwizzle(u8),
    /// A reserved or fixed-zero bit is set in a descriptor being decoded.
    #[error("descriptor {desc:#018x} has reserved bits {bits:#018x} set")]
    ReservedBits {
        /// The descriptor.
        desc: u64,
        /// The offending bits.
        bits: u64,
    },
    /// The tcgen05 descriptor's fixed version field (bits 46-48) is not `0b001`.
    #[error("tcgen05 descriptor version bits 46-48 are {0:#b}, expected 0b001")]
    BadVersion(u64),
    /// The swizzle field holds a value the format does not define.
    #[error("swizzle code {0} is not defined")]
    BadSwizzleCode(u64),
    /// Building the address program failed (a bug in this crate, reported rather than panicking).
    #[error(transparent)]
    Alu(#[from] AluError),
}

/// The largest byte value a 14-bit descriptor address field holds.
pub const MAX_FIELD_BYTES: u64 = 0x3FFF << 4;

/// `matrix-descriptor-encode(bytes)` placed in its field; errors instead of masking.
pub fn encode_field(field: DescField, bytes: u64) -> Result<u64, DescError> {
    if bytes % 16 != 0 {
        return Err(DescError::Misaligned {
            field,
            value: bytes,
        });
    }
    if bytes > MAX_FIELD_BYTES {
        return Err(DescError::OutOfRange {
            field,
            value: bytes,
            max: MAX_FIELD_BYTES,
        });
    }
    Ok((bytes >> 4) << field.shift())
}

/// The byte value stored in a field of `desc`.
pub fn decode_field(field: DescField, desc: u64) -> u64 {
    ((desc >> field.shift()) & 0x3FFF) << 4
}

/// The ALU program that completes a descriptor from a 32-bit shared address in a register:
/// `constant | ((addr & 0x3FFFF) >> 4)` (`and.b32`, `shr.u32`, `cvt.u64.u32`, `or.b64`).
///
/// `constant` is the descriptor with a zero start-address field ([`sm90::WgmmaDesc::constant_part`],
/// [`sm100::UmmaDesc::constant_part`]); a non-zero start field would be ORed with the address.
///
/// ```
/// use smem::desc::address_program;
/// let p = address_program(0x4000_0040_0001_0000).unwrap();
/// assert_eq!(p.eval(0x400), 0x4000_0040_0001_0040);
/// ```
pub fn address_program(constant: u64) -> Result<AluProgram, AluError> {
    let mut p = AluProgram::new(Width::U32);
    let addr = p.input();
    let masked = p.and(addr, 0x3FFFF)?;
    let encoded = p.shr(masked, 4)?;
    let wide = p.zero_extend(encoded)?;
    p.or(wide, constant)?;
    Ok(p)
}

/// The base offset's rules in both matrix descriptors: at most 7 (3 bits, 49-51), and 0 for an
/// unswizzled operand (PTX ISA 9.7.15.5.1.2.2, 9.7.16.4.1).
pub(crate) fn check_base_offset(base_offset: u8, swizzled: bool) -> Result<(), DescError> {
    if base_offset > 7 {
        return Err(DescError::BaseOffsetOutOfRange(base_offset));
    }
    if base_offset != 0 && !swizzled {
        return Err(DescError::BaseOffsetWithoutSwizzle(base_offset));
    }
    Ok(())
}

/// The fields both matrix descriptors share, as they sit in the constant part: LBO and SBO
/// ([`encode_field`]) and the base offset at bits 49-51 ([`check_base_offset`] first). The
/// inverse of [`decode_common`] without the start address.
pub(crate) fn encode_common(lbo: u32, sbo: u32, base_offset: u8) -> Result<u64, DescError> {
    Ok(encode_field(DescField::LeadingByteOffset, u64::from(lbo))?
        | encode_field(DescField::StrideByteOffset, u64::from(sbo))?
        | (u64::from(base_offset) << 49))
}

/// The fields both matrix descriptors share, read from `desc` after checking that no bit of
/// `reserved` is set: `(start_addr, lbo, sbo, base_offset)` in bytes (base offset 0-7, bits
/// 49-51; PTX ISA 9.7.15.5.1.2.2, 9.7.16.4.1).
pub(crate) fn decode_common(desc: u64, reserved: u64) -> Result<(u32, u32, u32, u8), DescError> {
    if desc & reserved != 0 {
        return Err(DescError::ReservedBits {
            desc,
            bits: desc & reserved,
        });
    }
    // decode_field returns at most 0x3FFF0, which fits u32.
    Ok((
        decode_field(DescField::StartAddress, desc) as u32,
        decode_field(DescField::LeadingByteOffset, desc) as u32,
        decode_field(DescField::StrideByteOffset, desc) as u32,
        ((desc >> 49) & 7) as u8,
    ))
}

/// A shared-memory matrix descriptor whose start address is filled in at run time
/// (`smem::emit::emit_desc`): the wgmma one ([`sm90::WgmmaDesc`]) and the tcgen05 one
/// ([`sm100::UmmaDesc`]).
pub trait MatrixDesc {
    /// The ALU program completing this descriptor from a 32-bit shared address:
    /// `address_program` of the type.
    fn completion(&self) -> Result<AluProgram, DescError>;
    /// A one-line summary of its constant fields, for the comment written before its program.
    fn summary(&self) -> String;
}

/// `encode`, `address_program` and `with_start` for a descriptor type with a `constant_part` and
/// a `start_addr` field: the whole descriptor, what completes it at run time, and the same
/// descriptor elsewhere; and its [`MatrixDesc`] impl, with `summary` as the closure given.
macro_rules! start_address_methods {
    ($desc:ident, $summary:expr) => {
        impl $crate::desc::MatrixDesc for $desc {
            fn completion(&self) -> Result<AluProgram, DescError> {
                self.address_program()
            }

            fn summary(&self) -> String {
                let summary: fn(&$desc) -> String = $summary;
                summary(self)
            }
        }

        impl $desc {
            /// The ALU program computing this descriptor from a 32-bit shared address held in a
            /// register: `constant_part | ((addr & 0x3FFFF) >> 4)`. The `start_addr` field is
            /// ignored.
            pub fn address_program(&self) -> Result<AluProgram, DescError> {
                Ok(address_program(self.constant_part()?)?)
            }

            /// The 64-bit descriptor, or the first field that does not fit.
            pub fn encode(&self) -> Result<u64, DescError> {
                Ok(
                    encode_field(DescField::StartAddress, u64::from(self.start_addr))?
                        | self.constant_part()?,
                )
            }

            /// The same descriptor at another start address.
            pub fn with_start(self, start_addr: u32) -> $desc {
                $desc { start_addr, ..self }
            }
        }
    };
}
pub(crate) use start_address_methods;

/// The base offset for a swizzled operand whose repeating pattern starts at `pattern_start`
/// (a shared address): `(pattern_start >> 7) & 7` (PTX ISA 9.7.15.5.1.2.2; 9.7.16.4.1). It is 0
/// when the pattern starts at its natural boundary (1024 / 512 / 256 bytes for 128B / 64B / 32B).
pub const fn base_offset_for(pattern_start: u32) -> u8 {
    ((pattern_start >> 7) & 7) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_refuse_rather_than_mask() {
        assert_eq!(
            encode_field(DescField::StrideByteOffset, 1024),
            Ok(64 << 32)
        );
        assert_eq!(
            encode_field(DescField::StartAddress, 8),
            Err(DescError::Misaligned {
                field: DescField::StartAddress,
                value: 8
            })
        );
        assert_eq!(
            encode_field(DescField::LeadingByteOffset, 0x40000),
            Err(DescError::OutOfRange {
                field: DescField::LeadingByteOffset,
                value: 0x40000,
                max: 0x3FFF0
            })
        );
        assert_eq!(decode_field(DescField::LeadingByteOffset, 1 << 16), 16);
    }

    #[test]
    fn base_offsets() {
        assert_eq!(base_offset_for(1024), 0);
        assert_eq!(base_offset_for(1024 + 384), 3);
    }
}
