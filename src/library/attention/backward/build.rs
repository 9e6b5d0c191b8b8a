//! The attention backward's kernels, written with the authoring model and the kernel parts:
//! the preprocess and convert kernels (a warp per query row), and the main kernel on
//! [`WarpSpecialized`](crate::parts::WarpSpecialized) roles with a [`Ring`] of query blocks.

use crate::parts::{
    Band, ConsumerId, Ring, banded, load_slabs, ring_and_once, stage_for_bulk_then,
};
use layouts::fragment::wgmma::{accumulator, register_a_k};
use ptx_isa::builder::{AtomOp, CmpOp, Scope};
use ptx_isa::spaces::Global;
use ptx_isa::{Addr, Imm, Reg, RegRef, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::TileSpec;
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier};

use super::BackwardConfig;
use crate::kernel::math::LOG2_E;
use crate::kernel::{
    Buffer, BuiltKernel, Elem, Expr, KernelBuilder, Ptr, ReduceOp, ReduceScope, Result, TensorOpts,
    TmaTensor, Var,
};
use crate::library::attention::s32;
use crate::runtime::ExtentFacts;
use crate::signature::TmaBox;
use crate::tile::{Accumulate, ExecScope, TileRef};

/// The extents every backward kernel declares: batched `[batch, seqlen_q, heads, d]` tensors,
/// or packed `[total_q, heads, d]` ones ([`BackwardConfig::varlen`]).
struct Extents {
    /// Sequences: a symbol, or one less than the offsets packed.
    batch: Expr,
    /// Q's rows: `seqlen_q`, or `total_q` packed.
    seqlen_q: Var,
    heads: Var,
    /// Packed: the offsets' count (`cu_seqlens_q`'s extent, `batch + 1`).
    offsets: Option<Var>,
    /// The query block ([`BackwardConfig::block_m`]): what the statistics' rows are padded to.
    pad: u32,
    /// The rows of a `dQ` tile of the accumulator ([`BackwardConfig::dq_rows`]).
    tile: u32,
}

impl Extents {
    /// The dimensions before a tensor's own: `[batch]`, or none packed.
    fn lead(&self) -> Vec<Expr> {
        match self.offsets {
            Some(_) => Vec::new(),
            None => vec![self.batch.clone()],
        }
    }

    /// `[batch, rows, heads, d]` (packed `[rows, heads, d]`): Q, O, dO and dQ (`rows` the
    /// query length), K, V and their gradients (the key length, the KV heads).
    fn rows(&self, rows: Var, heads: Var, d: u32) -> Vec<Expr> {
        let mut shape = self.lead();
        shape.extend([rows.into(), heads.into(), Expr::from(d)]);
        shape
    }

    /// `[batch, heads, len]` (packed `[heads, len]`): LSE (`len` the query length), D and
    /// `LSE · log2 e` (`len` the padded one, [`stat_len`]).
    fn stats(&self, len: Var) -> Vec<Expr> {
        let mut shape = self.lead();
        shape.extend([self.heads.into(), len.into()]);
        shape
    }

    /// The TMA box of `rows` rows of one 64-column slab of a [`Extents::rows`] tensor, with
    /// the 128-byte swizzle.
    fn slab_box(&self, rows: u32) -> TmaBox {
        let slab = BackwardConfig::SLAB;
        match self.offsets {
            Some(_) => TmaBox::new([rows, 1, slab]),
            None => TmaBox::new([1, rows, 1, slab]),
        }
        .swizzle(SwizzleMode::B128)
    }

    /// The TMA box of a query block's row statistics ([`Extents::pad`] f32) of a
    /// [`Extents::stats`] tensor.
    fn stat_box(&self) -> TmaBox {
        let bm = self.pad;
        match self.offsets {
            Some(_) => TmaBox::new([1, bm]),
            None => TmaBox::new([1, 1, bm]),
        }
    }
}

/// Packed sequences' offsets ([`BackwardConfig::varlen`]): each kernel's last parameters,
/// `cu_seqlens_q` (and the main kernel's `cu_seqlens_k`), `[batch + 1]` i32, then the longest
/// sequence its grid covers (`max_seqlen_q`, the main kernel's `max_seqlen_k`).
struct Offsets {
    cu_q: Buffer<ty::S32>,
    cu_k: Option<Buffer<ty::S32>>,
    longest: Var,
}

/// [`Offsets`] declared, packed; `keys` for the main kernel's.
fn offsets(k: &mut KernelBuilder, x: &Extents, keys: bool) -> Result<Option<Offsets>> {
    let Some(n) = x.offsets else {
        return Ok(None);
    };
    let opts = TensorOpts::default();
    let cu_q = k.tensor::<ty::S32>("cu_seqlens_q", [n], opts.clone())?;
    let (cu_k, longest) = match keys {
        true => (
            Some(k.tensor::<ty::S32>("cu_seqlens_k", [n], opts)?),
            "max_seqlen_k",
        ),
        false => (None, "max_seqlen_q"),
    };
    let longest = k.symbol_arg(longest, ExtentFacts::NONE.at_least(1))?;
    Ok(Some(Offsets {
        cu_q,
        cu_k,
        longest,
    }))
}

/// Where one sequence's rows lie.
#[derive(Clone, Copy)]
struct Seq {
    batch: Var,
    /// Its query length.
    seqlen_q: Var,
    /// Packed: its first query row and the first block of [`Seq::tile`] rows of its statistics
    /// and `dQ` tiles ([`first_block`]).
    starts: Option<(Var, Var)>,
    /// What the statistics' rows are padded to ([`Extents::pad`]).
    pad: u32,
    /// The rows of a `dQ` tile ([`Extents::tile`]).
    tile: u32,
}

impl Seq {
    /// Sequence `batch`'s rows: the tensors' own, or packed read from the offsets.
    fn new(k: &mut KernelBuilder, x: &Extents, offs: Option<&Offsets>, batch: Var) -> Result<Seq> {
        let Some(o) = offs else {
            return Ok(Seq {
                batch,
                seqlen_q: x.seqlen_q,
                starts: None,
                pad: x.pad,
                tile: x.tile,
            });
        };
        let (q0, seqlen_q) = sequence(k, &o.cu_q, batch, ["q_first", "seqlen_q"])?;
        let block0 = first_block(k, q0.into(), batch, (x.pad, x.tile))?;
        Ok(Seq {
            batch,
            seqlen_q,
            starts: Some((q0, block0)),
            pad: x.pad,
            tile: x.tile,
        })
    }

    /// Packed, the same with its first block of statistics and `dQ` tiles read again from the
    /// offsets: where holding it in a register through a loop costs more than the load.
    fn reloaded(self, k: &mut KernelBuilder, offs: Option<&Offsets>) -> Result<Seq> {
        let (Some((q0, _)), Some(o)) = (self.starts, offs) else {
            return Ok(self);
        };
        let first = k.load(&o.cu_q, [Expr::from(self.batch)])?;
        let first = first
            .retype::<ty::U32>()
            .map_err(|e| k.error(e.to_string()))?;
        let first = k.bind("q_first", first);
        let block0 = first_block(k, first.into(), self.batch, (self.pad, self.tile))?;
        Ok(Seq {
            starts: Some((q0, block0)),
            ..self
        })
    }

    /// Query row `row` of the sequence in Q, O, dO and dQ (without the column): `[batch, row,
    /// head]`, or packed `[q0 + row, head]`.
    fn q_at(&self, row: Expr, head: Var) -> Vec<Expr> {
        match self.starts {
            None => vec![self.batch.into(), row, head.into()],
            Some((q0, _)) => vec![row + q0, head.into()],
        }
    }

    /// The dimensions of `head`'s statistics and `dQ` tiles before their own: `[batch,
    /// head]`, or packed `[head]`.
    fn stat_lead(&self, head: Var) -> Vec<Expr> {
        match self.starts {
            None => vec![self.batch.into(), head.into()],
            Some(_) => vec![head.into()],
        }
    }

    /// Query row `row`'s LSE in the forward's `[batch, heads, seqlen_q]` (packed `[heads,
    /// total_q]`).
    fn lse_at(&self, head: Var, row: Expr) -> Vec<Expr> {
        let mut at = self.stat_lead(head);
        at.push(match self.starts {
            None => row,
            Some((q0, _)) => row + q0,
        });
        at
    }

    /// Query row `row`'s place in the padded statistics (`D`, `LSE · log2 e`) and in the
    /// rows of the `dQ` tiles: the row, or packed the sequence's first padded row on.
    fn stat_row(&self, row: Expr) -> Expr {
        match self.starts {
            None => row,
            Some((_, block0)) => row + block0 * self.tile,
        }
    }

    /// Query row `row`'s padded statistic of `head`.
    fn stat_at(&self, head: Var, row: Expr) -> Vec<Expr> {
        let mut at = self.stat_lead(head);
        at.push(self.stat_row(row));
        at
    }

    /// Query block `m`'s `dQ` tiles of `head` (the dimensions before the 64-column tile's).
    fn acc_at(&self, head: Var, m: Expr) -> Vec<Expr> {
        let mut at = self.stat_lead(head);
        at.push(match self.starts {
            None => m,
            Some((_, block0)) => m + block0,
        });
        at
    }
}

/// The first `tile`-row block of sequence `batch`'s statistics and `dQ` tiles from its first
/// query row `q0`: `(q0 / pad + batch) · pad / tile` for the padding `pad` ([`stat_len`]) and
/// the `dQ` tile's rows `tile` ([`BackwardConfig::dq_rows`]).
fn first_block(
    k: &mut KernelBuilder,
    q0: Expr,
    batch: Var,
    (pad, tile): (u32, u32),
) -> Result<Var> {
    let blocks = q0 / pad + batch;
    match pad / tile {
        1 => k.let_("q_block0", blocks),
        n => k.let_("q_block0", blocks * n),
    }
}

/// Sequence `batch`'s first row and length in the offsets `cu` (`cu[batch]`, `cu[batch + 1]
/// − cu[batch]`; offsets are never negative), bound to `names`.
fn sequence(
    k: &mut KernelBuilder,
    cu: &Buffer<ty::S32>,
    batch: Var,
    [first, len]: [&str; 2],
) -> Result<(Var, Var)> {
    let at = |k: &mut KernelBuilder, i: Expr| -> Result<Reg<ty::U32>> {
        let r = k.load(cu, [i])?;
        r.retype::<ty::U32>().map_err(|e| k.error(e.to_string()))
    };
    let r0 = at(k, batch.into())?;
    let r1 = at(k, batch + 1)?;
    let start = k.bind(first, r0);
    let end = k.bind(&format!("{first}_end"), r1);
    Ok((start, k.let_(len, Expr::from(end) - start)?))
}

/// The f32 `dQ` accumulator `[batch, heads, q_blocks, d / 64, rows, 64]` (packed `[heads,
/// q_blocks, ..]`, `rows` [`Extents::tile`]): each block's rows, each 64 columns of them a
/// dense tile (16 KB of 64 rows)
/// (what one consumer warpgroup reduces into it at once with `cp.reduce.async.bulk`) whose
/// rows and columns lie as the staging lays them out ([`dq_at`]: the rows in
/// [`dq_row_order`], the columns swizzled), `q_blocks` the padded statistics' blocks
/// ([`stat_len`]).
fn dq_accum(k: &mut KernelBuilder, x: &Extents, d: u32) -> Result<Buffer<ty::F32>> {
    let blocks = k.symbol_with("q_blocks", ExtentFacts::NONE.at_least(1))?;
    let slab = BackwardConfig::SLAB;
    let mut shape = x.lead();
    shape.extend([
        x.heads.into(),
        blocks.into(),
        Expr::from(d / slab),
        Expr::from(x.tile),
        Expr::from(slab),
    ]);
    k.tensor::<ty::F32>("dq_accum", shape, TensorOpts::default().align(16))
}

/// The turn counters of the deterministic mode, `[batch, heads, q_blocks, d / 64]` u32
/// (packed `[heads, ..]`): one per tile of [`dq_accum`], the reductions into it so far
/// (declared after `dq_accum`, whose leading dimensions it shares).
fn dq_turns(k: &mut KernelBuilder, dq: &Buffer<ty::F32>) -> Result<Buffer<ty::U32>> {
    let shape = dq.shape();
    let lead = shape[..shape.len() - 2].to_vec();
    k.tensor::<ty::U32>("dq_turns", lead, TensorOpts::default())
}

