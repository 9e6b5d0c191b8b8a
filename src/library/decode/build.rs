//! The decode kernel and the split combine, written with the authoring model and the kernel
//! parts: [`WarpSpecialized`](crate::parts::WarpSpecialized) roles, a [`Ring`] of K and V tiles
//! filled page by page by TMA, `gemm_async` (wgmma) for `S = Q·Kᵀ` and `P·V`, the attention's
//! online softmax on the accumulator fragment.

use crate::parts::ticket::last_arrival;
use crate::parts::{
    ConsumerId, PageCursor, PageWindow, PersistentGrid, Ring, WarpSpecialized, ring_and_once, rings,
};
use ptx_isa::builder::CmpOp;
use ptx_isa::spaces::Global;
use ptx_isa::{Addr, Reg, RegRef, Src, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::TileSpec;
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier};

use super::{DecodeConfig, MAX_Q_LEN};
use crate::kernel::math::LOG2_E;
use crate::kernel::{
    Buffer, BuiltKernel, Expr, KernelBuilder, Ptr, Result, TensorOpts, TmaTensor, Var,
};
use crate::library::attention::{
    RowGroups, SoftmaxState, online_softmax, row_statistics, s32, softmax_state,
};
use crate::runtime::ExtentFacts;
use crate::signature::TmaBox;
use crate::tile::{Accumulate, ExecScope, TileRef};
use layouts::fragment::mma::m16n8k16_c_wide;

type Bf16 = ty::Bf16;

/// The tensors and extents the decode kernel declares, in the order of its parameters.
struct Args {
    q: TmaTensor<Bf16>,
    k_cache: Cache,
    v_cache: Cache,
    block_table: Buffer<ty::S32>,
    seq_lens: Buffer<ty::S32>,
    o: Buffer<Bf16>,
    o_part: Buffer<ty::F32>,
    lse_part: Buffer<ty::F32>,
    /// With [`DecodeConfig::fold`]: a counter per (sequence, KV head, query chunk),
    /// `[batch, kv_heads, q_len]` u32, zero before a launch and left zero by it.
    counters: Option<Buffer<ty::U32>>,
    scale: Reg<ty::F32>,
    /// With an FP8 cache: `k_scale` and `v_scale` (`[scales]`, 1 or `kv_heads`) and `scales`.
    kv_scales: Option<(Buffer<ty::F32>, Buffer<ty::F32>, Var)>,
    batch: Var,
    q_len: Var,
    kv_heads: Var,
    page_size: Var,
    splits: Var,
}

/// A cache as a TMA tensor (bf16, or FP8 e4m3), or as FP8 rows its producer threads copy with
/// `cp.async` ([`DecodeConfig::cp_async`]).
enum Cache {
    Bf16(TmaTensor<Bf16>),
    E4m3(TmaTensor<ty::E4m3>),
    E4m3Rows(Buffer<ty::E4m3>),
}

impl Cache {
    /// The box at `origin` ([`KernelBuilder::tma_box_at`]).
    fn box_at(&self, k: &mut KernelBuilder, origin: &[Expr]) -> Result<TileRef> {
        match self {
            Cache::Bf16(t) => k.tma_box_at(t, origin),
            Cache::E4m3(t) => k.tma_box_at(t, origin),
            Cache::E4m3Rows(_) => Err(k.error("a cache copied by cp.async has no TMA box")),
        }
    }

    /// The rows of a cache copied by `cp.async`.
    fn rows(&self, k: &KernelBuilder) -> Result<&Buffer<ty::E4m3>> {
        match self {
            Cache::E4m3Rows(b) => Ok(b),
            _ => Err(k.error("a TMA cache is loaded by boxes, not copied by cp.async")),
        }
    }
}

/// What every role knows of its CTA's work: the sequence, KV head, query chunk and split, and
/// the key tiles `first..end` it visits.
struct Work {
    batch: Var,
    kv_head: Var,
    chunk: Var,
    split: Var,
    /// The sequence's length.
    len: Var,
    /// The key tiles of this split.
    first: Var,
    end: Var,
    /// The sequence's last page slot (`(len - 1) / page_size`): boxes past the keys read it
    /// again instead of a block-table entry past the sequence's pages.
    last_slot: Var,
}

/// Where the consumers find Q's rows.
#[derive(Clone, Copy)]
enum QSource<'a> {
    /// One buffer, loaded once on its barrier.
    Once {
        q_s: Reg<ty::U32>,
        q_full: NamedBarrier,
    },
    /// A ring of two buffers, an item's Q in each in turn ([`DecodeConfig::persistent`]): the
    /// producer fills the next while the consumers read the last, both consumers release it.
    Ring(&'a Ring),
}

impl QSource<'_> {
    /// The one buffer and its barrier (the kernels of a CTA an item).
    fn once(&self, k: &KernelBuilder) -> Result<(Reg<ty::U32>, NamedBarrier)> {
        match *self {
            QSource::Once { q_s, q_full } => Ok((q_s, q_full)),
            QSource::Ring(_) => Err(k.error("Q's ring is a persistent grid's: one buffer here")),
        }
    }
}

/// What the producer and the consumer share, whatever the item.
#[derive(Clone, Copy)]
struct Base<'a> {
    cfg: &'a DecodeConfig,
    args: &'a Args,
    ring: &'a Ring,
    q: QSource<'a>,
    /// With two consumer warpgroups over a bf16 cache, the second's row statistics on their
    /// way to the first ([`hand_over`]).
    stats_s: Option<Reg<ty::U32>>,
    /// The second bf16 consumer's O on its way to the first in a persistent grid (the ring's
    /// stage 1 otherwise, [`handover_views`]).
    handover_o: Option<Reg<ty::U32>>,
}

impl<'a> Base<'a> {
    /// The parts for the item `work`.
    fn parts(&self, work: &'a Work) -> Parts<'a> {
        Parts { base: *self, work }
    }
}

/// What the producer and the consumer share for one item of work: the [`Base`] and the item.
struct Parts<'a> {
    base: Base<'a>,
    work: &'a Work,
}

impl<'a> std::ops::Deref for Parts<'a> {
    type Target = Base<'a>;

    fn deref(&self) -> &Base<'a> {
        &self.base
    }
}

/// Builds the decode kernel for `cfg` (sm_90a: wgmma, TMA, setmaxnreg). Its parameters: `q`
/// `[batch, q_len, heads, d]` (TMA, boxes of `[1, tokens, group, 64]`), `k_cache` and `v_cache`
/// `[num_pages, page_size, kv_heads, d]` (TMA, boxes of `[1, page_rows, 1, 64]`),
/// `block_table` `[batch, max_pages]` i32, `seq_lens` `[batch]` i32, `o` like `q`, the
/// workspace `o_part` `[splits, batch, q_len, heads, d]` and `lse_part`
/// `[splits, batch, q_len, heads]` (f32; written only when `splits > 1`, `o` only when it is 1)
/// `counters` `[batch, kv_heads, q_len]` u32 with [`DecodeConfig::fold`] (zero before the
/// launch; the last split of each sequence, KV head and query chunk combines the splits into
/// `o`, `fold_splits`) and `scale` (f32). The grid: `splits · chunks` x `kv_heads` x
/// `batch` CTAs, or with [`DecodeConfig::persistent`] a persistent grid over as many items
/// (`Items`) that the launcher sizes to the device.
pub fn build(target: Target, cfg: &DecodeConfig) -> Result<BuiltKernel> {
    let name = cfg.name();
    let mut k = KernelBuilder::new(&name, target);
    cfg.validate().map_err(|e| k.error(e.to_string()))?;
    let args = declare(&mut k, cfg)?;
    // Launched as a programmatic dependent ([`DecodeConfig::dependent_launch`]), the kernel
    // reads and writes global memory only once the kernel before it has completed and its
    // writes are visible (PTX ISA 9.7.13.13; at once for an ordinary launch).
    if cfg.dependent_launch {
        k.isa().griddepcontrol_wait()?;
    }
    let tq = cfg.tokens_per_cta();
    let chunks = Expr::ceil_div(args.q_len, tq);
    let x_extent = Expr::from(args.splits) * chunks.clone();
    // A persistent grid walks the items `x + x_extent · (head + kv_heads · batch)`
    // (DecodeConfig::persistent); else a CTA an item, its ids the grid's.
    let grid = cfg.persistent.then(|| {
        let items = x_extent.clone() * Expr::from(args.kv_heads) * Expr::from(args.batch);
        PersistentGrid::ctas(items)
    });
    let ids = match (&grid, cfg.cluster_heads) {
        (Some(_), _) => None,
        (None, 1) => Some(k.cta_id([x_extent.clone(), args.kv_heads.into(), args.batch.into()])?),
        (None, c) => {
            // Clusters of `c` consecutive KV heads (DecodeConfig::cluster_heads): head =
            // cluster · c + the CTA's rank in it (PTX ISA 10.1: %cluster_ctaid, %clusterid).
            // Where `c` does not divide the KV heads, the last cluster's CTAs past them have no
            // head and end at once (`exit`, PTX ISA 9.7.12.7), before any barrier: no CTA of a
            // cluster waits for its peers.
            let [_, rank, _] = k.cta_id_in_cluster([1, c, 1], None)?;
            let heads = Expr::ceil_div(args.kv_heads, c);
            let [x, of, batch] = k.cluster_id([x_extent.clone(), heads, args.batch.into()])?;
            let head = k.let_("kv_head", Expr::from(of) * c + rank)?;
            let past = k.cmp(CmpOp::Ge, head, args.kv_heads)?;
            k.isa().when(past).exit()?;
            Some([x, head, batch])
        }
    };
    let roles = cfg.roles();
    let tid = roles.declare_ctas(&mut k, cfg.ctas_per_sm())?;

    // Shared memory: Q (d / 64 slabs of 64 rows x 128 bytes; a ring of two in a persistent
    // grid, below), the K/V ring, Q's barrier.
    let q_s = match cfg.persistent {
        false => Some(k.pool_bytes("q", cfg.q_bytes(), 1024)?),
        true => None,
    };
    // A bf16 cache's second consumer hands its rows' max and sum over here (2 KB: 2 rows a
    // thread, [`hand_over`]), its O through a ring stage (a buffer of its own in a persistent
    // grid).
    let stats_s = match cfg.consumers == 2 && !cfg.fp8 {
        true => Some(k.pool_bytes("handover", HANDOVER_STATS * 4, 16)?),
        false => None,
    };
    let handover_o = match cfg.persistent {
        true => Some(k.pool_bytes("handover_o", handover_o_words(cfg) * 4, 1024)?),
        false => None,
    };
    let spec = |name: &str, bytes: u32| TileSpec {
        name: name.to_string(),
        bytes,
        align: 1024,
    };
    // One ring of K and V tiles: full takes the producer's arrive.expect_tx (or each producer
    // thread's arrival on its cp.async copies), empty the consumer's releases (its
    // warpgroup's, or each of its warps' over an FP8 cache).
    let releases = cfg.releases();
    let tiles = [spec("k", cfg.kv_bytes()), spec("v", cfg.kv_bytes())];
    let (pipe, base) = k.pool_pipeline("kv", cfg.stages(), &tiles, cfg.fills(), releases)?;
    // A persistent grid's Q: two buffers, each released by both consumer warpgroups.
    let q_pipe = match cfg.persistent {
        true => Some(k.pool_pipeline("q", 2, &[spec("q", cfg.q_bytes())], 1, 2)?),
        false => None,
    };

    let work = match ids {
        Some(ids) => Some(work(&mut k, &args, ids, chunks.clone())?),
        None => None,
    };

    // The ring's barriers and Q's, initialised by thread 0; everyone sees them after the CTA
    // barrier.
    let (sync, ring, once, q_ring) = match (q_s, q_pipe) {
        (Some(q_s), _) => {
            let ring = ("kv", pipe, base, releases);
            let (sync, ring, q_full) = ring_and_once(&mut k, &name, tid, ring, "q_full")?;
            (sync, ring, Some((q_s, q_full)), None)
        }
        (None, Some((q_pipe, q_base))) => {
            let kv = ("kv", pipe, base, releases);
            let q = ("q", q_pipe, q_base, 2);
            let (sync, [kv, q_ring]) = rings(&mut k, &name, tid, [kv, q])?;
            (sync, kv, None, Some(q_ring))
        }
        (None, None) => return Err(k.error("Q has neither a buffer nor a ring")),
    };
    let q = match (&q_ring, once) {
        (Some(q_ring), _) => QSource::Ring(q_ring),
        (None, Some((q_s, q_full))) => QSource::Once { q_s, q_full },
        (None, None) => return Err(k.error("Q has neither a buffer nor a ring")),
    };
    let base = Base {
        cfg,
        args: &args,
        ring: &ring,
        q,
        stats_s,
        handover_o,
    };
    let at = Items {
        x_extent,
        chunks,
        grid,
    };
    roles.run_synced(
        &mut k,
        tid,
        sync,
        |k, sync| match &work {
            Some(w) => producer(k, &base.parts(w), sync, tid, None),
            None => at.for_each(k, &base, |k, p, c| producer(k, p, sync, tid, Some(c))),
        },
        |k, sync, me| match (&work, cfg.fp8) {
            (Some(w), true) => consumer_fp8(k, &base.parts(w), sync, me),
            (Some(w), false) => consumer(k, &base.parts(w), sync, me, None),
            (None, _) => at.for_each(k, &base, |k, p, c| consumer(k, p, sync, me, Some(c))),
        },
    )?;
    k.finish()
}

