//! `reduce`: combine values (sum, max, min) across a thread's registers and then across the
//! threads of a warp, a warpgroup or the CTA; every thread of the scope gets the result (an
//! all-reduce, so the value is already broadcast over the reduced axis).
//!
//! How each level lowers:
//! - **thread**: a balanced tree over the registers (independent instructions issue together);
//! - **warp**: `redux.sync` for 32-bit integers on sm_80+ (PTX ISA 9.7.13.10: `.add/.min/.max`
//!   on `.u32/.s32`), else a butterfly of five `shfl.sync.bfly.b32` (9.7.9.6) with offsets 16, 8,
//!   4, 2, 1, after which every lane holds the result;
//! - **warpgroup / CTA**: lane 0 of each warp writes its warp's value to a small shared array, a
//!   barrier (`bar.sync`, 9.7.13.1: named barrier 1 + warpgroup for a warpgroup, 0 for the CTA)
//!   orders the writes before the reads, and every thread combines the array (broadcast reads,
//!   no bank conflicts). Inside a loop or branch a second barrier keeps the next trip's writes
//!   from overtaking this trip's reads.
//!
//! - **cluster**: the CTA's value, then one word per CTA in every CTA's shared memory, written
//!   through distributed shared memory and read after a cluster barrier.
//!
//! Packed `f16x2`/`bf16x2` registers reduce both halves at once (`add`/`max`/`min` on the packed
//! type, 9.7.4); shuffles move them as `.b32`.

use layouts::fragment::TvLayout;
use ptx_isa::builder::{ReduxOp, ShflMode};
use ptx_isa::spaces::Shared;
use ptx_isa::{Addr, Reg, ScalarType, Src, ty};

use super::KernelBuilder;
use super::buffer::Elem;
use super::error::Result;

/// How values combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `a + b`.
    Sum,
    /// `max(a, b)`.
    Max,
    /// `min(a, b)`.
    Min,
}

/// Which threads' values a reduction combines (each thread's own registers first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceScope {
    /// One thread's registers.
    Thread,
    /// The 32 lanes of a warp.
    Warp,
    /// The 128 threads of a warpgroup (the CTA must be whole warpgroups).
    Warpgroup,
    /// Every thread of the CTA (a multiple of 32 threads).
    Cta,
    /// Every thread of every CTA of the cluster: the CTA's value is written into each CTA's
    /// shared words through distributed shared memory (`mapa` + `st.shared::cluster`, PTX ISA
    /// 9.7.9.21 / 9.7.9.9), ordered by `barrier.cluster.arrive.release` / `wait.acquire`
    /// (9.7.13.4). The cluster's shape must be stated (`cluster_id` / `cta_id_in_cluster`).
    Cluster,
}

impl std::fmt::Display for ReduceScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReduceScope::Thread => "thread",
            ReduceScope::Warp => "warp",
            ReduceScope::Warpgroup => "warpgroup",
            ReduceScope::Cta => "cta",
            ReduceScope::Cluster => "cluster",
        })
    }
}

/// A 32-bit register type `reduce` combines: `f32`, `u32`, `s32`, `f16x2`, `bf16x2`.
pub trait Reducible: ty::RegType {}
impl Reducible for ty::F32 {}
impl Reducible for ty::U32 {}
impl Reducible for ty::S32 {}
impl Reducible for ty::F16x2 {}
impl Reducible for ty::Bf16x2 {}

impl KernelBuilder {
    /// `d = op(a, b)`.
    fn combine<T: Reducible>(
        &mut self,
        op: ReduceOp,
        d: Reg<T>,
        a: Reg<T>,
        b: Reg<T>,
    ) -> Result<()> {
        match op {
            ReduceOp::Sum => self.f.add(d, a, b)?,
            ReduceOp::Max => self.f.max(d, a, b)?,
            ReduceOp::Min => self.f.min(d, a, b)?,
        }
        Ok(())
    }