/// The element of [`dq_accum`] of `head`'s query `row` of `seq`, column `col`: in its tile
/// (query block, 64 columns) the row [`dq_row_order`] gives it and the column [`dq_swizzled`]
/// moves it to, as the staging ([`reduce_dq`]) lays it out. A run of up to [`DQ_RUN`] columns
/// from a multiple of its length stays together (the swizzle moves 16-byte chunks), and the
/// index says so ([`dq_run_swizzled`]): such a run is one vector access.
fn dq_at(
    k: &mut KernelBuilder,
    cfg: &BackwardConfig,
    seq: &Seq,
    head: Var,
    row: Expr,
    col: Expr,
) -> Result<Vec<Expr>> {
    let (bm, slab) = (seq.tile, BackwardConfig::SLAB);
    let row = seq.stat_row(row);
    let slot = dq_slot(k, cfg, row.clone() % bm)?;
    let within = dq_run_swizzled(k, slot.clone(), col.clone())?;
    let mut at = seq.stat_lead(head);
    at.extend([row / bm, col / slab, slot, within]);
    Ok(at)
}

/// [`dq_swizzled`] of `(row, col % 64)` written so that what `col` is known to be a multiple of
/// (up to [`DQ_RUN`]) is known of the result too, and that it is below 64: the 16-byte chunk the
/// swizzle moves the column's chunk to (`dq_chunk`, below 16) times 4, plus the column's place
/// in its chunk, which the swizzle keeps. With it a run of [`DQ_RUN`] (or 2) columns from a
/// multiple of its length is one `st.global.v4.f32` (`.v2`) with no bounds check
/// ([`KernelBuilder::store_n`]'s plan); with [`dq_swizzled`]'s `(byte offset / 4) % 64` nothing
/// is known of the column, and a run is as many scalar accesses, each checked against the
/// tile's 64 columns.
fn dq_run_swizzled(k: &mut KernelBuilder, row: Expr, col: Expr) -> Result<Expr> {
    let slab = BackwardConfig::SLAB;
    let off = k.eval(row * (slab * 4) + (col.clone() % slab) * 4u32)?;
    let moved = smem::emit::emit_swizzle(k.isa(), SwizzleMode::B128, off)?;
    let at = k.bind("dq_swizzled", moved);
    let chunk = k.let_("dq_chunk", (Expr::from(at) / 16u32) % (slab / DQ_RUN))?;
    // The column's place in its chunk, `col % 4`, as `((col / g) % (4 / g)) · g` with `g` what
    // `col` is known to be a multiple of (1, 2 or 4): 0 for a run of 4 from a multiple of 4.
    let g = [DQ_RUN, 2, 1]
        .into_iter()
        .find(|&g| k.divisibility(&col) % i64::from(g) == 0)
        .unwrap_or(1);
    let place = match g {
        DQ_RUN => Expr::from(0u32),
        g => (col / g) % (DQ_RUN / g) * g,
    };
    Ok(Expr::from(chunk) * DQ_RUN + place)
}

/// The columns of a query row of `d` columns a lane of a warp takes in the preprocess and
/// convert kernels' accesses to [`dq_accum`], as `(first column, count)` runs: `w = min(d / 32,
/// 4)` columns a run, run `j` of lane `l` from column `32 · w · j + w · l`. Each access of the
/// warp then covers `32 · w` consecutive columns of the row (two 64-column tiles' rows of 256
/// bytes at `w = 4`), whole 32-byte sectors: with a lane's `d / 32` columns side by side instead
/// (at head dim 256 8, two runs of 4), each access of the warp would write half of every sector
/// of four tiles' rows, each sector reached twice (BENCHMARKS.md, session 19).
fn row_runs(d: u32, lane: Var) -> Vec<(Expr, usize)> {
    let w = (d / 32).min(DQ_RUN);
    (0..d / (32 * w))
        .map(|j| (lane * w + j * 32 * w, w as usize))
        .collect()
}

/// Where a `dQ` tile's query rows lie among its rows ([`dq_accum`], the staging
/// [`dq_staging`]), as the layout `query → row`: in order, or where `dQ` is transposed
/// ([`BackwardConfig::transposes_dq`]) each 8 queries' even ones first, query `a + 2b + 8c` in
/// row `4a + b + 8c`. One store of the transposed fragment holds a warp's queries
/// `q0 + 2 (lane % 4)` (the wgmma accumulator's columns, PTX ISA 9.7.15.5.1.1.2) and 8 columns:
/// in order their 256-byte rows take two of the 128-byte swizzle's chunk permutations (each
/// store 2-way bank conflicted), in this order four (none).
fn dq_row_order(k: &KernelBuilder, cfg: &BackwardConfig) -> Result<layouts::Layout> {
    use layouts::IntTuple as I;
    let bm = i64::from(cfg.dq_rows());
    let layout = match cfg.transposes_dq() {
        true => layouts::Layout::new(
            I::tuple([I::Int(2), I::Int(4), I::Int(bm / 8)]),
            I::tuple([I::Int(4), I::Int(1), I::Int(8)]),
        ),
        false => layouts::Layout::int(bm, 1),
    };
    layout.map_err(|e| k.error(e.to_string()))
}

/// The row of a `dQ` tile where its query `row` lies ([`dq_row_order`]).
fn dq_slot(k: &mut KernelBuilder, cfg: &BackwardConfig, row: Expr) -> Result<Expr> {
    if !cfg.transposes_dq() {
        return Ok(row);
    }
    let order = dq_row_order(k, cfg)?;
    let row = k.eval(row)?;
    let slot = crate::tile::variants::common::eval_layout(k.isa(), &order, row)?;
    Ok(Expr::from(k.bind("dq_slot", slot)))
}

/// The longest run of a row's columns of a `dq_accum` tile that stays together where
/// [`dq_swizzled`] moves it: 4 f32, one 16-byte chunk (a lane's run of [`row_runs`]).
const DQ_RUN: u32 = 4;

/// The column of a `dq_accum` tile (its rows of 64 f32) where element `(row, col)` of it (the
/// row [`dq_row_order`] gives a query) lies: the 128-byte swizzle (`SwizzleMode::B128`, the TMA and wgmma one,
/// PTX ISA 9.7.15.5.1.2) of its byte offset `row · 256 + col · 4`, which moves 16-byte chunks
/// within their 128-byte half row. The staging writes the tile so in shared memory (each warp's
/// stores then spread over the banks instead of 8 rows landing on the same 4) and the bulk
/// reduction copies it as it lies; the convert kernel and the `red` path read and add it so.
fn dq_swizzled(k: &mut KernelBuilder, row: Expr, col: Expr) -> Result<Expr> {
    let slab = BackwardConfig::SLAB;
    let off = k.eval(row * (slab * 4) + col * 4u32)?;
    let moved = smem::emit::emit_swizzle(k.isa(), SwizzleMode::B128, off)?;
    let at = k.bind("dq_swizzled", moved);
    Ok((Expr::from(at) / 4u32) % slab)
}

/// The row length of the f32 workspace `D` and `LSE · log2 e`, a multiple of a query block
/// (`pad`: [`BackwardConfig::block_m`], 64 or 128), so a TMA box of a query block never leaves
/// a sequence's rows and every row's stride is a multiple of 16 bytes (the tensor map's rule,
/// CUDA driver API `cuTensorMapEncodeTiled`): batched the query length rounded up to a block;
/// packed `(total_q / pad + batch) · pad`, sequence `b`'s rows from block `cu_seqlens_q[b] /
/// pad + b` on (FlashAttention-3's padding: each sequence's blocks end before the next one's
/// begin). The padding rows hold `D = 0` and `+inf` (probabilities 0). The `dQ` tiles
/// ([`dq_accum`]) have the same rows.
fn stat_len(k: &mut KernelBuilder, pad: u32) -> Result<Var> {
    let bm = u64::from(pad);
    k.symbol_with("stat_len", ExtentFacts::NONE.at_least(bm).multiple_of(bm))
}

/// Declares the extents (each at least 1; packed, at least two offsets).
fn extents(k: &mut KernelBuilder, cfg: &BackwardConfig) -> Result<Extents> {
    let one = ExtentFacts::NONE.at_least(1);
    if cfg.varlen {
        let offsets = k.symbol_with("offsets", ExtentFacts::NONE.at_least(2))?;
        return Ok(Extents {
            batch: offsets - 1,
            seqlen_q: k.symbol_with("total_q", one)?,
            heads: k.symbol_with("heads", one)?,
            offsets: Some(offsets),
            pad: cfg.block_m,
            tile: cfg.dq_rows(),
        });
    }
    Ok(Extents {
        batch: k.symbol_with("batch", one)?.into(),
        seqlen_q: k.symbol_with("seqlen_q", one)?,
        heads: k.symbol_with("heads", one)?,
        offsets: None,
        pad: cfg.block_m,
        tile: cfg.dq_rows(),
    })
}

/// A kernel of the backward at one element type.
type Body = fn(KernelBuilder, &BackwardConfig) -> Result<BuiltKernel>;

/// The kernel `cfg.name()` + `suffix`, once `cfg` is checked: `body` at `cfg`'s element type
/// (`[f16, bf16]`).
fn typed(
    target: Target,
    cfg: &BackwardConfig,
    suffix: &str,
    [f16, bf16]: [Body; 2],
) -> Result<BuiltKernel> {
    let k = KernelBuilder::new(&format!("{}{suffix}", cfg.name()), target);
    cfg.validate().map_err(|e| k.error(e.to_string()))?;
    match cfg.dtype {
        ptx_isa::ScalarType::F16 => f16(k, cfg),
        _ => bf16(k, cfg),
    }
}

/// The grid of the preprocess and convert kernels over `cover` query rows: CTAs of
/// [`BackwardConfig::ROW_WARPS`] warps on [`BackwardConfig::ROWS_PER_WARP`] rows each x heads x
/// sequences. Returns the CTA's sequence, its row block and head, and the thread's lane and warp.
fn row_grid(
    k: &mut KernelBuilder,
    x: &Extents,
    offs: Option<&Offsets>,
    cover: Expr,
) -> Result<(Seq, [Var; 2], [Var; 2])> {
    let warps = BackwardConfig::ROW_WARPS;
    let rows = warps * BackwardConfig::ROWS_PER_WARP;
    let [blk, h, b] = k.cta_id([Expr::ceil_div(cover, rows), x.heads.into(), x.batch.clone()])?;
    let seq = Seq::new(k, x, offs, b)?;
    let [lane, w] = k.thread_id([32, warps])?;
    Ok((seq, [blk, h], [lane, w]))
}

/// Query row `i` of those warp `w` of row block `blk` takes ([`row_grid`]), and whether it lies
/// inside the sequence: step `i`'s warps on consecutive rows `blk · rows + i · warps + w`.
fn warp_row(
    k: &mut KernelBuilder,
    [blk, w]: [Var; 2],
    seq: &Seq,
    i: u32,
) -> Result<(Var, ptx_isa::Pred)> {
    let (warps, steps) = (BackwardConfig::ROW_WARPS, BackwardConfig::ROWS_PER_WARP);
    let row = k.let_("row", blk * (warps * steps) + i * warps + w)?;
    let live = k.cmp(CmpOp::Lt, row, seq.seqlen_q)?;
    Ok((row, live))
}

/// The preprocess kernel for `cfg`: a warp per query row and head (each lane `d / 32`
/// columns), `D = Σ dO ∘ O` (f32, the warp's sum) and `lse_log2 = LSE · log2 e` (`+inf` where
/// LSE is `-inf`: the row saw no key, and `2^(s − inf) = 0`) into `[batch, heads, stat_len]`
/// (the padding rows `0` and `+inf`, `stat_len`), and the rows of the f32 `dq_accum` (runs of
/// `w = min(d / 32, 4)` columns, lane `l`'s run `j` from column `32 · w · j + w · l`: whole
/// sectors a store) and the turn counters (`dq_turns`) zeroed; a warp takes
/// [`BackwardConfig::ROWS_PER_WARP`] rows. Its parameters: `o`, `d_o`
/// (`[batch, seqlen_q, heads, d]`), `lse` (`[batch, heads, seqlen_q]`), `dd`, `lse_log2`,
/// `dq_accum`, `dq_turns`; packed ([`BackwardConfig::varlen`]) the tensors without the batch
/// and then `cu_seqlens_q` and `max_seqlen_q` (`Offsets`). The grid: the padded rows (packed
/// the longest sequence's) in CTAs of [`BackwardConfig::ROW_WARPS`] warps x heads x sequences.
pub fn build_preprocess(target: Target, cfg: &BackwardConfig) -> Result<BuiltKernel> {
    let body: [Body; 2] = [preprocess::<ty::F16>, preprocess::<ty::Bf16>];
    typed(target, cfg, "_preprocess", body)
}

