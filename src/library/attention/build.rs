//! The attention kernel, written with the authoring model: TMA tensors, the pool's stage ring,
//! named barriers, `gemm_async` (wgmma from shared memory and with A from registers), fragment
//! reductions and masks, and the register epilogue.

use crate::parts::{
    Band, ConsumerId, InitScope, IssueOrder, PersistentGrid, Ring, banded, init_barriers,
    load_slabs, load_slabs_in_pair, pool_barrier, stage_for_bulk,
};
use layouts::fragment::wgmma::{accumulator, register_a_k};
use ptx_isa::builder::CmpOp;
use ptx_isa::{Directive, Imm, Reg, RegRef, Src, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::TileSpec;
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pipeline::hang::HangSites;
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier, WaitMode};

use super::{AttentionConfig, Schedule, TileOrder};
use crate::kernel::math::LOG2_E;
use crate::kernel::{
    Axis, Buffer, BuiltKernel, Elem, Expr, KernelBuilder, ReduceOp, Result, TensorOpts, TmaTensor,
    Var,
};
use crate::runtime::ExtentFacts;
use crate::signature::TmaBox;
use crate::tile::{Accumulate, ExecScope, TileRef};

/// The tensors and extents the kernel declares.
struct Args<T: Elem> {
    q: TmaTensor<T>,
    k: TmaTensor<T>,
    v: TmaTensor<T>,
    o: Out<T>,
    lse: Buffer<ty::F32>,
    scale: Reg<ty::F32>,
    /// Sequences: a symbol, or one less than the offsets packed.
    batch: Expr,
    heads: Var,
    kv_heads: Var,
    /// K's and V's row extent (`seqlen_k`, or `total_k` packed).
    keys: Var,
    seqs: Seqs,
}

/// How O is written.
enum Out<T: Elem> {
    /// From registers, rows past the sequence masked.
    Registers(Buffer<T>),
    /// By TMA from shared memory (boxes of `[1, 64, 1, 64]`, 128-byte swizzle), clipped at the
    /// tensor's `seqlen_q`.
    Tma(TmaTensor<T>),
}

/// Where the sequences are.
enum Seqs {
    /// `[batch, seq, heads, d]` tensors: every sequence of the same lengths.
    Batched { seqlen_q: Var, seqlen_k: Var },
    /// Packed `[total, heads, d]` tensors: sequence `b` at rows `cu[b]..cu[b + 1]`; the grid
    /// covers the longest query sequence.
    Varlen {
        cu_q: Box<Buffer<ty::S32>>,
        cu_k: Box<Buffer<ty::S32>>,
        max_seqlen_q: Var,
    },
}

/// What every warpgroup knows of its CTA's work.
struct Block {
    /// The query tile, head and batch.
    m_block: Var,
    head: Var,
    batch: Var,
    /// The KV head (`head / (heads / kv_heads)`).
    kv_head: Var,
    /// This sequence's query and key lengths.
    seqlen_q: Var,
    seqlen_k: Var,
    /// Packed sequences: this sequence's first query row and first key row.
    starts: Option<(Var, Var)>,
    /// Key tiles this query tile visits (`0..n_blocks`): all of them, or with the causal mask
    /// those not wholly above the diagonal.
    n_blocks: Var,
}

impl Block {
    /// The coordinates of query row `row` of this sequence in Q and O (without the column):
    /// `[batch, row, head]`, or `[first + row, head]` packed.
    fn q_at(&self, row: Expr) -> Vec<Expr> {
        match self.starts {
            None => vec![self.batch.into(), row, self.head.into()],
            Some((q0, _)) => vec![row + q0, self.head.into()],
        }
    }

    /// The same for key row `row` in K and V (the KV head).
    fn kv_at(&self, row: Expr) -> Vec<Expr> {
        match self.starts {
            None => vec![self.batch.into(), row, self.kv_head.into()],
            Some((_, k0)) => vec![row + k0, self.kv_head.into()],
        }
    }
}

/// The query tiles a CTA works on.
enum Tiles {
    /// One, from the CTA's ids.
    One(Block),
    /// A persistent grid's: tiles `cta, cta + ctas, ...`, numbered in the configuration's
    /// [`TileOrder`] ([`tile_coords`]); in CTA pairs, pairs of neighbouring tiles
    /// `cluster, cluster + clusters, ...`, the CTA taking the one of its rank.
    Persistent {
        grid: PersistentGrid,
        /// Query tiles (pairs of them in CTA pairs) of the longest sequence.
        m_blocks: Expr,
    },
}

impl Tiles {
    /// `body` for each of the CTA's tiles, with its block ([`block`]); packed sequences skip
    /// the tiles past their sequence's end.
    fn each<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        p: &Parts<'_, T>,
        body: impl FnOnce(&mut KernelBuilder, &Block) -> Result<()>,
    ) -> Result<()> {
        match self {
            Tiles::One(blk) => body(k, blk),
            Tiles::Persistent { grid, m_blocks } => grid.for_each(k, |k, t| {
                let [m, head, batch] = tile_coords(k, p, t, m_blocks)?;
                // In a pair, this CTA's tile of the pair (never with the causal mask).
                let m = match p.rank {
                    Some(rank) => k.let_("m_in_pair", m * 2u32 + rank)?,
                    None => m,
                };
                // The longest tiles first with the causal mask.
                let m_block = if p.cfg.causal {
                    k.let_("m_block", m_blocks.clone() - 1u32 - m)?
                } else {
                    m
                };
                let blk = block(k, p.cfg, p.args, [m_block, head, batch])?;
                if p.cfg.varlen {
                    let live = k.cmp(CmpOp::Lt, blk.m_block * p.cfg.block_m, blk.seqlen_q)?;
                    k.if_(live, |k| body(k, &blk)).end()
                } else {
                    body(k, &blk)
                }
            }),
        }
    }
}

/// Persistent tile `t`'s `[row block, head, sequence]` in the configuration's
/// [`TileOrder`], the row block counted from the first (the caller reverses it with the causal
/// mask): a bijection of `0..m_blocks * heads * batch` onto the tiles either way. L2 sections
/// are the [`banded`] order over (head and sequence, row block), a band as many heads as a
/// section's K and V fill.
fn tile_coords<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    t: Var,
    m_blocks: &Expr,
) -> Result<[Var; 3]> {
    let heads = p.args.heads;
    let (m, pair) = match p.cfg.order {
        TileOrder::HeadMajor => (
            k.let_("m_raw", t % m_blocks.clone())?,
            k.let_("pair", t / m_blocks.clone())?,
        ),
        TileOrder::L2Sections => {
            // Pairs per section: max(1, SECTION_BYTES / (keys · d · 4)), K and V 16-bit.
            let per_head = Expr::from(p.args.keys) * (p.cfg.head_dim * 4);
            let fit = k.eval(Expr::from(AttentionConfig::SECTION_BYTES) / per_head)?;
            let swz = k.reg::<ty::U32>();
            k.max(swz, fit, 1u32)?;
            let swz = k.bind("section_pairs", swz);
            let pairs = k.let_("pairs", Expr::from(heads) * p.args.batch.clone())?;
            let span = k.let_("section_span", m_blocks.clone() * swz)?;
            let (pair, m) = banded(k, t, pairs, span, Band::Var(swz))?;
            (m, pair)
        }
    };
    Ok([
        m,
        k.let_("head", pair % heads)?,
        k.let_("batch", pair / heads)?,
    ])
}

