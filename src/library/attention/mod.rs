//! Attention forward for Hopper in the FlashAttention-3 shape: `O = softmax(Q·Kᵀ·scale [+ causal
//! mask])·V` and the row log-sum-exp, bf16 or f16 in and out with f32 accumulation, head dims 64,
//! 128 and 256, batches and heads, grouped-query and multi-query attention (KV heads dividing
//! the query heads), separate query and key lengths, any lengths.
//!
//! Tensors are `[batch, seq, heads, dim]` with `dim` contiguous (torch's `(B, S, H, D)`): `Q` and
//! `O` `[batch, seqlen_q, heads, d]`, `K` and `V` `[batch, seqlen_k, kv_heads, d]`; `LSE` is
//! `[batch, heads, seqlen_q]` f32 (natural log). The causal mask is aligned to the bottom right
//! as FlashAttention aligns it: query `i` sees keys `j <= i + seqlen_k - seqlen_q`. A query that
//! sees no key gets `O = 0` and `LSE = -inf`.
//!
//! The kernel ([`build()`]): a CTA per 128-row query tile, head and batch; a producer warpgroup
//! loads Q once and K, V tiles into a ring of [`AttentionConfig::stages`] stages by TMA (full and
//! empty mbarriers); two consumer warpgroups of 64 query rows each compute `S = Q·Kᵀ` by wgmma
//! from shared memory, the online softmax on the accumulator fragment (row max and sum by
//! `reduce_fragment`, `exp2` with the scale folded in, rescaling O), and `O += P·V` by wgmma with
//! `P` from registers (the accumulator converted to 16-bit pairs) and V read MN-major; the causal
//! mask is applied on diagonal tiles only and tiles wholly above the diagonal are never loaded.

pub mod backward;
mod build;
mod host;

pub use backward::{
    AttentionBackward, BackwardArgs, BackwardConfig, BackwardSeqs, reference_backward,
    reference_backward_varlen,
};
/// The online softmax and its row statistics, which the decode kernel shares.
pub(crate) use build::{
    RowGroups, SoftmaxState, online_softmax, row_statistics, s32, softmax_state,
};
pub use build::{build, build_with_waits};
pub use host::{Attention, AttentionArgs, AttentionError, ShapeError, VarlenArgs};

use crate::parts::WarpSpecialized;
use ptx_isa::ScalarType;

/// A configuration the kernel cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttentionConfigError {
    /// Inputs that are neither bf16 nor f16.
    #[error("attention takes bf16 or f16 inputs, not {0}")]
    DType(ScalarType),
    /// A head dimension other than 64, 128 or 256.
    #[error("head dim {0}: 64, 128 or 256")]
    HeadDim(u32),
    /// A key tile the wgmma shapes or the registers do not take.
    #[error("key tile of {block_n} rows: a multiple of 16 from 16 to 256 (the m64nNk16 N of S)")]
    BlockN {
        /// The key tile's rows.
        block_n: u32,
    },
    /// O stored by TMA over packed sequences.
    #[error("O stored by TMA clips at the tensor's edge, not at a packed sequence's end")]
    TmaStoreVarlen,
    /// A query tile other than 128 rows, or 192 at head dim 64 with the serial schedule.
    #[error(
        "query tile of {block_m} rows at head dim {head_dim} with the {schedule:?} schedule: 128 \
         rows (two consumer warpgroups), or 192 (three) at head dim 64 with the serial one (three \
         warpgroups' registers hold its S, O and P; the ping-pong's turns are two)"
    )]
    BlockM {
        /// The query tile's rows.
        block_m: u32,
        /// The head dimension.
        head_dim: u32,
        /// The schedule.
        schedule: Schedule,
    },
    /// CTA pairs with the causal mask or over packed sequences: the pair's two query tiles must
    /// visit the same key tiles, which both producers load half of.
    #[error(
        "CTA pairs share every key tile: not with the causal mask or packed sequences (the \
         pair's two query tiles would visit different key tiles)"
    )]
    PairedTiles,
    /// A backward query block other than 64 rows, 128 at head dim 64 or 80 at head dim 128.
    #[error(
        "backward query blocks of {block_m} rows at head dim {head_dim}: 64, 128 at head dim 64 \
         (the registers hold a 64-key warpgroup's scores of 128 queries beside its dK and dV \
         only there) or 80 at head dim 128 (dQ computed transposed)"
    )]
    BackwardBlockM {
        /// The query block's rows.
        block_m: u32,
        /// The head dimension.
        head_dim: u32,
    },
    /// The deterministic backward with a query block other than 64 rows: its key-block turns'
    /// waits beside 128 queries' scores spill at the causal mask.
    #[error(
        "the deterministic backward takes query blocks of 64 rows, not {0}: with 128 its turns' \
         waits spill beside the scores (BackwardConfig::with_deterministic sets 64)"
    )]
    BackwardDeterministicBlockM(u32),
    /// A head dimension the backward has no kernel for (it has 64, 128 and 256).
    #[error("the attention backward takes head dims 64, 128 and 256, not {0}")]
    BackwardHeadDim(u32),
    /// A ring of no stages, or more than shared memory holds.
    #[error("{stages} stages need {bytes} bytes of shared memory; the limit is {limit}")]
    Stages {
        /// Stages asked for.
        stages: u32,
        /// Shared memory they need.
        bytes: u32,
        /// What a CTA may have (227 KB on sm_90).
        limit: u32,
    },
}

