//! Scope ids: `cta_id`, `thread_id`, `warp_id`, `lane_id`, `warpgroup_id`, `warp_id_in_wg`,
//! `cluster_id`, `cta_id_in_cluster`. Each reads its special registers (PTX ISA 10 "Special
//! Registers": `%tid`, `%ctaid`, `%laneid`, `%clusterid`, `%cluster_ctaid`) and states an extent;
//! together the extents are the launch's grid, block and cluster dimensions, and two that disagree
//! are an error.

use ptx_isa::{Dim, SpecialReg};

use super::KernelBuilder;
use super::built::{PersistentGrid, PersistentUnit};
use super::error::Result;
use super::expr::{Expr, Var, VarFacts, eval};
use crate::signature::MAX_CLUSTER_SIZE;

const DIMS: [Dim; 3] = [Dim::X, Dim::Y, Dim::Z];

/// The launch extents stated so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchState {
    grid: Option<[Expr; 3]>,
    block: Option<[u32; 3]>,
    threads: Option<(u32, &'static str)>,
    flat_assumed: bool,
    needs_warpgroups: bool,
    clusters: Option<[Expr; 3]>,
    cluster: Option<[u32; 3]>,
    preferred: Option<[u32; 3]>,
    flat: Option<Var>,
    persistent: Option<PersistentGrid>,
}

#[track_caller]
fn pad<T: Clone>(v: &[T], one: T) -> [T; 3] {
    [
        v.first().cloned().unwrap_or(one.clone()),
        v.get(1).cloned().unwrap_or(one.clone()),
        v.get(2).cloned().unwrap_or(one),
    ]
}

#[track_caller]
fn show(e: &[Expr; 3]) -> String {
    format!("[{}, {}, {}]", e[0], e[1], e[2])
}

impl KernelBuilder {
    /// CTAs per cluster, once a cluster scope id has stated them.
    pub(crate) fn cluster_ctas(&self) -> Option<u32> {
        self.launch.cluster.map(|c| c[0] * c[1] * c[2])
    }

    /// Marks the kernel as one that works in whole warpgroups (its block must be a multiple of
    /// 128 threads, checked at `finish`).
    pub(crate) fn need_warpgroups(&mut self) {
        self.launch.needs_warpgroups = true;
    }

    /// Threads per CTA, once a scope id has stated them.
    pub(crate) fn block_threads(&self) -> Option<u32> {
        self.launch
            .block
            .map(|b| b[0] * b[1] * b[2])
            .or(self.launch.threads.map(|(t, _)| t))
    }

    #[track_caller]
    fn rank_ok(&self, what: &str, n: usize) -> Result<()> {
        if !(1..=3).contains(&n) {
            return Err(self.scope_err(format!("{what} takes 1 to 3 extents, not {n}")));
        }
        Ok(())
    }

    /// The host extents of `what` (`cta_id`, `cluster_id`), stated for a grid that is not
    /// persistent, recorded padded to 3 in the launch's `slot` (its grid of CTAs or of clusters)
    /// unless they disagree with extents stated before.
    #[track_caller]
    fn grid_extents<const N: usize, E: Into<Expr>>(
        &mut self,
        what: &str,
        extents: [E; N],
        slot: fn(&mut LaunchState) -> &mut Option<[Expr; 3]>,
    ) -> Result<Vec<Expr>> {
        self.rank_ok(what, N)?;
        if self.launch.persistent.is_some() {
            return Err(self.scope_err(format!(
                "{what} in a persistent grid: the launch chooses its CTAs; use the persistent ids \
                 (persistent_cta_id, persistent_cluster_id) and grid_size"
            )));
        }
        let ext = self.host_extents(what, extents.into_iter().map(Into::into).collect())?;
        let padded = pad(&ext, Expr::Const(1));
        let prev = slot(&mut self.launch).clone();
        self.agrees(what, prev, &padded, show)?;
        *slot(&mut self.launch) = Some(padded);
        Ok(ext)
    }

    /// The extents `what` states, `new`, are those stated before, `prev` (when there were any);
    /// `show` writes them in the error.
    #[track_caller]
    fn agrees<T: PartialEq>(
        &self,
        what: &str,
        prev: Option<T>,
        new: &T,
        show: impl Fn(&T) -> String,
    ) -> Result<()> {
        match prev {
            Some(prev) if prev != *new => Err(self.scope_err(format!(
                "{what} extents {} disagree with {} stated before",
                show(new),
                show(&prev)
            ))),
            _ => Ok(()),
        }
    }

