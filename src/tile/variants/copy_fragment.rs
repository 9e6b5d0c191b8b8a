//! `copy.fragment`: registers ↔ memory, one value at a time, through the register tile's
//! thread-value layout: value `v` of thread `t` is element `(row, col)` of the tile where
//! `row + rows * col = tv(t, v)` (the thread part evaluated at run time, the value part folded).

use ptx_isa::{FunctionBuilder, RegRef, Result, TargetSet, ty};

use super::common::{address, eval_layout, expect_copy, storages, thread_index};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

const PAIRS: &[(Storage, Storage)] = &[
    (Storage::Local, Storage::Global),
    (Storage::Local, Storage::Shared),
    (Storage::Global, Storage::Local),
    (Storage::Shared, Storage::Local),
];

fn shapes(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = super::common::pair(ctx)?;
    let (regs, mem) = if d.storage == Storage::Local {
        (d, s)
    } else {
        (s, d)
    };
    let tv = regs
        .fragment
        .as_ref()
        .ok_or("the register tile has no thread-value layout")?;
    let Base::Registers(r) = &regs.base else {
        return Err("the register tile has no registers".into());
    };
    if r.len() as i64 != tv.values() {
        return Err(format!(
            "{} registers for {} values per thread",
            r.len(),
            tv.values()
        ));
    }
    if tv.threads() != ctx.scope.threads() as i64 {
        return Err(format!(
            "the layout spreads over {} threads, the scope has {}",
            tv.threads(),
            ctx.scope.threads()
        ));
    }
    if mem.shape != regs.shape || mem.layout.is_none() {
        return Err(format!(
            "memory tile {:?} vs register tile {:?}",
            mem.shape, regs.shape
        ));
    }
    if regs.dtype != mem.dtype || !matches!(regs.dtype.bits(), 16 | 32) {
        return Err(format!(
            "{} registers and {} memory: need the same 16- or 32-bit type",
            regs.dtype, mem.dtype
        ));
    }
    if r.iter()
        .any(|x| x.class.decl_type().bits() != regs.dtype.bits())
    {
        return Err("a register's width differs from the element's".into());
    }
    // The lowering splits tv(t, v) into tv(t, 0) + tv(0, v), row by row: check that no row
    // carries between the two parts.
    let rows = tv.rows();
    for t in 0..tv.threads() {
        for v in 0..tv.values() {
            let (Ok(tv0), Ok(t0), Ok(v0)) = (tv.offset(t, v), tv.offset(t, 0), tv.offset(0, v))
            else {
                return Err("the layout does not evaluate".into());
            };
            if tv0 != t0 + v0 || t0 % rows + v0 % rows >= rows {
                return Err(format!(
                    "value {v} of thread {t} does not split into a thread and a value part"
                ));
            }
        }
    }
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.fragment",
    targets: TargetSet::all(),
    priority: 5,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, PAIRS),
        },
        Predicate {
            name: "fragment",
            check: shapes,
        },
    ],
    lower,
};

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let load = d.storage == Storage::Local;
    let (regs_t, mem): (&TileRef, &TileRef) = if load { (d, s) } else { (s, d) };
    let tv = regs_t
        .fragment
        .clone()
        .ok_or_else(|| ptx_isa::Error::new(ptx_isa::ErrorKind::OperandKind, "no fragment"))?;
    let Base::Registers(regs) = &regs_t.base else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "no registers",
        ));
    };
    let modes = tv.layout().modes();
    let thread_mode = modes
        .first()
        .cloned()
        .ok_or_else(|| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, "empty layout"))?;
    let t = thread_index(k, ctx.scope)?;
    let tpart = eval_layout(k, &thread_mode, t)?;
    let rows = tv.rows() as u32;
    let cols = regs_t.shape[1];
    let (row0, col0) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.rem(row0, tpart, rows)?;
    k.div(col0, tpart, rows)?;
    for (v, reg) in regs.iter().enumerate() {
        // The value part of (t, v) is a constant: tv(0, v).
        let vpart = tv
            .offset(0, v as i64)
            .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))?
            as u32;
        let (vr, vc) = (vpart % rows, vpart / rows);
        // Element index in the memory tile's row-major numbering: (row0 + vr) * cols + col0 + vc
        // (the `fragment` predicate checked that rows do not carry between the two parts).
        let (r, c, idx) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.add(r, row0, vr)?;
        k.add(c, col0, vc)?;
        k.mad_lo(idx, r, cols, c)?;
        let off = super::copy_scalar::element_offset(k, mem, idx)?;
        let a = address(k, mem, off)?;
        move_one(k, *reg, a, load)?;
    }
    Ok(())
}

fn move_one(
    k: &mut FunctionBuilder,
    reg: RegRef,
    a: super::common::MemAddr,
    load: bool,
) -> Result<()> {
    use super::common::MemAddr;
    // The register is used through its own class; only the bit width matters to ld/st.
    if reg.class.decl_type().bits() == 16 {
        let r = ptx_isa::Reg::<ty::B16>::from_index(reg.index);
        let r = if reg.class == ptx_isa::RegClass::B16 {
            r
        } else {
            return move_h16(k, reg, a, load);
        };
        return match (a, load) {
            (MemAddr::Global(a), true) => k.ld(r, a),
            (MemAddr::Shared(a), true) => k.ld(r, a),
            (MemAddr::Global(a), false) => k.st(a, r),
            (MemAddr::Shared(a), false) => k.st(a, r),
        };
    }
    match reg.class {
        ptx_isa::RegClass::F32 => {
            let r = ptx_isa::Reg::<ty::F32>::from_index(reg.index);
            match (a, load) {
                (MemAddr::Global(a), true) => k.ld(r, a),
                (MemAddr::Shared(a), true) => k.ld(r, a),
                (MemAddr::Global(a), false) => k.st(a, r),
                (MemAddr::Shared(a), false) => k.st(a, r),
            }
        }
        ptx_isa::RegClass::H32 => {
            let r = ptx_isa::Reg::<ty::Bf16x2>::from_index(reg.index);
            match (a, load) {
                (MemAddr::Global(a), true) => k.ld(r, a),
                (MemAddr::Shared(a), true) => k.ld(r, a),
                (MemAddr::Global(a), false) => k.st(a, r),
                (MemAddr::Shared(a), false) => k.st(a, r),
            }
        }
        _ => {
            let r = ptx_isa::Reg::<ty::B32>::from_index(reg.index);
            match (a, load) {
                (MemAddr::Global(a), true) => k.ld(r, a),
                (MemAddr::Shared(a), true) => k.ld(r, a),
                (MemAddr::Global(a), false) => k.st(a, r),
                (MemAddr::Shared(a), false) => k.st(a, r),
            }
        }
    }
}

fn move_h16(
    k: &mut FunctionBuilder,
    reg: RegRef,
    a: super::common::MemAddr,
    load: bool,
) -> Result<()> {
    use super::common::MemAddr;
    let r = ptx_isa::Reg::<ty::Bf16>::from_index(reg.index);
    match (a, load) {
        (MemAddr::Global(a), true) => k.ld(r, a),
        (MemAddr::Shared(a), true) => k.ld(r, a),
        (MemAddr::Global(a), false) => k.st(a, r),
        (MemAddr::Shared(a), false) => k.st(a, r),
    }
}
