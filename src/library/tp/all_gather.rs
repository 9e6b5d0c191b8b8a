//! The all-gather + GEMM on a [`DeviceGroup`]: copy-engine pulls in chunks with flags, and the
//! gated GEMM ([`super::kernels::all_gather_gemm`]) that starts at once on its own rows.

use cudarc::driver::CudaSlice;
use half::bf16;

use super::{AllGatherPlan, TpError, kernels};
use crate::library::gemm::GemmConfig;
use crate::runtime::{
    Arg, DeviceGroup, Flags, JitOptions, LoadedKernel, Symmetric, TensorMut, TensorRef,
};

/// What [`AllGatherGemm::run`] does about A's shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gather {
    /// Gathers them: each rank pulls its peers' shards in chunks under its running GEMM.
    Pull,
    /// Nothing: A is already whole on every rank (gathered by the last [`Gather::Pull`] run,
    /// whose flags still stand at its epoch, so no tile waits), and the gated GEMMs run alone:
    /// the same kernels, tile walk and operands without the pulls. What a `Pull` run spends over
    /// this is what the all-gather costs the GEMM. Refused before a first `Pull` run.
    Done,
}

/// `C_r = A · B_rᵀ` on every rank `r` of a group, A `[world · rows, k]` gathered from the ranks'
/// shards while the GEMMs run (see [`super`]).
pub struct AllGatherGemm {
    plan: AllGatherPlan,
    kernels: Vec<LoadedKernel>,
    /// Rank `r`'s flag `c` reaches the launch's epoch when chunk `c` of A is in rank `r`'s A.
    flags: Flags,
    epoch: u32,
}

