//! `copy.ldmatrix` and `copy.stmatrix`: shared memory ↔ registers in the `ldmatrix`/`stmatrix`
//! fragment (PTX ISA 9.7.14.5.15-16): a warp moves one, two or four 8x8 matrices of 16-bit
//! elements; lane `t` gives the address of row `t % 8` of matrix `t / 8`. The lanes' addresses
//! must be an affine function of (row, matrix bit 0, matrix bit 1), checked on the host.

use layouts::fragment::ldmatrix;
use ptx_isa::builder::MatrixCount;
use ptx_isa::{Addr, FunctionBuilder, Reg, Result, TargetSet, ty};

use super::common::{Regs, element_bits, pair, same_shape, scope, storage, thread_index};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, ExecScope, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The matrices of a register tile whose fragment is the `ldmatrix`/`stmatrix` one.
fn matrices(regs: &TileRef, store: bool) -> std::result::Result<u32, Rejection> {
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let tv = regs
        .fragment
        .as_ref()
        .ok_or_else(|| frag("the register tile has no thread-value layout".into()))?;
    for num in [4i64, 2, 1] {
        let want = if store {
            ldmatrix::stmatrix(num, false)
        } else {
            ldmatrix::ldmatrix(num, false)
        };
        if let Ok(want) = want {
            if tv.compare(&want).is_ok() {
                return Ok(num as u32);
            }
        }
    }
    Err(frag(format!(
        "the register layout {} is not an ldmatrix x1/x2/x4 fragment",
        tv.name()
    )))
}

/// Lane `t`'s byte offset into the shared tile: `a*(t%8) + b*((t>>3)&1) + c*(t>>4) + d`.
fn lane_offsets(
    regs: &TileRef,
    mem: &TileRef,
    num: u32,
) -> std::result::Result<[u32; 4], Rejection> {
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let layout_err = |m: String| Rejection::operand(Aspect::Layout, m);
    let tv = regs
        .fragment
        .as_ref()
        .ok_or_else(|| frag("no fragment".into()))?;
    let layout = mem
        .layout
        .as_ref()
        .ok_or_else(|| layout_err("the shared tile has no layout".into()))?;
    let cols = mem
        .shape
        .get(1)
        .copied()
        .ok_or_else(|| Rejection::operand(Aspect::Shape, "the shared tile is not 2-D"))?
        as i64;
    let off = |t: u32| -> std::result::Result<i64, Rejection> {
        let t = t % (8 * num);
        // Row t%8 of matrix t/8 starts at the value register t/8 holds for thread 4*(t%8).
        let cell = tv
            .offset(4 * (t % 8) as i64, 2 * (t / 8) as i64)
            .map_err(|e| frag(e.to_string()))?;
        let (row, col) = (cell % tv.rows(), cell / tv.rows());
        Ok(layout.call(row * cols + col) * mem.dtype.bytes() as i64)
    };
    let d = off(0)?;
    let (a, b, c) = (off(1)? - d, off(8)? - d, off(16)? - d);
    for t in 0..32 {
        let want = a * (t % 8) as i64 + b * ((t >> 3) & 1) as i64 + c * (t >> 4) as i64 + d;
        if off(t)? != want {
            return Err(layout_err(format!(
                "lane {t}'s row address is not affine in (row, matrix)"
            )));
        }
    }
    if [a, b, c, d].iter().any(|&x| x < 0) {
        return Err(layout_err("negative offsets".into()));
    }
    Ok([a as u32, b as u32, c as u32, d as u32])
}

/// One `ldmatrix`/`stmatrix` of `regs`: lane `t` gives the address
/// `base + swizzle(a*(t%8) + b*((t>>3)&1) + c*(t>>4) + d)`.
struct MatrixCopy {
    store: bool,
    count: MatrixCount,
    regs: Regs,
    base: Reg<ty::U32>,
    offsets: [u32; 4],
    swizzle: smem::SwizzleMode,
    scope: ExecScope,
}

fn plan(ctx: &OpCtx<'_>, store: bool) -> std::result::Result<MatrixCopy, Rejection> {
    let (d, s) = pair(ctx)?;
    let (regs, mem) = if store { (s, d) } else { (d, s) };
    element_bits((regs, mem), 16, "ldmatrix/stmatrix move 16-bit elements")?;
    let num = matrices(regs, store)?;
    same_shape(regs, mem, " (matrices stacked by rows)")?;
    let Base::Registers(r) = &regs.base else {
        return Err(Rejection::operand(Aspect::Registers, "no registers"));
    };
    if r.len() != num as usize || r.iter().any(|x| x.class.decl_type().bits() != 32) {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!("{} registers: x{num} takes {num} 32-bit registers", r.len()),
        ));
    }
    let cols = mem.shape.get(1).copied().unwrap_or(0) as i64;
    // Eight consecutive elements of a row are 16 contiguous bytes (before the swizzle, which
    // moves whole 16-byte chunks).
    if let Some(l) = &mem.layout {
        if (0..8).any(|c| l.call(c) != l.call(0) + c) || cols % 8 != 0 {
            return Err(Rejection::operand(
                Aspect::Layout,
                "rows are not 16 contiguous bytes",
            ));
        }
    }
    let offsets = lane_offsets(regs, mem, num)?;
    let Base::Shared(base) = mem.base else {
        return Err(Rejection::operand(Aspect::Base, "not a shared tile"));
    };
    Ok(MatrixCopy {
        store,
        count: match num {
            4 => MatrixCount::X4,
            2 => MatrixCount::X2,
            _ => MatrixCount::X1,
        },
        regs: Regs::of(r)?,
        base,
        offsets,
        swizzle: mem.swizzle,
        scope: ctx.scope,
    })
}

impl Plan for MatrixCopy {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let [a, b, c, d0] = self.offsets;
        let lane = thread_index(k, self.scope)?;
        let (row, m0, m1, off) = (
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
            k.reg::<ty::U32>(),
        );
        k.and(row, lane, 7u32)?;
        k.bfe(m0, lane, 3u32, 1u32)?;
        k.shr(m1, lane, 4u32)?;
        k.mul_lo(off, row, a)?;
        k.mad_lo(off, m0, b, off)?;
        k.mad_lo(off, m1, c, off)?;
        k.add(off, off, d0)?;
        let sw = smem::emit::emit_swizzle(k, self.swizzle, off)?;
        let addr = k.reg::<ty::U32>();
        k.add(addr, self.base, sw)?;
        self.regs
            .matrix(k, self.count, Addr::reg32(addr), self.store)
    }
}

fn plan_load<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    Ok(Box::new(plan(ctx, false)?))
}

fn plan_store<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    Ok(Box::new(plan(ctx, true)?))
}

/// `copy.ldmatrix` (shared → registers, a warp).
pub const LDMATRIX: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.ldmatrix",
    targets: TargetSet::all(),
    priority: 30,
    views: false,
    predicates: &[storage!(Shared -> Local), scope!(Warp)],
    planner: Planner {
        name: "fragment",
        plan: plan_load,
    },
};

/// `copy.stmatrix` (registers → shared, a warp; sm_90+).
pub const STMATRIX: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.stmatrix",
    targets: TargetSet::sm_at_least(90),
    priority: 30,
    views: false,
    predicates: &[storage!(Local -> Shared), scope!(Warp)],
    planner: Planner {
        name: "fragment",
        plan: plan_store,
    },
};