/// A persistent grid's items ([`DecodeConfig::persistent`]): item `i` is split-and-chunk
/// `i % x_extent` (`x_extent` = splits · chunks, a grid of a CTA an item's x) of KV head
/// `(i / x_extent) % kv_heads` and sequence `i / (x_extent · kv_heads)`, the order of a grid of
/// a CTA an item.
struct Items {
    x_extent: Expr,
    chunks: Expr,
    grid: Option<PersistentGrid>,
}

impl Items {
    /// The grid, which a persistent kernel has.
    fn grid(&self, k: &KernelBuilder) -> Result<&PersistentGrid> {
        self.grid
            .as_ref()
            .ok_or_else(|| k.error("a kernel of a CTA an item walks no items"))
    }

    /// `body(k, parts, cursors)` for each of the CTA's items, a role's walk of a persistent grid
    /// (the producer's, [`producer`]; a consumer's, [`consumer`], its softmax state started
    /// afresh each item): the rings' cursors made once and run on from one item to the next.
    fn for_each(
        &self,
        k: &mut KernelBuilder,
        base: &Base<'_>,
        body: impl FnOnce(&mut KernelBuilder, &Parts<'_>, Cursors<'_>) -> Result<()>,
    ) -> Result<()> {
        let grid = self.grid(k)?;
        grid.for_each_with(
            k,
            |k| item_cursors(k, base.cfg),
            |k, (kv, q), item| {
                let w = self.work(k, base.args, item)?;
                body(k, &base.parts(&w), Cursors { kv, q })
            },
        )
    }

    /// Item `item`'s work ([`work`]).
    fn work(&self, k: &mut KernelBuilder, args: &Args, item: Var) -> Result<Work> {
        let x = k.let_("item_x", item % self.x_extent.clone())?;
        let rest = k.let_("item_rest", item / self.x_extent.clone())?;
        let kv_head = k.let_("item_head", rest % args.kv_heads)?;
        let batch = k.let_("item_batch", rest / args.kv_heads)?;
        work(k, args, [x, kv_head, batch], self.chunks.clone())
    }
}

/// A persistent grid's ring cursors, made once and run on over the items: the K/V ring's and
/// Q's ring's.
#[derive(Clone, Copy)]
struct Cursors<'a> {
    kv: &'a RingCursor,
    q: &'a RingCursor,
}

/// The cursors a role of a persistent grid walks its items with.
fn item_cursors(k: &mut KernelBuilder, cfg: &DecodeConfig) -> Result<(RingCursor, RingCursor)> {
    let kv = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
    let q = RingCursor::new(k.isa(), 2, Phase::Parity)?;
    Ok((kv, q))
}

/// The parameters (see [`build`]).
fn declare(k: &mut KernelBuilder, cfg: &DecodeConfig) -> Result<Args> {
    let one = ExtentFacts::NONE.at_least(1);
    let (d, slab) = (cfg.head_dim, DecodeConfig::SLAB);
    let batch = k.symbol_with("batch", one)?;
    let q_len = k.symbol_with("q_len", one.at_most(u64::from(MAX_Q_LEN)))?;
    let heads = k.symbol_with("heads", one)?;
    let kv_heads = k.symbol_with("kv_heads", one)?;
    let num_pages = k.symbol_with("num_pages", one)?;
    let rows = u64::from(cfg.page_rows);
    let page_size = k.symbol_with("page_size", one.at_least(rows).multiple_of(rows))?;
    let max_pages = k.symbol_with("max_pages", one)?;
    let splits = k.symbol_with("splits", one)?;
    let q_box = TmaBox::new([1, cfg.tokens_per_cta(), cfg.group, slab]).swizzle(SwizzleMode::B128);
    let e = |v: Var| Expr::from(v);
    let q_shape = [e(batch), e(q_len), e(heads), Expr::from(d)];
    let q = k.tma_tensor::<Bf16>("q", q_shape.clone(), q_box)?;
    let cache = [e(num_pages), e(page_size), e(kv_heads), Expr::from(d)];
    let mut declare_cache = |name: &str| -> Result<Cache> {
        let page_box =
            TmaBox::new([1, cfg.page_rows, 1, cfg.cache_slab()]).swizzle(cfg.cache_swizzle());
        let rows = TensorOpts::default().align(16);
        Ok(if cfg.cp_async {
            Cache::E4m3Rows(k.tensor::<ty::E4m3>(name, cache.clone(), rows)?)
        } else if cfg.fp8 {
            Cache::E4m3(k.tma_tensor::<ty::E4m3>(name, cache.clone(), page_box)?)
        } else {
            Cache::Bf16(k.tma_tensor::<Bf16>(name, cache.clone(), page_box)?)
        })
    };
    let k_cache = declare_cache("k_cache")?;
    let v_cache = declare_cache("v_cache")?;
    let opts = TensorOpts::default();
    let block_table = k.tensor::<ty::S32>("block_table", [batch, max_pages], opts.clone())?;
    let seq_lens = k.tensor::<ty::S32>("seq_lens", [batch], opts.clone())?;
    let o = k.tensor::<Bf16>("o", q_shape.clone(), opts.clone().align(16))?;
    let mut part_shape = vec![e(splits)];
    part_shape.extend(q_shape);
    let o_part = k.tensor::<ty::F32>("o_part", part_shape, opts.clone())?;
    let lse_part = k.tensor::<ty::F32>("lse_part", [splits, batch, q_len, heads], opts.clone())?;
    let counters = match cfg.fold {
        true => Some(k.tensor::<ty::U32>("counters", [batch, kv_heads, q_len], opts)?),
        false => None,
    };
    let scale = k.scalar::<ty::F32>("scale")?;
    let kv_scales = if cfg.fp8 {
        let scales = k.symbol_with("scales", one)?;
        let ks = k.tensor::<ty::F32>("k_scale", [scales], TensorOpts::default())?;
        let vs = k.tensor::<ty::F32>("v_scale", [scales], TensorOpts::default())?;
        Some((ks, vs, scales))
    } else {
        None
    };
    Ok(Args {
        q,
        k_cache,
        v_cache,
        block_table,
        seq_lens,
        o,
        o_part,
        lse_part,
        counters,
        scale,
        kv_scales,
        batch,
        q_len,
        kv_heads,
        page_size,
        splits,
    })
}

/// The CTA's work from its ids: split `x / chunks`, query chunk `x % chunks`; the sequence's
/// key tiles `ceil(len / 64)` cut into `splits` runs of `ceil(tiles / splits)`, this split's
/// run (empty when the sequence is too short for it).
fn work(
    k: &mut KernelBuilder,
    args: &Args,
    [x, kv_head, batch]: [Var; 3],
    chunks: Expr,
) -> Result<Work> {
    let bn = DecodeConfig::BLOCK_N;
    let split = k.let_("split", x / chunks.clone())?;
    let chunk = k.let_("chunk", x % chunks)?;
    let len = k.load(&args.seq_lens, [batch])?;
    let len = len
        .retype::<ty::U32>()
        .map_err(|e| k.error(e.to_string()))?;
    let len = k.bind("seq_len", len);
    let tiles = k.let_("tiles", Expr::ceil_div(len, bn))?;
    let per = k.let_("per_split", (tiles + args.splits - 1u32) / args.splits)?;
    let first = k.let_("first_tile", split * per)?;
    // end = max(first, min(first + per, tiles)), in a register of its own (an evaluated
    // expression's register is remembered for its next use, so it is never written).
    let reach = k.eval(first + per)?;
    let all = k.eval(tiles)?;
    let end = k.reg::<ty::U32>();
    k.min(end, reach, all)?;
    let first_r = k.eval(first)?;
    k.max(end, end, first_r)?;
    let end = k.bind("end_tile", end);
    // (max(len, 1) - 1) / page_size.
    let len_r = k.eval(len)?;
    let last = k.reg::<ty::U32>();
    k.max(last, len_r, 1u32)?;
    let last = k.bind("len_or_1", last);
    let last_slot = k.let_("last_slot", (last - 1u32) / args.page_size)?;
    Ok(Work {
        batch,
        kv_head,
        chunk,
        split,
        len,
        first,
        end,
        last_slot,
    })
}

/// The producer warpgroup: one thread loads Q's rows (the chunk's tokens, each with its
/// group's heads: one box of `[1, tokens, group, 64]` per slab; tokens past `q_len` read as
/// zero), then each key tile of the split into the next free stage: K's and V's boxes of
/// `page_rows` rows from the pages the block table names (each box's slot and row kept by a
/// [`PageCursor`], no division a tile; read a tile ahead, [`read_pages`]: during tile `n`,
/// before its stage is waited for, tile `n + 1`'s); or,
/// with [`DecodeConfig::cp_async`], the warpgroup's 128 threads copy the tiles' rows
/// ([`copy_tiles`]).
fn producer(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    tid: Var,
    cursors: Option<Cursors<'_>>,
) -> Result<()> {
    let leader = k.cmp(CmpOp::Eq, tid, 0)?;
    k.if_(leader, |k| {
        load_q(k, p, sync, cursors.map(|c| c.q))?;
        match p.cfg.cp_async {
            true => Ok(()),
            false => load_boxes(k, p, sync, cursors.map(|c| c.kv)),
        }
    })
    .end()?;
    if p.cfg.cp_async {
        copy_tiles(k, p, sync, tid)?;
    }
    Ok(())
}

/// Q's rows into `q_s` by TMA, on `q_full`, or into the next buffer of Q's ring once both
/// consumers have released it, on its `full` (a persistent grid, `q` its ring's cursor; see
/// [`producer`]): one thread.
fn load_q(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    q: Option<&RingCursor>,
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let slab = DecodeConfig::SLAB;
    let slabs = cfg.head_dim / slab;
    {
        let q_rows = cfg.tokens_per_cta() * cfg.group;
        // The boxes' bytes, rows past `q_len` (zeros) included; a buffer's rows past the
        // boxes' are never stored.
        let q_bytes = q_rows * slab * 2 * slabs;
        let (q_s, q_full) = match (p.q, q) {
            (QSource::Ring(ring), Some(cur)) => {
                let full = ring.acquire(k, sync, cur)?;
                ring.commit(k, sync, full, q_bytes)?;
                let at = ring.first_tile(k, cur.stage())?;
                (at, full)
            }
            _ => {
                let (q_s, q_full) = p.q.once(k)?;
                let arrival = Arrival::ExpectTx(q_bytes);
                sync.arrive(k.isa(), q_full, arrival, ArriveSite::Loop)?;
                (q_s, q_full)
            }
        };
        for s in 0..slabs {
            let dst = k.reg::<ty::U32>();
            k.add(dst, q_s, s * cfg.rows() * slab * 2)?;
            let tile =
                TileRef::shared_row_major(ptx_isa::ScalarType::Bf16, q_rows, slab, dst, 1024)
                    .with_swizzle(SwizzleMode::B128);
            let origin = [
                Expr::from(w.batch),
                w.chunk * cfg.tokens_per_cta(),
                w.kv_head * cfg.group,
                Expr::from(s * slab),
            ];
            let src = k.tma_box_at(&args.q, &origin)?;
            k.copy_async(
                &tile,
                &src,
                Some((&mut *sync, q_full)),
                None,
                ExecScope::Thread,
            )?;
        }
        if let Some(cur) = q {
            cur.advance(k.isa())?;
        }
    }
    Ok(())
}

