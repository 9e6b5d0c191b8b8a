//! A stage ring as a typed handle: the stages of one or more tiles in shared memory, their
//! `full` and `empty` mbarriers, and the four moves of the producer/consumer protocol
//! (producer: [`Ring::acquire`], [`Ring::commit`]; consumer: [`Ring::wait`],
//! [`Ring::release`]). The barrier arithmetic (a stage's barrier is 8 bytes further, PTX ISA
//! 9.7.13.15.1), the phases (a [`RingCursor`] per side), the `expect_tx` bytes and the
//! protocol records ([`BarrierSync`]) live here and nowhere else, so the barrier protocol check
//! and a debug build's hang diagnosis see every kernel's rings the same way.
//!
//! ```
//! use ptxkit::isa::{Target, ty, builder::CmpOp};
//! use ptxkit::kernel::KernelBuilder;
//! use ptxkit::parts::Ring;
//! use ptxkit::smem::pipeline::TileSpec;
//! use ptxkit::smem::pipeline::cursor::{Phase, RingCursor};
//! use ptxkit::smem::pipeline::sync::{BarrierSync, WaitMode};
//!
//! let mut k = KernelBuilder::new("ring", Target::Sm90a);
//! let [tid] = k.thread_id([256])?;
//! let spec = TileSpec { name: "x".into(), bytes: 4096, align: 1024 };
//! // Two stages of one 4 KB tile; full expects one arrival, empty one per consumer warpgroup.
//! let (pipe, base) = k.pool_pipeline("x", 2, &[spec], 1, 1)?;
//! let mut sync = BarrierSync::new("ring", WaitMode::Spin);
//! let ring = Ring::declare(&k, &mut sync, "x", pipe, base, 1)?;
//! let is0 = k.cmp(CmpOp::Eq, tid, 0u32)?;
//! k.if_(is0, |k| ring.init(k, &mut sync)).end()?;
//! k.sync_threads()?;
//! // The producer side: wait for a free stage, announce its bytes (a TMA load would follow).
//! let cur = RingCursor::new(k.isa(), 2, Phase::Parity)?;
//! let full = ring.acquire(&mut k, &mut sync, &cur)?;
//! ring.commit(&mut k, &mut sync, full, 0)?;
//! assert_eq!(ring.tile_addrs(&mut k, cur.stage())?.len(), 1);
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::ArriveOpts;
use ptx_isa::{Addr, Pred, Reg, Sinkable, spaces, ty};
use smem::mbarrier::MBARRIER_BYTES;
use smem::pipeline::Pipeline;
use smem::pipeline::cursor::RingCursor;
use smem::pipeline::protocol::{ArrayId, BarrierAt};
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier, WaitMode};

use crate::kernel::{KernelBuilder, Result, Var};

/// A ring of `stages` buffers in shared memory with its `full` and `empty` barrier arrays,
/// declared in a kernel's [`BarrierSync`].
#[derive(Debug, Clone)]
pub struct Ring {
    /// The register holding the address the pipeline's offsets count from.
    base: Reg<ty::U32>,
    /// The stages' regions and barriers (offsets from `base`).
    pipe: Pipeline,
    /// The barrier arrays in the protocol (no `empty` for a ring whose buffers are freed another
    /// way: [`smem::pipeline::StageRing::full_barriers`]).
    full: ArrayId,
    empty: Option<ArrayId>,
    /// The arrivals on `empty` that one release site stands for per phase (one per consumer
    /// warpgroup: its leader arrives).
    releases: u32,
    /// In a cluster whose producers all write each stage (a multicast): this CTA's rank and
    /// the cluster's CTAs, so a release arrives on every peer's `empty` too.
    cluster: Option<(Var, u32)>,
}

impl Ring {
    /// Declares `pipe`'s barriers in `sync` as `{name}_full` and `{name}_empty` (just `full`
    /// and `empty` for an empty `name`), with the init counts the pool placed them with.
    /// `releases`: the arrivals one release site makes per phase (the consumer warpgroups
    /// whose leaders release a stage).
    #[track_caller]
    pub fn declare(
        k: &KernelBuilder,
        sync: &mut BarrierSync,
        name: &str,
        pipe: Pipeline,
        base: Reg<ty::U32>,
        releases: u32,
    ) -> Result<Ring> {
        let named = |what: &str| match name {
            "" => what.to_string(),
            _ => format!("{name}_{what}"),
        };
        let protocol =
            |e: smem::pipeline::protocol::ProtocolError| k.error(format!("barrier protocol: {e}"));
        let full = sync
            .declare_pool_array(&named("full"), pipe.full())
            .map_err(protocol)?;
        let empty = match pipe.empty() {
            Some(e) => Some(
                sync.declare_pool_array(&named("empty"), e)
                    .map_err(protocol)?,
            ),
            None => None,
        };
        Ok(Ring {
            base,
            pipe,
            full,
            empty,
            releases,
            cluster: None,
        })
    }

