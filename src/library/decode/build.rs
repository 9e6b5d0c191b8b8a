//! The decode kernel and the split combine, written with the authoring model and the kernel
//! parts: [`WarpSpecialized`](crate::parts::WarpSpecialized) roles, a [`Ring`] of K and V tiles
//! filled page by page by TMA, `gemm_async` (wgmma) for `S = Q·Kᵀ` and `P·V`, the attention's
//! online softmax on the accumulator fragment.

use crate::parts::{ConsumerId, InitScope, Ring, init_barriers, pool_barrier};
use ptx_isa::builder::CmpOp;
use ptx_isa::spaces::Global;
use ptx_isa::{Addr, Reg, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::TileSpec;
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pipeline::sync::{BarrierSync, NamedBarrier, WaitMode};

use super::{DecodeConfig, MAX_Q_LEN};
use crate::kernel::math::LOG2_E;
use crate::kernel::{
    Buffer, BuiltKernel, Expr, KernelBuilder, Ptr, Result, TensorOpts, TmaTensor, Var,
};
use crate::library::attention::{SoftmaxState, online_softmax, s32, softmax_state};
use crate::runtime::ExtentFacts;
use crate::signature::TmaBox;
use crate::tile::{Accumulate, ExecScope, TileRef};

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
    scale: Reg<ty::F32>,
    /// With an FP8 cache: `k_scale` and `v_scale` (`[scales]`, 1 or `kv_heads`) and `scales`.
    kv_scales: Option<(Buffer<ty::F32>, Buffer<ty::F32>, Var)>,
    batch: Var,
    q_len: Var,
    kv_heads: Var,
    page_size: Var,
    splits: Var,
}

/// A cache as a TMA tensor: bf16, or FP8 e4m3.
enum Cache {
    Bf16(TmaTensor<Bf16>),
    E4m3(TmaTensor<ty::E4m3>),
}