    /// Combines `vals` in a balanced tree into a fresh register.
    fn reduce_regs<T: Reducible>(&mut self, op: ReduceOp, vals: &[Reg<T>]) -> Result<Reg<T>> {
        let mut level: Vec<Reg<T>> = vals.to_vec();
        if level.len() == 1 {
            let d = self.f.reg::<T>();
            self.f.mov(d, level[0])?;
            return Ok(d);
        }
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                match pair {
                    [a, b] => {
                        let d = self.f.reg::<T>();
                        self.combine(op, d, *a, *b)?;
                        next.push(d);
                    }
                    [a] => next.push(*a),
                    _ => {}
                }
            }
            level = next;
        }
        Ok(level[0])
    }

    /// Every lane of the warp gets `op` over the warp's `v` (in place).
    fn reduce_warp<T: Reducible>(&mut self, op: ReduceOp, v: Reg<T>) -> Result<()> {
        let redux = match (T::TYPE, op) {
            (ScalarType::U32 | ScalarType::S32, ReduceOp::Sum) => Some(ReduxOp::Add),
            (ScalarType::U32 | ScalarType::S32, ReduceOp::Max) => Some(ReduxOp::Max),
            (ScalarType::U32 | ScalarType::S32, ReduceOp::Min) => Some(ReduxOp::Min),
            _ => None,
        };
        if let Some(r) = redux {
            // redux.sync: sm_80 and later (PTX ISA 9.7.13.10); the builder's gating refuses older.
            self.f.redux_sync(r, v, v, 0xffff_ffffu32)?;
            return Ok(());
        }
        let t = self.f.reg::<T>();
        for offset in [16u32, 8, 4, 2, 1] {
            // c = 0x1f: clamp at lane 31, whole-warp segment (PTX ISA 9.7.9.6).
            self.f
                .shfl_sync(ShflMode::Bfly, t, None, v, offset, 0x1fu32, 0xffff_ffffu32)?;
            self.combine(op, v, v, t)?;
        }
        Ok(())
    }

    /// `op` over `vals` in every thread of `scope`, returned to every one of them: the row
    /// maximum and sum of a softmax, the sum of squares of an RMSNorm.
    ///
    /// Every thread of the scope must reach the call (warp scope: all 32 lanes, `shfl.sync` with
    /// a full mask; warpgroup, CTA and cluster scopes: their barriers), as with
    /// `__syncthreads()`: not inside a branch some of them skip.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{KernelBuilder, ReduceOp, ReduceScope, TensorOpts};
    /// let mut k = KernelBuilder::new("row_sum", Target::Sm90a);
    /// let x = k.tensor::<ty::F32>("x", [1024], TensorOpts::default().align(16))?;
    /// let s = k.tensor::<ty::F32>("s", [1], TensorOpts::default())?;
    /// let [t] = k.thread_id([256])?;
    /// let v = k.load_n(&x, [t * 4], 4, 0.0f32)?;
    /// let total = k.reduce(ReduceOp::Sum, &v, ReduceScope::Cta)?; // every thread has it
    /// let first = k.cmp(ptxkit::isa::builder::CmpOp::Eq, t, 0)?;
    /// k.if_(first, |k| k.store(&s, [0], total)).end()?;
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert_eq!(ptx.matches("shfl.sync.bfly.b32").count(), 5); // within each warp
    /// assert_eq!(ptx.matches("ld.shared.v4.f32").count(), 2); // then the 8 warps' words
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn reduce<T: Reducible>(
        &mut self,
        op: ReduceOp,
        vals: &[Reg<T>],
        scope: ReduceScope,
    ) -> Result<Reg<T>> {
        if vals.is_empty() {
            return Err(self.scope_err(format!("reduce {op:?} over no values")));
        }
        let v = self.reduce_regs(op, vals)?;
        if scope == ReduceScope::Thread {
            return Ok(v);
        }
        self.reduce_warp(op, v)?;
        if scope == ReduceScope::Warp {
            return Ok(v);
        }
        let (threads, group) = self.reduction_group(scope)?;
        let warps = group / 32;
        let cta_value = if warps == 1 {
            v
        } else {
            self.reduce_shared(op, v, scope, threads, warps)?
        };
        if scope != ReduceScope::Cluster {
            return Ok(cta_value);
        }
        self.reduce_cluster(op, cta_value)
    }

    /// The CTA's thread count and the threads one `scope` reduction combines (128 for a
    /// warpgroup, the CTA's otherwise), refused unless both are whole warps (and warpgroups).
    fn reduction_group(&self, scope: ReduceScope) -> Result<(u32, u32)> {
        let threads = self.block_threads().ok_or_else(|| {
            self.scope_err(format!(
                "a {scope} reduction needs the block size: state thread_id (or warp_id) first"
            ))
        })?;
        let group = match scope {
            ReduceScope::Warpgroup => 128,
            _ => threads,
        };
        if threads % 32 != 0 || threads % group != 0 || group > 1024 {
            return Err(self.scope_err(format!(
                "a {scope} reduction over {threads} threads: whole warps{} are needed",
                if scope == ReduceScope::Warpgroup {
                    " and warpgroups"
                } else {
                    ""
                }
            )));
        }
        Ok((threads, group))
    }

    /// The CTA's (or warpgroup's) value from each warp's, through one shared word per warp.
    fn reduce_shared<T: Reducible>(
        &mut self,
        op: ReduceOp,
        v: Reg<T>,
        scope: ReduceScope,
        threads: u32,
        warps: u32,
    ) -> Result<Reg<T>> {
        let words = self.exchange_warp_words(&[v], scope, threads, warps, false)?;
        self.reduce_regs(op, &words[0])
    }

    /// Every warp's `vals` (already the same in each of its lanes) to every thread of the group,
    /// in one barrier round: lane 0 of each warp writes its values to a shared array of one
    /// row of words per value, a barrier (`bar.sync`, PTX ISA 9.7.13.1) orders the writes before
    /// the reads, and every thread reads its group's words of each value (broadcast reads, no
    /// bank conflicts). Returns, per value, the group's `warps` words; or, `by_lane`, one word:
    /// warp `lane`'s (lanes past the group's warps read the last warp's: the caller masks them),
    /// for a second warp-level combine that holds three registers, not three per warp. Inside a
    /// loop or branch a second barrier keeps the next trip's writes from overtaking this trip's
    /// reads.
    fn exchange_warp_words<T: Reducible>(
        &mut self,
        vals: &[Reg<T>],
        scope: ReduceScope,
        threads: u32,
        warps: u32,
        by_lane: bool,
    ) -> Result<Vec<Vec<Reg<T>>>> {
        // One row of words per value, each row whole 16-byte vectors (a warp's word at `warp`).
        let stride = (threads / 32).next_multiple_of(4);
        let n = self.reductions;
        self.reductions += 1;
        let scratch = self
            .alloc_shared::<ty::U32>(&format!("reduce{n}"), &[stride * vals.len() as u32], 16)?
            .shared_base()
            .ok_or_else(|| self.scope_err("reduce scratch is not shared memory (internal)"))?;
        let flat = self.flat_tid()?;
        let warp = self.let_("warp", flat / 32)?;
        let lane = self.let_("lane", flat % 32)?;
        let is_lane0 = self.cmp(ptx_isa::builder::CmpOp::Eq, lane, 0)?;
        let slot = self.eval(warp * 4)?;
        let at = self.f.reg::<ty::U32>();
        self.f.add(at, scratch, slot)?;
        for (j, &v) in vals.iter().enumerate() {
            self.f.when(is_lane0);
            self.f.st(
                Addr::<Shared>::reg32(at).offset(4 * (stride as i64) * j as i64),
                v,
            )?;
        }
        let barrier = |k: &mut KernelBuilder| -> Result<()> {
            match scope {
                ReduceScope::Warpgroup => {
                    let wg = k.let_("warpgroup", flat / 128)?;
                    let id = k.eval(wg + 1)?;
                    k.f.bar_sync(id, Some(Src::Imm(ptx_isa::Imm::UInt(128))))?;
                    Ok(())
                }
                _ => k.sync_threads(),
            }
        };
        barrier(self)?;
        // This group's words: all of them for the CTA, the warpgroup's four for a warpgroup.
        let first = match scope {
            ReduceScope::Warpgroup => {
                let wg = self.let_("warpgroup", flat / 128)?;
                let off = self.eval(wg * 16)?;
                let a = self.f.reg::<ty::U32>();
                self.f.add(a, scratch, off)?;
                a
            }
            _ => scratch,
        };
        let mut out = Vec::with_capacity(vals.len());
        if by_lane {
            let lane_reg = self.eval(lane)?;
            let idx = self.f.reg::<ty::U32>();
            self.f.min(idx, lane_reg, warps - 1)?;
            let off = self.f.reg::<ty::U32>();
            self.f.shl(off, idx, 2u32)?;
            let at = self.f.reg::<ty::U32>();
            self.f.add(at, first, off)?;
            for j in 0..vals.len() {
                let r = self.f.reg::<T>();
                self.f.ld(
                    r,
                    Addr::<Shared>::reg32(at).offset(4 * (stride as i64) * j as i64),
                )?;
                out.push(vec![r]);
            }
            if self.depth > 0 {
                barrier(self)?;
            }
            return Ok(out);
        }
        for j in 0..vals.len() {
            let row = 4 * (stride as i64) * j as i64;
            let words = self.f.regs::<T>(warps as usize);
            for (c, chunk) in words.chunks(4).enumerate() {
                let at = row + 16 * c as i64;
                match chunk.len() {
                    4 | 2 => self
                        .f
                        .ld_v(chunk, Addr::<Shared>::reg32(first).offset(at))?,
                    _ => {
                        for (i, r) in chunk.iter().enumerate() {
                            self.f
                                .ld(*r, Addr::<Shared>::reg32(first).offset(at + 4 * i as i64))?;
                        }
                    }
                }
            }
            out.push(words);
        }
        if self.depth > 0 {
            barrier(self)?;
        }
        Ok(out)
    }

    /// Arrives at the cluster barrier that shows every CTA of the cluster has started
    /// (`barrier.cluster.arrive.relaxed.aligned`, PTX ISA 9.7.13.3), early: the first cluster
    /// [`reduce`](KernelBuilder::reduce) then only waits on it, so the barrier's round trip
    /// overlaps whatever comes between (a row kernel's loads). Call it once, at the top level,
    /// in every thread, before the first cluster reduction; a no-op after that reduction.
    #[track_caller]
    pub fn cluster_arrive_early(&mut self) -> Result<()> {
        if self.depth > 0 {
            return Err(self.scope_err(
                "cluster_arrive_early inside a loop or branch: every thread must arrive once",
            ));
        }
        if self.cluster_ctas().is_none() {
            return Err(self.scope_err(
                "cluster_arrive_early needs the cluster's shape: state cta_id_in_cluster first",
            ));
        }
        if self.cluster_started || self.cluster_arrived {
            return Ok(());
        }
        self.f
            .barrier_cluster_arrive(ptx_isa::builder::ClusterArrive::Relaxed, true)?;
        self.cluster_arrived = true;
        Ok(())
    }

    /// The cluster's value from each CTA's: thread `i < ctas` writes this CTA's value into word
    /// `rank` of CTA `i`'s array; after the cluster barrier every thread reads its own array.
    fn reduce_cluster<T: Reducible>(&mut self, op: ReduceOp, v: Reg<T>) -> Result<Reg<T>> {
        let ctas = self.cluster_ctas().ok_or_else(|| {
            self.scope_err(
                "a cluster reduction needs the cluster's shape: state cta_id_in_cluster first",
            )
        })?;
        if ctas == 1 {
            return Ok(v);
        }
        let n = self.reductions;
        self.reductions += 1;
        let words = ctas.next_multiple_of(4);
        let scratch = self
            .alloc_shared::<ty::U32>(&format!("reduce{n}_cluster"), &[words], 16)?
            .shared_base()
            .ok_or_else(|| self.scope_err("reduce scratch is not shared memory (internal)"))?;
        let flat = self.flat_tid()?;
        let rank = self.cta_rank_in_cluster()?;
        let writer = self.cmp(ptx_isa::builder::CmpOp::Lt, flat, ctas)?;
        let mine = self.eval(rank * 4)?;
        let local = self.f.reg::<ty::U32>();
        self.f.add(local, scratch, mine)?;
        let peer = self.eval(flat)?;
        let remote = self.f.reg::<ty::U32>();
        if !self.cluster_started {
            // A CTA may write into a peer's shared memory only once the peer has started (CUDA
            // C++ Programming Guide, "Distributed Shared Memory": a cluster barrier first): a
            // relaxed arrive (unless `cluster_arrive_early` made it) and a wait (PTX ISA
            // 9.7.13.3, barrier.cluster). Once at the top level covers every later reduction;
            // inside a loop or branch it is repeated.
            if !self.cluster_arrived {
                self.f
                    .barrier_cluster_arrive(ptx_isa::builder::ClusterArrive::Relaxed, true)?;
            }
            self.f.barrier_cluster_wait(false, true)?;
            self.cluster_arrived = false;
            self.cluster_started = self.depth == 0;
        }
        self.f.when(writer);
        self.f.mapa_shared(remote, local, peer)?;
        self.f.when(writer);
        self.f
            .st(Addr::<ptx_isa::spaces::SharedCluster>::reg32(remote), v)?;
        self.f.cluster_sync()?;
        let vals = self.f.regs::<T>(ctas as usize);
        for (i, r) in vals.iter().enumerate() {
            self.f
                .ld(*r, Addr::<Shared>::reg32(scratch).offset(4 * i as i64))?;
        }
        let out = self.reduce_regs(op, &vals)?;
        if self.depth > 0 {
            // The next trip's writes into a peer must wait until every CTA has read this trip's.
            self.f.cluster_sync()?;
        }
        Ok(out)
    }
}

