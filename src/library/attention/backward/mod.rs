//! Attention backward for Hopper in the FlashAttention-2/3 shape: the gradients `dQ`, `dK`,
//! `dV` of the forward ([`super::build()`]) from `dO`, `O` and the forward's log-sum-exp, bf16 or
//! f16 in and out with f32 accumulation, head dims 64, 128 and 256, causal or not, grouped-query
//! and multi-query attention (each KV head's `dK`, `dV` summed over its group), any lengths,
//! batched or packed variable-length sequences ([`BackwardConfig::varlen`]). Tensors are the
//! forward's: `[batch, seq, heads, dim]`, LSE `[batch, heads, seqlen_q]`; packed, `[total,
//! heads, dim]` and LSE `[heads, total_q]` with the offsets `cu_seqlens_q`, `cu_seqlens_k`.
//!
//! Three kernels ([`build_preprocess`], [`build_main`], [`build_convert`]):
//!
//! - preprocess: `D_i = Σ dO_i ∘ O_i` and `LSE_i · log2 e` (`+inf` for a row that saw no key,
//!   so its probabilities are 0) per query row and head, f32, and the f32 `dQ` accumulator
//!   zeroed;
//! - main: a CTA per block of [`BackwardConfig::BLOCK_N`] keys, KV head and sequence; a producer
//!   warpgroup loads K and V once and streams each query block's Q, dO (64 rows), LSE and D
//!   through a [`crate::parts::Ring`] by TMA (query blocks of 64 rows, or at head dim 64 of 128,
//!   or at head dim 128 of 80 with `dQ` computed transposed, `dQᵀ = Kᵀ·dSᵀ`:
//!   [`BackwardConfig::block_m`], [`BackwardConfig::transposes_dq`]), over the query heads of
//!   the KV head's group in turn; two
//!   consumer warpgroups of 64 keys each compute `Sᵀ = K·Qᵀ` and `dPᵀ = V·dOᵀ`
//!   (wgmma from shared memory), `Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e)`, `dSᵀ = Pᵀ ∘ (dPᵀ −
//!   D)`, `dV += Pᵀ·dO` and `dK += dSᵀ·Q` (A from registers), store `dSᵀ` to shared memory
//!   and compute `dQ_i = dS·K` from it (A MN-major), each warpgroup half of dQ's columns (at
//!   d64 with 128-query blocks all of them for its 64 queries; with 64 its own keys' part of
//!   all of them, the second's added to the first's through shared memory:
//!   [`BackwardConfig::dq_summed`]), staged in shared memory (128-byte swizzle, 64-bit
//!   stores) and reduced into the f32 accumulator with one `cp.reduce.async.bulk`
//!   ([`BackwardConfig::dq_bulk`]; or by `red.global.add.f32`, or in turns by key block in the
//!   deterministic mode); the GEMMs are queued in FlashAttention-3's order, so `dPᵀ` runs
//!   under `Pᵀ`, `dV` under `dSᵀ`'s store and barrier, and `dK` under dQ's reduction and the wait
//!   for the next query block (at head dim 128 by default the next query block's `Sᵀ` beside
//!   it, [`BackwardConfig::scores_ahead`]); at the end `dK·scale` and `dV` stored. Causal: query
//!   blocks wholly above the diagonal are skipped, the diagonal masked;
//!   At head dim 256 ([`BackwardConfig::splits_head_dim`], FlashAttention-3's shape there: its
//!   registers cannot hold a 64-key warpgroup's `dK` and `dV` over 256 columns) both consumer
//!   warpgroups take the CTA's 64 keys: each computes `Sᵀ` and `dPᵀ` over its 32 of the query
//!   block's 64 queries and `dV`, `dK` and `dQ` over its 128 of the head's columns, `Pᵀ` and
//!   `dSᵀ` going through shared memory (three buffers in turn, [`BackwardConfig::ds_buffers`])
//!   as the A of `dV += Pᵀ·dO`, `dK += dSᵀ·Q` and `dQ = dS·K`;
//! - convert: `dQ = scale · dQaccum` in the input type.
//!
//! With the causal mask the main kernel's CTAs start longest first
//! ([`BackwardConfig::longest_first`]); the main and convert kernels are launched as
//! programmatic dependents of the kernel before them ([`BackwardConfig::dependent`]).

mod build;
mod host;
mod reference;

pub use build::{build_convert, build_main, build_preprocess};
pub use host::{AttentionBackward, BackwardArgs, BackwardSeqs};
pub use reference::{reference_backward, reference_backward_varlen};

use crate::parts::WarpSpecialized;
use ptx_isa::ScalarType;

use super::AttentionConfigError;