/// The split's key tiles by TMA boxes of `page_rows` rows (see [`producer`]): one thread.
fn load_boxes(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    cur: Option<&RingCursor>,
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (bn, rows) = (DecodeConfig::BLOCK_N, cfg.page_rows);
    // The cache's boxes: one swizzle span of columns (64 bf16, or 128 e4m3; 64 at d 64).
    let (cache_slab, cache_slabs) = (cfg.cache_slab(), cfg.head_dim / cfg.cache_slab());
    let cache_swizzle = cfg.cache_swizzle();
    let cache_dt = if cfg.fp8 {
        ptx_isa::ScalarType::E4m3
    } else {
        ptx_isa::ScalarType::Bf16
    };
    {
        // The ring's cursor: the kernel's own, or a persistent grid's, run on over its items.
        let made;
        let cur = match cur {
            Some(cur) => cur,
            None => {
                made = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
                &made
            }
        };
        // The cache's loads evict-first in L2 ([`DecodeConfig::evict_first`]).
        let hint = match cfg.evict_first {
            true => Some(k.l2_policy(ptx_isa::builder::L2Evict::First)?),
            false => None,
        };
        // Each box's key: box i of tile n at key 64 n + i · rows, its slot and row kept by
        // adds a tile ([`PageCursor`]). Tile n's pages were read during tile n - 1 (the first
        // tile's before the loop): the block table's latency never stands between a free stage
        // and its loads.
        let walks = (0..bn / rows)
            .map(|i| PageCursor::new(k, w.first * bn + i * rows, args.page_size, bn))
            .collect::<Result<Vec<_>>>()?;
        let next: Vec<Reg<ty::S32>> = k.regs(walks.len());
        read_pages(k, p, &walks, &next)?;
        k.for_range(w.first, w.end, |k, _| {
            // Each box's page and row in it.
            let mut boxes = Vec::new();
            for (walk, &page) in walks.iter().zip(&next) {
                let here = k.reg::<ty::U32>();
                let page = as_u32(k, page)?;
                k.mov(here, page)?;
                let here = k.bind("page", here);
                let row = k.let_("box_row", walk.row())?;
                boxes.push((here, row));
                walk.advance(k)?;
            }
            read_pages(k, p, &walks, &next)?;
            let full = p.ring.acquire(k, sync, cur)?;
            p.ring.commit(k, sync, full, p.ring.tx_bytes())?;
            let tiles = p.ring.tile_addrs(k, cur.stage())?;
            for (cache, &tile) in [&args.k_cache, &args.v_cache].into_iter().zip(&tiles) {
                for s in 0..cache_slabs {
                    for (i, &(page, row)) in boxes.iter().enumerate() {
                        let dst = k.reg::<ty::U32>();
                        let at = (s * bn + i as u32 * rows) * cache_slab * cfg.cache_bytes();
                        k.add(dst, tile, at)?;
                        let to = TileRef::shared_row_major(cache_dt, rows, cache_slab, dst, 1024)
                            .with_swizzle(cache_swizzle);
                        let origin = [
                            Expr::from(page),
                            Expr::from(row),
                            Expr::from(w.kv_head),
                            Expr::from(s * cache_slab),
                        ];
                        let mut src = cache.box_at(k, &origin)?;
                        if let Some(policy) = hint {
                            src = src.with_l2_hint(policy);
                        }
                        k.copy_async(&to, &src, Some((&mut *sync, full)), None, ExecScope::Thread)?;
                    }
                }
            }
            cur.advance(k.isa())?;
            Ok(())
        })
    }
}

/// With [`DecodeConfig::cp_async`] (an FP8 cache): the producer warpgroup's 128 threads copy
/// each key tile of the split into the next free stage by `cp.async.cg`, 16 bytes a copy (PTX
/// ISA 9.7.9.25.3.1; with [`DecodeConfig::l2_prefetch`], `.L2::64B/128B/256B`), K's and V's
/// rows from the same addresses of their caches, then each thread's `cp.async.mbarrier.arrive.noinc` on the stage's `full`
/// ([`Ring::arrive_on_copies`]). Warp `w` takes the tile's rows `16 w .. 16 w + 16`: one page
/// (a page holds a multiple of 16 tokens and a tile starts at one), its slot and row kept by a
/// [`PageCursor`] (no division a tile), read from the block table by the warp's threads alike
/// a tile ahead ([`read_page`]), or with [`DecodeConfig::table_window`] 32 tiles ahead across
/// the warp's lanes ([`PageWindow`]); a copy instruction covers
/// `32 / (d / 16)` whole rows (lane `l`: row `l / (d / 16) + j · 32 / (d / 16)`, 16-byte chunk
/// `l % (d / 16)`), `d / 32` of K's and as many of V's a thread a tile. Each chunk lands where
/// the TMA box would put it (the box's swizzle, PTX ISA 5.5.2.1): slab `chunk / span`, row and
/// byte of the slab swizzled ([`smem::emit::emit_offset_2d`]) for the first copy, and each
/// later copy's swizzle one XOR with a constant ([`copy_xors`]), each copy's offset in a stage
/// computed once, before the loop (a copy a tile: one add to the stage's tile address).
fn copy_tiles(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    tid: Var,
) -> Result<()> {
    use ptx_isa::builder::CpAsyncCache;
    use ptx_isa::spaces::Shared;
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (bn, d) = (DecodeConfig::BLOCK_N, cfg.head_dim);
    let (k_rows, v_rows) = (args.k_cache.rows(k)?, args.v_cache.rows(k)?);
    // 16-byte chunks a row, rows a copy instruction, copies a thread a tile of K (or V).
    let per_row = d / 16;
    let step = 32 / per_row;
    let copies = d / 32;
    // A slab's row: one swizzle span (128 bytes, or 64 at d 64), its chunks.
    let span = cfg.cache_slab() * cfg.cache_bytes();
    let span_chunks = span / 16;
    let mode = cfg.cache_swizzle();
    let xors = copy_xors(k, mode, span, step, copies)?;
    let warp = k.let_("copy_warp", tid / 32u32)?;
    let lane = k.let_("copy_lane", tid % 32u32)?;
    let first = k.let_("copy_row", lane / per_row)?;
    let chunk = k.let_("copy_chunk", lane % per_row)?;
    // Where the thread's first copy lands in a tile: its slab's offset, and in the slab row
    // 16 w + first, the chunk's bytes, swizzled.
    let row = k.eval(Expr::from(warp) * 16u32 + first)?;
    let col = k.eval((chunk % span_chunks) * 16u32)?;
    let swizzled = smem::emit::emit_offset_2d(k, mode, 1, span, row, col)?;
    let row_at = k.eval((chunk / span_chunks) * (bn * span))?;
    // The thread's chunk of its head's row in each cache (token 0 of page 0): the pages and
    // rows are added a tile at a time, in 64 bits.
    let head = [
        Expr::from(0u32),
        0u32.into(),
        w.kv_head.into(),
        chunk * 16u32,
    ];
    let base = |k: &mut KernelBuilder, rows: &Buffer<ty::E4m3>| -> Result<Reg<ty::U64>> {
        let Ptr::Global(at) = k.ptr_to(rows, head.to_vec())? else {
            return Err(k.error("the cache is global memory"));
        };
        let own = k.reg::<ty::U64>();
        k.mov(own, at)?;
        Ok(own)
    };
    let (k_base, v_base) = (base(k, k_rows)?, base(k, v_rows)?);
    // Bytes from one token's row to the next (`kv_heads · d`), and a copy's row step of them.
    let Some(token_stride) = k_rows.strides.get(1).cloned() else {
        return Err(k.error("the cache has a token dimension"));
    };
    let token_bytes = k.eval(token_stride)?;
    let step_bytes = k.reg::<ty::U64>();
    k.mul_wide::<ty::U32>(step_bytes, token_bytes, step)?;
    // Each copy's destination in a stage, past its tile's address: its swizzled chunk in row
    // 16 w + first of its slab (the row step's offset is the copy's immediate).
    let dsts = xors
        .iter()
        .map(|&x| {
            let dst = k.reg::<ty::U32>();
            k.xor(dst, swizzled, x)?;
            k.add(dst, dst, row_at)?;
            Ok(dst)
        })
        .collect::<Result<Vec<_>>>()?;
    // The warp's 16 keys of tile n: key 64 n + 16 w, one page, its slot and row kept by adds a
    // tile ([`PageCursor`]); tile n's page read from the block table during tile n - 1 (the
    // first tile's before the loop), so its latency never stands between a free stage and the
    // copies.
    // With [`DecodeConfig::table_window`] the warp's next 32 tiles' entries are read 32 tiles
    // ahead across its lanes ([`PageWindow`]: lane j the entry of tile 32 m + j), a tile's page
    // one shuffle.
    let key = w.first * bn + Expr::from(warp) * 16u32;
    let walk = PageCursor::new(k, key.clone(), args.page_size, bn)?;
    // With [`DecodeConfig::touch_pages`] the window also hands over the page `L` tiles on, and
    // lane 0 touches its row in K and in V: one `prefetch.global.L2` each (PTX ISA 9.7.9.15),
    // a line the copies read `L` tiles later, its address translation taken now.
    let window = match cfg.table_window {
        true => {
            let window = PageWindow::new(k, lane, key.clone(), args.page_size, bn)?;
            Some(match cfg.touch_pages {
                0 => window,
                tiles => window.looking_ahead(k, tiles)?,
            })
        }
        false => None,
    };
    let toucher = match cfg.touch_pages {
        0 => None,
        _ => Some(k.cmp(CmpOp::Eq, lane, 0u32)?),
    };
    let touch = |k: &mut KernelBuilder, page: Reg<ty::S32>, row: Var| -> Result<()> {
        let Some(toucher) = toucher else {
            return Ok(());
        };
        let token = k.reg::<ty::U32>();
        let page_size = k.eval(args.page_size)?;
        let row = k.eval(row)?;
        let page = as_u32(k, page)?;
        k.mad_lo(token, page, page_size, row)?;
        let offset = k.reg::<ty::U64>();
        k.mul_wide::<ty::U32>(offset, token, token_bytes)?;
        for cache in [k_base, v_base] {
            let at = k.reg::<ty::U64>();
            k.add(at, cache, offset)?;
            k.isa()
                .when(toucher)
                .prefetch_l2(Addr::<Global>::reg(at), None)?;
        }
        Ok(())
    };
    let read = |k: &mut KernelBuilder, slot: Var, page: Reg<ty::S32>| read_page(k, p, slot, page);
    let next = k.reg::<ty::S32>();
    match &window {
        Some(window) => window.fill(k, read)?,
        None => read(k, walk.slot(), next)?,
    }
    let cur = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
    k.for_range(w.first, w.end, |k, _| {
        // The first row's token: page · page_size + the row in the page + first.
        let token = k.reg::<ty::U32>();
        let row = k.eval(walk.row() + first)?;
        let page_size = k.eval(args.page_size)?;
        let page = match &window {
            Some(window) => window.page_touching(k, read, touch)?,
            None => next,
        };
        let page = as_u32(k, page)?;
        k.mad_lo(token, page, page_size, row)?;
        let offset = k.reg::<ty::U64>();
        k.mul_wide::<ty::U32>(offset, token, token_bytes)?;
        walk.advance(k)?;
        if window.is_none() {
            read(k, walk.slot(), next)?;
        }
        let full = p.ring.acquire(k, sync, &cur)?;
        let [k_tile, v_tile] = p.ring.tiles(k, cur.stage())?;
        for (tile, cache) in [(k_tile, k_base), (v_tile, v_base)] {
            let src = k.reg::<ty::U64>();
            k.add(src, cache, offset)?;
            for (j, &at) in dsts.iter().enumerate() {
                let j = j as u32;
                if j > 0 {
                    k.add(src, src, step_bytes)?;
                }
                let dst = k.reg::<ty::U32>();
                k.add(dst, tile, at)?;
                k.isa().cp_async(
                    CpAsyncCache::Cg,
                    Addr::<Shared>::reg32(dst).offset(i64::from(step * j * span)),
                    Addr::<Global>::reg(src),
                    16,
                    None,
                    cfg.l2_prefetch,
                )?;
            }
        }
        p.ring
            .arrive_on_copies(k, sync, full, WarpSpecialized::WARPGROUP)?;
        cur.advance(k.isa())?;
        Ok(())
    })
}

