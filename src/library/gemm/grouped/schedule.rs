//! The grouped GEMM's operands and its persistent tile schedule over all groups.
//!
//! Tiles are numbered group after group; group g has `ceil(M_g / 128) x ceil(N / bn)` tiles,
//! ordered within the group in the dense GEMM's `group_m` bands (`super::super::build::band_tile`),
//! so neighbouring CTAs share the group's B tiles and a band's A tiles in L2. The number of tiles
//! is known only on the device (it depends on `offs`/`counts`), so the persistent grid is sized
//! to a bound the host can evaluate from the shapes: `(ceil(M_total / 128) + G) x tiles_n` for
//! the contiguous form (each group wastes less than one M-tile), `G x ceil(M_cap / 128) x
//! tiles_n` for the masked one. Each CTA walks `t = id, id + grid, ...` and keeps a cursor
//! (group, its first tile, its first and end rows) that only moves forward, reading one entry of
//! the row array per group it passes; tiles past the last group's are skipped.

use ptx_isa::builder::CmpOp;
use ptx_isa::{Pred, Reg, ty};

use super::Grouping;
use crate::kernel::{Buffer, Elem, Expr, KernelBuilder, Result, TensorOpts, TmaTensor, Var};
use crate::library::gemm::GemmConfig;
use crate::library::gemm::build::{Output, Tile};
use crate::parts::{Band, PersistentGrid, TileBody, TileScheduler, banded};
use crate::signature::{ExtentFacts, TmaBox};
use crate::tile::{RunCount, TileRef};

/// One tile's group: which group, where its rows start and where the group's rows end, in the
/// row coordinates of A and C (global rows for [`Grouping::Contiguous`], rows within the group
/// for [`Grouping::Masked`]).
#[derive(Debug, Clone, Copy)]
pub struct GroupTile {
    /// The group.
    pub g: Var,
    /// The tile's first row.
    pub row0: Var,
    /// The group's end row (exclusive): rows from it on are not stored.
    pub end: Var,
    grouping: Grouping,
}

impl GroupTile {
    /// The origin of A's box at depth `k0` (elements), outermost first: `[row0, k0]`, or
    /// `[g, row0, k0]` for the masked `[G, M_cap, K]`.
    pub fn a_origin(&self, k0: Expr) -> Vec<Expr> {
        let mut origin = self.rows_origin(self.row0.into());
        origin.push(k0);
        origin
    }

    /// The origin of the group's B box (`[G, N, K]`) at column `n0` and depth `k0`.
    pub fn b_origin(&self, n0: Expr, k0: Expr) -> Vec<Expr> {
        vec![self.g.into(), n0, k0]
    }

    /// The index of A's block scale ([`crate::library::gemm::Scaling::Block`]) of k-block `kb`
    /// for row `row`: `[kb, row]` in `scale_a` `[k_blocks, M_total]` (the contiguous form: A's
    /// global rows), `[g, kb, row]` in `[G, k_blocks, M_cap]` (masked).
    pub fn scale_a_at(&self, kb: Expr, row: Expr) -> Vec<Expr> {
        match self.grouping {
            Grouping::Masked => vec![self.g.into(), kb, row],
            _ => vec![kb, row],
        }
    }

    /// The index of the group's B block scale of column block `nblock` and k-block `kb`:
    /// `[g, nblock, kb]` in `scale_b` `[G, n_blocks, k_blocks]`.
    pub fn scale_b_at(&self, nblock: Expr, kb: Expr) -> Vec<Expr> {
        vec![self.g.into(), nblock, kb]
    }

    /// The outer coordinates of row `row` of A or C: `[row]`, or `[g, row]` in the masked form.
    pub fn rows_origin(&self, row: Expr) -> Vec<Expr> {
        match self.grouping {
            Grouping::Masked => vec![self.g.into(), row],
            _ => vec![row],
        }
    }

