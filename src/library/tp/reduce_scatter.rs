//! The GEMM + reduce-scatter on a [`DeviceGroup`]: per-shard GEMMs whose epilogues store into the
//! owners' slots (peer stores), and the owners' slot sums in [`super::plan::sum_order`]
//! ([`super::kernels::slot_sum`]); or, with the sum fused ([`ReduceScatterSum::Fused`]), each
//! owner's GEMM of its own shard adding its peers' slots in its epilogue
//! ([`super::kernels::reduce_scatter_gemm`]), no separate sum; or, pulled
//! ([`ReduceScatterSum::Pulled`]), the same fused GEMM reading its peers' partials where they
//! were written, in the peers' memory, so every partial's store stays local and the links carry
//! TMA loads the owner's main loop hides. Fused at two ranks, the owner's GEMM does not wait for
//! its peer's stream: it waits on the peer's flag before it loads the partial
//! ([`super::ReduceScatterPlan::gated`]).

use cudarc::driver::{CudaSlice, sys};
use half::bf16;

use super::plan::Placement;
use super::{ReduceScatterPlan, TpError, kernels};
use crate::library::gemm::{Gemm, GemmConfig};
use crate::runtime::{
    Arg, DeviceGroup, Flags, JitOptions, LoadedKernel, Symmetric, TensorMut, TensorRef,
};

/// `out_s = Σ_r A_r[rows of shard s] · B_rᵀ` on every owner rank `s` (see [`super`]).
pub struct GemmReduceScatter {
    plan: ReduceScatterPlan,
    gemms: Vec<Gemm>,
    /// Each owner's last step: the slot sum, or its own shard's GEMM with the sum fused.
    owners: Owners,
    /// Where the partials of the peers' shards lie.
    placement: Placement,
    /// Calls so far: their parity is the turn of [`ReduceScatterPlan::partial_at`], and with
    /// `flags` the last call's count is the epoch its flags reach.
    calls: u64,
    /// Where the owners' GEMMs are gated ([`ReduceScatterPlan::gated`]): rank `r`'s one flag
    /// reaches a call's epoch once its partial of its peer's shard is written.
    flags: Option<Flags>,
    /// Gated, whether the owners' streams wait for their peers' partials too
    /// ([`GemmReduceScatter::set_stream_wait`]).
    stream_wait: bool,
}

/// How a [`GemmReduceScatter`]'s owners sum the partials of their shards, and where the
/// partials lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReduceScatterSum {
    /// Each owner's slot sum ([`kernels::slot_sum`]), a kernel of its own, once its peers'
    /// partials have landed in its slots.
    #[default]
    Separate,
    /// Each owner summing its slots in its own shard's GEMM's epilogue
    /// ([`kernels::reduce_scatter_gemm`]: the slot sum's result to the bit, its first peer's slot
    /// staged by TMA under the main loop) once its peers' partials have landed: one kernel less
    /// per rank and launch, one pass less over the slots. `cfg` as the all-gather GEMM's: bf16
    /// in and out, one CTA a tile, no scales, alpha/beta or grouping.
    Fused,
    /// As [`ReduceScatterSum::Fused`], with the partials left where they are computed
    /// ([`Placement::Writer`]): each rank's GEMMs of its peers' shards store into its own
    /// memory, and each owner's GEMM reads them from its peers' memory (peer access), its first
    /// peer's by TMA into the staging block under its main loop (slab by slab, its flag polled
    /// once a thread, unless the plan says otherwise: [`ReduceScatterPlan::owners_load`]). The
    /// same sum, the same bits.
    /// Two ranks at most ([`ReduceScatterPlan::check_placement`]).
    Pulled,
}

/// What [`GemmReduceScatter::run`] does about the partials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partials {
    /// Computes them and sums them: the whole GEMM + reduce-scatter.
    Compute,
    /// Only the owners' step, on the partials the last `Compute` run left: each owner's slot
    /// sum, or its GEMM of its own shard with the sum fused, reading the same slots again;
    /// gated, with no wait (the flags stand at the last run's epoch), otherwise after each
    /// owner's stream waits for its peers' work so far. Against the GEMM of a shard alone, what
    /// reading the peers' partials costs an owner; a `Compute` run's time over this and the
    /// peers' partials' GEMMs is what the owners wait for them. Refused before a first run.
    Last,
}