/// How a consumer warpgroup orders its two GEMMs and its softmax over the key tiles, and how
/// the two consumer warpgroups share the tensor cores (FlashAttention-3 §3.1 and §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Each tile in turn: `S = Q·Kᵀ`, wait, softmax, `O += P·V`, wait. The two consumer
    /// warpgroups run independently.
    Serial,
    /// Ping-pong: a warpgroup issues `S_j = Q·K_jᵀ` and `O += P_{j-1}·V_{j-1}` together, then
    /// waits for both and runs the softmax of `S_j`; two named barriers hand the right to issue
    /// from one consumer warpgroup to the other, so one's softmax runs while the other's GEMMs
    /// do.
    PingPong,
    /// [`Schedule::PingPong`] with the softmax of `S_j` overlapping the same warpgroup's
    /// `P_{j-1}·V_{j-1}`: it waits only for `S_j` (`wgmma.wait_group 1`) and for the `P·V` just
    /// before rescaling O.
    PingPongOverlap,
}

impl Schedule {
    /// Every schedule, the serial one first.
    pub const ALL: [Schedule; 3] = [
        Schedule::Serial,
        Schedule::PingPong,
        Schedule::PingPongOverlap,
    ];

    /// Its short name (`serial`, `pingpong`, `overlap`), a suffix of the kernel's name.
    pub fn name(&self) -> &'static str {
        match self {
            Schedule::Serial => "serial",
            Schedule::PingPong => "pingpong",
            Schedule::PingPongOverlap => "overlap",
        }
    }
}

/// The order in which a persistent grid's CTAs take the query tiles (each CTA takes every
/// grid-size-th tile of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileOrder {
    /// The query tiles of one head of one sequence together (their CTAs share that head's K and
    /// V in L2), each sequence's heads in turn; with the causal mask a head's last query tile
    /// (which visits the most keys) first.
    HeadMajor,
    /// FlashAttention-3's L2 sections: the (sequence, head) pairs in groups whose K and V fit
    /// in [`AttentionConfig::SECTION_BYTES`] of L2, and within a group the query tiles row
    /// block by row block across its heads, with the causal mask the last row block (the
    /// heaviest tiles) first, so the first wave takes the longest tiles and the last the
    /// shortest (longest-processing-time first).
    L2Sections,
}

/// What one attention kernel is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttentionConfig {
    /// The element type of Q, K, V and O (bf16 or f16).
    pub dtype: ScalarType,
    /// The head dimension `d` (64, 128 or 256).
    pub head_dim: u32,
    /// Whether the causal mask applies.
    pub causal: bool,
    /// Query rows per CTA, 64 per consumer warpgroup: [`AttentionConfig::BLOCK_M`] (two
    /// consumers), or 192 (three: head dim 64 with the serial schedule, FlashAttention-3's
    /// query tile there, [`AttentionConfig::with_block_m`]).
    pub block_m: u32,
    /// Key rows per tile (the N of `S = Q·Kᵀ` and the K of `P·V`).
    pub block_n: u32,
    /// Stages of the K ring and of the V ring.
    pub stages: u32,
    /// How the consumers order their GEMMs and softmax.
    pub schedule: Schedule,
    /// Variable-length sequences packed one after another (FlashAttention's varlen API): Q and
    /// O `[total_q, heads, d]`, K and V `[total_k, kv_heads, d]`, sequence `b` at rows
    /// `cu_seqlens[b]..cu_seqlens[b + 1]` of each, LSE `[heads, total_q]`; instead of
    /// `[batch, seq, heads, d]` tensors of one length.
    pub varlen: bool,
    /// A persistent grid (one CTA per SM) looping over the query tiles, the tiles of one head
    /// together so their CTAs share its K and V in L2, the longest first with the causal mask
    /// (FlashAttention-3's tile scheduler); else one CTA per query tile.
    ///
    /// Every schedule, causal or not, batched or packed: each consumer warpgroup's cursors
    /// in the K and V rings and in Q's one-stage ring, and the ping-pong's turns, carry over
    /// from one query tile to the next, each moving once per key tile as the producer's does.
    pub persistent: bool,
    /// The persistent grid's tile order (unused without [`AttentionConfig::persistent`]).
    pub order: TileOrder,
    /// O stored by TMA from shared memory (staged in the consumer's rows of Q's buffer) instead
    /// of from registers; batched sequences only (a TMA store clips at the tensor's edge, not
    /// at a packed sequence's end).
    pub tma_store: bool,
    /// CTA pairs (clusters of two along the query tiles, FlashAttention-3's cluster at head
    /// dims 128 and up without the mask): the two CTAs take neighbouring query tiles of one
    /// head, and each producer loads half of every K and V tile and multicasts it into both
    /// CTAs' shared memory, halving the K/V traffic from L2. Without the causal mask and
    /// over batched sequences only ([`AttentionConfigError::PairedTiles`]); a pair's second
    /// tile past the queries (an odd number of tiles) computes and stores nothing.
    pub pair: bool,
}

/// Shared memory a CTA may use on sm_90 (227 KB).
const SMEM_LIMIT: u32 = 227 * 1024;

/// How every attention kernel's name starts, the forward's ([`AttentionConfig::name`]) and the
/// backward's ([`BackwardConfig::name`]): `attention_fwd_bf16_d128`, `_causal` with the mask;
/// each configuration's own suffixes follow.
fn name_stem(pass: &str, dtype: ScalarType, head_dim: u32, causal: bool) -> String {
    let dtype = dtype.name().trim_start_matches('.');
    let causal = if causal { "_causal" } else { "" };
    format!("attention_{pass}_{dtype}_d{head_dim}{causal}")
}

