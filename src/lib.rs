//! ptxkit: write NVIDIA GPU kernels straight to PTX text from Rust, and run them through the CUDA
//! driver's JIT.
//!
//! A kernel is Rust code that builds it: tensors with symbolic shapes (and what is known of them),
//! scope ids that fix the launch, loads and stores that pick their vector widths and bounds checks
//! from those facts, math and reductions on registers. The built kernel carries its PTX and a
//! signature the launcher checks arguments against.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{KernelBuilder, ReduceOp, ReduceScope, TensorOpts};
//! use ptxkit::runtime::ExtentFacts;
//!
//! // y[r, :] = x[r, :] / sum(x[r, :]), one CTA of 128 threads per row of up to 512 columns.
//! let mut k = KernelBuilder::new("normalize", Target::Sm90a);
//! let rows = k.symbol("rows")?;
//! let cols = k.symbol_with("cols", ExtentFacts::NONE.multiple_of(4).at_most(512))?;
//! let x = k.tensor::<ty::F32>("x", [rows, cols], TensorOpts::default().align(16))?;
//! let y = k.tensor::<ty::F32>("y", [rows, cols], TensorOpts::default().align(16))?;
//! let [r] = k.cta_id([rows])?;
//! let [t] = k.thread_id([128])?;
//! let v = k.load_n(&x, [r.into(), t * 4], 4, 0.0f32)?; // ld.global.v4.f32 under one bounds check
//! let sum = k.reduce(ReduceOp::Sum, &v, ReduceScope::Cta)?;
//! let inv = k.rcp_of(sum)?;
//! let out = v.iter().map(|&e| k.mul_of(e, inv)).collect::<Result<Vec<_>, _>>()?;
//! k.store_n(&y, [r.into(), t * 4], &out)?;
//! let built = k.finish()?;
//! assert!(built.ptx().contains("ld.global.v4.f32"));
//! // On a GPU: built.load(&device, &JitOptions::default())?.launch(&stream, &mut [Arg::tensor(&x), ..])
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```
#![deny(missing_docs)]

// The library's built-ins compile the examples' kernel files (`src/library/vector_add.rs` and its
// siblings), which name this crate `ptxkit` as any user's code does.
extern crate self as ptxkit;

pub mod cli;
pub mod kernel;
pub mod library;
pub mod parts;
pub mod registry;
pub mod runtime;
pub mod selftest;
pub mod signature;
pub mod tile;

pub use layouts;
pub use ptx_isa as isa;
pub use smem;