    /// Host-evaluable extents: constants and symbolic extents only.
    #[track_caller]
    fn host_extents(&self, what: &str, ext: Vec<Expr>) -> Result<Vec<Expr>> {
        let mut out = Vec::with_capacity(ext.len());
        for e in ext {
            let e = self.simplify(&e);
            for v in e.vars() {
                if self.vars[v.0 as usize].symbol.is_none() {
                    return Err(self.scope_err(format!(
                        "{what} extent {} reads `{}`, which the host does not know at launch",
                        self.show(&e),
                        self.var_name(v)
                    )));
                }
            }
            if e.as_const().is_some_and(|c| c <= 0) {
                return Err(
                    self.scope_err(format!("{what} extent {} is not positive", self.show(&e)))
                );
            }
            out.push(e);
        }
        Ok(out)
    }

    /// A special register as a variable below `max` (exclusive) when that is known.
    #[track_caller]
    fn sreg_var(&mut self, name: &str, s: SpecialReg, below: Option<i64>) -> Result<Var> {
        let r = self.f.sreg_u32(s)?;
        Ok(self.new_var(
            name,
            Some(r),
            VarFacts::range(0, below.map(|b| b - 1), 1),
            None,
        ))
    }

    /// The CTA's index in the grid, one variable per extent (`bx, by = T.cta_id([GM, GN])`):
    /// `%ctaid.x/y/z`. The extents (constants or expressions of symbolic extents, such as
    /// `Expr::ceil_div(n, 256)`) are the grid.
    #[track_caller]
    pub fn cta_id<const N: usize, E: Into<Expr>>(&mut self, extents: [E; N]) -> Result<[Var; N]> {
        let ext = self.grid_extents("cta_id", extents, |l| &mut l.grid)?;
        let mut out = [Var(0); N];
        for (d, v) in out.iter_mut().enumerate() {
            let extent = ext.get(d).cloned().unwrap_or(Expr::Const(1));
            let below = crate::kernel::expr::bounds(&extent, self.vars.as_slice()).1;
            *v = self.sreg_var("cta_id", SpecialReg::CtaId(DIMS[d]), below)?;
        }
        Ok(out)
    }

    /// The CTA's index in a persistent grid over `work` items (`%ctaid.x`): the launcher, not the
    /// kernel, chooses the grid, as `min(work, SMs x CTAs resident per SM)` CTAs in x
    /// (`runtime::Residency`; the SM count is the device's, the CTAs per SM the driver's occupancy
    /// for this block and shared memory, at most `ctas_per_sm` when given). Each CTA then walks
    /// the items from its index in steps of [`KernelBuilder::grid_size`]
    /// ([`KernelBuilder::for_stride`]). `work` is a constant or an expression of symbolic extents;
    /// the grid is 1-D, of single CTAs ([`KernelBuilder::persistent_cluster_id`] for clusters).
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("persist", Target::Sm90a);
    /// let cta = k.persistent_cta_id(4096, None)?; // 4096 tiles
    /// k.thread_id([128])?;
    /// assert_eq!(k.var_name(cta), "cta_id");
    /// let built = k.finish()?;
    /// assert!(built.launch_spec().persistent.is_some());
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn persistent_cta_id(
        &mut self,
        work: impl Into<Expr>,
        ctas_per_sm: Option<u32>,
    ) -> Result<Var> {
        if ctas_per_sm == Some(0) {
            return Err(self.scope_err("a persistent grid of 0 CTAs per SM"));
        }
        let work = self.persistent(PersistentUnit::Cta, work.into(), ctas_per_sm)?;
        // The launcher's grid is at most `work` CTAs, so the index is below it.
        let below = crate::kernel::expr::bounds(&work, self.vars.as_slice()).1;
        self.sreg_var("cta_id", SpecialReg::CtaId(Dim::X), below)
    }

