//! `y = s * x` over `f32[m, 64]` with `s` a runtime scalar: each CTA takes [`ROWS`] rows in a
//! loop, each thread 4 consecutive elements as one vector load and store (the index `row * 64 +
//! col * 4` is provably a multiple of 4, so the 16-byte vector is proven aligned). The kernel is
//! the one `examples/scale/kernel.rs` defines, compiled here from that file: one definition.

use ptx_isa::{Module, Target};

#[path = "../../examples/scale/kernel.rs"]
mod kernel;

pub use kernel::{COLS, ROWS, build, reference};

/// The scale module, for `ptxkit dump scale`.
pub fn scale(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}