/// What every part of the kernel reads: the configuration, the parameters, the rings and Q's
/// tile and barriers.
struct Parts<'a, T: Elem> {
    cfg: &'a AttentionConfig,
    args: &'a Args<T>,
    /// The K tiles' ring and the V tiles' (released separately: `S = Q·Kᵀ` is done with a K
    /// tile before `P·V` is with its V tile).
    k_ring: &'a Ring,
    v_ring: &'a Ring,
    q_s: Reg<ty::U32>,
    q_full: NamedBarrier,
    /// Persistent: the consumers' release of Q (one arrival per consumer warpgroup).
    q_empty: Option<NamedBarrier>,
    /// In CTA pairs ([`AttentionConfig::pair`]): this CTA's rank in its pair.
    rank: Option<Var>,
}

/// Builds the attention kernel for `cfg` (target sm_90a: wgmma, TMA and setmaxnreg). Its
/// parameters: `q`, `k`, `v` (TMA tensors, boxes of `[1, rows, 1, 64]` with the 128-byte
/// swizzle), `o` (`[batch, seqlen_q, heads, d]`, 16-byte aligned), `lse`
/// (`[batch, heads, seqlen_q]` f32) and `scale` (the softmax scale, f32).
pub fn build(target: Target, cfg: &AttentionConfig) -> Result<BuiltKernel> {
    build_with_waits(target, cfg, WaitMode::Spin).map(|(built, _)| built)
}

/// [`build`] with its mbarrier waits in `mode`: [`WaitMode::Bounded`] is the debug build, whose
/// waits write a hang record and trap after a bound; the wait sites (empty for
/// [`WaitMode::Spin`]) come with it for the host's [`crate::runtime::HangBuffer`].
pub fn build_with_waits(
    target: Target,
    cfg: &AttentionConfig,
    mode: WaitMode,
) -> Result<(BuiltKernel, HangSites)> {
    match cfg.dtype {
        ptx_isa::ScalarType::F16 => build_typed::<ty::F16>(target, cfg, mode),
        _ => build_typed::<ty::Bf16>(target, cfg, mode),
    }
}

fn build_typed<T: Elem>(
    target: Target,
    cfg: &AttentionConfig,
    mode: WaitMode,
) -> Result<(BuiltKernel, HangSites)> {
    let name = cfg.name();
    let mut k = KernelBuilder::new(&name, target);
    cfg.validate().map_err(|e| k.error(e.to_string()))?;
    if T::DTYPE != cfg.dtype {
        return Err(k.error(format!("built for {} with {} tensors", cfg.dtype, T::DTYPE)));
    }
    let bm = cfg.block_m;
    let args = declare::<T>(&mut k, cfg)?;
    let longest = match &args.seqs {
        Seqs::Batched { seqlen_q, .. } => *seqlen_q,
        Seqs::Varlen { max_seqlen_q, .. } => *max_seqlen_q,
    };
    // The query tiles, or in CTA pairs the pairs of them (the last pair's second tile past the
    // queries where the tiles are odd).
    let m_blocks = Expr::ceil_div(longest, bm * cfg.cluster());
    // One CTA per query tile, or a persistent grid of one CTA (or pair) per SM (or two) looping
    // over the tiles.
    let grid = if cfg.persistent {
        let work = m_blocks.clone() * args.heads * args.batch.clone();
        Err(match cfg.pair {
            true => PersistentGrid::clusters(work),
            false => PersistentGrid::ctas(work),
        })
    } else {
        let ctas = m_blocks.clone() * cfg.cluster();
        Ok(k.cta_id([ctas, args.heads.into(), args.batch.clone()])?)
    };
    let rank = if cfg.pair {
        let [rank] = k.cta_id_in_cluster([2], None)?;
        // The peer arrives on this CTA's barriers and multicasts into its shared memory from
        // the same kernel: the cluster's shape is part of it (PTX ISA 11.4.5
        // `.reqnctapercluster`).
        k.directive(Directive::ReqNctaPerCluster([2, 1, 1]))?;
        Some(rank)
    } else {
        None
    };
    // setmaxnreg needs a register cap at entry: .maxntid 384 and one CTA per SM.
    let roles = cfg.roles();
    let consumers = roles.consumers;
    let tid = roles.declare(&mut k)?;

    // Shared memory: Q (d / 64 slabs of block_m rows x 128 bytes), the K/V ring, Q's barrier.
    let q_s = k.pool_bytes("q", cfg.q_bytes(), 1024)?;
    let spec = |name: &str| TileSpec {
        name: name.to_string(),
        bytes: cfg.kv_bytes(),
        align: 1024,
    };
    // Two rings, K's and V's. full: the producer's one arrive.expect_tx; empty: one arrival per
    // consumer warpgroup (of both CTAs in a pair: both producers write every stage).
    let readers = consumers * cfg.cluster();
    let (k_pipe, k_base) = k.pool_pipeline("k", cfg.stages, &[spec("k")], 1, readers)?;
    let (v_pipe, v_base) = k.pool_pipeline("v", cfg.stages, &[spec("v")], 1, readers)?;
    let mut sync = BarrierSync::new(&name, mode);
    // A debug build's hang records go to the module's record block.
    sync.declare_globals(k.module_mut())?;
    // Each stage is released by every consumer warpgroup's leader (and the peer's in a pair).
    let k_ring = Ring::declare(&k, &mut sync, "k", k_pipe, k_base, consumers)?
        .in_cluster(rank, cfg.cluster());
    let v_ring = Ring::declare(&k, &mut sync, "v", v_pipe, v_base, consumers)?
        .in_cluster(rank, cfg.cluster());
    let q_full = pool_barrier(&mut k, &mut sync, "q_full", 1)?;
    // Persistent: the consumers release Q before the producer loads the next tile's.
    let q_empty = if cfg.persistent {
        Some(pool_barrier(&mut k, &mut sync, "q_empty", consumers)?)
    } else {
        None
    };

    let tiles = match grid {
        Ok(ids) => Tiles::One(block(&mut k, cfg, &args, ids)?),
        Err(grid) => Tiles::Persistent { grid, m_blocks },
    };

    // Thread 0 initialises the rings' barriers and Q's; everyone sees them after the CTA barrier
    // (the cluster's in a pair: the peer arrives on them and multicasts into the stages).
    let ones: Vec<NamedBarrier> = std::iter::once(q_full).chain(q_empty).collect();
    let rings = [&k_ring, &v_ring];
    let scope = match rank {
        Some(_) => InitScope::Cluster,
        None => InitScope::Cta,
    };
    init_barriers(&mut k, &mut sync, tid, (&rings, &ones), scope)?;

    let parts = Parts {
        cfg,
        args: &args,
        k_ring: &k_ring,
        v_ring: &v_ring,
        q_s,
        q_full,
        q_empty,
        rank,
    };
    // Warpgroup 0 the producer, warpgroups 1 and 2 the consumers (64 query rows each).
    let sync = std::cell::RefCell::new(sync);
    let run = |k: &mut KernelBuilder| {
        roles.run(
            k,
            tid,
            |k| producer(k, &parts, &tiles, &mut sync.borrow_mut(), tid),
            |k, me| consumer(k, &parts, &tiles, &mut sync.borrow_mut(), me),
        )
    };
    match &tiles {
        Tiles::One(blk) if cfg.varlen => {
            // The grid covers the longest sequence: a query tile past this one's end has no
            // work.
            let live = k.cmp(CmpOp::Lt, blk.m_block * bm, blk.seqlen_q)?;
            k.comment("packed sequences: only query tiles inside this sequence");
            k.if_(live, run).end()?;
        }
        _ => run(&mut k)?,
    }
    if rank.is_some() {
        // No CTA of a pair leaves while its peer may still arrive on its barriers or multicast
        // into its shared memory.
        k.cluster_sync()?;
    }
    let sync = sync.into_inner();
    let mut sites = sync
        .finish()
        .map_err(|e| k.error(format!("barrier protocol: {e}")))?;
    let built = k.finish()?;
    if mode == WaitMode::Bounded {
        // Each wait's PTX line, for the hang report.
        sites.locate(built.ptx());
    }
    Ok((built, sites))
}

