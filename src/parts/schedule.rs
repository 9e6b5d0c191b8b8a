//! The tile scheduler: which output tiles a CTA computes and in which order, given to every role
//! of a warp-specialised kernel by the same object, so the producer and the consumers walk the
//! same tile sequence because they read it from one place.
//!
//! - [`PersistentGrid`]: the one persistent loop, CTAs (or clusters) striding over a work
//!   count the launcher sizes the grid to (`min(work, CTAs resident)`).
//! - [`banded`]: grouped rasterization, linear tile `t` to `(row, column)` in bands of a few
//!   rows, column-major within a band (consecutive CTAs share a column's operand; a band's rows
//!   stay in L2). Attention's L2 sections are the same order over (head, query tile).
//! - [`GridSchedule`]: a persistent grid over an M x N tile grid in bands, optionally in
//!   clusters of neighbouring tiles ([`ClusterTiles`]: CTA pairs along M, or 2 or 4 CTAs along
//!   N): the dense GEMM's schedule. Grouped problems (the MoE GEMM) walk their groups'
//!   tiles through the same [`PersistentGrid`] with a cursor over the groups.
//! - [`GridSchedule::stream_k`]: stream-K, the tiles' k-iterations (tiles x k-tiles) dealt
//!   out evenly over the persistent grid, a CTA's range starting and ending anywhere in a tile:
//!   the units ([`StreamUnit`]) a CTA walks, each one tile's k-tiles of the range, and where a
//!   tile's parts lie ([`stream_k_units`] the same partition on the host).
//! - [`TileScheduler`]: what a kernel's roles call.
//! - [`Turns`]: consumers taking turns at the tiles (ping-pong), each its share of the sequence.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{Expr, KernelBuilder, TensorOpts};
//! use ptxkit::parts::{GridSchedule, TileScheduler};
//!
//! let mut k = KernelBuilder::new("tiles", Target::Sm90a);
//! let (m, n) = (k.symbol("m")?, k.symbol("n")?);
//! let out = k.tensor::<ty::U32>("out", [m, n], TensorOpts::default())?;
//! k.thread_id([32])?;
//! // 128 x 128 tiles in bands of 8 row tiles.
//! let tiles = GridSchedule::new(&mut k, Expr::ceil_div(m, 128), Expr::ceil_div(n, 128), 8, None)?;
//! tiles.for_each_tile(&mut k, |k, t| k.store(&out, [t.row, t.col], 1u32))?;
//! assert!(k.finish()?.launch_spec().persistent.is_some());
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::CmpOp;
use ptx_isa::{Pred, Reg, ty};
use smem::pipeline::cursor::RingCursor;

use super::WarpSpecialized;
use crate::kernel::{Expr, KernelBuilder, Result, Var};

/// What the roles of a kernel walk: each tile of this CTA, in the schedule's order.
pub trait TileScheduler {
    /// What a role learns of a tile.
    type Tile;

    /// `body(k, tile)` for each of this CTA's tiles (the body is written once: a loop).
    fn for_each_tile(&self, k: &mut KernelBuilder, body: impl TileBody<Self::Tile>) -> Result<()>;

    /// Whether `tile` (handed to a [`TileScheduler::for_each_tile`] body) is this CTA's last:
    /// work that other tiles would overlap (a hand-over to other warps) can run in place there.
    fn is_last(&self, k: &mut KernelBuilder, tile: &Self::Tile) -> Result<Pred>;
}

/// What a [`TileScheduler`] runs per tile: `body(k, tile)`, written once.
pub trait TileBody<T>: FnOnce(&mut KernelBuilder, T) -> Result<()> {}

impl<T, F: FnOnce(&mut KernelBuilder, T) -> Result<()>> TileBody<T> for F {}

/// A persistent grid: CTAs (or whole clusters) striding over `0..work`. The launcher sizes the
/// grid to the device (`min(work, CTAs or clusters resident)`, [`KernelBuilder::persistent_cta_id`]).
#[derive(Debug, Clone)]
pub struct PersistentGrid {
    work: Expr,
    /// The loop's bound: `work`, or the same count already in a variable.
    end: Expr,
    clusters: bool,
}

impl PersistentGrid {
    /// CTAs striding over `work` items (an expression of the kernel's symbols).
    pub fn ctas(work: impl Into<Expr>) -> PersistentGrid {
        let work = work.into();
        PersistentGrid {
            end: work.clone(),
            work,
            clusters: false,
        }
    }

    /// Whole clusters striding over `work` items: every CTA of a cluster sees the same items.
    pub fn clusters(work: impl Into<Expr>) -> PersistentGrid {
        let work = work.into();
        PersistentGrid {
            end: work.clone(),
            work,
            clusters: true,
        }
    }

    /// The same grid, its loop bounded by `end` (the work already computed in a variable).
    pub fn until(mut self, end: impl Into<Expr>) -> PersistentGrid {
        self.end = end.into();
        self
    }

    /// The items, as the host evaluates them to size the grid.
    pub fn work(&self) -> &Expr {
        &self.work
    }

    /// `body(k, item)` for items `id, id + grid, ...` below the work.
    #[track_caller]
    pub fn for_each(
        &self,
        k: &mut KernelBuilder,
        body: impl FnOnce(&mut KernelBuilder, Var) -> Result<()>,
    ) -> Result<()> {
        self.for_each_with(k, |_| Ok(()), |k, (), t| body(k, t))
    }

