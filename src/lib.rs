//! ptxkit: write NVIDIA GPU kernels straight to PTX text from Rust, and run them through the CUDA
//! driver's JIT.
#![deny(missing_docs)]

pub mod cli;
pub mod kernel;
pub mod kernels;
pub mod runtime;
pub mod signature;
pub mod tile;

pub use layouts;
pub use ptx_isa as isa;
pub use smem;