/// The work of query tile `m_block` of head `head` of sequence `batch`: the KV head, the
/// sequence's lengths (and first rows, packed) and the key tiles it visits.
fn block<T: Elem>(
    k: &mut KernelBuilder,
    cfg: &AttentionConfig,
    args: &Args<T>,
    [m_block, head, batch]: [Var; 3],
) -> Result<Block> {
    let (bm, bn) = (cfg.block_m, cfg.block_n);
    // The KV head of a query head, this sequence's lengths, and the key tiles this query tile
    // sees.
    let kv_head = k.let_("kv_head", head / (args.heads / args.kv_heads))?;
    let (seqlen_q, seqlen_k, starts) = match &args.seqs {
        Seqs::Batched { seqlen_q, seqlen_k } => (*seqlen_q, *seqlen_k, None),
        Seqs::Varlen { cu_q, cu_k, .. } => {
            // cu[b] and cu[b + 1]: the sequence's rows (offsets are never negative).
            let at = |k: &mut KernelBuilder, cu: &Buffer<ty::S32>, i: Expr, name: &str| {
                let r = k.load(cu, [i])?;
                let r = r.retype::<ty::U32>().map_err(|e| k.error(e.to_string()))?;
                Ok::<_, crate::kernel::KernelError>(k.bind(name, r))
            };
            let q0 = at(k, cu_q, batch.into(), "q_first")?;
            let q1 = at(k, cu_q, batch + 1, "q_end")?;
            let k0 = at(k, cu_k, batch.into(), "k_first")?;
            let k1 = at(k, cu_k, batch + 1, "k_end")?;
            let sq = k.let_("seqlen_q", Expr::from(q1) - q0)?;
            let sk = k.let_("seqlen_k", Expr::from(k1) - k0)?;
            (sq, sk, Some((q0, k0)))
        }
    };
    let n_all = Expr::ceil_div(seqlen_k, bn);
    let n_blocks = if cfg.causal {
        // Keys up to (last row) + seqlen_k - seqlen_q: min(n_all, ceil((m0 + bm + sk - sq) / bn)),
        // 0 when that is negative.
        let reach = k.let_("reach", m_block * bm + bm + seqlen_k)?;
        let below = k.cmp(CmpOp::Gt, reach, seqlen_q)?;
        let end = k.reg::<ty::U32>();
        let r = k.eval(Expr::ceil_div(reach - seqlen_q, bn))?;
        let all = k.eval(n_all)?;
        k.min(end, r, all)?;
        let zero = k.reg::<ty::U32>();
        k.mov(zero, 0u32)?;
        k.selp(end, end, zero, below)?;
        k.bind("n_blocks", end)
    } else {
        k.let_("n_blocks", n_all)?
    };
    let blk = Block {
        m_block,
        head,
        batch,
        kv_head,
        seqlen_q,
        seqlen_k,
        starts,
        n_blocks,
    };

    Ok(blk)
}

/// The parameters: `q`, `k`, `v`, `o`, `lse`, `scale`, and the symbolic extents they name;
/// packed sequences also take `cu_seqlens_q`, `cu_seqlens_k` (`[batch + 1]` i32) and
/// `max_seqlen_q` (a `u32` scalar: the grid's query tiles cover it).
fn declare<T: Elem>(k: &mut KernelBuilder, cfg: &AttentionConfig) -> Result<Args<T>> {
    let at_least_1 = ExtentFacts::NONE.at_least(1);
    let d = cfg.head_dim;
    let slab = AttentionConfig::SLAB;
    // Shapes without the batch when packed: [rows, heads, d].
    let (batch, seqlen_q, seqlen_k, offsets) = if cfg.varlen {
        let offsets = k.symbol_with("offsets", ExtentFacts::NONE.at_least(2))?;
        let total_q = k.symbol_with("total_q", at_least_1)?;
        let total_k = k.symbol_with("total_k", at_least_1)?;
        (offsets - 1, total_q, total_k, Some(offsets))
    } else {
        let batch = k.symbol_with("batch", at_least_1)?;
        let seqlen_q = k.symbol_with("seqlen_q", at_least_1)?;
        let seqlen_k = k.symbol_with("seqlen_k", at_least_1)?;
        (Expr::from(batch), seqlen_q, seqlen_k, None)
    };
    let heads = k.symbol_with("heads", at_least_1)?;
    let kv_heads = k.symbol_with("kv_heads", at_least_1)?;
    let lead = |rows: Var| -> Vec<Expr> {
        match offsets {
            Some(_) => vec![rows.into()],
            None => vec![batch.clone(), rows.into()],
        }
    };
    let shape = |rows: Var, h: Var| -> Vec<Expr> {
        let mut s = lead(rows);
        s.extend([Expr::from(h), Expr::from(d)]);
        s
    };
    let qkv = |rows: u32| match offsets {
        Some(_) => TmaBox::new([rows, 1, slab]).swizzle(SwizzleMode::B128),
        None => TmaBox::new([1, rows, 1, slab]).swizzle(SwizzleMode::B128),
    };
    let (q_shape, kv_shape) = (shape(seqlen_q, heads), shape(seqlen_k, kv_heads));
    let q = k.tma_tensor::<T>("q", q_shape.clone(), qkv(cfg.block_m))?;
    // In a CTA pair each producer loads half of every K and V tile.
    let kv_rows = cfg.block_n / cfg.cluster();
    let kt = k.tma_tensor::<T>("k", kv_shape.clone(), qkv(kv_rows))?;
    let v = k.tma_tensor::<T>("v", kv_shape, qkv(kv_rows))?;
    let o = if cfg.tma_store {
        Out::Tma(k.tma_tensor::<T>("o", q_shape, qkv(64))?)
    } else {
        Out::Registers(k.tensor::<T>("o", q_shape, TensorOpts::default().align(16))?)
    };
    // LSE [batch, heads, seqlen_q], or [heads, total_q] packed.
    let lse_shape = match offsets {
        Some(_) => vec![Expr::from(heads), seqlen_q.into()],
        None => vec![batch.clone(), heads.into(), seqlen_q.into()],
    };
    let lse = k.tensor::<ty::F32>("lse", lse_shape, TensorOpts::default())?;
    let scale = k.scalar::<ty::F32>("scale")?;
    let seqs = match offsets {
        Some(offsets) => Seqs::Varlen {
            cu_q: Box::new(k.tensor::<ty::S32>(
                "cu_seqlens_q",
                [offsets],
                TensorOpts::default(),
            )?),
            cu_k: Box::new(k.tensor::<ty::S32>(
                "cu_seqlens_k",
                [offsets],
                TensorOpts::default(),
            )?),
            max_seqlen_q: k.symbol_arg("max_seqlen_q", at_least_1)?,
        },
        None => Seqs::Batched { seqlen_q, seqlen_k },
    };
    Ok(Args {
        q,
        k: kt,
        v,
        o,
        lse,
        scale,
        batch,
        heads,
        kv_heads,
        keys: seqlen_k,
        seqs,
    })
}