/// What one attention backward is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BackwardConfig {
    /// The element type of Q, K, V, O, dO and the gradients (bf16 or f16).
    pub dtype: ScalarType,
    /// The head dimension `d` (64, 128 or 256).
    pub head_dim: u32,
    /// Whether the causal mask applies (aligned to the bottom right, as the forward's).
    pub causal: bool,
    /// Stages of the ring of query blocks (Q, dO, LSE, D).
    pub stages: u32,
    /// Each consumer warpgroup's `dQ` of a query block staged in shared memory and reduced
    /// into the f32 accumulator with one `cp.reduce.async.bulk` (FlashAttention-3's way, as a
    /// bulk copy rather than through a tensor map); else added a value at a time by
    /// `red.global.add.f32` (FlashAttention-2's).
    pub dq_bulk: bool,
    /// dQ summed in the same order every run: each tile's bulk reductions take turns by key
    /// block (a counter per tile, each reduction waiting for its turn and completing before
    /// the next), so the gradients are bit-identical run to run (dK and dV always are: a CTA
    /// sums its KV head's group in a fixed order). Implies the bulk reduction.
    pub deterministic: bool,
    /// Packed variable-length sequences, as the forward's [`super::AttentionConfig::varlen`]:
    /// sequence `b`'s queries rows `cu_seqlens_q[b]..cu_seqlens_q[b + 1]` of Q, O, dO and dQ,
    /// its keys rows `cu_seqlens_k[b]..` of K, V, dK and dV; the grids cover the longest
    /// sequences ([`BackwardSeqs`]).
    pub varlen: bool,
    /// At head dim 64, where each consumer warpgroup's `dQ` is its own 64 keys' partial sum
    /// over all of dQ's columns: the second warpgroup's partial handed to the first through
    /// shared memory and added there, so one bulk reduction of 16 KB a query block goes to L2
    /// instead of two (FlashAttention-3's dQ traffic per key and query there; 5-6% faster on
    /// an H200, BENCHMARKS.md), the default; else each partial reduced on its own. With the
    /// bulk reduction; at head dim 128, where each warpgroup owns 64 of dQ's columns, nothing
    /// to sum.
    pub dq_summed: bool,
    /// At head dim 128 with 64-query blocks: `dV += Pᵀ·dO` queued once `dSᵀ` is stored
    /// (FlashAttention-3's order, as with [`BackwardConfig::WIDE_BLOCK_M`] or
    /// [`BackwardConfig::TRANSPOSED_BLOCK_M`] queries, where it is
    /// always so, and with [`BackwardConfig::scores_ahead`], the default) rather than behind `dPᵀ`
    /// (session 11's order: `dV` then runs under `dSᵀ`'s computation).
    pub dv_after_ds: bool,
    /// Query rows per trip of the main loop: [`BackwardConfig::BLOCK_M`], or at head dim 64
    /// [`BackwardConfig::WIDE_BLOCK_M`] (FlashAttention-3's query block there): each consumer
    /// warpgroup's `Sᵀ` and `dPᵀ` are then its 64 keys x 128 queries, and its `dQ` its 64 of
    /// the block's queries over all 128 keys (both warpgroups' `dSᵀ` read from shared memory, as
    /// at head dim 128), so no partial `dQ` is left to sum; or at head dim 128
    /// [`BackwardConfig::TRANSPOSED_BLOCK_M`] (FlashAttention-3's query block there without the
    /// causal mask), `dQ` then computed transposed ([`BackwardConfig::transposes_dq`]).
    pub block_m: u32,
    /// With the causal mask: the CTAs in the grid's own order (key blocks fastest, then KV
    /// heads, then sequences) rather than longest first ([`BackwardConfig::longest_first`],
    /// the default: on an H200 4-6 % faster at 4k tokens, 0-13 % at 8k and 16k, d128 and d256,
    /// BENCHMARKS.md session 16).
    pub in_order: bool,
    /// The main kernel launched as a programmatic dependent of the preprocess, and the convert
    /// kernel of the main one (`griddepcontrol`, PTX ISA 9.7.13.13): each is scheduled while the
    /// one before it ends (the main kernel loads K and V meanwhile) and waits for it to complete
    /// before it reads what it wrote, so the launches' gaps are hidden; else three ordinary
    /// launches. The kernels are the same either way (an ordinary launch's
    /// `griddepcontrol.wait` returns at once); a launch waited for
    /// ([`AttentionBackward::with_limit`]) is an ordinary one. The default: 4-5 % faster on an
    /// H200 at d128 4k without the causal mask, under 1 % with it (BENCHMARKS.md session 16).
    pub dependent: bool,
    /// At head dim 128 with 64-query blocks: the next trip's `Sᵀ = K·Qᵀ` issued at the end of
    /// this trip, behind `dK`, once `dQ`'s registers are staged, so it runs under `dQ`'s
    /// reduction instead of at the next trip's start, where the warpgroup would wait for it with
    /// nothing else to do (a two-stage pipeline across the query blocks; it and `dK` are waited
    /// for before the loop's back edge: ptxas serializes a wgmma whose accumulator is read across
    /// it, C7514). The last trip issues it over its own Q (discarded). The default at head dim
    /// 128: on an H200 1-6 % faster than `Sᵀ` at the trip's start (BENCHMARKS.md session 17).
    pub scores_ahead: bool,
}

