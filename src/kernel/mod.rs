//! Kernel definition: tensors with shapes, dtypes, layouts and element offsets (the `match_buffer`
//! model), runtime scalars, symbolic extents read from the tensors at launch, tensor maps; scope
//! ids whose extents are the launch's grid, block and cluster; buffers (shared, pooled, registers,
//! views) whose indexing lowers to address arithmetic from their layout; `let` bindings and
//! mutable scalars; structured loops and branches.
//!
//! A [`KernelBuilder`] wraps a ptx-isa [`ptx_isa::FunctionBuilder`] and [`ptx_isa::Module`];
//! [`KernelBuilder::finish`] gives a [`BuiltKernel`] carrying the PTX, the
//! [`crate::signature::KernelSignature`] the launcher checks arguments against, and the launch
//! extents. Compile-time parameters are plain Rust values in the function that builds the kernel:
//! a kernel specialises by being rebuilt (the `T.jit` model).
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{Expr, KernelBuilder, TensorOpts};
//! use ptxkit::isa::builder::CmpOp;
//!
//! // c[i] = a[i] + b[i] for i < n, n read from the tensors' shapes at launch.
//! let mut k = KernelBuilder::new("vadd", Target::Sm90a);
//! let n = k.symbol("n")?;
//! let a = k.tensor::<ty::F32>("a", [n], TensorOpts::default())?;
//! let b = k.tensor::<ty::F32>("b", [n], TensorOpts::default())?;
//! let c = k.tensor::<ty::F32>("c", [n], TensorOpts::default())?;
//! let [bx] = k.cta_id([Expr::ceil_div(n, 256)])?;
//! let [tx] = k.thread_id([256])?;
//! let i = k.let_("i", bx * 256 + tx)?;
//! let in_range = k.cmp(CmpOp::Lt, i, n)?;
//! k.if_(in_range, |k| {
//!     let x = k.load(&a, [i])?;
//!     let y = k.load(&b, [i])?;
//!     k.add(x, x, y)?;
//!     k.store(&c, [i], x)
//! })
//! .end()?;
//! let built = k.finish()?;
//! assert!(built.ptx().contains(".maxntid 256, 1, 1"));
//! assert!(built.ptx().contains("shl.b32")); // bx * 256
//! assert_eq!(built.signature().argument_count(), 3); // n is not passed: it is read from a, b, c
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

mod access;
mod buffer;
mod builder;
mod built;
mod caching;
mod control;
mod error;
pub mod expr;
mod fragment;
pub mod math;
pub(crate) mod memo;
mod reduce;
mod scope;
mod signal;
mod tma;
mod warpgroup;

pub use buffer::{Buffer, Elem, Layout, LayoutMismatch, NestedLayout, Ptr, Storage};
pub use builder::{KernelBuilder, TensorOpts};
pub use built::{BuiltKernel, LaunchSpec, PersistentGrid, PersistentUnit};
pub use caching::Caching;
pub use control::If;
pub use error::{CallSite, KernelError, Result};
pub use expr::{Expr, Exprs, Var};
pub use reduce::{Axis, FragmentReduction, Moments, ReduceOp, ReduceScope, Reducible};
pub use tma::TmaTensor;
