//! `c[i] = a[i] + b[i]` for `i < n`, one thread per element, written with `KernelBuilder`: the
//! kernel of `examples/vector_add` (`main.rs` prints, launches and checks it). This file is also
//! the library's built-in `vector_add` (`ptxkit dump vector_add`, the self-test): one definition.

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};

/// Threads per block (the kernel's `.maxntid`).
pub const BLOCK: u32 = 256;

/// The kernel `vector_add(a, b, c)` over `f32[n]` tensors: `n` is a symbolic extent the launcher
/// reads from the tensors' shapes, and the grid is `ceil(n / BLOCK)` blocks of [`BLOCK`] threads.
pub fn build(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("vector_add", target);
    let n = k.symbol("n")?;
    let a = k.tensor::<ty::F32>("a", [n], TensorOpts::default())?;
    let b = k.tensor::<ty::F32>("b", [n], TensorOpts::default())?;
    let c = k.tensor::<ty::F32>("c", [n], TensorOpts::default())?;
    let [block] = k.cta_id([Expr::ceil_div(n, BLOCK)])?;
    let [t] = k.thread_id([BLOCK])?;
    let i = k.let_("i", block * BLOCK + t)?;
    let inside = k.cmp(CmpOp::Lt, i, n)?;
    k.if_(inside, |k| {
        let x = k.load(&a, [i])?;
        let y = k.load(&b, [i])?;
        let sum = k.add_of(x, y)?;
        k.store(&c, [i], sum)
    })
    .end()?;
    k.finish()
}

/// The host reference: `a[i] + b[i]`.
pub fn reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}