impl BackwardConfig {
    /// Keys per CTA at head dims 64 and 128: two consumer warpgroups of 64 (the M of `Sᵀ =
    /// K·Qᵀ`); at 256 both take the same 64 ([`BackwardConfig::block_n`]).
    pub const BLOCK_N: u32 = 128;
    /// Query rows of one tile of `dQ`'s f32 accumulator, and per step of the main loop (the N
    /// of `Sᵀ`) unless [`BackwardConfig::block_m`] says more.
    pub const BLOCK_M: u32 = 64;
    /// The wider query block at head dim 64 ([`BackwardConfig::block_m`]).
    pub const WIDE_BLOCK_M: u32 = 128;
    /// The query block at head dim 128 with `dQ` computed transposed
    /// ([`BackwardConfig::block_m`], [`BackwardConfig::transposes_dq`]): FlashAttention-3's
    /// `kBlockM` there without the causal mask (its `80 x 128` tiles, `dQ_swapAB`).
    pub const TRANSPOSED_BLOCK_M: u32 = 80;
    /// Columns of one TMA box and shared slab: 64 16-bit elements, the 128-byte swizzle's span.
    pub const SLAB: u32 = 64;
    /// The roles: a producer warpgroup and two consumer warpgroups with their register
    /// budgets.
    pub const ROLES: WarpSpecialized = WarpSpecialized::PRODUCER_AND_TWO_CONSUMERS;
    /// The named barrier (PTX ISA 9.7.13.1; 0 is the CTA's) at which both consumer
    /// warpgroups meet once their halves of `dSᵀ` are in shared memory; at head dim 64, where
    /// each reads only its own half, with the partial `dQ`s reduced on their own
    /// ([`BackwardConfig::dq_summed`] off) consumer `c`'s 128 threads meet at `DS_BARRIER + c`.
    pub const DS_BARRIER: u32 = 1;
    /// Consumer `c`'s 128 threads meet at `DQ_BARRIER + c` once its `dQ` is staged
    /// ([`BackwardConfig::dq_bulk`]).
    pub const DQ_BARRIER: u32 = 3;
    /// With [`BackwardConfig::dq_summed`], the second consumer warpgroup arrives here once its
    /// partial `dQ` is staged, and the first waits for it (256 threads).
    pub const SUM_BARRIER: u32 = 5;
    /// Warps of a CTA of the preprocess and convert kernels, each on
    /// [`BackwardConfig::ROWS_PER_WARP`] query rows.
    pub const ROW_WARPS: u32 = 4;
    /// Query rows one warp of the preprocess and convert kernels covers, one after the other
    /// with all their loads issued before the first is used: the bytes in flight a thread holds
    /// (the kernels are bound by DRAM) and a quarter of the CTAs of a warp per row.
    pub const ROWS_PER_WARP: u32 = 4;
    /// (KV head, sequence) pairs a band of the longest-first order holds
    /// ([`BackwardConfig::longest_first`]).
    pub const BAND_PAIRS: u32 = 4;

    /// The default configuration for `dtype`, `head_dim` and `causal`: 2 stages, dQ reduced in
    /// bulk, at head dim 128 each trip's successor's `Sᵀ` issued ahead
    /// ([`BackwardConfig::scores_ahead`]); at head dim 64 128-query blocks
    /// ([`BackwardConfig::block_m`]: 1.2-1.3 times as fast on an H200 as 64 with the
    /// warpgroups' partials summed, BENCHMARKS.md); at head dim 128 64 (80 with `dQ`
    /// transposed, [`BackwardConfig::TRANSPOSED_BLOCK_M`], measured no faster, its `dQ` staging
    /// free of bank conflicts too: -4 to +0.5 % without the causal mask, -5 to +2 % with it,
    /// BENCHMARKS.md); at head dim 256, where two stages leave no room for the
    /// bulk reduction's staging, 1 stage (1.6 times as fast as two with `red.global.add.f32`).
    pub fn new(dtype: ScalarType, head_dim: u32, causal: bool) -> BackwardConfig {
        BackwardConfig {
            dtype,
            head_dim,
            causal,
            stages: 2,
            dq_bulk: true,
            deterministic: false,
            varlen: false,
            dq_summed: true,
            dv_after_ds: false,
            block_m: match head_dim {
                Self::SLAB => Self::WIDE_BLOCK_M,
                _ => Self::BLOCK_M,
            },
            in_order: false,
            dependent: true,
            scores_ahead: head_dim == 2 * Self::SLAB,
        }
        .with_bulk_dq()
    }

    /// The head dim at which the consumer warpgroups split the head's columns rather than the
    /// keys ([`BackwardConfig::splits_head_dim`]).
    pub const SPLIT_HEAD_DIM: u32 = 256;

