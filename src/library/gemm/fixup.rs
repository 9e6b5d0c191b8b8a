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
//!
//! Stream-K ([`GemmConfig::stream_k`]) takes the same ticket with a number of parts that
//! varies from tile to tile ([`crate::parts::StreamUnit`]): a unit that is a whole tile stores
//! C at once; a part stores to its CTA's slot of the workspace ([`stream_workspace_shape`]:
//! `[2·grid, 2, bn / 8, 128, 4]`, two slots a CTA, a block a consumer), and the last to arrive
//! loads the tile's parts in k order, one part's vectors at a time, into `0 + p0 + p1 + ...`.

use ptx_isa::builder::CmpOp;
use ptx_isa::ty;

use super::GemmConfig;
use crate::kernel::{Buffer, Elem, Expr, KernelBuilder, Result, TensorOpts, Var};
use crate::parts::ticket::last_arrival;
use crate::parts::{StreamUnit, WarpSpecialized};

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
    in_fragment_order(cfg, [cfg.split_k as usize, fixup_tiles(cfg, (m, n))])
}

/// A workspace `[a, b, bn / 8, 128, 4]` of `cfg`'s 64 x `bn` blocks in fragment order.
fn in_fragment_order(cfg: &GemmConfig, [a, b]: [usize; 2]) -> [usize; 5] {
    [
        a,
        b,
        (cfg.bn / (2 * VECTOR)) as usize,
        WarpSpecialized::WARPGROUP as usize,
        VECTOR as usize,
    ]
}

/// Declares `partials`, a workspace `[a, b, bn / 8, 128, 4]` f32 ([`in_fragment_order`]),
/// 16-byte aligned.
fn declare_in_fragment_order(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    [a, b]: [Expr; 2],
) -> Result<Buffer<ty::F32>> {
    k.tensor::<ty::F32>(
        "partials",
        [
            a,
            b,
            Expr::from(cfg.bn / (2 * VECTOR)),
            Expr::from(WarpSpecialized::WARPGROUP),
            Expr::from(VECTOR),
        ],
        TensorOpts::default().align(16),
    )
}

/// Declares the workspace the parts store their accumulators to, [`workspace_shape`]'s
/// `[split_k, fixup_tiles, bn / 8, 128, 4]` f32, 16-byte aligned (its extent `fixup_tiles` a
/// symbol the launcher reads from it).
pub fn declare_partials(k: &mut KernelBuilder, cfg: &GemmConfig) -> Result<Buffer<ty::F32>> {
    let tiles = k.symbol("fixup_tiles")?;
    declare_in_fragment_order(k, cfg, [cfg.split_k.into(), tiles.into()])
}

/// Stream-K's workspace for a launch of `grid` CTAs ([`GemmConfig::stream_k`]): `[2·grid, bm /
/// 64, bn / 8, 128, 4]` f32, a CTA's two slots (its first and its last unit,
/// [`StreamUnit::slot`]), each a 64 x `bn` block for each consumer warpgroup in fragment order.
/// Its size follows the grid, not the problem.
pub fn stream_workspace_shape(cfg: &GemmConfig, grid: usize) -> [usize; 5] {
    in_fragment_order(cfg, [2 * grid, (cfg.bm() / 64) as usize])
}

/// Declares stream-K's workspace, [`stream_workspace_shape`] (its extent `stream_slots` a
/// symbol the launcher reads from it), 16-byte aligned.
pub fn declare_stream_partials(k: &mut KernelBuilder, cfg: &GemmConfig) -> Result<Buffer<ty::F32>> {
    let slots = k.symbol("stream_slots")?;
    declare_in_fragment_order(k, cfg, [slots.into(), (cfg.bm() / 64).into()])
}

