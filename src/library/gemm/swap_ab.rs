//! Swap-AB for decode shapes ([`GemmConfig::swap_ab`]): `C = A·Bᵀ` computed as `Cᵀ = B·Aᵀ`.
//!
//! A decode step's GEMM has a small M (1 to 128 tokens) and a large N (the weight's rows). The
//! wgmma's M side is 64 rows per consumer warpgroup (PTX ISA 9.7.15.5: `m64nNk16`), its N side
//! 8 to 256 columns, so the 128-row tile wastes most of its rows on the tokens. Swapping the
//! operands gives the weight's N rows the 128-row side and the tokens a `bn`-wide tile of 16
//! to 256 columns: the kernel is the same kernel (its `m` is the problem's N, its `n` the
//! problem's M, its A the problem's B), and only C's store changes: each consumer's
//! `64 x bn` accumulator block is C's `bn x 64` block transposed, stored through the
//! transposed fragment ([`layouts::fragment::TvLayout::transposed`]) by the same
//! `copy.fragment_view` every register epilogue uses, one element per access (a thread's
//! values lie in different rows of C).
//!
//! The same register-epilogue kernel also takes decode widths unswapped (any multiple of 8
//! from 16 to 256, [`fill_width`]): the tokens on the 128-row side and the weight's rows `bn`
//! to a tile, so that any N makes about one tile per SM without splitting K (each tile
//! re-reads the tokens from L2): 32 for N = 4096, 48 for 6144, 56 for 7168.

use ptx_isa::{Reg, RegRef, ScalarType, ty};

use super::{GemmConfig, Grouping, OutScale, Scaling};
use crate::kernel::{Buffer, Expr, KernelBuilder, Result};
use crate::parts::epilogue::whole_or_edge;
use crate::tile::{ExecScope, TileRef};

/// The tile widths (the tokens' side) a swapped configuration takes: wgmma N of 16 to 256
/// (PTX ISA 9.7.15.5.1: N a multiple of 8 for 16-bit inputs, of 8 for 8-bit ones; 16 and 32
/// keep a 128-byte B box row count that is a whole number of 8-row swizzle atoms).
pub const WIDTHS: [u32; 5] = [16, 32, 64, 128, 256];

/// Whether `cfg` may be swapped or take a tile width that is no multiple of 64 (the decode
/// widths: swapped, 16 and 32 for the tokens' side; unswapped, the weight's rows, so that a
/// decode problem has about as many tiles as SMs without splitting K): a dense problem with
/// one input type, 16-bit or per-tensor FP8, the register epilogue, no alpha/beta, bias or
/// output scale; swapped one CTA a cluster and the consumers sharing each tile, unswapped CTA
/// pairs (unsplit, or split with ping-pong consumers: [`GemmConfig::decode_pair_split`]) only
/// where each CTA's half of B is whole 8-row 128B-swizzle atoms (`bn / 2` a multiple of 8,
/// PTX ISA 9.7.15.5.1.2; [`GemmConfig::decode_pair`])
/// ([`super::GemmConfigError::SwapAb`]).
pub fn takes(cfg: &GemmConfig) -> bool {
    cfg.grouping == Grouping::None
        && matches!(cfg.scaling, Scaling::None | Scaling::PerTensor)
        && cfg.b_type() == cfg.input
        && !cfg.tma_store
        && !cfg.alpha_beta
        && cfg.bias.is_none()
        && cfg.out_scale == OutScale::None
        && (cfg.cluster_m == 1
            || (!cfg.swap_ab && (cfg.split_k == 1 || cfg.pingpong) && (cfg.bn / 2) % 8 == 0))
        && !(cfg.pingpong && cfg.swap_ab)
}

impl GemmConfig {
    /// `self` swapped ([`GemmConfig::swap_ab`]) with tile width `bn` (the tokens' side) and
    /// `split_k` parts: [`GemmConfig::decode_tile`] swapped.
    pub fn swapped(self, bn: u32, split_k: u32) -> GemmConfig {
        self.decode_tile(bn, split_k, true)
    }

