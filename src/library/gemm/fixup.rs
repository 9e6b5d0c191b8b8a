//! Split-K's in-kernel ordered fixup ([`GemmConfig::split_fixup`]): the parts of a tile sum
//! themselves, so split-K needs no second launch.
//!
//! Each part stores its f32 partial block as before (`partials [split_k, m, n]`), then each
//! consumer thread takes a ticket on its own counter, one per (64-row block, tile column,
//! thread of the warpgroup): `atom.acq_rel.gpu.global.add.u32` (PTX ISA 9.7.13.5). The
//! thread that draws the last ticket (`split_k - 1`) holds the same fragment positions as the
//! threads of the other parts that drew before it, whose partials their release made visible
//! to its acquire (PTX ISA 8.9.1 "Release and acquire patterns"); it resets its counter to 0
//! for the next launch, sums the `split_k` partials of its positions in part order (`0 + p0 +
//! p1 + ...`, the order of the separate sum, [`super::split`]: the result is the same bits
//! whoever arrives last, and the same as the two-launch form's) and stores C. No thread waits
//! for another (no spin: a part that has not run yet cannot hold up one that has), and no
//! float is added atomically.

use ptx_isa::builder::{AtomOp, AtomSem, CmpOp, Scope};
use ptx_isa::{Imm, ty};

use super::GemmConfig;
use crate::kernel::{Buffer, Elem, Expr, KernelBuilder, Result, TensorOpts, Var};
use crate::tile::{Elementwise, ExecScope, TileRef};

/// The fixup's operands: C (the problem's, `[m, n]`: the kernel's `[n, m]` when swapped) and
/// the counters, `[fixup_tiles, 128]` u32 (`fixup_tiles` = the 64-row blocks of the kernel's
/// tiles times its tile columns, [`fixup_tiles`]), zero before the first launch and left zero
/// by each.
#[derive(Debug, Clone)]
pub struct Fixup<O: Elem> {
    /// C.
    pub c: Buffer<O>,
    /// One counter per block, tile column and consumer thread.
    pub counters: Buffer<ty::U32>,
    /// The kernel's tile columns, `ceil(n / bn)`.
    tiles_n: Expr,
}

/// The counters' rows a launch of `cfg` at the kernel's extents `m x n` (the problem's `n x
/// m` when swapped) needs: the 64-row blocks of every tile (a tile's second block too where
/// it lies wholly past `m`: its consumer still takes tickets) times the tile columns.
pub fn fixup_tiles(cfg: &GemmConfig, (m, n): (usize, usize)) -> usize {
    let bm = cfg.bm() as usize;
    m.div_ceil(bm) * (bm / 64) * n.div_ceil(cfg.bn as usize)
}

impl<O: Elem> Fixup<O> {
    /// Declares C and the counters (after the partials) for `cfg` at the kernel's extents
    /// `m`, `n`.
    pub fn declare(k: &mut KernelBuilder, cfg: &GemmConfig, [m, n]: [Var; 2]) -> Result<Self> {
        let shape = match cfg.swap_ab {
            true => [n, m],
            false => [m, n],
        };
        let c = k.tensor::<O>("c", shape, TensorOpts::default())?;
        let tiles = k.symbol("fixup_tiles")?;
        let threads = crate::parts::WarpSpecialized::WARPGROUP;
        let counters = k.tensor::<ty::U32>(
            "counters",
            [Expr::from(tiles), Expr::from(threads)],
            TensorOpts::default(),
        )?;
        Ok(Fixup {
            c,
            counters,
            tiles_n: Expr::ceil_div(n, cfg.bn),
        })
    }

    /// After this thread stored its part's partial of the 64-row block `block` of tile column
    /// `nb` (thread `lt` of its warpgroup, fragment `frag`): its ticket, and if it is the last
    /// of `parts`, the ordered sum of its positions' partials (of `partials`, the kernel's
    /// `[parts, m, n]`) into `acc`, then `store(k)` writes `acc` to C.
    #[allow(clippy::too_many_arguments)]
    pub fn sum_if_last(
        &self,
        k: &mut KernelBuilder,
        frag: &layouts::fragment::TvLayout,
        partials: &Buffer<ty::F32>,
        parts: u32,
        [block, nb]: [Var; 2],
        lt: Var,
        acc: &Buffer<ty::F32>,
        store: impl FnOnce(&mut KernelBuilder) -> Result<()>,
    ) -> Result<()> {
        let wg = ExecScope::Warpgroup;
        let row = k.let_("fixup_row", Expr::from(block) * self.tiles_n.clone() + nb)?;
        let ticket = k.atom_flag(
            &self.counters,
            [row, lt],
            AtomOp::Add,
            1u32,
            (AtomSem::AcqRel, Scope::Gpu),
        )?;
        let ticket = k.bind("fixup_ticket", ticket);
        let last = k.cmp(CmpOp::Eq, ticket, parts - 1)?;
        k.if_(last, |k| {
            // Every part has arrived at these positions: the counter is free for the next launch.
            k.store(&self.counters, [row, lt], 0u32)?;
            let sum = k.tile_ref(acc)?;
            k.fill(&sum, Imm::f32(0.0), wg)?;
            let regs = k.regs::<ty::F32>(frag.values() as usize);
            let part = TileRef::registers(
                ptx_isa::ScalarType::F32,
                frag.clone(),
                regs.iter().map(|r| r.as_ref()).collect(),
            );
            let bn = frag.cols() as u32;
            k.for_range(0u32, parts, |k, s| {
                let origin = [s.into(), Expr::from(block) * 64, Expr::from(nb) * bn];
                let view = k.rows_at(partials, &origin, 1, [64, bn])?;
                k.copy(&part, &view, wg)?;
                k.elementwise(&sum, &sum, Some(&part), Elementwise::Add, wg)?;
                Ok(())
            })?;
            store(k)
        })
        .end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's largest counter row (`block · tiles_n + nb`, with `block = 2·mb + cw` for
    /// the last tile's second consumer) is inside [`fixup_tiles`], also where that block lies
    /// past `m` (m = 64: one tile, two blocks; the 2112 rows of a swapped DeepSeek-V3 shape).
    #[test]
    fn the_counters_cover_every_block_the_kernel_indexes() {
        let cfg = GemmConfig {
            split_k: 2,
            split_fixup: true,
            ..GemmConfig::large().swapped(64, 2)
        };
        for m in [1usize, 64, 65, 128, 129, 300, 2112] {
            for n in [1usize, 16, 64, 65, 200] {
                let tiles_n = n.div_ceil(cfg.bn as usize);
                let last_block = 2 * (m.div_ceil(128) - 1) + 1;
                let last_row = last_block * tiles_n + tiles_n - 1;
                assert!(last_row < fixup_tiles(&cfg, (m, n)), "{m} x {n}");
            }
        }
    }
}