/// A buffer's shared-window base address, for scratch the reduction addresses itself.
impl<T: Elem> super::Buffer<T> {
    pub(crate) fn shared_base(&self) -> Option<Reg<ty::U32>> {
        match self.storage {
            super::Storage::Shared(r) => Some(r),
            _ => None,
        }
    }
}

/// Which coordinate of a fragment's elements a reduction keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// One result per row: the columns are reduced (a softmax's row max over `S = Q·Kᵀ`).
    Rows,
    /// One result per column: the rows are reduced.
    Cols,
}

/// The result of [`KernelBuilder::reduce_fragment`]: this thread's reduced values, one per row
/// (or column) it holds, each already combined across every lane that holds part of that row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FragmentReduction<T: ty::RegType> {
    /// One register per distinct row (column) the thread holds, in order of first appearance.
    pub values: Vec<Reg<T>>,
    /// For each of the fragment's values, the index into `values` of its row (column): the
    /// broadcast back over the reduced axis.
    pub group: Vec<usize>,
}

impl<T: ty::RegType> FragmentReduction<T> {
    /// The reduced value for fragment value `v` (its row's, or its column's).
    pub fn of_value(&self, v: usize) -> Option<Reg<T>> {
        self.group.get(v).and_then(|&g| self.values.get(g)).copied()
    }
}

