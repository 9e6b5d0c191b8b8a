//! `y = s * x` over f32 `[m, 64]` tensors with `s` a run-time scalar, written with
//! `KernelBuilder`: the kernel of `examples/scale` (`main.rs` prints, launches and checks it).
//! This file is also the library's built-in `scale` (`ptxkit dump scale`, the self-test): one
//! definition.

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};

/// Columns: a build-time extent.
pub const COLS: u32 = 64;
/// Rows each CTA takes.
pub const ROWS: u32 = 4;

/// `y[r, c] = s * x[r, c]`; `m` is read from the tensors' shapes, `s` is passed at the launch.
pub fn build(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("scale", target);
    let m = k.symbol("m")?;
    let aligned = TensorOpts::default().align(16);
    let x = k.tensor::<ty::F32>("x", [Expr::from(m), COLS.into()], aligned.clone())?;
    let y = k.tensor::<ty::F32>("y", [Expr::from(m), COLS.into()], aligned)?;
    let s = k.scalar::<ty::F32>("s")?; // a `.param .f32`, passed as `Arg` from an f32
    let [block] = k.cta_id([Expr::ceil_div(m, ROWS)])?;
    let [t] = k.thread_id([COLS / 4])?;
    k.for_range(0, ROWS, |k, r| {
        let row = k.let_("row", block * ROWS + r)?;
        // The last CTA may hold fewer than ROWS rows.
        let inside = k.cmp(CmpOp::Lt, row, m)?;
        k.if_(inside, |k| {
            let v = k.vload(&x, [Expr::from(row), t * 4], 4)?; // one ld.global.v4.f32
            for &e in &v {
                k.mul(e, e, s)?;
            }
            k.vstore(&y, [Expr::from(row), t * 4], &v)
        })
        .end()
    })?;
    k.finish()
}

/// The host reference: `s * x[i]`.
pub fn reference(x: &[f32], s: f32) -> Vec<f32> {
    x.iter().map(|v| v * s).collect()
}