    /// [`PersistentGrid::for_each`] with `setup` written once before the loop (a cursor the
    /// items move forward, say), its value handed to every item.
    #[track_caller]
    pub fn for_each_with<S>(
        &self,
        k: &mut KernelBuilder,
        setup: impl FnOnce(&mut KernelBuilder) -> Result<S>,
        body: impl FnOnce(&mut KernelBuilder, &S, Var) -> Result<()>,
    ) -> Result<()> {
        let (id, step) = self.origin(k)?;
        let state = setup(k)?;
        k.for_stride(id, self.end.clone(), step, |k, t| body(k, &state, t))
    }

    /// Whether `item` (one [`PersistentGrid::for_each`] hands its body) is this CTA's (or
    /// cluster's) last: the next one, a grid's stride on, lies past the work.
    pub fn is_last(&self, k: &mut KernelBuilder, item: Var) -> Result<Pred> {
        let step = match self.clusters {
            true => k.cluster_grid_size()?,
            false => k.grid_size()?,
        };
        let next = k.let_("next_item", Expr::from(item) + step)?;
        k.cmp(CmpOp::Ge, next, self.end.clone())
    }

    /// The same grid without each CTA's (or cluster's) last item: its loop ends a stride
    /// earlier (`item + stride < work`, the negation of [`PersistentGrid::is_last`], with no
    /// test in the loop). The launcher sizes the grid to at most the work, so the bound does
    /// not wrap.
    pub fn but_last(&self, k: &mut KernelBuilder) -> Result<PersistentGrid> {
        let step = match self.clusters {
            true => k.cluster_grid_size()?,
            false => k.grid_size()?,
        };
        Ok(self.clone().until(self.end.clone() - step))
    }

    /// This CTA's (or cluster's) first item and the grid's stride.
    fn origin(&self, k: &mut KernelBuilder) -> Result<(Var, Var)> {
        if self.clusters {
            let id = k.persistent_cluster_id(self.work.clone())?;
            Ok((id, k.cluster_grid_size()?))
        } else {
            let id = k.persistent_cta_id(self.work.clone(), Some(1))?;
            Ok((id, k.grid_size()?))
        }
    }

    /// [`PersistentGrid::for_each`] for one consumer of [`Turns`]: the items `id + (index +
    /// count·i)·grid`, every `count`-th of the CTA's from its `index`-th, each with its
    /// [`Turn`].
    #[track_caller]
    pub fn for_each_turn(
        &self,
        k: &mut KernelBuilder,
        turns: Turns,
        body: impl FnOnce(&mut KernelBuilder, Turn) -> Result<()>,
    ) -> Result<()> {
        let (id, step) = self.origin(k)?;
        let first = k.let_("turn_first", Expr::from(step) * turns.index + id)?;
        let stride = k.let_("turn_stride", Expr::from(step) * turns.count)?;
        // The named barriers this consumer takes its turns at and passes them on at.
        let take = k.let_("turn_take", Expr::from(turns.index) + turns.barrier)?;
        let next = Expr::from(turns.index) + 1u32;
        let pass = k.let_("turn_pass", next % turns.count + turns.barrier)?;
        let end = self.end.clone();
        k.for_stride(first, end.clone(), stride, |k, item| {
            // The CTA's first item starts without a turn passed to it; an item is passed on
            // when the CTA has a next one.
            let wait = k.cmp(CmpOp::Ne, item, id)?;
            let following = k.let_("turn_next", Expr::from(item) + step)?;
            let more = k.cmp(CmpOp::Lt, following, end)?;
            let turn = Turn {
                item,
                first: id,
                stride: step,
                wait,
                more,
                take,
                pass,
                threads: 2 * WarpSpecialized::WARPGROUP,
            };
            body(k, turn)
        })
    }
}

/// Consumers that take turns at a CTA's tiles (ping-pong): consumer `index` of `count` computes
/// the CTA's tiles `index, index + count, ...` of the sequence the producer walks whole, so one
/// consumer's epilogue runs while the next one's main loop keeps the tensor cores busy.
/// A consumer's ring cursor passes the stages of the tiles it leaves to the others
/// ([`Turns::skip_before`], [`Turns::skip_after`]), and the consumers run their main loops in
/// turn ([`Turn::take`], [`Turn::pass`]): a consumer's waits on the ring then never run more
/// than one lap ahead of its stages' barriers, which a parity wait needs (PTX ISA 9.7.13.15.16:
/// `try_wait.parity` cannot tell a phase from the one two laps before).
#[derive(Debug, Clone, Copy)]
pub struct Turns {
    /// This consumer's turn, `0..count`.
    pub index: Var,
    /// The consumers taking turns.
    pub count: u32,
    /// The first of the `count` named barriers (`bar.sync` ids, PTX ISA 9.7.13.1) the turns
    /// are passed at: `barrier + i` hands the turn to consumer `i`. The kernel keeps them free of
    /// other uses.
    pub barrier: u32,
}