/// Where a block's parts lie in the workspace, and how many there are.
enum PartsAt<'a> {
    /// Split-K: `parts` parts at `[s, row]`, `s` in `0..parts`, all loaded at once.
    Fixed { parts: u32, row: Var },
    /// Stream-K: the unit's tile's parts at `[slot(j), cw]`, `j` in `0..parts`
    /// ([`StreamUnit::slot`]), one part's loads at a time.
    Stream { unit: &'a StreamUnit, cw: Var },
}

impl<O: Elem> Fixup<O> {
    /// Declares C and the counters (after `partials`, [`declare_partials`], whose blocks they
    /// count, or with stream-K [`declare_stream_partials`] and the symbol `fixup_tiles`) for
    /// `cfg` at the kernel's extents `m`, `n`.
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
        let tiles = match cfg.stream_k {
            true => Expr::from(k.symbol("fixup_tiles")?),
            false => partials.shape[1].clone(),
        };
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
        let row = k.let_("fixup_row", Expr::from(block) * self.tiles_n.clone() + nb)?;
        let own = [Expr::from(split), Expr::from(row)];
        let at = PartsAt::Fixed { parts, row };
        self.store_ticket_sum(k, partials, own, (row, at), (cw, lt), acc, store)
    }

    /// Stream-K ([`GemmConfig::stream_k`]): consumer warpgroup `cw`'s block `block` of tile
    /// column `nb` in `unit`, a part of a tile several CTAs share (`unit.parts` ≥ 2): stores
    /// `acc` to the CTA's slot of `partials` ([`declare_stream_partials`]), takes the
    /// warpgroup's ticket, and if it is the last of the tile's parts, sums them into `acc` in
    /// k order, then `store(k)` writes `acc` to C.
    #[allow(clippy::too_many_arguments)]
    pub fn stream_part_and_sum(
        &self,
        k: &mut KernelBuilder,
        partials: &Buffer<ty::F32>,
        unit: &StreamUnit,
        [block, nb]: [Var; 2],
        (cw, lt): (Var, Var),
        acc: &Buffer<ty::F32>,
        store: impl FnOnce(&mut KernelBuilder) -> Result<()>,
    ) -> Result<()> {
        let row = k.let_("fixup_row", Expr::from(block) * self.tiles_n.clone() + nb)?;
        let slot = unit.slot(k, unit.part)?;
        let own = [Expr::from(slot), Expr::from(cw)];
        let at = PartsAt::Stream { unit, cw };
        self.store_ticket_sum(k, partials, own, (row, at), (cw, lt), acc, store)
    }

    /// The fixup's one sequence: `acc` stored at `own` (the workspace's first two indices), the
    /// warpgroup's ticket on counter `row`, and in the last part the parts `at` summed in part
    /// order into `acc`, then `store`.
    #[allow(clippy::too_many_arguments)]
    fn store_ticket_sum(
        &self,
        k: &mut KernelBuilder,
        partials: &Buffer<ty::F32>,
        own: [Expr; 2],
        (row, at): (Var, PartsAt<'_>),
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
        let index =
            |[a, b]: [Expr; 2], v: usize| [a, b, Expr::from(v as u32), lt.into(), Expr::from(0u32)];
        for (v, four) in values.chunks(VECTOR as usize).enumerate() {
            k.store_n(partials, index(own.clone(), v), four)?;
        }
        // The warpgroup's own named barrier (the TMA-store epilogue's, which split-K does not
        // take): its stores before the ticket.
        let threads = WarpSpecialized::WARPGROUP;
        let cw = k.eval(cw)?;
        let bar = k.reg::<ty::U32>();
        k.add(bar, cw, 1u32)?;
        let parts = match &at {
            PartsAt::Fixed { parts, .. } => Expr::from(*parts),
            PartsAt::Stream { unit, .. } => Expr::from(unit.parts),
        };
        let at_row = vec![Expr::from(row)];
        last_arrival(k, &self.counters, at_row, parts, (bar, threads), lt, |k| {
            // `sum = 0 + p0 + p1 + ...` for each of the thread's values.
            let fours = values.chunks(VECTOR as usize);
            match at {
                PartsAt::Fixed { parts, row } => {
                    for (v, four) in fours.enumerate() {
                        // Every part's vector loaded before the adds: all in flight together.
                        let loaded = (0..parts)
                            .map(|s| k.load_vec(partials, index([s.into(), row.into()], v)))
                            .collect::<Result<Vec<_>>>()?;
                        for (i, &sum) in four.iter().enumerate() {
                            k.mov(sum, 0.0f32)?;
                            for part in &loaded {
                                let Some(&x) = part.get(i) else {
                                    return Err(
                                        k.error("the workspace's vector is narrower than 4")
                                    );
                                };
                                k.add(sum, sum, x)?;
                            }
                        }
                    }
                }
                PartsAt::Stream { unit, cw } => {
                    for &sum in &values {
                        k.mov(sum, 0.0f32)?;
                    }
                    // The parts in k order, `batch` at a time: each batch's loads issued
                    // before its adds (in flight together; a part past the last loads the
                    // last part again, and its adds are skipped), about 64 registers of them.
                    let batch = (64 / values.len().max(1)).clamp(1, 8) as u32;
                    let last = k.let_("sk_last_part", Expr::from(unit.parts) - 1u32)?;
                    k.for_range_step(0u32, unit.parts, batch, |k, j| {
                        let mut loaded = Vec::new();
                        for u in 0..batch {
                            let part = k.let_("sk_sum_part", Expr::from(j) + u)?;
                            let (p, l) = (k.eval(part)?, k.eval(last)?);
                            let held = k.min_of(p, l)?;
                            let held = k.bind("sk_held_part", held);
                            let slot = unit.slot(k, held)?;
                            let vectors = (0..fours.len())
                                .map(|v| k.load_vec(partials, index([slot.into(), cw.into()], v)))
                                .collect::<Result<Vec<_>>>()?;
                            loaded.push((part, vectors));
                        }
                        for (u, (part, vectors)) in loaded.iter().enumerate() {
                            let add = |k: &mut KernelBuilder| {
                                for (four, vector) in fours.clone().zip(vectors) {
                                    add_vector(k, four, vector)?;
                                }
                                Ok(())
                            };
                            if u == 0 {
                                add(k)?;
                            } else {
                                let here = k.cmp(CmpOp::Lt, *part, unit.parts)?;
                                k.if_(here, add).end()?;
                            }
                        }
                        Ok(())
                    })?;
                }
            }
            store(k)
        })
    }
}

