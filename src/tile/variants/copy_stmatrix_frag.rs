//! `copy.stmatrix_fragment`: registers holding packed 16-bit pairs in any register layout whose
//! warps hold whole 8x8 matrices the way `stmatrix` wants them (lane `l` has row `l / 4`, columns
//! `2(l % 4)` and `+1` of each matrix: the wgmma and mma accumulator fragments do) → a shared tile
//! of any layout and swizzle whose 8-element row pieces are 16 contiguous bytes. One
//! `stmatrix.x4` (or `.x2`, `.x1`) per group of registers (PTX ISA 9.7.14.5.16). What a GEMM
//! epilogue stages through shared memory before its TMA store.
//!
//! `copy.ldmatrix_fragment` is the same plan the other way: such a shared tile → the registers,
//! one `ldmatrix` per group (PTX ISA 9.7.14.5.15: lane `l` of each matrix gets row `l / 4`,
//! columns `2(l % 4)` and `+1`, the distribution `stmatrix` takes), so a tile staged in shared
//! memory (a residual a TMA load brought) is read back in the accumulator's own layout.
//!
//! The plan is made on the host from the thread-value layout: the layout splits into a thread part
//! and a value part (`tv(t, v) = T(t) + V(v)`), a warp's lanes follow the stmatrix pattern, and the
//! four matrices of a group sit at value offsets affine in the matrix index; the lowering then
//! computes each lane's row address once and each group's address from it.

use layouts::fragment::TvLayout;
use ptx_isa::builder::MatrixCount;
use ptx_isa::{Addr, FunctionBuilder, Reg, Result, TargetSet, ty};

use super::common::{
    DivPart, Regs, div_const, eval_layout, pair, storage, thread_index, thread_mode,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, ExecScope, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The host plan: matrices per instruction, per-group value offsets, and the per-lane affine
/// parts.
struct StmatrixPlan<'a> {
    /// The packed-pair registers, `num` per group.
    regs: Regs,
    base: Reg<ty::U32>,
    layout: &'a layouts::Layout,
    swizzle: smem::SwizzleMode,
    /// The thread mode of the register layout, evaluated at run time.
    thread_mode: layouts::Layout,
    rows: u32,
    cols: u32,
    scope: ExecScope,
    num: u32,
    /// V(2 * num * g) for each group g.
    group_offsets: Vec<i64>,
    /// V(2(num g + q)) - V(2 num g) = (q & 1) * b + (q >> 1) * c.
    b: i64,
    c: i64,
    /// For each group, where its lanes' addresses come from: `None` when the group computes them,
    /// `Some((h, d))` when they are group `h`'s plus `d` bytes for every thread (an immediate
    /// offset). Found by evaluating every thread's address on the host.
    reuse: Vec<Option<(usize, i64)>>,
    /// `stmatrix` (registers → shared), else `ldmatrix` (shared → registers).
    store: bool,
}

fn plan<'a>(
    regs: &'a TileRef,
    mem: &'a TileRef,
    scope: ExecScope,
    store: bool,
) -> std::result::Result<StmatrixPlan<'a>, Rejection> {
    let threads = scope.threads() as i64;
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let tv: &TvLayout = regs
        .fragment
        .as_ref()
        .ok_or_else(|| frag("the register tile has no thread-value layout".into()))?;
    let Base::Registers(r) = &regs.base else {
        return Err(Rejection::operand(Aspect::Registers, "no registers"));
    };
    let Base::Shared(base) = mem.base else {
        return Err(Rejection::operand(
            Aspect::Base,
            "the shared tile has no shared address",
        ));
    };
    if regs.dtype.bits() != 16 || mem.dtype != regs.dtype {
        return Err(Rejection::operand(
            Aspect::ElementType,
            format!(
                "{} registers into {}: 16-bit elements of one type",
                regs.dtype, mem.dtype
            ),
        ));
    }
    if r.len() as i64 * 2 != tv.values() || r.iter().any(|x| x.class.decl_type().bits() != 32) {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!(
                "{} registers for {} values: packed pairs in 32-bit registers",
                r.len(),
                tv.values()
            ),
        ));
    }
    let typed = Regs::of(r)?;
    if tv.threads() != threads || threads % 32 != 0 {
        return Err(frag(format!(
            "the layout spreads over {} threads; the scope has {threads}",
            tv.threads()
        )));
    }
    if mem.shape != [tv.rows() as u32, tv.cols() as u32] {
        return Err(Rejection::operand(
            Aspect::Shape,
            format!(
                "the shared tile is {:?}; the fragment covers {}x{}",
                mem.shape,
                tv.rows(),
                tv.cols()
            ),
        ));
    }
    let layout = mem
        .layout
        .as_ref()
        .ok_or_else(|| Rejection::operand(Aspect::Layout, "the shared tile has no layout"))?;
    let regs_n = r.len() as u32;
    let g = geometry((tv.clone(), layout.clone(), mem.swizzle, regs_n, threads))?;
    Ok(StmatrixPlan {
        regs: typed,
        base,
        layout,
        swizzle: mem.swizzle,
        thread_mode: g.thread_mode,
        rows: tv.rows() as u32,
        cols: tv.cols() as u32,
        scope,
        num: g.num,
        group_offsets: g.group_offsets,
        b: g.b,
        c: g.c,
        reuse: g.reuse,
        store,
    })
}