/// The swizzle of copy `j` of a [`copy_tiles`] thread as one constant: `x_j` such that the
/// physical offset of row `r + step · j`, byte `c` of a slab is that of row `r`, byte `c` XOR
/// `x_j`, plus `step · j` rows, for every row `r = 16 w + i` (`i < step`) a thread starts at and
/// every 16-byte chunk `c` of the span (`SwizzleMode::offset_2d`, the one place of the swizzle's
/// arithmetic, checked over that whole domain; an error where the swizzle does not split so).
fn copy_xors(
    k: &KernelBuilder,
    mode: SwizzleMode,
    span: u32,
    step: u32,
    copies: u32,
) -> Result<Vec<u32>> {
    let at = |r: u32, c: u32| {
        mode.offset_2d(u64::from(r), u64::from(c), 1, u64::from(span))
            .map_err(|e| k.error(e.to_string()))
    };
    let mut out = Vec::with_capacity(copies as usize);
    for j in 0..copies {
        let rows = u64::from(step * j);
        let x = at(step * j, 0)? - rows * u64::from(span);
        for r in (0..4).flat_map(|w| (0..step).map(move |i| 16 * w + i)) {
            for c in (0..span).step_by(16) {
                if at(r + step * j, c)? != (at(r, c)? ^ x) + rows * u64::from(span) {
                    return Err(k.error(format!(
                        "{mode} swizzle: row {r} + {rows}, byte {c} is not row {r}'s XOR {x}"
                    )));
                }
            }
        }
        out.push(u32::try_from(x).map_err(|e| k.error(e.to_string()))?);
    }
    Ok(out)
}

/// Reads the block table at each cursor's slot into its `pages` register (`ld.global` straight
/// into the register, which is read a tile later: the load's latency overlaps what comes
/// between); a slot past the sequence's pages reads its last page instead of an entry past them.
fn read_pages(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    walks: &[PageCursor],
    pages: &[Reg<ty::S32>],
) -> Result<()> {
    for (walk, &page) in walks.iter().zip(pages) {
        read_page(k, p, walk.slot(), page)?;
    }
    Ok(())
}

/// Reads the block table at `slot` of the CTA's sequence into `page` (as [`read_pages`]: left
/// in flight; a slot past the sequence's pages reads its last page).
fn read_page(k: &mut KernelBuilder, p: &Parts<'_>, slot: Var, page: Reg<ty::S32>) -> Result<()> {
    let (args, w) = (p.args, p.work);
    let last = k.eval(w.last_slot)?;
    let want = k.eval(slot)?;
    let slot = k.reg::<ty::U32>();
    k.min(slot, want, last)?;
    let slot = k.bind("slot", slot);
    let Ptr::Global(at) = k.ptr_to(&args.block_table, [Expr::from(w.batch), slot.into()])? else {
        return Err(k.error("the block table is global memory"));
    };
    k.isa().ld(page, Addr::<Global>::reg(at))?;
    Ok(())
}

/// A block-table entry (a page index, never negative for a slot in use) as the unsigned value
/// the address arithmetic takes.
fn as_u32(k: &KernelBuilder, page: Reg<ty::S32>) -> Result<Reg<ty::U32>> {
    page.retype::<ty::U32>().map_err(|e| k.error(e.to_string()))
}

/// The consumer warpgroup over a bf16 cache: the group's query rows (row `r` is token
/// `r / group`, head `r % group` of the KV head's group), `S = Q·Kᵀ` for each key tile, the
/// mask on tiles that reach past the first token's last key, the online softmax, V's rows past
/// the keys cleared on the last tile (a cache page holds anything past a sequence's end, and
/// `0 · NaN` is NaN), `O += P·V`; then O normalised into `o`, or with several splits the
/// unnormalised parts into the workspace.
fn consumer(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    me: ConsumerId,
    cursors: Option<Cursors<'_>>,
) -> Result<()> {
    let (cfg, w) = (p.cfg, p.work);
    let (bn, d) = (DecodeConfig::BLOCK_N, cfg.head_dim);
    let dt = ptx_isa::ScalarType::Bf16;
    let lt = me.thread;
    let consumers = cfg.consumers;
    let scales = score_scales(k, p)?;
    let leader = k.cmp(CmpOp::Eq, lt, 0)?;
    // The warpgroup's own barrier for a V tile's clearing (DecodeConfig::CLEAR_BARRIER).
    let clear_at = match consumers {
        1 => Src::from(DecodeConfig::CLEAR_BARRIER),
        _ => Src::from(k.eval(me.index + DecodeConfig::CLEAR_BARRIER)?),
    };
    // With key halves (DecodeConfig::key_halves) warpgroup c takes keys 32 c.. of every tile:
    // its K and V rows start 32 c rows (of 128 bytes, a whole number of the 128-byte
    // swizzle's 1024-byte atoms) into each slab.
    let halves = cfg.halves_tiles();
    let keys = if halves { bn / 2 } else { bn };
    let half_at = match halves {
        true => Some(k.eval(Expr::from(me.index) * (keys * 128))?),
        false => None,
    };
    let st = softmax_state(k, dt, keys, d)?;
    let (s_acc, o_acc, rows) = (&st.s_acc, &st.o_acc, &st.rows);
    // Q's buffer: the one, or the item's of Q's ring (a persistent grid's).
    let q_s = match (p.q, cursors) {
        (QSource::Ring(ring), Some(c)) => {
            let [q_s] = ring.wait_tiles(k, sync, c.q)?;
            q_s
        }
        _ => {
            let (q_s, q_full) = p.q.once(k)?;
            sync.wait(k.isa(), q_full.at, None, q_full.addr, 0u32)?;
            q_s
        }
    };
    let q_tile = TileRef::shared_slabs(
        dt,
        [DecodeConfig::ROWS, d],
        DecodeConfig::ROWS,
        q_s,
        1024,
        SwizzleMode::B128,
    );
    // The ring's cursor: the kernel's own, or a persistent grid's, run on over its items.
    let made;
    let cur = match cursors {
        Some(c) => c.kv,
        None => {
            made = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
            &made
        }
    };
    let (start, others) = match halves {
        true => (Expr::from(w.first), None),
        false => alternate_tiles(k, p, cur, me)?,
    };
    let step = if halves { 1 } else { consumers };
    let first_key = match halves {
        true => Expr::from(me.index) * keys,
        false => Expr::from(0u32),
    };
    k.for_range_step(start, w.end, step, |k, n| {
        let [ka, va] = p.ring.wait_tiles(k, sync, cur)?;
        let (ka, va) = match half_at {
            Some(at) => {
                let (kh, vh) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                k.add(kh, ka, at)?;
                k.add(vh, va, at)?;
                (kh, vh)
            }
            None => (ka, va),
        };
        let k_tile = TileRef::shared_slabs(dt, [keys, d], bn, ka, 1024, SwizzleMode::B128);
        k.gemm_async(
            s_acc,
            &q_tile,
            &k_tile,
            Accumulate::No,
            ExecScope::Warpgroup,
        )?;
        k.wgmma_wait_group(0)?;
        // Token t (of the sequence's last q_len) sees keys below len - q_len + 1 + t: the tile
        // needs the mask when its last key reaches the chunk's first token's bound.
        let needs = needs_mask(k, p, n)?;
        k.if_(needs, |k| {
            k.mask_fragment_rows(
                s_acc,
                lt,
                |k, row| causal_limit(k, p, n, row, first_key.clone()),
                f32::NEG_INFINITY,
            )
        })
        .end()?;
        let alpha = online_softmax(k, s_acc, rows, &st.m, &st.l, scales.log2)?;
        let Some(o) = o_acc.regs().map(<[_]>::to_vec) else {
            return Err(k.error("O is a register fragment"));
        };
        for (v, &r) in o.iter().enumerate() {
            k.mul(r, r, alpha[rows.o[v]])?;
        }
        k.cast(&st.p_cast, s_acc, ExecScope::Warpgroup)?;
        clear_past_keys(k, p, n, va, lt, clear_at, (first_key.clone(), keys))?;
        let v_tile = TileRef::shared_slabs(dt, [keys, d], bn, va, 1024, SwizzleMode::B128)
            .transposed()
            .ok_or_else(|| k.error("V's tile has no layout"))?;
        k.gemm_async(
            o_acc,
            &st.p_a,
            &v_tile,
            Accumulate::Yes,
            ExecScope::Warpgroup,
        )?;
        k.wgmma_wait_group(0)?;
        p.ring.release_next(k, sync, cur, leader, false)?;
        if let Some(others) = others {
            cur.skip(k.isa(), others)?;
        }
        Ok(())
    })?;
    // Q's buffer is free for the item after next once both consumers are past their last
    // tile's `S` (a persistent grid's).
    if let (QSource::Ring(ring), Some(c)) = (p.q, cursors) {
        ring.release_next(k, sync, c.q, leader, false)?;
    }
    let_combine_start(k, p)?;
    let finish = |k: &mut KernelBuilder| {
        epilogue(k, p, o_acc, rows, (&st.m, &st.l), &scales, lt)?;
        fold_splits(k, p, lt, WarpSpecialized::WARPGROUP)
    };
    match consumers {
        1 => finish(k),
        _ => {
            // The second warpgroup hands its state to the first, which merges and stores. With
            // key halves both read every stage: they meet first, so stage 1 is free (in a
            // persistent grid, the handover's buffer: the first has read the last item's; at a
            // barrier of their own, DecodeConfig::MEET_BARRIER).
            if halves {
                let meet = match cfg.persistent {
                    true => DecodeConfig::MEET_BARRIER,
                    false => DecodeConfig::HANDOVER_BARRIER,
                };
                k.sync_named(meet, 2 * WarpSpecialized::WARPGROUP)?;
            }
            let second = k.cmp(CmpOp::Eq, me.index, 1u32)?;
            k.if_(second, |k| hand_over(k, p, &st, lt)).else_(|k| {
                take_over(k, p, &st, &scales, lt)?;
                finish(k)
            })
        }
    }
}

/// With two consumer warpgroups ([`DecodeConfig::consumers`]): consumer `c` of two takes the
/// split's tiles `first + c`, `first + c + 2`, ...: its cursor passes the other's stages, `c`
/// before its first tile and one after each (the second value, to skip after each tile). The
/// ring's stages are even ([`DecodeConfig::validate`]), so stage `s` is always consumer
/// `s % 2`'s and it waits for a stage's next phase only after using its last: a parity wait
/// never runs a lap ahead (PTX ISA 9.7.13.15.16), with no turn passed between the consumers.
/// With one: the split's first tile, nothing to skip.
fn alternate_tiles(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    cur: &RingCursor,
    me: ConsumerId,
) -> Result<(Expr, Option<Reg<ty::U32>>)> {
    let (consumers, w) = (p.cfg.consumers, p.work);
    if consumers == 1 {
        return Ok((Expr::from(w.first), None));
    }
    let before = k.eval(me.index)?;
    cur.skip(k.isa(), before)?;
    let after = k.eval(Expr::from(consumers - 1))?;
    Ok((w.first + me.index, Some(after)))
}

/// The second of two consumer warpgroups over a bf16 cache, after its last tile: its O
/// fragment into the ring's stage 1 (value `v` of thread `t` at word `128 v + t`: a warp's
/// stores one bank each), its own stage (the ring's are even: no fill of the first
/// consumer's tiles lands there) and free once its last wgmma has read it, and its rows' max
/// and sum into their own buffer ([`HANDOVER_STATS`] words); then it arrives at
/// [`DecodeConfig::HANDOVER_BARRIER`] and ends.
/// The stage's last reads were wgmma's (the async proxy): a proxy fence orders them before
/// these generic writes (PTX ISA 9.7.12.4 `fence.proxy.async`).
fn hand_over(k: &mut KernelBuilder, p: &Parts<'_>, st: &SoftmaxState, lt: Var) -> Result<()> {
    let (o_view, stats_view) = handover_views(k, p, st)?;
    k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
        ptx_isa::space::SharedScope::Cta,
    )))?;
    let Some(o) = st.o_acc.regs().map(<[_]>::to_vec) else {
        return Err(k.error("O is a register fragment"));
    };
    let threads = WarpSpecialized::WARPGROUP;
    for (v, &r) in o.iter().enumerate() {
        k.store(&o_view, [lt + v as u32 * threads], r)?;
    }
    let count = st.rows.count as u32;
    for (i, (&m, &l)) in st.m.iter().zip(&st.l).enumerate() {
        k.store(&stats_view, [lt + i as u32 * threads], m)?;
        k.store(
            &stats_view,
            [Expr::from(lt) + (count + i as u32) * threads],
            l,
        )?;
    }
    k.arrive_named(DecodeConfig::HANDOVER_BARRIER, 2 * threads)
}

