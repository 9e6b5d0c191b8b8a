//! A 2-D TMA copy through shared memory: each CTA loads a 32 x 32 f32 box of `src` with
//! `cp.async.bulk.tensor` (128-byte swizzle, completing on an mbarrier), adds to every element its
//! row-major index within the box (read and written through the swizzled shared buffer, so a wrong
//! swizzle shows in the result), and stores the box to `dst` with a TMA store. The shape is
//! symbolic (whole boxes, a fact the launcher checks). The kernel is the one
//! `examples/tma_copy/kernel.rs` defines, compiled here from that file: one definition.

use ptx_isa::{Module, Target};

#[path = "../../examples/tma_copy/kernel.rs"]
mod kernel;

pub use kernel::{BOX, THREADS, build, reference};

/// The rows and columns the self-test copies.
pub const SHAPE: (u32, u32) = (256, 512);

/// The module, for `ptxkit dump tma_copy`.
pub fn tma_copy(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}
