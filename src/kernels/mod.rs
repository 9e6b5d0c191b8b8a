//! Built-in kernels, by name: what `ptxkit dump NAME` writes and the examples run.

mod vector_add;

pub use vector_add::vector_add;

use ptx_isa::{Module, Target};

/// A named built-in kernel: its name, a one-line description and its builder.
pub struct Builtin {
    /// The name `ptxkit dump` takes.
    pub name: &'static str,
    /// What it computes.
    pub summary: &'static str,
    /// Builds its module for a target.
    pub build: fn(Target) -> ptx_isa::Result<Module>,
}

/// Every built-in kernel.
pub const BUILTINS: &[Builtin] = &[Builtin {
    name: "vector_add",
    summary: "c[i] = a[i] + b[i] over f32 vectors of length n",
    build: vector_add,
}];

/// The built-in kernel called `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}