/// The first of two consumer warpgroups over a bf16 cache, after its last tile: waits at
/// [`DecodeConfig::HANDOVER_BARRIER`] for the second's state ([`hand_over`]; thread `t` holds
/// the same fragment positions in both) and merges it into its own, row by row: `M = max(m₀,
/// m₁)`, `O = O₀ e^((m₀ - M)·scale) + O₁ e^((m₁ - M)·scale)`, the sums alike (a row neither saw
/// a key of keeps `-inf` and 0).
fn take_over(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    st: &SoftmaxState,
    scales: &Scales,
    lt: Var,
) -> Result<()> {
    let (o_view, stats_view) = handover_views(k, p, st)?;
    let threads = WarpSpecialized::WARPGROUP;
    k.sync_named(DecodeConfig::HANDOVER_BARRIER, 2 * threads)?;
    let Some(o) = st.o_acc.regs().map(<[_]>::to_vec) else {
        return Err(k.error("O is a register fragment"));
    };
    let count = st.rows.count as u32;
    let mut factors = Vec::with_capacity(st.m.len());
    for (i, (&m, &l)) in st.m.iter().zip(&st.l).enumerate() {
        let theirs = k.load(&stats_view, [lt + i as u32 * threads])?;
        let their_sum = k.load(&stats_view, [Expr::from(lt) + (count + i as u32) * threads])?;
        let big = k.reg::<ty::F32>();
        k.max(big, m, theirs)?;
        let bias = merge_bias(k, big, scales)?;
        let mine = k.exp2_fma(m, scales.log2, bias)?;
        let other = k.exp2_fma(theirs, scales.log2, bias)?;
        k.mul(l, l, mine)?;
        k.fma(l, their_sum, other, l)?;
        k.mov(m, big)?;
        factors.push((mine, other));
    }
    for (v, &r) in o.iter().enumerate() {
        let theirs = k.load(&o_view, [lt + v as u32 * threads])?;
        let (mine, other) = factors[st.rows.o[v]];
        k.mul(r, r, mine)?;
        k.fma(r, theirs, other, r)?;
    }
    Ok(())
}

/// Words of the second bf16 consumer's row statistics ([`hand_over`]): a max and a sum of each
/// of a thread's 2 rows.
const HANDOVER_STATS: u32 = 4 * WarpSpecialized::WARPGROUP;

/// Words of the second bf16 consumer's O ([`hand_over`]): the warpgroup's 64 x d accumulator.
fn handover_o_words(cfg: &DecodeConfig) -> u32 {
    DecodeConfig::ROWS * cfg.head_dim
}

/// The handover's views ([`hand_over`], [`take_over`]): O's values in the ring's stage 1
/// (its K and V tiles, one region), the rows' max and sum in their buffer.
fn handover_views(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    st: &SoftmaxState,
) -> Result<(Buffer<ty::F32>, Buffer<ty::F32>)> {
    let threads = WarpSpecialized::WARPGROUP;
    let Some(values) = st.o_acc.regs().map(<[_]>::len) else {
        return Err(k.error("O is a register fragment"));
    };
    let o_words = values as u32 * threads;
    let (Some(stats_s), 2) = (p.stats_s, st.rows.count) else {
        return Err(k.error("the handover's statistics take 2 rows a thread and their buffer"));
    };
    let region = match p.handover_o {
        Some(buffer) if o_words == handover_o_words(p.cfg) => buffer,
        Some(_) => return Err(k.error("the handover's buffer does not hold the second's O")),
        None => {
            let Some(stride) = p.ring.pipeline().stride() else {
                return Err(k.error("the ring's stages are not evenly spaced"));
            };
            if p.ring.stages() < 2 || o_words * 4 > stride {
                return Err(k.error("the ring's stage 1 does not hold the second consumer's O"));
            }
            let at = k.reg::<ty::U32>();
            k.mov(at, 1u32)?;
            p.ring.first_tile(k, at)?
        }
    };
    let o_view = k.shared_view::<ty::F32>("handover_o", region, &[o_words], 1024)?;
    let stats_view = k.shared_view::<ty::F32>("handover_stats", stats_s, &[HANDOVER_STATS], 16)?;
    Ok((o_view, stats_view))
}

/// Query row `row` of the CTA's rows: its token and head in `o`, and whether it is one of
/// the chunk's rows of a token below `q_len` (the rows stored).
fn row_target(k: &mut KernelBuilder, p: &Parts<'_>, row: Var) -> Result<(Var, Var, ptx_isa::Pred)> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let tq = cfg.tokens_per_cta();
    let token = k.let_("o_token", w.chunk * tq + row / cfg.group)?;
    let head = k.let_("o_head", w.kv_head * cfg.group + row % cfg.group)?;
    let in_chunk = k.cmp(CmpOp::Lt, row, tq * cfg.group)?;
    let in_q = k.cmp(CmpOp::Lt, token, args.q_len)?;
    let live = k.pred();
    k.and(live, in_chunk, in_q)?;
    Ok((token, head, live))
}

/// With [`DecodeConfig::dependent_combine`], after the consumer's last key tile: the combine
/// kernel, launched as a programmatic dependent, may be scheduled once every CTA has come this
/// far or ended (`griddepcontrol.launch_dependents`, PTX ISA 9.7.13.13); it waits for this
/// grid to complete before it reads the splits.
fn let_combine_start(k: &mut KernelBuilder, p: &Parts<'_>) -> Result<()> {
    if p.cfg.dependent_combine && !p.cfg.fold {
        k.isa().griddepcontrol_launch_dependents()?;
    }
    Ok(())
}

/// Whether key tile `n` needs the causal mask: its last key reaches the bound of the chunk's
/// first token (token `t` of the sequence's last `q_len` sees keys below `len - q_len + 1 + t`).
fn needs_mask(k: &mut KernelBuilder, p: &Parts<'_>, n: Var) -> Result<ptx_isa::Pred> {
    let (bn, tq, w) = (DecodeConfig::BLOCK_N, p.cfg.tokens_per_cta(), p.work);
    k.cmp(
        CmpOp::Gt,
        n * bn + bn + p.args.q_len,
        w.len + 1u32 + w.chunk * tq,
    )
}

/// The first masked column of query row `row` in a score fragment whose column 0 is key
/// `n · 64 + first` of the sequence: `len + 1 + token - q_len - n · 64 - first` (signed), token
/// `chunk · tokens + row / group`.
fn causal_limit(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    n: Var,
    row: Expr,
    first: impl Into<Expr>,
) -> Result<Reg<ty::S32>> {
    let (bn, tq, w) = (DecodeConfig::BLOCK_N, p.cfg.tokens_per_cta(), p.work);
    let hi = s32(k, w.len + 1u32 + w.chunk * tq + row / p.cfg.group)?;
    let lo = s32(k, n * bn + p.args.q_len + first.into())?;
    let limit = k.reg::<ty::S32>();
    k.sub(limit, hi, lo)?;
    Ok(limit)
}

/// The consumer warpgroup over an FP8 cache: [`DecodeConfig::FP8_ROWS`] query rows (as the bf16
/// consumer's), each of its four warps on its own 16 keys of every tile with its own softmax
/// state (no barrier between the warps in the loop): `S = Q·Kᵀ` and `O += P·V` by
/// `mma.m16n8k16` on register fragments (Q converted to f16 once, K and V read by `ldmatrix`
/// and converted in registers, [`crate::parts::fragments`]), each warp's first lane releasing
/// the stage after its last read. Then the warps' states merged through shared memory
/// ([`merge_warps`]). K's columns (head dim) are taken in the order `ldmatrix` gives them
/// (16-byte step `c`: byte `4 tig + j` as k `2 tig + j`, `4 tig + 2 + j` as k `2 tig + 8 + j`),
/// Q's read in the same; V's transposed bytes split into even and odd columns, so O's n8 block
/// `2 c + e` holds columns `16 c + 2 n + e`.
fn consumer_fp8(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    me: ConsumerId,
) -> Result<()> {
    use crate::parts::fragments::{e4m3_to_f16, e4m3_transposed_to_f16, ldmatrix_x4, mma_f16};
    let (cfg, w) = (p.cfg, p.work);
    let (bn, d) = (DecodeConfig::BLOCK_N, cfg.head_dim);
    let lt = me.thread;
    // With two consumer warpgroups (DecodeConfig::consumers) Q's conversion, the warps' merge
    // and the fold are the consumers' together: thread `ct` of `threads`.
    let consumers = cfg.consumers;
    let threads = WarpSpecialized::WARPGROUP * consumers;
    let ct = match consumers {
        1 => lt,
        _ => k.let_(
            "consumer_thread",
            me.index * WarpSpecialized::WARPGROUP + lt,
        )?,
    };
    let scales = score_scales(k, p)?;
    let warp = k.let_("warp", lt / 32u32)?;
    let lane = k.let_("lane", lt % 32u32)?;
    let leader = k.cmp(CmpOp::Eq, lane, 0u32)?;
    let frag = |k: &KernelBuilder, n: u32| {
        m16n8k16_c_wide(i64::from(n)).map_err(|e| k.error(e.to_string()))
    };
    let (s_frag, o_frag) = (frag(k, 16)?, frag(k, d)?);
    let s_acc = k.alloc_fragment::<ty::F32>("s", s_frag)?;
    let o_acc = k.alloc_fragment::<ty::F32>("o", o_frag)?;
    let (Some(s), Some(o)) = (
        s_acc.regs().map(<[_]>::to_vec),
        o_acc.regs().map(<[_]>::to_vec),
    ) else {
        return Err(k.error("S and O are register fragments"));
    };
    for &r in &o {
        k.mov(r, 0.0f32)?;
    }
    let (rows, m, l) = row_statistics(k, &s_acc, &o_acc)?;
    let (q_s, q_full) = p.q.once(k)?;
    sync.wait(k.isa(), q_full.at, None, q_full.addr, 0u32)?;
    q_to_f16(k, q_s, p.cfg, ct, threads)?;
    // Q's A fragment of k-step c: rows g and g + 8 (g = lane / 4), 8 bytes at column
    // 16 c + 4 tig of Q's 128-byte-swizzled slabs of 64 columns (row r's 16-byte chunk x at
    // (x ^ r % 8) · 16; rows g and g + 8 share the swizzle, 8 rows apart).
    let rows_q = cfg.rows();
    let g = k.let_("g", lane / 4u32)?;
    let tig = k.let_("tig", lane % 4u32)?;
    let q_row = k.eval(Expr::from(g) * 128u32 + (tig % 2u32) * 8u32)?;
    let q_row_a = k.reg::<ty::U32>();
    k.add(q_row_a, q_row, q_s)?;
    let half = k.eval(tig / 2u32)?;
    let g_r = k.eval(g)?;
    let q_frag = |k: &mut KernelBuilder, c: u32| -> Result<[RegRef; 4]> {
        let chunk = k.reg::<ty::U32>();
        k.add(chunk, half, 2 * (c % 4))?;
        k.xor(chunk, chunk, g_r)?;
        let at = k.reg::<ty::U32>();
        k.mad_lo(at, chunk, 16u32, q_row_a)?;
        k.add(at, at, (c / 4) * rows_q * 128)?;
        let words = [k.reg::<ty::B32>(), k.reg::<ty::B32>()];
        k.isa()
            .ld_v(&words, Addr::<ptx_isa::spaces::Shared>::reg32(at))?;
        let below = [k.reg::<ty::B32>(), k.reg::<ty::B32>()];
        let at8 = k.reg::<ty::U32>();
        k.add(at8, at, 8 * 128u32)?;
        k.isa()
            .ld_v(&below, Addr::<ptx_isa::spaces::Shared>::reg32(at8))?;
        // a0 a1 (row g), a2 a3 (row g + 8), a4 a5, a6 a7.
        Ok([words[0], below[0], words[1], below[1]].map(|r| r.as_ref()))
    };
    let steps = d / 16;
    // Held for the whole loop up to head dim 128 (32 registers); read each tile at 256.
    let held: Option<Vec<[RegRef; 4]>> = match d <= 128 {
        true => Some((0..steps).map(|c| q_frag(k, c)).collect::<Result<_>>()?),
        false => None,
    };
    let offsets = ldmatrix_offsets(k, cfg, warp, lane)?;
    let cur = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
    let (start, others) = alternate_tiles(k, p, &cur, me)?;
    k.for_range_step(start, w.end, consumers, |k, n| {
        let [k8, v8] = p.ring.wait_tiles(k, sync, &cur)?;
        let at = |k: &mut KernelBuilder, tile: Reg<ty::U32>, off: Reg<ty::U32>| {
            let a = k.reg::<ty::U32>();
            k.add(a, tile, off)?;
            Ok::<_, crate::kernel::KernelError>(a)
        };
        // S = Q·Kᵀ over the warp's 16 keys: two n8 blocks, a k16 step per 16 bytes of d.
        for &r in &s {
            k.mov(r, 0.0f32)?;
        }
        let mut v_words = Vec::with_capacity(offsets.len());
        for (q, &off) in offsets.iter().enumerate() {
            let a = at(k, k8, off)?;
            // Matrix j: keys 8 (j % 2) on of the warp's, bytes 16 (2 q + j / 2) on.
            let words = ldmatrix_x4(k, a, false)?;
            for h in 0..2 {
                let c = 2 * q as u32 + h;
                let qa = match &held {
                    Some(held) => held[c as usize],
                    None => q_frag(k, c)?,
                };
                for nb in 0..2 {
                    let [b0, b1] = e4m3_to_f16(k, words[2 * h as usize + nb])?;
                    mma_f16(k, &s[4 * nb..4 * nb + 4], qa, [b0.as_ref(), b1.as_ref()])?;
                }
            }
            // V's reads issued early up to head dim 128: they overlap the softmax (at 256 its
            // registers are O's).
            if held.is_some() {
                let a = at(k, v8, off)?;
                v_words.push(ldmatrix_x4(k, a, true)?);
            }
        }
        let first = k.let_("warp_key", Expr::from(warp) * 16u32)?;
        let needs = needs_mask(k, p, n)?;
        k.if_(needs, |k| {
            k.mask_fragment_rows(
                &s_acc,
                lane,
                |k, row| causal_limit(k, p, n, row, first),
                f32::NEG_INFINITY,
            )
        })
        .end()?;
        let alpha = online_softmax(k, &s_acc, &rows, &m, &l, scales.log2)?;
        for (v, &r) in o.iter().enumerate() {
            k.mul(r, r, alpha[rows.o[v]])?;
        }
        // P as A of the k16 step over the warp's keys: the pairs of S's values in order.
        let mut pa = Vec::with_capacity(4);
        for pair in s.chunks(2) {
            let x = k.reg::<ty::F16x2>();
            k.isa().cvt_pack_f16x2(x, pair[1], pair[0], false)?;
            pa.push(x);
        }
        let pa: [RegRef; 4] = [pa[0], pa[1], pa[2], pa[3]].map(|r| r.as_ref());
        // V's rows past the keys read as zero (a page holds anything there; 0 · NaN is NaN):
        // a thread's transposed words hold keys 2 tig, 2 tig + 1 (and 8 more), one in each
        // 16-bit half; a mask a block of 8 keys.
        let key = k.eval(n * bn + Expr::from(warp) * 16u32 + Expr::from(tig) * 2u32)?;
        let mut masks = Vec::with_capacity(2);
        for block in [0u32, 8] {
            let mask = k.reg::<ty::B32>();
            k.mov(mask, 0u32)?;
            for (j, bits) in [(0u32, 0x0000_ffffu32), (1, 0xffff_0000)] {
                let kj = k.reg::<ty::U32>();
                k.add(kj, key, block + j)?;
                let kj = k.bind("v_key", kj);
                let live = k.cmp(CmpOp::Lt, kj, w.len)?;
                k.isa().when(live).or(mask, mask, bits)?;
            }
            masks.push(mask);
        }
        // O += P·V: per 16 bytes of d, two n8 blocks (its even and odd columns).
        for (q, &off) in offsets.iter().enumerate() {
            let words = match v_words.get(q) {
                Some(&words) => words,
                None => {
                    let a = at(k, v8, off)?;
                    ldmatrix_x4(k, a, true)?
                }
            };
            for (j, &word) in words.iter().enumerate() {
                k.and(word, word, masks[j % 2])?;
            }
            for h in 0..2 {
                let [e0, o0] = e4m3_transposed_to_f16(k, words[2 * h])?;
                let [e1, o1] = e4m3_transposed_to_f16(k, words[2 * h + 1])?;
                let c = 2 * q + h;
                for (e, [b0, b1]) in [[e0, e1], [o0, o1]].into_iter().enumerate() {
                    let nb = 2 * c + e;
                    mma_f16(k, &o[4 * nb..4 * nb + 4], pa, [b0.as_ref(), b1.as_ref()])?;
                }
            }
        }
        p.ring.release_next(k, sync, &cur, leader, false)?;
        if let Some(others) = others {
            cur.skip(k.isa(), others)?;
        }
        Ok(())
    })?;
    let_combine_start(k, p)?;
    let merged = match consumers {
        1 => warp,
        _ => k.let_("merge_warp", me.index * 4u32 + warp)?,
    };
    merge_warps(k, p, (&o_acc, &rows), (&m, &l), &scales, (merged, lane, ct))?;
    fold_splits(k, p, ct, threads)
}

