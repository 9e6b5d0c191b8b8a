//! Built-in kernels, by name: what `ptxkit dump NAME` writes, and the GPU examples that
//! `ptxkit selftest` runs ([`gpu::GPU_EXAMPLES`]).

pub mod bad_launches;
pub mod cluster_exchange;
pub mod epilogue_check;
pub mod gemm;
pub mod gpu;
pub mod hang_checks;
pub mod rows;
pub mod scale;
pub mod tile_checks;
pub mod tma_copy;
pub mod vector_add;

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
        name: "scale",
        summary: "y = s * x over f32[m, 64] (runtime scalar s, vector loads)",
        build: scale::scale,
    },
    Builtin {
        name: "tma_copy",
        summary: "2-D TMA load with 128B swizzle and an mbarrier, TMA store (sm_90a)",
        build: tma_copy::tma_copy,
    },
    Builtin {
        name: "cluster_exchange",
        summary: "4-CTA clusters reading a neighbour's shared memory (sm_90a)",
        build: cluster_exchange::cluster_exchange,
    },
    Builtin {
        name: "gemm",
        summary: "bf16 C = A·Bᵀ, 128x256x64 tiles, 3 stages, warp-specialised wgmma (sm_90a)",
        build: gemm_large,
    },
    Builtin {
        name: "gemm_debug",
        summary: "the gemm's debug build: bounded waits that record where they hang (sm_90a)",
        build: gemm_large_debug,
    },
];

/// The large-tile bf16 GEMM (sm_90a only).
fn gemm_large(target: Target) -> ptx_isa::Result<Module> {
    gemm_large_with(target, smem::pipeline::sync::WaitMode::Spin)
}

/// Its debug build.
fn gemm_large_debug(target: Target) -> ptx_isa::Result<Module> {
    gemm_large_with(target, smem::pipeline::sync::WaitMode::Bounded)
}

fn gemm_large_with(
    target: Target,
    mode: smem::pipeline::sync::WaitMode,
) -> ptx_isa::Result<Module> {
    if target != Target::Sm90a {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::UnsupportedTarget,
            "the GEMM uses wgmma and setmaxnreg: sm_90a only",
        )
        .on_target(target));
    }
    gemm::build_with(&gemm::GemmConfig::large(), mode).map(|(m, _)| m)
}

/// The built-in kernel called `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}