/// The producer warpgroup: gives its registers up, and one thread loads, for each of its CTA's
/// query tiles, each key tile's K and V into the next free stage of the rings, and Q between the
/// first K and the first V.
fn producer<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    tiles: &Tiles,
    sync: &mut BarrierSync,
    tid: Var,
) -> Result<()> {
    let (cfg, args, q_s, q_full) = (p.cfg, p.args, p.q_s, p.q_full);
    let (bm, bn, d) = (cfg.block_m, cfg.block_n, cfg.head_dim);
    let leader = k.cmp(CmpOp::Eq, tid, 0)?;
    k.if_(leader, |k| {
        // Both rings advance together: one cursor, kept from tile to tile; Q's buffer is a
        // ring of one stage.
        let cur = RingCursor::new(k.isa(), cfg.stages, Phase::Parity)?;
        let q_cur = match p.q_empty {
            Some(_) => Some(RingCursor::new(k.isa(), 1, Phase::Parity)?),
            None => None,
        };
        let stage = cur.stage();
        let fill = |k: &mut KernelBuilder,
                    sync: &mut BarrierSync,
                    ring: &Ring,
                    t: &TmaTensor<T>,
                    blk: &Block,
                    row: Expr| {
            // Wait until every consumer released the stage (both CTAs' in a pair), announce
            // its bytes (the whole tile's: in a pair the peer's producer multicasts the other
            // half).
            let full = ring.acquire(k, sync, &cur)?;
            ring.commit(k, sync, full, ring.tx_bytes())?;
            let dst = ring.first_tile(k, stage)?;
            match p.rank {
                None => load_slabs(k, sync, full, t, dst, bn, d, &blk.kv_at(row)),
                Some(rank) => {
                    let at = blk.kv_at(row + rank * (bn / 2));
                    load_slabs_in_pair(k, sync, full, t, (dst, bn), d, &at, rank)
                }
            }
        };
        tiles.each(k, p, |k, blk| {
            // The tile's first K goes out before Q, whose buffer a persistent CTA's consumers
            // may still hold for the last tile (FlashAttention-3's order): the first `Q·Kᵀ`
            // then waits for Q alone. A tile that visits no key still takes its Q (the
            // consumers wait for it and release it): one trip without K and V.
            let trips = k.reg::<ty::U32>();
            let n_reg = k.eval(blk.n_blocks)?;
            k.max(trips, n_reg, 1u32)?;
            let trips = k.bind("trips", trips);
            k.for_range(0, trips, |k, n| {
                let has_kv = k.cmp(CmpOp::Lt, n, blk.n_blocks)?;
                k.if_(has_kv, |k| fill(k, sync, p.k_ring, &args.k, blk, n * bn))
                    .end()?;
                let first = k.cmp(CmpOp::Eq, n, 0u32)?;
                k.if_(first, |k| {
                    if let (Some(q_empty), Some(q_cur)) = (p.q_empty, &q_cur) {
                        // The consumers are done with the last tile's Q (a fresh barrier
                        // counts as released for parity 1: PTX ISA 9.7.13.15.16).
                        let want = q_cur.producer_parity(k.isa())?;
                        sync.wait(k.isa(), q_empty.at, None, q_empty.addr, want)?;
                        q_cur.advance(k.isa())?;
                    }
                    let arrival = Arrival::ExpectTx(cfg.q_bytes());
                    sync.arrive(k.isa(), q_full, arrival, ArriveSite::Loop)?;
                    let q_at = blk.q_at(blk.m_block * bm);
                    load_slabs(k, sync, q_full, &args.q, q_s, bm, d, &q_at)
                })
                .end()?;
                k.if_(has_kv, |k| {
                    fill(k, sync, p.v_ring, &args.v, blk, n * bn)?;
                    cur.advance(k.isa())?;
                    Ok(())
                })
                .end()
            })
        })
    })
    .end()
}

/// A consumer warpgroup: for each of its CTA's query tiles, 64 query rows, the online softmax
/// over the key tiles in the configuration's [`Schedule`], and the normalised O and LSE
/// stored.
fn consumer<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    tiles: &Tiles,
    sync: &mut BarrierSync,
    me: ConsumerId,
) -> Result<()> {
    let (cfg, args, q_s, q_full) = (p.cfg, p.args, p.q_s, p.q_full);
    let (bm, bn, d) = (cfg.block_m, cfg.block_n, cfg.head_dim);
    let dt = T::DTYPE;
    let (lt, cw) = (me.thread, me.index);
    // scale · log2(e), folded into each exponent's fma.
    let scale_log2 = k.reg::<ty::F32>();
    k.mul(scale_log2, args.scale, LOG2_E)?;
    let leader = k.cmp(CmpOp::Eq, lt, 0)?;
    // The rings' positions and Q's phase, kept from tile to tile; the ping-pong's turns too
    // (both warpgroups take as many in every tile).
    let cursors = Cursors {
        k: RingCursor::new(k.isa(), cfg.stages, Phase::Parity)?,
        v: RingCursor::new(k.isa(), cfg.stages, Phase::Parity)?,
        q: match p.q_empty {
            Some(_) => Some(RingCursor::new(k.isa(), 1, Phase::Parity)?),
            None => None,
        },
    };
    let turns = match cfg.schedule {
        Schedule::Serial => None,
        Schedule::PingPong | Schedule::PingPongOverlap => {
            Some(IssueOrder::start(k, cw, AttentionConfig::PINGPONG_BARRIER)?)
        }
    };
    tiles.each(k, p, |k, blk| {
        // This warpgroup's first query row.
        let row0 = k.let_("row0", blk.m_block * bm + cw * 64)?;
        let SoftmaxState {
            s_acc,
            o_acc,
            p_cast,
            p_a,
            rows,
            m,
            l,
        } = softmax_state(k, dt, bn, d)?;

        // Q of this warpgroup: 64 rows of the block_m-row slabs.
        let q_phase = match &cursors.q {
            Some(q) => Src::from(q.phase()),
            None => Src::from(0u32),
        };
        sync.wait(k.isa(), q_full.at, None, q_full.addr, q_phase)?;
        let q_wg = k.reg::<ty::U32>();
        let cw_r = k.eval(cw)?;
        k.mad_lo(q_wg, cw_r, 64 * AttentionConfig::SLAB * 2, q_s)?;
        let c = Consumer {
            q_tile: TileRef::shared_slabs(dt, [64, d], bm, q_wg, 1024, SwizzleMode::B128),
            s_acc,
            o_acc,
            p_cast,
            p_a,
            rows,
            m,
            l,
            scale_log2,
            row0,
            lt,
            leader,
            blk,
        };
        match &turns {
            None => serial(k, p, &c, sync, &cursors)?,
            Some(turns) => pipelined(k, p, &c, sync, turns, &cursors)?,
        }
        let mut release = |k: &mut KernelBuilder| -> Result<()> {
            if let (Some(q_empty), Some(q)) = (p.q_empty, &cursors.q) {
                let arrival = Arrival::Count(cfg.consumers());
                sync.arrive(k.isa().when(leader), q_empty, arrival, ArriveSite::Loop)?;
                q.advance(k.isa())?;
            }
            Ok(())
        };
        if cfg.tma_store {
            // O is staged in this warpgroup's rows of Q's buffer: Q is released once the TMA
            // stores have read them.
            epilogue(k, p, &c, row0, lt, cw, q_wg)?;
            release(k)
        } else {
            // Every S = Q·Kᵀ of the tile is done: Q's buffer may take the next tile's.
            release(k)?;
            epilogue(k, p, &c, row0, lt, cw, q_wg)
        }
    })?;
    if let Some(turns) = turns {
        turns.finish(k)?;
    }
    Ok(())
}

