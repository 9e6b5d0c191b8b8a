//! Bad launches on a real device: each is refused before anything runs, with the error that
//! names the problem, and the poisoned output stays poisoned.

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use crate::library::{scale, vector_add};
use crate::runtime::{Arg, RuntimeError, TensorMapDType, TensorMapDesc, TmaBox};
use smem::SwizzleMode;

fn refused(
    what: &str,
    r: Result<impl std::fmt::Debug, RuntimeError>,
    ok: fn(&RuntimeError) -> bool,
) -> Result<String, GpuCheckError> {
    let unexpected = |detail: String| GpuCheckError::Unexpected {
        check: what.to_string(),
        detail,
    };
    match r {
        Err(e) if ok(&e) => Ok(format!("{what}: refused")),
        Err(e) => Err(unexpected(format!("wrong error: {e}"))),
        Ok(v) => Err(unexpected(format!("not refused ({v:?})"))),
    }
}

/// Wrong shape, wrong dtype, a misaligned tensor map, too much shared memory and too large a
/// cluster.
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let target = ctx.target();
    let vadd = ctx.load(&vector_add::build(target)?)?;
    let scale = ctx.load(&scale::build(target)?)?;
    let n = 1000;
    let (ha, hshort) = (ctx.rng.vec_f32(n), ctx.rng.vec_f32(n - 1));
    let a = ctx.upload(&ha, &[n])?;
    let short = ctx.upload(&hshort, &[n - 1])?;
    let ints = ctx.upload(&vec![1u32; n], &[n])?;
    let mut c = ctx.poisoned(&[n])?;
    let mut lines = Vec::new();
    let vadd_launch = |args: &mut [Arg<'_>]| vadd.launch(&ctx.stream, args);
    lines.push(refused(
        "shape (b has n-1)",
        vadd_launch(&mut [(&a).into(), (&short).into(), (&mut c).into()]),
        |e| matches!(e, RuntimeError::SymbolMismatch { .. }),
    )?);
    let hx = ctx.rng.vec_f32(8 * 32);
    let x = ctx.upload(&hx, &[8, 32])?;
    let mut y = ctx.poisoned(&[8, 64])?;
    lines.push(refused(
        "shape ([8, 32] for [m, 64])",
        scale.launch(
            &ctx.stream,
            &mut [(&x).into(), (&mut y).into(), 2.0f32.into()],
        ),
        |e| matches!(e, RuntimeError::ArgShape { .. }),
    )?);
    lines.push(refused(
        "dtype (u32 for f32)",
        vadd_launch(&mut [(&ints).into(), (&a).into(), (&mut c).into()]),
        |e| matches!(e, RuntimeError::ArgDtype { .. }),
    )?);
    let desc = TensorMapDesc::row_major(
        TensorMapDType::F32,
        a.addr() + 4,
        &[8, 100],
        &TmaBox::new([8, 32]).swizzle(SwizzleMode::B128),
    );
    lines.push(refused(
        "misaligned map (+4 bytes)",
        ctx.dev.encode_tensor_map(&desc).map(|_| ()),
        |e| matches!(e, RuntimeError::TensorMapRule { .. }),
    )?);
    let descs: Vec<_> = [Arg::tensor(&a), Arg::tensor(&a), Arg::tensor(&c)]
        .iter()
        .map(Arg::desc)
        .collect();
    let (cfg, _) = vadd.built().config_for(&descs, ctx.dev.ordinal())?;
    let optin = ctx.dev.attributes().max_shared_memory_per_block_optin;
    lines.push(refused(
        "too much smem (opt-in + 1 KiB)",
        vadd.kernel().launch(
            &ctx.stream,
            &cfg.with_dynamic_smem(optin + 1024),
            &mut [(&a).into(), (&a).into(), (&mut c).into()],
        ),
        |e| matches!(e, RuntimeError::SharedMemoryTooLarge { .. }),
    )?);
    let mut big = cfg;
    big.grid = [32, 1, 1];
    lines.push(refused(
        "cluster of 32",
        vadd.kernel().launch(
            &ctx.stream,
            &big.with_cluster([32, 1, 1]),
            &mut [(&a).into(), (&a).into(), (&mut c).into()],
        ),
        |e| matches!(e, RuntimeError::ClusterTooLarge { .. }),
    )?);
    let got = ctx.download(&c)?;
    if got.iter().any(|v| !v.is_nan()) {
        return Err(GpuCheckError::Unexpected {
            check: "bad launches".into(),
            detail: "a refused launch wrote the output".into(),
        });
    }
    Ok(Report {
        max_err: 0.0,
        tolerance: 0.0,
        detail: format!("{} refused, output untouched", lines.len()),
    })
}
