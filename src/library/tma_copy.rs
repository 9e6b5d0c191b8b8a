//! A 2-D TMA copy through shared memory: each CTA loads a 32 x 32 f32 box of `src` with
//! `cp.async.bulk.tensor` (128-byte swizzle, completing on an mbarrier), adds to every element its
//! row-major index within the box (read and written through the swizzled shared buffer, so a wrong
//! swizzle shows in the result), and stores the box to `dst` with a TMA store.
//!
//! Shapes are compile-time parameters (the `T.jit` model): the kernel is rebuilt per shape. Both
//! tensors are TMA tensor parameters ([`KernelBuilder::tma_tensor`]): the kernel declares their
//! box and swizzle once, and the launch passes the device tensors, from which the launcher builds
//! the tensor maps. `examples/tma_copy.rs` is the same kernel over symbolic extents.

use ptx_isa::builder::CmpOp;
use ptx_isa::{Module, StateSpace, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::sync::{BarrierSync, WaitMode};

use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Result};
use crate::signature::TmaBox;
use crate::tile::ExecScope;

/// The box: 32 rows of 32 f32 = 128 bytes, the 128-byte swizzle's span.
pub const BOX: u32 = 32;
/// Threads per CTA.
pub const THREADS: u32 = 128;
/// Default rows and columns.
pub const SHAPE: (u32, u32) = (256, 512);

/// The kernel `tma_copy(src, dst)` for `rows x cols` tensors (multiples of [`BOX`]).
pub fn build_for(target: Target, rows: u32, cols: u32) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("tma_copy", target);
    if rows % BOX != 0 || cols % BOX != 0 || rows == 0 || cols == 0 {
        return Err(k.error(format!(
            "{rows} x {cols} is not a whole number of {BOX} x {BOX} boxes"
        )));
    }
    let shape = [Expr::from(rows), Expr::from(cols)];
    let tma = TmaBox::new([BOX, BOX]).swizzle(SwizzleMode::B128);
    let src = k.tma_tensor::<ty::F32>("src", shape.clone(), tma.clone())?;
    let dst = k.tma_tensor::<ty::F32>("dst", shape, tma)?;
    let [bx, by] = k.cta_id([cols / BOX, rows / BOX])?;
    let [tx] = k.thread_id([THREADS])?;
    let tile = k.tma_box_buffer("tile", &src)?;
    // One mbarrier, named in the kernel's barrier protocol: the TMA load records the bytes it
    // delivers against it, and `finish` below holds them to the `expect_tx` announced.
    let addr = k.pool_bytes("full", 8, 8)?;
    let mut sync = BarrierSync::new("tma_copy", WaitMode::Spin);
    let full = sync
        .declare_one("full", 1, addr)
        .map_err(|e| k.error(e.to_string()))?;
    // This CTA's box of each tensor, at block coordinates (row, column).
    let src_box = k.tma_tile_at(&src, [by.into(), bx.into()])?;
    let dst_box = k.tma_tile_at(&dst, [by.into(), bx.into()])?;
    let leader = k.cmp(CmpOp::Eq, tx, 0)?;
    k.comment("thread 0: barrier for one arrival plus the box's bytes, then the TMA load");
    k.if_(leader, |k| {
        sync.init(k.isa(), full)?;
        k.fence_mbarrier_init()?;
        let bytes = src.box_bytes() as u32;
        sync.arrive_expect_tx(k.isa(), full.at, full.addr, bytes)?;
        k.copy_async(
            &tile,
            &src_box,
            Some((&mut sync, full)),
            None,
            ExecScope::Thread,
        )?;
        Ok(())
    })
    .end()?;
    k.bar_sync(0u32, None)?;
    sync.wait(k.isa(), full.at, None, full.addr, 0u32)?;
    k.comment("tile[r, c] += r * 32 + c, through the swizzled buffer");
    k.unroll(0..BOX * BOX / THREADS, |k, e| {
        let r = k.let_("r", tx / BOX + e * (THREADS / BOX))?;
        let c = k.let_("c", tx % BOX)?;
        let v = k.load(&tile, [r, c])?;
        let idx = k.eval(r * BOX + c)?;
        let f = k.reg::<ty::F32>();
        k.cvt(f, idx)?;
        k.add(v, v, f)?;
        k.store(&tile, [r, c], v)
    })?;
    k.fence_proxy_async(Some(StateSpace::Shared(ptx_isa::space::SharedScope::Cta)))?;
    k.bar_sync(0u32, None)?;
    k.if_(leader, |k| {
        k.copy_async(&dst_box, &tile, None, None, ExecScope::Thread)?;
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)?;
        Ok(())
    })
    .end()?;
    sync.finish()
        .map_err(|e| k.error(format!("barrier protocol: {e}")))?;
    k.finish()
}

/// [`build_for`] with the default [`SHAPE`].
pub fn build(target: Target) -> Result<BuiltKernel> {
    build_for(target, SHAPE.0, SHAPE.1)
}

/// The module, for `ptxkit dump tma_copy`.
pub fn tma_copy(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}

/// The host reference: `src` plus each element's index within its box.
pub fn reference(src: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let b = BOX as usize;
    (0..rows * cols)
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            src[i] + ((r % b) * b + c % b) as f32
        })
        .collect()
}