    /// Whether both consumer warpgroups take the CTA's keys, each half of the head's columns
    /// of `dK`, `dV` and `dQ` and half of each query block's queries of `Sᵀ` and `dPᵀ` (head dim
    /// 256), rather than each its own 64 keys.
    pub fn splits_head_dim(&self) -> bool {
        self.head_dim == Self::SPLIT_HEAD_DIM
    }

    /// Keys per CTA: [`BackwardConfig::BLOCK_N`], or 64 where the warpgroups split the head
    /// dim.
    pub fn block_n(&self) -> u32 {
        match self.splits_head_dim() {
            true => 64,
            false => Self::BLOCK_N,
        }
    }

    /// Columns of `dK`, `dV` and `dQ` each consumer warpgroup holds: all (head dims 64 and 128:
    /// at 128 its `dQ` is 64 of them), or half where the warpgroups split the head dim.
    pub fn wg_cols(&self) -> u32 {
        match self.splits_head_dim() {
            true => self.head_dim / 2,
            false => self.head_dim,
        }
    }

    /// The 64-column tiles of `dq_accum` a consumer warpgroup's `dQ` covers at once: 2 where
    /// the warpgroups split the head dim, else 1.
    pub fn dq_tiles(&self) -> u32 {
        match self.splits_head_dim() {
            true => self.wg_cols() / Self::SLAB,
            false => 1,
        }
    }

    /// The shared `dSᵀ` buffers (`BLOCK_N x BLOCK_M` 16-bit each): two, a trip's and the last
    /// one's; where the warpgroups split the head dim three, `Pᵀ` and `dSᵀ` in turn (trip `t`'s
    /// `Pᵀ` in buffer `2t mod 3`, its `dSᵀ` in `2t + 1 mod 3`: a buffer is written again two
    /// steps on, once both warpgroups have met at a barrier after the wgmmas that read it).
    pub fn ds_buffers(&self) -> u32 {
        match self.splits_head_dim() {
            true => 3,
            false => 2,
        }
    }

    /// The same configuration with `dQ` reduced in bulk ([`BackwardConfig::dq_bulk`]); at head
    /// dim 256 with one stage, where the staging then fits.
    pub fn with_bulk_dq(self) -> BackwardConfig {
        BackwardConfig {
            dq_bulk: true,
            stages: self.stages_with(true),
            ..self
        }
    }

    /// The stages with the bulk reduction's staging (`bulk`) or without: at head dim 256 1 or
    /// 2, else as they are.
    fn stages_with(&self, bulk: bool) -> u32 {
        match (self.splits_head_dim(), bulk) {
            (true, true) => 1,
            (true, false) => 2,
            (false, _) => self.stages,
        }
    }

    /// Whether a trip releases its stage itself, once its `dV` and `dK` are done (`dK` issued
    /// before `dQ`, the next trip's load then under `dQ` and its reduction), rather than the
    /// next trip: where the warpgroups split the head dim on a ring of one stage.
    pub fn releases_in_trip(&self) -> bool {
        self.splits_head_dim() && self.stages == 1
    }

    /// The same configuration with each warpgroup's partial `dQ` reduced on its own
    /// ([`BackwardConfig::dq_summed`] off).
    pub fn with_partial_dq(self) -> BackwardConfig {
        BackwardConfig {
            dq_summed: false,
            ..self
        }
    }

    /// Whether the partial `dQ`s are summed: [`BackwardConfig::dq_summed`] at head dim 64
    /// with the bulk reduction.
    pub fn sums_dq(&self) -> bool {
        self.dq_summed && self.reduces_partials()
    }

    /// Whether each warpgroup's `dQ` is a partial sum reduced in bulk (head dim 64 with
    /// 64-query blocks).
    fn reduces_partials(&self) -> bool {
        self.splits_keys() && self.bulk_dq()
    }

    /// Whether each consumer warpgroup's `dQ` is its own 64 keys' partial sum over all of dQ's
    /// columns (head dim 64 with 64-query blocks: one K slab) rather than all the CTA's keys'
    /// over its columns (head dim 128: its 64; with [`BackwardConfig::wide`] its 64 queries).
    pub fn splits_keys(&self) -> bool {
        self.head_dim == Self::SLAB && !self.wide()
    }

    /// Whether the query blocks are [`BackwardConfig::WIDE_BLOCK_M`] rows.
    pub fn wide(&self) -> bool {
        self.block_m == Self::WIDE_BLOCK_M
    }

    /// Whether each consumer warpgroup computes `dQᵀ = Kᵀ·dSᵀ`, its 64 of dQ's columns x the
    /// query block's [`BackwardConfig::TRANSPOSED_BLOCK_M`] queries (FlashAttention-3's
    /// `dQ_swapAB` at head dim 128: wgmma's M is 64 rows a warpgroup, which 80 queries are not,
    /// and its N any multiple of 8 up to 256, PTX ISA 9.7.15.5.2): A is its slab of K read
    /// MN-major, B the block's `dSᵀ` read MN-major from a buffer with the 32-byte swizzle
    /// (16-query slabs: an MN-major operand's MN extent is whole swizzle atoms, PTX ISA
    /// 9.7.15.5.1.2, and 80 is no multiple of the 128-byte swizzle's 64), and the `dQ` tiles of
    /// the accumulator are 80 rows
    /// ([`BackwardConfig::dq_rows`]), staged from the transposed fragment.
    pub fn transposes_dq(&self) -> bool {
        self.block_m == Self::TRANSPOSED_BLOCK_M
    }

