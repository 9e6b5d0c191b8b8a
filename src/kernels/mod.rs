//! Built-in kernels, by name: what `ptxkit dump NAME` writes and the examples run.

pub mod gemm;
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
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "vector_add",
        summary: "c[i] = a[i] + b[i] over f32 vectors of length n",
        build: vector_add,
    },
    Builtin {
        name: "gemm",
        summary: "bf16 C = A·Bᵀ, 128x256x64 tiles, 3 stages, warp-specialised wgmma (sm_90a)",
        build: gemm_large,
    },
];

/// The large-tile bf16 GEMM (sm_90a only).
fn gemm_large(target: Target) -> ptx_isa::Result<Module> {
    if target != Target::Sm90a {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::UnsupportedTarget,
            "the GEMM uses wgmma and setmaxnreg: sm_90a only",
        )
        .on_target(target));
    }
    gemm::build(&gemm::GemmConfig::large())
}

/// The built-in kernel called `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}