/// What an owner runs once its peers' partials of its shard have landed.
enum Owners {
    /// Each rank's slot sum (its own order, [`super::plan::sum_order`]).
    Sum(Vec<LoadedKernel>),
    /// Each rank's own-shard GEMM with the slot sum in its epilogue.
    Fused(Vec<LoadedKernel>),
}

impl std::fmt::Debug for GemmReduceScatter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GemmReduceScatter")
            .field("plan", &self.plan)
            .finish()
    }
}

impl GemmReduceScatter {
    /// Loads `cfg`'s GEMM (bf16 in and out) on every rank, and what each owner sums its slots
    /// with: `sum` (see [`ReduceScatterSum`]).
    pub fn new(
        group: &DeviceGroup,
        cfg: GemmConfig,
        plan: ReduceScatterPlan,
        sum: ReduceScatterSum,
    ) -> Result<GemmReduceScatter, TpError> {
        let (fused, placement) = match sum {
            ReduceScatterSum::Separate => (false, Placement::Owner),
            ReduceScatterSum::Fused => (true, Placement::Owner),
            ReduceScatterSum::Pulled => (true, Placement::Writer),
        };
        super::check_world(plan.world(), group)?;
        plan.check_placement(placement)?;
        let bf16 = ptx_isa::ScalarType::Bf16;
        if cfg.input != bf16 || cfg.output != bf16 || cfg.alpha_beta {
            return Err(TpError::Plan(format!(
                "{}: the reduce-scatter GEMM takes bf16 in and out, no alpha/beta",
                cfg.name()
            )));
        }
        let world = u32::try_from(plan.world())
            .map_err(|_| TpError::Plan(format!("{} ranks", plan.world())))?;
        let gated = fused && plan.gated(cfg.tma_store);
        let owners = plan.owners_load(placement);
        let polls = gated.then_some(owners.polls);
        let mut gemms = Vec::new();
        let mut last = Vec::new();
        for r in 0..world {
            let device = group.device(r as usize)?;
            gemms.push(Gemm::new(device, cfg)?);
            let kernel = match fused {
                false => kernels::slot_sum(world, r)?,
                true => kernels::reduce_scatter_gemm(&cfg, world, r, polls, owners.at)?.built,
            };
            last.push(kernel.load(device, &JitOptions::default())?);
        }
        let owners = match fused {
            true => Owners::Fused(last),
            false => Owners::Sum(last),
        };
        let flags = match gated {
            true => Some(group.alloc_flags(1)?),
            false => None,
        };
        Ok(GemmReduceScatter {
            plan,
            gemms,
            owners,
            placement,
            calls: 0,
            flags,
            stream_wait: false,
        })
    }

    /// Whether the owners' GEMMs are gated on their peers' flags
    /// ([`ReduceScatterPlan::gated`]).
    pub fn gated(&self) -> bool {
        self.flags.is_some()
    }

    /// Gated, makes each owner's stream wait for its peers' partials' GEMMs as well (an event
    /// across GPUs, `cuStreamWaitEvent`) before its gated GEMM starts, the flags then already
    /// up: the way the owners waited before the flags, kept to measure what the flags save in
    /// the same process. Nothing where the owners are not gated (they always wait so).
    pub fn set_stream_wait(&mut self, on: bool) {
        self.stream_wait = on;
    }

    /// The plan.
    pub fn plan(&self) -> &ReduceScatterPlan {
        &self.plan
    }