    /// Query rows of one tile of `dQ`'s f32 accumulator (what a consumer warpgroup reduces into
    /// it at once): [`BackwardConfig::BLOCK_M`], or the query block where `dQ` is transposed.
    pub fn dq_rows(&self) -> u32 {
        match self.transposes_dq() {
            true => self.block_m,
            false => Self::BLOCK_M,
        }
    }

    /// The swizzle of the `dSᵀ` buffers: the 128-byte one, or the 32-byte one where `dQ` is
    /// transposed ([`BackwardConfig::transposes_dq`]).
    pub fn ds_swizzle(&self) -> smem::SwizzleMode {
        match self.transposes_dq() {
            true => smem::SwizzleMode::B32,
            false => smem::SwizzleMode::B128,
        }
    }

    /// The same configuration with query blocks of `block_m` rows ([`BackwardConfig::block_m`]).
    pub fn with_block_m(self, block_m: u32) -> BackwardConfig {
        BackwardConfig { block_m, ..self }
    }

    /// The same configuration with `dV` queued once `dSᵀ` is stored
    /// ([`BackwardConfig::dv_after_ds`]).
    pub fn with_dv_after_ds(self) -> BackwardConfig {
        BackwardConfig {
            dv_after_ds: true,
            ..self
        }
    }

    /// The same configuration with each trip's `Sᵀ` issued at its start
    /// ([`BackwardConfig::scores_ahead`] off: the order before session 17).
    pub fn with_scores_in_trip(self) -> BackwardConfig {
        BackwardConfig {
            scores_ahead: false,
            ..self
        }
    }

    /// Whether the next trip's `Sᵀ` is issued at the end of each trip: by
    /// [`BackwardConfig::scores_ahead`] at head dim 128 with 64-query blocks (with 80 the
    /// registers would not hold it beside `dQᵀ`'s 40 and `dV`, `dK`; at head dims 64 and 256 not
    /// built). `dV` is then queued once `dSᵀ` is stored ([`BackwardConfig::queues_dv_after_ds`]):
    /// behind `dPᵀ` ptxas 13.0 serializes the wgmmas for want of registers (C7512).
    pub fn queues_scores_ahead(&self) -> bool {
        self.scores_ahead && self.head_dim == 2 * Self::SLAB && self.block_m == Self::BLOCK_M
    }

    /// Whether `dV` is queued once `dSᵀ` is stored: with [`BackwardConfig::WIDE_BLOCK_M`] or
    /// [`BackwardConfig::TRANSPOSED_BLOCK_M`] queries (behind `dPᵀ` ptxas spills there and
    /// serializes the wgmmas, C7512), or by [`BackwardConfig::dv_after_ds`] at head dim 128.
    pub fn queues_dv_after_ds(&self) -> bool {
        self.wide()
            || self.transposes_dq()
            || self.queues_scores_ahead()
            || (self.dv_after_ds && self.head_dim == 2 * Self::SLAB)
    }

    /// Whether the CTAs start longest first: with the causal mask (unless
    /// [`BackwardConfig::in_order`]) the grid's CTAs are numbered in bands of
    /// [`BackwardConfig::BAND_PAIRS`] (KV head, sequence) pairs, key blocks in order within a
    /// band, every pair's first key block before any pair's second ([`crate::parts::banded`]).
    /// A key block's CTA visits the query blocks from the diagonal on, so the first key blocks
    /// have the most trips; in the grid's own order the last wave starts one pair's longest CTA
    /// late and the machine idles behind it, in bands only the shortest are left at the end. A
    /// band's pairs stay few, so the CTAs resident together share as few pairs' Q, dO and `dQ`
    /// tiles in L2 as in the grid's order.
    pub fn longest_first(&self) -> bool {
        self.causal && !self.in_order
    }

    /// The same configuration with the CTAs in the grid's own order
    /// ([`BackwardConfig::in_order`]).
    pub fn with_in_order(self) -> BackwardConfig {
        BackwardConfig {
            in_order: true,
            ..self
        }
    }

    /// The same configuration with three ordinary launches ([`BackwardConfig::dependent`] off).
    pub fn with_serial_launches(self) -> BackwardConfig {
        BackwardConfig {
            dependent: false,
            ..self
        }
    }

    /// The same configuration over packed variable-length sequences
    /// ([`BackwardConfig::varlen`]).
    pub fn with_varlen(self) -> BackwardConfig {
        BackwardConfig {
            varlen: true,
            ..self
        }
    }

