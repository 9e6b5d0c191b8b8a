//! Loading a `rows x d` tile of 16-bit elements by TMA as the slabs wgmma reads: one box of 64
//! columns (the 128-byte swizzle's span) per slab, slab `s` at `dst + s · rows · 128`, each box
//! completing on the stage's barrier. The attention kernels' Q, K, V and dO tiles; and the way
//! back, a warpgroup's registers staged in shared memory for one thread's bulk store or
//! reduction ([`stage_for_bulk`]: the attention's O, the backward's dQ).

use ptx_isa::{Reg, ty};
use smem::SwizzleMode;
use smem::pipeline::sync::{BarrierSync, NamedBarrier};

use crate::kernel::{Elem, Expr, KernelBuilder, Result, TmaTensor};
use crate::tile::{ExecScope, TileOperand, TileRef};

/// A warpgroup's registers `src` copied into the shared tile `dst`, the writes made visible to
/// the async proxy (`fence.proxy.async.shared::cta`, PTX ISA 9.7.12.4) and the warpgroup's 128
/// threads met at named barrier `bar` (9.7.13.1): one of them may then hand the tile to a TMA
/// store or a bulk reduction. The barrier's id, evaluated.
pub fn stage_for_bulk(
    k: &mut KernelBuilder,
    dst: &TileRef,
    src: &impl TileOperand,
    bar: Expr,
) -> Result<Reg<ty::U32>> {
    k.copy(dst, src, ExecScope::Warpgroup)?;
    k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
        ptx_isa::space::SharedScope::Cta,
    )))?;
    let bar = k.eval(bar)?;
    k.sync_named(bar, 128)?;
    Ok(bar)
}

/// Columns of one slab: 64 16-bit elements, 128 bytes.
pub const SLAB: u32 = 64;

/// Loads a `rows x d` tile of `t` at `coords` (every coordinate but the last, the column's:
/// `[batch, row0, head]`, or `[row0, head]` packed) into the slabs at `dst`, completing on
/// `bar` (whose bytes the caller announces: `rows · d · 2`).
#[allow(clippy::too_many_arguments)]
pub fn load_slabs<T: Elem>(
    k: &mut KernelBuilder,
    sync: &mut BarrierSync,
    bar: NamedBarrier,
    t: &TmaTensor<T>,
    dst: Reg<ty::U32>,
    rows: u32,
    d: u32,
    coords: &[Expr],
) -> Result<()> {
    for s in 0..d / SLAB {
        let at = if s == 0 {
            dst
        } else {
            let a = k.reg::<ty::U32>();
            k.add(a, dst, s * rows * SLAB * 2)?;
            a
        };
        let tile = TileRef::shared_row_major(T::DTYPE, rows, SLAB, at, 1024)
            .with_swizzle(SwizzleMode::B128);
        let mut origin = coords.to_vec();
        origin.push(Expr::from(s * SLAB));
        let src = k.tma_box_at(t, &origin)?;
        k.copy_async(
            &tile,
            &src,
            Some((&mut *sync, bar)),
            None,
            ExecScope::Thread,
        )?;
    }
    Ok(())
}