impl Cache {
    /// The box at `origin` ([`KernelBuilder::tma_box_at`]).
    fn box_at(&self, k: &mut KernelBuilder, origin: &[Expr]) -> Result<TileRef> {
        match self {
            Cache::Bf16(t) => k.tma_box_at(t, origin),
            Cache::E4m3(t) => k.tma_box_at(t, origin),
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

/// What the producer and the consumer share.
struct Parts<'a> {
    cfg: &'a DecodeConfig,
    args: &'a Args,
    work: &'a Work,
    ring: &'a Ring,
    q_s: Reg<ty::U32>,
    q_full: NamedBarrier,
    /// With an FP8 cache: the f16 K and V tiles the consumer converts each stage into.
    tiles16: Option<[Reg<ty::U32>; 2]>,
}

/// Builds the decode kernel for `cfg` (sm_90a: wgmma, TMA, setmaxnreg). Its parameters: `q`
/// `[batch, q_len, heads, d]` (TMA, boxes of `[1, tokens, group, 64]`), `k_cache` and `v_cache`
/// `[num_pages, page_size, kv_heads, d]` (TMA, boxes of `[1, page_rows, 1, 64]`),
/// `block_table` `[batch, max_pages]` i32, `seq_lens` `[batch]` i32, `o` like `q`, the
/// workspace `o_part` `[splits, batch, q_len, heads, d]` and `lse_part`
/// `[splits, batch, q_len, heads]` (f32; written only when `splits > 1`, `o` only when it is 1)
/// and `scale` (f32). The grid: `splits · chunks` x `kv_heads` x `batch` CTAs.
pub fn build(target: Target, cfg: &DecodeConfig) -> Result<BuiltKernel> {
    let name = cfg.name();
    let mut k = KernelBuilder::new(&name, target);
    cfg.validate().map_err(|e| k.error(e.to_string()))?;
    let args = declare(&mut k, cfg)?;
    let tq = cfg.tokens_per_cta();
    let chunks = Expr::ceil_div(args.q_len, tq);
    let [x, kv_head, batch] = k.cta_id([
        Expr::from(args.splits) * chunks.clone(),
        args.kv_heads.into(),
        args.batch.into(),
    ])?;
    let roles = cfg.roles();
    let tid = roles.declare_ctas(&mut k, cfg.ctas_per_sm())?;

    // Shared memory: Q (d / 64 slabs of 64 rows x 128 bytes), the K/V ring, Q's barrier.
    let q_s = k.pool_bytes("q", cfg.q_bytes(), 1024)?;
    let spec = |name: &str| TileSpec {
        name: name.to_string(),
        bytes: cfg.kv_bytes(),
        align: 1024,
    };
    let tiles16 = if cfg.fp8 {
        let kt = k.pool_bytes("k16", cfg.tile16_bytes(), 1024)?;
        Some([kt, k.pool_bytes("v16", cfg.tile16_bytes(), 1024)?])
    } else {
        None
    };
    // One ring of K and V tiles: full takes the producer's arrive.expect_tx, empty the
    // consumer warpgroup's release.
    let (pipe, base) = k.pool_pipeline("kv", cfg.stages(), &[spec("k"), spec("v")], 1, 1)?;
    let mut sync = BarrierSync::new(&name, WaitMode::Spin);
    sync.declare_globals(k.module_mut())?;
    let ring = Ring::declare(&k, &mut sync, "kv", pipe, base, 1)?;
    let q_full = pool_barrier(&mut k, &mut sync, "q_full", 1)?;

    let work = work(&mut k, &args, [x, kv_head, batch], chunks)?;

    // Thread 0 initialises the ring's barriers and Q's; everyone sees them after the CTA barrier.
    init_barriers(
        &mut k,
        &mut sync,
        tid,
        (&[&ring], &[q_full]),
        InitScope::Cta,
    )?;

    let parts = Parts {
        cfg,
        args: &args,
        work: &work,
        ring: &ring,
        q_s,
        q_full,
        tiles16,
    };
    roles.run_synced(
        &mut k,
        tid,
        sync,
        |k, sync| producer(k, &parts, sync, tid),
        |k, sync, me| consumer(k, &parts, sync, me),
    )?;
    k.finish()
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
        let page_box = TmaBox::new([1, cfg.page_rows, 1, cfg.cache_slab()]);
        Ok(if cfg.fp8 {
            Cache::E4m3(k.tma_tensor::<ty::E4m3>(name, cache.clone(), page_box)?)
        } else {
            let page_box = page_box.swizzle(SwizzleMode::B128);
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
    let lse_part = k.tensor::<ty::F32>("lse_part", [splits, batch, q_len, heads], opts)?;
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
/// `page_rows` rows from the pages the block table names (looked up before the stage is
/// waited for, so the lookups overlap the wait).
fn producer(k: &mut KernelBuilder, p: &Parts<'_>, sync: &mut BarrierSync, tid: Var) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (bn, slab, rows) = (DecodeConfig::BLOCK_N, DecodeConfig::SLAB, cfg.page_rows);
    let slabs = cfg.head_dim / slab;
    // The cache's boxes: 64 bf16 columns, 128-byte swizzled, or a whole e4m3 row unswizzled.
    let (cache_slab, cache_slabs) = (cfg.cache_slab(), cfg.head_dim / cfg.cache_slab());
    let (cache_dt, cache_swizzle) = if cfg.fp8 {
        (ptx_isa::ScalarType::E4m3, SwizzleMode::None)
    } else {
        (ptx_isa::ScalarType::Bf16, SwizzleMode::B128)
    };
    let leader = k.cmp(CmpOp::Eq, tid, 0)?;
    k.if_(leader, |k| {
        let q_rows = cfg.tokens_per_cta() * cfg.group;
        let q_bytes = q_rows * slab * 2 * slabs;
        sync.arrive_expect_tx(k.isa(), p.q_full.at, p.q_full.addr, q_bytes)?;
        for s in 0..slabs {
            let dst = k.reg::<ty::U32>();
            k.add(dst, p.q_s, s * DecodeConfig::ROWS * slab * 2)?;
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
                Some((&mut *sync, p.q_full)),
                None,
                ExecScope::Thread,
            )?;
        }
        let cur = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
        k.for_range(w.first, w.end, |k, n| {
            // Each box's page and row in it; a box past the sequence's pages reads its last.
            let mut boxes = Vec::new();
            for i in 0..bn / rows {
                let pos = k.let_("pos", n * bn + i * rows)?;
                let want = k.eval(pos / args.page_size)?;
                let last = k.eval(w.last_slot)?;
                let slot = k.reg::<ty::U32>();
                k.min(slot, want, last)?;
                let slot = k.bind("slot", slot);
                let page = k.load(&args.block_table, [Expr::from(w.batch), slot.into()])?;
                let page = page
                    .retype::<ty::U32>()
                    .map_err(|e| k.error(e.to_string()))?;
                let page = k.bind("page", page);
                let row = k.let_("page_row", pos % args.page_size)?;
                boxes.push((page, row));
            }
            let full = p.ring.acquire(k, sync, &cur)?;
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
                        let src = cache.box_at(k, &origin)?;
                        k.copy_async(&to, &src, Some((&mut *sync, full)), None, ExecScope::Thread)?;
                    }
                }
            }
            cur.advance(k.isa())?;
            Ok(())
        })
    })
    .end()
}

/// The consumer warpgroup: the group's query rows (row `r` is token `r / group`, head
/// `r % group` of the KV head's group), `S = Q·Kᵀ` for each key tile, the mask on tiles that
/// reach past the first token's last key, the online softmax, V's rows past the keys cleared
/// on the last tile (a cache page holds anything past a sequence's end, and `0 · NaN` is NaN),
/// `O += P·V`; then O normalised into `o`, or with several splits the unnormalised parts into
/// the workspace. With an FP8 cache, Q is converted to f16 in place once and each stage's K
/// and V into the f16 tiles (the stage released at once), the rows past the keys written as
/// zeros; the scales multiply the softmax scale (K's) and O (V's).
fn consumer(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    sync: &mut BarrierSync,
    me: ConsumerId,
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (bn, d) = (DecodeConfig::BLOCK_N, cfg.head_dim);
    let dt = if cfg.fp8 {
        ptx_isa::ScalarType::F16
    } else {
        ptx_isa::ScalarType::Bf16
    };
    let lt = me.thread;
    // The scores' scale (K's scale folded in) and O's factor (V's scale).
    let (s_scale, o_scale) = match &args.kv_scales {
        Some((ks, vs, scales)) => {
            let at = [Expr::from(w.kv_head) % *scales];
            let (kx, vx) = (k.load(ks, at.clone())?, k.load(vs, at)?);
            (k.mul_of(args.scale, kx)?, Some(vx))
        }
        None => (args.scale, None),
    };
    let scale_log2 = k.reg::<ty::F32>();
    k.mul(scale_log2, s_scale, LOG2_E)?;
    let leader = k.cmp(CmpOp::Eq, lt, 0)?;
    let SoftmaxState {
        s_acc,
        o_acc,
        p_cast,
        p_a,
        rows,
        m,
        l,
    } = softmax_state(k, dt, bn, d)?;
    sync.wait(k.isa(), p.q_full.at, None, p.q_full.addr, 0u32)?;
    if cfg.fp8 {
        q_to_f16(k, p, lt)?;
    }
    let q_tile = TileRef::shared_slabs(
        dt,
        [DecodeConfig::ROWS, d],
        DecodeConfig::ROWS,
        p.q_s,
        1024,
        SwizzleMode::B128,
    );
    let cur = RingCursor::new(k.isa(), cfg.stages(), Phase::Parity)?;
    let tq = cfg.tokens_per_cta();
    k.for_range(w.first, w.end, |k, n| {
        p.ring.wait(k, sync, &cur)?;
        let tiles = p.ring.tile_addrs(k, cur.stage())?;
        let (Some(&k8), Some(&v8)) = (tiles.first(), tiles.get(1)) else {
            return Err(k.error("the ring's stage holds K and V"));
        };
        let (ka, va) = match p.tiles16 {
            Some([k16, v16]) => {
                // The keys this tile holds (64 or more: all).
                let keys = k.let_("keys_left", w.len - n * bn)?;
                tile_to_f16(k, cfg, k8, k16, None, lt)?;
                tile_to_f16(k, cfg, v8, v16, Some(keys), lt)?;
                // Every thread has read the stage once all have met: then it is released.
                publish(k)?;
                p.ring.release_next(k, sync, &cur, leader, false)?;
                (k16, v16)
            }
            None => (k8, v8),
        };
        let k_tile = TileRef::shared_slabs(dt, [bn, d], bn, ka, 1024, SwizzleMode::B128);
        k.gemm_async(
            &s_acc,
            &q_tile,
            &k_tile,
            Accumulate::No,
            ExecScope::Warpgroup,
        )?;
        k.wgmma_wait_group(0)?;
        // Token t (of the sequence's last q_len) sees keys below len - q_len + 1 + t: the tile
        // needs the mask when its last key reaches the chunk's first token's bound.
        let needs = k.cmp(
            CmpOp::Gt,
            n * bn + bn + args.q_len,
            w.len + 1u32 + w.chunk * tq,
        )?;
        k.if_(needs, |k| {
            k.mask_fragment_rows(
                &s_acc,
                lt,
                |k, row| {
                    let hi = s32(k, w.len + 1u32 + w.chunk * tq + row / cfg.group)?;
                    let lo = s32(k, n * bn + args.q_len)?;
                    let limit = k.reg::<ty::S32>();
                    k.sub(limit, hi, lo)?;
                    Ok(limit)
                },
                f32::NEG_INFINITY,
            )
        })
        .end()?;
        let alpha = online_softmax(k, &s_acc, &rows, &m, &l, scale_log2)?;
        let Some(o) = o_acc.regs().map(<[_]>::to_vec) else {
            return Err(k.error("O is a register fragment"));
        };
        for (v, &r) in o.iter().enumerate() {
            k.mul(r, r, alpha[rows.o[v]])?;
        }
        k.cast(&p_cast, &s_acc, ExecScope::Warpgroup)?;
        if !cfg.fp8 {
            clear_past_keys(k, p, n, va, lt)?;
        }
        let v_tile = TileRef::shared_slabs(dt, [bn, d], bn, va, 1024, SwizzleMode::B128)
            .transposed()
            .ok_or_else(|| k.error("V's tile has no layout"))?;
        k.gemm_async(&o_acc, &p_a, &v_tile, Accumulate::Yes, ExecScope::Warpgroup)?;
        k.wgmma_wait_group(0)?;
        if !cfg.fp8 {
            p.ring.release_next(k, sync, &cur, leader, false)?;
        }
        Ok(())
    })?;
    let scales = Scales {
        s: s_scale,
        o: o_scale,
    };
    epilogue(k, p, &o_acc, &rows, (&m, &l), scales, lt)
}

/// The scores' scale and O's factor (an FP8 cache's V scale).
struct Scales {
    s: Reg<ty::F32>,
    o: Option<Reg<ty::F32>>,
}

/// The fence and barrier after the consumer's generic writes to a tile wgmma reads (the async
/// proxy, PTX ISA 9.7.12.4 `fence.proxy.async`): its 128 threads meet at
/// [`DecodeConfig::CLEAR_BARRIER`].
fn publish(k: &mut KernelBuilder) -> Result<()> {
    k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
        ptx_isa::space::SharedScope::Cta,
    )))?;
    k.sync_named(DecodeConfig::CLEAR_BARRIER, 128)
}