    /// The same configuration in the deterministic mode ([`BackwardConfig::deterministic`]; at
    /// head dim 256 with one stage, [`BackwardConfig::with_bulk_dq`]; with 64-query blocks,
    /// where the turns' waits fit beside the registers: with 128 ptxas spills at the causal
    /// mask).
    pub fn with_deterministic(self) -> BackwardConfig {
        BackwardConfig {
            deterministic: true,
            block_m: Self::BLOCK_M,
            ..self.with_bulk_dq()
        }
    }

    /// Whether dQ is reduced in bulk (by [`BackwardConfig::dq_bulk`] or the deterministic
    /// mode).
    pub fn bulk_dq(&self) -> bool {
        self.dq_bulk || self.deterministic
    }

    /// The same configuration with `dQ` added by `red.global.add.f32`
    /// ([`BackwardConfig::dq_bulk`] off; at head dim 256 with two stages).
    pub fn with_red_dq(self) -> BackwardConfig {
        BackwardConfig {
            dq_bulk: false,
            stages: self.stages_with(false),
            ..self
        }
    }

    /// Every configuration the library builds: bf16 and f16, head dims 64, 128 and 256, causal
    /// and not, each with `dQ` reduced in bulk, by `red.global.add.f32` (at head dim 256 with
    /// two stages) and in the deterministic mode; over packed
    /// sequences the default and (bf16) the deterministic mode; at head dim 64 also with the
    /// partial `dQ`s reduced on their own (bf16 also deterministic and packed), and with
    /// 128-query blocks ([`BackwardConfig::block_m`]; batched and packed, bf16 also `red`); at
    /// head dim 128 also with each trip's `Sᵀ` at its start ([`BackwardConfig::scores_ahead`]
    /// off), `dV` behind `dPᵀ` or after `dSᵀ` (bf16 also packed), and with 64- and 80-query
    /// blocks ([`BackwardConfig::TRANSPOSED_BLOCK_M`]; batched and packed, bf16 also `red`).
    pub fn all() -> Vec<BackwardConfig> {
        let mut out = Vec::new();
        for dtype in [ScalarType::Bf16, ScalarType::F16] {
            for head_dim in [64, 128, 256] {
                for causal in [false, true] {
                    // 64-query blocks, whatever the default; at d64 128 and at d128 80 below.
                    let cfg =
                        BackwardConfig::new(dtype, head_dim, causal).with_block_m(Self::BLOCK_M);
                    out.push(cfg);
                    out.push(cfg.with_red_dq());
                    out.push(cfg.with_deterministic());
                    out.push(cfg.with_varlen());
                    if dtype == ScalarType::Bf16 {
                        out.push(cfg.with_varlen().with_deterministic());
                    }
                    if head_dim == 2 * Self::SLAB {
                        // The orders before the scores ahead.
                        let in_trip = cfg.with_scores_in_trip();
                        out.push(in_trip);
                        out.push(in_trip.with_dv_after_ds());
                        if dtype == ScalarType::Bf16 {
                            out.push(in_trip.with_varlen());
                            out.push(in_trip.with_dv_after_ds().with_varlen());
                        }
                        let tall = cfg.with_block_m(Self::TRANSPOSED_BLOCK_M);
                        out.push(tall);
                        out.push(tall.with_varlen());
                        if dtype == ScalarType::Bf16 {
                            out.push(tall.with_red_dq());
                        }
                    }
                    if head_dim == 64 {
                        let wide = cfg.with_block_m(Self::WIDE_BLOCK_M);
                        out.push(wide);
                        out.push(wide.with_varlen());
                        if dtype == ScalarType::Bf16 {
                            out.push(wide.with_red_dq());
                        }
                        out.push(cfg.with_partial_dq());
                        if dtype == ScalarType::Bf16 {
                            out.push(cfg.with_partial_dq().with_deterministic());
                            out.push(cfg.with_partial_dq().with_varlen());
                        }
                    }
                }
            }
        }
        out
    }

    /// The main kernel's name: `attention_bwd_bf16_d128` (`_causal`), `_varlen` over packed
    /// sequences, `_m128` or `_m80` with 128- or 80-query blocks, `_dvlate` with `dV` queued once
    /// `dSᵀ` is stored
    /// ([`BackwardConfig::dv_after_ds`]) and `_intrip` with it behind `dPᵀ`, both at head dim 128
    /// with each trip's `Sᵀ` at its start ([`BackwardConfig::scores_ahead`] off), `_partials` with the partial `dQ`s reduced on
    /// their own
    /// ([`BackwardConfig::dq_summed`] off at head dim 64), `_red`
    /// with `dQ` added by `red.global.add.f32`, `_det` in the deterministic mode, `_inorder`
    /// with the causal mask's CTAs in the grid's order ([`BackwardConfig::in_order`]).
    pub fn name(&self) -> String {
        format!(
            "{}{}{}{}{}{}{}",
            super::name_stem("bwd", self.dtype, self.head_dim, self.causal),
            if self.varlen { "_varlen" } else { "" },
            match self.block_m {
                Self::BLOCK_M => String::new(),
                m => format!("_m{m}"),
            },
            match (self.queues_dv_after_ds(), self.queues_scores_ahead()) {
                _ if self.block_m != Self::BLOCK_M || self.head_dim != 2 * Self::SLAB => "",
                (_, true) => "",
                (true, false) => "_dvlate",
                (false, false) => "_intrip",
            },
            if self.reduces_partials() && !self.dq_summed {
                "_partials"
            } else {
                ""
            },
            match (self.deterministic, self.bulk_dq()) {
                (true, _) => "_det",
                (false, true) => "",
                (false, false) => "_red",
            },
            if self.causal && self.in_order {
                "_inorder"
            } else {
                ""
            }
        )
    }