    /// A decode kernel from `self`: tile width `bn`, `split_k` parts, swapped or not
    /// ([`GemmConfig::swap_ab`]), the register epilogue, one CTA a cluster, the consumers
    /// sharing each tile, and as many stages as shared memory holds up to 8 (a decode stage is
    /// small, and a decode GEMM streams its weight; [`GemmConfig::stages_up_to`] for more).
    pub fn decode_tile(self, bn: u32, split_k: u32, swap_ab: bool) -> GemmConfig {
        GemmConfig {
            bn,
            split_k,
            swap_ab,
            tma_store: false,
            cluster_m: 1,
            cluster_n: 1,
            pingpong: false,
            ..self
        }
        .stages_up_to(8)
    }

    /// The decode tile in a cluster of `ctas` CTAs along N ([`GemmConfig::cluster_n`]) from
    /// `self`: [`GemmConfig::decode_tile`] `bn` wide, unswapped and unsplit, the consumers
    /// sharing each 128-row tile, the deepest ring: for 65 to 128 tokens, `ctas` neighbouring
    /// weight tiles share the tokens' tile (each CTA loads `128 / ctas` of its rows and
    /// multicasts them to all), so the tokens are read from L2 once per cluster instead of once
    /// per weight tile.
    pub fn decode_cluster(self, bn: u32, ctas: u32) -> GemmConfig {
        GemmConfig {
            cluster_n: ctas,
            ..self.decode_tile(bn, 1, false)
        }
        .stages_up_to(Self::MAX_STAGES)
    }

    /// The unswapped ping-pong decode tile from `self`: [`GemmConfig::decode_tile`] `bn` wide,
    /// unsplit, each consumer warpgroup its own 64-row tile ([`GemmConfig::pingpong`]) and the
    /// deepest ring ([`GemmConfig::MAX_STAGES`]): a 64 x 32 tile keeps 16 stages, 64 KB of the
    /// weight, in flight.
    pub fn decode_pingpong(self, bn: u32) -> GemmConfig {
        GemmConfig {
            pingpong: true,
            ..self.decode_tile(bn, 1, false)
        }
        .stages_up_to(Self::MAX_STAGES)
    }

    /// The ping-pong decode tile in CTA pairs along M ([`GemmConfig::cluster_m`] = 2) from
    /// `self`: [`GemmConfig::decode_pingpong`] `bn` wide (a multiple of 16, [`pair_width`]),
    /// for 65 to 128 tokens: the two 64-row token tiles of a weight tile on the two CTAs of a
    /// pair, each loading half of the weight's tile and multicasting it to both, so every
    /// weight row is read once without splitting K (cuBLAS's choice at M = 128,
    /// `nvjet_sm90_tst_64x64_64x13_2x1`); 14 stages of a 64 x 64 tile.
    pub fn decode_pair(self, bn: u32) -> GemmConfig {
        GemmConfig {
            cluster_m: 2,
            ..self.decode_pingpong(bn)
        }
    }

    /// [`GemmConfig::decode_pair`] `bn` wide with each weight tile's reduction split in
    /// `split_k` parts, summed by a second launch or in the kernel (`fixup`,
    /// [`GemmConfig::split_fixup`]): cuBLAS's layout at M = 128 where the weight has too few
    /// tiles to fill the SMs in pairs (`nvjet_sm90_tst_96x64_64x10_1x2_h_bz_splitK` at
    /// 128x2112x7168: 96 weight rows to a tile, 22 tiles x 2 token tiles x 3 parts = 132 CTAs);
    /// each weight row is still read once, the tokens `split_k` times less often than by a
    /// 32-wide unsplit pair.
    pub fn decode_pair_split(self, bn: u32, split_k: u32, fixup: bool) -> GemmConfig {
        GemmConfig {
            split_k,
            split_fixup: fixup,
            ..self.decode_pair(bn)
        }
    }

