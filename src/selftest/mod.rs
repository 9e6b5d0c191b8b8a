//! The GPU self-test harness behind `ptxkit selftest`: each check runs a kernel on fresh random
//! data with its outputs poisoned and compares it with a host reference. The checks of library
//! kernels ([`library`], [`rows`], the GEMM's debug build in [`hang_checks`], the FP8 GEMM in
//! [`gemm_fp8`], the grouped GEMM in [`gemm_grouped`]) import the library
//! and use its build functions, launchers and host references; the other checks build kernels
//! of their own to check a layer (tile ops, refused launches, planted hangs, printf). The
//! library never imports this folder; [`crate::registry`] names every check's kernel.

pub mod attention;
pub mod attention_backward;
pub mod attention_backward_args;
pub mod attention_bench;
pub mod bad_launches;
pub mod ctx;
pub mod decode;
pub mod epilogue_check;
pub mod example;
pub mod gemm_epilogue;
pub mod gemm_fp8;
pub mod gemm_fp8_block;
pub mod gemm_grouped;
pub mod hang_checks;
pub mod library;
pub mod rows;
pub mod tile_checks;

pub use ctx::{
    BenchFilter, GpuCheckError, GpuCtx, Report, Rng, RunResult, device_or_skip, gpu_with_or_skip,
    max_abs_err, or_skip, result_line,
};
pub use example::{
    ExampleGpu, PtxCheckError, WrongResult, check_ptx, device_at_least_or_skip, exact_verdict,
    example_start,
};