impl KernelBuilder {
    /// `op` over the kept axis of a register fragment (a buffer from
    /// [`KernelBuilder::alloc_fragment`]): each thread first combines its own values of each row,
    /// then a butterfly (`shfl.sync.bfly`) over exactly the lane bits whose flip keeps the rows a
    /// thread holds (for a wgmma accumulator, the four lanes of a quad: XOR 1 and 2). Rows spread
    /// over several warps are refused (that needs shared memory: [`KernelBuilder::reduce`]).
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{Axis, KernelBuilder, ReduceOp};
    /// use ptxkit::layouts::fragment::wgmma;
    /// let mut k = KernelBuilder::new("rowmax", Target::Sm90a);
    /// let [_t] = k.thread_id([128])?;
    /// let s = k.alloc_fragment::<ty::F32>("s", wgmma::accumulator(64, ptxkit::isa::ScalarType::Bf16).unwrap())?;
    /// let m = k.reduce_fragment(ReduceOp::Max, &s, Axis::Rows)?;
    /// assert_eq!(m.values.len(), 2); // a thread holds parts of rows r and r + 8
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert_eq!(ptx.matches("shfl.sync.bfly.b32").count(), 2 * 2); // XOR 1 and 2, per row
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn reduce_fragment<T: Reducible + Elem>(
        &mut self,
        op: ReduceOp,
        frag: &super::Buffer<T>,
        axis: Axis,
    ) -> Result<FragmentReduction<T>> {
        let name = frag.name().to_string();
        let (Some(tv), Some(regs)) = (frag.fragment().cloned(), frag.regs().map(<[_]>::to_vec))
        else {
            return Err(self.buffer_err(
                &name,
                "reduce_fragment takes a register fragment (alloc_fragment)",
            ));
        };
        thread_local! {
            static GROUPS: LaneGroupsTable = const { std::cell::RefCell::new(Vec::new()) };
        }
        let (group, lane_bits) =
            super::memo::memoized(&GROUPS, &(tv.clone(), axis), || lane_groups(&tv, axis))
                .map_err(|e| self.buffer_err(&name, e.message(tv.name())))?;
        let n_groups = group.iter().max().map_or(0, |m| m + 1);
        let mut out = Vec::with_capacity(n_groups);
        for g in 0..n_groups {
            let members: Vec<Reg<T>> = group
                .iter()
                .zip(&regs)
                .filter(|(x, _)| **x == g)
                .map(|(_, r)| *r)
                .collect();
            let v = self.reduce_regs(op, &members)?;
            let t = self.f.reg::<T>();
            for &mask in lane_bits.iter().rev() {
                self.f
                    .shfl_sync(ShflMode::Bfly, t, None, v, mask, 0x1fu32, 0xffff_ffffu32)?;
                self.combine(op, v, v, t)?;
            }
            out.push(v);
        }
        Ok(FragmentReduction { values: out, group })
    }
}