impl AttentionConfig {
    /// Query rows per CTA by default: two consumer warpgroups of 64 rows.
    pub const BLOCK_M: u32 = 128;
    /// Columns of one TMA box and one shared slab: 64 16-bit elements, the 128-byte swizzle's span.
    pub const SLAB: u32 = 64;
    /// The schedule [`AttentionConfig::new`] picks for `head_dim`, from the H100 run of all
    /// three side by side (BENCHMARKS.md, 16k tokens): ping-pong at head dims 128 and 256 (d128
    /// non-causal at 8k: 668 TFLOP/s vs serial 621 and overlap 603; causal at 16k: 625 vs 568
    /// and 586), serial at 64, where the two warpgroups' turns cost more than the overlap wins
    /// (8k: serial 461, ping-pong 439, overlap 447).
    pub fn default_schedule(head_dim: u32) -> Schedule {
        if head_dim <= 64 {
            Schedule::Serial
        } else {
            Schedule::PingPong
        }
    }
    /// The named barriers of the ping-pong (PTX ISA 9.7.13.1, ids 1 to 15; 0 is the CTA's):
    /// consumer warpgroup `c` waits at `PINGPONG_BARRIER + c` before issuing its GEMMs.
    pub const PINGPONG_BARRIER: u32 = 1;
    /// The named barriers of the TMA store of O: consumer warpgroup `c`'s 128 threads meet at
    /// `STORE_BARRIER + c` once its rows are staged and once the stores have read them.
    pub const STORE_BARRIER: u32 = 3;
    /// The L2 bytes one section of [`TileOrder::L2Sections`] gives its heads' K and V (32 MB,
    /// FlashAttention-3's figure, of the H100's 50 MB and the H200's 60 MB).
    pub const SECTION_BYTES: u32 = 32 << 20;

    /// The default configuration for `dtype`, `head_dim` and `causal`: key tiles of 128 rows
    /// (64 at head dim 256, where O's accumulator takes 128 registers), 2 stages.
    pub fn new(dtype: ScalarType, head_dim: u32, causal: bool) -> AttentionConfig {
        AttentionConfig {
            dtype,
            head_dim,
            causal,
            block_m: Self::BLOCK_M,
            block_n: if head_dim > 128 { 64 } else { 128 },
            stages: 2,
            schedule: Self::default_schedule(head_dim),
            varlen: false,
            persistent: false,
            order: TileOrder::HeadMajor,
            tma_store: false,
            pair: false,
        }
    }

    /// The key length up to which [`AttentionConfig::for_problem`] gives the causal mask at
    /// head dim 128 the overlap schedule with 128-row key tiles (past it, 176-row ones).
    pub const CAUSAL_OVERLAP_MAX_SEQLEN_K: usize = 4096;
    /// The key length from which [`AttentionConfig::for_problem`] gives head dim 128, causal or
    /// not, 192-row key tiles with the ping-pong schedule (below it, the overlap schedule).
    pub const TILE_192_MIN_SEQLEN_K: usize = 16384;

    /// The configuration the library picks for a problem: what [`Attention`] users should
    /// build for `shape` unless they time their own. At head dim 128 from session 5's GPU call
    /// 3 on the H200 (notes/session5-call3-h200.log: every [`AttentionConfig::variants`] side
    /// by side, medians of 3 timings, heads x d = 2048, TFLOP/s); at head dims 64 and 256 from
    /// the H200 run before it (BENCHMARKS.md, 16k tokens per batch):
    ///
    /// - O stored by TMA ([`AttentionConfig::tma_store`]) wherever it was ahead of the
    ///   register store (d128 at every length, d256, the causal d64);
    /// - head dim 128 without the mask: the overlap schedule with 176-row key tiles on one CTA
    ///   per query tile (670, 699 and 693 at 4x4096, 2x8192 and 1x16384; the persistent grid's
    ///   176-row tiles 662, 684 and 677) below [`Self::TILE_192_MIN_SEQLEN_K`] keys, and from
    ///   there 192-row tiles with the ping-pong (701 at 16k);
    /// - head dim 128 with the mask: one CTA per query tile, the overlap schedule with 128-row
    ///   tiles up to [`Self::CAUSAL_OVERLAP_MAX_SEQLEN_K`] keys (580 at 4k against the
    ///   ping-pong's 574), with 176-row tiles below [`Self::TILE_192_MIN_SEQLEN_K`] (630 at 8k
    ///   against 609 with 128-row ones and 624 with the ping-pong's 176-row ones), and from there
    ///   192-row tiles with the ping-pong (670 at 16k against the overlap's 664 with 176 rows);
    /// - head dim 64: 192-row query tiles, three consumer warpgroups, serial (session 11, two
    ///   H200 calls, 2x8192, medians of 3: without the mask one CTA per tile, O from registers,
    ///   501-520 against 396-414 for the 128-row tile and 487-494 for cuDNN; with it
    ///   FlashAttention-3's L2 sections, O from registers, 467 against 451-456 by TMA, 381-385
    ///   for the 128-row tile and 458 for cuDNN (a third call); the overlap within each
    ///   warpgroup without turns measured slower, 444-448 and 404-405);
    /// - head dim 256: the overlap schedule with FlashAttention-3's 80-row key tiles and TMA
    ///   store (session 11, H200, 2x8192, medians of 3): in L2 sections without the mask (698
    ///   against 607 for the 64-row tile and 729 for cuDNN), one CTA per tile with it (630
    ///   against 587 and 623). CTA pairs ([`AttentionConfig::pair`], FlashAttention-3's
    ///   cluster there) measured no faster at d256 or d128 (session 15, H200, medians of 3:
    ///   d256 2x8192 702 against 696 for this pick, within the rounds' drift; d128 4x4096
    ///   598-660 against 636-681), so they are not picked.
    ///
    /// Packed sequences take `for_problem(..).with_varlen()` (which stores O from registers).
    pub fn for_problem(dtype: ScalarType, shape: &AttentionShape, causal: bool) -> AttentionConfig {
        let head_dim = u32::try_from(shape.head_dim).unwrap_or(u32::MAX);
        let tma = AttentionConfig::new(dtype, head_dim, causal).with_tma_store();
        let overlap = tma.with_schedule(Schedule::PingPongOverlap);
        match (head_dim, causal) {
            (128, _) if shape.seqlen_k >= Self::TILE_192_MIN_SEQLEN_K => tma.with_tile(192, 2),
            (128, true) if shape.seqlen_k <= Self::CAUSAL_OVERLAP_MAX_SEQLEN_K => overlap,
            (128, _) => overlap.with_tile(176, 2),
            (64, false) => AttentionConfig::new(dtype, head_dim, causal).with_block_m(192),
            (64, true) => AttentionConfig::new(dtype, head_dim, causal)
                .with_block_m(192)
                .with_order(TileOrder::L2Sections),
            (256, false) => overlap.with_order(TileOrder::L2Sections).with_tile(80, 2),
            (256, true) => overlap.with_tile(80, 2),
            _ => tma,
        }
    }

