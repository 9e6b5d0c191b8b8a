//! Distributed shared memory between the CTAs of a cluster, written with `KernelBuilder`: the
//! kernel of `examples/cluster_exchange` (`main.rs` prints, launches and checks it). This file is
//! also the library's built-in `cluster_exchange` (`ptxkit dump cluster_exchange`, the
//! self-test): one definition.

use ptxkit::isa::spaces::SharedCluster;
use ptxkit::isa::{Addr, Target, ty};
use ptxkit::kernel::{BuiltKernel, KernelBuilder, Ptr, Result, TensorOpts};
use ptxkit::runtime::ExtentFacts;

/// CTAs per cluster.
pub const CLUSTER: u32 = 4;
/// Threads, and elements, per CTA.
pub const THREADS: u32 = 256;
/// Elements per cluster.
pub const SPAN: u32 = CLUSTER * THREADS;

/// `out[i] = x[i] + x[j]` over f32 vectors of length `n`, where `j` is the same place in the next
/// CTA of `i`'s cluster (CTA `r` of a cluster reads CTA `(r + 1) % 4`).
pub fn build(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("cluster_exchange", target);
    // Whole clusters only: every index below is in bounds, so no access needs a guard.
    let n = k.symbol_with(
        "n",
        ExtentFacts::NONE
            .multiple_of(SPAN.into())
            .at_least(SPAN.into()),
    )?;
    let x = k.tensor::<ty::F32>("x", [n], TensorOpts::default())?;
    let out = k.tensor::<ty::F32>("out", [n], TensorOpts::default())?;
    // The grid: n / SPAN clusters of CLUSTER CTAs of THREADS threads.
    let [cluster] = k.cluster_id([n / SPAN])?;
    let [rank] = k.cta_id_in_cluster([CLUSTER], None)?;
    let [t] = k.thread_id([THREADS])?;
    let stage = k.alloc_shared::<ty::F32>("stage", &[THREADS], 16)?;

    let i = k.let_("i", (cluster * CLUSTER + rank) * THREADS + t)?;
    let mine = k.load(&x, [i])?;
    k.store(&stage, [t], mine)?;
    // Every CTA of the cluster has staged its part (barrier.cluster arrive.release/wait.acquire).
    k.cluster_sync()?;

    // This thread's slot, as the next CTA's shared memory holds it.
    let Ptr::Shared(slot) = k.ptr_to(&stage, [t])? else {
        return Err(k.error("the stage is not in shared memory"));
    };
    let peer = k.eval((rank + 1) % CLUSTER)?;
    let remote = k.reg::<ty::U32>();
    k.mapa_shared(remote, slot, peer)?;
    let theirs = k.reg::<ty::F32>();
    k.ld(theirs, Addr::<SharedCluster>::reg32(remote))?;
    let sum = k.add_of(mine, theirs)?;
    k.store(&out, [i], sum)?;
    // No CTA may exit (and free its shared memory) while its neighbour may still read it.
    k.cluster_sync()?;
    k.finish()
}

/// The host reference.
pub fn reference(x: &[f32]) -> Vec<f32> {
    let (t, c) = (THREADS as usize, CLUSTER as usize);
    (0..x.len())
        .map(|i| {
            let (cta, slot) = (i / t, i % t);
            let peer = cta - cta % c + (cta % c + 1) % c;
            x[i] + x[peer * t + slot]
        })
        .collect()
}