impl Turns {
    /// Before its first tile, the cursor passes the earlier consumers' first tiles: `index ·
    /// steps` stages (`steps`: the ring steps one tile takes).
    pub fn skip_before(&self, k: &mut KernelBuilder, cur: &RingCursor, steps: Var) -> Result<()> {
        let n = k.let_("turn_skip", Expr::from(self.index) * steps)?;
        let n = k.eval(n)?;
        Ok(cur.skip(k.isa(), n)?)
    }

    /// After each of its tiles, the cursor passes the other consumers' next tiles: `(count - 1)
    /// · steps` stages.
    pub fn skip_after(&self, k: &mut KernelBuilder, cur: &RingCursor, steps: Var) -> Result<()> {
        if self.count == 1 {
            return Ok(());
        }
        let n = k.eval(Expr::from(steps) * (self.count - 1))?;
        Ok(cur.skip(k.isa(), n)?)
    }

    /// Where the items take different numbers of ring steps (split-K's parts: the last may be
    /// shorter, or empty), in place of [`Turns::skip_before`] and [`Turns::skip_after`]: before
    /// `turn`'s item the cursor passes the stages of the items the other consumers take since
    /// this consumer's previous item (at its first item, the CTA's items before it): for each
    /// `j` in `1..count`, item `item - j·stride` where it is one of the CTA's (`item ≥ first +
    /// j·stride`), `steps(k, that item)` stages.
    pub fn skip_others(
        &self,
        k: &mut KernelBuilder,
        cur: &RingCursor,
        turn: &Turn,
        mut steps: impl FnMut(&mut KernelBuilder, Var) -> Result<Var>,
    ) -> Result<()> {
        for j in 1..self.count {
            let back = k.let_("turn_back", Expr::from(turn.stride) * j)?;
            let from = k.let_("turn_from", Expr::from(turn.first) + back)?;
            let held = k.cmp(CmpOp::Ge, turn.item, from)?;
            let other = k.let_("turn_other", Expr::from(turn.item) - back)?;
            let n = steps(k, other)?;
            let n = k.eval(n)?;
            let n = k.select(held, n, 0u32)?;
            cur.skip(k.isa(), n)?;
        }
        Ok(())
    }
}

/// One consumer's turn at an item of [`PersistentGrid::for_each_turn`]: between [`Turn::take`]
/// and [`Turn::pass`] it is the only consumer waiting on the ring.
#[derive(Debug, Clone, Copy)]
pub struct Turn {
    /// The item.
    pub item: Var,
    /// The CTA's (or cluster's) first item.
    first: Var,
    /// The grid's stride between the CTA's items.
    stride: Var,
    /// Whether a turn is passed to this item (all but the CTA's first).
    wait: Pred,
    /// Whether the CTA has a next item, which this turn is passed on to.
    more: Pred,
    take: Var,
    pass: Var,
    threads: u32,
}

impl Turn {
    /// Waits until the consumer before has passed the turn on (`bar.sync` of the two
    /// warpgroups, PTX ISA 9.7.13.1); the CTA's first item goes at once.
    pub fn take(&self, k: &mut KernelBuilder) -> Result<()> {
        let id = k.eval(self.take)?;
        k.when(self.wait).bar_sync(id, Some(self.threads.into()))?;
        Ok(())
    }

    /// Passes the turn to the next consumer (`bar.arrive`: this warpgroup goes on), once this
    /// one's waits on the ring are done; nothing where the CTA has no next item.
    pub fn pass(&self, k: &mut KernelBuilder) -> Result<()> {
        let id = k.eval(self.pass)?;
        k.when(self.more).bar_arrive(id, self.threads)?;
        Ok(())
    }
}

/// Two consumer warpgroups that alternate on the tensor cores step by step over the same work
/// (FA3's ping-pong of the attention's two query warpgroups over the same key tiles): warpgroup
/// `c` waits at named barrier `barrier + c` (its 128 threads and the other warpgroup's 128
/// arriving, `bar.sync`, PTX ISA 9.7.13.1) before issuing its step's wgmmas and arrives at the
/// other's after issuing them (`bar.arrive`), so one's softmax runs under the other's GEMMs.
/// The second warpgroup arrives once at the start (the first goes first); the first waits once
/// at the end for the second's last arrival, so every barrier phase completes (both take the
/// same number of turns). Unlike [`Turns`], each takes every step; the kernel keeps the two
/// barriers free of other uses.
#[derive(Debug, Clone, Copy)]
pub struct IssueOrder {
    /// Is this the first warpgroup?
    first: Pred,
    /// This warpgroup's barrier and the other's.
    own: Reg<ty::U32>,
    other: Reg<ty::U32>,
    barrier: u32,
}

/// Threads at an [`IssueOrder`] barrier: two warpgroups.
const ISSUE_THREADS: u32 = 2 * WarpSpecialized::WARPGROUP;

impl IssueOrder {
    /// Warpgroup `index` (0 or 1) of the two, at named barriers `barrier` and `barrier + 1`:
    /// the second lets the first take the first turn.
    #[track_caller]
    pub fn start(k: &mut KernelBuilder, index: Var, barrier: u32) -> Result<IssueOrder> {
        let own = k.eval(index + barrier)?;
        let other = k.eval(Expr::from(barrier + 1) - index)?;
        let first = k.cmp(CmpOp::Eq, index, 0u32)?;
        let second = k.cmp(CmpOp::Ne, index, 0u32)?;
        k.comment("ping-pong: the second consumer warpgroup lets the first take the first turn");
        k.if_(second, |k| k.arrive_named(barrier, ISSUE_THREADS))
            .end()?;
        Ok(IssueOrder {
            first,
            own,
            other,
            barrier,
        })
    }