fn preprocess<T: Elem>(mut k: KernelBuilder, cfg: &BackwardConfig) -> Result<BuiltKernel> {
    let x = extents(&mut k, cfg)?;
    // The rows of the accumulator's tiles, the statistics' padding.
    let (d, bm, pad) = (cfg.head_dim, cfg.dq_rows(), cfg.block_m);
    let per = d / 32;
    let q_shape = x.rows(x.seqlen_q, x.heads, d);
    let opts = TensorOpts::default().align(16);
    let o = k.tensor::<T>("o", q_shape.clone(), opts.clone())?;
    let d_o = k.tensor::<T>("d_o", q_shape.clone(), opts.clone())?;
    let padded = stat_len(&mut k, pad)?;
    let lse = k.tensor::<ty::F32>("lse", x.stats(x.seqlen_q), TensorOpts::default())?;
    let dd = k.tensor::<ty::F32>("dd", x.stats(padded), TensorOpts::default())?;
    let lse2 = k.tensor::<ty::F32>("lse_log2", x.stats(padded), TensorOpts::default())?;
    let dq = dq_accum(&mut k, &x, d)?;
    let turns = dq_turns(&mut k, &dq)?;
    let offs = offsets(&mut k, &x, false)?;
    // The rows covered: the padded statistics, or packed the longest sequence's blocks.
    let cover = match &offs {
        None => Expr::from(padded),
        Some(o) => Expr::ceil_div(o.longest, pad) * pad,
    };
    let (seq, [blk, h], [lane, w]) = row_grid(&mut k, &x, offs.as_ref(), cover)?;
    // The main kernel, a programmatic dependent ([`BackwardConfig::dependent`]), may be
    // scheduled once every CTA has started (PTX ISA 9.7.13.13): it loads K and V, then waits for
    // this grid to complete before it reads what this one writes.
    k.isa().griddepcontrol_launch_dependents()?;
    let region = k.let_("blocks_end", Expr::ceil_div(seq.seqlen_q, pad) * pad)?;
    let first = k.cmp(CmpOp::Eq, lane, 0u32)?;
    // The warp's rows, inside or past seqlen_q for all its lanes (the reduction is the warp's),
    // every row's O and dO loaded before the first sum uses them.
    let (mut live, mut loaded) = (Vec::new(), Vec::new());
    for i in 0..BackwardConfig::ROWS_PER_WARP {
        let (row, is_live) = warp_row(&mut k, [blk, w], &seq, i)?;
        k.if_(is_live, |k| {
            let mut at = seq.q_at(row.into(), h);
            at.push(lane * per);
            let xo = k.load_n(&o, at.clone(), per as usize, T::zero())?;
            let xd = k.load_n(&d_o, at, per as usize, T::zero())?;
            loaded.push((xo, xd));
            Ok(())
        })
        .end()?;
        live.push((row, is_live));
    }
    for &(row, _) in &live {
        let inside = k.cmp(CmpOp::Lt, row, region)?;
        let past = k.cmp(CmpOp::Ge, row, seq.seqlen_q)?;
        k.if_(inside, |k| {
            // Every row of the accumulator zeroed, the padding's too (the main kernel adds whole
            // query blocks into it).
            let zeros = k.regs::<ty::F32>(per.min(DQ_RUN) as usize);
            for &z in &zeros {
                k.mov(z, 0.0f32)?;
            }
            for (col, n) in row_runs(d, lane) {
                let at = dq_at(k, cfg, &seq, h, row.into(), col)?;
                k.store_n(&dq, at, &zeros[..n])?;
            }
            // A block's first row: its turn counters zeroed, a lane each.
            let block_first = k.cmp(CmpOp::Eq, row % bm, 0u32)?;
            let tiles = k.cmp(CmpOp::Lt, lane, cfg.head_dim / BackwardConfig::SLAB)?;
            let zero_turn = k.pred();
            k.and(zero_turn, block_first, tiles)?;
            k.if_(zero_turn, |k| {
                let mut at = seq.acc_at(h, row / bm);
                at.push(lane.into());
                k.store(&turns, at, 0u32)
            })
            .end()?;
            let pad_first = k.pred();
            k.and(pad_first, past, first)?;
            k.if_(pad_first, |k| {
                k.store(&lse2, seq.stat_at(h, row.into()), f32::INFINITY)?;
                k.store(&dd, seq.stat_at(h, row.into()), 0.0f32)
            })
            .end()
        })
        .end()?;
    }
    for (&(row, is_live), (xo, xd)) in live.iter().zip(&loaded) {
        k.if_(is_live, |k| {
            let acc = k.reg::<ty::F32>();
            k.mov(acc, 0.0f32)?;
            for (&a, &g) in xo.iter().zip(xd) {
                let (fa, fg) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
                k.cvt(fa, a)?;
                k.cvt(fg, g)?;
                k.fma(acc, fa, fg, acc)?;
            }
            let sum = k.reduce(ReduceOp::Sum, &[acc], ReduceScope::Warp)?;
            k.if_(first, |k| {
                let l = k.load(&lse, seq.lse_at(h, row.into()))?;
                let l2 = k.mul_of(l, LOG2_E)?;
                let empty = k.pred();
                k.setp::<ty::F32>(CmpOp::Eq, empty, l, f32::NEG_INFINITY)?;
                k.selp(l2, f32::INFINITY, l2, empty)?;
                k.store(&lse2, seq.stat_at(h, row.into()), l2)?;
                k.store(&dd, seq.stat_at(h, row.into()), sum)
            })
            .end()
        })
        .end()?;
    }
    k.finish()
}

/// The convert kernel for `cfg`: `dq = scale · dq_accum` in the input type, a warp per query
/// row and head, its lanes on the row's columns in the preprocess's runs. Its parameters:
/// `dq_accum` (f32) and `dq` (`[batch, seqlen_q, heads, d]`), `scale`; packed then `cu_seqlens_q` and `max_seqlen_q` (`Offsets`).
pub fn build_convert(target: Target, cfg: &BackwardConfig) -> Result<BuiltKernel> {
    let body: [Body; 2] = [convert::<ty::F16>, convert::<ty::Bf16>];
    typed(target, cfg, "_convert", body)
}

fn convert<T: Elem>(mut k: KernelBuilder, cfg: &BackwardConfig) -> Result<BuiltKernel> {
    let x = extents(&mut k, cfg)?;
    let d = cfg.head_dim;
    let q_shape = x.rows(x.seqlen_q, x.heads, d);
    let opts = TensorOpts::default().align(16);
    let dq_accum = dq_accum(&mut k, &x, d)?;
    let dq = k.tensor::<T>("dq", q_shape, opts)?;
    let scale = k.scalar::<ty::F32>("scale")?;
    let offs = offsets(&mut k, &x, false)?;
    let cover = offs.as_ref().map_or(x.seqlen_q, |o| o.longest);
    let (seq, [blk, h], [lane, w]) = row_grid(&mut k, &x, offs.as_ref(), cover.into())?;
    // A programmatic dependent of the main kernel ([`BackwardConfig::dependent`]): the
    // accumulator is read once it has completed and its writes are visible (PTX ISA 9.7.13.13;
    // at once for an ordinary launch).
    k.isa().griddepcontrol_wait()?;
    // The warp's rows as the preprocess takes them, every row's accumulator loaded before the
    // first is converted.
    let (mut live, mut loaded) = (Vec::new(), Vec::new());
    for i in 0..BackwardConfig::ROWS_PER_WARP {
        let (row, is_live) = warp_row(&mut k, [blk, w], &seq, i)?;
        k.if_(is_live, |k| {
            let mut acc = Vec::new();
            for (col, n) in row_runs(d, lane) {
                let from = dq_at(k, cfg, &seq, h, row.into(), col)?;
                acc.push(k.load_n(&dq_accum, from, n, 0.0f32)?);
            }
            loaded.push(acc);
            Ok(())
        })
        .end()?;
        live.push((row, is_live));
    }
    for (&(row, is_live), acc) in live.iter().zip(&loaded) {
        k.if_(is_live, |k| {
            for ((col, _), run) in row_runs(d, lane).into_iter().zip(acc) {
                let mut at = seq.q_at(row.into(), h);
                at.push(col);
                let out = k.regs::<T>(run.len());
                for (&a, &o) in run.iter().zip(&out) {
                    let s = k.mul_of(a, scale)?;
                    k.cvt(o, s)?;
                }
                k.store_n(&dq, at, &out)?;
            }
            Ok(())
        })
        .end()?;
    }
    k.finish()
}

/// The main kernel's parameters.
struct Args<T: Elem> {
    /// What the producer loads by TMA: K and V once, each trip's Q and dO, and its `LSE ·
    /// log2 e` and D.
    kv: [TmaTensor<T>; 2],
    q_do: [TmaTensor<T>; 2],
    stats: [TmaTensor<ty::F32>; 2],
    dq: Buffer<ty::F32>,
    turns: Buffer<ty::U32>,
    /// dK and dV, written.
    grads: [Buffer<T>; 2],
    scale: Reg<ty::F32>,
    x: Extents,
    /// K's rows: `seqlen_k`, or `total_k` packed.
    keys: Var,
    kv_heads: Var,
    offs: Option<Offsets>,
}

/// What every role knows of its CTA's work: the key block, KV head and sequence (its query
/// rows, key length and, packed, first key row), the query heads a KV head serves, and the
/// query blocks `m_first..m_first + m_count` it visits for each of them (`trips` in all).
struct Work {
    n_block: Var,
    kv_head: Var,
    seq: Seq,
    seqlen_k: Var,
    k0: Option<Var>,
    group: Var,
    m_first: Var,
    m_count: Var,
    trips: Var,
}

impl Work {
    /// Trip `t`'s query head and query block.
    fn trip(&self, k: &mut KernelBuilder, t: Var) -> Result<(Var, Var)> {
        let head = k.let_("q_head", self.kv_head * self.group + t / self.m_count)?;
        let m = k.let_("m_block", t % self.m_count + self.m_first)?;
        Ok((head, m))
    }

    /// The sequence's query and key lengths; packed, read again from the offsets (where
    /// holding them in registers through a loop costs more than the loads).
    fn lengths(&self, k: &mut KernelBuilder, offs: Option<&Offsets>) -> Result<(Var, Var)> {
        let Some(o) = offs else {
            return Ok((self.seq.seqlen_q, self.seqlen_k));
        };
        let (_, sq) = sequence(k, &o.cu_q, self.seq.batch, ["q_first", "seqlen_q"])?;
        let sk = match &o.cu_k {
            Some(cu_k) => sequence(k, cu_k, self.seq.batch, ["k_first", "seqlen_k"])?.1,
            None => self.seqlen_k,
        };
        Ok((sq, sk))
    }

    /// Key row `row` of the sequence in K, V, dK and dV (without the column): `[batch, row,
    /// kv_head]`, or packed `[k0 + row, kv_head]`.
    fn kv_at(&self, row: Expr) -> Vec<Expr> {
        match self.k0 {
            None => vec![self.seq.batch.into(), row, self.kv_head.into()],
            Some(k0) => vec![row + k0, self.kv_head.into()],
        }
    }
}

/// What the producer and the consumers share.
struct Parts<'a, T: Elem> {
    cfg: &'a BackwardConfig,
    args: &'a Args<T>,
    work: &'a Work,
    ring: &'a Ring,
    k_s: Reg<ty::U32>,
    v_s: Reg<ty::U32>,
    ds_s: Reg<ty::U32>,
    /// With [`BackwardConfig::dq_bulk`]: the consumers' `dQ` stages (16 KB each).
    dq_stage: Option<Reg<ty::U32>>,
    kv_full: NamedBarrier,
}

/// Builds the main backward kernel for `cfg` (sm_90a: wgmma, TMA, setmaxnreg). Its
/// parameters: `q`, `k`, `v`, `d_o` (TMA tensors `[batch, seq, heads, d]`, boxes of
/// `[1, rows, 1, 64]` with the 128-byte swizzle), `lse_log2` and `dd` (TMA tensors
/// `[batch, heads, stat_len]` f32, boxes of 64, from [`build_preprocess`]), `dq_accum` and
/// `dq_turns` (the deterministic mode's turn counters, zeroed by [`build_preprocess`])
/// (`[batch, seqlen_q, heads, d]` f32, added into), `dk` and `dv` (`[batch, seqlen_k, kv_heads,
/// d]`, written) and `scale`; packed ([`BackwardConfig::varlen`]) the tensors without the
/// batch, then `cu_seqlens_q`, `cu_seqlens_k` and `max_seqlen_k` (`Offsets`). The grid:
/// `ceil(seqlen_k / block_n)` ([`BackwardConfig::block_n`]) (packed the longest key sequence's) x `kv_heads` x `batch` CTAs,
/// with the causal mask numbered longest first ([`BackwardConfig::longest_first`]).
pub fn build_main(target: Target, cfg: &BackwardConfig) -> Result<BuiltKernel> {
    let body: [Body; 2] = [main_typed::<ty::F16>, main_typed::<ty::Bf16>];
    typed(target, cfg, "", body)
}