/// What a plan reads of the layouts alone: matrices per instruction, the groups' value offsets,
/// the per-lane affine parts, which groups reuse another's addresses, and the thread mode.
#[derive(Debug, Clone)]
struct Geometry {
    num: u32,
    group_offsets: Vec<i64>,
    b: i64,
    c: i64,
    reuse: Vec<Option<(usize, i64)>>,
    thread_mode: layouts::Layout,
}

/// The layouts, swizzle, register count and thread count a [`Geometry`] is read from.
type GeometryKey = (TvLayout, layouts::Layout, smem::SwizzleMode, u32, i64);

/// The geometries (or refusals) one thread has worked out, by [`GeometryKey`].
type GeometryTable =
    std::cell::RefCell<Vec<(GeometryKey, std::result::Result<Geometry, Rejection>)>>;

/// [`geometry_of`] of `key`, remembered per layout ([`crate::kernel::memo`]): a GEMM's epilogue
/// stores the same accumulator fragment into the same staging tile for every tile it writes, and
/// reading every thread's address on the host was a tenth of building the GEMM (issue 33).
fn geometry(key: GeometryKey) -> std::result::Result<Geometry, Rejection> {
    thread_local! {
        static SEEN: GeometryTable = const { std::cell::RefCell::new(Vec::new()) };
    }
    crate::kernel::memo::memoized(&SEEN, &key, || geometry_of(&key))
}

/// Checks that the fragment `tv` of `regs_n` packed-pair registers over `threads` threads stores
/// into the shared tile `layout` (with `swizzle`) as `stmatrix`/`ldmatrix` move matrices, and
/// reads its [`Geometry`]; `key` is `(tv, layout, swizzle, regs_n, threads)`.
fn geometry_of(key: &GeometryKey) -> std::result::Result<Geometry, Rejection> {
    let (tv, layout, swizzle, regs_n, threads) = key;
    let (swizzle, regs_n, threads) = (*swizzle, *regs_n, *threads);
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let (rows, cols) = (tv.rows(), tv.cols());
    let off = |t: i64, v: i64| tv.offset(t, v).map_err(|e| frag(e.to_string()));
    // A (thread, value) layout is linear in its two modes: tv(t, v) = T(t) + V(v) (CuTe layouts
    // are sums over modes). What must be checked is that no row carries between the parts.
    separable(tv)?;
    // Lanes follow the stmatrix pattern within each warp: T(32w + l) = T(32w) + l/4 + rows*2(l%4).
    for w in 0..threads / 32 {
        let base = off(32 * w, 0)?;
        for l in 0..32 {
            if off(32 * w + l, 0)? != base + l / 4 + rows * 2 * (l % 4) {
                return Err(frag(format!(
                    "lane {l} of warp {w} does not hold row l/4, columns 2(l%4) of its matrices"
                )));
            }
        }
    }
    let num = [4u32, 2, 1]
        .into_iter()
        .find(|n| regs_n % n == 0)
        .unwrap_or(1);
    let mut group_offsets = Vec::new();
    let (mut b, mut c) = (0, 0);
    for g in 0..regs_n / num {
        let v0 = off(0, 2 * (num * g) as i64)?;
        for q in 0..num as i64 {
            let reg = (num * g) as i64 + q;
            // The pair's second value is the next column.
            if off(0, 2 * reg + 1)? != off(0, 2 * reg)? + rows {
                return Err(frag(format!(
                    "register {reg} does not hold two adjacent columns"
                )));
            }
        }
        let d = |q: i64| -> std::result::Result<i64, Rejection> {
            Ok(off(0, 2 * ((num * g) as i64 + q))? - v0)
        };
        let (gb, gc) = (
            if num > 1 { d(1)? } else { 0 },
            if num > 2 { d(2)? } else { 0 },
        );
        if num == 4 && d(3)? != gb + gc {
            return Err(frag(
                "the four matrices of a group are not at affine offsets".into(),
            ));
        }
        if g == 0 {
            (b, c) = (gb, gc);
        } else if (gb, gc) != (b, c) {
            return Err(frag("groups place their matrices differently".into()));
        }
        group_offsets.push(v0);
    }
    // Every matrix row piece (8 elements from a column multiple of 8) is 16 contiguous bytes: at
    // once when the column-fastest mode is a stride-1 run of a multiple of 8, else piece by piece.
    let fast = layout
        .flat_modes()
        .first()
        .is_some_and(|&(e, d)| d == 1 && e % 8 == 0)
        && cols % 8 == 0;
    for w in 0..if fast { 0 } else { threads / 32 } {
        for v0 in &group_offsets {
            for q in 0..num as i64 {
                let cell = off(32 * w, 0)? + v0 + (q & 1) * b + (q >> 1) * c;
                for rr in 0..8 {
                    let (row, col) = ((cell + rr) % rows, (cell + rr) / rows);
                    let idx = row * cols + col;
                    if col % 8 != 0 || (0..8).any(|e| layout.call(idx + e) != layout.call(idx) + e)
                    {
                        return Err(Rejection::operand(
                            Aspect::Layout,
                            format!("the row piece at ({row}, {col}) is not 16 contiguous bytes"),
                        ));
                    }
                }
            }
        }
    }
    // Each thread's cell before the group offset, then the byte offset through the flat modes
    // (the host twin of `eval_layout`).
    let mut tcell = Vec::with_capacity(threads as usize);
    for t in 0..threads {
        let (l, q) = (t % 32, (t % 32 / 8) % num as i64);
        tcell.push(off(t - l, 0)? + l % 8 + (q & 1) * b + (q >> 1) * c);
    }
    let flat = layout.flat_modes();
    let swizzle = swizzle.swizzle();
    let reuse = reuse(&group_offsets, threads, |t, v0| {
        let cell = tcell[t as usize] + v0;
        let mut idx = (cell % rows) * cols + cell / rows;
        let mut e = 0;
        for &(extent, stride) in &flat {
            e += idx % extent.max(1) * stride;
            idx /= extent.max(1);
        }
        let bytes = u64::try_from(2 * e).map_err(|_| {
            Rejection::operand(Aspect::Layout, format!("cell {cell} has a negative offset"))
        })?;
        Ok(swizzle.apply(bytes) as i64)
    })?;
    let thread_mode = thread_mode(tv)?;
    Ok(Geometry {
        num,
        group_offsets,
        b,
        c,
        reuse,
        thread_mode,
    })
}