    /// Every configuration [`AttentionConfig::for_problem`] picks for `dtype`, `head_dim` and
    /// `causal` (over every length).
    pub fn picks(dtype: ScalarType, head_dim: u32, causal: bool) -> Vec<AttentionConfig> {
        let mut out: Vec<AttentionConfig> = Vec::new();
        for seqlen_k in [
            Self::CAUSAL_OVERLAP_MAX_SEQLEN_K,
            Self::TILE_192_MIN_SEQLEN_K - 1,
            Self::TILE_192_MIN_SEQLEN_K,
        ] {
            let shape = AttentionShape {
                batch: 1,
                seqlen_q: seqlen_k,
                seqlen_k,
                heads: 1,
                kv_heads: 1,
                head_dim: head_dim as usize,
            };
            let pick = Self::for_problem(dtype, &shape, causal);
            if !out.contains(&pick) {
                out.push(pick);
            }
        }
        out
    }

    /// Every configuration the library builds: bf16 and f16, head dims 64, 128 and 256, causal
    /// and not, each with every [`Schedule`] (the default one first), then with the default
    /// schedule: on a persistent grid (in each [`TileOrder`]), with O stored by TMA, both, over
    /// packed variable-length sequences, and those on a persistent grid; at head dim 64 the
    /// 192-row query tile (three consumers) on one CTA per tile or persistent (in either order),
    /// by TMA, and packed; at head dims 128 and 256 without the mask, in bf16, CTA pairs
    /// ([`AttentionConfig::pair`]) on one CTA per tile (O from registers or by TMA) and
    /// persistent in L2 sections (by TMA), and the pairs [`AttentionConfig::variants`] times;
    /// then those of
    /// [`AttentionConfig::picks`] not among them, batched and packed.
    pub fn all() -> Vec<AttentionConfig> {
        let mut out = Vec::new();
        for dtype in [ScalarType::Bf16, ScalarType::F16] {
            for head_dim in [64, 128, 256] {
                for causal in [false, true] {
                    let base = AttentionConfig::new(dtype, head_dim, causal);
                    out.push(base);
                    for schedule in Schedule::ALL {
                        if schedule != base.schedule {
                            out.push(base.with_schedule(schedule));
                        }
                    }
                    out.extend([
                        base.with_persistent(),
                        base.with_order(TileOrder::L2Sections),
                        base.with_tma_store(),
                        base.with_persistent().with_tma_store(),
                        base.with_varlen(),
                        base.with_varlen().with_persistent(),
                    ]);
                    if head_dim == 64 {
                        // Three consumer warpgroups: one CTA per tile or persistent, O from
                        // registers or by TMA, packed.
                        let m192 = base.with_block_m(192);
                        out.extend([
                            m192,
                            m192.with_tma_store(),
                            m192.with_persistent(),
                            m192.with_order(TileOrder::L2Sections),
                            m192.with_order(TileOrder::L2Sections).with_tma_store(),
                            m192.with_varlen(),
                        ]);
                    }
                    if head_dim >= 128 && !causal && dtype == ScalarType::Bf16 {
                        // CTA pairs sharing each K and V tile (bf16: f16 changes only the
                        // conversions): one CTA per tile, O from registers or by TMA, and
                        // persistent in L2 sections.
                        let pair = base.with_pair();
                        out.extend([
                            pair,
                            pair.with_tma_store(),
                            pair.with_order(TileOrder::L2Sections).with_tma_store(),
                        ]);
                        // The benchmark's pairs, so any of them may become a pick.
                        let timed = Self::variants(head_dim, causal).into_iter();
                        for (_, cfg) in timed.filter(|(_, c)| c.pair) {
                            if !out.contains(&cfg) {
                                out.push(cfg);
                            }
                        }
                    }
                    for pick in Self::picks(dtype, head_dim, causal) {
                        for cfg in [pick, pick.with_varlen()] {
                            if !out.contains(&cfg) {
                                out.push(cfg);
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The configurations the benchmark times side by side for `head_dim` and `causal` (bf16),
    /// each with a short label: the default one on a grid of one CTA per query tile (`grid`),
    /// with O stored by TMA (`tma`), on a persistent grid (`pers`, and in
    /// [`TileOrder::L2Sections`]: `l2`), both; at head dim 64 also 192-row query tiles (`m192`:
    /// three consumer warpgroups) on each grid, with 2 or 3 stages; at head dim 128 also 3
    /// stages (`s3`), key tiles of
    /// 160, 176 and 192 rows (`n176`, FlashAttention-3's non-causal tile; 160 divides 4k keys
    /// into whole tiles but one, 176 and 192 leave a third of one empty) on either grid (192 on
    /// the persistent one without the mask only), and the
    /// overlap schedule (`overlap`), also with 160-, 176- and 192-row tiles; at head dims 128
    /// and 256 without the mask also CTA pairs (`pair`, [`AttentionConfig::pair`]). The benchmark times
    /// [`AttentionConfig::for_problem`]'s pick beside them (`default`).
    pub fn variants(head_dim: u32, causal: bool) -> Vec<(&'static str, AttentionConfig)> {
        let base = AttentionConfig::new(ScalarType::Bf16, head_dim, causal);
        let tma = base.with_tma_store();
        let pers = tma.with_persistent();
        let l2 = tma.with_order(TileOrder::L2Sections);
        let mut out = vec![
            ("grid", base),
            ("tma", tma),
            ("pers", base.with_persistent()),
            ("pers+tma", pers),
            ("l2+tma", l2),
        ];
        if head_dim == 64 {
            // FlashAttention-3's 192-row query tile: three consumer warpgroups.
            let m192 = base.with_block_m(192);
            out.extend([
                ("m192", m192),
                ("m192 tma", m192.with_tma_store()),
                ("m192 pers", m192.with_persistent()),
                ("m192 l2", m192.with_order(TileOrder::L2Sections)),
                ("m192 pers+tma", m192.with_persistent().with_tma_store()),
                (
                    "m192 l2+tma",
                    m192.with_order(TileOrder::L2Sections).with_tma_store(),
                ),
                ("m192 s3", m192.with_tile(128, 3)),
                ("m192 tma s3", m192.with_tma_store().with_tile(128, 3)),
            ]);
        }
        if head_dim == 256 {
            // FlashAttention-3's 80-row key tile there (2 stages fill 226 of the 227 KB).
            let overlap = tma.with_schedule(Schedule::PingPongOverlap);
            out.extend([
                ("tma n80", tma.with_tile(80, 2)),
                ("l2+tma n80", l2.with_tile(80, 2)),
                ("overlap tma", overlap),
                ("overlap tma n80", overlap.with_tile(80, 2)),
                (
                    "overlap l2+tma n80",
                    overlap.with_order(TileOrder::L2Sections).with_tile(80, 2),
                ),
            ]);
        }
        if head_dim == 128 {
            let overlap = tma.with_schedule(Schedule::PingPongOverlap);
            out.extend([
                ("tma s3", tma.with_tile(128, 3)),
                ("tma n176", tma.with_tile(176, 2)),
                ("pers+tma n176", pers.with_tile(176, 2)),
                ("l2+tma n176", l2.with_tile(176, 2)),
                ("tma n160", tma.with_tile(160, 2)),
                ("pers+tma n160", pers.with_tile(160, 2)),
                ("tma n192", tma.with_tile(192, 2)),
                ("overlap tma", overlap),
                ("overlap tma n160", overlap.with_tile(160, 2)),
                ("overlap tma n176", overlap.with_tile(176, 2)),
                ("overlap tma n192", overlap.with_tile(192, 2)),
                (
                    "overlap pers+tma n176",
                    overlap.with_persistent().with_tile(176, 2),
                ),
            ]);
            // Not with the mask: the fifth run's slowest there (433-574 TFLOP/s against 577-670
            // for one CTA per tile), and where the last key tile's `P·V` is cut to the keys
            // it sees, ptxas spills 12 bytes in it.
            if !causal {
                out.push(("pers+tma n192", pers.with_tile(192, 2)));
            }
        }
        if head_dim >= 128 && !causal {
            // CTA pairs sharing each K and V tile (FlashAttention-3's cluster of two): the
            // overlap schedule with its key tile on one CTA per tile and in L2 sections, the
            // ping-pong with the widest tile.
            let (labels, n_overlap, n_pingpong) = match head_dim {
                256 => (
                    [
                        "overlap tma n80 pair",
                        "overlap l2+tma n80 pair",
                        "tma n80 pair",
                    ],
                    80,
                    80,
                ),
                _ => (
                    [
                        "overlap tma n176 pair",
                        "overlap l2+tma n176 pair",
                        "tma n192 pair",
                    ],
                    176,
                    192,
                ),
            };
            let overlap = tma
                .with_schedule(Schedule::PingPongOverlap)
                .with_tile(n_overlap, 2)
                .with_pair();
            let pairs = [
                overlap,
                overlap.with_order(TileOrder::L2Sections),
                tma.with_tile(n_pingpong, 2).with_pair(),
            ];
            out.extend(labels.into_iter().zip(pairs));
        }
        out
    }

    /// The same configuration on a persistent grid ([`AttentionConfig::persistent`]).
    pub fn with_persistent(self) -> AttentionConfig {
        AttentionConfig {
            persistent: true,
            ..self
        }
    }

    /// The same configuration on a persistent grid taking its tiles in `order`.
    pub fn with_order(self, order: TileOrder) -> AttentionConfig {
        AttentionConfig {
            persistent: true,
            order,
            ..self
        }
    }

    /// The same configuration with O stored by TMA ([`AttentionConfig::tma_store`]).
    pub fn with_tma_store(self) -> AttentionConfig {
        AttentionConfig {
            tma_store: true,
            ..self
        }
    }

    /// The same configuration over packed variable-length sequences ([`AttentionConfig::varlen`]),
    /// O stored from registers (a TMA store clips at the tensor's edge, not at a sequence's
    /// end: [`AttentionConfigError::TmaStoreVarlen`]).
    pub fn with_varlen(self) -> AttentionConfig {
        AttentionConfig {
            varlen: true,
            tma_store: false,
            ..self
        }
    }

    /// The same configuration with key tiles of `block_n` rows and a ring of `stages` stages.
    pub fn with_tile(self, block_n: u32, stages: u32) -> AttentionConfig {
        AttentionConfig {
            block_n,
            stages,
            ..self
        }
    }

    /// The same configuration in CTA pairs ([`AttentionConfig::pair`]).
    pub fn with_pair(self) -> AttentionConfig {
        AttentionConfig { pair: true, ..self }
    }

    /// CTAs a cluster: 2 in pairs ([`AttentionConfig::pair`]), else 1.
    pub fn cluster(&self) -> u32 {
        if self.pair { 2 } else { 1 }
    }

    /// The same configuration with another schedule.
    pub fn with_schedule(self, schedule: Schedule) -> AttentionConfig {
        AttentionConfig { schedule, ..self }
    }

    /// The same configuration with query tiles of `block_m` rows ([`AttentionConfig::block_m`]).
    pub fn with_block_m(self, block_m: u32) -> AttentionConfig {
        AttentionConfig { block_m, ..self }
    }

    /// Its consumer warpgroups: one per 64 query rows.
    pub fn consumers(&self) -> u32 {
        self.block_m / 64
    }

    /// The roles: a producer warpgroup and [`AttentionConfig::consumers`] consumer warpgroups
    /// with their register budgets.
    pub fn roles(&self) -> WarpSpecialized {
        if self.consumers() == 3 {
            WarpSpecialized::PRODUCER_AND_THREE_CONSUMERS
        } else {
            WarpSpecialized::PRODUCER_AND_TWO_CONSUMERS
        }
    }

    /// The kernel's name: `attention_fwd_bf16_d128` (`_causal`), then the schedule's name
    /// (`_pingpong`) for any but [`AttentionConfig::default_schedule`]'s for its head dim, then
    /// `_m192` for a query tile other than [`AttentionConfig::BLOCK_M`] rows, `_n176s3` for a key
    /// tile or a stage count other than [`AttentionConfig::new`]'s, then
    /// `_varlen` for packed sequences, `_persistent` for a persistent grid (`_persistent_l2` in
    /// [`TileOrder::L2Sections`]), `_tmastore` for O
    /// stored by TMA and `_pair` for CTA pairs.
    pub fn name(&self) -> String {
        let schedule = if self.schedule == Self::default_schedule(self.head_dim) {
            String::new()
        } else {
            format!("_{}", self.schedule.name())
        };
        let default = AttentionConfig::new(self.dtype, self.head_dim, self.causal);
        let tile = if (self.block_n, self.stages) == (default.block_n, default.stages) {
            String::new()
        } else {
            format!("_n{}s{}", self.block_n, self.stages)
        };
        let rows = if self.block_m == Self::BLOCK_M {
            String::new()
        } else {
            format!("_m{}", self.block_m)
        };
        format!(
            "{}{schedule}{rows}{tile}{}{}{}{}",
            name_stem("fwd", self.dtype, self.head_dim, self.causal),
            if self.varlen { "_varlen" } else { "" },
            match (self.persistent, self.order) {
                (false, _) => "",
                (true, TileOrder::HeadMajor) => "_persistent",
                (true, TileOrder::L2Sections) => "_persistent_l2",
            },
            if self.tma_store { "_tmastore" } else { "" },
            if self.pair { "_pair" } else { "" }
        )
    }

    /// Bytes of one 16-bit row of a tile (`d` elements).
    fn row_bytes(&self) -> u32 {
        self.head_dim * 2
    }

    /// Bytes of the Q tile (`block_m x d`).
    pub fn q_bytes(&self) -> u32 {
        self.block_m * self.row_bytes()
    }

    /// Bytes of one K (or V) tile (`block_n x d`).
    pub fn kv_bytes(&self) -> u32 {
        self.block_n * self.row_bytes()
    }

    /// Dynamic shared memory: Q, the rings' K and V tiles (1024-byte aligned for the 128-byte
    /// swizzle) and their barriers: K's ring's barriers pad V's first tile to the next 1024
    /// bytes, V's and Q's barriers take the last kilobyte.
    pub fn smem_bytes(&self) -> u32 {
        self.q_bytes() + self.stages * 2 * self.kv_bytes() + 2 * 1024
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), AttentionConfigError> {
        if !matches!(self.dtype, ScalarType::Bf16 | ScalarType::F16) {
            return Err(AttentionConfigError::DType(self.dtype));
        }
        if !matches!(self.head_dim, 64 | 128 | 256) {
            return Err(AttentionConfigError::HeadDim(self.head_dim));
        }
        if self.block_n % 16 != 0 || !(16..=256).contains(&self.block_n) {
            return Err(AttentionConfigError::BlockN {
                block_n: self.block_n,
            });
        }
        if self.tma_store && self.varlen {
            return Err(AttentionConfigError::TmaStoreVarlen);
        }
        if self.pair && (self.causal || self.varlen) {
            return Err(AttentionConfigError::PairedTiles);
        }
        let three = self.head_dim == 64 && self.schedule == Schedule::Serial;
        if !(self.block_m == Self::BLOCK_M || (self.block_m == 192 && three)) {
            return Err(AttentionConfigError::BlockM {
                block_m: self.block_m,
                head_dim: self.head_dim,
                schedule: self.schedule,
            });
        }
        let bytes = self.smem_bytes();
        if self.stages == 0 || bytes > SMEM_LIMIT {
            return Err(AttentionConfigError::Stages {
                stages: self.stages,
                bytes,
                limit: SMEM_LIMIT,
            });
        }
        Ok(())
    }
}

/// The sizes of one attention problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttentionShape {
    /// Batch size.
    pub batch: usize,
    /// Query length.
    pub seqlen_q: usize,
    /// Key (and value) length.
    pub seqlen_k: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (dividing `heads`).
    pub kv_heads: usize,
    /// Head dimension.
    pub head_dim: usize,
}

impl AttentionShape {
    /// Floating-point operations of the forward pass: `4 · b · h · sq · sk · d` (two GEMMs),
    /// halved with the causal mask.
    pub fn flops(&self, causal: bool) -> f64 {
        let f = 4.0
            * (self.batch * self.heads) as f64
            * self.seqlen_q as f64
            * self.seqlen_k as f64
            * self.head_dim as f64;
        if causal { f / 2.0 } else { f }
    }
}

/// The host reference in f64: `(O, LSE)` for `q` `[b, sq, h, d]`, `k`, `v` `[b, sk, hk, d]` (row
/// major), the causal mask aligned to the bottom right; a query that sees no key gets `O = 0` and
/// `LSE = -inf`.
pub fn reference(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    s: AttentionShape,
    causal: bool,
    scale: f32,
) -> (Vec<f32>, Vec<f32>) {
    let AttentionShape {
        batch,
        seqlen_q: sq,
        seqlen_k: sk,
        heads,
        kv_heads,
        head_dim: d,
    } = s;
    let group = heads / kv_heads.max(1);
    let mut o = vec![0f32; batch * sq * heads * d];
    let mut lse = vec![0f32; batch * heads * sq];
    let mut p = vec![0f64; sk];
    for b in 0..batch {
        for h in 0..heads {
            let kh = h / group.max(1);
            for i in 0..sq {
                let qi = &q[((b * sq + i) * heads + h) * d..][..d];
                // Keys j <= i + sk - sq are visible under the causal mask.
                let visible = if !causal {
                    sk
                } else if i + sk < sq {
                    0
                } else {
                    (i + sk - sq + 1).min(sk)
                };
                let mut m = f64::NEG_INFINITY;
                for (j, pj) in p.iter_mut().enumerate().take(visible) {
                    let kj = &k[((b * sk + j) * kv_heads + kh) * d..][..d];
                    let dot: f64 = qi
                        .iter()
                        .zip(kj)
                        .map(|(x, y)| f64::from(*x) * f64::from(*y))
                        .sum();
                    *pj = dot * f64::from(scale);
                    m = m.max(*pj);
                }
                let mut l = 0.0;
                for pj in p.iter_mut().take(visible) {
                    *pj = (*pj - m).exp();
                    l += *pj;
                }
                let out = &mut o[((b * sq + i) * heads + h) * d..][..d];
                for (j, pj) in p.iter().enumerate().take(visible) {
                    let vj = &v[((b * sk + j) * kv_heads + kh) * d..][..d];
                    for (x, y) in out.iter_mut().zip(vj) {
                        *x += (pj / l * f64::from(*y)) as f32;
                    }
                }
                lse[(b * heads + h) * sq + i] = if visible == 0 {
                    f32::NEG_INFINITY
                } else {
                    (m + l.ln()) as f32
                };
            }
        }
    }
    (o, lse)
}

/// Packed variable-length sequences: the offsets of each sequence's first query and key
/// (`cu_seqlens_q`, `cu_seqlens_k`, one more than the sequences, the last the totals), with
/// the heads and head dimension every sequence shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarlenShape {
    /// Sequence `b`'s queries are rows `cu_seqlens_q[b]..cu_seqlens_q[b + 1]` of Q and O.
    pub cu_seqlens_q: Vec<i32>,
    /// Sequence `b`'s keys are rows `cu_seqlens_k[b]..cu_seqlens_k[b + 1]` of K and V.
    pub cu_seqlens_k: Vec<i32>,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (dividing `heads`).
    pub kv_heads: usize,
    /// Head dimension.
    pub head_dim: usize,
}

impl VarlenShape {
    /// The offsets of `lengths` (query, key) pairs, one sequence each.
    pub fn from_lengths(
        lengths: &[(usize, usize)],
        heads: usize,
        kv_heads: usize,
        head_dim: usize,
    ) -> VarlenShape {
        let offsets = |pick: fn(&(usize, usize)) -> usize| {
            let mut out = vec![0i32];
            let mut at = 0usize;
            for l in lengths {
                at += pick(l);
                out.push(i32::try_from(at).unwrap_or(i32::MAX));
            }
            out
        };
        VarlenShape {
            cu_seqlens_q: offsets(|l| l.0),
            cu_seqlens_k: offsets(|l| l.1),
            heads,
            kv_heads,
            head_dim,
        }
    }

    /// Each sequence's (query, key) lengths and first rows.
    pub(crate) fn sequences(&self) -> impl Iterator<Item = ((usize, usize), (usize, usize))> + '_ {
        let at = |c: &[i32], b: usize| c.get(b).map_or(0, |&x| x.max(0) as usize);
        (0..self.cu_seqlens_q.len().saturating_sub(1)).map(move |b| {
            let (q0, k0) = (at(&self.cu_seqlens_q, b), at(&self.cu_seqlens_k, b));
            let (q1, k1) = (at(&self.cu_seqlens_q, b + 1), at(&self.cu_seqlens_k, b + 1));
            ((q0, q1.saturating_sub(q0)), (k0, k1.saturating_sub(k0)))
        })
    }

    /// Queries and keys in all: the last offsets.
    pub fn totals(&self) -> (usize, usize) {
        let last = |c: &[i32]| c.last().map_or(0, |&x| x.max(0) as usize);
        (last(&self.cu_seqlens_q), last(&self.cu_seqlens_k))
    }

    /// The longest query sequence (the kernel's `max_seqlen_q`).
    pub fn max_seqlen_q(&self) -> usize {
        self.sequences().map(|((_, n), _)| n).max().unwrap_or(0)
    }

    /// The longest key sequence (the backward's `max_seqlen_k`).
    pub fn max_seqlen_k(&self) -> usize {
        self.sequences().map(|(_, (_, n))| n).max().unwrap_or(0)
    }

    /// Floating-point operations of the forward pass, summed over the sequences as
    /// [`AttentionShape::flops`] counts one.
    pub fn flops(&self, causal: bool) -> f64 {
        self.sequences()
            .map(|((_, sq), (_, sk))| {
                AttentionShape {
                    batch: 1,
                    seqlen_q: sq,
                    seqlen_k: sk,
                    heads: self.heads,
                    kv_heads: self.kv_heads,
                    head_dim: self.head_dim,
                }
                .flops(causal)
            })
            .sum()
    }
}

/// The host reference for packed sequences: [`reference()`] on each sequence (its own lengths
/// and causal alignment), `O` `[total_q, heads, d]` and `LSE` `[heads, total_q]`.
pub fn reference_varlen(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    s: &VarlenShape,
    causal: bool,
    scale: f32,
) -> (Vec<f32>, Vec<f32>) {
    let (h, hk, d) = (s.heads, s.kv_heads, s.head_dim);
    let (total_q, _) = s.totals();
    let mut o = vec![0f32; total_q * h * d];
    let mut lse = vec![0f32; h * total_q];
    for ((q0, sq), (k0, sk)) in s.sequences() {
        let one = AttentionShape {
            batch: 1,
            seqlen_q: sq,
            seqlen_k: sk,
            heads: h,
            kv_heads: hk,
            head_dim: d,
        };
        let rows = |x: &[f32], r0: usize, n: usize, w: usize| -> Vec<f32> {
            x.get(r0 * w..(r0 + n) * w)
                .map_or_else(Vec::new, <[f32]>::to_vec)
        };
        let (qs, ks, vs) = (
            rows(q, q0, sq, h * d),
            rows(k, k0, sk, hk * d),
            rows(v, k0, sk, hk * d),
        );
        let (os, ls) = reference(&qs, &ks, &vs, one, causal, scale);
        if let Some(dst) = o.get_mut(q0 * h * d..(q0 + sq) * h * d) {
            dst.copy_from_slice(&os);
        }
        for head in 0..h {
            for i in 0..sq {
                lse[head * total_q + q0 + i] = ls[head * sq + i];
            }
        }
    }
    (o, lse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_validate_and_refuse_with_typed_errors() {
        for c in AttentionConfig::all() {
            c.validate().unwrap();
        }
        let c = AttentionConfig::new(ScalarType::F32, 128, false);
        assert_eq!(
            c.validate(),
            Err(AttentionConfigError::DType(ScalarType::F32))
        );
        let c = AttentionConfig::new(ScalarType::Bf16, 96, false);
        assert_eq!(c.validate(), Err(AttentionConfigError::HeadDim(96)));
        let c = AttentionConfig {
            block_n: 72,
            ..AttentionConfig::new(ScalarType::Bf16, 64, false)
        };
        assert_eq!(
            c.validate(),
            Err(AttentionConfigError::BlockN { block_n: 72 })
        );
        let c = AttentionConfig {
            stages: 4,
            ..AttentionConfig::new(ScalarType::Bf16, 256, true)
        };
        assert!(matches!(
            c.validate(),
            Err(AttentionConfigError::Stages { stages: 4, .. })
        ));
        assert_eq!(
            AttentionConfig::new(ScalarType::F16, 128, true).name(),
            "attention_fwd_f16_d128_causal"
        );
    }

    /// Packed sequences of equal lengths are the batched problem: the same O, and LSE with
    /// the heads outermost; ragged ones are each their own problem.
    #[test]
    fn the_packed_reference_is_the_batched_one_per_sequence() {
        let (b, sq, sk, h, hk, d) = (2, 3, 5, 2, 1, 4);
        let x = |n: usize, salt: f32| -> Vec<f32> {
            (0..n).map(|i| ((i as f32 + salt) * 0.37).sin()).collect()
        };
        let (q, k, v) = (
            x(b * sq * h * d, 0.0),
            x(b * sk * hk * d, 1.0),
            x(b * sk * hk * d, 2.0),
        );
        let batched = AttentionShape {
            batch: b,
            seqlen_q: sq,
            seqlen_k: sk,
            heads: h,
            kv_heads: hk,
            head_dim: d,
        };
        let packed = VarlenShape::from_lengths(&[(sq, sk); 2], h, hk, d);
        assert_eq!(packed.cu_seqlens_q, vec![0, 3, 6]);
        assert_eq!(packed.totals(), (6, 10));
        assert_eq!(packed.max_seqlen_q(), 3);
        assert_eq!(packed.flops(true), batched.flops(true));
        for causal in [false, true] {
            let (o, lse) = reference(&q, &k, &v, batched, causal, 0.5);
            let (po, plse) = reference_varlen(&q, &k, &v, &packed, causal, 0.5);
            assert_eq!(o, po);
            for (bi, hi, i) in
                (0..b).flat_map(|bi| (0..h).flat_map(move |hi| (0..sq).map(move |i| (bi, hi, i))))
            {
                assert_eq!(lse[(bi * h + hi) * sq + i], plse[hi * b * sq + bi * sq + i]);
            }
        }
        // A ragged pack: the second sequence alone is a batch of one.
        let ragged = VarlenShape::from_lengths(&[(1, 2), (2, 5)], 1, 1, d);
        let (po, plse) =
            reference_varlen(&q[..3 * d], &k[..7 * d], &v[..7 * d], &ragged, true, 0.5);
        let one = AttentionShape {
            batch: 1,
            seqlen_q: 2,
            seqlen_k: 5,
            heads: 1,
            kv_heads: 1,
            head_dim: d,
        };
        let (o, lse) = reference(
            &q[d..3 * d],
            &k[2 * d..7 * d],
            &v[2 * d..7 * d],
            one,
            true,
            0.5,
        );
        assert_eq!(&po[d..], &o[..]);
        assert_eq!(&plse[1..], &lse[..]);
    }

    #[test]
    fn the_reference_is_a_softmax_average_with_the_bottom_right_causal_mask() {
        // One head, d = 1: O is the softmax-weighted mean of V over the visible keys.
        let s = AttentionShape {
            batch: 1,
            seqlen_q: 2,
            seqlen_k: 3,
            heads: 1,
            kv_heads: 1,
            head_dim: 1,
        };
        let (q, k, v) = ([1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 6.0]);
        let (o, lse) = reference(&q, &k, &v, s, true, 1.0);
        // Query 0 sees keys 0 and 1, query 1 all three (equal scores).
        assert!(
            (o[0] - 1.5).abs() < 1e-6 && (o[1] - 3.0).abs() < 1e-6,
            "{o:?}"
        );
        assert!((lse[0] - 2f32.ln()).abs() < 1e-6 && (lse[1] - 3f32.ln()).abs() < 1e-6);
        let s2 = AttentionShape {
            seqlen_q: 4,
            seqlen_k: 2,
            ..s
        };
        let (o, lse) = reference(&[1.0; 4], &[0.0; 2], &[1.0, 3.0], s2, true, 1.0);
        // Query 0 sees no key (0 + 2 - 4 < 0); query 3 sees both.
        assert_eq!((o[0], lse[0]), (0.0, f32::NEG_INFINITY));
        assert!((o[3] - 2.0).abs() < 1e-6);
    }
}
