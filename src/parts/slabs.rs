//! Loading a `rows x d` tile of 16-bit elements by TMA as the slabs wgmma reads: one box of 64
//! columns (the 128-byte swizzle's span) per slab, slab `s` at `dst + s · rows · 128`, each box
//! completing on the stage's barrier. The attention kernels' Q, K, V and dO tiles; and the way
//! back, a warpgroup's registers staged in shared memory for one thread's bulk store or
//! reduction ([`stage_for_bulk`]: the attention's O, the backward's dQ).

use ptx_isa::{Reg, ty};
use smem::SwizzleMode;
use smem::pipeline::sync::{BarrierSync, NamedBarrier};

use crate::kernel::{Elem, Expr, KernelBuilder, Result, TmaTensor, Var};
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
    stage_for_bulk_then(k, dst, src, bar, |_| Ok(()))
}

/// [`stage_for_bulk`] with `staged` emitted once `src` is copied, before the fence and the
/// barrier: work that needs `src`'s registers free (the attention backward's next `Sᵀ`, a wgmma
/// into registers the copied values held) and may run while the warpgroup meets.
pub fn stage_for_bulk_then(
    k: &mut KernelBuilder,
    dst: &TileRef,
    src: &impl TileOperand,
    bar: Expr,
    staged: impl FnOnce(&mut KernelBuilder) -> Result<()>,
) -> Result<Reg<ty::U32>> {
    k.copy(dst, src, ExecScope::Warpgroup)?;
    staged(k)?;
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
    load_boxes(k, sync, bar, t, (dst, rows, rows), d, coords, None)
}

/// A CTA pair's share of a `rows x d` tile at `dst` that both CTAs read (a cluster of two
/// whose producers each load half of it): this CTA, of rank `rank` (0 or 1), loads rows
/// `rank · rows / 2 ..` of every slab, `coords` being those rows' first (as [`load_slabs`]
/// takes them), and multicasts them into both CTAs' slabs (the same offsets in each, PTX ISA
/// 9.7.9.27 `cp.async.bulk.tensor` `.multicast::cluster`, ctaMask `0b11`), each box
/// completing on `bar` in both CTAs. `bar` is recorded with the peer's half too, which the peer's producer
/// multicasts here from the same line of the program: the caller announces the whole tile's
/// bytes (`rows · d · 2`). `t`'s boxes are `rows / 2` rows, a multiple of 8 (the 128-byte
/// swizzle's 1024-byte period, so each half starts on one).
#[allow(clippy::too_many_arguments)]
pub fn load_slabs_in_pair<T: Elem>(
    k: &mut KernelBuilder,
    sync: &mut BarrierSync,
    bar: NamedBarrier,
    t: &TmaTensor<T>,
    (dst, rows): (Reg<ty::U32>, u32),
    d: u32,
    coords: &[Expr],
    rank: Var,
) -> Result<()> {
    let half = rows / 2;
    if rows % 16 != 0 {
        return Err(k.error(format!(
            "a pair's halves of a {rows}-row tile: a multiple of 8 rows each"
        )));
    }
    let rank = k.eval(rank)?;
    let mine = k.reg::<ty::U32>();
    k.mad_lo(mine, rank, half * SLAB * 2, dst)?;
    load_boxes(k, sync, bar, t, (mine, rows, half), d, coords, Some(0b11))?;
    sync.copy(bar.at, half * d * 2);
    Ok(())
}

/// The boxes of `box_rows` rows of each slab (slab `s` at `dst + s · slab_rows · 128`) from
/// `t` at `coords`, completing on `bar`, multicast to the CTAs of `mask` where there is one.
#[allow(clippy::too_many_arguments)]
fn load_boxes<T: Elem>(
    k: &mut KernelBuilder,
    sync: &mut BarrierSync,
    bar: NamedBarrier,
    t: &TmaTensor<T>,
    (dst, slab_rows, box_rows): (Reg<ty::U32>, u32, u32),
    d: u32,
    coords: &[Expr],
    mask: Option<u16>,
) -> Result<()> {
    for s in 0..d / SLAB {
        let at = if s == 0 {
            dst
        } else {
            let a = k.reg::<ty::U32>();
            k.add(a, dst, s * slab_rows * SLAB * 2)?;
            a
        };
        let tile = TileRef::shared_row_major(T::DTYPE, box_rows, SLAB, at, 1024)
            .with_swizzle(SwizzleMode::B128);
        let mut origin = coords.to_vec();
        origin.push(Expr::from(s * SLAB));
        let src = k.tma_box_at(t, &origin)?;
        k.copy_async(
            &tile,
            &src,
            Some((&mut *sync, bar)),
            mask.map(Into::into),
            ExecScope::Thread,
        )?;
    }
    Ok(())
}