    /// `issue` in this warpgroup's turn, then the turn passed to the other.
    pub fn take(
        &self,
        k: &mut KernelBuilder,
        issue: impl FnOnce(&mut KernelBuilder) -> Result<()>,
    ) -> Result<()> {
        k.sync_named(self.own, ISSUE_THREADS)?;
        issue(k)?;
        k.arrive_named(self.other, ISSUE_THREADS)
    }

    /// After the last step: the first warpgroup takes the second's last arrival.
    pub fn finish(&self, k: &mut KernelBuilder) -> Result<()> {
        k.if_(self.first, |k| k.sync_named(self.barrier, ISSUE_THREADS))
            .end()
    }
}

/// How tall a band of [`banded`] is: a constant, or a value known at run time (attention's L2
/// sections, sized from the keys).
#[derive(Debug, Clone, Copy)]
pub enum Band {
    /// A band of this many rows.
    Rows(u32),
    /// A band of the rows in this variable.
    Var(Var),
}

/// Grouped rasterization: the `(row, column)` of linear tile `t` of a grid of `rows` rows, in
/// bands of `band` rows holding `per_band` tiles each (`band · columns`), column-major within a
/// band; the last band is as tall as the rows left. A bijection of `0..rows · columns` onto the
/// grid.
#[track_caller]
pub fn banded(
    k: &mut KernelBuilder,
    t: Var,
    rows: Var,
    per_band: Var,
    band: Band,
) -> Result<(Var, Var)> {
    let which = k.let_("band", t / per_band)?;
    let first = match band {
        Band::Rows(b) => k.let_("first_m", which * b)?,
        Band::Var(b) => k.let_("first_m", which * b)?,
    };
    // The band's height: `band` rows, fewer in the last band.
    let left = k.eval(rows - first)?;
    let height = k.reg::<ty::U32>();
    match band {
        Band::Rows(b) => k.min(height, left, b)?,
        Band::Var(b) => {
            let b = k.eval(b)?;
            k.min(height, left, b)?
        }
    };
    let height = k.bind("band_rows", height);
    let in_band = k.let_("in_band", t - which * per_band)?;
    let row = k.let_("mb", in_band % height + first)?;
    let col = k.let_("nb", in_band / height)?;
    Ok((row, col))
}

/// A tile of a [`GridSchedule`]: its row and column in the tile grid, and with split-K which
/// part of its reduction ([`GridSchedule::with_splits`]).
#[derive(Debug, Clone, Copy)]
pub struct GridTile {
    /// The row of tiles (with a cluster along M, this CTA's: `size · cluster row + rank`).
    pub row: Var,
    /// The column of tiles (with a cluster along N, this CTA's: `size · cluster column +
    /// rank`).
    pub col: Var,
    /// With split-K, the part of the reduction, `0..splits`.
    pub split: Option<Var>,
    /// The persistent grid's item the tile came from ([`GridSchedule::is_last`] reads it);
    /// with stream-K the linear tile.
    pub item: Var,
    /// With stream-K ([`GridSchedule::stream_k`]), which of the tile's k-tiles this CTA runs
    /// and where the tile's other parts lie.
    pub unit: Option<StreamUnit>,
}

/// Which way the CTAs of a cluster lie on a [`GridSchedule`]'s tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Along {
    /// Neighbouring row tiles of one column (they share the column's B tile).
    M,
    /// Neighbouring column tiles of one row (they share the row's A tile).
    N,
}

/// The CTAs of a cluster on a [`GridSchedule`]: `size` neighbouring tiles along one axis, CTA
/// `rank` (its rank in the cluster, `0..size`) the `rank`-th of them.
#[derive(Debug, Clone, Copy)]
pub struct ClusterTiles {
    /// This CTA's rank in its cluster.
    pub rank: Var,
    /// The cluster's CTAs.
    pub size: u32,
    /// The axis they lie along.
    pub along: Along,
}

/// A persistent grid over `tiles_m x tiles_n` tiles in bands of `band` rows
/// ([`banded`]); with a cluster ([`ClusterTiles`]), over clusters that each take `size`
/// neighbouring tiles: along M the row tiles `size · row + rank` of one column, along N the
/// column tiles `size · column + rank` of one row (past the grid's last column where `size`
/// does not divide it: the CTA still loads and releases its share of the cluster's stages, and
/// stores nothing).
#[derive(Debug, Clone)]
pub struct GridSchedule {
    grid: PersistentGrid,
    /// Rows the schedule walks: row tiles, or cluster rows along M.
    rows: Var,
    /// Tiles (or clusters) a band holds.
    per_band: Var,
    band: u32,
    cluster: Option<ClusterTiles>,
    /// Parts each tile's reduction is split into (1: none).
    splits: u32,
    /// Row tiles the walk is rotated by ([`GridSchedule::rotated`]).
    shift: Option<Var>,
    /// With stream-K ([`GridSchedule::stream_k`]): the k-tiles of a tile.
    stream: Option<Var>,
}

