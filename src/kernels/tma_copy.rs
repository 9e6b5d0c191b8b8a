//! A 2-D TMA copy through shared memory: each CTA loads a 32 x 32 f32 box of `src` with
//! `cp.async.bulk.tensor` (128-byte swizzle, completing on an mbarrier), adds to every element its
//! row-major index within the box (read and written through the swizzled shared buffer, so a wrong
//! swizzle shows in the result), and stores the box to `dst` with a TMA store.
//!
//! Shapes are compile-time parameters (the `T.jit` model): the kernel is rebuilt per shape. Both
//! tensors are TMA tensor parameters ([`KernelBuilder::tma_tensor`]): the kernel declares their
//! box and swizzle once, and the launch passes the device tensors, from which the launcher builds
//! the tensor maps. `examples/tma_copy.rs` is the same kernel over symbolic extents.

use ptx_isa::builder::{ArriveOpts, CmpOp, TmaLoadOpts};
use ptx_isa::spaces::{Shared, SharedCluster};
use ptx_isa::{Addr, Module, Reg, Sinkable, StateSpace, Target, ty};
use smem::SwizzleMode;

use super::gpu::{GpuCtx, Report, RunResult, max_abs_err};
use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Ptr, Result};
use crate::runtime::Arg;
use crate::signature::TmaBox;

/// The box: 32 rows of 32 f32 = 128 bytes, the 128-byte swizzle's span.
pub const BOX: u32 = 32;
/// Threads per CTA.
pub const THREADS: u32 = 128;
/// Default rows and columns.
pub const SHAPE: (u32, u32) = (256, 512);

fn s32(k: &KernelBuilder, r: Reg<ty::U32>) -> Result<Reg<ty::S32>> {
    r.retype::<ty::S32>().map_err(|e| k.error(e.to_string()))
}

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
    let bar = k.pool_bytes("full", 8, 8)?;
    let Some(Ptr::Shared(base)) = tile.data() else {
        return Err(k.error("the tile is not in shared memory"));
    };
    let x0 = k.eval(bx * BOX)?;
    let y0 = k.eval(by * BOX)?;
    let (x0, y0) = (s32(&k, x0)?, s32(&k, y0)?);
    let leader = k.cmp(CmpOp::Eq, tx, 0)?;
    k.comment("thread 0: barrier for one arrival plus the box's bytes, then the TMA load");
    k.if_(leader, |k| {
        k.mbarrier_init(Addr::<Shared>::reg32(bar), 1u32)?;
        k.fence_mbarrier_init()?;
        let bytes = src.box_bytes() as u32;
        k.mbarrier_arrive_with(
            &ArriveOpts {
                expect_tx: Some(bytes.into()),
                ..ArriveOpts::default()
            },
            Sinkable::Sink,
            Addr::<Shared>::reg32(bar),
        )?;
        k.tma_load(
            &TmaLoadOpts::default(),
            Addr::<SharedCluster>::reg32(base),
            src.map(),
            &[x0.into(), y0.into()],
            Addr::<SharedCluster>::reg32(bar),
        )?;
        Ok(())
    })
    .end()?;
    k.bar_sync(0u32, None)?;
    k.mbarrier_wait_parity(Addr::<Shared>::reg32(bar), 0u32)?;
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
        k.tma_store(
            dst.map(),
            &[x0.into(), y0.into()],
            Addr::<Shared>::reg32(base),
            None,
        )?;
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)?;
        Ok(())
    })
    .end()?;
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

/// Runs on the default shape with fresh data; `dst` poisoned.
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let (rows, cols) = (SHAPE.0 as usize, SHAPE.1 as usize);
    let built = build(ctx.target())?;
    let k = ctx.load(&built)?;
    let hsrc = ctx.rng.vec_f32(rows * cols);
    let src = ctx.upload(&hsrc, &[rows, cols])?;
    let mut dst = ctx.poisoned(&[rows, cols])?;
    // The launcher builds both tensor maps from the tensors and the kernel's declared box.
    k.launch(
        &ctx.stream,
        &mut [Arg::tensor(&src), Arg::tensor_mut(&mut dst)],
    )?;
    ctx.stream.synchronize()?;
    let got = ctx.download(&dst)?;
    Ok(Report {
        max_err: max_abs_err(&got, &reference(&hsrc, rows, cols)),
        tolerance: 0.0,
        detail: format!(
            "{rows} x {cols} f32, {BOX} x {BOX} boxes, {} B dynamic smem",
            built.launch_spec().dynamic_smem_bytes
        ),
    })
}