/// A consumer warpgroup's positions in the K and V rings and, on a persistent grid, in Q's
/// one-stage ring.
struct Cursors {
    k: RingCursor,
    v: RingCursor,
    q: Option<RingCursor>,
}

/// What a consumer warpgroup holds through a query tile's loop.
struct Consumer<'a> {
    /// Its 64 rows of Q.
    q_tile: TileRef,
    /// The score accumulator `S` and the output accumulator `O`.
    s_acc: Buffer<ty::F32>,
    o_acc: Buffer<ty::F32>,
    /// `P` in 16-bit pairs: as `S`'s conversion target and as the A operand of `P·V`.
    p_cast: TileRef,
    p_a: TileRef,
    /// The row statistics: which rows, running max and sum.
    rows: RowGroups,
    m: Vec<Reg<ty::F32>>,
    l: Vec<Reg<ty::F32>>,
    /// `scale · log2(e)`.
    scale_log2: Reg<ty::F32>,
    /// Its first query row, its thread in the warpgroup, and whether that is 0.
    row0: Var,
    lt: Var,
    leader: ptx_isa::Pred,
    /// The query tile.
    blk: &'a Block,
}

impl Consumer<'_> {
    /// `S = Q·Kᵀ` for the K tile at `ka` (K-major both: d contiguous).
    fn scores<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        p: &Parts<'_, T>,
        ka: Reg<ty::U32>,
    ) -> Result<()> {
        let (bn, d) = (p.cfg.block_n, p.cfg.head_dim);
        let k_tile = TileRef::shared_slabs(T::DTYPE, [bn, d], bn, ka, 1024, SwizzleMode::B128);
        k.gemm_async(
            &self.s_acc,
            &self.q_tile,
            &k_tile,
            Accumulate::No,
            ExecScope::Warpgroup,
        )?;
        Ok(())
    }

    /// `O += P·V` for the V tile at `va`: V's tile is `[bn, d]` d-contiguous, so `B = Vᵀ` is
    /// MN-major. `keys`: the tile's key columns that any of the CTA's rows sees
    /// ([`Consumer::keys_seen`]), where fewer than all may be (the k-steps past them skipped:
    /// `P` is zero there).
    fn values<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        p: &Parts<'_, T>,
        va: Reg<ty::U32>,
        keys: Option<Reg<ty::U32>>,
    ) -> Result<()> {
        let (bn, d) = (p.cfg.block_n, p.cfg.head_dim);
        let v_tile = TileRef::shared_slabs(T::DTYPE, [bn, d], bn, va, 1024, SwizzleMode::B128)
            .transposed()
            .ok_or_else(|| k.error("V's tile has no layout"))?;
        let (o, a, scope) = (&self.o_acc, &self.p_a, ExecScope::Warpgroup);
        match keys {
            Some(keys) => k.gemm_async_until(o, a, &v_tile, Accumulate::Yes, keys, scope)?,
            None => k.gemm_async(o, a, &v_tile, Accumulate::Yes, scope)?,
        };
        Ok(())
    }

    /// The key columns of tile `n` that any of the CTA's query rows sees: those before
    /// `seqlen_k` and, with the causal mask, up to its last row's diagonal. The CTA's, not the
    /// warpgroup's: a count that depends on the thread makes ptxas serialize every wgmma of
    /// the kernel (C7520: "WG.AR in divergent path").
    fn keys_seen<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        p: &Parts<'_, T>,
        n: Expr,
    ) -> Result<Reg<ty::U32>> {
        let (blk, bn) = (self.blk, p.cfg.block_n);
        let keys = k.eval(Expr::from(blk.seqlen_k) - n.clone() * bn)?;
        if !p.cfg.causal {
            return Ok(keys);
        }
        // The CTA's last row m0 + bm - 1 sees key n*bn + c iff c < m0 + bm + sk - sq - n*bn,
        // which may be negative (sq > sk): taken as signed, at least 0.
        let bm = p.cfg.block_m;
        let hi = s32(k, blk.m_block * bm + bm + blk.seqlen_k)?;
        let lo = s32(k, Expr::from(blk.seqlen_q) + n * bn)?;
        let seen = k.reg::<ty::S32>();
        k.sub(seen, hi, lo)?;
        k.max(seen, seen, 0i32)?;
        let keys = keys
            .retype::<ty::S32>()
            .map_err(|e| k.error(e.to_string()))?;
        k.min(seen, seen, keys)?;
        seen.retype::<ty::U32>().map_err(|e| k.error(e.to_string()))
    }

    /// The mask and the softmax statistics of key tile `n` (S holds its scores): returns the
    /// factors that rescale O, which the caller applies once no `P·V` writes O.
    fn softmax<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        p: &Parts<'_, T>,
        n: Var,
    ) -> Result<Vec<Reg<ty::F32>>> {
        mask(k, p, self.blk, &self.s_acc, n, self.row0, self.lt)?;
        online_softmax(
            k,
            &self.s_acc,
            &self.rows,
            &self.m,
            &self.l,
            self.scale_log2,
        )
    }

    /// O rescaled by `alpha` and `P` converted from S (no `P·V` may be reading P or writing O).
    fn rescale_and_convert(&self, k: &mut KernelBuilder, alpha: &[Reg<ty::F32>]) -> Result<()> {
        let Some(o) = self.o_acc.regs().map(<[_]>::to_vec) else {
            return Err(k.error("O is a register fragment"));
        };
        for (v, &r) in o.iter().enumerate() {
            k.mul(r, r, alpha[self.rows.o[v]])?;
        }
        k.cast(&self.p_cast, &self.s_acc, ExecScope::Warpgroup)?;
        Ok(())
    }
}