impl GridSchedule {
    /// The schedule of `tiles_m x tiles_n` tiles (expressions of the symbols) in bands of
    /// `band` row tiles; with `cluster`, of clusters of neighbouring tiles.
    #[track_caller]
    pub fn new(
        k: &mut KernelBuilder,
        tiles_m: Expr,
        tiles_n: Expr,
        band: u32,
        cluster: Option<ClusterTiles>,
    ) -> Result<GridSchedule> {
        let (rows_e, cols_e) = match cluster {
            Some(c) if c.along == Along::M => (Expr::ceil_div(tiles_m, c.size), tiles_n),
            Some(c) => (tiles_m, Expr::ceil_div(tiles_n, c.size)),
            None => (tiles_m, tiles_n),
        };
        let work = rows_e.clone() * cols_e.clone();
        let rows = k.let_("sched_m", rows_e)?;
        let tiles_n = k.let_("tiles_n", cols_e)?;
        let tiles = k.let_("tiles", Expr::from(rows) * tiles_n)?;
        let per_band = k.let_("per_band", Expr::from(tiles_n) * band)?;
        let grid = match cluster {
            Some(_) => PersistentGrid::clusters(work),
            None => PersistentGrid::ctas(work),
        }
        .until(tiles);
        Ok(GridSchedule {
            grid,
            rows,
            per_band,
            band,
            cluster,
            splits: 1,
            shift: None,
            stream: None,
        })
    }

    /// The same tiles, each taken `splits` times, once per part of its reduction (split-K:
    /// more work items than tiles where the tiles alone would leave SMs idle). A tile's parts
    /// are adjacent items (`t = splits · tile + split`), so they run at once on neighbouring
    /// CTAs; [`GridTile::split`] says which part an item is.
    #[track_caller]
    pub fn with_splits(self, k: &mut KernelBuilder, splits: u32) -> Result<GridSchedule> {
        if splits == 0 {
            return Err(k.error("a reduction split into no parts"));
        }
        if splits == 1 {
            return Ok(self);
        }
        let work = self.grid.work().clone() * splits;
        let tiles = k.let_("split_items", self.grid.end.clone() * splits)?;
        let grid = match self.grid.clusters {
            true => PersistentGrid::clusters(work),
            false => PersistentGrid::ctas(work),
        }
        .until(tiles);
        Ok(GridSchedule {
            grid,
            splits,
            ..self
        })
    }

    /// The same walk over rows rotated by `shift` row tiles: the tile the walk would put on row
    /// `r` lands on row `(r + shift) mod R`, `R` the schedule's row tiles (`2 ·` pair rows with
    /// CTA pairs along M: `shift` and the row tiles even there, or the rotation moves a pair's
    /// missing row into the grid). Still a bijection of the grid; a tensor-parallel GEMM starts each
    /// rank on the rows it holds ([`crate::library::tp`]).
    pub fn rotated(mut self, shift: Var) -> GridSchedule {
        self.shift = Some(shift);
        self
    }

    /// The persistent grid the schedule strides over (its items are tiles, or with split-K
    /// tile parts).
    pub fn grid(&self) -> &PersistentGrid {
        &self.grid
    }

    /// The same schedule without each CTA's last tile ([`PersistentGrid::but_last`]): what a
    /// role walks that leaves the last tile to another.
    pub fn but_last(&self, k: &mut KernelBuilder) -> Result<GridSchedule> {
        if self.stream.is_some() {
            return Err(k.error("a stream-K schedule without its last units"));
        }
        Ok(GridSchedule {
            grid: self.grid.but_last(k)?,
            ..self.clone()
        })
    }

    /// The tile of linear tile `t` (with split-K, of item `t`: tile `t / splits`, part
    /// `t % splits`).
    #[track_caller]
    pub fn tile(&self, k: &mut KernelBuilder, t: Var) -> Result<GridTile> {
        let item = t;
        let (t, split) = match self.splits {
            1 => (t, None),
            s => (
                k.let_("split_tile", Expr::from(t) / s)?,
                Some(k.let_("split", Expr::from(t) % s)?),
            ),
        };
        let (row, col) = banded(k, t, self.rows, self.per_band, Band::Rows(self.band))?;
        let along_m = self.cluster.filter(|c| c.along == Along::M);
        let (row, col) = match self.cluster {
            Some(c) if c.along == Along::M => (k.let_("mb_cta", row * c.size + c.rank)?, col),
            Some(c) => (row, k.let_("nb_cta", col * c.size + c.rank)?),
            None => (row, col),
        };
        let row = match (self.shift, along_m) {
            (None, _) => row,
            (Some(s), None) => k.let_("mb_rot", (row + s) % self.rows)?,
            (Some(s), Some(c)) => k.let_("mb_rot", (row + s) % (self.rows * c.size))?,
        };
        Ok(GridTile {
            row,
            col,
            split,
            item,
            unit: None,
        })
    }
}