    /// How many rows from `row` on belong to the group: `max(end, row) - row` (0 for a block
    /// that starts past the group's end, not a count wrapped round 2^32).
    #[track_caller]
    pub fn rows_left(&self, k: &mut KernelBuilder, row: Var) -> Result<Reg<ty::U32>> {
        let (end, row) = (k.eval(self.end)?, k.eval(row)?);
        let left = k.reg::<ty::U32>();
        k.max(left, end, row)?;
        k.sub(left, left, row)?;
        Ok(left)
    }

    /// The `64 x bn` block of C at row `row` and column `col0`, bounded by the group's rows
    /// ([`GroupTile::rows_left`]) and N's columns: what the register epilogue stores, skipping
    /// the rows of the next group (which a TMA store, clipping only at C's edges, would write).
    #[track_caller]
    pub fn c_block<O: Elem>(
        &self,
        k: &mut KernelBuilder,
        c: &Buffer<O>,
        row: Var,
        col0: Expr,
        bn: u32,
    ) -> Result<TileRef> {
        let mut origin = self.rows_origin(row.into());
        origin.push(col0);
        let row_dim = origin.len() - 2;
        let mut block = k.rows_at(c, &origin, row_dim, [64, bn])?;
        let left = self.rows_left(k, row)?;
        let Some([_, cols]) = block.bounds.clone() else {
            return Err(k.error("C's block has no bounds"));
        };
        block.bounds = Some([RunCount::new(left, 1), cols]);
        Ok(block)
    }
}

/// The grouped GEMM's operands as the kernel declares them.
#[derive(Debug)]
pub struct GroupedOperands<I: Elem, J: Elem, O: Elem> {
    /// A: `[m, k]` (contiguous) or `[g, m, k]` (masked), in boxes of 128 rows.
    pub a: TmaTensor<I>,
    /// B: `[g, n, k]`, in boxes of one group's `bn` rows.
    pub b: TmaTensor<J>,
    /// C: `[m, n]` or `[g, m, n]`, with its TMA view for the TMA-store epilogue.
    pub c: Output<O>,
    /// The groups' rows (`offs` or `counts`, int32 `[g]`).
    pub rows: Buffer<ty::S32>,
    /// The number of groups.
    pub groups: Var,
}

/// Declares a grouped kernel's operands after its extents `m` (M_total, or M_cap masked), `n`
/// and `k`: the symbol `g` (groups), A and B as TMA tensors in the boxes `operand(rows)` gives
/// (one group deep where the tensor has a group dimension), C as a global tensor aligned as
/// [`GemmConfig::c_align`] says with its TMA view `c_map` ([`super::c_box`]) when `cfg` stores
/// by TMA, and the row array.
#[track_caller]
pub fn declare_operands<I: Elem, J: Elem, O: Elem>(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    [m, n, kk]: [Var; 3],
    operand: impl Fn(u32) -> TmaBox,
) -> Result<GroupedOperands<I, J, O>> {
    let groups = k.symbol_with("g", ExtentFacts::NONE.at_least(1))?;
    let grouped = |rows: u32| {
        let mut tma = operand(rows);
        tma.shape.insert(0, 1);
        tma.element_strides.insert(0, 1);
        tma
    };
    let masked = cfg.grouping == Grouping::Masked;
    let a = if masked {
        k.tma_tensor::<I>("a", [groups, m, kk], grouped(GemmConfig::BM))?
    } else {
        k.tma_tensor::<I>("a", [m, kk], operand(GemmConfig::BM))?
    };
    let b = k.tma_tensor::<J>("b", [groups, n, kk], grouped(cfg.bn))?;
    let c_shape: Vec<Var> = if masked {
        vec![groups, m, n]
    } else {
        vec![m, n]
    };
    let c = k.tensor::<O>("c", c_shape, TensorOpts::default().align(cfg.c_align()))?;
    let tma = if cfg.tma_store {
        Some(k.tma_view_of("c_map", &c, super::c_box(cfg.grouping))?)
    } else {
        None
    };
    let rows = k.tensor::<ty::S32>(cfg.grouping.rows_name(), [groups], TensorOpts::default())?;
    Ok(GroupedOperands {
        a,
        b,
        c: Output::Grouped { rows: c, tma },
        rows,
        groups,
    })
}

