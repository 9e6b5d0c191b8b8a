//! Split-K's in-kernel ordered fixup ([`GemmConfig::split_fixup`]): the parts of a tile sum
//! themselves, so split-K needs no second launch.
//!
//! Each consumer warpgroup stores its part's f32 accumulators to the workspace in fragment
//! order ([`declare_partials`]: `[split_k, fixup_tiles, bn / 8, 128, 4]`, a thread's four
//! consecutive values one 16-byte vector, the warp's 32 vectors 512 contiguous bytes), whatever
//! the tile's place in C: no bounds, no transposition. Then it takes one ticket for its 64-row
//! block of the tile ([`crate::parts::ticket::last_arrival`]): the warpgroup meets at its named
//! barrier (`bar.sync 1 + cw, 128`, PTX ISA 9.7.13.1: the threads' stores are performed
//! relative to every thread of the barrier), its first thread adds to the block's counter with
//! `atom.acq_rel.gpu.global.add.u32` (PTX ISA 9.7.13.5): its release publishes the warpgroup's
//! stores (ordered before it by the barrier), its acquire makes visible those of the parts that
//! took tickets before it (8.9.1 "Release and acquire patterns"). A second barrier hands the
//! verdict to the whole warpgroup (`bar.red.or.pred`, 9.7.13.1: the ticket was the last,
//! `split_k - 1`), and orders the first thread's acquire before the others' loads.
//!
//! The warpgroup of the last part resets the counter to 0 for the next launch, loads each
//! part's values of its own thread (all loads straight-line, each 16 bytes, so they are in
//! flight together), sums them in part order (`0 + p0 + p1 + ...`: the order of the separate
//! sum, [`super::split`], so the result is the same bits whichever part arrives last, and the
//! same as the two-launch form's) and stores C. No thread waits for another part (no spin: a
//! part that has not run yet cannot hold up one that has), and no float is added atomically.

use ptx_isa::ty;

use super::GemmConfig;
use crate::kernel::{Buffer, Elem, Expr, KernelBuilder, Result, TensorOpts, Var};
use crate::parts::WarpSpecialized;
use crate::parts::ticket::last_arrival;

/// f32 values per vector access of the workspace: 16 bytes (`ld.global.v4.f32`, PTX ISA
/// 9.7.9.8).
const VECTOR: u32 = 4;

/// The fixup's operands: C (the problem's, `[m, n]`: the kernel's `[n, m]` when swapped) and
/// the counters, `[fixup_tiles]` u32, one per 64-row block of a tile ([`fixup_tiles`]), zero
/// before the first launch and left zero by each.
#[derive(Debug, Clone)]
pub struct Fixup<O: Elem> {
    /// C.
    pub c: Buffer<O>,
    /// One counter per 64-row block of each tile.
    pub counters: Buffer<ty::U32>,
    /// The kernel's tile columns, `ceil(n / bn)`.
    tiles_n: Expr,
}

/// The 64-row blocks a launch of `cfg` at the kernel's extents `m x n` (the problem's `n x m`
/// when swapped) sums: the blocks of every tile (a tile's second block too where it lies
/// wholly past `m`, and in a CTA pair along M the second CTA's tile past `m`: its consumers
/// still store their parts and take tickets) times the tile columns. The workspace's second
/// extent and the counters' one.
pub fn fixup_tiles(cfg: &GemmConfig, (m, n): (usize, usize)) -> usize {
    let bm = cfg.bm() as usize;
    let rows = m.div_ceil(bm).next_multiple_of(cfg.cluster_m as usize);
    rows * (bm / 64) * n.div_ceil(cfg.bn as usize)
}

/// The workspace's shape for `cfg` at the kernel's extents: `[split_k, fixup_tiles, bn / 8,
/// 128, 4]` f32 (a 64 x `bn` block is `bn / 2` values for each of a warpgroup's 128 threads,
/// PTX ISA 9.7.15.5.1.1 "wgmma accumulator fragments": `bn / 8` vectors of 4).
pub fn workspace_shape(cfg: &GemmConfig, (m, n): (usize, usize)) -> [usize; 5] {
    [
        cfg.split_k as usize,
        fixup_tiles(cfg, (m, n)),
        (cfg.bn / (2 * VECTOR)) as usize,
        WarpSpecialized::WARPGROUP as usize,
        VECTOR as usize,
    ]
}

/// Declares the workspace the parts store their accumulators to, [`workspace_shape`]'s
/// `[split_k, fixup_tiles, bn / 8, 128, 4]` f32, 16-byte aligned (its extent `fixup_tiles` a
/// symbol the launcher reads from it).
pub fn declare_partials(k: &mut KernelBuilder, cfg: &GemmConfig) -> Result<Buffer<ty::F32>> {
    let tiles = k.symbol("fixup_tiles")?;
    k.tensor::<ty::F32>(
        "partials",
        [
            Expr::from(cfg.split_k),
            Expr::from(tiles),
            Expr::from(cfg.bn / (2 * VECTOR)),
            Expr::from(WarpSpecialized::WARPGROUP),
            Expr::from(VECTOR),
        ],
        TensorOpts::default().align(16),
    )
}