    /// The cluster's index in a persistent grid of clusters over `work` items
    /// (`%clusterid.x`): [`KernelBuilder::persistent_cta_id`] for a kernel whose CTAs work in
    /// clusters (a CTA pair sharing its B tile). The launcher gives it `min(work, clusters the
    /// device holds at once)` clusters in x (`cuOccupancyMaxActiveClusters` for this cluster
    /// shape, block and shared memory), so the grid is that many times the cluster's CTAs. The
    /// cluster's shape comes from [`KernelBuilder::cta_id_in_cluster`], 1-D (`[c]`); each cluster
    /// walks the items in steps of [`KernelBuilder::cluster_grid_size`].
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::{KernelBuilder, PersistentUnit};
    ///
    /// let mut k = KernelBuilder::new("pairs", Target::Sm90a);
    /// let cluster = k.persistent_cluster_id(2048)?; // 2048 tile pairs
    /// let clusters = k.cluster_grid_size()?;
    /// k.cta_id_in_cluster([2], None)?;
    /// k.thread_id([128])?;
    /// k.for_stride(cluster, 2048, clusters, |_k, _pair| Ok(()))?;
    /// let built = k.finish()?;
    /// let spec = built.launch_spec();
    /// assert_eq!(spec.persistent.as_ref().map(|p| p.unit), Some(PersistentUnit::Cluster));
    /// assert!(built.ptx().contains("%nclusterid.x"));
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn persistent_cluster_id(&mut self, work: impl Into<Expr>) -> Result<Var> {
        let work = self.persistent(PersistentUnit::Cluster, work.into(), None)?;
        let below = crate::kernel::expr::bounds(&work, self.vars.as_slice()).1;
        self.sreg_var("cluster_id", SpecialReg::ClusterId(Dim::X), below)
    }

    /// The number of clusters in the grid's x dimension, `%nclusterid.x`: the stride of a
    /// persistent grid of clusters ([`KernelBuilder::persistent_cluster_id`]). At least 1, and at
    /// most the persistent work's bound where one was stated before.
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("k", Target::Sm90a);
    /// k.persistent_cluster_id(64)?;
    /// let n = k.cluster_grid_size()?;
    /// assert_eq!(k.var_name(n), "cluster_grid_size");
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn cluster_grid_size(&mut self) -> Result<Var> {
        let clusters = self.launch.clusters.clone();
        self.grid_count(
            "cluster_grid_size",
            clusters,
            SpecialReg::NClusterId(Dim::X),
        )
    }

    /// The special register `count` (`%nctaid.x`, `%nclusterid.x`) as the variable `name`: at
    /// least 1, at most the bound of the `x` extent stated for it, where there is one.
    #[track_caller]
    fn grid_count(
        &mut self,
        name: &str,
        stated: Option<[Expr; 3]>,
        count: SpecialReg,
    ) -> Result<Var> {
        let max = stated.and_then(|g| crate::kernel::expr::bounds(&g[0], self.vars.as_slice()).1);
        let r = self.f.sreg_u32(count)?;
        Ok(self.new_var(name, Some(r), VarFacts::range(1, max, 1), None))
    }

    /// States a persistent grid over `work` (host-known) in `unit`s and returns the work extent.
    #[track_caller]
    fn persistent(
        &mut self,
        unit: PersistentUnit,
        work: Expr,
        ctas_per_sm: Option<u32>,
    ) -> Result<Expr> {
        let what = match unit {
            PersistentUnit::Cta => "persistent_cta_id",
            PersistentUnit::Cluster => "persistent_cluster_id",
        };
        let Some(work) = self.host_extents(what, vec![work])?.pop() else {
            return Err(self.scope_err(format!("{what} takes one work extent")));
        };
        let p = PersistentGrid {
            work: work.clone(),
            unit,
            ctas_per_sm,
        };
        match &self.launch.persistent {
            Some(prev) if *prev != p => {
                return Err(self.scope_err(format!(
                    "{what} over {} disagrees with the persistent grid over {} stated before",
                    self.show(&p.work),
                    self.show(&prev.work)
                )));
            }
            Some(_) => {}
            None if self.launch.grid.is_some() || self.launch.clusters.is_some() => {
                return Err(self.scope_err(format!(
                    "{what} after cta_id or cluster_id: the grid is either stated or persistent"
                )));
            }
            None => {}
        }
        let w = [work.clone(), Expr::Const(1), Expr::Const(1)];
        match unit {
            PersistentUnit::Cta => self.launch.grid = Some(w),
            // The grid is the clusters times the cluster's shape (`resolve_launch`).
            PersistentUnit::Cluster => self.launch.clusters = Some(w),
        }
        self.launch.persistent = Some(p);
        Ok(work)
    }