    /// `self` with as many stages as shared memory holds beside the register epilogue (no C
    /// staging), at most `most` (2 to [`GemmConfig::MAX_STAGES`]): a decode kernel's narrow
    /// stages keep more of its weight's bytes in flight.
    pub fn stages_up_to(self, most: u32) -> GemmConfig {
        let budget = smem::max_smem_optin(Self::TARGET) - 2048;
        GemmConfig {
            stages: (budget / self.stage_bytes()).clamp(2, most.clamp(2, Self::MAX_STAGES)),
            ..self
        }
    }
}

/// The decode configurations worth timing for a problem of `m` rows (tokens) and `n` columns
/// (the weight's rows) from `base` (the rule's pick for it) on `sms` multiprocessors, where
/// `m` is at most 128; none for a larger `m`.
/// - Swapped ([`GemmConfig::swap_ab`]): each tile width of [`WIDTHS`] from the narrowest that
///   holds `m` up to the one past it, and for an `m` over 64 the one below it too (two token
///   tiles of a weight tile, each with the main loop of a narrower tile).
/// - For an `m` over 32, unswapped 16, 32 and 64 wide and [`fill_width`] wide: the tokens on
///   the 128-row side, the weight's rows in `n / bn` tiles (16 and 32 wide fill the SMs
///   without splitting K where `n` is 2112 to 4096, cuBLAS's choice at these shapes, and the
///   fill width at any `n`; 64 wide reads each weight row once where the swapped 64-wide tile
///   at M = 128 reads it twice); split only in as many parts as fill the SMs once, since each
///   tile re-reads the tokens; unsplit also with the deepest ring
///   ([`GemmConfig::stages_up_to`]) and, for an `m` of at most 64, with ping-pong consumers
///   (64-row stages).
/// - For an `m` over 64, ping-pong consumers in CTA pairs 64 and [`pair_width`] wide
///   ([`GemmConfig::decode_pair`]): the two 64-row token tiles of a weight tile in one
///   cluster, the weight multicast to both; the same pairs [`PAIR_SPLIT_WIDTHS`] wide with the
///   reduction split in as many parts as fill the SMs once, where that is 2 or more
///   ([`GemmConfig::decode_pair_split`], summed in the kernel); and pairs along N
///   ([`GemmConfig::decode_cluster`] with 2 CTAs) [`fill_width`] wide: two neighbouring
///   weight tiles sharing the tokens' 128-row tile, the tokens multicast to both. Not 4 CTAs
///   along N: the H200 holds 30 such clusters at once (120 of its 132 SMs), and they were
///   slower than 2 along N at every M = 128 row of the decode table (BENCHMARKS.md, session
///   15).
///
/// Each unsplit and, where its tiles leave SMs idle, in 2, 4 and 8 parts and in as many as
/// fill the SMs once (`sms / tiles`: 7 for the 17 tiles of N = 2112 swapped; at most 16), and
/// there also stream-K ([`GemmConfig::stream_k`]: every SM gets the same share of the k-tiles,
/// where a fixed split leaves `sms mod tiles` idle or splits unevenly); each valid. Every split is summed in the kernel ([`GemmConfig::split_fixup`]): a decode step
/// takes one launch per GEMM. The second launch's sum was as fast timed alone after an L2
/// clear, but a stream of decode GEMMs pays both launches: session 16b timed the e4m3 splits
/// at 1x4096x4096 and 16x4096x4096 back to back at 17.2-17.8 µs a call against 12.1-12.4 µs
/// cold (BENCHMARKS.md), where the in-kernel fixup's kernel was level with cuBLASLt's under
/// ncu (8.42 against 8.32 µs at 1x4096x4096).
pub fn candidates(base: GemmConfig, (m, n): (usize, usize), sms: u32) -> Vec<GemmConfig> {
    if m > 128 {
        return Vec::new();
    }
    let first = WIDTHS
        .iter()
        .position(|&w| w as usize >= m)
        .unwrap_or(WIDTHS.len() - 1);
    let below = usize::from(m > 64);
    let swapped = WIDTHS[first - below..(first + 2).min(WIDTHS.len())]
        .iter()
        .map(|&bn| (bn, true));
    let unswapped = [16, 32, 64, fill_width(n, sms)]
        .into_iter()
        .filter(|_| m > 32)
        .map(|bn| (bn, false));
    let mut out = Vec::new();
    // Two 64-row tiles of tokens: ping-pong consumers in CTA pairs sharing each weight tile
    // (multicast), one tile a CTA, the deepest ring (cuBLAS's choice at M = 128).
    if m > 64 {
        let pairs = [64, pair_width(n, sms)].map(|bn| base.decode_pair(bn));
        // The tokens' tile shared along N by a pair.
        let along_n = base.decode_cluster(fill_width(n, sms), 2);
        // Where the pairs of a width leave SMs idle, their reduction split in as many parts as
        // fill the SMs once, summed in the kernel (cuBLAS's layout at 128x2112x7168: 96 wide,
        // 3 parts).
        let split = PAIR_SPLIT_WIDTHS.into_iter().filter_map(|bn| {
            let parts = (sms as usize / (2 * n.div_ceil(bn as usize)).max(1)).min(16) as u32;
            (parts >= 2).then(|| base.decode_pair_split(bn, parts, true))
        });
        for c in pairs.into_iter().chain([along_n]).chain(split) {
            if !out.contains(&c) && c.validate().is_ok() {
                out.push(c);
            }
        }
    }
    for (bn, swap) in swapped.chain(unswapped) {
        let (rows, cols) = if swap { (n, m) } else { (m, n) };
        let tiles = rows.div_ceil(GemmConfig::BM as usize) * cols.div_ceil(bn as usize);
        let fill = (sms as usize / tiles.max(1)).min(16) as u32;
        if tiles < sms as usize {
            let c = GemmConfig {
                stream_k: true,
                ..base.decode_tile(bn, 1, swap)
            };
            if !out.contains(&c) && c.validate().is_ok() {
                out.push(c);
            }
        }
        for split_k in [1, 2, 4, 8, fill] {
            if split_k > 1 && tiles >= sms as usize {
                break;
            }
            // Unswapped, a narrow tile re-reads the tokens for each weight tile: only what fills
            // the SMs once.
            if split_k == 0 || (!swap && split_k != 1 && split_k != fill) {
                continue;
            }
            // A split summed in the kernel: one launch.
            let c = GemmConfig {
                split_fixup: split_k > 1,
                ..base.decode_tile(bn, split_k, swap)
            };
            // Unswapped and unsplit also the deepest ring and, where one 64-row tile holds the
            // tokens, ping-pong consumers (a 64-row stage: twice the weight's bytes in flight).
            let deeper = match (swap, split_k) {
                (false, 1) => vec![
                    c.stages_up_to(GemmConfig::MAX_STAGES),
                    base.decode_pingpong(bn),
                ],
                _ => Vec::new(),
            };
            for c in [c].into_iter().chain(deeper) {
                if (c.pingpong && m > 64) || out.contains(&c) || c.validate().is_err() {
                    continue;
                }
                out.push(c);
            }
        }
    }
    out
}