/// [`Schedule::Serial`]: each key tile in turn, every GEMM waited for at once.
fn serial<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    c: &Consumer,
    sync: &mut BarrierSync,
    cursors: &Cursors,
) -> Result<()> {
    let (kc, vc) = (&cursors.k, &cursors.v);
    k.for_range(0, c.blk.n_blocks, |k, n| {
        let ka = p.k_ring.wait_tile(k, sync, kc)?;
        c.scores(k, p, ka)?;
        k.wgmma_wait_group(0)?;
        p.k_ring.release_next(k, sync, kc, c.leader, false)?;
        let alpha = c.softmax(k, p, n)?;
        c.rescale_and_convert(k, &alpha)?;
        let va = p.v_ring.wait_tile(k, sync, vc)?;
        c.values(k, p, va, None)?;
        k.wgmma_wait_group(0)?;
        p.v_ring.release_next(k, sync, vc, c.leader, false)
    })
}

/// [`Schedule::PingPong`] and [`Schedule::PingPongOverlap`] (FlashAttention-3 §3.1, §3.2):
/// `S_0` first, then for each later tile `S_j = Q·K_jᵀ` and `O += P_{j-1}·V_{j-1}` issued
/// together in this warpgroup's turn, the softmax of `S_j` after `S_j` is done (and, without the
/// overlap, after `P·V` too), O rescaled and `P_j` converted once `P·V` is done; the last
/// `P·V` after the loop. K tiles are released as soon as `S` is done, V tiles after `P·V`.
fn pipelined<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    c: &Consumer,
    sync: &mut BarrierSync,
    turns: &IssueOrder,
    cursors: &Cursors,
) -> Result<()> {
    let overlap = p.cfg.schedule == Schedule::PingPongOverlap;
    let (k_ring, v_ring) = (p.k_ring, p.v_ring);
    // K's cursor runs a tile ahead of V's within the tile; each moves once per key tile (with
    // its release), so both end the tile together.
    let (kc, vc) = (&cursors.k, &cursors.v);
    let any = k.cmp(CmpOp::Gt, c.blk.n_blocks, 0u32)?;
    k.if_(any, |k| {
        let ka = k_ring.wait_tile(k, sync, kc)?;
        turns.take(k, |k| c.scores(k, p, ka))?;
        k.wgmma_wait_group(0)?;
        k_ring.release_next(k, sync, kc, c.leader, true)?;
        let first = k.let_("n_first", Expr::from(0u32))?;
        let alpha = c.softmax(k, p, first)?;
        c.rescale_and_convert(k, &alpha)?;
        k.for_range(1, c.blk.n_blocks, |k, n| {
            let ka = k_ring.wait_tile(k, sync, kc)?;
            let va = v_ring.wait_tile(k, sync, vc)?;
            // S_j first: wgmma groups complete in order, so `wait_group 1` waits for it alone
            // (PTX ISA 9.7.15.7.2 wgmma.wait_group).
            turns.take(k, |k| {
                c.scores(k, p, ka)?;
                c.values(k, p, va, None)
            })?;
            k.wgmma_wait_group(if overlap { 1 } else { 0 })?;
            k_ring.release_next(k, sync, kc, c.leader, false)?;
            let alpha = c.softmax(k, p, n)?;
            if overlap {
                k.wgmma_wait_group(0)?;
            }
            v_ring.release_next(k, sync, vc, c.leader, false)?;
            c.rescale_and_convert(k, &alpha)
        })?;
        // The last key tile: partly past seqlen_k, or on the diagonal with the causal mask,
        // its `P·V` cut to the keys the CTA's rows see (the count computed before the turn,
        // which it would otherwise lengthen). Not with the mask on key tiles no longer than
        // the query tile: with seqlen_q = seqlen_k the CTA's last row sees all of its diagonal
        // tile, and the paths only cost (H200, causal 4×4096: 567-573 TFLOP/s against 571-577
        // without; 4×4096 without the mask, 176-row tiles: 666-669 against 661-668).
        let cut = !p.cfg.causal || p.cfg.block_n > p.cfg.block_m;
        let keys = if cut {
            Some(c.keys_seen(k, p, Expr::from(c.blk.n_blocks) - 1u32)?)
        } else {
            None
        };
        let va = v_ring.wait_tile(k, sync, vc)?;
        turns.take(k, |k| c.values(k, p, va, keys))?;
        k.wgmma_wait_group(0)?;
        v_ring.release_next(k, sync, vc, c.leader, true)
    })
    .end()
}

/// A consumer warpgroup's accumulators and online-softmax state for key tiles of `bn` and head
/// dim `d` in `dt`: S and O (O zeroed), P's 16-bit pairs (as S's conversion target and as the A
/// operand of `P·V`), and the running max (-inf, in raw score units) and sum (0) of each row the
/// thread holds.
pub(crate) struct SoftmaxState {
    pub(crate) s_acc: Buffer<ty::F32>,
    pub(crate) o_acc: Buffer<ty::F32>,
    pub(crate) p_cast: TileRef,
    pub(crate) p_a: TileRef,
    pub(crate) rows: RowGroups,
    pub(crate) m: Vec<Reg<ty::F32>>,
    pub(crate) l: Vec<Reg<ty::F32>>,
}

/// [`SoftmaxState`]'s registers, declared and initialised (the attention's consumer per query
/// tile, the decode kernel's once).
pub(crate) fn softmax_state(
    k: &mut KernelBuilder,
    dt: ptx_isa::ScalarType,
    bn: u32,
    d: u32,
) -> Result<SoftmaxState> {
    let frag = |k: &KernelBuilder, n: u32| {
        accumulator(i64::from(n), dt).map_err(|e| k.error(e.to_string()))
    };
    let s_frag = frag(k, bn)?;
    let o_frag = frag(k, d)?;
    let s_acc = k.alloc_fragment::<ty::F32>("s", s_frag.clone())?;
    let o_acc = k.alloc_fragment::<ty::F32>("o", o_frag)?;
    // 16-bit pairs: one register class for bf16 and f16.
    let p_pairs: Vec<RegRef> = k
        .regs::<ty::Bf16x2>((bn / 4) as usize)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    // P = S converted in the accumulator's fragment; the same registers are the A operand
    // of P·V (register_a_k: the m64nN accumulator's order is the A fragment's, PTX ISA
    // 9.7.15.5.1.1.1).
    let p_cast = TileRef::registers(dt, s_frag, p_pairs.clone());
    let p_a = TileRef::registers(
        dt,
        register_a_k(dt, i64::from(bn)).map_err(|e| k.error(e.to_string()))?,
        p_pairs,
    );
    k.fill(&o_acc, Imm::f32(0.0), ExecScope::Warpgroup)?;
    // Row statistics of the two rows a thread holds (r and r + 8).
    let (rows, m, l) = row_statistics(k, &s_acc, &o_acc)?;
    Ok(SoftmaxState {
        s_acc,
        o_acc,
        p_cast,
        p_a,
        rows,
        m,
        l,
    })
}

