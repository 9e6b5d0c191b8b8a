//! `c[i] = a[i] + b[i]` for `i < n`, one thread per element; `n` is a symbolic extent read from
//! the tensors' shapes at launch.

use ptx_isa::builder::CmpOp;
use ptx_isa::{Module, Target, ty};

use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};

/// Threads per block (the kernel's `.maxntid`).
pub const BLOCK: u32 = 256;

/// The kernel `vector_add(n, a, b, c)`: `a`, `b`, `c` are `f32[n]`, `n` is filled in by the
/// launcher; the grid is `ceil(n / BLOCK)` blocks of [`BLOCK`] threads.
pub fn build(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("vector_add", target);
    let n = k.symbol("n")?;
    let a = k.tensor::<ty::F32>("a", [n], TensorOpts::default())?;
    let b = k.tensor::<ty::F32>("b", [n], TensorOpts::default())?;
    let c = k.tensor::<ty::F32>("c", [n], TensorOpts::default())?;
    let [bx] = k.cta_id([Expr::ceil_div(n, BLOCK)])?;
    let [tx] = k.thread_id([BLOCK])?;
    let i = k.let_("i", bx * BLOCK + tx)?;
    let in_range = k.cmp(CmpOp::Lt, i, n)?;
    k.if_(in_range, |k| {
        let x = k.load(&a, [i])?;
        let y = k.load(&b, [i])?;
        k.add(x, x, y)?;
        k.store(&c, [i], x)
    })
    .end()?;
    k.finish()
}

/// The vector-add module, for `ptxkit dump vector_add`.
pub fn vector_add(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}

/// The host reference: `a[i] + b[i]`.
pub fn reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}
