//! Helpers the variants share: predicates over operands, the thread index within the scope,
//! addresses, and layout evaluation.

use ptx_isa::builder::CmpOp;
use ptx_isa::{Addr, Dim, FunctionBuilder, Reg, Result, SpecialReg, spaces, ty};

use crate::tile::op::{OpCtx, TileOp};
use crate::tile::operand::{Base, ExecScope, Storage, TileRef};

/// `(dst, src)` of the op, or a reason.
pub fn pair<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<(&'a TileRef, &'a TileRef), String> {
    ctx.op.dst_src().ok_or_else(|| "not a copy".to_string())
}

/// The destination and source storages are one of `allowed`.
pub fn storages(
    ctx: &OpCtx<'_>,
    allowed: &[(Storage, Storage)],
) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    if allowed.contains(&(d.storage, s.storage)) {
        Ok(())
    } else {
        let list: Vec<String> = allowed.iter().map(|(d, s)| format!("{s}->{d}")).collect();
        Err(format!(
            "{}->{} is not {}",
            s.storage,
            d.storage,
            list.join(" or ")
        ))
    }
}

/// Source and destination have the same element type and element count.
pub fn same_elements(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    if d.dtype != s.dtype {
        return Err(format!("element types differ: {} and {}", s.dtype, d.dtype));
    }
    if d.elements() != s.elements() {
        return Err(format!("{} elements into {}", s.elements(), d.elements()));
    }
    Ok(())
}

/// The scope is one of `allowed`.
pub fn scope_in(ctx: &OpCtx<'_>, allowed: &[&str]) -> std::result::Result<(), String> {
    let name = match ctx.scope {
        ExecScope::Thread => "thread",
        ExecScope::Warp => "warp",
        ExecScope::Warpgroup => "warpgroup",
        ExecScope::Cta { .. } => "cta",
        ExecScope::Cluster { .. } => "cluster",
    };
    if allowed.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "scope {} is not {}",
            ctx.scope,
            allowed.join(" or ")
        ))
    }
}

/// Both operands are dense (identity layout) and unswizzled.
pub fn both_contiguous(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    for (what, t) in [("source", s), ("destination", d)] {
        if !t.is_contiguous() || t.swizzle != smem::SwizzleMode::None {
            return Err(format!("the {what} is not a dense unswizzled tile"));
        }
    }
    Ok(())
}

/// The thread's index within the scope: 0, `%laneid`, `%tid.x % 128`, or `%tid.x`.
pub fn thread_index(k: &mut FunctionBuilder, scope: ExecScope) -> Result<Reg<ty::U32>> {
    let t = k.reg::<ty::U32>();
    match scope {
        ExecScope::Thread | ExecScope::Cluster { .. } => k.mov(t, 0u32)?,
        ExecScope::Warp => k.mov_sreg(t, SpecialReg::LaneId)?,
        ExecScope::Warpgroup => {
            k.mov_sreg(t, SpecialReg::Tid(Dim::X))?;
            k.and(t, t, 127u32)?;
        }
        ExecScope::Cta { .. } => k.mov_sreg(t, SpecialReg::Tid(Dim::X))?,
    }
    Ok(t)
}

/// A memory address: 64-bit global or 32-bit shared.
#[derive(Debug, Clone)]
pub enum MemAddr {
    /// `[%rd]` in `.global`.
    Global(Addr<spaces::Global>),
    /// `[%r]` in `.shared`.
    Shared(Addr<spaces::Shared>),
}

/// The address `byte_offset` bytes into the tile `t` (global or shared base).
pub fn address(k: &mut FunctionBuilder, t: &TileRef, byte_offset: Reg<ty::U32>) -> Result<MemAddr> {
    match &t.base {
        Base::Global(b) => {
            let (w, a) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
            k.cvt(w, byte_offset)?;
            k.add(a, *b, w)?;
            Ok(MemAddr::Global(Addr::reg(a)))
        }
        Base::Shared(b) => {
            let a = k.reg::<ty::U32>();
            k.add(a, *b, byte_offset)?;
            Ok(MemAddr::Shared(Addr::reg32(a)))
        }
        _ => Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            format!("{t} has no memory address"),
        )),
    }
}

/// Emits `offset = layout(index)` for a CuTe layout with flat modes `(shape_i, stride_i)`:
/// `sum((index / prod(shape_<i)) % shape_i * stride_i)` (CuTe colexicographic evaluation).
pub fn eval_layout(
    k: &mut FunctionBuilder,
    layout: &layouts::Layout,
    index: Reg<ty::U32>,
) -> Result<Reg<ty::U32>> {
    let out = k.reg::<ty::U32>();
    k.mov(out, 0u32)?;
    let mut step: i64 = 1;
    for (extent, stride) in layout.flat_modes() {
        if extent > 1 && stride != 0 {
            let c = k.reg::<ty::U32>();
            k.div(c, index, step as u32)?;
            k.rem(c, c, extent as u32)?;
            k.mad_lo(out, c, stride as u32, out)?;
        }
        step *= extent.max(1);
    }
    Ok(out)
}

/// `for i = start; i < end; i += step` with a body that gets `i`.
pub fn strided_loop(
    k: &mut FunctionBuilder,
    start: Reg<ty::U32>,
    end: u32,
    step: u32,
    body: impl FnOnce(&mut FunctionBuilder, Reg<ty::U32>) -> Result<()>,
) -> Result<()> {
    let i = k.reg::<ty::U32>();
    k.mov(i, start)?;
    let (top, done, out) = (k.label(), k.label(), k.pred());
    k.place(top)?;
    k.setp(CmpOp::Ge, out, i, end)?;
    k.when(out).bra(done)?;
    body(k, i)?;
    k.add(i, i, step)?;
    k.bra(top)?;
    k.place(done)
}

/// The op is the kind of the variant (a guard for the lowering functions).
pub fn expect_copy<'a>(ctx: &'a OpCtx<'a>) -> Result<(&'a TileRef, &'a TileRef)> {
    match &ctx.op {
        TileOp::Copy { dst, src }
        | TileOp::CopyAsync { dst, src, .. }
        | TileOp::Cast { dst, src } => Ok((dst, src)),
        _ => Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::Invalid,
            "not a copy",
        )),
    }
}