/// The count, mean and sum of squared deviations from the mean (`M2`; the variance is
/// `M2 / count`) of a set of f32 values: what [`KernelBuilder::reduce_moments`] returns and
/// [`KernelBuilder::merge_moments`] combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moments {
    /// How many values (as f32).
    pub count: Reg<ty::F32>,
    /// Their mean (0 when there are none).
    pub mean: Reg<ty::F32>,
    /// Their squared deviations from `mean`, summed.
    pub m2: Reg<ty::F32>,
}

impl KernelBuilder {
    /// The mean and squared deviations of `vals` over the threads of `scope`, in one barrier
    /// round for a CTA or warpgroup: each thread's own moments (its values' sum, then their
    /// squared deviations from its own mean), merged over the scope by
    /// [`KernelBuilder::merge_moments`]. `inside[i]` says whether `vals[i]` counts (a column
    /// past a row's end does not); consecutive values under the same predicate are summed first
    /// and masked once. As stable as centring every value on the scope's mean (each level's
    /// deviations are taken from that level's own mean; Chan, Golub and LeVeque's combination),
    /// with one reduction round instead of a sum's round and then a round of squared deviations.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{KernelBuilder, ReduceScope, TensorOpts};
    /// let mut k = KernelBuilder::new("row_var", Target::Sm90a);
    /// let x = k.tensor::<ty::F32>("x", [1024], TensorOpts::default().align(16))?;
    /// let [t] = k.thread_id([256])?;
    /// let v = k.load_n(&x, [t * 4], 4, 0.0f32)?;
    /// let all = k.cmp(ptxkit::isa::builder::CmpOp::Lt, t * 4, 1024)?;
    /// let m = k.reduce_moments(&v, &[all; 4], ReduceScope::Cta)?; // every thread has them
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert_eq!(ptx.matches("bar.sync").count(), 1); // one round for both statistics
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn reduce_moments(
        &mut self,
        vals: &[Reg<ty::F32>],
        inside: &[ptx_isa::Pred],
        scope: ReduceScope,
    ) -> Result<Moments> {
        if vals.is_empty() || vals.len() != inside.len() {
            return Err(self.scope_err(format!(
                "moments of {} values under {} predicates: one predicate per value, at least one",
                vals.len(),
                inside.len()
            )));
        }
        // Runs of consecutive values under one predicate (a vector access's elements).
        let mut runs: Vec<(ptx_isa::Pred, &[Reg<ty::F32>])> = Vec::new();
        let mut from = 0;
        for i in 1..=vals.len() {
            if i == vals.len() || inside[i] != inside[from] {
                runs.push((inside[from], &vals[from..i]));
                from = i;
            }
        }
        let counts = runs
            .iter()
            .map(|&(p, run)| self.select(p, run.len() as f32, 0.0f32))
            .collect::<Result<Vec<_>>>()?;
        let count = self.reduce_regs(ReduceOp::Sum, &counts)?;
        let sums = runs
            .iter()
            .map(|&(p, run)| {
                let s = self.reduce_regs(ReduceOp::Sum, run)?;
                self.select(p, s, 0.0f32)
            })
            .collect::<Result<Vec<_>>>()?;
        let sum = self.reduce_regs(ReduceOp::Sum, &sums)?;
        let mean = self.mean_of(sum, count)?;
        // Each run's squared deviations as one chain of fma (the runs' chains are independent).
        let squares = runs
            .iter()
            .map(|&(p, run)| {
                let mut acc: Option<Reg<ty::F32>> = None;
                for &x in run {
                    let d = self.f.reg::<ty::F32>();
                    self.f.sub(d, x, mean)?;
                    let next = self.f.reg::<ty::F32>();
                    match acc {
                        None => self.f.mul(next, d, d)?,
                        Some(a) => self.f.fma(next, d, d, a)?,
                    }
                    acc = Some(next);
                }
                let a = acc.ok_or_else(|| self.scope_err("an empty run (internal)"))?;
                self.select(p, a, 0.0f32)
            })
            .collect::<Result<Vec<_>>>()?;
        let m2 = self.reduce_regs(ReduceOp::Sum, &squares)?;
        self.merge_moments(Moments { count, mean, m2 }, scope)
    }