    /// The number of CTAs in the grid's x dimension, `%nctaid.x`: a persistent kernel's stride
    /// ([`KernelBuilder::persistent_cta_id`]), known only at launch. It is at least 1, and at most
    /// the grid's (or persistent grid's work's) bound where one was stated before.
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("k", Target::Sm90a);
    /// k.persistent_cta_id(4096, None)?;
    /// let n = k.grid_size()?;
    /// assert_eq!(k.divisibility(&n.into()), 1);
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn grid_size(&mut self) -> Result<Var> {
        let grid = self.launch.grid.clone();
        self.grid_count("grid_size", grid, SpecialReg::NCtaId(Dim::X))
    }

    /// The persistent grid stated, if any.
    pub(crate) fn persistent_grid(&self) -> Option<PersistentGrid> {
        self.launch.persistent.clone()
    }

    #[track_caller]
    fn set_block(&mut self, block: [u32; 3]) -> Result<()> {
        let total: u64 = block.iter().map(|&b| u64::from(b)).product();
        if block.contains(&0) || total > 1024 || block[2] > 64 {
            return Err(self.scope_err(format!(
                "thread extents {block:?}: {total} threads (1 to 1024, z at most 64)"
            )));
        }
        self.agrees("thread_id", self.launch.block, &block, |b| format!("{b:?}"))?;
        if let Some((t, by)) = self.launch.threads {
            if u64::from(t) != total {
                return Err(self.scope_err(format!(
                    "thread_id extents {block:?} make {total} threads; {by} said {t}"
                )));
            }
        }
        if self.launch.flat_assumed && (block[1] > 1 || block[2] > 1) {
            return Err(self.scope_err(
                "a warp-level id was taken as of a 1-D block before thread_id stated a multi-dimensional block; state thread_id first",
            ));
        }
        self.launch.block = Some(block);
        Ok(())
    }

    #[track_caller]
    fn set_threads(&mut self, t: u32, by: &'static str) -> Result<()> {
        if t == 0 || t > 1024 {
            return Err(self.scope_err(format!("{by} makes {t} threads (1 to 1024)")));
        }
        if let Some((prev, pby)) = self.launch.threads {
            if prev != t {
                return Err(self.scope_err(format!("{by} makes {t} threads; {pby} said {prev}")));
            }
        }
        if let Some(b) = self.launch.block {
            let total = b[0] * b[1] * b[2];
            if total != t {
                return Err(self.scope_err(format!(
                    "{by} makes {t} threads; thread_id said {b:?} = {total}"
                )));
            }
        }
        self.launch.threads = Some((t, by));
        Ok(())
    }

    /// The thread's index in the CTA, one variable per extent (`tx = T.thread_id([128])`):
    /// `%tid.x/y/z`. The extents are the block; they set `.maxntid`.
    #[track_caller]
    pub fn thread_id<const N: usize>(&mut self, extents: [u32; N]) -> Result<[Var; N]> {
        self.rank_ok("thread_id", N)?;
        self.set_block(pad(&extents, 1))?;
        let mut out = [Var(0); N];
        for (d, v) in out.iter_mut().enumerate() {
            *v = self.sreg_var(
                "thread_id",
                SpecialReg::Tid(DIMS[d]),
                Some(i64::from(extents[d])),
            )?;
        }
        // A 1-D block's thread index is the flat one warp and lane ids derive from.
        if N == 1 && self.launch.flat.is_none() {
            self.launch.flat = Some(out[0]);
        }
        Ok(out)
    }

