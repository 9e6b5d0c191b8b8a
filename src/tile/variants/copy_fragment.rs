//! `copy.fragment`: registers ↔ memory, one value at a time, through the register tile's
//! thread-value layout: value `v` of thread `t` is element `(row, col)` of the tile where
//! `row + rows * col = tv(t, v)` (the thread part evaluated at run time, the value part folded).

use ptx_isa::{FunctionBuilder, Result, TargetSet, ty};

use super::common::{
    MemTile, Regs, div_const, eval_layout, fragment_tiles, pair, register_side, rem_const, storage,
    thread_index, thread_mode,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, ExecScope};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The copy: each register at its value's (row, column) offset from the thread's first cell.
struct FragmentCopy<'a> {
    mem: MemTile<'a>,
    load: bool,
    scope: ExecScope,
    /// The thread mode of the register layout, evaluated at run time.
    thread_mode: layouts::Layout,
    rows: u32,
    cols: u32,
    /// Each register with its value's row and column offsets.
    values: Vec<(Regs, u32, u32)>,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let (regs, mem, load) = register_side(d, s);
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let tv = regs
        .fragment
        .as_ref()
        .ok_or_else(|| frag("the register tile has no thread-value layout".into()))?;
    let Base::Registers(r) = &regs.base else {
        return Err(Rejection::operand(
            Aspect::Registers,
            "the register tile has no registers",
        ));
    };
    if r.len() as i64 != tv.values() {
        return Err(frag(format!(
            "{} registers for {} values per thread",
            r.len(),
            tv.values()
        )));
    }
    if tv.threads() != ctx.scope.threads() as i64 {
        return Err(frag(format!(
            "the layout spreads over {} threads, the scope has {}",
            tv.threads(),
            ctx.scope.threads()
        )));
    }
    if mem.layout.is_none() {
        return Err(Rejection::operand(
            Aspect::Layout,
            "the memory tile has no layout",
        ));
    }
    fragment_tiles(regs, mem)?;
    if r.iter()
        .any(|x| x.class.decl_type().bits() != regs.dtype.bits())
    {
        return Err(Rejection::operand(
            Aspect::Registers,
            "a register's width differs from the element's",
        ));
    }
    // The emission splits tv(t, v) into T(t) + V(v), row by row: no row may carry.
    super::copy_stmatrix_frag::separable(tv)?;
    let thread_mode = thread_mode(tv)?;
    let rows = tv.rows() as u32;
    let mut values = Vec::with_capacity(r.len());
    for (v, reg) in r.iter().enumerate() {
        // The value part of (t, v) is a constant: tv(0, v).
        let vpart = tv.offset(0, v as i64).map_err(|e| frag(e.to_string()))? as u32;
        values.push((
            Regs::of(std::slice::from_ref(reg))?,
            vpart % rows,
            vpart / rows,
        ));
    }
    Ok(Box::new(FragmentCopy {
        mem: MemTile::of(mem)?,
        load,
        scope: ctx.scope,
        thread_mode,
        rows,
        cols: regs.shape[1],
        values,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.fragment",
    targets: TargetSet::all(),
    priority: 5,
    views: false,
    predicates: &[storage!(Global -> Local, Shared -> Local, Local -> Global, Local -> Shared)],
    planner: Planner {
        name: "fragment",
        plan,
    },
};

impl Plan for FragmentCopy<'_> {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let t = thread_index(k, self.scope)?;
        let tpart = eval_layout(k, &self.thread_mode, t)?;
        let (row0, col0) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        rem_const(k, row0, tpart, self.rows)?;
        div_const(k, col0, tpart, self.rows)?;
        for (reg, vr, vc) in &self.values {
            // Element index in the memory tile's row-major numbering:
            // (row0 + vr) * cols + col0 + vc (the planner checked that rows do not carry
            // between the two parts).
            let (r, c, idx) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
            k.add(r, row0, *vr)?;
            k.add(c, col0, *vc)?;
            k.mad_lo(idx, r, self.cols, c)?;
            let off = self.mem.element_offset(k, idx)?;
            let a = self.mem.base.address(k, off)?;
            reg.access(k, a, self.load)?;
        }
        Ok(())
    }
}