/// [`row_statistics`]: the rows, their running maxima and their running sums.
pub(crate) type RowStatistics = (RowGroups, Vec<Reg<ty::F32>>, Vec<Reg<ty::F32>>);

/// The rows a thread holds of the score fragment `s` and the output fragment `o`
/// ([`row_groups`]), and for each its online softmax's running max (-inf, in raw score units)
/// and running sum (0), initialised.
pub(crate) fn row_statistics(
    k: &mut KernelBuilder,
    s: &Buffer<ty::F32>,
    o: &Buffer<ty::F32>,
) -> Result<RowStatistics> {
    let rows = row_groups(k, s, o)?;
    let m: Vec<Reg<ty::F32>> = k.regs(rows.count);
    let l: Vec<Reg<ty::F32>> = k.regs(rows.count);
    for (&mi, &li) in m.iter().zip(&l) {
        k.mov(mi, f32::NEG_INFINITY)?;
        k.mov(li, 0.0f32)?;
    }
    Ok((rows, m, l))
}

/// Which of the thread's row statistics each value of S and of O belongs to.
pub(crate) struct RowGroups {
    /// Distinct rows a thread holds (2 for a wgmma accumulator).
    pub(crate) count: usize,
    /// For each value of S, its row's index.
    pub(crate) s: Vec<usize>,
    /// For each value of O, its row's index.
    pub(crate) o: Vec<usize>,
}

pub(crate) fn row_groups(
    k: &KernelBuilder,
    s: &Buffer<ty::F32>,
    o: &Buffer<ty::F32>,
) -> Result<RowGroups> {
    let rows_of = |b: &Buffer<ty::F32>| -> Option<Vec<i64>> {
        let tv = b.fragment()?;
        (0..tv.values())
            .map(|v| tv.coord(0, v).ok().map(|(r, _)| r))
            .collect()
    };
    let (Some(sr), Some(or)) = (rows_of(s), rows_of(o)) else {
        return Err(k.error("S and O are not register fragments"));
    };
    let mut distinct: Vec<i64> = Vec::new();
    for &r in &sr {
        if !distinct.contains(&r) {
            distinct.push(r);
        }
    }
    let index = |r: &i64| distinct.iter().position(|x| x == r);
    let s_idx: Option<Vec<usize>> = sr.iter().map(index).collect();
    let o_idx: Option<Vec<usize>> = or.iter().map(index).collect();
    let (Some(s_idx), Some(o_idx)) = (s_idx, o_idx) else {
        return Err(k.error("a thread holds rows of O that it does not hold of S"));
    };
    Ok(RowGroups {
        count: distinct.len(),
        s: s_idx,
        o: o_idx,
    })
}

/// `e` evaluated and read as signed (a count that may go below zero).
pub(crate) fn s32(k: &mut KernelBuilder, e: Expr) -> Result<Reg<ty::S32>> {
    let r = k.eval(e)?;
    r.retype::<ty::S32>().map_err(|e| k.error(e.to_string()))
}

/// Masks S where needed: key columns past `seqlen_k` (the last tile when `seqlen_k` is not a
/// multiple of the tile) and, with the causal mask, keys after the diagonal (tiles that cross
/// it). Tiles wholly below the diagonal and inside the keys take no mask.
fn mask<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    blk: &Block,
    s_acc: &Buffer<ty::F32>,
    n: Var,
    row0: Var,
    lt: Var,
) -> Result<()> {
    let cfg = p.cfg;
    let bn = cfg.block_n;
    let (sq, sk) = (blk.seqlen_q, blk.seqlen_k);
    // The tile's columns n*bn .. n*bn + bn reach past the keys.
    let edge = k.cmp(CmpOp::Gt, n * bn + bn, sk)?;
    let needs = if cfg.causal {
        // Its last column passes the diagonal of this warpgroup's first row:
        // n*bn + bn - 1 > row0 + sk - sq.
        let diag = k.cmp(CmpOp::Gt, n * bn + bn + sq, row0 + sk + 1)?;
        let p = k.pred();
        k.or(p, edge, diag)?;
        p
    } else {
        edge
    };
    k.if_(needs, |k| {
        // Columns c >= seqlen_k - n*bn do not exist.
        let cols = k.reg::<ty::S32>();
        let (skr, nb) = (s32(k, sk.into())?, s32(k, n * bn)?);
        k.sub(cols, skr, nb)?;
        k.mask_fragment(s_acc, lt, 0, cols, f32::NEG_INFINITY)?;
        if cfg.causal {
            // Query row0 + r sees key n*bn + c iff c - r < row0 + sk - sq - n*bn + 1.
            let hi = s32(k, row0 + sk + 1)?;
            let lo = s32(k, sq + n * bn)?;
            let limit = k.reg::<ty::S32>();
            k.sub(limit, hi, lo)?;
            k.mask_fragment(s_acc, lt, 1, limit, f32::NEG_INFINITY)?;
        }
        Ok(())
    })
    .end()
}

/// O's 64 rows of this warpgroup by TMA: the 16-bit pairs `stmatrix`ed into the warpgroup's
/// rows of Q's slabs (free once its `S = Q·Kᵀ` are done; 128-byte swizzled as O's tensor map
/// expects: element (r, c) at `c % 64 + 64 r + 64 bm (c / 64)`, a slab being `bm` rows of 64),
/// `fence.proxy.async` so the async proxy sees the writes (PTX ISA 9.7.12.4 membar/fence), the
/// warpgroup's named barrier, then one TMA store per 64 columns by its first thread, which waits
/// until they have read shared memory (PTX ISA 9.7.9.25.4 `cp.async.bulk.wait_group.read`)
/// before the buffer is reused or the CTA exits. Rows past `seqlen_q` are clipped by TMA.
#[allow(clippy::too_many_arguments)]
fn store_tma<T: Elem>(
    k: &mut KernelBuilder,
    o: &TmaTensor<T>,
    packed: &TileRef,
    origin: &[Expr],
    [bm, d]: [u32; 2],
    cw: Var,
    lt: Var,
    q_wg: Reg<ty::U32>,
) -> Result<()> {
    use layouts::IntTuple as I;
    let slab = AttentionConfig::SLAB;
    let slabs = i64::from(d / slab);
    // A slab of Q is block_m rows of 64 elements.
    let slab_elems = i64::from(bm * slab);
    let layout = layouts::Layout::new(
        I::tuple([I::tuple([I::Int(64), I::Int(slabs)]), I::Int(64)]),
        I::tuple([I::tuple([I::Int(1), I::Int(slab_elems)]), I::Int(64)]),
    )
    .map_err(|e| k.error(e.to_string()))?;
    let mut staging =
        TileRef::shared_row_major(T::DTYPE, 64, d, q_wg, 1024).with_swizzle(SwizzleMode::B128);
    staging.layout = Some(layout);
    let bar = stage_for_bulk(k, &staging, packed, cw + AttentionConfig::STORE_BARRIER)?;
    let leader = k.cmp(CmpOp::Eq, lt, 0u32)?;
    k.if_(leader, |k| {
        let slab_bytes = bm * slab * 2;
        for s in 0..d / slab {
            let at = if s == 0 {
                q_wg
            } else {
                let a = k.reg::<ty::U32>();
                k.add(a, q_wg, s * slab_bytes)?;
                a
            };
            let src = TileRef::shared_row_major(T::DTYPE, 64, slab, at, 1024)
                .with_swizzle(SwizzleMode::B128);
            let mut at = origin.to_vec();
            if let Some(col) = at.last_mut() {
                *col = Expr::from(s * slab);
            }
            let dst = k.tma_box_at(o, &at)?;
            k.copy_async(&dst, &src, None, None, ExecScope::Thread)?;
        }
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)?;
        Ok(())
    })
    .end()?;
    // The other threads reuse the buffer only after the stores have read it.
    k.sync_named(bar, 128)
}