    /// The flat thread index `tid.x + tid.y * ntid.x + tid.z * ntid.x * ntid.y` (just `tid.x` for a
    /// 1-D block, or when no block was stated yet, which is then taken to be 1-D).
    #[track_caller]
    pub(crate) fn flat_tid(&mut self) -> Result<Var> {
        if let Some(v) = self.launch.flat {
            return Ok(v);
        }
        let v = match self.launch.block {
            Some([bx, by, bz]) if by > 1 || bz > 1 => {
                let x = self.sreg_var("tid.x", SpecialReg::Tid(Dim::X), Some(i64::from(bx)))?;
                let y = self.sreg_var("tid.y", SpecialReg::Tid(Dim::Y), Some(i64::from(by)))?;
                let mut e = x + y * bx;
                if bz > 1 {
                    let z = self.sreg_var("tid.z", SpecialReg::Tid(Dim::Z), Some(i64::from(bz)))?;
                    e = e + z * (bx * by);
                }
                self.let_("flat_tid", e)?
            }
            _ => {
                self.launch.flat_assumed = true;
                let below = self
                    .launch
                    .block
                    .map(|b| i64::from(b[0]))
                    .or(self.launch.threads.map(|(t, _)| i64::from(t)))
                    .unwrap_or(1024);
                self.sreg_var("tid.x", SpecialReg::Tid(Dim::X), Some(below))?
            }
        };
        self.launch.flat = Some(v);
        Ok(v)
    }

    /// The warp's index in the CTA (`T.warp_id([4])`): flat thread index / 32. `w` warps make the
    /// block `32 * w` threads.
    #[track_caller]
    pub fn warp_id(&mut self, [w]: [u32; 1]) -> Result<Var> {
        self.set_threads(w.saturating_mul(32), "warp_id")?;
        let flat = self.flat_tid()?;
        self.let_("warp_id", flat / 32)
    }

    /// The thread's lane in its warp (`T.lane_id([32])`): `%laneid`; the extent is 32.
    #[track_caller]
    pub fn lane_id(&mut self, [l]: [u32; 1]) -> Result<Var> {
        if l != 32 {
            return Err(self.scope_err(format!("lane_id extent {l}: a warp has 32 lanes")));
        }
        self.sreg_var("lane_id", SpecialReg::LaneId, Some(32))
    }

    /// The warpgroup's index in the CTA (`T.warpgroup_id([2])`): flat thread index / 128. `g`
    /// warpgroups make the block `128 * g` threads.
    #[track_caller]
    pub fn warpgroup_id(&mut self, [g]: [u32; 1]) -> Result<Var> {
        self.set_threads(g.saturating_mul(128), "warpgroup_id")?;
        self.launch.needs_warpgroups = true;
        let flat = self.flat_tid()?;
        self.let_("warpgroup_id", flat / 128)
    }

    /// The warp's index in its warpgroup (`T.warp_id_in_wg([4])`): (flat / 32) % 4; the extent
    /// is 4, and the block must be whole warpgroups.
    #[track_caller]
    pub fn warp_id_in_wg(&mut self, [w]: [u32; 1]) -> Result<Var> {
        if w != 4 {
            return Err(
                self.scope_err(format!("warp_id_in_wg extent {w}: a warpgroup has 4 warps"))
            );
        }
        self.launch.needs_warpgroups = true;
        let flat = self.flat_tid()?;
        self.let_("warp_id_in_wg", (flat / 32) % 4)
    }

    /// The cluster's index in the grid (`T.cluster_id([C])`): `%clusterid.x/y/z`. The grid is
    /// these extents times the cluster's.
    #[track_caller]
    pub fn cluster_id<const N: usize, E: Into<Expr>>(
        &mut self,
        extents: [E; N],
    ) -> Result<[Var; N]> {
        self.grid_extents("cluster_id", extents, |l| &mut l.clusters)?;
        let mut out = [Var(0); N];
        for (d, v) in out.iter_mut().enumerate() {
            *v = self.sreg_var("cluster_id", SpecialReg::ClusterId(DIMS[d]), None)?;
        }
        Ok(out)
    }