/// Q's bf16 rows converted to f16 in place (each 32-bit pair where it is, so the swizzle
/// stays; bf16 values within f16's range are exact in it), then published to wgmma.
fn q_to_f16(k: &mut KernelBuilder, p: &Parts<'_>, lt: Var) -> Result<()> {
    let words = DecodeConfig::ROWS * p.cfg.head_dim / 2;
    let view = k.shared_view::<ty::U32>("q_words", p.q_s, &[words], 1024)?;
    for i in 0..words / 128 {
        let at = [lt + i * 128];
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
    publish(k)
}

/// One e4m3 tile of `64 x d` (dense rows of `d` bytes at `from`) converted to f16 into the
/// 128-byte-swizzled slabs wgmma reads at `to` (slab `s` of 64 columns at `s · 64 · 128`;
/// row `r`'s 16-byte chunk `c` at `r · 128 + (c ^ r % 8) · 16`, the swizzle TMA would have
/// written): each thread takes 16 bytes (`cvt.rn.f16x2.e4m3x2`, PTX ISA 9.7.9.21, exact) and
/// writes two chunks. Rows at or past `keys` (when given) are written as zeros.
fn tile_to_f16(
    k: &mut KernelBuilder,
    cfg: &DecodeConfig,
    from: Reg<ty::U32>,
    to: Reg<ty::U32>,
    keys: Option<Var>,
    lt: Var,
) -> Result<()> {
    let (bn, d) = (DecodeConfig::BLOCK_N, cfg.head_dim);
    let per_row = d / 16;
    let zeros = k.regs::<ty::B32>(4);
    for &z in &zeros {
        k.mov(z, 0u32)?;
    }
    for i in 0..bn * per_row / 128 {
        let chunk = k.let_("f8_chunk", lt + i * 128)?;
        let row = k.let_("f8_row", chunk / per_row)?;
        let col = k.let_("f8_col", (chunk % per_row) * 16u32)?;
        let off = k.eval(chunk * 16u32)?;
        let src = k.reg::<ty::U32>();
        k.add(src, off, from)?;
        let words = k.regs::<ty::B32>(4);
        k.isa()
            .ld_v(&words, Addr::<ptx_isa::spaces::Shared>::reg32(src))?;
        let mut halves = Vec::with_capacity(8);
        for &wd in &words {
            let b = k.regs::<ty::B16>(2);
            k.isa().mov_unpack(&b, wd)?;
            for h in b {
                let x = k.reg::<ty::F16x2>();
                k.isa()
                    .cvt_unpack_f8x2(ptx_isa::builder::F8Kind::E4m3, x, h, false)?;
                halves.push(x);
            }
        }
        // Rows past the keys: zeros instead.
        let live = match keys {
            Some(keys) => Some((k.cmp(CmpOp::Lt, row, keys)?, k.cmp(CmpOp::Ge, row, keys)?)),
            None => None,
        };
        // Slab, then the row and the first of its two chunks, swizzled.
        // Evaluated expressions' registers are remembered (the V tile's conversion reuses the
        // K tile's): the sums go to registers of their own.
        let off = k.eval((col / 64u32) * (bn * 128) + row * 128u32)?;
        let base = k.reg::<ty::U32>();
        k.add(base, off, to)?;
        let swz = k.eval(row % 8u32)?;
        for (j, part) in halves.chunks(4).enumerate() {
            let chunk16 = k.eval((col % 64u32) / 8u32 + j as u32)?;
            let c = k.reg::<ty::U32>();
            k.xor(c, chunk16, swz)?;
            let at = k.reg::<ty::U32>();
            k.mad_lo(at, c, 16u32, base)?;
            let addr = || Addr::<ptx_isa::spaces::Shared>::reg32(at);
            match live {
                None => k.isa().st_v(addr(), part)?,
                Some((live, past)) => {
                    k.isa().when(live).st_v(addr(), part)?;
                    k.isa().when(past).st_v(addr(), &zeros)?;
                }
            }
        }
    }
    Ok(())
}

/// On the tile holding the sequence's end, V's rows past the last key set to zero (whole
/// 128-byte rows, which the swizzle only permutes within), made visible to wgmma (the async
/// proxy, PTX ISA 9.7.12.4 `fence.proxy.async`) before the warpgroup meets at its barrier.
fn clear_past_keys(
    k: &mut KernelBuilder,
    p: &Parts<'_>,
    n: Var,
    va: Reg<ty::U32>,
    lt: Var,
) -> Result<()> {
    let (bn, slab) = (DecodeConfig::BLOCK_N, DecodeConfig::SLAB);
    let w = p.work;
    let edge = k.cmp(CmpOp::Gt, n * bn + bn, w.len)?;
    k.if_(edge, |k| {
        let keys = k.let_("keys_left", w.len - n * bn)?;
        // 16-byte chunks: 8 a row.
        let chunks = p.cfg.head_dim / slab * bn * 8;
        let view = k.shared_view::<ty::U32>("v_rows", va, &[chunks * 4], 1024)?;
        let zero = k.regs::<ty::U32>(4);
        for &z in &zero {
            k.mov(z, 0u32)?;
        }
        for i in 0..chunks / 128 {
            let c = k.let_("chunk16", lt + i * 128)?;
            // The chunk's row in its slab.
            let past = k.cmp(CmpOp::Ge, (c / 8u32) % bn, keys)?;
            k.if_(past, |k| k.vstore(&view, [c * 4u32], &zero)).end()?;
        }
        publish(k)
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
    scales: Scales,
    lt: Var,
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (Some(o), Some(tv)) = (o_acc.regs().map(<[_]>::to_vec), o_acc.fragment().cloned()) else {
        return Err(k.error("O is a register fragment"));
    };
    let (r0, c0) = k.fragment_origin(o_acc, lt)?;
    let (base_r, base_c) = tv.coord(0, 0).map_err(|e| k.error(e.to_string()))?;
    let tq = cfg.tokens_per_cta();
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
        let token = k.let_("o_token", w.chunk * tq + row / cfg.group)?;
        let head = k.let_("o_head", w.kv_head * cfg.group + row % cfg.group)?;
        let in_chunk = k.cmp(CmpOp::Lt, row, tq * cfg.group)?;
        let in_q = k.cmp(CmpOp::Lt, token, args.q_len)?;
        let live = k.pred();
        k.and(live, in_chunk, in_q)?;
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

/// Splits the combine reads a step.
const COMBINE_UNROLL: u32 = 8;

/// The combine of the splits for head dim `head_dim`: a CTA per (head, token, sequence), a
/// thread per column; `o = Σ_s e^(lse_s - max) · o_part_s / Σ_s e^(lse_s - max)` over the
/// splits in order, [`COMBINE_UNROLL`] a step with the running max rescaling what came before
/// (the same sums in the same order every run). Its parameters: `o_part`
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
    // The running max, sum and weighted O; COMBINE_UNROLL splits a step, their loads issued
    // together (predicated past the last split) so their latencies overlap.
    let (m, sum, acc) = (k.reg::<ty::F32>(), k.reg::<ty::F32>(), k.reg::<ty::F32>());
    k.mov(m, f32::NEG_INFINITY)?;
    k.mov(sum, 0.0f32)?;
    k.mov(acc, 0.0f32)?;
    k.for_range_step(0u32, splits, COMBINE_UNROLL, |k, s0| {
        let mut parts = Vec::new();
        for j in 0..COMBINE_UNROLL {
            let (lse, o) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
            k.mov(lse, f32::NEG_INFINITY)?;
            k.mov(o, 0.0f32)?;
            let live = k.cmp(CmpOp::Lt, s0 + j, splits)?;
            for (dst, at) in [
                (
                    lse,
                    k.ptr_to(&lse_part, [s0 + j, b.into(), t.into(), h.into()])?,
                ),
                (
                    o,
                    k.ptr_to(&o_part, [s0 + j, b.into(), t.into(), h.into(), c.into()])?,
                ),
            ] {
                let Ptr::Global(at) = at else {
                    return Err(k.error("the workspace is global memory"));
                };
                k.isa().when(live).ld(dst, Addr::<Global>::reg(at))?;
            }
            parts.push((lse, o));
        }
        let m_new = k.reg::<ty::F32>();
        k.mov(m_new, m)?;
        for &(lse, _) in &parts {
            k.max(m_new, m_new, lse)?;
        }
        // Every split so far empty: weights of e^-inf = 0, never NaN (-inf - -inf).
        let dead = k.pred();
        k.setp::<ty::F32>(CmpOp::Eq, dead, m_new, f32::NEG_INFINITY)?;
        let m_use = k.reg::<ty::F32>();
        k.selp(m_use, 0.0f32, m_new, dead)?;
        let shift = k.sub_of(m, m_use)?;
        let alpha = k.exp(shift)?;
        k.mul(sum, sum, alpha)?;
        k.mul(acc, acc, alpha)?;
        for &(lse, o) in &parts {
            let e = k.sub_of(lse, m_use)?;
            let wgt = k.exp(e)?;
            k.add(sum, sum, wgt)?;
            k.fma(acc, wgt, o, acc)?;
        }
        k.mov(m, m_new)?;
        Ok(())
    })?;
    let empty = k.pred();
    k.setp::<ty::F32>(CmpOp::Eq, empty, sum, 0.0f32)?;
    let inv = k.rcp_of(sum)?;
    k.selp(inv, 0.0f32, inv, empty)?;
    let x = k.mul_of(acc, inv)?;
    let out = k.reg::<Bf16>();
    k.cvt(out, x)?;
    k.store(&o, [b, t, h, c], out)?;
    k.finish()
}
