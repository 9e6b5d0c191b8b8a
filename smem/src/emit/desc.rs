//! Shared-memory matrix descriptors from a run-time address: a constant part ORed with the
//! encoded address.

use ptx_isa::{FunctionBuilder, Reg, Result, ty};

use super::host_error;
use super::lower::lower_u32_to_u64;
use crate::desc::sm90::WgmmaDesc;
use crate::desc::sm100::UmmaDesc;

/// Writes the wgmma matrix descriptor of `desc` with its start address taken from `smem_addr`
/// (a `.shared::cta` address in a 32-bit register) and returns the 64-bit register holding it:
/// `and.b32 0x3FFFF`, `shr.u32 4`, `cvt.u64.u32`, `or.b64 constant` (the address program of
/// [`WgmmaDesc::address_program`]; field layout PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor
/// Format").
///
/// `desc.start_addr` is ignored. Post-condition: the result equals
/// `desc.with_start(addr).encode()` for every 16-byte-aligned `addr` below 2^18; other addresses
/// are masked as `matrix-descriptor-encode` masks them. Errors: `desc`'s constant part does not
/// encode (LBO/SBO misaligned or too large, base offset out of range).
pub fn emit_wgmma_desc(
    k: &mut FunctionBuilder,
    desc: &WgmmaDesc,
    smem_addr: Reg<ty::U32>,
) -> Result<Reg<ty::U64>> {
    let p = desc
        .address_program()
        .map_err(|e| host_error(k, "emit_wgmma_desc", e))?;
    k.comment(&format!(
        "wgmma descriptor: LBO {}, SBO {}, base offset {}, swizzle {}",
        desc.lbo, desc.sbo, desc.base_offset, desc.swizzle
    ));
    lower_u32_to_u64(k, &p, smem_addr)
}

/// Writes the tcgen05 shared-memory descriptor of `desc` with its start address taken from
/// `smem_addr`; as [`emit_wgmma_desc`] with the sm_100 layout (PTX ISA 9.7.16.4.1 "Shared Memory
/// Descriptor", Table 40): the constant includes the version bit 46 and the 3-bit swizzle code.
///
/// Post-condition: the result equals `desc.with_start(addr).encode()` for every 16-byte-aligned
/// `addr` below 2^18.
pub fn emit_umma_desc(
    k: &mut FunctionBuilder,
    desc: &UmmaDesc,
    smem_addr: Reg<ty::U32>,
) -> Result<Reg<ty::U64>> {
    let p = desc
        .address_program()
        .map_err(|e| host_error(k, "emit_umma_desc", e))?;
    k.comment(&format!(
        "tcgen05 smem descriptor: LBO {}, SBO {}, base offset {}, swizzle {:?}, LBO mode {:?}",
        desc.lbo, desc.sbo, desc.base_offset, desc.swizzle, desc.lbo_mode
    ));
    lower_u32_to_u64(k, &p, smem_addr)
}