fn main_typed<T: Elem>(mut k: KernelBuilder, cfg: &BackwardConfig) -> Result<BuiltKernel> {
    let name = cfg.name();
    let args = declare::<T>(&mut k, cfg)?;
    let bn = cfg.block_n();
    let longest = args.offs.as_ref().map_or(args.keys, |o| o.longest);
    let blocks = Expr::ceil_div(longest, bn);
    let ids = k.cta_id([blocks.clone(), args.kv_heads.into(), args.x.batch.clone()])?;
    let ids = match cfg.longest_first() {
        true => longest_first(&mut k, &args, ids, blocks)?,
        false => ids,
    };
    let work = work(&mut k, cfg, &args, ids)?;
    let roles = BackwardConfig::ROLES;
    let tid = roles.declare(&mut k)?;

    // Shared memory: K and V (d / 64 slabs of 128 rows x 128 bytes each), the ring of query
    // blocks, two dSᵀ buffers, K and V's barrier.
    let k_s = k.pool_bytes("k", cfg.kv_bytes(), 1024)?;
    let v_s = k.pool_bytes("v", cfg.kv_bytes(), 1024)?;
    let ds_s = k.pool_bytes("ds", cfg.ds_buffers() * cfg.ds_bytes(), 1024)?;
    let dq_stage = match cfg.bulk_dq() {
        true => Some(k.pool_bytes("dq_stage", 2 * cfg.dq_stage_bytes(), 1024)?),
        false => None,
    };
    let spec = |name: &str, bytes: u32, align: u32| TileSpec {
        name: name.to_string(),
        bytes,
        align,
    };
    let tiles = [
        spec("q", cfg.q_bytes(), 1024),
        spec("d_o", cfg.q_bytes(), 1024),
        spec("lse", cfg.row_stat_bytes(), 128),
        spec("dd", cfg.row_stat_bytes(), 128),
    ];
    // full: the producer's arrive.expect_tx; empty: both consumer warpgroups' leaders; K and
    // V's barrier.
    let (pipe, base) = k.pool_pipeline("qdo", cfg.stages, &tiles, 1, 2)?;
    let (sync, ring, kv_full) =
        ring_and_once(&mut k, &name, tid, ("qdo", pipe, base, 2), "kv_full")?;

    let parts = Parts {
        cfg,
        args: &args,
        work: &work,
        ring: &ring,
        k_s,
        v_s,
        ds_s,
        dq_stage,
        kv_full,
    };
    let run = |k: &mut KernelBuilder| {
        roles
            .run_synced(
                k,
                tid,
                sync,
                |k, sync| producer(k, &parts, sync, tid),
                |k, sync, me| consumer(k, &parts, sync, me),
            )
            .map(|_| ())
    };
    match work.k0 {
        Some(_) => {
            // The grid covers the longest key sequence: a key block past this one's end has no
            // work.
            let live = k.cmp(CmpOp::Lt, work.n_block * bn, work.seqlen_k)?;
            k.comment("packed sequences: only key blocks inside this sequence");
            k.if_(live, run).end()?;
        }
        None => run(&mut k)?,
    }
    k.finish()
}

/// The CTA's `[key block, KV head, sequence]` longest first
/// ([`BackwardConfig::longest_first`]): its linear index in the grid (`%ctaid.x` fastest, the
/// order CTAs are launched in) taken through [`banded`] over the (KV head, sequence) pairs and
/// the `blocks` key blocks, bands of [`BackwardConfig::BAND_PAIRS`] pairs, key blocks in order
/// within a band. A bijection of the grid onto itself, so each CTA still has one key block of
/// one pair; a key block's CTA still starts after the previous key block's of its pair (the
/// deterministic mode's turns wait on it).
fn longest_first<T: Elem>(
    k: &mut KernelBuilder,
    args: &Args<T>,
    [x, y, z]: [Var; 3],
    blocks: Expr,
) -> Result<[Var; 3]> {
    let kv_heads = args.kv_heads;
    let linear = Expr::from(x) + blocks.clone() * (Expr::from(y) + Expr::from(kv_heads) * z);
    let t = k.let_("cta_linear", linear)?;
    let pairs = k.let_("pairs", Expr::from(kv_heads) * args.x.batch.clone())?;
    let band = BackwardConfig::BAND_PAIRS;
    let per_band = k.let_("band_ctas", blocks * band)?;
    let (pair, n_block) = banded(k, t, pairs, per_band, Band::Rows(band))?;
    Ok([
        n_block,
        k.let_("kv_head", pair % kv_heads)?,
        k.let_("batch", pair / kv_heads)?,
    ])
}

/// The main kernel's parameters (see [`build_main`]).
fn declare<T: Elem>(k: &mut KernelBuilder, cfg: &BackwardConfig) -> Result<Args<T>> {
    let x = extents(k, cfg)?;
    let one = ExtentFacts::NONE.at_least(1);
    let keys = k.symbol_with(if cfg.varlen { "total_k" } else { "seqlen_k" }, one)?;
    let kv_heads = k.symbol_with("kv_heads", one)?;
    let d = cfg.head_dim;
    let (q_shape, kv_shape) = (x.rows(x.seqlen_q, x.heads, d), x.rows(keys, kv_heads, d));
    let (bm, bn) = (cfg.block_m, cfg.block_n());
    let q = k.tma_tensor::<T>("q", q_shape.clone(), x.slab_box(bm))?;
    let kt = k.tma_tensor::<T>("k", kv_shape.clone(), x.slab_box(bn))?;
    let v = k.tma_tensor::<T>("v", kv_shape.clone(), x.slab_box(bn))?;
    let d_o = k.tma_tensor::<T>("d_o", q_shape.clone(), x.slab_box(bm))?;
    let padded = stat_len(k, cfg.block_m)?;
    let lse2 = k.tma_tensor::<ty::F32>("lse_log2", x.stats(padded), x.stat_box())?;
    let dd = k.tma_tensor::<ty::F32>("dd", x.stats(padded), x.stat_box())?;
    let opts = TensorOpts::default().align(16);
    let dq = dq_accum(k, &x, d)?;
    let turns = dq_turns(k, &dq)?;
    let dk = k.tensor::<T>("dk", kv_shape.clone(), opts.clone())?;
    let dv = k.tensor::<T>("dv", kv_shape, opts)?;
    let scale = k.scalar::<ty::F32>("scale")?;
    let offs = offsets(k, &x, true)?;
    Ok(Args {
        kv: [kt, v],
        q_do: [q, d_o],
        stats: [lse2, dd],
        dq,
        turns,
        grads: [dk, dv],
        scale,
        x,
        keys,
        kv_heads,
        offs,
    })
}

/// The CTA's work: its sequence, query heads (`heads / kv_heads` from `kv_head · group`) and
/// query blocks: all of them, or with the causal mask those from the first whose last row sees
/// the block's first key (`row + seqlen_k − seqlen_q ≥ n · block_n`).
fn work<T: Elem>(
    k: &mut KernelBuilder,
    cfg: &BackwardConfig,
    args: &Args<T>,
    [n_block, kv_head, batch]: [Var; 3],
) -> Result<Work> {
    let (bm, bn) = (cfg.block_m, cfg.block_n());
    let seq = Seq::new(k, &args.x, args.offs.as_ref(), batch)?;
    let (k0, sk) = match args.offs.as_ref().and_then(|o| o.cu_k.as_ref()) {
        Some(cu_k) => {
            let (k0, sk) = sequence(k, cu_k, batch, ["k_first", "seqlen_k"])?;
            (Some(k0), sk)
        }
        None => (None, args.keys),
    };
    let sq = seq.seqlen_q;
    let group = k.let_("group", args.x.heads / args.kv_heads)?;
    let m_end = k.let_("m_end", Expr::ceil_div(sq, bm))?;
    let m_first = if cfg.causal {
        // max(0, n · block_n + sq − sk) / block_m, signed.
        let hi = s32(k, n_block * bn + sq)?;
        let lo = s32(k, sk.into())?;
        let first = k.reg::<ty::S32>();
        k.sub(first, hi, lo)?;
        k.max(first, first, 0i32)?;
        match bm.is_power_of_two() {
            true => k.shr(first, first, bm.trailing_zeros())?,
            false => k.div(first, first, bm as i32)?,
        }
        let first = first
            .retype::<ty::U32>()
            .map_err(|e| k.error(e.to_string()))?;
        k.bind("m_first", first)
    } else {
        k.let_("m_first", Expr::from(0u32))?
    };
    // The first block is below the end whenever the key block exists (n · block_n < sk).
    let m_count = k.let_("m_count", Expr::from(m_end) - m_first)?;
    let trips = k.let_("trips", Expr::from(m_count) * group)?;
    Ok(Work {
        n_block,
        kv_head,
        seq,
        seqlen_k: sk,
        k0,
        group,
        m_first,
        m_count,
        trips,
    })
}

/// The producer warpgroup: one thread loads the CTA's K and V once, then each trip's Q, dO,
/// LSE and D into the next free stage of the ring.
fn producer<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    sync: &mut BarrierSync,
    tid: Var,
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (bm, bn, d) = (cfg.block_m, cfg.block_n(), cfg.head_dim);
    let leader = k.cmp(CmpOp::Eq, tid, 0)?;
    k.if_(leader, |k| {
        let kv = p.kv_full;
        let arrival = Arrival::ExpectTx(2 * cfg.kv_bytes());
        sync.arrive(k.isa(), kv, arrival, ArriveSite::Loop)?;
        let at = w.kv_at(w.n_block * bn);
        for (t, dst) in args.kv.iter().zip([p.k_s, p.v_s]) {
            load_slabs(k, sync, kv, t, dst, bn, d, &at)?;
        }
        // K and V are the caller's; the statistics are the preprocess's, read once it has
        // completed (a programmatic dependent, [`BackwardConfig::dependent`], PTX ISA 9.7.13.13).
        k.isa().griddepcontrol_wait()?;
        let cur = RingCursor::new(k.isa(), cfg.stages, Phase::Parity)?;
        k.for_range(0, w.trips, |k, t| {
            let (head, m) = w.trip(k, t)?;
            let full = p.ring.acquire(k, sync, &cur)?;
            p.ring.commit(k, sync, full, p.ring.tx_bytes())?;
            let [q_s, do_s, lse_s, dd_s] = p.ring.tiles(k, cur.stage())?;
            let at = w.seq.q_at(m * bm, head);
            for (t, dst) in args.q_do.iter().zip([q_s, do_s]) {
                load_slabs(k, sync, full, t, dst, bm, d, &at)?;
            }
            let stat = w.seq.stat_at(head, m * bm);
            for (t, dst) in args.stats.iter().zip([lse_s, dd_s]) {
                let tile = TileRef::shared_row_major(ptx_isa::ScalarType::F32, 1, bm, dst, 128);
                let src = k.tma_box_at(t, &stat)?;
                k.copy_async(
                    &tile,
                    &src,
                    Some((&mut *sync, full)),
                    None,
                    ExecScope::Thread,
                )?;
            }
            cur.advance(k.isa())?;
            Ok(())
        })?;
        // This CTA's last loads are issued: the convert kernel, a programmatic dependent, may
        // be scheduled once every CTA has come this far or ended (the first thread of a CTA to
        // issue `launch_dependents` counts, PTX ISA 9.7.13.13); it waits for this grid to
        // complete before it reads the accumulator.
        k.isa().griddepcontrol_launch_dependents()?;
        Ok(())
    })
    .end()
}

/// A consumer warpgroup's registers: the `dV` and `dK` accumulators (64 keys x its
/// [`BackwardConfig::wg_cols`] columns), the transposed scores and their gradient (64 keys x
/// its queries: 64, or 32 where the warpgroups split the head dim), `dQ`'s (64 queries x 64
/// columns, or 128 split), and `Pᵀ`, `dSᵀ` in 16-bit pairs (as casts' targets and, unsplit, as
/// A operands).
struct Regs {
    dv: Buffer<ty::F32>,
    dk: Buffer<ty::F32>,
    s: Buffer<ty::F32>,
    dp: Buffer<ty::F32>,
    dq: Buffer<ty::F32>,
    p_cast: TileRef,
    p_a: TileRef,
    ds_cast: TileRef,
    ds_a: TileRef,
}

