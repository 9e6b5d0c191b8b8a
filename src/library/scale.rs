//! `y = s * x` over `f32[m, 64]` with `s` a runtime scalar: each CTA takes [`ROWS`] rows in a
//! loop, each thread 4 consecutive elements as one vector load and store (the index `row * 64 +
//! col * 4` is provably a multiple of 4, so the 16-byte vector is proven aligned).

use ptx_isa::builder::CmpOp;
use ptx_isa::{Module, Target, ty};

use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};

/// Columns (a compile-time extent).
pub const COLS: u32 = 64;
/// Rows per CTA.
pub const ROWS: u32 = 4;

/// The kernel `scale(m, x, y, s)`.
pub fn build(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("scale", target);
    let m = k.symbol("m")?;
    let opts = TensorOpts::default().align(16);
    let x = k.tensor::<ty::F32>("x", [Expr::from(m), COLS.into()], opts.clone())?;
    let y = k.tensor::<ty::F32>("y", [Expr::from(m), COLS.into()], opts)?;
    let s = k.scalar::<ty::F32>("s")?;
    let [bx] = k.cta_id([Expr::ceil_div(m, ROWS)])?;
    let [tx] = k.thread_id([COLS / 4])?;
    k.for_range(0, ROWS, |k, r| {
        let row = k.let_("row", bx * ROWS + r)?;
        let inside = k.cmp(CmpOp::Lt, row, m)?;
        k.if_(inside, |k| {
            let v = k.vload(&x, [Expr::from(row), tx * 4], 4)?;
            for &e in &v {
                k.mul(e, e, s)?;
            }
            k.vstore(&y, [Expr::from(row), tx * 4], &v)
        })
        .end()
    })?;
    k.finish()
}

/// The scale module, for `ptxkit dump scale`.
pub fn scale(target: Target) -> ptx_isa::Result<Module> {
    Ok(build(target)?.into_module())
}

/// The host reference: `s * x[i]`.
pub fn reference(x: &[f32], s: f32) -> Vec<f32> {
    x.iter().map(|v| v * s).collect()
}