impl std::fmt::Debug for AllGatherGemm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllGatherGemm")
            .field("plan", &self.plan)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl AllGatherGemm {
    /// Builds the gated GEMM of `cfg` (bf16 in and out, one problem, no scales, single CTAs:
    /// [`GemmConfig::for_problem`]'s kind) for `plan`, its bands cut to
    /// [`AllGatherPlan::band`], loads it on every rank and allocates the flags.
    pub fn new(
        group: &DeviceGroup,
        cfg: GemmConfig,
        plan: AllGatherPlan,
    ) -> Result<AllGatherGemm, TpError> {
        super::check_world(plan.world(), group)?;
        let plain = GemmConfig {
            bn: cfg.bn,
            stages: cfg.stages,
            group_m: cfg.group_m,
            n_even: cfg.n_even,
            tma_store: cfg.tma_store,
            ..GemmConfig::large()
        };
        if cfg != plain {
            return Err(TpError::Plan(format!(
                "{}: the all-gather GEMM takes bf16 in and out, one CTA a tile, no scales, \
                 alpha/beta or grouping",
                cfg.name()
            )));
        }
        // Bands no taller than a shard and dividing it, so the walk starts on the rank's own
        // rows alone (AllGatherPlan::band).
        let cfg = GemmConfig {
            group_m: plan.band(cfg.group_m),
            ..cfg
        };
        let built = kernels::all_gather_gemm(&cfg, plan.chunk_tiles())?;
        let kernels = (0..group.world())
            .map(|r| Ok(built.built.load(group.device(r)?, &JitOptions::default())?))
            .collect::<Result<Vec<_>, TpError>>()?;
        let flags = group.alloc_flags(plan.chunks())?;
        Ok(AllGatherGemm {
            plan,
            kernels,
            flags,
            epoch: 0,
        })
    }

    /// The plan.
    pub fn plan(&self) -> &AllGatherPlan {
        &self.plan
    }

    /// Enqueues one all-gather + GEMM on the group's streams: `a` is A `[world · rows, k]` on
    /// every rank, of which rank `r` has filled its shard (rows `r · rows ..`, written on its
    /// compute stream before this call); `b[r]` is rank `r`'s B `[n, k]`, `c[r]` its C
    /// `[world · rows, n]`. With [`Gather::Pull`], rank `r`'s copy stream waits for every
    /// rank's compute stream so far, raises the flags of its own chunks and pulls the others in
    /// [`AllGatherPlan::pull_order`], each copy followed by its flag; its compute stream runs
    /// the gated GEMM, walking its own rows first. A rank's compute stream's later work waits
    /// for its peers' pulls of its shard (so the caller may then overwrite it). With
    /// [`Gather::Done`], the gated GEMMs alone (see there).
    pub fn run(
        &mut self,
        group: &DeviceGroup,
        a: &Symmetric<bf16>,
        k: usize,
        b: &[CudaSlice<bf16>],
        c: &mut [CudaSlice<bf16>],
        gather: Gather,
    ) -> Result<(), TpError> {
        if gather == Gather::Done && self.epoch == 0 {
            return Err(TpError::Plan(
                "the gated GEMM alone runs on an A gathered by an earlier run".into(),
            ));
        }
        let world = self.plan.world();
        let n = self.check(group, a, k, b, c)?;
        if gather == Gather::Done {
            return self.launch_gemms(group, a, (k, n), b, c);
        }
        self.epoch = self
            .epoch
            .checked_add(1)
            .ok_or_else(|| TpError::Plan("2^32 launches: the flags' epochs ran out".into()))?;
        let epoch = self.epoch;

        // Every shard (and the previous launch's reads of each A) is ready when the compute
        // streams' work so far is done.
        let ready = group.compute_events()?;
        for r in 0..world {
            let copies = group.copy_stream(r)?;
            for event in &ready {
                copies.wait(event)?;
            }
            for chunk in self.plan.own_chunks(r) {
                group.signal(copies, self.flags.addr(r, chunk)?, epoch)?;
            }
            for chunk in self.plan.pull_order(r) {
                let rows = self.plan.chunk_range(chunk);
                let owner = self.plan.owner(chunk);
                let (dst, bytes) = a.range(r, rows.start * k, rows.len() * k)?;
                let (src, _) = a.range(owner, rows.start * k, rows.len() * k)?;
                group.copy(copies, (r, dst), (owner, src), bytes)?;
                group.signal(copies, self.flags.addr(r, chunk)?, epoch)?;
            }
        }
        self.launch_gemms(group, a, (k, n), b, c)?;
        for r in 0..world {
            for p in (0..world).filter(|&p| p != r) {
                group.order(group.copy_stream(r)?, group.stream(p)?)?;
            }
        }
        Ok(())
    }

    /// Launches every rank's gated GEMM on its compute stream, its tiles waiting for their
    /// chunks' flags to reach the last `run`'s epoch, its walk starting at its own rows.
    fn launch_gemms(
        &self,
        group: &DeviceGroup,
        a: &Symmetric<bf16>,
        (k, n): (usize, usize),
        b: &[CudaSlice<bf16>],
        c: &mut [CudaSlice<bf16>],
    ) -> Result<(), TpError> {
        let total = self.plan.total_rows();
        for (r, c) in c.iter_mut().enumerate() {
            let mut args: Vec<Arg<'_>> = vec![
                a.tensor_ref(r, r, 0, [total, k])?.into(),
                TensorRef::slice(&b[r], [n, k])?.into(),
                TensorMut::slice(c, [total, n])?.into(),
                self.flags.tensor_ref(r)?.into(),
                Arg::scalar(self.epoch),
                Arg::scalar(self.plan.shift_tiles(r)),
            ];
            self.kernels[r].launch(group.stream(r)?, &mut args)?;
        }
        Ok(())
    }

    /// The operands' counts and shapes; returns `n`.
    fn check(
        &self,
        group: &DeviceGroup,
        a: &Symmetric<bf16>,
        k: usize,
        b: &[CudaSlice<bf16>],
        c: &[CudaSlice<bf16>],
    ) -> Result<usize, TpError> {
        let (world, total) = (self.plan.world(), self.plan.total_rows());
        let bad = |what: String| Err(TpError::Operands(what));
        if group.world() != world || b.len() != world || c.len() != world {
            return bad(format!(
                "{} ranks, {} B and {} C for a plan of {world}",
                group.world(),
                b.len(),
                c.len()
            ));
        }
        if k == 0 || a.len() != total * k {
            return bad(format!("A of {} elements is not [{total}, {k}]", a.len()));
        }
        let n = b[0].len() / k;
        for r in 0..world {
            if b[r].len() != n * k || c[r].len() != total * n {
                return bad(format!(
                    "rank {r}: B of {} and C of {} elements for [{n}, {k}] and [{total}, {n}]",
                    b[r].len(),
                    c[r].len()
                ));
            }
        }
        Ok(n)
    }
}