    /// The CTA's index in its cluster (`T.cta_id_in_cluster([S], preferred=[P])`):
    /// `%cluster_ctaid.x/y/z`. The extents are the cluster dimensions (at most 16 CTAs; more than
    /// 8 is non-portable); `preferred`, multiples of them, the preferred cluster dimensions.
    #[track_caller]
    pub fn cta_id_in_cluster<const N: usize>(
        &mut self,
        extents: [u32; N],
        preferred: Option<[u32; N]>,
    ) -> Result<[Var; N]> {
        self.rank_ok("cta_id_in_cluster", N)?;
        let c = pad(&extents, 1);
        let size: u64 = c.iter().map(|&x| u64::from(x)).product();
        if c.contains(&0) || size > MAX_CLUSTER_SIZE {
            return Err(self.scope_err(format!(
                "cluster {c:?} of {size} CTAs (1 to {MAX_CLUSTER_SIZE})"
            )));
        }
        self.agrees("cta_id_in_cluster", self.launch.cluster, &c, |c| {
            format!("{c:?}")
        })?;
        if let Some(p) = preferred {
            let p = pad(&p, 1);
            if p.iter().zip(&c).any(|(p, c)| *p == 0 || p % c != 0) {
                return Err(self.scope_err(format!(
                    "preferred cluster {p:?} is not a multiple of the cluster {c:?}"
                )));
            }
            self.launch.preferred = Some(p);
        }
        self.launch.cluster = Some(c);
        let mut out = [Var(0); N];
        for (d, v) in out.iter_mut().enumerate() {
            *v = self.sreg_var("cta_id_in_cluster", SpecialReg::ClusterCtaId(DIMS[d]), None)?;
        }
        Ok(out)
    }

    /// The CTA's rank in its cluster, `%cluster_ctarank` (what `mapa` takes).
    #[track_caller]
    pub fn cta_rank_in_cluster(&mut self) -> Result<Var> {
        self.sreg_var("cta_rank", SpecialReg::ClusterCtaRank, None)
    }

    /// Resolves the extents stated into grid, block, cluster and preferred cluster, checking that
    /// they agree.
    #[allow(clippy::type_complexity)]
    #[track_caller]
    pub(crate) fn resolve_launch(
        &mut self,
    ) -> Result<([Expr; 3], [u32; 3], Option<[u32; 3]>, Option<[u32; 3]>)> {
        let block = match (self.launch.block, self.launch.threads) {
            (Some(b), _) => b,
            (None, Some((t, _))) => [t, 1, 1],
            (None, None) => {
                return Err(
                    self.scope_err("no thread extent: state thread_id, warp_id or warpgroup_id")
                );
            }
        };
        let total = block[0] * block[1] * block[2];
        if self.launch.needs_warpgroups && total % 128 != 0 {
            return Err(self.scope_err(format!(
                "warpgroup ids need whole warpgroups; the block has {total} threads"
            )));
        }
        let cluster = self.launch.cluster;
        match self.launch.persistent.as_ref().map(|p| p.unit) {
            Some(PersistentUnit::Cta) if cluster.is_some() => {
                return Err(self.scope_err(
                    "persistent_cta_id sizes a grid of single CTAs; a kernel in clusters takes persistent_cluster_id",
                ));
            }
            Some(PersistentUnit::Cluster) => match cluster {
                None => {
                    return Err(self.scope_err(
                        "persistent_cluster_id needs the cluster's shape: state cta_id_in_cluster",
                    ));
                }
                Some([_, y, z]) if y > 1 || z > 1 => {
                    return Err(self.scope_err(format!(
                        "a persistent grid of clusters is 1-D; the cluster is {:?}",
                        [cluster.map_or(1, |c| c[0]), y, z]
                    )));
                }
                Some(_) => {}
            },
            _ => {}
        }
        let mut grid = self.launch.grid.clone();
        if let Some(clusters) = self.launch.clusters.clone() {
            let cl = cluster.unwrap_or([1, 1, 1]);
            let derived: [Expr; 3] =
                std::array::from_fn(|d| self.simplify(&(clusters[d].clone() * cl[d])));
            if let Some(g) = &grid {
                let known = |e: &Expr| e.as_const();
                let agree = g
                    .iter()
                    .zip(&derived)
                    .all(|(a, b)| a == b || (known(a).is_some() && known(a) == known(b)));
                if !agree {
                    return Err(self.scope_err(format!(
                        "cta_id extents {} disagree with cluster_id x cta_id_in_cluster = {}",
                        show(g),
                        show(&derived)
                    )));
                }
            }
            grid = Some(derived);
        }
        let grid = grid.unwrap_or([Expr::Const(1), Expr::Const(1), Expr::Const(1)]);
        if let Some(c) = cluster {
            for d in 0..3 {
                let g = eval(&grid[d], &|_| None);
                if let Some(g) = g {
                    if g % i64::from(c[d]) != 0 {
                        return Err(self.scope_err(format!(
                            "grid {} is not a whole number of clusters {c:?}",
                            show(&grid)
                        )));
                    }
                }
            }
        }
        Ok((grid, block, cluster, self.launch.preferred))
    }
}
