//! A 2-D TMA copy through shared memory, written with `KernelBuilder`: the kernel of
//! `examples/tma_copy` (`main.rs` prints, launches and checks it). This file is also the
//! library's built-in `tma_copy` (`ptxkit dump tma_copy`, the self-test): one definition.

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::space::SharedScope;
use ptxkit::isa::{StateSpace, Target, ty};
use ptxkit::kernel::{BuiltKernel, KernelBuilder, Result};
use ptxkit::runtime::{ExtentFacts, TmaBox};
use ptxkit::smem::SwizzleMode;
use ptxkit::smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, WaitMode};
use ptxkit::tile::ExecScope;

/// The box: 32 rows of 32 f32 = 128 bytes, the 128-byte swizzle's span.
pub const BOX: u32 = 32;
/// Threads per CTA.
pub const THREADS: u32 = 128;

/// `dst[r, c] = src[r, c] + (r % 32) * 32 + c % 32` over `rows x cols` f32 tensors, both whole
/// numbers of 32 x 32 boxes; one CTA per box.
pub fn build(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("tma_copy", target);
    // Facts the launcher checks: a shape that is not whole boxes is refused before the launch.
    let boxes = ExtentFacts::NONE
        .multiple_of(u64::from(BOX))
        .at_least(u64::from(BOX));
    let rows = k.symbol_with("rows", boxes)?;
    let cols = k.symbol_with("cols", boxes)?;
    let tma = TmaBox::new([BOX, BOX]).swizzle(SwizzleMode::B128);
    let src = k.tma_tensor::<ty::F32>("src", [rows, cols], tma.clone())?;
    let dst = k.tma_tensor::<ty::F32>("dst", [rows, cols], tma)?;
    let [bx, by] = k.cta_id([cols / BOX, rows / BOX])?;
    let [tx] = k.thread_id([THREADS])?;
    // The shared tile is the box, swizzled as the tensor map writes it.
    let tile = k.tma_box_buffer("tile", &src)?;
    // One mbarrier, named in the kernel's barrier protocol: the TMA load records the bytes it
    // delivers against it, and `sync.finish()` below holds them to the `expect_tx` announced (a
    // mismatch is a build error naming `full`, not a hang on the GPU).
    let addr = k.pool_bytes("full", 8, 8)?;
    let mut sync = BarrierSync::new("tma_copy", WaitMode::Spin);
    let full = sync
        .declare_one("full", 1, addr)
        .map_err(|e| k.error(e.to_string()))?;
    // This CTA's box of each tensor, at block coordinates (row, column): tile operands with the
    // box's shape and swizzle.
    let src_box = k.tma_tile_at(&src, [by.into(), bx.into()])?;
    let dst_box = k.tma_tile_at(&dst, [by.into(), bx.into()])?;
    let leader = k.cmp(CmpOp::Eq, tx, 0)?;
    let one = ExecScope::Thread;

    // Thread 0: the barrier for one arrival and the box's bytes, then the load.
    k.if_(leader, |k| {
        sync.init(k.isa(), full)?;
        k.fence_mbarrier_init()?;
        let bytes = src.box_bytes() as u32;
        sync.arrive(k.isa(), full, Arrival::ExpectTx(bytes), ArriveSite::Loop)?;
        k.copy_async(&tile, &src_box, Some((&mut sync, full)), None, one)?; // copy_async.tma_load
        Ok(())
    })
    .end()?;
    k.bar_sync(0u32, None)?;
    sync.wait(k.isa(), full.at, None, full.addr, 0u32)?;

    // Every thread: tile[r, c] += r * 32 + c, through the swizzle.
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

    // The generic-proxy writes are made visible to the TMA store (the async proxy), then thread
    // 0 stores the box and waits until shared memory has been read.
    k.fence_proxy_async(Some(StateSpace::Shared(SharedScope::Cta)))?;
    k.bar_sync(0u32, None)?;
    k.if_(leader, |k| {
        k.copy_async(&dst_box, &tile, None, None, one)?; // copy_async.tma_store
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)?;
        Ok(())
    })
    .end()?;
    sync.finish()
        .map_err(|e| k.error(format!("barrier protocol: {e}")))?;
    k.finish()
}

/// The host reference: `src` plus each element's index within its box.
pub fn reference(src: &[f32], cols: usize) -> Vec<f32> {
    let b = BOX as usize;
    src.iter()
        .enumerate()
        .map(|(i, &x)| x + (((i / cols) % b) * b + (i % cols) % b) as f32)
        .collect()
}