    /// Each thread's moments `m` merged over the threads of `scope`, returned to every one of
    /// them: within a warp, the count and sum by butterflies (`shfl.sync.bfly`, PTX ISA 9.7.9.6),
    /// the warp's mean, then each lane's `m2 + count (mean - warp mean)²` by a third; across the
    /// warps of a CTA or warpgroup, the warps' count, mean and `M2` through shared memory in one
    /// barrier round, lane `i` of every warp taking warp `i`'s, merged again the same way. Not for a cluster (refused: a
    /// cluster's CTAs exchange one word a round, so there it is a sum's round and then one of
    /// squared deviations by [`KernelBuilder::reduce`]).
    #[track_caller]
    pub fn merge_moments(&mut self, m: Moments, scope: ReduceScope) -> Result<Moments> {
        if scope == ReduceScope::Thread {
            return Ok(m);
        }
        if scope == ReduceScope::Cluster {
            return Err(self
                .scope_err("moments over a cluster: reduce the sum, then the squared deviations"));
        }
        let warp = self.merge_in_warp(m)?;
        if scope == ReduceScope::Warp {
            return Ok(warp);
        }
        let (threads, group) = self.reduction_group(scope)?;
        let warps = group / 32;
        if warps == 1 {
            return Ok(warp);
        }
        // Lane i takes warp i's moments (lanes past the warps count nothing), and the warp
        // merges them as it merged its lanes'.
        let words = self.exchange_warp_words(
            &[warp.count, warp.mean, warp.m2],
            scope,
            threads,
            warps,
            true,
        )?;
        let flat = self.flat_tid()?;
        let lane = self.let_("lane", flat % 32)?;
        let real = self.cmp(ptx_isa::builder::CmpOp::Lt, lane, warps)?;
        let count = self.select(real, words[0][0], 0.0f32)?;
        let m2 = self.select(real, words[2][0], 0.0f32)?;
        self.merge_in_warp(Moments {
            count,
            mean: words[1][0],
            m2,
        })
    }