impl<O: Elem> Fixup<O> {
    /// Declares C and the counters (after `partials`, [`declare_partials`], whose blocks they
    /// count) for `cfg` at the kernel's extents `m`, `n`.
    pub fn declare(
        k: &mut KernelBuilder,
        cfg: &GemmConfig,
        [m, n]: [Var; 2],
        partials: &Buffer<ty::F32>,
    ) -> Result<Self> {
        let shape = match cfg.swap_ab {
            true => [n, m],
            false => [m, n],
        };
        let c = k.tensor::<O>("c", shape, TensorOpts::default())?;
        let tiles = partials.shape[1].clone();
        let counters = k.tensor::<ty::U32>("counters", [tiles], TensorOpts::default())?;
        Ok(Fixup {
            c,
            counters,
            tiles_n: Expr::ceil_div(n, cfg.bn),
        })
    }

    /// Consumer warpgroup `cw`'s part `split` of the 64-row block `block` of tile column `nb`
    /// (`lt` its thread): stores `acc` to `partials` ([`declare_partials`]), takes the
    /// warpgroup's ticket, and if it is the last of `parts`, sums the parts' values into `acc`
    /// in part order, then `store(k)` writes `acc` to C.
    #[allow(clippy::too_many_arguments)]
    pub fn part_and_sum(
        &self,
        k: &mut KernelBuilder,
        partials: &Buffer<ty::F32>,
        parts: u32,
        [split, block, nb]: [Var; 3],
        (cw, lt): (Var, Var),
        acc: &Buffer<ty::F32>,
        store: impl FnOnce(&mut KernelBuilder) -> Result<()>,
    ) -> Result<()> {
        let Some(values) = acc.regs().map(<[_]>::to_vec) else {
            return Err(k.error("the fixup's accumulator is not a register tile"));
        };
        if values.len() % VECTOR as usize != 0 {
            return Err(k.error("the fixup's accumulator is not whole vectors of 4"));
        }
        let row = k.let_("fixup_row", Expr::from(block) * self.tiles_n.clone() + nb)?;
        let at = |s: Expr, v: usize| {
            [
                s,
                row.into(),
                Expr::from(v as u32),
                lt.into(),
                Expr::from(0u32),
            ]
        };
        for (v, four) in values.chunks(VECTOR as usize).enumerate() {
            k.store_n(partials, at(split.into(), v), four)?;
        }
        // The warpgroup's own named barrier (the TMA-store epilogue's, which split-K does not
        // take): its stores before the ticket.
        let threads = WarpSpecialized::WARPGROUP;
        let cw = k.eval(cw)?;
        let bar = k.reg::<ty::U32>();
        k.add(bar, cw, 1u32)?;
        let at_row = vec![Expr::from(row)];
        last_arrival(k, &self.counters, at_row, parts, (bar, threads), lt, |k| {
            for (v, four) in values.chunks(VECTOR as usize).enumerate() {
                let loaded = (0..parts)
                    .map(|s| k.load_vec(partials, at(s.into(), v)))
                    .collect::<Result<Vec<_>>>()?;
                for (i, &sum) in four.iter().enumerate() {
                    k.mov(sum, 0.0f32)?;
                    for part in &loaded {
                        let Some(&x) = part.get(i) else {
                            return Err(k.error("the workspace's vector is narrower than 4"));
                        };
                        k.add(sum, sum, x)?;
                    }
                }
            }
            store(k)
        })
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

    /// A CTA pair of ping-pong tiles ([`GemmConfig::decode_pair_split`]): the pair's second
    /// CTA takes row tile `2·pair + 1`, past `m` where the row tiles are odd, and its block's
    /// counter row (`mb · tiles_n + nb`) is still inside [`fixup_tiles`].
    #[test]
    fn the_counters_cover_a_pairs_second_tile_past_m() {
        let cfg = GemmConfig::large().decode_pair_split(48, 4, true);
        for m in [1usize, 64, 65, 128, 300] {
            for n in [16usize, 1001, 2112] {
                let tiles_n = n.div_ceil(cfg.bn as usize);
                let last_block = 2 * m.div_ceil(128) - 1;
                let last_row = last_block * tiles_n + tiles_n - 1;
                assert!(last_row < fixup_tiles(&cfg, (m, n)), "{m} x {n}");
            }
        }
    }

    /// The workspace holds each block's `64 x bn` values once per part: a thread's `bn / 2`
    /// accumulators in vectors of 4, for each of 128 threads.
    #[test]
    fn the_workspace_holds_every_part_of_every_block() {
        for bn in [16u32, 32, 64, 128] {
            let cfg = GemmConfig {
                split_k: 3,
                split_fixup: true,
                ..GemmConfig::large().swapped(bn, 3)
            };
            let shape = workspace_shape(&cfg, (300, 70));
            let blocks = fixup_tiles(&cfg, (300, 70));
            assert_eq!(shape[..2], [3, blocks]);
            assert_eq!(shape[2..].iter().product::<usize>(), 64 * bn as usize);
        }
    }
}