/// [`Regs`] for `cfg`, declared, the gradients zeroed.
fn regs(k: &mut KernelBuilder, cfg: &BackwardConfig, dt: ptx_isa::ScalarType) -> Result<Regs> {
    let queries = wg_queries(cfg);
    let frag = |k: &KernelBuilder, n: u32| {
        accumulator(i64::from(n), dt).map_err(|e| k.error(e.to_string()))
    };
    let s_frag = frag(k, queries)?;
    let dv = k.alloc_fragment::<ty::F32>("dv", frag(k, cfg.wg_cols())?)?;
    let dk = k.alloc_fragment::<ty::F32>("dk", frag(k, cfg.wg_cols())?)?;
    let s = k.alloc_fragment::<ty::F32>("st", s_frag.clone())?;
    let dp = k.alloc_fragment::<ty::F32>("dpt", s_frag.clone())?;
    // dQ's columns (64 queries each), or transposed the query block's queries (its 64 columns
    // each).
    let dq_frag = match cfg.transposes_dq() {
        true => frag(k, cfg.block_m)?,
        false => frag(k, cfg.dq_tiles() * BackwardConfig::SLAB)?,
    };
    let dq = k.alloc_fragment::<ty::F32>("dq", dq_frag)?;
    let a_frag = register_a_k(dt, i64::from(queries)).map_err(|e| k.error(e.to_string()))?;
    let pairs = |k: &mut KernelBuilder| -> (TileRef, TileRef) {
        // 16-bit pairs: one register class for bf16 and f16; the accumulator's order is the
        // register-A fragment's (PTX ISA 9.7.15.5.1.1.1).
        let r: Vec<RegRef> = k
            .regs::<ty::Bf16x2>((queries / 4) as usize)
            .into_iter()
            .map(|r| r.as_ref())
            .collect();
        (
            TileRef::registers(dt, s_frag.clone(), r.clone()),
            TileRef::registers(dt, a_frag.clone(), r),
        )
    };
    let (p_cast, p_a) = pairs(k);
    let (ds_cast, ds_a) = pairs(k);
    k.fill(&dv, Imm::f32(0.0), ExecScope::Warpgroup)?;
    k.fill(&dk, Imm::f32(0.0), ExecScope::Warpgroup)?;
    Ok(Regs {
        dv,
        dk,
        s,
        dp,
        dq,
        p_cast,
        p_a,
        ds_cast,
        ds_a,
    })
}

/// The queries of a query block each consumer warpgroup's `Sᵀ` and `dPᵀ` cover: all
/// ([`BackwardConfig::block_m`]), or where the warpgroups split the head dim its 32 of 64.
fn wg_queries(cfg: &BackwardConfig) -> u32 {
    match cfg.splits_head_dim() {
        true => cfg.block_m / 2,
        false => cfg.block_m,
    }
}

/// Which of a query block's queries a thread's `Sᵀ` values are: the thread's first column
/// `c0` and each value's column offset from it, with the distinct offsets.
struct Columns {
    c0: Expr,
    of: Vec<u32>,
    distinct: Vec<u32>,
    /// The query block's rows ([`BackwardConfig::block_m`]): its statistics' length.
    block_m: u32,
}

impl Columns {
    /// The columns of `s`'s fragment for thread `lt`, `first` the fragment's first query in the
    /// block of `block_m` rows.
    fn new(
        k: &mut KernelBuilder,
        s: &Buffer<ty::F32>,
        lt: Var,
        (first, block_m): (Expr, u32),
    ) -> Result<Columns> {
        let (_, c0) = k.fragment_origin(s, lt)?;
        let Some(tv) = s.fragment().cloned() else {
            return Err(k.error("Sᵀ is a register fragment"));
        };
        let (_, base_c) = tv.coord(0, 0).map_err(|e| k.error(e.to_string()))?;
        let of: Vec<u32> = (0..tv.values())
            .map(|v| tv.coord(0, v).map(|(_, c)| (c - base_c) as u32))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| k.error(e.to_string()))?;
        let mut distinct = of.clone();
        distinct.sort_unstable();
        distinct.dedup();
        Ok(Columns {
            c0: c0 + first,
            of,
            distinct,
            block_m,
        })
    }

    /// `f` on each distinct column's value of the stage's row statistic at `stat`
    /// ([`Columns::block_m`] f32) and the indices of the values in that column.
    fn each(
        &self,
        k: &mut KernelBuilder,
        (name, stat): (&str, Reg<ty::U32>),
        mut f: impl FnMut(&mut KernelBuilder, Reg<ty::F32>, &[usize]) -> Result<()>,
    ) -> Result<()> {
        let view = k.shared_view::<ty::F32>(name, stat, &[self.block_m], 128)?;
        for &c in &self.distinct {
            let x = k.load(&view, [self.c0.clone() + c])?;
            let at: Vec<usize> = (0..self.of.len()).filter(|&v| self.of[v] == c).collect();
            f(k, x, &at)?;
        }
        Ok(())
    }

    /// `Pᵀ = 2^(Sᵀ · scale · log2 e − LSE · log2 e)` in place, each column's `LSE · log2 e`
    /// read from the stage's `lse_s` as it goes.
    fn probabilities(
        &self,
        k: &mut KernelBuilder,
        s: &[Reg<ty::F32>],
        lse_s: Reg<ty::U32>,
        scale_log2: Reg<ty::F32>,
    ) -> Result<()> {
        self.each(k, ("lse_s", lse_s), |k, neg_lse, at| {
            k.neg(neg_lse, neg_lse)?;
            for &v in at {
                k.fma(s[v], s[v], scale_log2, neg_lse)?;
                k.ex2(s[v], s[v])?;
            }
            Ok(())
        })
    }

    /// `dSᵀ = Pᵀ ∘ (dPᵀ − D)` in `dp`, each column's D read from the stage's `dd_s`.
    fn score_grads(
        &self,
        k: &mut KernelBuilder,
        dp: &[Reg<ty::F32>],
        p: &[Reg<ty::F32>],
        dd_s: Reg<ty::U32>,
    ) -> Result<()> {
        self.each(k, ("dd_s", dd_s), |k, dd, at| {
            for &v in at {
                k.sub(dp[v], dp[v], dd)?;
                k.mul(dp[v], dp[v], p[v])?;
            }
            Ok(())
        })
    }
}

/// The shared tiles one trip of a consumer warpgroup reads: the ring stage's Q, dO, LSE and D,
/// and the `dSᵀ` buffers' base.
struct Trip {
    t: Var,
    head: Var,
    m: Var,
    q_s: Reg<ty::U32>,
    do_s: Reg<ty::U32>,
    lse_s: Reg<ty::U32>,
    dd_s: Reg<ty::U32>,
}

/// What a consumer warpgroup holds through its loop.
struct Consumer {
    cw: Var,
    cw_r: Reg<ty::U32>,
    lt: Var,
    leader: ptx_isa::Pred,
    key0: Var,
    scale_log2: Reg<ty::F32>,
    k_tile: TileRef,
    v_tile: TileRef,
    k_for_dq: TileRef,
    cols: Columns,
    dq_stage: Option<Reg<ty::U32>>,
}

/// A consumer warpgroup: keys `64 · index ..` of the CTA's block (where the warpgroups split
/// the head dim, the block's 64 keys and columns `128 · index ..`). Each trip keeps the tensor
/// cores fed across its elementwise steps (FlashAttention-3's order, [`keyed_trip`],
/// [`split_trip`]). Each wgmma's accumulator is read in the trip that issued it (ptxas
/// serializes a wgmma whose accumulator is read across the loop's back edge, C7514). A stage
/// is released a trip late, once the `dK` that reads its Q is done. Then `dK · scale` and `dV`
/// stored.
fn consumer<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    sync: &mut BarrierSync,
    me: ConsumerId,
) -> Result<()> {
    let (cfg, args, w) = (p.cfg, p.args, p.work);
    let (bn, d, slab) = (cfg.block_n(), cfg.head_dim, BackwardConfig::SLAB);
    let dt = T::DTYPE;
    let (lt, cw) = (me.thread, me.index);
    let split = cfg.splits_head_dim();
    // Launched as a programmatic dependent of the preprocess
    // ([`BackwardConfig::dependent`]): its D, `LSE · log2 e`, zeroed `dQ` accumulator and turn
    // counters are read or added into once it has completed and its writes are visible (PTX ISA
    // 9.7.13.13; at once for an ordinary launch).
    k.isa().griddepcontrol_wait()?;
    let leader = k.cmp(CmpOp::Eq, lt, 0)?;
    let scale_log2 = k.reg::<ty::F32>();
    k.mul(scale_log2, args.scale, LOG2_E)?;
    let r = regs(k, cfg, dt)?;
    // This warpgroup's 64 rows of K's and V's slabs (split, the CTA's 64, both warpgroups').
    let cw_r = k.eval(cw)?;
    let (k_wg, v_wg) = match split {
        true => (p.k_s, p.v_s),
        false => {
            let rows_off = 64 * slab * 2;
            let (k_wg, v_wg) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
            k.mad_lo(k_wg, cw_r, rows_off, p.k_s)?;
            k.mad_lo(v_wg, cw_r, rows_off, p.v_s)?;
            (k_wg, v_wg)
        }
    };
    let k_tile = TileRef::shared_slabs(dt, [64, d], bn, k_wg, 1024, SwizzleMode::B128);
    let v_tile = TileRef::shared_slabs(dt, [64, d], bn, v_wg, 1024, SwizzleMode::B128);
    // dQ's B, read MN-major: at d128 this warpgroup's 64 columns of K (slab `index`) over
    // all 128 keys; at d256 its 128 (slabs `2 · index` and the next) over the 64; at d64 all
    // columns over its own 64 keys (its partial sum of dQ), or with 128-query blocks over all
    // 128 (its 64 queries' dQ).
    let k_for_dq = if cfg.splits_keys() {
        k_tile.transposed()
    } else if cfg.wide() {
        TileRef::shared_slabs(dt, [bn, d], bn, p.k_s, 1024, SwizzleMode::B128).transposed()
    } else {
        let cols = cfg.dq_tiles() * slab;
        let k_cols = k.reg::<ty::U32>();
        k.mad_lo(k_cols, cw_r, bn * cols * 2, p.k_s)?;
        TileRef::shared_slabs(dt, [bn, cols], bn, k_cols, 1024, SwizzleMode::B128).transposed()
    }
    .ok_or_else(|| k.error("K's slab has no layout"))?;
    // The first key of this warpgroup (in the sequence).
    let key0 = match split {
        true => k.let_("key0", w.n_block * bn)?,
        false => k.let_("key0", w.n_block * bn + cw * 64)?,
    };
    sync.wait(k.isa(), p.kv_full.at, None, p.kv_full.addr, 0u32)?;
    let cur = RingCursor::new(k.isa(), cfg.stages, Phase::Parity)?;
    // With the bulk reduction of dQ, this warpgroup's stage.
    let dq_stage = match p.dq_stage {
        Some(all) => {
            let at = k.reg::<ty::U32>();
            k.mad_lo(at, cw_r, cfg.dq_stage_bytes(), all)?;
            Some(at)
        }
        None => None,
    };
    // Split, this warpgroup's queries are the block's `32 · index ..`.
    let first_query = match split {
        true => Expr::from(cw) * wg_queries(cfg),
        false => Expr::from(0u32),
    };
    let cols = Columns::new(k, &r.s, lt, (first_query, cfg.block_m))?;
    let c = Consumer {
        cw,
        cw_r,
        lt,
        leader,
        key0,
        scale_log2,
        k_tile,
        v_tile,
        k_for_dq,
        cols,
        dq_stage,
    };
    // A stage is released a trip late: its Q is read by the trip's dK, which runs on past the
    // trip's end (released at the next trip's start, or after the loop for the last); or by
    // the trip itself ([`BackwardConfig::releases_in_trip`]).
    let rel = RingCursor::new(k.isa(), cfg.stages, Phase::Parity)?;
    let in_trip = cfg.releases_in_trip();
    let ahead = cfg.queues_scores_ahead();
    if ahead {
        // The first trip's Sᵀ, waited for here: the later trips' are issued by the trip before
        // ([`BackwardConfig::scores_ahead`]).
        p.ring.wait(k, sync, &cur)?;
        let q_s = p.ring.first_tile(k, cur.stage())?;
        scores(k, p, (&c, &r), q_s)?;
        k.wgmma_wait_group(0)?;
    }
    k.for_range(0, w.trips, |k, t| {
        let (head, m) = w.trip(k, t)?;
        // The last trip's dK done (it ran under that trip's dQ reduction), so that trip's
        // stage (its Q) is released and dSᵀ's registers are free before Sᵀ's and dPᵀ's are
        // taken: with dK still in flight beside them ptxas serializes the wgmmas for want of
        // registers (C7512). With the scores ahead the trip before waited for it (and for this
        // trip's Sᵀ, whose stage it waited for).
        if !ahead {
            k.wgmma_wait_group(0)?;
        }
        if !in_trip {
            let later = k.cmp(CmpOp::Gt, t, 0u32)?;
            k.if_(later, |k| {
                p.ring.release_next(k, sync, &rel, c.leader, false)
            })
            .end()?;
        }
        if !ahead {
            p.ring.wait(k, sync, &cur)?;
        }
        let [q_s, do_s, lse_s, dd_s] = p.ring.tiles(k, cur.stage())?;
        let trip = Trip {
            t,
            head,
            m,
            q_s,
            do_s,
            lse_s,
            dd_s,
        };
        let stage = cur.stage();
        let mut release = |k: &mut KernelBuilder| p.ring.release(k, sync, stage, c.leader, false);
        match split {
            true => split_trip(k, p, (&c, &r, &trip), in_trip.then_some(&mut release))?,
            false => keyed_trip(k, p, (&c, &r, &trip), ahead.then_some((sync, &cur)))?,
        }
        // With the scores ahead the trip moved the cursor on to the next trip's stage.
        if !ahead {
            cur.advance(k.isa())?;
        }
        Ok(())
    })?;
    // The last trip's dK done and its stage released.
    k.wgmma_wait_group(0)?;
    if !in_trip {
        p.ring.release_next(k, sync, &rel, leader, true)?;
    }
    if dq_stage.is_some() {
        // The reductions complete (not only read their stage) before the CTA ends.
        k.if_(leader, |k| Ok(k.cp_async_bulk_wait_group(0, false)?))
            .end()?;
    }
    epilogue(k, p, &r, key0, cw)
}

