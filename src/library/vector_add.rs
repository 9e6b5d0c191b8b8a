//! `c[i] = a[i] + b[i]` for `i < n`, one thread per element; `n` is a symbolic extent read from
//! the tensors' shapes at launch. The kernel is the one `examples/vector_add/kernel.rs` defines,
//! compiled here from that file: the example a user reads is the built-in `ptxkit dump` writes
//! and the self-test runs.

use ptx_isa::{Module, Target};

#[path = "../../examples/vector_add/kernel.rs"]
mod kernel;

pub use kernel::{BLOCK, build, reference};

/// The vector-add module, for `ptxkit dump vector_add`.
pub fn vector_add(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}