/// One unit of a stream-K schedule ([`GridSchedule::stream_k`]): the k-tiles `[k0, k1)` of one
/// tile that this CTA runs. The tile's k-tiles are split among `parts` consecutive CTAs,
/// `first_cta` to `first_cta + parts - 1`, in k order (a CTA's range is contiguous in the
/// linear k-iterations, so a later CTA holds later k-tiles of the tile): this unit is part
/// `part`. With one part the unit is the whole tile.
#[derive(Debug, Clone, Copy)]
pub struct StreamUnit {
    /// The unit's first k-tile of the tile.
    pub k0: Var,
    /// The unit's end k-tile (exclusive), at least `k0 + 1`.
    pub k1: Var,
    /// The tile's parts (units), 1 where one CTA runs the whole tile.
    pub parts: Var,
    /// This unit's part, `0..parts`, in k order.
    pub part: Var,
    /// The CTA of the tile's part 0.
    pub first_cta: Var,
    /// 1 where the tile's part 0 is its CTA's last unit (that CTA's range began in an earlier
    /// tile), else 0.
    lead: Var,
    /// Whether the unit is its CTA's last.
    pub last: Pred,
}

impl StreamUnit {
    /// The workspace slot of the tile's part `j`: `2·cta + 0` where it is its CTA's first unit,
    /// `2·cta + 1` where it is its last and not its first. A CTA has at most two units that are
    /// not whole tiles (its first and its last; those between are whole tiles, stored
    /// directly), so `2·grid` slots hold every part of a launch, whatever the problem. Part `j >
    /// 0` starts its CTA's range (it begins inside the tile); part 0 is its CTA's last unit where
    /// that CTA began in an earlier tile.
    pub fn slot(&self, k: &mut KernelBuilder, j: impl Into<Expr>) -> Result<Var> {
        let j = k.let_("sk_j", j)?;
        let first = k.cmp(CmpOp::Eq, j, 0u32)?;
        let lead = k.eval(self.lead)?;
        let extra = k.select(first, lead, 0u32)?;
        let extra = k.bind("sk_lead_slot", extra);
        k.let_("sk_slot", (Expr::from(self.first_cta) + j) * 2u32 + extra)
    }
}

/// A unit of [`stream_k_units`]: the host's view of a [`StreamUnit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostStreamUnit {
    /// The CTA that runs it.
    pub cta: u32,
    /// The linear tile.
    pub tile: u32,
    /// Its k-tiles of the tile, `[k0, k1)`.
    pub k0: u32,
    /// See `k0`.
    pub k1: u32,
    /// Its part of the tile, in k order.
    pub part: u32,
    /// The tile's parts.
    pub parts: u32,
    /// Its workspace slot ([`StreamUnit::slot`]).
    pub slot: u32,
}

/// The stream-K partition [`GridSchedule::stream_k`] computes on the device, on the host: for
/// `tiles` tiles of `ktiles` k-tiles each over `grid` CTAs (`grid ≤ tiles · ktiles`), CTA `c`
/// runs the linear k-iterations `[⌊c·T/G⌋, ⌊(c+1)·T/G⌋)` (`T = tiles · ktiles`), and the
/// CTA holding iteration `i` is `⌊((i + 1)·G - 1) / T⌋`. Each CTA's units in its order (tile by
/// tile). The kernel's formulas, in the same order; `T · G` must stay below 2³² (the kernel's
/// 32-bit arithmetic; the launcher refuses larger).
pub fn stream_k_units(tiles: u32, ktiles: u32, grid: u32) -> Vec<HostStreamUnit> {
    let (t_all, g) = (u64::from(tiles) * u64::from(ktiles), u64::from(grid));
    let kt = u64::from(ktiles);
    let begin = |c: u64| c * t_all / g;
    let owner = |i: u64| ((i + 1) * g - 1) / t_all;
    let mut units = Vec::new();
    for c in 0..g {
        let (b, e) = (begin(c), begin(c + 1));
        for t in b / kt..(e - 1) / kt + 1 {
            let base = t * kt;
            let (c0, c1) = (owner(base), owner(base + kt - 1));
            let lead = u64::from(begin(c0) != base);
            let part = c - c0;
            units.push(HostStreamUnit {
                cta: c as u32,
                tile: t as u32,
                k0: (b.max(base) - base) as u32,
                k1: (e.min(base + kt) - base) as u32,
                part: part as u32,
                parts: (c1 - c0 + 1) as u32,
                slot: (2 * c + if part == 0 { lead } else { 0 }) as u32,
            });
        }
    }
    units
}

impl GridSchedule {
    /// Stream-K over the same tiles: the `tiles · ktiles` k-iterations (tile-major, `ktiles`
    /// an expression of the symbols, the k-tiles of every tile) dealt out evenly over the
    /// persistent grid, which the launcher sizes to `min(k-iterations, CTAs resident)`. CTA `c`
    /// of `G` runs iterations `[⌊c·T/G⌋, ⌊(c+1)·T/G⌋)`: a range that may start inside one tile
    /// and end inside another; each tile it touches is one [`StreamUnit`] of the
    /// [`GridTile`] the roles get, so every role walks the same units. Neither split-K,
    /// clusters nor a rotation.
    #[track_caller]
    pub fn stream_k(self, k: &mut KernelBuilder, ktiles: Expr) -> Result<GridSchedule> {
        if self.splits != 1 || self.cluster.is_some() || self.shift.is_some() {
            return Err(k.error("stream-K with split-K, clusters or a rotated walk"));
        }
        let work = self.grid.work().clone() * ktiles.clone();
        let kt = k.let_("sk_ktiles", ktiles)?;
        let total = k.let_("sk_iters", self.grid.end.clone() * kt)?;
        Ok(GridSchedule {
            grid: PersistentGrid::ctas(work).until(total),
            stream: Some(kt),
            ..self
        })
    }