    /// Each lane's moments merged over its warp, in every lane: the count and the sum by
    /// butterflies, the warp's mean, then each lane's squared deviations from it by a third.
    fn merge_in_warp(&mut self, m: Moments) -> Result<Moments> {
        let count = self.f.reg::<ty::F32>();
        self.f.mov(count, m.count)?;
        self.reduce_warp(ReduceOp::Sum, count)?;
        let sum = self.f.reg::<ty::F32>();
        self.f.mul(sum, m.count, m.mean)?;
        self.reduce_warp(ReduceOp::Sum, sum)?;
        let mean = self.mean_of(sum, count)?;
        let m2 = self.spread_about(m, mean)?;
        self.reduce_warp(ReduceOp::Sum, m2)?;
        Ok(Moments { count, mean, m2 })
    }

    /// The moments of the values of `a` and `b` together (Chan, Golub and LeVeque's pairwise
    /// update: `n = na + nb`, `mean = ma + δ nb / n`, `M2 = M2a + M2b + δ² na nb / n` with
    /// `δ = mb - ma`), in fresh registers: a running statistic over a looped row's tiles.
    pub fn combine_moments(&mut self, a: Moments, b: Moments) -> Result<Moments> {
        let count = self.add_of(a.count, b.count)?;
        let n = self.max_of(count, 1.0f32)?;
        let inv = self.rcp_of(n)?;
        let share = self.mul_of(b.count, inv)?;
        let delta = self.sub_of(b.mean, a.mean)?;
        let mean = self.fma_of(delta, share, a.mean)?;
        let weight = self.mul_of(a.count, share)?;
        let delta2 = self.mul_of(delta, delta)?;
        let spread = self.fma_of(delta2, weight, b.m2)?;
        let m2 = self.add_of(a.m2, spread)?;
        Ok(Moments { count, mean, m2 })
    }