    /// Enqueues one GEMM + reduce-scatter on the group's compute streams: `a[r]` is rank `r`'s
    /// A `[world · rows, kr]`, `b[r]` its B `[n, kr]` (its part of the reduction), `slots` the
    /// owners' slots (`world · rows · n` elements on every rank) and `out[s]` rank `s`'s sum
    /// `[rows, n]`. Rank `r` first waits for every peer's compute stream so far (the peer's last
    /// sum has read its slots; not where the partials alternate between two slots from call to
    /// call, pulled at two ranks: [`ReduceScatterPlan::alternates`]), then computes its partial
    /// of each shard in [`ReduceScatterPlan::shard_order`] into its slot
    /// ([`ReduceScatterPlan::partial_at`]: the owner's slot `r`, or pulled its own slot `s` or
    /// `r` on alternate calls, neighbouring shards in one launch:
    /// [`ReduceScatterPlan::launches`]); owner `s` waits for its peers' partials of
    /// its shard and sums its slots in [`super::plan::sum_order`]. Fused, owner `s` computes
    /// its own shard last, once its peers' partials are in, and adds them in that GEMM's
    /// epilogue (its own slot stays untouched). Gated ([`ReduceScatterPlan::gated`]: fused at
    /// two ranks with the TMA-store epilogue), the owner's stream does not wait for its peer:
    /// the peer's stream raises a flag once its partial is written, and the owner's GEMM,
    /// started at once, waits on that flag only before it loads the partial. Where the partials
    /// alternate, the slots are this `GemmReduceScatter`'s from call to call: other work on
    /// them (another's `run` included) must be ordered against its calls by the caller
    /// ([`DeviceGroup::order`]). With [`Partials::Last`], the owners' step alone (see there).
    pub fn run(
        &mut self,
        group: &DeviceGroup,
        (a, kr): (&[CudaSlice<bf16>], usize),
        b: &[CudaSlice<bf16>],
        slots: &Symmetric<bf16>,
        out: &mut [CudaSlice<bf16>],
        partials: Partials,
    ) -> Result<(), TpError> {
        let (world, rows) = (self.plan.world(), self.plan.rows());
        let n = self.check(group, (a, kr), b, slots, out)?;
        if partials == Partials::Last {
            let Some(last) = self.calls.checked_sub(1) else {
                return Err(TpError::Plan(
                    "the owners' step alone reads the partials of an earlier run".into(),
                ));
            };
            // Gated, the flags stand at the last call's epoch; otherwise the peers' work so
            // far holds the last call's partials.
            let epoch = match self.flags {
                Some(_) => Some(epoch_of(self.calls)?),
                None => {
                    await_peers(group)?;
                    None
                }
            };
            let turn = (last % 2) as usize;
            return self.launch_owners(group, (a, kr, n), b, slots, out, (turn, epoch));
        }
        let no_timing = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let turn = (self.calls % 2) as usize;
        let calls = self.calls.wrapping_add(1);
        // A gated call's flags reach its count.
        let epoch = match self.flags {
            Some(_) => Some(epoch_of(calls)?),
            None => None,
        };
        self.calls = calls;
        // Alternating, this call's partials lie where the peers' GEMMs of the call before do
        // not read; those of the call before that were read before the peers computed the
        // partials this rank's last owner's GEMM waited for (by the stream, or gated by the
        // flag every one of its CTAs read before it ended).
        if !self.plan.alternates(self.placement) {
            await_peers(group)?;
        }
        // events[i] for done[s]: the peers' partials of shard s are in their slots.
        let mut events = Vec::new();
        let mut done: Vec<Vec<usize>> = vec![Vec::new(); world];
        let fused = matches!(self.owners, Owners::Fused(_));
        for r in 0..world {
            let stream = group.stream(r)?;
            for run in self.plan.launches(self.placement, r, fused) {
                let shards = run.len();
                let view = a[r].slice(run.start * rows * kr..run.end * rows * kr);
                let a_ref = TensorRef::view(&view, [shards * rows, kr])?;
                let b_ref = TensorRef::slice(&b[r], [n, kr])?;
                let (holder, at) = self
                    .plan
                    .partial_at(self.placement, (r, run.start), n, turn);
                // SAFETY: `slots` outlives the launch (borrowed for this call, and the owner's
                // sum, which reads the slot, waits for this launch or its flag); nothing else
                // writes these slots (`partial_at` gives every rank and shard its own, and a
                // run's lie next to each other: `launches`), and the owners' previous reads of
                // them are done (the wait above, or alternating: the last read of these slots
                // was the call before last's, which the peer finished before the partial this
                // stream's last owner's GEMM waited for).
                let desc = slots.tensor_desc(holder, r, at, vec![shards * rows, n])?;
                let c = unsafe { TensorMut::foreign(desc) };
                self.gemms[r].run_borrowed(stream, &a_ref, &b_ref, c, None)?;
                if epoch.is_none() || self.stream_wait {
                    events.push(stream.record_event(no_timing)?);
                    for s in run.filter(|&s| s != r) {
                        done[s].push(events.len() - 1);
                    }
                }
            }
            // Gated: the flag after the partials (the stream's write comes after its earlier
            // work and a memory barrier that makes that work's writes visible first).
            if let (Some(flags), Some(epoch)) = (&self.flags, epoch) {
                group.signal(stream, flags.addr(r, 0)?, epoch)?;
            }
        }
        for (s, wait) in done.iter().enumerate() {
            let stream = group.stream(s)?;
            for &i in wait {
                stream.wait(&events[i])?;
            }
        }
        self.launch_owners(group, (a, kr, n), b, slots, out, (turn, epoch))
    }

