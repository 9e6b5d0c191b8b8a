//! The GPU runs of the library's small kernels: fresh random data, poisoned outputs, each
//! kernel's own host reference, one [`Report`] each.

use super::ctx::{GpuCtx, Report, RunResult, max_abs_err};
use crate::library::{cluster_exchange, scale, tma_copy, vector_add};
use crate::runtime::Arg;

/// Runs on lengths 1, 1000 and 2^20 + 3: one kernel, three values of `n`.
pub fn run_vector_add(ctx: &mut GpuCtx) -> RunResult {
    let k = ctx.load(&vector_add::build(ctx.target())?)?;
    let mut err = 0.0f64;
    let mut sizes = Vec::new();
    for n in [1usize, 1000, (1 << 20) + 3] {
        let (ha, hb) = (ctx.rng.vec_f32(n), ctx.rng.vec_f32(n));
        let a = ctx.upload(&ha, &[n])?;
        let b = ctx.upload(&hb, &[n])?;
        let mut c = ctx.poisoned(&[n])?;
        let syms = k.launch(
            &ctx.stream,
            &mut [Arg::tensor(&a), Arg::tensor(&b), Arg::tensor_mut(&mut c)],
        )?;
        let got = ctx.download(&c)?;
        let want = vector_add::reference(&ha, &hb);
        err = err.max(max_abs_err(&got, &want));
        sizes.push(format!("{}", syms["n"]));
    }
    Ok(Report {
        max_err: err,
        tolerance: 0.0,
        detail: format!("n = {}", sizes.join(", ")),
    })
}

/// Runs on m = 1, 333 and 4099 with a random scalar.
pub fn run_scale(ctx: &mut GpuCtx) -> RunResult {
    let k = ctx.load(&scale::build(ctx.target())?)?;
    let mut err = 0.0f64;
    let mut sizes = Vec::new();
    let cols = scale::COLS as usize;
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
        let want = scale::reference(&hx, s);
        err = err.max(max_abs_err(&got, &want));
        sizes.push(m.to_string());
    }
    Ok(Report {
        max_err: err,
        tolerance: 0.0,
        detail: format!("m = {} (x 64), random s", sizes.join(", ")),
    })
}

/// Runs on the default shape with fresh data; `dst` poisoned.
pub fn run_tma_copy(ctx: &mut GpuCtx) -> RunResult {
    let (rows, cols) = (tma_copy::SHAPE.0 as usize, tma_copy::SHAPE.1 as usize);
    let built = tma_copy::build(ctx.target())?;
    let k = ctx.load(&built)?;
    let hsrc = ctx.rng.vec_f32(rows * cols);
    let src = ctx.upload(&hsrc, &[rows, cols])?;
    let mut dst = ctx.poisoned(&[rows, cols])?;
    // The launcher builds both tensor maps from the tensors and the kernel's declared box.
    k.launch(
        &ctx.stream,
        &mut [Arg::tensor(&src), Arg::tensor_mut(&mut dst)],
    )?;
    ctx.stream.synchronize()?;
    let got = ctx.download(&dst)?;
    Ok(Report {
        max_err: max_abs_err(&got, &tma_copy::reference(&hsrc, cols)),
        tolerance: 0.0,
        detail: format!(
            "{rows} x {cols} f32, {b} x {b} boxes, {} B dynamic smem",
            built.launch_spec().dynamic_smem_bytes,
            b = tma_copy::BOX,
        ),
    })
}

/// Runs with fresh data; `out` poisoned.
pub fn run_cluster_exchange(ctx: &mut GpuCtx) -> RunResult {
    use cluster_exchange::{CLUSTER, CLUSTERS, THREADS};
    let built = cluster_exchange::build(ctx.target())?;
    let k = ctx.load(&built)?;
    let n = (CLUSTERS * CLUSTER * THREADS) as usize;
    let hx = ctx.rng.vec_f32(n);
    let x = ctx.upload(&hx, &[n])?;
    let mut out = ctx.poisoned(&[n])?;
    k.launch(
        &ctx.stream,
        &mut [Arg::tensor(&x), Arg::tensor_mut(&mut out)],
    )?;
    let got = ctx.download(&out)?;
    Ok(Report {
        max_err: max_abs_err(&got, &cluster_exchange::reference(&hx)),
        tolerance: 0.0,
        detail: format!(
            "{CLUSTERS} clusters of {CLUSTER} CTAs x {THREADS} threads, grid {:?}",
            built
                .launch_spec()
                .grid
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        ),
    })
}