    /// The ring of a cluster of `size` CTAs (a power of two; a CTA pair along M, or CTAs
    /// along N) whose producers each write a part of every stage into every CTA: a release
    /// arrives on this CTA's `empty` and on each peer's (through `mapa`, PTX ISA 9.7.9.22), and
    /// the protocol counts the peers' releases here. `rank`: this CTA's rank in the cluster
    /// (`None`: a CTA alone, the ring unchanged).
    pub fn in_cluster(mut self, rank: Option<Var>, size: u32) -> Ring {
        self.cluster = rank.map(|r| (r, size));
        self
    }

    /// The stages.
    pub fn stages(&self) -> u32 {
        self.pipe.stages()
    }

    /// The bytes one stage's tiles hold: what a producer announces when it loads them all.
    pub fn tx_bytes(&self) -> u32 {
        self.pipe.tx_bytes()
    }

    /// The pipeline the ring was placed as (regions and barriers).
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipe
    }

    /// `full` (which the producer's `arrive.expect_tx` and the copies complete) of every stage.
    pub fn full_id(&self) -> BarrierAt {
        BarrierAt::Each(self.full)
    }

    /// `empty` (which the consumers' releases complete) of every stage; `None` for a ring without
    /// `empty` barriers.
    pub fn empty_id(&self) -> Option<BarrierAt> {
        self.empty.map(BarrierAt::Each)
    }

    /// `mbarrier.init` of every stage's `full` then `empty` with their declared counts (PTX ISA
    /// 9.7.13.15.9), by the thread that runs it (the caller guards it to one thread, fences
    /// and syncs the CTA).
    pub fn init(&self, k: &mut KernelBuilder, sync: &mut BarrierSync) -> Result<()> {
        let empty = self.empty.zip(self.pipe.empty());
        for s in 0..self.stages() {
            for (id, array) in std::iter::once((self.full, self.pipe.full())).chain(empty) {
                let at = k.reg::<ty::U32>();
                k.add(at, self.base, array.region().offset + s * MBARRIER_BYTES)?;
                let bar = NamedBarrier {
                    at: BarrierAt::One(id, s),
                    addr: at,
                };
                sync.init(k.isa(), bar)?;
            }
        }
        Ok(())
    }

    /// The barrier of `array` for the stage in `stage`: one multiply-add over the 8 bytes of an
    /// mbarrier (PTX ISA 9.7.13.15.1: the array holds them back to back) and the array's offset.
    fn barrier(
        &self,
        k: &mut KernelBuilder,
        stage: Reg<ty::U32>,
        empty: bool,
    ) -> Result<NamedBarrier> {
        let (array, id) = match (empty, self.empty.zip(self.pipe.empty())) {
            (false, _) => (self.pipe.full(), self.full),
            (true, Some((id, array))) => (array, id),
            (true, None) => {
                return Err(k.error(format!(
                    "the ring `{}` has no `empty` barriers: its buffers are freed another way",
                    self.pipe.name()
                )));
            }
        };
        let r = k.reg::<ty::U32>();
        k.mad_lo(r, stage, MBARRIER_BYTES, self.base)?;
        k.add(r, r, array.region().offset)?;
        Ok(NamedBarrier {
            at: BarrierAt::Each(id),
            addr: r,
        })
    }

    /// `full` of the stage in `stage`.
    pub fn full_at(&self, k: &mut KernelBuilder, stage: Reg<ty::U32>) -> Result<NamedBarrier> {
        self.barrier(k, stage, false)
    }

    /// `empty` of the stage in `stage`.
    pub fn empty_at(&self, k: &mut KernelBuilder, stage: Reg<ty::U32>) -> Result<NamedBarrier> {
        self.barrier(k, stage, true)
    }

    /// The addresses of the stage's tiles, in the order the ring was placed with: the first one
    /// multiply-add over the ring's stride, each other one add from it.
    pub fn tile_addrs(
        &self,
        k: &mut KernelBuilder,
        stage: Reg<ty::U32>,
    ) -> Result<Vec<Reg<ty::U32>>> {
        let Some(tiles) = self.pipe.stage(0) else {
            return Err(k.error("the ring has no stage"));
        };
        let stride = match (self.pipe.stride(), self.stages()) {
            (Some(s), _) => s,
            // One stage: its stride is never used.
            (None, 1) => 0,
            (None, _) => return Err(k.error("the ring's stages are not evenly spaced")),
        };
        let Some(first) = tiles.first() else {
            return Err(k.error("the ring's stages hold no tile"));
        };
        let a = k.reg::<ty::U32>();
        k.mad_lo(a, stage, stride, self.base)?;
        if first.offset != 0 {
            k.add(a, a, first.offset)?;
        }
        let mut out = vec![a];
        for t in &tiles[1..] {
            let r = k.reg::<ty::U32>();
            k.add(r, a, t.offset - first.offset)?;
            out.push(r);
        }
        Ok(out)
    }

    /// The producer: waits until the consumers have released the cursor's stage (a fresh
    /// barrier counts as released for parity 1, PTX ISA 9.7.13.15.16, so every stage starts
    /// free) and returns its `full` barrier, for [`Ring::commit`] and the copies that fill it.
    pub fn acquire(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
    ) -> Result<NamedBarrier> {
        self.wait_free(k, sync, cur)?;
        self.full_at(k, cur.stage())
    }

    /// The producer's wait on `empty` of the cursor's stage at its producer parity.
    fn wait_free(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
    ) -> Result<()> {
        let stage = cur.stage();
        let empty = self.empty_at(k, stage)?;
        let want = cur.producer_parity(k.isa())?;
        sync.wait(k.isa(), empty.at, Some(stage), empty.addr, want)?;
        Ok(())
    }

    /// The producer's tail in a cluster: after its last [`Ring::commit`] it acquires each stage
    /// once more without filling it (the cursor moves `stages` on), so it returns once every
    /// stage it filled has been released by every consumer of the cluster, the peers' arrivals
    /// on this CTA's `empty` included (a stage it never filled is free at once: a fresh
    /// barrier's parity, PTX ISA 9.7.13.15.16). A peer's last `shared::cluster` arrival on this
    /// CTA has then been performed (its phase completed), and every copy a peer multicast into
    /// this CTA was waited for by this CTA's consumers before they released it; so no peer can
    /// touch this CTA's shared memory once it leaves, and the kernel needs no cluster barrier at
    /// its end (whose releasing arrival, `barrier.cluster.arrive.release`, PTX ISA 9.7.13.3,
    /// costs ptxas 13.0 a `MEMBAR.ALL.GPU` in every thread). CUTLASS's SM90 producers end the
    /// same way (their `load_tail`).
    pub fn drain(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
    ) -> Result<()> {
        k.for_range(0u32, self.stages(), |k, _| {
            self.wait_free(k, sync, cur)?;
            Ok(cur.advance(k.isa())?)
        })
    }

    /// The producer's one `mbarrier.arrive.expect_tx` of `bytes` on `full` (PTX ISA
    /// 9.7.13.15.12): the stage completes once the copies have delivered them.
    pub fn commit(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        full: NamedBarrier,
        bytes: u32,
    ) -> Result<()> {
        sync.arrive(k.isa(), full, Arrival::ExpectTx(bytes), ArriveSite::Loop)?;
        Ok(())
    }

    /// The producer threads that fill a stage with `cp.async` (instead of TMA, whose bytes
    /// [`Ring::commit`] announces): each executing thread's
    /// `cp.async.mbarrier.arrive.noinc.shared.b64` on `full`, an arrive-on that the barrier
    /// sees when every `cp.async` the thread issued before it has completed (PTX ISA
    /// 9.7.13.15.15; `.noinc`: the arrival counts towards the phase, so `full` is initialised
    /// with one arrival per such thread). `threads`: the arrivals this site stands for per
    /// phase.
    pub fn arrive_on_copies(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        full: NamedBarrier,
        threads: u32,
    ) -> Result<()> {
        k.isa()
            .cp_async_mbarrier_arrive(true, Addr::<spaces::Shared>::reg32(full.addr))?;
        sync.remote_arrive(full.at, threads);
        Ok(())
    }

    /// A consumer: waits until the cursor's stage is full (at the cursor's parity).
    pub fn wait(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
    ) -> Result<()> {
        let full = self.full_at(k, cur.stage())?;
        sync.wait(k.isa(), full.at, Some(cur.stage()), full.addr, cur.phase())?;
        Ok(())
    }

    /// A consumer of a ring of one tile per stage: [`Ring::wait`], then the stage's tile
    /// address.
    pub fn wait_tile(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
    ) -> Result<Reg<ty::U32>> {
        self.wait(k, sync, cur)?;
        self.first_tile(k, cur.stage())
    }

    /// A consumer of a ring of `N` tiles a stage: [`Ring::wait`], then the stage's tile
    /// addresses ([`Ring::tiles`]).
    pub fn wait_tiles<const N: usize>(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
    ) -> Result<[Reg<ty::U32>; N]> {
        self.wait(k, sync, cur)?;
        self.tiles(k, cur.stage())
    }

    /// [`Ring::tile_addrs`] of a ring placed with `N` tiles a stage, as an array (`let [k, v]`);
    /// another count is an error.
    pub fn tiles<const N: usize>(
        &self,
        k: &mut KernelBuilder,
        stage: Reg<ty::U32>,
    ) -> Result<[Reg<ty::U32>; N]> {
        let tiles = self.tile_addrs(k, stage)?;
        let held = tiles.len();
        tiles
            .try_into()
            .map_err(|_| k.error(format!("the ring's stages hold {held} tiles, not {N}")))
    }

    /// The address of the stage's first (or only) tile.
    pub fn first_tile(&self, k: &mut KernelBuilder, stage: Reg<ty::U32>) -> Result<Reg<ty::U32>> {
        let tiles = self.tile_addrs(k, stage)?;
        tiles
            .first()
            .copied()
            .ok_or_else(|| k.error("the ring's stages hold no tile"))
    }

    /// [`Ring::release`] of the cursor's stage, then the cursor moves on: every wait paired
    /// with one release, so a consumer's cursor moves once per stage it used.
    pub fn release_next(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        cur: &RingCursor,
        leader: Pred,
        peeled: bool,
    ) -> Result<()> {
        self.release(k, sync, cur.stage(), leader, peeled)?;
        cur.advance(k.isa())?;
        Ok(())
    }

    /// A consumer warpgroup releases the stage in `stage`: its `leader` arrives on `empty`
    /// (and, in a cluster, on each peer's through `shared::cluster`: its producer wrote part of
    /// the stage, PTX ISA 9.7.13.15.13; the peers are `rank ^ d` for `d` in `1..size`, every
    /// other rank of a power-of-two cluster). The arrivals take the default semantics (`.release.cta`):
    /// what the stage's release orders are the stage's reads, which the wgmmas (the async proxy)
    /// made and `wgmma.wait_group` completed before it, so no write of this CTA has to be made
    /// visible to the peer. A `.release.cluster` arrival would cost a whole-GPU memory barrier
    /// (ptxas 13.0 writes `MEMBAR.ALL.CTA; MEMBAR.ALL.GPU` before it) on every k-tile.
    /// `peeled`: a second site of the same release (a loop's first or last
    /// iteration written out of it), counted once by the protocol check
    /// ([`BarrierSync::arrive`] at an [`ArriveSite::Peeled`]).
    pub fn release(
        &self,
        k: &mut KernelBuilder,
        sync: &mut BarrierSync,
        stage: Reg<ty::U32>,
        leader: Pred,
        peeled: bool,
    ) -> Result<()> {
        let empty = self.empty_at(k, stage)?;
        let ctas = self.cluster.map_or(1, |(_, size)| size);
        // Peeled, the phase's arrivals at this site: this CTA's leaders, and in a cluster the
        // peers' from the same site of their loops.
        let (arrivals, site) = match peeled {
            true => (self.releases * ctas, ArriveSite::Peeled),
            false => (self.releases, ArriveSite::Loop),
        };
        sync.arrive(k.isa().when(leader), empty, Arrival::Count(arrivals), site)?;
        if let Some((rank, size)) = self.cluster {
            let rank = k.eval(rank)?;
            for d in 1..size {
                let (peer, remote) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                k.xor(peer, rank, d)?;
                k.mapa_shared(remote, empty.addr, peer)?;
                k.when(leader).mbarrier_arrive_with(
                    &ArriveOpts::default(),
                    Sinkable::Sink,
                    Addr::<spaces::SharedCluster>::reg32(remote),
                )?;
                if !peeled {
                    // Each peer's consumers release this CTA's stage the same way.
                    sync.remote_arrive(empty.at, self.releases);
                }
            }
        }
        Ok(())
    }
}