    /// Bytes of one 16-bit row of a tile (`d` elements).
    fn row_bytes(&self) -> u32 {
        self.head_dim * 2
    }

    /// Bytes of the K tile (and of the V tile): [`BackwardConfig::block_n`] `x d`.
    pub fn kv_bytes(&self) -> u32 {
        self.block_n() * self.row_bytes()
    }

    /// Bytes of one query block's Q (and dO): [`BackwardConfig::block_m`] `x d`.
    pub fn q_bytes(&self) -> u32 {
        self.block_m * self.row_bytes()
    }

    /// Bytes of one query block's LSE (and D): [`BackwardConfig::block_m`] f32.
    pub fn row_stat_bytes(&self) -> u32 {
        self.block_m * 4
    }

    /// Bytes of one `dSᵀ` buffer ([`BackwardConfig::block_n`] `x` [`BackwardConfig::block_m`]
    /// 16-bit); the kernel keeps [`BackwardConfig::ds_buffers`].
    pub fn ds_bytes(&self) -> u32 {
        self.block_n() * self.block_m * 2
    }

    /// Bytes of one consumer warpgroup's `dQ` stage ([`BackwardConfig::dq_bulk`]): its
    /// [`BackwardConfig::dq_tiles`] tiles of [`BackwardConfig::dq_rows`] rows of 64 f32.
    pub fn dq_stage_bytes(&self) -> u32 {
        self.dq_rows() * Self::SLAB * 4 * self.dq_tiles()
    }

