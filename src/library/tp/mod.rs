//! Tensor-parallel GEMMs across the GPUs of one host that hide the NVLink traffic under the
//! GEMM, on a [`crate::runtime::DeviceGroup`] (one process, peer access, no NVLink multicast):
//!
//! - [`AllGatherGemm`]: `C_r = A · B_rᵀ` on every rank `r`, A gathered from the ranks' row
//!   shards. Each rank's copy stream pulls its peers' shards by copy engine in chunks
//!   (`cuMemcpyPeerAsync`), each chunk followed by its flag (`cuStreamWriteValue32`); the GEMM
//!   starts at once, its tile walk rotated so the rank's own rows go first, and its producer
//!   waits on a chunk's flag (`ld.acquire.sys`, then `fence.proxy.async`) before its TMA loads
//!   of those rows ([`crate::parts::RowGate`]).
//! - [`GemmReduceScatter`]: `out_s = Σ_r A_r[shard s] · B_rᵀ` owned by rank `s`. Each rank
//!   computes its partial of every shard, its peers' first, storing each straight into the
//!   owner's slot for it (peer stores from the GEMM's epilogue); the owner sums its slots in a
//!   fixed order, its own first ([`plan::sum_order`]: deterministic), once the peers' GEMMs
//!   for its shard are done, or, with [`ReduceScatterSum::Fused`], adds them in the epilogue
//!   of its own shard's GEMM; or, with [`ReduceScatterSum::Pulled`], each rank keeps its
//!   partials in its own memory and the owner's GEMM reads them from there by TMA. Fused at
//!   two ranks ([`ReduceScatterPlan::gated`]) no stream waits for another GPU: each rank's
//!   stream raises a flag once its partial is written, and the owner's GEMM, started at once,
//!   waits on it ([`crate::parts::RowGate`]) only before it loads that partial.
//!
//! [`plan`] holds the single-process logic (chunks, flags, orders), tested without a GPU; the
//! kernels ([`kernels`]) are assembled by ptxas in CI. NCCL ([`crate::runtime::DeviceGroup::all_gather`],
//! [`crate::runtime::DeviceGroup::reduce_scatter`]) is the baseline `examples/tp_gemm.rs` measures against.

pub mod kernels;
pub mod plan;

mod all_gather;
mod reduce_scatter;

pub use all_gather::{AllGatherGemm, Gather};
pub use plan::{
    AllGatherPlan, GatePolls, LOCAL_OWNERS, OwnersLoad, PULLED_OWNERS, Placement, ReduceScatterPlan,
};
pub use reduce_scatter::{GemmReduceScatter, Partials, ReduceScatterSum};

use crate::kernel::KernelError;
use crate::library::gemm::GemmError;
use crate::runtime::RuntimeError;

/// What can go wrong planning, building or running a tensor-parallel GEMM.
#[derive(Debug, thiserror::Error)]
pub enum TpError {
    /// Shapes that do not split as the plan needs (partial tiles or chunks, no ranks).
    #[error("tensor-parallel plan: {0}")]
    Plan(String),
    /// Operands whose shapes or counts do not fit the plan.
    #[error("tensor-parallel operands: {0}")]
    Operands(String),
    /// Building a kernel failed.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The per-rank GEMM failed.
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// Loading, launching, a copy, a flag or NCCL failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl From<cudarc::driver::DriverError> for TpError {
    fn from(e: cudarc::driver::DriverError) -> TpError {
        TpError::Runtime(e.into())
    }
}

/// A plan for `world` ranks fits `group`.
fn check_world(world: usize, group: &crate::runtime::DeviceGroup) -> Result<(), TpError> {
    match world == group.world() {
        true => Ok(()),
        false => Err(TpError::Plan(format!(
            "a plan for {world} ranks on a group of {}",
            group.world()
        ))),
    }
}