/// A single barrier in the dynamic pool: an `mbarrier` object (8 bytes, 8-byte aligned, PTX ISA
/// 9.7.13.15.1) declared in `sync` as `name` expecting `arrivals` per phase, which
/// [`init_barriers`] initialises among its `ones`.
#[track_caller]
pub fn pool_barrier(
    k: &mut KernelBuilder,
    sync: &mut BarrierSync,
    name: &str,
    arrivals: u32,
) -> Result<NamedBarrier> {
    let addr = k.pool_bytes(name, MBARRIER_BYTES, 8)?;
    sync.declare_one(name, arrivals, addr)
        .map_err(|e| k.error(format!("barrier protocol: {e}")))
}

/// Where the barriers [`init_barriers`] initialises must be seen before any role uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitScope {
    /// The CTA's threads (`bar.sync 0`).
    Cta,
    /// Every CTA of the cluster (`barrier.cluster`): a peer arrives on these barriers or
    /// multicasts into this shared memory.
    Cluster,
}

/// Thread `tid == 0` initialises every barrier of `rings` (each ring's `full`, then `empty`)
/// and the single barriers `ones`, with their declared counts (`mbarrier.init`, PTX ISA
/// 9.7.13.15.9), and fences the inits (`fence.mbarrier_init.release.cluster`, 9.7.13.4); then
/// every thread of `scope` waits until they are done, so every role may use them after.
#[track_caller]
pub fn init_barriers(
    k: &mut KernelBuilder,
    sync: &mut BarrierSync,
    tid: Var,
    (rings, ones): (&[&Ring], &[NamedBarrier]),
    scope: InitScope,
) -> Result<()> {
    let is0 = k.cmp(ptx_isa::builder::CmpOp::Eq, tid, 0u32)?;
    k.if_(is0, |k| {
        for ring in rings {
            ring.init(k, sync)?;
        }
        for &bar in ones {
            sync.init(k.isa(), bar)?;
        }
        k.fence_mbarrier_init()?;
        Ok(())
    })
    .end()?;
    match scope {
        InitScope::Cta => k.sync_threads(),
        // The fence above already releases the inits to the cluster; the arrival that follows
        // it may be relaxed (PTX ISA 9.7.13.4: `fence.mbarrier_init` is the light-weight fence
        // paired with `barrier.cluster.arrive.relaxed`), and the wait acquires (9.7.13.3). A
        // releasing arrival (`barrier.cluster.arrive.release`) costs ptxas 13.0 a
        // `MEMBAR.ALL.GPU` at every kernel start; nothing before this point but the inits is
        // for the peer.
        InitScope::Cluster => {
            k.barrier_cluster_arrive(ptx_isa::builder::ClusterArrive::Relaxed, true)?;
            Ok(k.barrier_cluster_wait(true, true)?)
        }
    }
}