/// Groups whose every thread's address differs from another group's by one constant share that
/// group's address register with an immediate offset: the lowest such group computes it, so the
/// offsets are non-negative. `addr(t, v0)` is thread `t`'s byte offset for the group at `v0`.
pub(super) fn reuse<E>(
    group_offsets: &[i64],
    threads: i64,
    addr: impl Fn(i64, i64) -> std::result::Result<i64, E>,
) -> std::result::Result<Vec<Option<(usize, i64)>>, E> {
    let mut table = Vec::with_capacity(group_offsets.len());
    for &v0 in group_offsets {
        table.push(
            (0..threads)
                .map(|t| addr(t, v0))
                .collect::<std::result::Result<Vec<_>, _>>()?,
        );
    }
    let mut out: Vec<Option<(usize, i64)>> = vec![None; table.len()];
    let mut reps: Vec<usize> = Vec::new();
    for g in 0..table.len() {
        let d = table[g][0];
        let same = |h: usize| {
            let e = table[h][0];
            table[g].iter().zip(&table[h]).all(|(x, y)| x - d == y - e)
        };
        match reps.iter().position(|&h| same(h)) {
            Some(i) if table[reps[i]][0] <= d => out[g] = Some((reps[i], d - table[reps[i]][0])),
            Some(i) => {
                // The new group is lower: it computes, the old representative and its members
                // point at it.
                let old = reps[i];
                let shift = table[old][0] - d;
                for o in out.iter_mut() {
                    if let Some((h, off)) = o {
                        if *h == old {
                            *o = Some((g, *off + shift));
                        }
                    }
                }
                out[old] = Some((g, shift));
                reps[i] = g;
            }
            None => reps.push(g),
        }
    }
    Ok(out)
}

/// No row carries between the thread and value parts of `tv(t, v) = T(t) + V(v)`: the largest
/// row of a thread part plus the largest row of a value part stays in the tile.
pub(crate) fn separable(tv: &TvLayout) -> std::result::Result<(), Rejection> {
    let rows = tv.rows();
    let off = |t: i64, v: i64| {
        tv.offset(t, v)
            .map_err(|e| Rejection::operand(Aspect::Fragment, e.to_string()))
    };
    let mut max_t = 0;
    for t in 0..tv.threads() {
        max_t = max_t.max(off(t, 0)? % rows);
    }
    let mut max_v = 0;
    for v in 0..tv.values() {
        max_v = max_v.max(off(0, v)? % rows);
    }
    if max_t + max_v >= rows {
        return Err(Rejection::operand(
            Aspect::Fragment,
            format!(
                "rows carry between the thread part ({max_t}) and the value part ({max_v}) of {}",
                tv.name()
            ),
        ));
    }
    Ok(())
}