/// Each lane's byte offsets into an FP8 K or V tile for its `ldmatrix.x4` of every 32 bytes of
/// d (`q`): matrix `j = lane / 8`, row `lane % 8` is key `16 warp + 8 (j % 2) + lane % 8` of
/// the tile, 16-byte chunk `2 q + j / 2` of its row; the tile's slabs of one swizzle span
/// `span` (128 or 64 bytes) of 64 rows, chunk `x` of row `r` at `(x ^ f(r)) · 16` (128 bytes:
/// `f = r % 8`, address bits 4-6 by bits 7-9; 64 bytes: `f = r / 2 % 4`, bits 4-5 by 7-8;
/// PTX ISA 5.5.2.1 "Tensor swizzling modes").
fn ldmatrix_offsets(
    k: &mut KernelBuilder,
    cfg: &DecodeConfig,
    warp: Var,
    lane: Var,
) -> Result<Vec<Reg<ty::U32>>> {
    let span = cfg.cache_slab() * cfg.cache_bytes();
    let per_row = span / 16;
    let j = k.let_("ldsm_matrix", lane / 8u32)?;
    let i = k.let_("ldsm_row", lane % 8u32)?;
    let row = k.eval(Expr::from(warp) * 16u32 + (j % 2u32) * 8u32 + i)?;
    let row_bytes = k.reg::<ty::U32>();
    k.mul_lo(row_bytes, row, span)?;
    // f(r) for these rows (16 warp + 8 (j % 2) is a multiple of 8): i, or i / 2.
    let f = match span {
        128 => k.eval(Expr::from(i))?,
        _ => k.eval(i / 2u32)?,
    };
    let jb = k.eval(j / 2u32)?;
    let x = k.reg::<ty::U32>();
    k.xor(x, jb, f)?;
    let mut out = Vec::new();
    for q in 0..cfg.head_dim / 32 {
        // Chunk 2q + j/2: its slab, and (2q % per_row + j/2) ^ f = (2q % per_row) ^ x.
        let (slab, even) = ((2 * q) / per_row, (2 * q) % per_row);
        let off = k.reg::<ty::U32>();
        k.xor(off, x, even)?;
        k.shl(off, off, 4u32)?;
        k.add(off, off, row_bytes)?;
        if slab > 0 {
            k.add(off, off, slab * DecodeConfig::BLOCK_N * span)?;
        }
        out.push(off);
    }
    Ok(out)
}

/// The end of the FP8 consumer: the warps' states (four a consumer warpgroup, `warp` this one's
/// index among them all) merged through shared memory (the ring's tiles, free once every warp
/// has read its last stage: the consumers' named barrier first). Each warp writes its O in its
/// fragment's column order (column `8 nb + 2 tig + i`, pairs by `st.shared.v2`) and its rows'
/// max and sum; rows [`MERGE_PAD`] words longer than `d`, so a half-warp's pairs (rows `g` of
/// 4 `g`s, 4 `tig`s) and reads (one row, 32 consecutive words) each fall in 32 different
/// banks. Then consumer thread `t` (`ct`) of `T` takes rows `t / 16 + (T / 16) j` and the
/// column pairs `2 (t % 16) + 32 c`: `M = max m_w`, weights
/// `e^((m_w - M)·scale) / Σ_w l_w e^((m_w - M)·scale)`, and stores `o` (or `o_part` and
/// `lse_part` with splits) as [`epilogue`] does, at the head columns the fragment's columns
/// are (`16 (nb / 2) + 4 tig + 2 i + nb % 2`).
fn merge_warps(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    (o_acc, rows): (&Buffer<ty::F32>, &RowGroups),
    (m, l): (&[Reg<ty::F32>], &[Reg<ty::F32>]),
    scales: &Scales,
    (warp, lane, lt): (Var, Var, Var),
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let d = cfg.head_dim;
    let span = d + MERGE_PAD;
    let rows_q = cfg.rows();
    let threads = WarpSpecialized::WARPGROUP * cfg.consumers;
    let warps = threads / 32;
    // Rows the consumers' threads take at once, 16 threads a row.
    let at_once = threads / 16;
    if rows_q % at_once != 0 {
        return Err(k.error("the merge's rows are not a whole number of the threads' turns"));
    }
    let (Some(o), Some(tv)) = (o_acc.regs().map(<[_]>::to_vec), o_acc.fragment().cloned()) else {
        return Err(k.error("O is a register fragment"));
    };
    // The ring's tiles from stage 0 on are one region of stages x (K, V).
    let Some(stride) = p.ring.pipeline().stride() else {
        return Err(k.error("the ring's stages are not evenly spaced"));
    };
    let floats = warps * rows_q * span + 2 * warps * rows_q;
    if stride != 2 * cfg.kv_bytes() || floats * 4 > stride * cfg.stages() {
        return Err(k.error("the ring's tiles do not hold the warps' states"));
    }
    let stage0 = k.reg::<ty::U32>();
    k.mov(stage0, 0u32)?;
    let region = p.ring.first_tile(k, stage0)?;
    let view = k.shared_view::<ty::F32>("merge", region, &[floats], 1024)?;
    k.sync_named(DecodeConfig::CLEAR_BARRIER, threads)?;
    let (g, tig) = (lane / 4u32, lane % 4u32);
    let (base_r, base_c) = tv.coord(0, 0).map_err(|e| k.error(e.to_string()))?;
    // Each value's row and column offsets from the lane's first; pairs of adjacent columns.
    let mut at = std::collections::BTreeMap::new();
    for (v, &r) in o.iter().enumerate() {
        let (row, col) = tv.coord(0, v as i64).map_err(|e| k.error(e.to_string()))?;
        at.insert(((row - base_r) as u32, (col - base_c) as u32), r);
    }
    for (&(dr, dc), &r) in &at {
        if dc % 2 == 1 {
            continue;
        }
        let Some(&next) = at.get(&(dr, dc + 1)) else {
            return Err(k.error("O's fragment holds column pairs"));
        };
        let word = (Expr::from(warp) * rows_q + g.clone() + dr) * span + tig.clone() * 2u32 + dc;
        k.vstore(&view, [word], &[r, next])?;
    }
    let stats = warps * rows_q * span;
    let quad_first = k.cmp(CmpOp::Eq, tig.clone(), 0u32)?;
    k.if_(quad_first, |k| {
        for i in 0..rows.count {
            let Some(v) = rows.o.iter().position(|&x| x == i) else {
                continue;
            };
            let (row, _) = tv.coord(0, v as i64).map_err(|e| k.error(e.to_string()))?;
            let at = Expr::from(warp) * rows_q + g.clone() + (row - base_r) as u32;
            k.store(&view, [at.clone() + stats], m[i])?;
            k.store(&view, [at + stats + warps * rows_q], l[i])?;
        }
        Ok(())
    })
    .end()?;
    k.sync_named(DecodeConfig::CLEAR_BARRIER, threads)?;
    // Thread t: rows t / 16 + at_once · j, column pairs 2 (t % 16) + 32 c.
    let h = k.let_("merge_lane", lt % 16u32)?;
    // The head column of fragment column 2 h + 32 c + j: 32 c + 2 j + this.
    let head_col = k.let_(
        "merge_col",
        (h / 8u32) * 16u32 + (h % 4u32) * 4u32 + (h / 4u32) % 2u32,
    )?;
    let single = k.cmp(CmpOp::Eq, args.splits, 1u32)?;
    for turn in 0..rows_q / at_once {
        let row = k.let_("merge_row", lt / 16u32 + turn * at_once)?;
        let mw: Vec<Reg<ty::F32>> = (0..warps)
            .map(|x| k.load(&view, [Expr::from(row) + stats + x * rows_q]))
            .collect::<Result<_>>()?;
        let lw: Vec<Reg<ty::F32>> = (0..warps)
            .map(|x| k.load(&view, [Expr::from(row) + stats + (warps + x) * rows_q]))
            .collect::<Result<_>>()?;
        let big = k.reg::<ty::F32>();
        k.mov(big, mw[0])?;
        for &x in &mw[1..] {
            k.max(big, big, x)?;
        }
        let bias = merge_bias(k, big, scales)?;
        let sum = k.reg::<ty::F32>();
        k.mov(sum, 0.0f32)?;
        let mut weights = Vec::with_capacity(warps as usize);
        for (&mx, &lx) in mw.iter().zip(&lw) {
            let f = k.exp2_fma(mx, scales.log2, bias)?;
            k.fma(sum, lx, f, sum)?;
            weights.push(f);
        }
        let empty = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, empty, sum, 0.0f32)?;
        let inv = k.rcp_of(sum)?;
        k.selp(inv, 0.0f32, inv, empty)?;
        if let Some(v_scale) = scales.o {
            k.mul(inv, inv, v_scale)?;
        }
        for f in &weights {
            k.mul(*f, *f, inv)?;
        }
        let (token, head, live) = row_target(k, p, row)?;
        let at = |col: Expr| [w.batch.into(), token.into(), head.into(), col];
        k.if_(live, |k| {
            let mut values = Vec::with_capacity((d / 16) as usize);
            for c in 0..d / 32 {
                let x = k.regs::<ty::F32>(2);
                for &r in &x {
                    k.mov(r, 0.0f32)?;
                }
                for (wi, &f) in weights.iter().enumerate() {
                    let word = (Expr::from(row) + wi as u32 * rows_q) * span
                        + Expr::from(h) * 2u32
                        + c * 32;
                    let pair = k.vload(&view, [word], 2)?;
                    for (&x, &o) in x.iter().zip(&pair) {
                        k.fma(x, o, f, x)?;
                    }
                }
                for (j, &x) in x.iter().enumerate() {
                    values.push((Expr::from(head_col) + (c * 32 + 2 * j as u32), x));
                }
            }
            k.if_(single, |k| {
                for (col, x) in &values {
                    let out = k.reg::<Bf16>();
                    k.cvt(out, *x)?;
                    k.store(&args.o, at(col.clone()), out)?;
                }
                Ok(())
            })
            .else_(|k| {
                for (col, x) in &values {
                    let mut idx = vec![Expr::from(w.split)];
                    idx.extend(at(col.clone()));
                    k.store(&args.o_part, idx, *x)?;
                }
                let ln = k.log(sum)?;
                let lse = k.fma_of(big, scales.s, ln)?;
                k.selp(lse, f32::NEG_INFINITY, lse, empty)?;
                let first = k.cmp(CmpOp::Eq, h, 0u32)?;
                let idx = [w.split, w.batch, token, head];
                k.if_(first, |k| k.store(&args.lse_part, idx, lse)).end()
            })
        })
        .end()?;
    }
    Ok(())
}

