//! `y = s * x` over `f32[m, 64]` with `s` a runtime scalar: each CTA takes [`ROWS`] rows in a
//! loop, each thread 4 consecutive elements as one vector load and store (the index `row * 64 +
//! col * 4` is provably a multiple of 4, so the 16-byte vector is proven aligned).

use ptx_isa::builder::CmpOp;
use ptx_isa::{Module, Target, ty};

use super::gpu::{GpuCtx, Report, RunResult, max_abs_err};
use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};
use crate::runtime::Arg;

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

/// Runs on m = 1, 333 and 4099 with a random scalar.
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let k = ctx.load(&build(ctx.target())?)?;
    let mut err = 0.0f64;
    let mut sizes = Vec::new();
    let cols = COLS as usize;
    for m in [1usize, 333, 4099] {
        let hx = ctx.rng.vec_f32(m * cols);
        let s = ctx.rng.f32() * 4.0;
        let x = ctx.upload(&hx, &[m, cols])?;
        let mut y = ctx.poisoned(&[m, cols])?;
        k.launch(
            &ctx.stream,
            &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y), s.into()],
        )?;
        let got = ctx.download(&y)?;
        let want: Vec<f32> = hx.iter().map(|v| v * s).collect();
        err = err.max(max_abs_err(&got, &want));
        sizes.push(m.to_string());
    }
    Ok(Report {
        max_err: err,
        tolerance: 0.0,
        detail: format!("m = {} (x 64), random s", sizes.join(", ")),
    })
}
