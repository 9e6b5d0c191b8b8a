//! Shared-memory matrix descriptors from a run-time address: a constant part ORed with the
//! encoded address.

use ptx_isa::{FunctionBuilder, Reg, Result, ty};

use super::host_error;
use super::lower::lower_u32_to_u64;
use crate::desc::MatrixDesc;

/// Writes the matrix descriptor `desc` (wgmma's or tcgen05's) with its start address taken from
/// `smem_addr` (a `.shared::cta` address in a 32-bit register) and returns the 64-bit register
/// holding it: a comment with its constant fields, then `and.b32 0x3FFFF`, `shr.u32 4`,
/// `cvt.u64.u32`, `or.b64 constant` (its [`MatrixDesc::completion`]; field layouts PTX ISA
/// 9.7.15.5.1.2.2 "Matrix Descriptor Format" and 9.7.16.4.1 "Shared Memory Descriptor", Table
/// 40, whose constant includes the version bit 46 and the 3-bit swizzle code).
///
/// `desc.start_addr` is ignored. Post-condition: the result equals
/// `desc.with_start(addr).encode()` for every 16-byte-aligned `addr` below 2^18; other addresses
/// are masked as `matrix-descriptor-encode` masks them. Errors: `desc`'s constant part does not
/// encode (LBO/SBO misaligned or too large, base offset out of range).
pub fn emit_desc(
    k: &mut FunctionBuilder,
    desc: &impl MatrixDesc,
    smem_addr: Reg<ty::U32>,
) -> Result<Reg<ty::U64>> {
    let p = desc
        .completion()
        .map_err(|e| host_error(k, "emit_desc", e))?;
    k.comment(&desc.summary());
    lower_u32_to_u64(k, &p, smem_addr)
}