/// The exponent's bias of a merge of softmax states whose largest max is `big`: `-big · scale
/// · log2 e`, each state's factor then `2^(m · scale · log2 e + bias)`; 0 where no state saw a
/// key (`big` is `-inf`), so the factors are `e^-inf = 0`, never NaN (`-inf - -inf`).
fn merge_bias(k: &mut KernelBuilder, big: Reg<ty::F32>, scales: &Scales) -> Result<Reg<ty::F32>> {
    let dead = k.pred();
    k.setp::<ty::F32>(CmpOp::Eq, dead, big, f32::NEG_INFINITY)?;
    let m_use = k.reg::<ty::F32>();
    k.selp(m_use, 0.0f32, big, dead)?;
    let bias = k.reg::<ty::F32>();
    k.mul(bias, m_use, scales.log2)?;
    k.neg(bias, bias)?;
    Ok(bias)
}

/// Words a row of the FP8 warps' merge ([`merge_warps`]) holds past `d`: 8, so a row starts 8
/// banks on from the one before (`d` is a multiple of 32 words).
const MERGE_PAD: u32 = 8;

/// The scores' scale (K's scale folded in), its log2 form the softmax takes, and O's factor
/// (V's scale) with an FP8 cache.
fn score_scales(k: &mut KernelBuilder, p: &Parts<'_>) -> Result<Scales> {
    let (args, w) = (p.args, p.work);
    let (s, o) = match &args.kv_scales {
        Some((ks, vs, scales)) => {
            let at = [Expr::from(w.kv_head) % *scales];
            let (kx, vx) = (k.load(ks, at.clone())?, k.load(vs, at)?);
            (k.mul_of(args.scale, kx)?, Some(vx))
        }
        None => (args.scale, None),
    };
    let log2 = k.reg::<ty::F32>();
    k.mul(log2, s, LOG2_E)?;
    Ok(Scales { s, o, log2 })
}

/// The scores' scale, O's factor (an FP8 cache's V scale) and the scores' scale times
/// `log2 e`.
struct Scales {
    s: Reg<ty::F32>,
    o: Option<Reg<ty::F32>>,
    log2: Reg<ty::F32>,
}

/// The fence and barrier after the consumers' generic writes to a tile wgmma reads (the async
/// proxy, PTX ISA 9.7.12.4 `fence.proxy.async`): their `threads` meet at named barrier
/// `barrier`.
fn publish(k: &mut KernelBuilder, barrier: impl Into<Src<ty::U32>>, threads: u32) -> Result<()> {
    k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
        ptx_isa::space::SharedScope::Cta,
    )))?;
    k.sync_named(barrier, threads)
}

/// Q's bf16 rows converted to f16 in place by the consumers' `threads` (`ct` each one's index
/// among them; each 32-bit pair where it is, so the swizzle stays; bf16 values within f16's
/// range are exact in it), then published to wgmma.
fn q_to_f16(
    k: &mut KernelBuilder,
    q_s: Reg<ty::U32>,
    cfg: &DecodeConfig,
    ct: Var,
    threads: u32,
) -> Result<()> {
    let words = cfg.rows() * cfg.head_dim / 2;
    if words % threads != 0 {
        return Err(k.error("Q's words are not a whole number a consumer thread"));
    }
    let view = k.shared_view::<ty::U32>("q_words", q_s, &[words], 1024)?;
    for i in 0..words / threads {
        let at = [ct + i * threads];
        let word = k.load(&view, at.clone())?;
        let halves = k.regs::<ty::Bf16>(2);
        k.isa().mov_unpack(&halves, word)?;
        let mut out = Vec::with_capacity(2);
        for &h in &halves {
            let f = k.reg::<ty::F32>();
            k.cvt(f, h)?;
            let x = k.reg::<ty::F16>();
            k.cvt(x, f)?;
            out.push(x);
        }
        let packed = k.reg::<ty::U32>();
        k.isa().mov_pack(packed, &out)?;
        k.store(&view, at, packed)?;
    }
    publish(k, DecodeConfig::CLEAR_BARRIER, threads)
}

/// On the tile holding the sequence's end, V's rows past the last key set to zero (whole
/// 128-byte rows, which the swizzle only permutes within), made visible to wgmma (the async
/// proxy, PTX ISA 9.7.12.4 `fence.proxy.async`) before the warpgroup meets at its barrier
/// `barrier` (its own: [`DecodeConfig::CLEAR_BARRIER`]).
fn clear_past_keys(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    n: Var,
    va: Reg<ty::U32>,
    lt: Var,
    barrier: Src<ty::U32>,
    (first, rows): (Expr, u32),
) -> Result<()> {
    let (bn, slab) = (DecodeConfig::BLOCK_N, DecodeConfig::SLAB);
    let w = p.work;
    let edge = k.cmp(CmpOp::Gt, n * bn + bn, w.len)?;
    k.if_(edge, |k| {
        let keys = k.let_("keys_left", w.len - n * bn)?;
        // 16-byte chunks: 8 a row, the warpgroup's `rows` rows of each slab of `bn` (all of
        // them, or its half of the keys with DecodeConfig::key_halves, `va` then at its first).
        let chunks = p.cfg.head_dim / slab * rows * 8;
        let view =
            k.shared_view::<ty::U32>("v_rows", va, &[p.cfg.head_dim / slab * bn * 32], 1024)?;
        let zero = k.regs::<ty::U32>(4);
        for &z in &zero {
            k.mov(z, 0u32)?;
        }
        for i in 0..chunks / 128 {
            let c = k.let_("chunk16", lt + i * 128)?;
            // The chunk's key in the tile (its row in its slab, past the warpgroup's first),
            // and its word in the slabs.
            let past = k.cmp(CmpOp::Ge, (c / 8u32) % rows + first.clone(), keys)?;
            let at = match rows == bn {
                true => c * 4u32,
                false => ((c / (8 * rows)) * (8 * bn) + c % (8 * rows)) * 4u32,
            };
            k.if_(past, |k| k.vstore(&view, [at], &zero)).end()?;
        }
        publish(k, barrier, WarpSpecialized::WARPGROUP)
    })
    .end()
}

/// O divided by the row sums into `o` (bf16) when the keys are not split; else O's rows
/// divided by their own sums into `o_part` and `LSE = max·scale + ln(sum)` into `lse_part`
/// (`-inf` for a row that saw no key), for the combine. Rows past the chunk's tokens (or past
/// `q_len`) are not stored.
#[allow(clippy::too_many_arguments)]
fn epilogue(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    o_acc: &Buffer<ty::F32>,
    rows: &crate::library::attention::RowGroups,
    (m, l): (&[Reg<ty::F32>], &[Reg<ty::F32>]),
    scales: &Scales,
    lt: Var,
) -> Result<()> {
    let (args, w) = (p.args, p.work);
    let (Some(o), Some(tv)) = (o_acc.regs().map(<[_]>::to_vec), o_acc.fragment().cloned()) else {
        return Err(k.error("O is a register fragment"));
    };
    let (r0, c0) = k.fragment_origin(o_acc, lt)?;
    let (base_r, base_c) = tv.coord(0, 0).map_err(|e| k.error(e.to_string()))?;
    let single = k.cmp(CmpOp::Eq, args.splits, 1u32)?;
    let quad_first = k.cmp(CmpOp::Eq, c0.clone(), 0u32)?;
    for i in 0..rows.count {
        let values: Vec<usize> = (0..o.len()).filter(|&v| rows.o[v] == i).collect();
        let Some(&first) = values.first() else {
            continue;
        };
        let (r, _) = tv
            .coord(0, first as i64)
            .map_err(|e| k.error(e.to_string()))?;
        let row = k.let_("o_row", r0.clone() + (r - base_r) as u32)?;
        // A row that saw no key has sum 0: O = 0, LSE = -inf.
        let empty = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, empty, l[i], 0.0f32)?;
        let inv = k.rcp_of(l[i])?;
        k.selp(inv, 0.0f32, inv, empty)?;
        if let Some(v_scale) = scales.o {
            k.mul(inv, inv, v_scale)?;
        }
        let (token, head, live) = row_target(k, p, row)?;
        let at = |col: Expr| [w.batch.into(), token.into(), head.into(), col];
        let col = |k: &KernelBuilder, v: usize| -> Result<Expr> {
            let (_, c) = tv.coord(0, v as i64).map_err(|e| k.error(e.to_string()))?;
            Ok(c0.clone() + (c - base_c) as u32)
        };
        k.if_(live, |k| {
            k.if_(single, |k| {
                for &v in &values {
                    let x = k.mul_of(o[v], inv)?;
                    let h = k.reg::<Bf16>();
                    k.cvt(h, x)?;
                    let c = col(k, v)?;
                    k.store(&args.o, at(c), h)?;
                }
                Ok(())
            })
            .else_(|k| {
                for &v in &values {
                    let x = k.mul_of(o[v], inv)?;
                    let c = col(k, v)?;
                    let mut idx = vec![Expr::from(w.split)];
                    idx.extend(at(c));
                    k.store(&args.o_part, idx, x)?;
                }
                let ln = k.log(l[i])?;
                let lse = k.fma_of(m[i], scales.s, ln)?;
                k.selp(lse, f32::NEG_INFINITY, lse, empty)?;
                let idx = [w.split, w.batch, token, head];
                k.if_(quad_first, |k| k.store(&args.lse_part, idx, lse))
                    .end()
            })
        })
        .end()?;
    }
    Ok(())
}

/// How a combine reads the splits' parts: the columns of a row each of its elements holds (one
/// load of `o_part` a split: 1, 2 or 4 f32) and the splits a step of each pass reads, their
/// loads in flight together.
#[derive(Clone, Copy)]
struct CombineReads {
    /// Adjacent columns of one row an element takes (`ld.global.vN.f32`, PTX ISA 9.7.9.8).
    width: u32,
    /// Splits a step of the first pass (the largest LSE) reads: one load a split.
    max_unroll: u32,
    /// Splits a step of the second pass (the weighted sums) reads: `1 + width` loads a split.
    sum_unroll: u32,
}