    /// Stream-K's walk ([`GridSchedule::stream_k`]): this CTA's units, tile by tile.
    #[track_caller]
    fn for_each_unit(
        &self,
        k: &mut KernelBuilder,
        kt: Var,
        body: impl TileBody<GridTile>,
    ) -> Result<()> {
        let (c, g) = self.grid.origin(k)?;
        let total = self.grid.end.clone();
        // [begin, end): this CTA's k-iterations; owner(i) = ((i + 1)·G - 1) / T.
        let begin = k.let_("sk_begin", Expr::from(c) * total.clone() / g)?;
        let end = k.let_("sk_end", (Expr::from(c) + 1u32) * total.clone() / g)?;
        let first = k.let_("sk_tile0", Expr::from(begin) / kt)?;
        let stop = k.let_("sk_tile_end", (Expr::from(end) - 1u32) / kt + 1u32)?;
        k.for_range(first, stop, |k, t| {
            let base = k.let_("sk_base", Expr::from(t) * kt)?;
            let (b, e, base_r) = (k.eval(begin)?, k.eval(end)?, k.eval(base)?);
            let from = k.max_of(b, base_r)?;
            let from = k.bind("sk_from", from);
            let k0 = k.let_("sk_k0", Expr::from(from) - base)?;
            let tile_end = k.eval(Expr::from(base) + kt)?;
            let to = k.min_of(e, tile_end)?;
            let to = k.bind("sk_to", to);
            let k1 = k.let_("sk_k1", Expr::from(to) - base)?;
            let owner = |k: &mut KernelBuilder, name: &str, i: Expr| {
                k.let_(name, ((i + 1u32) * g - 1u32) / total.clone())
            };
            let c0 = owner(k, "sk_cta0", Expr::from(base))?;
            let c1 = owner(k, "sk_cta1", Expr::from(base) + kt - 1u32)?;
            let parts = k.let_("sk_parts", Expr::from(c1) - c0 + 1u32)?;
            let part = k.let_("sk_part", Expr::from(c) - c0)?;
            let begin0 = k.let_("sk_begin0", Expr::from(c0) * total.clone() / g)?;
            let started = k.cmp(CmpOp::Ne, begin0, base)?;
            let lead = k.select(started, 1u32, 0u32)?;
            let lead = k.bind("sk_lead", lead);
            let next = k.let_("sk_next", Expr::from(t) + 1u32)?;
            let last = k.cmp(CmpOp::Eq, next, stop)?;
            let mut tile = self.tile(k, t)?;
            tile.unit = Some(StreamUnit {
                k0,
                k1,
                parts,
                part,
                first_cta: c0,
                lead,
                last,
            });
            body(k, tile)
        })
    }
}

impl GridSchedule {
    /// [`TileScheduler::for_each_tile`] for one consumer of [`Turns`]: its share of the CTA's
    /// tiles, in the same order.
    #[track_caller]
    pub fn for_each_turn(
        &self,
        k: &mut KernelBuilder,
        turns: Turns,
        body: impl FnOnce(&mut KernelBuilder, GridTile, Turn) -> Result<()>,
    ) -> Result<()> {
        if self.stream.is_some() {
            return Err(k.error("consumers taking turns at a stream-K schedule"));
        }
        self.grid.for_each_turn(k, turns, |k, turn| {
            let tile = self.tile(k, turn.item)?;
            body(k, tile, turn)
        })
    }
}

impl TileScheduler for GridSchedule {
    type Tile = GridTile;

    #[track_caller]
    fn for_each_tile(&self, k: &mut KernelBuilder, body: impl TileBody<GridTile>) -> Result<()> {
        if let Some(kt) = self.stream {
            return self.for_each_unit(k, kt, body);
        }
        self.grid.for_each(k, |k, t| {
            let tile = self.tile(k, t)?;
            body(k, tile)
        })
    }