/// Declares a grouped kernel's block scales ([`crate::library::gemm::Scaling::Block`]) after
/// its operands (`groups` from [`declare_operands`]) and the scale grid's extents `k_blocks`
/// and `n_blocks`: `scale_a` `[k_blocks, m]` for the contiguous form (indexed by A's global row,
/// as the dense GEMM's), `[g, k_blocks, m]` for the masked one (M_cap rows per group), and
/// `scale_b` `[g, n_blocks, k_blocks]` (each group's B has its own). [`GroupTile::scale_a_at`]
/// and [`GroupTile::scale_b_at`] index them.
#[track_caller]
pub fn declare_block_scales(
    k: &mut KernelBuilder,
    grouping: Grouping,
    groups: Var,
    m: Var,
    [kb, nb]: [Var; 2],
) -> Result<[Buffer<ty::F32>; 2]> {
    let a_shape = match grouping {
        Grouping::Masked => vec![groups, kb, m],
        _ => vec![kb, m],
    };
    let opts = TensorOpts::default;
    Ok([
        k.tensor::<ty::F32>("scale_a", a_shape, opts())?,
        k.tensor::<ty::F32>("scale_b", [groups, nb, kb], opts())?,
    ])
}

/// The persistent tile schedule over all groups' tiles (see the module's text).
#[derive(Debug, Clone)]
pub struct GroupedSchedule {
    grouping: Grouping,
    /// The number of groups.
    groups: Var,
    /// M_total (contiguous) or M_cap (masked).
    m: Var,
    /// N-tiles.
    tiles_n: Var,
    /// Tiles a band of `group_m` M-tiles of a group holds.
    per_band: Var,
    group_m: u32,
    /// The bound on the tiles that sizes the persistent grid (an expression of the symbols).
    work: Expr,
    /// `offs` or `counts`.
    rows: Buffer<ty::S32>,
}

impl GroupedSchedule {
    /// The persistent grid over all groups' tiles that every role walks.
    fn grid(&self) -> PersistentGrid {
        PersistentGrid::ctas(self.work.clone())
    }

    /// The schedule of `grouping`'s tiles of 128 rows by `bn` columns, in bands of `group_m`
    /// M-tiles within each group.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        k: &mut KernelBuilder,
        grouping: Grouping,
        groups: Var,
        m: Var,
        n: Var,
        bn: u32,
        group_m: u32,
        rows: Buffer<ty::S32>,
    ) -> Result<GroupedSchedule> {
        let tiles_n = Expr::ceil_div(n, bn);
        let m_tiles = Expr::ceil_div(m, GemmConfig::BM);
        let work = match grouping {
            Grouping::Masked => Expr::from(groups) * m_tiles * tiles_n.clone(),
            _ => (m_tiles + groups) * tiles_n.clone(),
        };
        let tiles_n = k.let_("tiles_n", tiles_n)?;
        let per_band = k.let_("per_band", Expr::from(tiles_n) * group_m)?;
        Ok(GroupedSchedule {
            grouping,
            groups,
            m,
            tiles_n,
            per_band,
            group_m,
            work,
            rows,
        })
    }

    /// The end row of group `g` (clamped to the last group, which the cursor reads once it has
    /// passed them all): `offs[g]` kept within `row0..=M_total` (contiguous), or `counts[g]`
    /// kept within `0..=M_cap` (masked), so a malformed array cannot make a count wrap.
    #[track_caller]
    fn group_end(&self, k: &mut KernelBuilder, g: Var, row0: Var) -> Result<Reg<ty::U32>> {
        let last = k.eval(Expr::from(self.groups) - 1)?;
        let g = k.eval(g)?;
        let at = k.reg::<ty::U32>();
        k.min(at, g, last)?;
        let at = k.bind("grp_at", at);
        let v = k.load(&self.rows, [at])?;
        k.max(v, v, 0i32)?;
        let v = v.retype::<ty::U32>().map_err(|e| k.error(e.to_string()))?;
        let end = k.reg::<ty::U32>();
        let m = k.eval(self.m)?;
        k.min(end, v, m)?;
        if self.grouping == Grouping::Contiguous {
            let row0 = k.eval(row0)?;
            k.max(end, end, row0)?;
        }
        Ok(end)
    }

    /// The tiles of a group whose rows are `row0..end`.
    fn tiles_of(&self, row0: Var, end: Var) -> Expr {
        Expr::ceil_div(Expr::from(end) - row0, GemmConfig::BM) * self.tiles_n
    }
}