    /// Dynamic shared memory: K, V, the `dSᵀ` buffers, the two `dQ` stages, the ring's stages
    /// (Q and dO 1024-byte aligned, then LSE and D 128-byte aligned; each stage but the last
    /// padded to the next 1024-byte boundary) and the barriers (the ring's two a stage and K
    /// and V's, 8 bytes each).
    pub fn smem_bytes(&self) -> u32 {
        let stage = 2 * self.q_bytes() + 2 * self.row_stat_bytes().next_multiple_of(128);
        let dq = if self.bulk_dq() {
            2 * self.dq_stage_bytes()
        } else {
            0
        };
        2 * self.kv_bytes()
            + self.ds_buffers() * self.ds_bytes()
            + dq
            + self.stages.saturating_sub(1) * stage.next_multiple_of(1024)
            + stage
            + 8 * (2 * self.stages + 1)
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), AttentionConfigError> {
        if !matches!(self.dtype, ScalarType::Bf16 | ScalarType::F16) {
            return Err(AttentionConfigError::DType(self.dtype));
        }
        if !matches!(self.head_dim, 64 | 128 | 256) {
            return Err(AttentionConfigError::BackwardHeadDim(self.head_dim));
        }
        let wide_fits = self.wide() && self.head_dim == Self::SLAB;
        let transposed_fits = self.transposes_dq() && self.head_dim == 2 * Self::SLAB;
        if self.block_m != Self::BLOCK_M && !wide_fits && !transposed_fits {
            return Err(AttentionConfigError::BackwardBlockM {
                block_m: self.block_m,
                head_dim: self.head_dim,
            });
        }
        if self.deterministic && self.block_m != Self::BLOCK_M {
            return Err(AttentionConfigError::BackwardDeterministicBlockM(
                self.block_m,
            ));
        }
        let bytes = self.smem_bytes();
        if self.stages == 0 || bytes > super::SMEM_LIMIT {
            return Err(AttentionConfigError::Stages {
                stages: self.stages,
                bytes,
                limit: super::SMEM_LIMIT,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every configuration the library builds validates, with a distinct name; what it
    /// refuses comes back as a typed error.
    #[test]
    fn configurations_validate_and_refuse_with_typed_errors() {
        let all = BackwardConfig::all();
        assert!(all.iter().all(|c| c.validate().is_ok()));
        let names: std::collections::HashSet<String> = all.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), all.len());
        let bf16 = |d: u32| BackwardConfig::new(ScalarType::Bf16, d, true);
        // Query blocks of 128 only at d64, of 80 (dQ transposed) only at d128.
        let blocks = [(128, 128), (64, 96), (64, 80), (256, 80)].map(|(head_dim, block_m)| {
            (
                bf16(head_dim).with_block_m(block_m),
                AttentionConfigError::BackwardBlockM { block_m, head_dim },
            )
        });
        let refused = blocks.into_iter().chain([
            (bf16(96), AttentionConfigError::BackwardHeadDim(96)),
            (
                BackwardConfig::new(ScalarType::F32, 128, false),
                AttentionConfigError::DType(ScalarType::F32),
            ),
            (
                bf16(64).with_deterministic().with_block_m(128),
                AttentionConfigError::BackwardDeterministicBlockM(128),
            ),
        ]);
        for (c, e) in refused {
            assert_eq!(c.validate(), Err(e));
        }
        // No ring at all; and head dim 256's bulk reduction needs its ring of one stage (`red`
        // takes two).
        for (stages, head_dim) in [(0, 128), (2, 256)] {
            let c = BackwardConfig {
                stages,
                ..bf16(head_dim)
            };
            assert!(matches!(
                c.validate(),
                Err(AttentionConfigError::Stages { stages: s, .. }) if s == stages
            ));
        }
        assert_eq!(bf16(256).stages, 1);
        assert_eq!(bf16(256).with_deterministic().stages, 1);
        assert_eq!(bf16(256).with_red_dq().stages, 2);
        assert_eq!(bf16(256).with_red_dq().with_bulk_dq(), bf16(256));
        let named = [
            (bf16(128), "attention_bwd_bf16_d128_causal"),
            (
                bf16(64)
                    .with_varlen()
                    .with_partial_dq()
                    .with_deterministic(),
                "attention_bwd_bf16_d64_causal_varlen_partials_det",
            ),
            // Nothing to sum at d128, nor with `red`.
            (
                bf16(128).with_partial_dq(),
                "attention_bwd_bf16_d128_causal",
            ),
            (
                bf16(64).with_block_m(64).with_partial_dq().with_red_dq(),
                "attention_bwd_bf16_d64_causal_red",
            ),
            (bf16(64), "attention_bwd_bf16_d64_causal_m128"),
            (bf16(256), "attention_bwd_bf16_d256_causal"),
            (
                bf16(128).with_scores_in_trip().with_dv_after_ds(),
                "attention_bwd_bf16_d128_causal_dvlate",
            ),
            (
                bf16(128).with_scores_in_trip(),
                "attention_bwd_bf16_d128_causal_intrip",
            ),
            // `dV` after `dSᵀ` always so with the scores ahead (the default).
            (
                bf16(128).with_dv_after_ds(),
                "attention_bwd_bf16_d128_causal",
            ),
            // Always so with 128-query blocks; nothing to change at d256.
            (
                bf16(64).with_dv_after_ds(),
                "attention_bwd_bf16_d64_causal_m128",
            ),
            (
                bf16(256).with_dv_after_ds(),
                "attention_bwd_bf16_d256_causal",
            ),
            (
                bf16(64).with_block_m(128).with_varlen(),
                "attention_bwd_bf16_d64_causal_varlen_m128",
            ),
            // The deterministic mode takes 64-query blocks.
            (
                bf16(64).with_block_m(128).with_deterministic(),
                "attention_bwd_bf16_d64_causal_det",
            ),
            // Nothing to sum with 128-query blocks.
            (
                bf16(64).with_block_m(128).with_partial_dq(),
                "attention_bwd_bf16_d64_causal_m128",
            ),
            (
                bf16(256).with_red_dq(),
                "attention_bwd_bf16_d256_causal_red",
            ),
            // The scores ahead only at d128 with 64-query blocks.
            (
                bf16(64).with_block_m(64).with_scores_in_trip(),
                "attention_bwd_bf16_d64_causal",
            ),
            (
                bf16(128)
                    .with_block_m(BackwardConfig::TRANSPOSED_BLOCK_M)
                    .with_scores_in_trip(),
                "attention_bwd_bf16_d128_causal_m80",
            ),
            // The grid's order: only the causal mask has another.
            (
                bf16(256).with_in_order(),
                "attention_bwd_bf16_d256_causal_inorder",
            ),
            (
                BackwardConfig::new(ScalarType::Bf16, 128, false).with_in_order(),
                "attention_bwd_bf16_d128",
            ),
            // Always so with 80-query blocks.
            (
                bf16(128)
                    .with_block_m(BackwardConfig::TRANSPOSED_BLOCK_M)
                    .with_dv_after_ds(),
                "attention_bwd_bf16_d128_causal_m80",
            ),
            // The deterministic mode takes 64-query blocks.
            (
                bf16(128)
                    .with_block_m(BackwardConfig::TRANSPOSED_BLOCK_M)
                    .with_deterministic(),
                "attention_bwd_bf16_d128_causal_det",
            ),
        ];
        for (c, name) in named {
            assert_eq!(c.name(), name);
        }
    }
}