fn fragment<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    Ok(Box::new(plan(s, d, ctx.scope, true)?))
}

fn fragment_load<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    Ok(Box::new(plan(d, s, ctx.scope, false)?))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.stmatrix_fragment",
    targets: TargetSet::sm_at_least(90),
    priority: 25,
    views: false,
    predicates: &[storage!(Local -> Shared)],
    planner: Planner {
        name: "fragment",
        plan: fragment,
    },
};

/// The registration of the load direction.
pub const LOAD_VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.ldmatrix_fragment",
    targets: TargetSet::sm_at_least(90),
    priority: 25,
    views: false,
    predicates: &[storage!(Shared -> Local)],
    planner: Planner {
        name: "fragment",
        plan: fragment_load,
    },
};

impl Plan for StmatrixPlan<'_> {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let p = self;
        let (rows, cols) = (self.rows, self.cols);
        // Lane l of warp w gives row l % 8 of matrix q = (l / 8) % num:
        // cell = T(32w) + l % 8 + (q & 1) b + (q >> 1) c + V(group).
        let t = thread_index(k, self.scope)?;
        let (w32, lane, r8, q, tmp) = (
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
        );
        k.and(w32, t, !31u32)?;
        k.and(lane, t, 31u32)?;
        k.and(r8, lane, 7u32)?;
        k.shr(q, lane, 3u32)?;
        div_const(k, DivPart::Remainder, q, q, p.num)?;
        let cell = eval_layout(k, &self.thread_mode, w32)?;
        k.add(cell, cell, r8)?;
        k.and(tmp, q, 1u32)?;
        k.mad_lo(cell, tmp, p.b as u32, cell)?;
        k.shr(tmp, q, 1u32)?;
        k.mad_lo(cell, tmp, p.c as u32, cell)?;
        let count = match p.num {
            4 => MatrixCount::X4,
            2 => MatrixCount::X2,
            _ => MatrixCount::X1,
        };
        let mut addr: Vec<Reg<ty::U32>> = Vec::with_capacity(p.group_offsets.len());
        for (g, v0) in p.group_offsets.iter().enumerate() {
            // A group that reuses another's address has no register of its own: its slot is
            // never read (every `reuse` entry names a group that computes its address).
            if p.reuse[g].is_some() {
                addr.push(self.base);
                continue;
            }
            let (cg, row, col, idx) = (
                k.reg::<ty::U32>(),
                k.reg::<ty::U32>(),
                k.reg::<ty::U32>(),
                k.reg::<ty::U32>(),
            );
            k.add(cg, cell, *v0 as u32)?;
            div_const(k, DivPart::Remainder, row, cg, rows)?;
            div_const(k, DivPart::Quotient, col, cg, rows)?;
            k.mad_lo(idx, row, cols, col)?;
            let e = eval_layout(k, self.layout, idx)?;
            let bytes = k.reg::<ty::U32>();
            k.shl(bytes, e, 1u32)?;
            let sw = smem::emit::emit_swizzle(k, self.swizzle, bytes)?;
            let at = k.reg::<ty::U32>();
            k.add(at, self.base, sw)?;
            addr.push(at);
        }
        let num = p.num as usize;
        for g in 0..p.group_offsets.len() {
            let (h, imm) = p.reuse[g].unwrap_or((g, 0));
            let at = Addr::reg32(addr[h]).offset(imm);
            self.regs
                .range(g * num..(g + 1) * num)
                .matrix(k, count, at, self.store)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::reuse;

    #[test]
    fn groups_a_constant_apart_share_the_lowest_groups_register() {
        // Four groups: 0 and 2 differ by 64 for every thread, 3 is 128 below 1, and 1 and 3 are
        // not a constant apart from 0 (the XOR makes the difference depend on the thread).
        let addr = |t: i64, g: i64| -> Result<i64, String> {
            Ok(match g {
                0 => t * 16,
                1 => (t * 16) ^ 32 | 1024,
                2 => t * 16 + 64,
                _ => ((t * 16) ^ 32 | 1024) - 128,
            })
        };
        let r = reuse(&[0, 1, 2, 3], 8, addr).unwrap();
        assert_eq!(r, vec![None, Some((3, 128)), Some((0, 64)), None]);
    }

    #[test]
    fn an_error_in_any_threads_address_is_reported() {
        let r = reuse(&[0, 1], 4, |t, g| {
            if t == 3 && g == 1 {
                Err("thread 3".to_string())
            } else {
                Ok(t)
            }
        });
        assert_eq!(r, Err("thread 3".to_string()));
    }
}