/// One step of the online softmax on S: the new row max, the running sum rescaled and
/// `P = 2^(S·scale·log2e - max·scale·log2e)` in place, its row sums added; returns each row's
/// factor `alpha` that rescales O.
pub(crate) fn online_softmax(
    k: &mut KernelBuilder,
    s_acc: &Buffer<ty::F32>,
    rows: &RowGroups,
    m: &[Reg<ty::F32>],
    l: &[Reg<ty::F32>],
    scale_log2: Reg<ty::F32>,
) -> Result<Vec<Reg<ty::F32>>> {
    let Some(s) = s_acc.regs().map(<[_]>::to_vec) else {
        return Err(k.error("S is a register fragment"));
    };
    let tile_max = k.reduce_fragment(ReduceOp::Max, s_acc, Axis::Rows)?;
    let mut bias = Vec::with_capacity(rows.count);
    let mut alpha = Vec::with_capacity(rows.count);
    if tile_max.values.len() != rows.count || m.len() != rows.count {
        return Err(k.error("the row max has another number of rows than the fragment"));
    }
    for (&mi, &tm) in m.iter().zip(&tile_max.values) {
        let m_new = k.max_of(mi, tm)?;
        // A row with every key masked so far keeps max -inf: its exponents use 0 instead, so
        // they are 2^-inf = 0 and never NaN (-inf - -inf).
        let dead = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, dead, m_new, f32::NEG_INFINITY)?;
        let m_use = k.reg::<ty::F32>();
        k.selp(m_use, 0.0f32, m_new, dead)?;
        let b = k.reg::<ty::F32>();
        k.mul(b, m_use, scale_log2)?;
        k.neg(b, b)?;
        // alpha = 2^((m_old - m_use) · scale · log2e).
        let a = k.exp2_fma(mi, scale_log2, b)?;
        k.mov(mi, m_new)?;
        bias.push(b);
        alpha.push(a);
    }
    for (v, &r) in s.iter().enumerate() {
        let g = rows.s[v];
        k.fma(r, r, scale_log2, bias[g])?;
        k.ex2(r, r)?;
    }
    let sums = k.reduce_fragment(ReduceOp::Sum, s_acc, Axis::Rows)?;
    for i in 0..rows.count {
        let Some(&sum) = sums.values.get(i) else {
            return Err(k.error("the row sum has fewer rows than the fragment"));
        };
        k.fma(l[i], l[i], alpha[i], sum)?;
    }
    Ok(alpha)
}

/// O divided by the row sums, converted to 16-bit and stored (rows past `seqlen_q` skipped);
/// `LSE = max·scale + ln(sum)` stored by the first lane of each quad.
fn epilogue<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    c: &Consumer,
    row0: Var,
    lt: Var,
    cw: Var,
    q_wg: Reg<ty::U32>,
) -> Result<()> {
    let (bm, d, args, blk) = (p.cfg.block_m, p.cfg.head_dim, p.args, c.blk);
    let (o_acc, rows, m, l) = (&c.o_acc, &c.rows, &c.m[..], &c.l[..]);
    let dt = T::DTYPE;
    let Some(o) = o_acc.regs().map(<[_]>::to_vec) else {
        return Err(k.error("O is a register fragment"));
    };
    let mut lse = Vec::with_capacity(rows.count);
    let mut inv = Vec::with_capacity(rows.count);
    for i in 0..rows.count {
        // A row that saw no key has sum 0: O = 0, LSE = -inf.
        let empty = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, empty, l[i], 0.0f32)?;
        let r = k.rcp_of(l[i])?;
        k.selp(r, 0.0f32, r, empty)?;
        let ln = k.log(l[i])?;
        let e = k.fma_of(m[i], args.scale, ln)?;
        k.selp(e, f32::NEG_INFINITY, e, empty)?;
        inv.push(r);
        lse.push(e);
    }
    for (v, &r) in o.iter().enumerate() {
        k.mul(r, r, inv[rows.o[v]])?;
    }
    let pairs: Vec<RegRef> = k
        .regs::<ty::Bf16x2>(o.len() / 2)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    let Some(o_frag) = o_acc.fragment().cloned() else {
        return Err(k.error("O is a register fragment"));
    };
    let packed = TileRef::registers(dt, o_frag, pairs);
    k.cast(&packed, o_acc, ExecScope::Warpgroup)?;
    let live = k.cmp(CmpOp::Lt, row0, blk.seqlen_q)?;
    k.if_(live, |k| {
        let mut origin = blk.q_at(row0.into());
        origin.push(Expr::from(0u32));
        // Packed, the rows end with the sequence; else with the tensor's `seqlen_q`.
        let (row_dim, end) = match blk.starts {
            Some((q0, _)) => (0, Some(Expr::from(q0) + blk.seqlen_q)),
            None => (1, None),
        };
        match &args.o {
            Out::Registers(o) => {
                let view = k.rows_until(o, &origin, row_dim, [64, d], end)?;
                k.copy(&view, &packed, ExecScope::Warpgroup)?;
            }
            Out::Tma(o) => store_tma(k, o, &packed, &origin, [bm, d], cw, lt, q_wg)?,
        }
        // LSE: each quad's first lane holds its rows' statistics.
        let (r, c) = k.fragment_origin(o_acc, lt)?;
        let first = k.cmp(CmpOp::Eq, c, 0)?;
        let Some(tv) = o_acc.fragment() else {
            return Err(k.error("O is a register fragment"));
        };
        let base_row = tv.coord(0, 0).map(|x| x.0).unwrap_or(0);
        let offsets: Vec<i64> = (0..rows.count)
            .map(|i| {
                let v = rows.o.iter().position(|&g| g == i).unwrap_or(0);
                tv.coord(0, v as i64).map(|x| x.0).unwrap_or(0) - base_row
            })
            .collect();
        for (i, off) in offsets.into_iter().enumerate() {
            let row = k.let_("lse_row", row0 + r.clone() + off as u32)?;
            let inside = k.cmp(CmpOp::Lt, row, blk.seqlen_q)?;
            let p = k.pred();
            k.and(p, inside, first)?;
            let val = lse[i];
            // LSE[batch, head, row], or LSE[head, first + row] packed.
            let at = match blk.starts {
                Some((q0, _)) => vec![Expr::from(blk.head), row + q0],
                None => vec![Expr::from(blk.batch), blk.head.into(), row.into()],
            };
            k.if_(p, |k| k.store(&args.lse, at, val)).end()?;
        }
        Ok(())
    })
    .end()
}
