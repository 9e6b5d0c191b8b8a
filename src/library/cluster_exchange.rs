//! Distributed shared memory: clusters of [`CLUSTER`] CTAs; each CTA stages its block of `x` in
//! shared memory, the cluster synchronises (`barrier.cluster.arrive.release` / `wait.acquire`),
//! and each thread adds the element at the same place in the next CTA's shared memory, read
//! through `mapa.shared::cluster` and `ld.shared::cluster`. A second cluster barrier keeps every
//! CTA's shared memory alive until its neighbour has read it.

use ptx_isa::spaces::SharedCluster;
use ptx_isa::{Addr, Module, Target, ty};

use crate::kernel::{BuiltKernel, KernelBuilder, Ptr, Result, TensorOpts};

/// CTAs per cluster.
pub const CLUSTER: u32 = 4;
/// Threads (and elements) per CTA.
pub const THREADS: u32 = 256;
/// Default number of clusters.
pub const CLUSTERS: u32 = 33;

/// The kernel `cluster_exchange(x, out)` over `f32[clusters * CLUSTER * THREADS]`:
/// `out[c * T + t] = x[c * T + t] + x[peer(c) * T + t]`, `peer` the next CTA of the cluster.
pub fn build_for(target: Target, clusters: u32) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("cluster_exchange", target);
    let n = clusters
        .checked_mul(CLUSTER * THREADS)
        .filter(|&n| n > 0)
        .ok_or_else(|| k.error(format!("{clusters} clusters")))?;
    let x = k.tensor::<ty::F32>("x", [n], TensorOpts::default())?;
    let out = k.tensor::<ty::F32>("out", [n], TensorOpts::default())?;
    let [cid] = k.cluster_id([clusters])?;
    let [rank] = k.cta_id_in_cluster([CLUSTER], None)?;
    let [tx] = k.thread_id([THREADS])?;
    let stage = k.alloc_shared::<ty::F32>("stage", &[THREADS], 16)?;
    let g = k.let_("g", (cid * CLUSTER + rank) * THREADS + tx)?;
    let v = k.load(&x, [g])?;
    k.store(&stage, [tx], v)?;
    k.cluster_sync()?;
    let Ptr::Shared(mine) = k.ptr_to(&stage, [tx])? else {
        return Err(k.error("the stage is not in shared memory"));
    };
    let peer = k.eval((rank + 1) % CLUSTER)?;
    let theirs = k.reg::<ty::U32>();
    k.mapa_shared(theirs, mine, peer)?;
    let w = k.reg::<ty::F32>();
    k.ld(w, Addr::<SharedCluster>::reg32(theirs))?;
    k.add(w, v, w)?;
    k.store(&out, [g], w)?;
    k.cluster_sync()?;
    k.finish()
}

/// [`build_for`] with [`CLUSTERS`] clusters.
pub fn build(target: Target) -> Result<BuiltKernel> {
    build_for(target, CLUSTERS)
}

/// The module, for `ptxkit dump cluster_exchange`.
pub fn cluster_exchange(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}

/// The host reference.
pub fn reference(x: &[f32]) -> Vec<f32> {
    let (t, c) = (THREADS as usize, CLUSTER as usize);
    (0..x.len())
        .map(|i| {
            let (cta, lane) = (i / t, i % t);
            let peer = cta - cta % c + (cta % c + 1) % c;
            x[i] + x[peer * t + lane]
        })
        .collect()
}
