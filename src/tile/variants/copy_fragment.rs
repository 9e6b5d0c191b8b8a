//! `copy.fragment`: registers ↔ memory, one value at a time, through the register tile's
//! thread-value layout: value `v` of thread `t` is element `(row, col)` of the tile where
//! `row + rows * col = tv(t, v)` (the thread part evaluated at run time, the value part folded).
//! On a swizzled memory tile a value whose every thread's address is a constant past another
//! value's (found on the host, swizzle included) takes that value's address with an immediate
//! offset, so it costs one address computation per distinct swizzle pattern rather than one
//! per value (without a swizzle the addresses are affine in the thread's, which ptxas folds);
//! there two values whose every thread's addresses are one element apart, the first aligned to
//! both, move as one two-register vector (`st.shared.v2`, PTX ISA 9.7.9.11: a warp's f32
//! accumulator pairs then take half the instructions and, under the 128-byte swizzle, no bank
//! conflict).

use ptx_isa::{FunctionBuilder, Result, TargetSet, ty};

use super::common::{
    DivPart, MemAddr, MemTile, Regs, div_const, eval_layout, fragment_tiles, pair, register_side,
    storage, thread_index, thread_mode,
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
    /// For each value, `Some((h, bytes))` where its address is value `h`'s plus `bytes` for
    /// every thread; `None` where it computes its own.
    reuse: Vec<Option<(usize, i64)>>,
    /// The accesses: the value whose address each takes and its registers (one value's, or a
    /// vector of it and the next).
    accesses: Vec<(usize, Regs)>,
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
    let base_align = mem.align;
    let mem = MemTile::of(mem)?;
    let cols = regs.shape[1];
    // Each thread's byte offset for each value, as the emission computes it (the host twin).
    let swizzle = mem.swizzle.swizzle();
    let indices: Vec<i64> = (0..values.len() as i64).collect();
    let addr = |t: i64, v: i64| {
        let (_, vr, vc) = &values[v as usize];
        let tpart = thread_mode.call(t);
        let (r, c) = (
            tpart % i64::from(rows) + i64::from(*vr),
            tpart / i64::from(rows),
        );
        let e = mem.layout.call(r * i64::from(cols) + c + i64::from(*vc));
        u64::try_from(e * i64::from(mem.elem_bytes))
            .map(|b| swizzle.apply(b) as i64)
            .map_err(|_| frag(format!("value {v} of thread {t} has a negative offset")))
    };
    let (reuse, accesses) = match mem.swizzle {
        smem::SwizzleMode::None => (
            vec![None; values.len()],
            (0..values.len())
                .map(|v| (v, values[v].0.clone()))
                .collect(),
        ),
        _ => (
            super::copy_stmatrix_frag::reuse(&indices, tv.threads(), addr)?,
            vectors(&values, r, tv.threads(), base_align, mem.elem_bytes, addr)?,
        ),
    };
    Ok(Box::new(FragmentCopy {
        mem,
        load,
        scope: ctx.scope,
        thread_mode,
        rows,
        cols,
        values,
        reuse,
        accesses,
    }))
}

/// The accesses of a swizzled tile: value `v` with `v + 1` as one vector where every thread's
/// address of `v + 1` (`addr(t, v)`, bytes from the base) is `v`'s plus an element and `v`'s is
/// aligned to both (the base's alignment covering it), else `v` alone.
fn vectors<E>(
    values: &[(Regs, u32, u32)],
    regs: &[ptx_isa::RegRef],
    threads: i64,
    base_align: u32,
    elem_bytes: u32,
    addr: impl Fn(i64, i64) -> std::result::Result<i64, E>,
) -> std::result::Result<Vec<(usize, Regs)>, E> {
    let (eb, pair) = (i64::from(elem_bytes), 2 * i64::from(elem_bytes));
    let mut out = Vec::with_capacity(values.len());
    let mut v = 0;
    while v < values.len() {
        let mut joined = v + 1 < values.len() && i64::from(base_align) % pair == 0;
        for t in 0..threads {
            if !joined {
                break;
            }
            let (a, b) = (addr(t, v as i64)?, addr(t, v as i64 + 1)?);
            joined = b == a + eb && a % pair == 0;
        }
        let two = joined.then(|| Regs::of(&regs[v..v + 2]).ok()).flatten();
        match two {
            Some(two) => {
                out.push((v, two));
                v += 2;
            }
            None => {
                out.push((v, values[v].0.clone()));
                v += 1;
            }
        }
    }
    Ok(out)
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
        div_const(k, DivPart::Remainder, row0, tpart, self.rows)?;
        div_const(k, DivPart::Quotient, col0, tpart, self.rows)?;
        // Each value's address: its own, computed just before its access (or earlier, where a
        // value before it reuses it), or one computed with an immediate offset.
        let mut addrs: Vec<Option<MemAddr>> = vec![None; self.values.len()];
        for (v, reg) in &self.accesses {
            let v = *v;
            let (h, bytes) = self.reuse[v].unwrap_or((v, 0));
            let at = match addrs[h].clone() {
                Some(at) => at,
                None => {
                    let (_, vr, vc) = &self.values[h];
                    // Element index in the memory tile's row-major numbering:
                    // (row0 + vr) * cols + col0 + vc (the planner checked that rows do not
                    // carry between the two parts).
                    let (r, c, idx) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
                    k.add(r, row0, *vr)?;
                    k.add(c, col0, *vc)?;
                    k.mad_lo(idx, r, self.cols, c)?;
                    let off = self.mem.element_offset(k, idx)?;
                    let at = self.mem.base.address(k, off)?;
                    addrs[h] = Some(at.clone());
                    at
                }
            };
            reg.access(k, at.offset(bytes), self.load)?;
        }
        Ok(())
    }
}