/// One trip of a warpgroup that owns its 64 keys (head dims 64 and 128): `Sᵀ = K·Qᵀ` and
/// `dPᵀ = V·dOᵀ` issued beside the last trip's `dK`; `Pᵀ` once `Sᵀ` is done and `dV += Pᵀ·dO`
/// queued behind `dPᵀ`; `dSᵀ` once `dPᵀ` is, into its half of the trip's shared buffer, and
/// the barrier, while `dV` runs; then `dQ = dS·K` (over both halves, its 64 of dQ's columns; at
/// d64 over its own half, or with 128-query blocks its 64 queries over both halves) and `dK +=
/// dSᵀ·Q`, `dQ` into `dq_accum` ([`reduce_dq`] or [`add_dq`]) while `dK` runs on to the next
/// trip's start. With 128- or 80-query blocks `dV` is queued only once `dSᵀ` is stored
/// (FlashAttention-3's order there: the registers do not hold `Pᵀ`'s pairs in flight beside `Sᵀ`,
/// `dPᵀ` and `dSᵀ`'s). With 80 ([`BackwardConfig::transposes_dq`]) `dQᵀ = Kᵀ·dSᵀ`, its 64 of
/// dQ's columns x the 80 queries, the `dSᵀ` buffer read as the MN-major B. With `ahead` (the
/// consumer's ring protocol and cursor, [`BackwardConfig::queues_scores_ahead`]) the trip finds
/// its `Sᵀ` done and issues only `dPᵀ`; at its end, once `dQ`'s registers are staged, it moves
/// the cursor to the next trip's stage, waits for it and queues that trip's `Sᵀ` behind `dK`, so
/// both run under `dQ`'s reduction, and waits for them before the loop's back edge.
fn keyed_trip<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    (c, r, trip): (&Consumer, &Regs, &Trip),
    ahead: Option<(&mut BarrierSync, &RingCursor)>,
) -> Result<()> {
    let cfg = p.cfg;
    let [bm, bn, d, slab] = dims(cfg);
    let (dt, ws) = (T::DTYPE, ExecScope::Warpgroup);
    let q_tile = TileRef::shared_slabs(dt, [bm, d], bm, trip.q_s, 1024, SwizzleMode::B128);
    let do_tile = TileRef::shared_slabs(dt, [bm, d], bm, trip.do_s, 1024, SwizzleMode::B128);
    // With the scores ahead, Sᵀ was issued and waited for by the trip before.
    if ahead.is_none() {
        k.gemm_async(&r.s, &c.k_tile, &q_tile, Accumulate::No, ws)?;
    }
    k.gemm_async(&r.dp, &c.v_tile, &do_tile, Accumulate::No, ws)?;
    let (s, dp) = score_regs(k, r)?;
    // Sᵀ done (wgmma groups complete in order, PTX ISA 9.7.15.7.2 wgmma.wait_group); dPᵀ
    // runs on.
    if ahead.is_none() {
        k.wgmma_wait_group(1)?;
    }
    mask(k, p, &r.s, (c.key0, trip.m, Expr::from(0u32)), c.lt)?;
    c.cols.probabilities(k, &s, trip.lse_s, c.scale_log2)?;
    let do_t = do_tile
        .transposed()
        .ok_or_else(|| k.error("dO's tile has no layout"))?;
    if cfg.queues_dv_after_ds() {
        // FlashAttention-3's order (128 queries, or [`BackwardConfig::dv_after_ds`]). dPᵀ done, dS = P ∘ (dP − D), and only
        // once dSᵀ is stored dV += Pᵀ·dO queued (it runs under the barrier and beside dQ and
        // dK): the registers hold Sᵀ, dPᵀ, dK and dV (192 a thread) but not Pᵀ's 32 pairs in
        // flight beside them and dSᵀ's (ptxas serializes the wgmmas, C7512, with dV queued
        // behind dPᵀ or before dSᵀ's cast).
        k.wgmma_wait_group(0)?;
        c.cols.score_grads(k, &dp, &s, trip.dd_s)?;
        k.cast(&r.p_cast, &r.s, ws)?;
    } else {
        // dV += Pᵀ·dO queued behind dPᵀ: it runs while dS is computed, stored and shared.
        k.cast(&r.p_cast, &r.s, ws)?;
        k.gemm_async(&r.dv, &r.p_a, &do_t, Accumulate::Yes, ws)?;
        // dPᵀ done: dS = P ∘ (dP − D).
        k.wgmma_wait_group(1)?;
        c.cols.score_grads(k, &dp, &s, trip.dd_s)?;
    }
    k.cast(&r.ds_cast, &r.dp, ws)?;
    // dSᵀ into this warpgroup's 64 rows of the trip's buffer (rows the keys, a swizzle span of
    // queries in each of its slabs: one of 64, two of 128 rows with 128-query blocks, or five of
    // 16 where dQ is transposed, [`BackwardConfig::ds_swizzle`]), published to the async proxy
    // (PTX ISA 9.7.12.4) for both warpgroups' dQ.
    let swizzle = cfg.ds_swizzle();
    let buf = k.eval((trip.t % 2u32) * cfg.ds_bytes())?;
    let ds_buf = k.reg::<ty::U32>();
    k.add(ds_buf, p.ds_s, buf)?;
    let ds_wg = k.reg::<ty::U32>();
    k.mad_lo(ds_wg, c.cw_r, 64 * swizzle.span_bytes(), ds_buf)?;
    let staging = TileRef::shared_slabs(dt, [64, bm], bn, ds_wg, 1024, swizzle);
    k.copy(&staging, &r.ds_cast, ws)?;
    fence_shared(k)?;
    if cfg.queues_dv_after_ds() {
        k.gemm_async(&r.dv, &r.p_a, &do_t, Accumulate::Yes, ws)?;
    }
    // The last trip's dQ reduction has read this warpgroup's stage before the barrier
    // below lets its threads stage this trip's.
    if c.dq_stage.is_some() {
        wait_dq_read(k, c.leader)?;
    }
    // The warpgroups meet where each reads the other's half; at d64 each reads its own.
    let ds_all = if cfg.splits_keys() {
        // Each warpgroup at its own barrier, or with the partials summed at the shared one:
        // the first warpgroup has then read the second's last partial before the second
        // stages this trip's ([`reduce_dq`]).
        let bar = match cfg.sums_dq() {
            true => k.eval(Expr::from(BackwardConfig::DS_BARRIER))?,
            false => k.eval(c.cw + BackwardConfig::DS_BARRIER)?,
        };
        let threads = if cfg.sums_dq() { 256 } else { 128 };
        k.sync_named(bar, threads)?;
        TileRef::shared_slabs(dt, [64, bm], 64, ds_wg, 1024, SwizzleMode::B128)
    } else if cfg.wide() {
        // Its 64 queries' slab over all 128 keys.
        k.sync_named(BackwardConfig::DS_BARRIER, 256)?;
        let ds_slab = k.reg::<ty::U32>();
        k.mad_lo(ds_slab, c.cw_r, bn * slab * 2, ds_buf)?;
        TileRef::shared_slabs(dt, [bn, slab], bn, ds_slab, 1024, SwizzleMode::B128)
    } else {
        k.sync_named(BackwardConfig::DS_BARRIER, 256)?;
        TileRef::shared_slabs(dt, [bn, bm], bn, ds_buf, 1024, swizzle)
    }
    .transposed()
    .ok_or_else(|| k.error("dSᵀ's buffer has no layout"))?;
    // dQ (dS, 64 queries x its keys, is dSᵀ's buffer read MN-major), then dK += dSᵀ·Q:
    // `wait_group 1` leaves dK running while dQ goes into the accumulator and the next
    // trip's stage is waited for.
    let q_t = q_tile
        .transposed()
        .ok_or_else(|| k.error("Q's tile has no layout"))?;
    // Transposed, dQᵀ = Kᵀ·dSᵀ: its 64 columns of K (read MN-major) times the block's dS.
    let (a, b) = match cfg.transposes_dq() {
        true => (&c.k_for_dq, &ds_all),
        false => (&ds_all, &c.k_for_dq),
    };
    k.gemm_async(&r.dq, a, b, Accumulate::No, ws)?;
    k.gemm_async(&r.dk, &r.ds_a, &q_t, Accumulate::Yes, ws)?;
    let at = (c.cw, c.leader, c.lt);
    let Some((sync, cur)) = ahead else {
        k.wgmma_wait_group(1)?;
        return dq_out(k, p, &r.dq, (trip.head, trip.m), at, (c.dq_stage, None));
    };
    // dQ done, dK runs on; once dQ's registers are read into its stage (or added), the next
    // trip's Sᵀ is queued behind dK ([`BackwardConfig::scores_ahead`]) and runs while the
    // warpgroup meets and reduces dQ: its stage waited for (the last trip has none: it reads its
    // own Q again, its Sᵀ then unused). Sᵀ's registers are free: this trip's Pᵀ was read by dSᵀ's
    // step and cast for dV.
    k.wgmma_wait_group(1)?;
    let mut next_scores = |k: &mut KernelBuilder| -> Result<()> {
        cur.advance(k.isa())?;
        let more = k.cmp(CmpOp::Lt, trip.t + 1u32, p.work.trips)?;
        k.if_(more, |k| p.ring.wait(k, sync, cur)).end()?;
        let q_next = p.ring.first_tile(k, cur.stage())?;
        k.isa().selp(q_next, q_next, trip.q_s, more)?;
        scores(k, p, (c, r), q_next)
    };
    let staged: Step<'_> = &mut next_scores;
    dq_out(
        k,
        p,
        &r.dq,
        (trip.head, trip.m),
        at,
        (c.dq_stage, Some(staged)),
    )?;
    // dK and the next Sᵀ done before the loop's back edge.
    k.wgmma_wait_group(0)?;
    Ok(())
}

/// The scores issued ahead of their trip ([`BackwardConfig::queues_scores_ahead`]): `Sᵀ =
/// K·Qᵀ` of the stage's Q at `q_s`.
fn scores<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    (c, r): (&Consumer, &Regs),
    q_s: Reg<ty::U32>,
) -> Result<()> {
    let [bm, _, d, _] = dims(p.cfg);
    let q_tile = TileRef::shared_slabs(T::DTYPE, [bm, d], bm, q_s, 1024, SwizzleMode::B128);
    k.gemm_async(
        &r.s,
        &c.k_tile,
        &q_tile,
        Accumulate::No,
        ExecScope::Warpgroup,
    )?;
    Ok(())
}

/// Code a caller has a callee emit at a point of the callee's: a trip's release of its ring
/// stage ([`split_trip`]), the next trip's `Sᵀ` once `dQ`'s registers are read ([`dq_out`]).
type Step<'a> = &'a mut dyn FnMut(&mut KernelBuilder) -> Result<()>;