    /// `sum / max(count, 1)`: a mean that is 0, not NaN, over no values.
    fn mean_of(&mut self, sum: Reg<ty::F32>, count: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let n = self.max_of(count, 1.0f32)?;
        let inv = self.rcp_of(n)?;
        self.mul_of(sum, inv)
    }

    /// `m.m2 + m.count (m.mean - mean)²`: `m`'s squared deviations from `mean` instead of its
    /// own mean.
    fn spread_about(&mut self, m: Moments, mean: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let d = self.sub_of(m.mean, mean)?;
        let nd = self.mul_of(m.count, d)?;
        self.fma_of(nd, d, m.m2)
    }
}

/// Why a fragment cannot be reduced along an axis by lane shuffles ([`lane_groups`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LaneGroupsError {
    /// A value's coordinate does not evaluate.
    NotEvaluated,
    /// The threads group their values differently.
    Differ,
    /// A group spans more than one warp.
    SpansWarps,
}

impl LaneGroupsError {
    /// Why, for the fragment named `frag`.
    fn message(self, frag: &str) -> String {
        match self {
            LaneGroupsError::NotEvaluated => "its fragment does not evaluate".into(),
            LaneGroupsError::Differ => {
                format!("threads of fragment {frag} group their values differently")
            }
            LaneGroupsError::SpansWarps => {
                format!("rows of fragment {frag} span warps: reduce through shared memory")
            }
        }
    }
}

/// For each value the group of values sharing its row (or column) along `axis`, and the lane
/// bits whose flip keeps every value's row (those a butterfly reduces over).
type LaneGroups = std::result::Result<(Vec<usize>, Vec<u32>), LaneGroupsError>;

/// The per-layout table of [`lane_groups`].
type LaneGroupsTable = std::cell::RefCell<Vec<((TvLayout, Axis), LaneGroups)>>;

/// [`KernelBuilder::reduce_fragment`]'s analysis of a fragment, from one table of every
/// thread's values' coordinates along `axis` (remembered per layout by the caller).
fn lane_groups(tv: &TvLayout, axis: Axis) -> LaneGroups {
    let (threads, values) = (tv.threads(), tv.values());
    let mut keys = Vec::with_capacity((threads * values) as usize);
    for t in 0..threads {
        for v in 0..values {
            let (r, c) = tv.coord(t, v).map_err(|_| LaneGroupsError::NotEvaluated)?;
            keys.push(match axis {
                Axis::Rows => r,
                Axis::Cols => c,
            });
        }
    }
    let key = |t: i64, v: i64| keys[(t * values + v) as usize];
    // The groups of value indices sharing a row must be the same in every thread.
    let groups_of = |t: i64| -> Vec<usize> {
        let mut seen: Vec<i64> = Vec::new();
        (0..values)
            .map(|v| {
                let r = key(t, v);
                seen.iter().position(|&x| x == r).unwrap_or_else(|| {
                    seen.push(r);
                    seen.len() - 1
                })
            })
            .collect()
    };
    let group = groups_of(0);
    if (1..threads).any(|t| groups_of(t) != group) {
        return Err(LaneGroupsError::Differ);
    }
    // Lane bits whose flip keeps every value's row: those are reduced over.
    let keeps = |bit: i64| {
        (0..threads).all(|t| {
            let u = t ^ (1 << bit);
            u >= threads || (0..values).all(|v| key(t, v) == key(u, v))
        })
    };
    let lane_bits: Vec<u32> = (0..5)
        .filter(|&b| (1 << b) < threads && keeps(b))
        .map(|b| 1u32 << b)
        .collect();
    if (5..16).any(|b| (1i64 << b) < threads && keeps(b)) {
        return Err(LaneGroupsError::SpansWarps);
    }
    Ok((group, lane_bits))
}
