//! Distributed shared memory: clusters of [`CLUSTER`] CTAs; each CTA stages its block of `x` in
//! shared memory, the cluster synchronises (`barrier.cluster.arrive.release` / `wait.acquire`),
//! and each thread adds the element at the same place in the next CTA's shared memory, read
//! through `mapa.shared::cluster` and `ld.shared::cluster`. A second cluster barrier keeps every
//! CTA's shared memory alive until its neighbour has read it. The kernel is the one
//! `examples/cluster_exchange/kernel.rs` defines, compiled here from that file: one definition.

use ptx_isa::{Module, Target};

#[path = "../../examples/cluster_exchange/kernel.rs"]
mod kernel;

pub use kernel::{CLUSTER, SPAN, THREADS, build, reference};

/// The number of clusters the self-test launches.
pub const CLUSTERS: u32 = 33;

/// The module, for `ptxkit dump cluster_exchange`.
pub fn cluster_exchange(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}