impl TileScheduler for GroupedSchedule {
    type Tile = Tile;

    /// `body(k, tile)` for each tile of this CTA in the persistent grid, with its group: a
    /// cursor over the groups (group, first tile, rows, tiles), moved forward to the group that
    /// holds each tile.
    #[track_caller]
    fn for_each_tile(&self, k: &mut KernelBuilder, body: impl TileBody<Tile>) -> Result<()> {
        let cursor = |k: &mut KernelBuilder| {
            let g = k.index_var("grp", 0u32)?;
            let first = k.index_var("grp_first", 0u32)?;
            let row0 = k.index_var("grp_row0", 0u32)?;
            let end0 = self.group_end(k, g, row0)?;
            let end0 = k.bind("grp_end0", end0);
            let end = k.index_var("grp_end", end0)?;
            let count = k.index_var("grp_tiles", self.tiles_of(row0, end))?;
            Ok([g, first, row0, end, count])
        };
        let groups = self.groups;
        let grid = self.grid();
        grid.for_each_with(k, cursor, |k, &[g, first, row0, end, count], t| {
            // Move to the group that holds tile t (the cursor only moves forward: t grows).
            k.while_(
                |k| {
                    let more = k.cmp(CmpOp::Lt, g, groups)?;
                    let past = k.cmp(CmpOp::Ge, t, Expr::from(first) + count)?;
                    k.and(more, more, past)?;
                    Ok(more)
                },
                |k| {
                    k.assign(first, Expr::from(first) + count)?;
                    k.assign(g, Expr::from(g) + 1)?;
                    if self.grouping == Grouping::Contiguous {
                        k.assign(row0, end)?;
                    }
                    let next = self.group_end(k, g, row0)?;
                    let next = k.bind("grp_end_next", next);
                    k.assign(end, next)?;
                    k.assign(count, self.tiles_of(row0, end))?;
                    Ok(())
                },
            )?;
            let live = k.cmp(CmpOp::Lt, g, groups)?;
            k.if_(live, |k| {
                let local = k.let_("grp_t", Expr::from(t) - first)?;
                let m_tiles = k.let_(
                    "grp_mtiles",
                    Expr::ceil_div(Expr::from(end) - row0, GemmConfig::BM),
                )?;
                let band = Band::Rows(self.group_m);
                let (mb, nb) = banded(k, local, m_tiles, self.per_band, band)?;
                let group = GroupTile {
                    g: k.let_("g", g)?,
                    row0: k.let_(
                        "tile_row0",
                        Expr::from(row0) + Expr::from(mb) * GemmConfig::BM,
                    )?,
                    end: k.let_("g_end", end)?,
                    grouping: self.grouping,
                };
                body(
                    k,
                    Tile {
                        mb,
                        rows: GemmConfig::BM,
                        ksplit: None,
                        stream: None,
                        nb,
                        group: Some(group),
                        item: t,
                    },
                )
            })
            .end()
        })
    }

    fn is_last(&self, k: &mut KernelBuilder, tile: &Tile) -> Result<Pred> {
        self.grid().is_last(k, tile.item)
    }
}