/// One trip of a warpgroup that shares the CTA's 64 keys and owns half the head's columns
/// (head dim 256): `Sᵀ` and `dPᵀ` over its 32 queries (`Qᵀ`'s and `dOᵀ`'s rows `32 · index
/// ..`) issued beside the last trip's `dK`; `Pᵀ` once `Sᵀ` is done, into its 64-byte-swizzled
/// slab of the trip's `Pᵀ` buffer, and the warpgroups met (the 64 keys x 64 queries then whole,
/// two slabs); `dV += Pᵀ·dO` over its 128 columns from shared memory, under `dSᵀ`'s step the
/// same way into its buffer; then `dQ = dS·K` (its 128 of dQ's columns, the buffer read
/// MN-major) and `dK += dSᵀ·Q`, `dQ` into `dq_accum` while `dK` runs on to the next trip's
/// start; or, with `release` ([`BackwardConfig::releases_in_trip`]), `dK` first, then `dQ`,
/// the stage released once `dV` and `dK` are done and `dQ` waited for. The buffers turn over
/// three ([`BackwardConfig::ds_buffers`]): a warpgroup writes one again only after both have met
/// past the wait for the wgmmas that read it.
fn split_trip<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    (c, r, trip): (&Consumer, &Regs, &Trip),
    release: Option<Step<'_>>,
) -> Result<()> {
    let cfg = p.cfg;
    let [bm, bn, d, slab] = dims(cfg);
    let (dt, ws) = (T::DTYPE, ExecScope::Warpgroup);
    let (queries, cols) = (wg_queries(cfg), cfg.wg_cols());
    // This warpgroup's queries of Q and dO (rows of 128 bytes in each slab), and its columns
    // (`cols / 64` slabs of all 64 rows).
    let rows = |k: &mut KernelBuilder, at: Reg<ty::U32>| -> Result<TileRef> {
        let half = k.reg::<ty::U32>();
        k.mad_lo(half, c.cw_r, queries * slab * 2, at)?;
        Ok(TileRef::shared_slabs(
            dt,
            [queries, d],
            bm,
            half,
            1024,
            SwizzleMode::B128,
        ))
    };
    let columns = |k: &mut KernelBuilder, at: Reg<ty::U32>| -> Result<TileRef> {
        let part = k.reg::<ty::U32>();
        k.mad_lo(part, c.cw_r, bm * cols * 2, at)?;
        TileRef::shared_slabs(dt, [bm, cols], bm, part, 1024, SwizzleMode::B128)
            .transposed()
            .ok_or_else(|| k.error("a stage's tile has no layout"))
    };
    let q_rows = rows(k, trip.q_s)?;
    let do_rows = rows(k, trip.do_s)?;
    k.gemm_async(&r.s, &c.k_tile, &q_rows, Accumulate::No, ws)?;
    k.gemm_async(&r.dp, &c.v_tile, &do_rows, Accumulate::No, ws)?;
    let (s, dp) = score_regs(k, r)?;
    // This trip's Pᵀ and dSᵀ buffers (`2t mod 3`, `2t + 1 mod 3`), each 64 keys x 64 queries in
    // two slabs of 32 queries (64 bytes, swizzled), and this warpgroup's slab of each.
    let buffer = |k: &mut KernelBuilder, which: u32| -> Result<(Reg<ty::U32>, TileRef)> {
        let off = k.eval(((trip.t * 2u32 + which) % cfg.ds_buffers()) * cfg.ds_bytes())?;
        let buf = k.reg::<ty::U32>();
        k.add(buf, p.ds_s, off)?;
        let mine = k.reg::<ty::U32>();
        k.mad_lo(mine, c.cw_r, bn * queries * 2, buf)?;
        let slab =
            TileRef::shared_row_major(dt, bn, queries, mine, 1024).with_swizzle(SwizzleMode::B64);
        Ok((buf, slab))
    };
    let whole =
        |buf: Reg<ty::U32>| TileRef::shared_slabs(dt, [bn, bm], bn, buf, 1024, SwizzleMode::B64);
    // Sᵀ done; dPᵀ runs on.
    k.wgmma_wait_group(1)?;
    mask(
        k,
        p,
        &r.s,
        (c.key0, trip.m, Expr::from(c.cw) * queries),
        c.lt,
    )?;
    c.cols.probabilities(k, &s, trip.lse_s, c.scale_log2)?;
    k.cast(&r.p_cast, &r.s, ws)?;
    let (p_buf, p_mine) = buffer(k, 0)?;
    k.copy(&p_mine, &r.p_cast, ws)?;
    fence_shared(k)?;
    k.sync_named(BackwardConfig::DS_BARRIER, 256)?;
    // dV += Pᵀ·dO (its columns) queued behind dPᵀ.
    let do_cols = columns(k, trip.do_s)?;
    k.gemm_async(&r.dv, &whole(p_buf), &do_cols, Accumulate::Yes, ws)?;
    // dPᵀ done: dS = P ∘ (dP − D), into this warpgroup's slab of the trip's dSᵀ buffer.
    k.wgmma_wait_group(1)?;
    c.cols.score_grads(k, &dp, &s, trip.dd_s)?;
    k.cast(&r.ds_cast, &r.dp, ws)?;
    let (ds_buf, ds_mine) = buffer(k, 1)?;
    k.copy(&ds_mine, &r.ds_cast, ws)?;
    fence_shared(k)?;
    // The last trip's dQ reduction has read this warpgroup's stage before the barrier below
    // lets its threads stage this trip's.
    if c.dq_stage.is_some() {
        wait_dq_read(k, c.leader)?;
    }
    k.sync_named(BackwardConfig::DS_BARRIER, 256)?;
    let ds_all = whole(ds_buf);
    let ds = ds_all
        .transposed()
        .ok_or_else(|| k.error("dSᵀ's buffer has no layout"))?;
    let q_cols = columns(k, trip.q_s)?;
    match release {
        Some(release) => {
            k.gemm_async(&r.dk, &ds_all, &q_cols, Accumulate::Yes, ws)?;
            k.gemm_async(&r.dq, &ds, &c.k_for_dq, Accumulate::No, ws)?;
            // dV and dK done: the stage's Q and dO read, the next trip's load under dQ.
            k.wgmma_wait_group(1)?;
            release(k)?;
            k.wgmma_wait_group(0)?;
        }
        None => {
            k.gemm_async(&r.dq, &ds, &c.k_for_dq, Accumulate::No, ws)?;
            k.gemm_async(&r.dk, &ds_all, &q_cols, Accumulate::Yes, ws)?;
            // dV and dQ done, dK runs on.
            k.wgmma_wait_group(1)?;
        }
    }
    let at = (c.cw, c.leader, c.lt);
    dq_out(k, p, &r.dq, (trip.head, trip.m), at, (c.dq_stage, None))
}

/// A fragment's f32 registers.
type Values = Vec<Reg<ty::F32>>;

/// A trip's extents: the query block's rows, the CTA's keys, the head dim and a slab's
/// columns.
fn dims(cfg: &BackwardConfig) -> [u32; 4] {
    [
        cfg.block_m,
        cfg.block_n(),
        cfg.head_dim,
        BackwardConfig::SLAB,
    ]
}

/// `Sᵀ`'s and `dPᵀ`'s registers.
fn score_regs(k: &KernelBuilder, r: &Regs) -> Result<(Values, Values)> {
    match (r.s.regs(), r.dp.regs()) {
        (Some(s), Some(dp)) => Ok((s.to_vec(), dp.to_vec())),
        _ => Err(k.error("Sᵀ and dPᵀ are register fragments")),
    }
}

/// The shared-memory writes before made visible to the async proxy (wgmma, the bulk copies:
/// PTX ISA 9.7.12.4 `fence.proxy.async.shared::cta`).
fn fence_shared(k: &mut KernelBuilder) -> Result<()> {
    k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
        ptx_isa::space::SharedScope::Cta,
    )))?;
    Ok(())
}

/// This warpgroup's `dQ` of `trip` into `dq_accum`: staged and reduced in bulk
/// ([`reduce_dq`]) or added a value at a time ([`add_dq`]); `staged` emitted once its registers
/// are read (staged, or added).
fn dq_out<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    dq: &Buffer<ty::F32>,
    trip: (Var, Var),
    (cw, leader, lt): (Var, ptx_isa::Pred, Var),
    (stage, staged): (Option<Reg<ty::U32>>, Option<Step<'_>>),
) -> Result<()> {
    match stage {
        Some(stage) => reduce_dq(k, p, dq, trip, (cw, leader), (stage, staged)),
        None => {
            add_dq(k, p, dq, trip, cw, lt)?;
            staged.map_or(Ok(()), |f| f(k))
        }
    }
}

/// The masks of `Sᵀ` (rows the warpgroup's keys from `key0`, columns query block `m`'s
/// queries from its `q0`-th): keys past `seqlen_k` and, with the causal mask, keys after a
/// query's diagonal (key `key0 + r` is visible to query `bm · m + q0 + c` iff `key0 + r ≤ bm · m +
/// q0 + c + sk − sq`), each only where the tile reaches it.
fn mask<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    s: &Buffer<ty::F32>,
    (key0, m, q0): (Var, Var, Expr),
    lt: Var,
) -> Result<()> {
    // Packed, the lengths read again here rather than held through the loop.
    let (sq, sk) = p.work.lengths(k, p.args.offs.as_ref())?;
    let bm = p.cfg.block_m;
    let edge = k.cmp(CmpOp::Gt, key0 + 64u32, sk)?;
    k.if_(edge, |k| {
        // Rows r >= sk − key0 do not exist.
        let (skr, k0) = (s32(k, sk.into())?, s32(k, key0.into())?);
        let limit = k.reg::<ty::S32>();
        k.sub(limit, skr, k0)?;
        k.mask_fragment_linear(s, lt, [0, 1], limit, f32::NEG_INFINITY)
    })
    .end()?;
    if !p.cfg.causal {
        return Ok(());
    }
    // The tile's last key passes the diagonal of its first query: key0 + 63 > bm · m + q0 + sk −
    // sq.
    let first = k.let_("q_tile0", m * bm + q0)?;
    let diag = k.cmp(CmpOp::Gt, key0 + 64u32 + sq, first + sk + 1u32)?;
    k.if_(diag, |k| {
        // Masked where r − c ≥ bm · m + q0 + sk − sq − key0 + 1.
        let hi = s32(k, first + sk + 1u32)?;
        let lo = s32(k, key0 + sq)?;
        let limit = k.reg::<ty::S32>();
        k.sub(limit, hi, lo)?;
        k.mask_fragment_linear(s, lt, [-1, 1], limit, f32::NEG_INFINITY)
    })
    .end()
}

/// The tile of [`dq_accum`] this warpgroup's `dQ` goes to, its `tile`-th of
/// [`BackwardConfig::dq_tiles`]: query block `m` of `head` of `seq`, columns `64 · index ..`
/// (at d256 `128 · index ..`, or at d64 all of them, its keys' part:
/// [`BackwardConfig::splits_keys`]; with 128-query blocks its 64 queries', the 64-row block
/// `2m + index`, all columns), from `(row, col)` of it.
fn dq_tile(
    cfg: &BackwardConfig,
    seq: &Seq,
    (head, m): (Var, Var),
    (cw, tile): (Var, u32),
    [r, c]: [Expr; 2],
) -> Vec<Expr> {
    let (block, cols) = match (cfg.wide(), cfg.splits_keys()) {
        (true, _) => (m * 2u32 + cw, Expr::from(tile)),
        (false, true) => (Expr::from(m), Expr::from(tile)),
        (false, false) => (Expr::from(m), Expr::from(cw) * cfg.dq_tiles() + tile),
    };
    let mut at = seq.acc_at(head, block);
    at.extend([cols, r, c]);
    at
}