/// The widths of the split CTA pairs [`candidates`] offers ([`GemmConfig::decode_pair_split`]):
/// 96 is cuBLAS's weight tile at 128x2112x7168 (22 tiles, 3 parts); 64 and 128 split in 2 at
/// N = 2112 and 4096.
pub const PAIR_SPLIT_WIDTHS: [u32; 3] = [64, 96, 128];

/// The unswapped decode width for `n` weight rows on `sms` multiprocessors: the narrowest
/// multiple of 8 (a wgmma N, PTX ISA 9.7.15.5) that makes at most one tile per SM, from 16 to
/// 256 (48 for N = 6144 on 132 SMs: 128 tiles, where 64 makes 96 and 32 makes 192).
pub fn fill_width(n: usize, sms: u32) -> u32 {
    width_for(n, sms as usize, 8)
}

/// The unswapped decode width for `n` weight rows where two 64-row tiles hold the tokens (M of
/// 65 to 128) and CTA pairs share each weight tile (`cluster_m = 2`, B multicast): the narrowest
/// multiple of 16 (each CTA's half whole 8-row swizzle atoms) that makes at most `sms / 2`
/// weight tiles, from 16 to 256 (64 for N = 4096 on 132 SMs, 96 for 6144, 112 for 7168).
pub fn pair_width(n: usize, sms: u32) -> u32 {
    width_for(n, sms as usize / 2, 16)
}