/// The combine kernel's reads: a thread a column, every split the rule chooses
/// ([`DecodeConfig::splits`], at most [`DecodeConfig::MOST_SPLITS`]) in one step of each pass.
const COMBINE_READS: CombineReads = CombineReads {
    width: 1,
    max_unroll: DecodeConfig::MOST_SPLITS,
    sum_unroll: DecodeConfig::MOST_SPLITS,
};

/// The folded combine's reads ([`fold_splits`]): a thread 4 adjacent columns of one row (a
/// 16-byte load a split), every split the rule chooses in the first pass's step (one LSE
/// each), 33 in the second's (5 registers a split; the rule's 33 splits of one long sequence in
/// one step: 0.3-0.6 % faster than 24 at 1 x 128k's bf16 pages, BENCHMARKS.md, session 23; no
/// spills).
const FOLD_READS: CombineReads = CombineReads {
    width: 4,
    max_unroll: DecodeConfig::MOST_SPLITS,
    sum_unroll: 33,
};

/// With [`DecodeConfig::fold`] and several splits, the consumers' ticket for their
/// (sequence, KV head, query chunk) after their part is stored ([`crate::parts::ticket`]); the
/// last split's consumers combine the splits' parts of the chunk's rows into `o`, as
/// [`build_combine`] does (the same sums in the same order: the same bits): thread `ct` of
/// their `threads` takes the 4 columns `4 (ct + threads · i)` to `4 (ct + threads · i) + 3` of
/// the chunk's `rows x d` ([`FOLD_READS`]; `d` is a multiple of 4).
fn fold_splits(k: &mut KernelBuilder, p: &Parts<'_>, lt: Var, threads: u32) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let Some(counters) = &args.counters else {
        return Ok(());
    };
    let (d, group, tq) = (cfg.head_dim, cfg.group, cfg.tokens_per_cta());
    let width = FOLD_READS.width;
    let many = k.cmp(CmpOp::Gt, args.splits, 1u32)?;
    k.if_(many, |k| {
        let at = vec![w.batch.into(), w.kv_head.into(), w.chunk.into()];
        let bar = (DecodeConfig::CLEAR_BARRIER, threads);
        last_arrival(k, counters, at, args.splits, bar, lt, |k| {
            // The chunk's live column groups: min(tq, q_len - chunk · tq) tokens of `group`
            // rows of `d / width`.
            let left = k.eval(args.q_len - w.chunk * tq)?;
            let tokens = k.reg::<ty::U32>();
            k.min(tokens, left, tq)?;
            let tokens = k.bind("fold_tokens", tokens);
            let quads = k.let_("fold_quads", tokens * (group * d / width))?;
            k.for_range_step(0u32, quads, threads, |k, q0| {
                // A thread past the chunk's reads the last group's parts (not stored).
                let q = k.let_("fold_quad", q0 + lt)?;
                let live = k.cmp(CmpOp::Lt, q, quads)?;
                let (q, last) = (k.eval(q)?, k.eval(quads - 1u32)?);
                let read = k.reg::<ty::U32>();
                k.min(read, q, last)?;
                let read = k.bind("fold_read", read);
                let row = k.let_("fold_row", read / (d / width))?;
                let at = [
                    Expr::from(w.batch),
                    w.chunk * tq + row / group,
                    w.kv_head * group + row % group,
                    read % (d / width) * width,
                ];
                let parts = (&args.o_part, &args.lse_part);
                let values =
                    combine_values(k, parts, args.splits, FOLD_READS, std::slice::from_ref(&at))?;
                k.if_(live, |k| {
                    for (i, x) in values.into_iter().flatten().enumerate() {
                        let out = k.reg::<Bf16>();
                        k.cvt(out, x)?;
                        let [b, t, h, c] = at.clone();
                        k.store(&args.o, [b, t, h, c + i as u32], out)?;
                    }
                    Ok(())
                })
                .end()
            })
        })
    })
    .end()
}

/// Each element's `(lse, [o; width])` of the splits a combine step reads.
type StepValues = Vec<Vec<(Reg<ty::F32>, Vec<Reg<ty::F32>>)>>;

/// `o`'s values at `at` (`[batch, token, head, column]`, each a valid element) and the
/// `reads.width - 1` columns after each: `Σ_s e^(lse_s - M) · o_part_s / Σ_s e^(lse_s - M)`
/// over the splits in order, `M` the largest `lse_s` (a first pass over the LSEs alone), so the
/// bits do not depend on the splits a step reads or on the columns an element holds: the folded
/// combine and the combine kernel read differently and give the same bits. A step's loads
/// (every element's) are issued together so their latencies overlap: each element's two
/// addresses computed once a step and moved on by a split's stride (one 64-bit add a load),
/// each split's predicate shared by the elements. `0` for a row no split saw a key of.
fn combine_values(
    k: &mut KernelBuilder,
    (o_part, lse_part): (&Buffer<ty::F32>, &Buffer<ty::F32>),
    splits: Var,
    reads: CombineReads,
    at: &[[Expr; 4]],
) -> Result<Vec<Vec<Reg<ty::F32>>>> {
    // The bytes from one split's part to the next: each buffer's outer stride.
    let mut step = |buf: &Buffer<ty::F32>| -> Result<Reg<ty::U64>> {
        let Some(stride) = buf.strides.first().cloned() else {
            return Err(k.error("the workspace has a split dimension"));
        };
        let narrow = k.eval(stride * 4u32)?;
        let wide = k.reg::<ty::U64>();
        k.cvt(wide, narrow)?;
        Ok(wide)
    };
    let (lse_step, o_step) = (step(lse_part)?, step(o_part)?);
    let width = reads.width as usize;
    // Each element's values of the `unroll` splits from `s0` on (`-inf` and 0 past the
    // splits): its LSEs, and with `with_o` its parts of O.
    let read = |k: &mut KernelBuilder, s0: Var, with_o: bool, unroll: u32| -> Result<StepValues> {
        let live = (0..unroll)
            .map(|j| k.cmp(CmpOp::Lt, s0 + j, splits))
            .collect::<Result<Vec<_>>>()?;
        let mut parts = Vec::with_capacity(at.len());
        for [b, t, h, c] in at {
            let row = [Expr::from(s0), b.clone(), t.clone(), h.clone()];
            let Ptr::Global(lse_at) = k.ptr_to(lse_part, row.to_vec())? else {
                return Err(k.error("the workspace is global memory"));
            };
            // Registers of their own: the pointers move on a split at a time.
            let lse_ptr = k.reg::<ty::U64>();
            k.mov(lse_ptr, lse_at)?;
            let o_ptr = match with_o {
                true => {
                    let mut col = row.to_vec();
                    col.push(c.clone());
                    let Ptr::Global(o_at) = k.ptr_to(o_part, col)? else {
                        return Err(k.error("the workspace is global memory"));
                    };
                    let o_ptr = k.reg::<ty::U64>();
                    k.mov(o_ptr, o_at)?;
                    Some(o_ptr)
                }
                false => None,
            };
            let mut mine = Vec::with_capacity(unroll as usize);
            for (j, &live) in live.iter().enumerate() {
                if j > 0 {
                    k.add(lse_ptr, lse_ptr, lse_step)?;
                }
                let lse = k.reg::<ty::F32>();
                k.mov(lse, f32::NEG_INFINITY)?;
                k.isa().when(live).ld(lse, Addr::<Global>::reg(lse_ptr))?;
                let mut o = Vec::new();
                if let Some(o_ptr) = o_ptr {
                    if j > 0 {
                        k.add(o_ptr, o_ptr, o_step)?;
                    }
                    o = k.regs::<ty::F32>(width);
                    for &x in &o {
                        k.mov(x, 0.0f32)?;
                    }
                    let from = Addr::<Global>::reg(o_ptr);
                    match width {
                        1 => k.isa().when(live).ld(o[0], from)?,
                        _ => k.isa().when(live).ld_v(&o, from)?,
                    }
                }
                mine.push((lse, o));
            }
            parts.push(mine);
        }
        Ok(parts)
    };
    // The first pass: each element's largest LSE.
    let mut big = Vec::with_capacity(at.len());
    for _ in at {
        let m = k.reg::<ty::F32>();
        k.mov(m, f32::NEG_INFINITY)?;
        big.push(m);
    }
    k.for_range_step(0u32, splits, reads.max_unroll, |k, s0| {
        for (&m, mine) in big.iter().zip(read(k, s0, false, reads.max_unroll)?) {
            for (lse, _) in mine {
                k.max(m, m, lse)?;
            }
        }
        Ok(())
    })?;
    // Every split empty: weights of e^-inf = 0, never NaN (-inf - -inf).
    for &m in &big {
        let dead = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, dead, m, f32::NEG_INFINITY)?;
        k.selp(m, 0.0f32, m, dead)?;
    }
    // The second: the weighted sums in split order (one weight a split, each column's sum the
    // same fma a column element of its own would take).
    let mut state = Vec::with_capacity(at.len());
    for _ in at {
        let sum = k.reg::<ty::F32>();
        k.mov(sum, 0.0f32)?;
        let acc = k.regs::<ty::F32>(width);
        for &x in &acc {
            k.mov(x, 0.0f32)?;
        }
        state.push((sum, acc));
    }
    k.for_range_step(0u32, splits, reads.sum_unroll, |k, s0| {
        let parts = read(k, s0, true, reads.sum_unroll)?;
        for ((&(sum, ref acc), mine), &m) in state.iter().zip(&parts).zip(&big) {
            for (lse, o) in mine {
                let e = k.sub_of(*lse, m)?;
                let wgt = k.exp(e)?;
                k.add(sum, sum, wgt)?;
                for (&a, &x) in acc.iter().zip(o) {
                    k.fma(a, wgt, x, a)?;
                }
            }
        }
        Ok(())
    })?;
    let mut out = Vec::with_capacity(at.len());
    for (sum, acc) in state {
        let empty = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, empty, sum, 0.0f32)?;
        let inv = k.rcp_of(sum)?;
        k.selp(inv, 0.0f32, inv, empty)?;
        let cols = acc
            .into_iter()
            .map(|a| k.mul_of(a, inv))
            .collect::<Result<Vec<_>>>()?;
        out.push(cols);
    }
    Ok(out)
}

/// The combine of the splits for head dim `head_dim`: a CTA per (head, token, sequence), a
/// thread per column, `combine_values` of its element. Its parameters: `o_part`
/// `[splits, batch, q_len, heads, d]`, `lse_part` `[splits, batch, q_len, heads]` (f32) and `o`
/// `[batch, q_len, heads, d]` (bf16).
pub fn build_combine(target: Target, head_dim: u32) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new(&format!("decode_combine_d{head_dim}"), target);
    let one = ExtentFacts::NONE.at_least(1);
    let splits = k.symbol_with("splits", one)?;
    let batch = k.symbol_with("batch", one)?;
    let q_len = k.symbol_with("q_len", one)?;
    let heads = k.symbol_with("heads", one)?;
    let d = head_dim;
    let opts = TensorOpts::default();
    let e = |v: Var| Expr::from(v);
    let o_shape = [e(batch), e(q_len), e(heads), Expr::from(d)];
    let mut part_shape = vec![e(splits)];
    part_shape.extend(o_shape.clone());
    let o_part = k.tensor::<ty::F32>("o_part", part_shape, opts.clone())?;
    let lse_part = k.tensor::<ty::F32>("lse_part", [splits, batch, q_len, heads], opts.clone())?;
    let o = k.tensor::<Bf16>("o", o_shape, opts)?;
    let [h, t, b] = k.cta_id([heads, q_len, batch])?;
    let [c] = k.thread_id([d])?;
    // Launched as a programmatic dependent of the decode kernel
    // ([`DecodeConfig::dependent_combine`]), it may start before that kernel ends: the splits
    // are read once it has completed and its writes are visible (PTX ISA 9.7.13.13; at once
    // for an ordinary launch).
    k.isa().griddepcontrol_wait()?;
    let at = [[b, t, h, c].map(Expr::from)];
    let values = combine_values(&mut k, (&o_part, &lse_part), splits, COMBINE_READS, &at)?;
    for x in values.into_iter().flatten() {
        let out = k.reg::<Bf16>();
        k.cvt(out, x)?;
        k.store(&o, [b, t, h, c], out)?;
    }
    k.finish()
}