/// This warpgroup's `dQ` added into its tile of `dq_accum` ([`dq_tile`], each value where
/// [`dq_swizzled`] puts it) with `red.global.add.f32` (PTX ISA 9.7.13.6), a value at a time
/// (the padding rows past `seqlen_q` too: they add zeros).
fn add_dq<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    dq: &Buffer<ty::F32>,
    trip: (Var, Var),
    cw: Var,
    lt: Var,
) -> Result<()> {
    let (Some(regs), Some(tv)) = (dq.regs().map(<[_]>::to_vec), dq.fragment().cloned()) else {
        return Err(k.error("dQ is a register fragment"));
    };
    let (r0, c0) = k.fragment_origin(dq, lt)?;
    let (base_r, base_c) = tv.coord(0, 0).map_err(|e| k.error(e.to_string()))?;
    let slab = BackwardConfig::SLAB;
    // A transposed fragment's rows are dQ's columns, its columns the queries.
    let transposed = p.cfg.transposes_dq();
    let ((r0, c0), (base_r, base_c)) = match transposed {
        true => ((c0, r0), (base_c, base_r)),
        false => ((r0, c0), (base_r, base_c)),
    };
    for (v, &reg) in regs.iter().enumerate() {
        let (r, c) = tv.coord(0, v as i64).map_err(|e| k.error(e.to_string()))?;
        let (r, c) = if transposed { (c, r) } else { (r, c) };
        let row = dq_slot(k, p.cfg, r0.clone() + (r - base_r) as u32)?;
        // The thread's first column is within the first 8: a value's tile is its offset's.
        let c = (c - base_c) as u32;
        let col = dq_swizzled(k, row.clone(), c0.clone() + c % slab)?;
        let idx = dq_tile(p.cfg, &p.work.seq, trip, (cw, c / slab), [row, col]);
        let (ptr, off) = k.addr_parts(&p.args.dq, idx)?;
        let Ptr::Global(at) = ptr else {
            return Err(k.error("dq_accum is global memory"));
        };
        k.isa()
            .red::<Global, ty::F32>(AtomOp::Add, Addr::<Global>::reg(at).offset(off), reg)?;
    }
    Ok(())
}

/// This warpgroup's `dQ` staged in its 16 KB of `stage` (the tile's layout with the 128-byte
/// swizzle, [`dq_swizzled`]), published to the
/// async proxy (PTX ISA 9.7.12.4) and, once its 128 threads meet, reduced into its tile of
/// `dq_accum` ([`dq_tile`]) by its first thread with one `cp.reduce.async.bulk .add.f32` (PTX
/// ISA 9.7.9.25.4.2), committed as a bulk group: the next stage into `stage` waits until the
/// reduction has read it ([`wait_dq_read`]).
fn reduce_dq<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    dq: &Buffer<ty::F32>,
    trip: (Var, Var),
    (cw, leader): (Var, ptx_isa::Pred),
    (stage, staged): (Reg<ty::U32>, Option<Step<'_>>),
) -> Result<()> {
    let slab = BackwardConfig::SLAB;
    let tile_at = |k: &KernelBuilder, at: Reg<ty::U32>| dq_staging(k, p.cfg, at);
    let tile = match p.cfg.transposes_dq() {
        // The fragment is dQᵀ: the tile's columns x its rows.
        true => tile_at(k, stage)?
            .transposed()
            .ok_or_else(|| k.error("dQ's stage has no layout"))?,
        false => tile_at(k, stage)?,
    };
    // This warpgroup's dQ staged in `tile` (then `staged`) and reduced.
    let reduce = |k: &mut KernelBuilder, staged: Option<Step<'_>>| -> Result<()> {
        let bar = cw + BackwardConfig::DQ_BARRIER;
        stage_for_bulk_then(k, &tile, dq, bar, |k| staged.map_or(Ok(()), |f| f(k)))?;
        let deterministic = p.cfg.deterministic;
        k.if_(leader, |k| {
            // Packed, the sequence's offsets read again here rather than held in the consumers'
            // registers through the loop.
            let seq = p.work.seq.reloaded(k, p.args.offs.as_ref())?;
            let origin = [Expr::from(0u32), Expr::from(0u32)];
            let idx = dq_tile(p.cfg, &seq, trip, (cw, 0), origin);
            let turn_at = idx[..idx.len() - 2].to_vec();
            let Ptr::Global(at) = k.ptr_to(&p.args.dq, idx)? else {
                return Err(k.error("dq_accum is global memory"));
            };
            if deterministic {
                // This reduction's turn: after every earlier key block's (and at d64 after the
                // first warpgroup's of its own block), their writes then seen by the async proxy
                // (PTX ISA 9.7.12.4).
                let both = p.cfg.splits_keys() && !p.cfg.sums_dq();
                let per = if both { 2 } else { 1 };
                let own = if both {
                    Expr::from(cw)
                } else {
                    Expr::from(0u32)
                };
                let turn = k.eval(p.work.n_block * per + own)?;
                k.wait_flag(&p.args.turns, turn_at.clone(), turn, Scope::Gpu)?;
                k.fence_proxy_async_global()?;
            }
            k.isa().cp_reduce_bulk(
                ptx_isa::builder::TmaReduceOp::Add,
                ptx_isa::ScalarType::F32,
                Addr::<Global>::reg(at),
                Addr::<ptx_isa::spaces::Shared>::reg32(stage),
                p.cfg.dq_stage_bytes(),
            )?;
            k.cp_async_bulk_commit_group()?;
            if deterministic {
                // Complete (PTX ISA 9.7.9.25.4.4 `cp.async.bulk.wait_group`), ordered before the
                // next turn by the proxy fence and the release.
                k.cp_async_bulk_wait_group(0, false)?;
                k.fence_proxy_async_global()?;
                k.red_release_add(&p.args.turns, turn_at, 1u32, Scope::Gpu)?;
            }
            Ok(())
        })
        .end()
    };
    if !p.cfg.sums_dq() {
        return reduce(k, staged);
    }
    if staged.is_some() {
        return Err(k.error("nothing is emitted between the summed dQ's staging and reduction"));
    }
    // Summed: the second warpgroup hands its partial over in its stage (its 128 threads arrive,
    // the first's wait: PTX ISA 9.7.13.1, ordering the stores before the loads); the first adds
    // it to its own and reduces the sum.
    let second = k.cmp(CmpOp::Eq, cw, 1u32)?;
    k.if_(second, |k| {
        k.copy(&tile, dq, ExecScope::Warpgroup)?;
        k.arrive_named(BackwardConfig::SUM_BARRIER, 256)
    })
    .else_(|k| {
        k.sync_named(BackwardConfig::SUM_BARRIER, 256)?;
        let theirs = k.reg::<ty::U32>();
        k.add(theirs, stage, BackwardConfig::BLOCK_M * slab * 4)?;
        let Some(frag) = dq.fragment().cloned() else {
            return Err(k.error("dQ is a register fragment"));
        };
        let other = k.alloc_fragment::<ty::F32>("dq_theirs", frag)?;
        let theirs = tile_at(k, theirs)?;
        k.copy(&other, &theirs, ExecScope::Warpgroup)?;
        let (Some(mine), Some(add)) = (dq.regs().map(<[_]>::to_vec), other.regs()) else {
            return Err(k.error("dQ is a register fragment"));
        };
        for (&x, &y) in mine.iter().zip(add) {
            k.add(x, x, y)?;
        }
        reduce(k, None)
    })
}

/// A warpgroup's `dQ` stage at `at`: its [`BackwardConfig::dq_tiles`] tiles of [`dq_accum`] one
/// after the other ([`BackwardConfig::dq_rows`] rows of 64 f32 each, the 128-byte swizzle over
/// each tile's bytes, [`dq_swizzled`]), as the `rows x 64 · tiles` matrix of its columns.
fn dq_staging(k: &KernelBuilder, cfg: &BackwardConfig, at: Reg<ty::U32>) -> Result<TileRef> {
    let (bm, slab, tiles) = (cfg.dq_rows(), BackwardConfig::SLAB, cfg.dq_tiles());
    let mut tile = TileRef::shared_row_major(ptx_isa::ScalarType::F32, bm, slab * tiles, at, 1024)
        .with_swizzle(SwizzleMode::B128);
    if tiles > 1 || cfg.transposes_dq() {
        use layouts::IntTuple as I;
        let (slab, bm) = (i64::from(slab), i64::from(bm));
        // Column c of query r at c % 64 + 64 row(r) + 64 rows (c / 64) (the row
        // `dq_row_order` gives it), as `TileRef::shared_slabs` lays out spans, here of one
        // tile's 64-f32 rows.
        let (rows, strides): (Vec<_>, Vec<_>) = dq_row_order(k, cfg)?
            .flat_modes()
            .into_iter()
            .map(|(n, s)| (I::Int(n), I::Int(s * slab)))
            .unzip();
        let layout = layouts::Layout::new(
            I::tuple([
                I::tuple([I::Int(slab), I::Int(i64::from(tiles))]),
                I::tuple(rows),
            ]),
            I::tuple([I::tuple([I::Int(1), I::Int(slab * bm)]), I::tuple(strides)]),
        );
        tile.layout = Some(layout.map_err(|e| k.error(e.to_string()))?);
    }
    Ok(tile)
}

/// The first thread waits until its last `dQ` reduction has read its stage (PTX ISA
/// 9.7.9.25.4.4 `cp.async.bulk.wait_group.read`); the warpgroup's next barrier tells the others.
fn wait_dq_read(k: &mut KernelBuilder, leader: ptx_isa::Pred) -> Result<()> {
    k.if_(leader, |k| Ok(k.cp_async_bulk_wait_group(0, true)?))
        .end()
}

/// `dK · scale` and `dV` converted and stored: the warpgroup's 64 key rows from `key0` (and
/// where the warpgroups split the head dim its columns), rows past `seqlen_k` not written.
fn epilogue<T: Elem>(
    k: &mut KernelBuilder,
    p: &Parts<'_, T>,
    r: &Regs,
    key0: Var,
    cw: Var,
) -> Result<()> {
    let (args, w, cols) = (p.args, p.work, p.cfg.wg_cols());
    let col0 = match p.cfg.splits_head_dim() {
        true => Expr::from(cw) * cols,
        false => Expr::from(0u32),
    };
    let Some(dk) = r.dk.regs().map(<[_]>::to_vec) else {
        return Err(k.error("dK is a register fragment"));
    };
    for &x in &dk {
        k.mul(x, x, args.scale)?;
    }
    for (acc, out) in [&r.dk, &r.dv].into_iter().zip(&args.grads) {
        let Some(frag) = acc.fragment().cloned() else {
            return Err(k.error("dK and dV are register fragments"));
        };
        let pairs: Vec<RegRef> = k
            .regs::<ty::Bf16x2>((frag.values() / 2) as usize)
            .into_iter()
            .map(|x| x.as_ref())
            .collect();
        let packed = TileRef::registers(T::DTYPE, frag, pairs);
        k.cast(&packed, acc, ExecScope::Warpgroup)?;
        // Packed, the rows end with the sequence (its offsets read again rather than held
        // through the loop); else with the tensor's `seqlen_k`.
        let (origin, row_dim, end) = match args.offs.as_ref().and_then(|o| o.cu_k.as_ref()) {
            Some(cu_k) => {
                let (k0, sk) = sequence(k, cu_k, w.seq.batch, ["k_first", "seqlen_k"])?;
                let origin = vec![key0 + k0, w.kv_head.into()];
                (origin, 0, Some(Expr::from(k0) + sk))
            }
            None => (w.kv_at(key0.into()), 1, None),
        };
        let mut origin = origin;
        origin.push(col0.clone());
        let view = k.rows_until(out, &origin, row_dim, [64, cols], end)?;
        k.copy(&view, &packed, ExecScope::Warpgroup)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each store of the transposed `dQ` fragment (`dQᵀ`'s wgmma accumulator, 64 of dQ's columns
    /// x 80 queries: one register of a warp's 32 lanes) into its stage, the rows in
    /// [`dq_row_order`] and the 128-byte swizzle over them, puts each lane in a bank of its own
    /// (a shared-memory bank is a 4-byte word of 32, CUDA C++ Programming Guide 5.3.2).
    #[test]
    fn the_transposed_dq_staging_is_free_of_bank_conflicts() {
        let cfg = BackwardConfig::new(ptx_isa::ScalarType::Bf16, 128, false)
            .with_block_m(BackwardConfig::TRANSPOSED_BLOCK_M);
        let k = KernelBuilder::new("staging", Target::Sm90a);
        let order = dq_row_order(&k, &cfg).unwrap();
        let frag = accumulator(i64::from(cfg.dq_rows()), cfg.dtype).unwrap();
        let pitch = u64::from(BackwardConfig::SLAB) * 4;
        for warp in 0..4 {
            for v in 0..frag.values() {
                let mut banks = std::collections::HashSet::new();
                for lane in 0..32 {
                    let (col, query) = frag.coord(warp * 32 + lane, v).unwrap();
                    let row = order.call(query) as u64;
                    let at = SwizzleMode::B128
                        .offset_2d(row, col as u64 % 64, 4, pitch)
                        .unwrap();
                    assert!(banks.insert(at / 4 % 32), "warp {warp} value {v}");
                }
            }
        }
    }
}
