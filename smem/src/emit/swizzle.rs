//! The swizzle and the swizzled 2-D and tile offsets on registers.

use layouts::Swizzle;
use ptx_isa::{FunctionBuilder, Reg, Result, ty};

use super::host_error;
use super::lower::lower_u32;
use crate::alu::Width;
use crate::swizzle::{SwizzleMode, swizzle_program};
use crate::tile::CanonicalTile;

/// Writes `offset ^ ((offset & yyy_mask) >> S)` on a 32-bit byte offset and returns the
/// register holding the swizzled offset: `and.b32`, `shr.u32`, `xor.b32` after a comment naming
/// the swizzle (PTX ISA 9.7.8; the pattern is PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix
/// Layout" for the byte modes).
///
/// Takes a [`SwizzleMode`] or any [`Swizzle`]. Post-condition: the result holds
/// `sw.apply(offset)` ([`Swizzle::apply`]) for every 32-bit offset. The identity
/// ([`SwizzleMode::None`]) writes nothing and returns `offset` itself.
pub fn emit_swizzle(
    k: &mut FunctionBuilder,
    sw: impl Into<Swizzle>,
    offset: Reg<ty::U32>,
) -> Result<Reg<ty::U32>> {
    let sw = sw.into();
    let p = swizzle_program(sw, Width::U32).map_err(|e| host_error(k, "emit_swizzle", e))?;
    if !sw.is_identity() {
        k.comment(&format!(
            "swizzle {sw}: x ^ ((x & {:#x}) >> {})",
            sw.yyy_mask(),
            sw.shift()
        ));
    }
    lower_u32(k, &p, &[offset])
}

/// Writes the byte offset of element `(row, col)` of a tile with `elem_bytes`-byte elements and
/// rows `pitch` bytes apart, swizzled by `mode`, from registers holding `row` and `col`; returns
/// the register holding it. The program is [`SwizzleMode::offset_2d_program`]: a `shl` (power of
/// two) or `mul.lo.u32` per product, an `add.u32`, then the swizzle (PTX ISA 9.7.1, 9.7.8).
///
/// Post-condition: equals the host [`SwizzleMode::offset_2d`]`(row, col, elem_bytes, pitch)`
/// wherever that is `Ok` and the unswizzled offset fits in 32 bits (shared memory is far
/// smaller). Errors: those of `offset_2d_program` (zero element, pitch not a multiple of 16,
/// element wider than the row, values over 32 bits).
pub fn emit_offset_2d(
    k: &mut FunctionBuilder,
    mode: SwizzleMode,
    elem_bytes: u32,
    pitch: u32,
    row: Reg<ty::U32>,
    col: Reg<ty::U32>,
) -> Result<Reg<ty::U32>> {
    let p = mode
        .offset_2d_program(u64::from(elem_bytes), u64::from(pitch), Width::U32)
        .map_err(|e| host_error(k, "emit_offset_2d", e))?;
    k.comment(&format!(
        "offset_2d: swizzle {mode} of row * {pitch} + col * {elem_bytes}"
    ));
    lower_u32(k, &p, &[row, col])
}

/// Writes the byte offset of element `(mn, k)` of a canonical tensor-core tile, swizzle
/// applied, from registers holding `mn` and `k`; returns the register holding it. The program
/// is [`CanonicalTile::offset_program`]: `shr`/`and` to split atoms, rows and columns, `shl` or
/// `mul.lo.u32` by constants, `add.u32`, then the swizzle (PTX ISA 9.7.1, 9.7.8; the layout is
/// PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout").
///
/// Post-condition: equals the host [`CanonicalTile::offset`]`(mn, k)` for every element inside
/// the tile (valid for a tile based at [`CanonicalTile::align`]).
pub fn emit_tile_offset(
    k: &mut FunctionBuilder,
    tile: &CanonicalTile,
    mn: Reg<ty::U32>,
    kk: Reg<ty::U32>,
) -> Result<Reg<ty::U32>> {
    let p = tile
        .offset_program(Width::U32)
        .map_err(|e| host_error(k, "emit_tile_offset", e))?;
    let shape = tile.shape();
    k.comment(&format!(
        "tile offset: {} {}x{} {}-major, swizzle {}",
        tile.dtype().name(),
        shape.mn,
        shape.k,
        tile.major(),
        tile.swizzle()
    ));
    lower_u32(k, &p, &[mn, kk])
}
