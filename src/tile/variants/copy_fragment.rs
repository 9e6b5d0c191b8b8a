//! `copy.fragment`: registers ↔ memory, one value at a time, through the register tile's
//! thread-value layout: value `v` of thread `t` is element `(row, col)` of the tile where
//! `row + rows * col = tv(t, v)` (the thread part evaluated at run time, the value part folded).

use ptx_isa::{FunctionBuilder, Result, TargetSet, ty};

use super::common::{
    address, div_const, eval_layout, expect_copy, rem_const, storages, thread_index,
};
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
    // The lowering splits tv(t, v) into T(t) + V(v), row by row: no row may carry.
    super::copy_stmatrix_frag::separable(tv)?;
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.fragment",
    targets: TargetSet::all(),
    priority: 5,
    views: false,
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
    rem_const(k, row0, tpart, rows)?;
    div_const(k, col0, tpart, rows)?;
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
        super::copy_view::access(k, std::slice::from_ref(reg), a, load)?;
    }
    Ok(())
}
