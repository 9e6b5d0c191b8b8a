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
use ptx_isa::{Dim, FunctionBuilder, Reg, RegRef, Result, SpecialReg, TargetSet, ty};

use super::common::{element_bits, pair, register_side, scope, storage};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The atom for a register tile, and the registers per issue.
pub fn atom_for(regs: &TileRef) -> std::result::Result<(LdShape, i64), Rejection> {
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let tv = regs
        .fragment
        .as_ref()
        .ok_or_else(|| frag("the register tile has no thread-value layout".into()))?;
    match_warpgroup_atom(tv).map_err(|e| frag(e.to_string()))
}

/// `tcgen05.ld`/`st` of the atom `shape` x `num`, once per 32-lane slab or twice for a 16-lane
/// shape (the second issue 16 lanes down, with the registers after the first's).
struct TmemLdSt {
    load: bool,
    shape: LdShape,
    num: i64,
    regs: Vec<RegRef>,
    taddr: Reg<ty::U32>,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let (regs, tmem, load) = register_side(d, s);
    element_bits(
        (regs, tmem),
        32,
        "this variant moves 32-bit cells (no .pack::16b)",
    )?;
    let (shape, num) = atom_for(regs)?;
    let Base::Registers(r) = &regs.base else {
        return Err(Rejection::operand(Aspect::Registers, "no registers"));
    };
    let issues = if shape.lanes() == 16 { 2 } else { 1 };
    let want = (shape.registers() * num * issues) as usize;
    if r.len() != want || r.iter().any(|x| x.class.decl_type().bits() != 32) {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!(
                "{} registers; {}.x{num} takes {want} 32-bit registers per thread",
                r.len(),
                shape.ptx()
            ),
        ));
    }
    if tmem.shape != [128, regs.shape[1]] {
        return Err(Rejection::operand(
            Aspect::Shape,
            format!(
                "the tensor-memory tile is {:?}; the register tile covers 128 x {}",
                tmem.shape, regs.shape[1]
            ),
        ));
    }
    let Base::Tmem(taddr) = tmem.base else {
        return Err(Rejection::operand(
            Aspect::Base,
            "registers and a tensor-memory address expected",
        ));
    };
    Ok(Box::new(TmemLdSt {
        load,
        shape,
        num,
        regs: r.clone(),
        taddr,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.tcgen05_ldst",
    targets: TargetSet::Sm100a,
    priority: 10,
    views: false,
    predicates: &[storage!(Tmem -> Local, Local -> Tmem), scope!(Warpgroup)],
    planner: Planner { name: "atom", plan },
};

fn tmem_shape(s: LdShape) -> TmemShape {
    match s {
        LdShape::B32x32 => TmemShape::S32x32b,
        LdShape::B16x64 => TmemShape::S16x64b,
        LdShape::B16x128 => TmemShape::S16x128b,
        LdShape::B16x256 => TmemShape::S16x256b,
    }
}

impl Plan for TmemLdSt {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let (shape, num) = (self.shape, self.num);
        // Lane base of this warp's slab: (tid % 128) & ~31, in the address's lane field (bits
        // 16-31).
        let (tid, lane, base) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.mov_sreg(tid, SpecialReg::Tid(Dim::X))?;
        k.and(lane, tid, 96u32)?;
        k.shl(lane, lane, 16u32)?;
        k.add(base, self.taddr, lane)?;
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
            let part = &self.regs[i * per_issue..(i + 1) * per_issue];
            if self.load {
                k.tcgen05_ld(tmem_shape(shape), num as u32, false, part, at, None)?;
            } else {
                k.tcgen05_st(tmem_shape(shape), num as u32, false, at, None, part)?;
            }
        }
        Ok(())
    }
}