    /// Each owner's step on its compute stream: its slot sum, or its fused GEMM reading its
    /// peers' partials of turn `turn`, gated on their flags at `epoch` where gated.
    fn launch_owners(
        &self,
        group: &DeviceGroup,
        (a, kr, n): (&[CudaSlice<bf16>], usize, usize),
        b: &[CudaSlice<bf16>],
        slots: &Symmetric<bf16>,
        out: &mut [CudaSlice<bf16>],
        (turn, epoch): (usize, Option<u32>),
    ) -> Result<(), TpError> {
        let (world, rows) = (self.plan.world(), self.plan.rows());
        for (s, out) in out.iter_mut().enumerate() {
            let stream = group.stream(s)?;
            match &self.owners {
                Owners::Sum(sums) => {
                    let mut args: Vec<Arg<'_>> = vec![
                        slots.tensor_ref(s, s, 0, [world, rows * n])?.into(),
                        TensorMut::slice(out, [rows * n])?.into(),
                    ];
                    sums[s].launch(stream, &mut args)?;
                }
                Owners::Fused(gemms) => {
                    let range = self.plan.shard_range(s);
                    let view = a[s].slice(range.start * kr..range.end * kr);
                    let mut args: Vec<Arg<'_>> = vec![
                        TensorRef::view(&view, [rows, kr])?.into(),
                        TensorRef::slice(&b[s], [n, kr])?.into(),
                        TensorMut::slice(out, [rows, n])?.into(),
                    ];
                    for r in (0..world).filter(|&r| r != s) {
                        let (holder, at) = self.plan.partial_at(self.placement, (r, s), n, turn);
                        args.push(slots.tensor_ref(holder, s, at, [rows, n])?.into());
                    }
                    // Gated (two ranks): the one peer's flag, read where the peer raises it.
                    if let (Some(flags), Some(epoch)) = (&self.flags, epoch) {
                        for r in (0..world).filter(|&r| r != s) {
                            args.push(flags.tensor_ref_on(r, s)?.into());
                        }
                        args.push(Arg::scalar(epoch));
                    }
                    gemms[s].launch(stream, &mut args)?;
                }
            }
        }
        Ok(())
    }

    /// The operands' counts and shapes; returns `n`.
    fn check(
        &self,
        group: &DeviceGroup,
        (a, kr): (&[CudaSlice<bf16>], usize),
        b: &[CudaSlice<bf16>],
        slots: &Symmetric<bf16>,
        out: &[CudaSlice<bf16>],
    ) -> Result<usize, TpError> {
        let (world, rows) = (self.plan.world(), self.plan.rows());
        let bad = |what: String| Err(TpError::Operands(what));
        if group.world() != world || a.len() != world || b.len() != world || out.len() != world {
            return bad(format!(
                "{} ranks, {} A, {} B and {} outputs for a plan of {world}",
                group.world(),
                a.len(),
                b.len(),
                out.len()
            ));
        }
        if kr == 0 {
            return bad("k = 0".into());
        }
        let n = b[0].len() / kr;
        if n == 0 || slots.len() != world * rows * n {
            return bad(format!(
                "slots of {} elements are not [{world}, {rows}, {n}]",
                slots.len()
            ));
        }
        for r in 0..world {
            if a[r].len() != world * rows * kr || b[r].len() != n * kr || out[r].len() != rows * n {
                return bad(format!(
                    "rank {r}: A of {}, B of {}, out of {} elements for [{}, {kr}], [{n}, {kr}], \
                     [{rows}, {n}]",
                    a[r].len(),
                    b[r].len(),
                    out[r].len(),
                    world * rows
                ));
            }
        }
        Ok(n)
    }
}

/// The epoch a gated call's flags reach: its count, while it fits the flags' 32 bits.
fn epoch_of(calls: u64) -> Result<u32, TpError> {
    u32::try_from(calls).map_err(|_| TpError::Plan("2^32 calls: the flags' epochs ran out".into()))
}

/// Every rank's compute stream waits for its peers' work so far (events across GPUs).
fn await_peers(group: &DeviceGroup) -> Result<(), TpError> {
    let ready = group.compute_events()?;
    for r in 0..group.world() {
        let stream = group.stream(r)?;
        for (_, event) in ready.iter().enumerate().filter(|(s, _)| *s != r) {
            stream.wait(event)?;
        }
    }
    Ok(())
}