/// The narrowest multiple of `multiple` from 16 to 256 that cuts `n` into at most `tiles`.
fn width_for(n: usize, tiles: usize, multiple: usize) -> u32 {
    let w = n.div_ceil(tiles.max(1)).next_multiple_of(multiple);
    w.clamp(16, 256) as u32
}

/// Stores consumer warpgroup `acc`'s `64 x bn` block (fragment `frag`, the wgmma accumulator)
/// transposed into `out`, a row-major tensor whose last two dimensions are the kernel's
/// `[n, m]` (C `[m, n]` of the problem, or split-K's partials `[parts, m, n]`): the block's
/// element `(r, c)` goes to `out[.., origin_n + c, origin_m + r]`. `origin` is the block's
/// origin in `out` (the part's index first for the partials). Edge blocks store only inside;
/// a 16-bit `out` takes the values cast to pairs (`cast.registers`, `cvt.rn`, PTX ISA
/// 9.7.9.21) and unpacked into halves (`mov.b32 {lo, hi}`, 9.7.9.9), since the transposed
/// pair's two values lie in different rows.
pub(super) fn store_transposed<O: crate::kernel::Elem>(
    k: &mut KernelBuilder,
    frag: &layouts::fragment::TvLayout,
    out: &Buffer<O>,
    origin: &[Expr],
    acc: &Buffer<ty::F32>,
) -> Result<()> {
    let wg = ExecScope::Warpgroup;
    let (rows, bn) = (frag.rows() as u32, frag.cols() as u32);
    let flipped = frag.transposed().map_err(|e| k.error(e.to_string()))?;
    let row_dim = origin.len() - 2;
    let view = k.rows_at(out, origin, row_dim, [bn, rows])?;
    let values = k.tile_ref(acc)?;
    let regs: Vec<RegRef> = match &values.base {
        crate::tile::Base::Registers(r) => r.clone(),
        _ => return Err(k.error("the accumulator is not a register tile")),
    };
    // The tile written: f32 values as they are, 16-bit ones cast and unpacked into halves.
    let stored = match O::DTYPE {
        ScalarType::F32 => TileRef::registers(ScalarType::F32, flipped, regs),
        dtype => {
            let pairs: Vec<Reg<ty::Bf16x2>> = k.regs::<ty::Bf16x2>(regs.len() / 2);
            let packed = TileRef::registers(
                dtype,
                frag.clone(),
                pairs.iter().map(|r| r.as_ref()).collect(),
            );
            k.cast(&packed, &values, wg)?;
            let mut halves = Vec::with_capacity(regs.len());
            for pair in pairs {
                let h = [k.reg::<ty::Bf16>(), k.reg::<ty::Bf16>()];
                k.mov_unpack(&h, pair)?;
                halves.extend(h.iter().map(|r| r.as_ref()));
            }
            TileRef::registers(dtype, flipped, halves)
        }
    };
    whole_or_edge(k, &[view], [bn, rows], None, |k, v, _| {
        k.copy(&v[0], &stored, wg)?;
        Ok(())
    })
}