/// `sums[i] += part[i]` for a vector of the workspace.
fn add_vector(
    k: &mut KernelBuilder,
    sums: &[ptx_isa::Reg<ty::F32>],
    part: &[ptx_isa::Reg<ty::F32>],
) -> Result<()> {
    if part.len() < sums.len() {
        return Err(k.error("the workspace's vector is narrower than 4"));
    }
    for (&sum, &x) in sums.iter().zip(part) {
        k.add(sum, sum, x)?;
    }
    Ok(())
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

    /// Stream-K's workspace: two slots a CTA of the grid (every slot
    /// [`crate::parts::stream_k_units`] hands out is below `2·grid`), each a `64 x bn` block
    /// for each of the tile's 64-row blocks, whatever the problem.
    #[test]
    fn the_stream_workspace_holds_two_slots_a_cta() {
        for bn in [16u32, 64, 128] {
            let cfg = GemmConfig {
                stream_k: true,
                ..GemmConfig::large().swapped(bn, 1)
            };
            let shape = stream_workspace_shape(&cfg, 132);
            assert_eq!(shape[..2], [264, 2]);
            assert_eq!(shape[2..].iter().product::<usize>(), 64 * bn as usize);
            let units = crate::parts::stream_k_units(17, 112, 132);
            assert!(units.iter().all(|u| (u.slot as usize) < shape[0]));
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
