//! `copy_async.tcgen05_ldst`: tensor memory ↔ registers at warpgroup scope (PTX ISA 9.7.16.8.3
//! `tcgen05.ld`, 9.7.16.8.4 `tcgen05.st`). One registration for both directions (inferred from
//! the operands); the register tile's thread-value layout picks the widest atom that matches
//! (`.16x256b`, `.16x128b`, `.16x64b`, then `.32x32b` with its `.num`), through the layouts
//! crate's `match_warpgroup_atom`. Warp `w` issues on its lane slab `32w..32w+32`; a 16-lane shape
//! is issued at lane bases `32w` and `32w+16`, the second issue's registers after the first's
//! (the layouts crate's warpgroup view). Completion (`tcgen05.wait::ld/st`) is the caller's.
//! No Blackwell GPU is lent here: this lowering is checked by ptxas for sm_100a and by the
//! register/lane tests, and has not run.

use layouts::fragment::tcgen05::{LdShape, match_warpgroup_atom};
use ptx_isa::builder::TmemShape;
use ptx_isa::{Dim, FunctionBuilder, RegRef, Result, SpecialReg, TargetSet, ty};

use super::common::{expect_copy, pair, scope_in, storages};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

fn regs_side<'a>(d: &'a TileRef, s: &'a TileRef) -> (&'a TileRef, &'a TileRef, bool) {
    if d.storage == Storage::Local {
        (d, s, true)
    } else {
        (s, d, false)
    }
}

/// The atom for a register tile, and the registers per issue.
pub fn atom_for(regs: &TileRef) -> std::result::Result<(LdShape, i64), String> {
    let tv = regs
        .fragment
        .as_ref()
        .ok_or("the register tile has no thread-value layout")?;
    match_warpgroup_atom(tv).map_err(|e| e.to_string())
}

fn check(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    let (regs, tmem, _) = regs_side(d, s);
    if regs.dtype.bits() != 32 || tmem.dtype.bits() != 32 {
        return Err(format!(
            "{} elements: this variant moves 32-bit cells (no .pack::16b)",
            regs.dtype
        ));
    }
    let (shape, num) = atom_for(regs)?;
    let Base::Registers(r) = &regs.base else {
        return Err("no registers".into());
    };
    let issues = if shape.lanes() == 16 { 2 } else { 1 };
    let want = (shape.registers() * num * issues) as usize;
    if r.len() != want || r.iter().any(|x| x.class.decl_type().bits() != 32) {
        return Err(format!(
            "{} registers; {}.x{num} takes {want} 32-bit registers per thread",
            r.len(),
            shape.ptx()
        ));
    }
    if tmem.shape != [128, regs.shape[1]] {
        return Err(format!(
            "the tensor-memory tile is {:?}; the register tile covers 128 x {}",
            tmem.shape, regs.shape[1]
        ));
    }
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.tcgen05_ldst",
    targets: TargetSet::Sm100a,
    priority: 10,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| {
                storages(
                    c,
                    &[
                        (Storage::Local, Storage::Tmem),
                        (Storage::Tmem, Storage::Local),
                    ],
                )
            },
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["warpgroup"]),
        },
        Predicate {
            name: "atom",
            check,
        },
    ],
    lower,
};

fn tmem_shape(s: LdShape) -> TmemShape {
    match s {
        LdShape::B32x32 => TmemShape::S32x32b,
        LdShape::B16x64 => TmemShape::S16x64b,
        LdShape::B16x128 => TmemShape::S16x128b,
        LdShape::B16x256 => TmemShape::S16x256b,
    }
}

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let (regs, tmem, load) = regs_side(d, s);
    let invalid = |m: String| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, m);
    let (shape, num) = atom_for(regs).map_err(invalid)?;
    let (Base::Registers(r), Base::Tmem(taddr)) = (&regs.base, &tmem.base) else {
        return Err(invalid(
            "registers and a tensor-memory address expected".into(),
        ));
    };
    // Lane base of this warp's slab: (tid % 128) & ~31, in the address's lane field (bits 16-31).
    let (tid, lane, base) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.mov_sreg(tid, SpecialReg::Tid(Dim::X))?;
    k.and(lane, tid, 96u32)?;
    k.shl(lane, lane, 16u32)?;
    k.add(base, *taddr, lane)?;
    let per_issue = (shape.registers() * num) as usize;
    let issues = if shape.lanes() == 16 { 2 } else { 1 };
    for i in 0..issues {
        let at = if i == 0 {
            base
        } else {
            let a = k.reg::<ty::U32>();
            k.add(a, base, 16u32 << 16)?;
            a
        };
        let part: Vec<RegRef> = r[i * per_issue..(i + 1) * per_issue].to_vec();
        if load {
            k.tcgen05_ld(tmem_shape(shape), num as u32, false, &part, at, None)?;
        } else {
            k.tcgen05_st(tmem_shape(shape), num as u32, false, at, None, &part)?;
        }
    }
    Ok(())
}