    fn is_last(&self, k: &mut KernelBuilder, tile: &GridTile) -> Result<Pred> {
        match tile.unit {
            Some(unit) => Ok(unit.last),
            None => self.grid.is_last(k, tile.item),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Problems of a few tiles and many SMs (decode: a tile's k-tiles split among many CTAs),
    /// as many tiles as SMs, and many tiles (a CTA's range spanning 3 or more tiles), at grids
    /// of 1 CTA to one a k-iteration.
    fn cases() -> Vec<(u32, u32, u32)> {
        let mut cases = vec![
            (448, 128, 132),
            (56, 112, 132),
            (1, 7, 7),
            (1, 1, 1),
            (3, 5, 15),
        ];
        for tiles in [1, 2, 5, 17, 33, 132, 300] {
            for ktiles in [1, 2, 3, 8, 28, 128] {
                for grid in [1, 2, 7, 64, 132] {
                    if grid <= tiles * ktiles {
                        cases.push((tiles, ktiles, grid));
                    }
                }
            }
        }
        cases
    }

    /// Every (tile, k-tile) is run by exactly one unit; each CTA's units are one contiguous
    /// range of the tile-major k-iterations, of about `T / G` (the floors differ by at most 1),
    /// tile after tile; a tile's parts are consecutive CTAs whose k-tiles follow each other
    /// in part order from 0 to `ktiles`.
    #[test]
    fn stream_k_units_cover_every_k_iteration_once_in_k_order() {
        for (tiles, ktiles, grid) in cases() {
            let units = stream_k_units(tiles, ktiles, grid);
            let mut seen = vec![0u32; (tiles * ktiles) as usize];
            let mut per_cta = vec![Vec::new(); grid as usize];
            for u in &units {
                assert!(u.k0 < u.k1 && u.k1 <= ktiles, "{u:?}");
                for kt in u.k0..u.k1 {
                    seen[(u.tile * ktiles + kt) as usize] += 1;
                }
                per_cta[u.cta as usize].push(*u);
            }
            assert!(seen.iter().all(|&s| s == 1), "{tiles}x{ktiles} over {grid}");
            let (lo, hi) = ((tiles * ktiles) / grid, (tiles * ktiles).div_ceil(grid));
            for (c, us) in per_cta.iter().enumerate() {
                let iters: u32 = us.iter().map(|u| u.k1 - u.k0).sum();
                assert!(
                    (lo..=hi).contains(&iters),
                    "CTA {c}: {iters} not in {lo}..={hi}"
                );
                for w in us.windows(2) {
                    // The next unit starts its tile where the previous ended its own.
                    assert_eq!((w[0].tile + 1, w[0].k1, w[1].k0), (w[1].tile, ktiles, 0));
                }
            }
            for t in 0..tiles {
                let mut parts: Vec<_> = units.iter().filter(|u| u.tile == t).collect();
                parts.sort_by_key(|u| u.part);
                assert_eq!(parts.len() as u32, parts[0].parts, "tile {t}");
                let mut k = 0;
                for (p, u) in parts.iter().enumerate() {
                    assert_eq!(
                        (u.part, u.k0, u.cta),
                        (p as u32, k, parts[0].cta + p as u32)
                    );
                    k = u.k1;
                }
                assert_eq!(k, ktiles);
            }
        }
    }

    /// The fixup's places and counts: the parts of tiles shared by several CTAs take distinct
    /// workspace slots below `2·grid` (a CTA's first and last unit), and a tile's ticket
    /// counter, taken once by each of its parts in any order, reaches `parts - 1` at exactly
    /// one of them (the one that sums), which leaves it 0.
    #[test]
    fn stream_k_parts_take_distinct_slots_and_one_sums() {
        for (tiles, ktiles, grid) in cases() {
            let units = stream_k_units(tiles, ktiles, grid);
            let shared: Vec<_> = units.iter().filter(|u| u.parts > 1).collect();
            let mut slots: Vec<u32> = shared.iter().map(|u| u.slot).collect();
            slots.sort_unstable();
            let len = slots.len();
            slots.dedup();
            assert_eq!(
                slots.len(),
                len,
                "{tiles}x{ktiles} over {grid}: a slot reused"
            );
            assert!(slots.iter().all(|&s| s < 2 * grid));
            for u in &shared {
                assert_eq!(u.slot / 2, u.cta, "{u:?}: its own CTA's slot");
            }
            // Arrivals in CTA order, reversed, and interleaved.
            let orders: [fn(&HostStreamUnit) -> i64; 3] = [
                |u| i64::from(u.cta),
                |u| -i64::from(u.cta),
                |u| i64::from((u.cta * 7919) % 101),
            ];
            for order in orders {
                let mut arrivals = shared.clone();
                arrivals.sort_by_key(|u| order(u));
                let mut counters = vec![0u32; tiles as usize];
                let mut summed = vec![0u32; tiles as usize];
                for u in arrivals {
                    let counter = &mut counters[u.tile as usize];
                    let ticket = *counter;
                    *counter += 1;
                    if ticket == u.parts - 1 {
                        *counter = 0;
                        summed[u.tile as usize] += 1;
                    }
                }
                assert!(counters.iter().all(|&c| c == 0));
                for t in 0..tiles {
                    let parts = units.iter().find(|u| u.tile == t).map_or(0, |u| u.parts);
                    assert_eq!(summed[t as usize], u32::from(parts > 1), "tile {t}");
                }
            }
        }
    }

    /// The shapes the decode GEMM meets: 448 tiles of 128 k-tiles over 132 CTAs puts 3 or
    /// more tiles in a CTA's range (its middle ones whole); 56 tiles over 132 CTAs splits each
    /// tile among 3 or 4 CTAs.
    #[test]
    fn stream_k_ranges_span_tiles_or_split_them() {
        let units = stream_k_units(448, 128, 132);
        let most = (0..132)
            .map(|c| units.iter().filter(|u| u.cta == c).count())
            .max();
        assert!(most >= Some(4), "{most:?}");
        assert!(
            units
                .iter()
                .any(|u| u.parts == 1 && u.k0 == 0 && u.k1 == 128)
        );
        let units = stream_k_units(56, 112, 132);
        assert!(units.iter().all(|u| (3..=4).contains(&u.parts)));
    }
}