/// The barriers of a kernel with one ring of stages and one barrier for what it loads once
/// (the attention backward's K and V; decode's Q): a spin-waiting
/// [`BarrierSync`] for the kernel `kernel` (its globals declared), the [`Ring`] `name` over
/// `pipe` at `base` (each stage released by `releases` arrivals, [`Ring::declare`]) and the
/// single barrier `once` of one arrival ([`pool_barrier`]), initialised by thread `tid == 0`
/// for the CTA ([`init_barriers`]).
#[track_caller]
pub fn ring_and_once(
    k: &mut KernelBuilder,
    kernel: &str,
    tid: Var,
    (name, pipe, base, releases): (&str, Pipeline, Reg<ty::U32>, u32),
    once: &str,
) -> Result<(BarrierSync, Ring, NamedBarrier)> {
    let mut sync = BarrierSync::new(kernel, WaitMode::Spin);
    sync.declare_globals(k.module_mut())?;
    let ring = Ring::declare(k, &mut sync, name, pipe, base, releases)?;
    let once = pool_barrier(k, &mut sync, once, 1)?;
    init_barriers(k, &mut sync, tid, (&[&ring], &[once]), InitScope::Cta)?;
    Ok((sync, ring, once))
}

/// The barriers of a kernel with several rings and nothing loaded once (decode's persistent
/// grid: its K/V ring and Q's ring of two): [`ring_and_once`] without the single barrier,
/// each ring `(name, pipe, base, releases)` declared in order ([`Ring::declare`]).
#[track_caller]
pub fn rings<const N: usize>(
    k: &mut KernelBuilder,
    kernel: &str,
    tid: Var,
    rings: [(&str, Pipeline, Reg<ty::U32>, u32); N],
) -> Result<(BarrierSync, [Ring; N])> {
    let mut sync = BarrierSync::new(kernel, WaitMode::Spin);
    sync.declare_globals(k.module_mut())?;
    let mut declared = Vec::with_capacity(N);
    for (name, pipe, base, releases) in rings {
        declared.push(Ring::declare(k, &mut sync, name, pipe, base, releases)?);
    }
    let all: Vec<&Ring> = declared.iter().collect();
    init_barriers(k, &mut sync, tid, (&all, &[]), InitScope::Cta)?;
    let rings = declared
        .try_into()
        .map_err(|_| k.error("the rings declared are not the rings asked for"))?;
    Ok((sync, rings))
}
