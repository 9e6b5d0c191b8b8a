//! The per-tensor-scaled FP8 GEMM on the GPU: e4m3 x e4m3, e5m2 x e4m3 and e4m3 x e5m2 inputs
//! (cuBLASLt has no e5m2 x e5m2), bf16 and f32 outputs, the
//! TMA-store and the register epilogue, the 128 x 256 tile and the narrow one, on shapes with
//! edges in M, N and K, each on fresh random data against cuBLASLt FP8 with promoted
//! accumulation and an f32 D ([`check_fp8`]), also with a bias (bf16 or f32) and an output
//! scale (by value or device pointer) in the epilogue; and an 8-bit K that is not a multiple
//! of 16 refused with [`GemmError::UnalignedK`] before anything runs.

use std::sync::Arc;

use ptx_isa::ScalarType::{Bf16, E4m3, E5m2, F32};

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use crate::library::gemm::check::{CheckError, CheckResult, Fp8Problem, check_fp8};
use crate::library::gemm::cublaslt::LtFp8;
use crate::library::gemm::{Fp8Epilogue, Fp8Scales, Gemm, GemmConfig, GemmError, OutScale};
use crate::runtime::E4m3 as HostE4m3;
use crate::runtime::cuda::CudaStream;

/// Runs every case; the report's error is the worst relative Frobenius error.
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let lt = LtFp8::new(ctx.stream.clone()).map_err(CheckError::from)?;
    let sms = ctx.dev.attributes().sm_count;
    let fp8 = |m, n, i, o| GemmConfig::fp8(m, n, sms, i, o);
    let mixed = |cfg: GemmConfig, b| GemmConfig {
        input_b: Some(b),
        ..cfg
    };
    // The 128 x 256 configuration of a large problem, also run on a small one: its edge tiles.
    let large = fp8(4096, 4096, E4m3, Bf16);
    let cases = [
        // Narrow tiles, TMA-store epilogue, M and N edges.
        (fp8(300, 520, E4m3, Bf16), (300, 520, 256)),
        // The large tile on edges in M, N and K (272 = 2 x 128 + 16).
        (large, (300, 520, 272)),
        (large, (4096, 4096, 4096)),
        // Gradients (e5m2) times weights (e4m3).
        (mixed(fp8(2048, 2048, E5m2, Bf16), E4m3), (2048, 2048, 1024)),
        // N = 500 is not a multiple of 8: the register epilogue with bf16 pairs.
        (fp8(333, 500, E4m3, Bf16), (333, 500, 160)),
        // f32 C: the register epilogue, 4 stages.
        (fp8(1024, 4096, E4m3, F32), (1024, 4096, 512)),
        (mixed(fp8(260, 384, E4m3, F32), E5m2), (260, 384, 128)),
        // The epilogue's bias and output scale: the TMA-store epilogue (f32 bias, scale by
        // value) on edges, the register epilogue (bf16 bias, scale by pointer; bias alone).
        (
            GemmConfig {
                bias: Some(F32),
                out_scale: OutScale::Value,
                ..large
            },
            (300, 520, 272),
        ),
        (
            GemmConfig {
                bias: Some(Bf16),
                out_scale: OutScale::Pointer,
                ..fp8(1024, 4096, E4m3, F32)
            },
            (260, 384, 128),
        ),
        (
            GemmConfig {
                bias: Some(Bf16),
                ..fp8(333, 500, E4m3, Bf16)
            },
            (333, 500, 160),
        ),
        // Swap-AB (the tokens on the wgmma N side, C stored transposed): 16 wide at a decode
        // M with edges, and 64 wide in 4 parts into an f32 C.
        (fp8(16, 520, E4m3, Bf16).swapped(16, 1), (13, 520, 272)),
        (fp8(64, 384, E4m3, F32).swapped(64, 4), (70, 384, 640)),
        // The unswapped 32-wide tile (the weight's rows 32 to a tile) with edges.
        (
            fp8(64, 520, E4m3, Bf16).decode_tile(32, 1, false),
            (70, 520, 272),
        ),
        // Split-K's in-kernel fixup, swapped 32 wide in 8 parts (the last ones without a
        // k-tile at K = 640) and unswapped 128 wide in 2.
        (
            GemmConfig {
                split_fixup: true,
                ..fp8(64, 1000, E4m3, Bf16).swapped(32, 8)
            },
            (40, 1000, 640),
        ),
        (
            GemmConfig {
                split_k: 2,
                split_fixup: true,
                tma_store: false,
                bn: 128,
                ..fp8(300, 520, E4m3, Bf16)
            }
            .deepest(),
            (300, 520, 272),
        ),
    ];
    let (worst, lines) = run_cases(
        ctx,
        "gemm_fp8",
        cases,
        |stream, gemm, shape, seed| check_fp8(stream, &lt, gemm, shape, seed),
        |r| format!(" (cuBLASLt fast {:.2e})", r.cublas_rel_error),
    )?;
    // K = 100: 100-byte rows, which a tensor map cannot describe; refused by the launcher.
    let gemm = Gemm::new(&ctx.dev, fp8(128, 128, E4m3, F32))?;
    let round = HostE4m3::from_f32 as fn(f32) -> HostE4m3;
    let p = Fp8Problem::new(&ctx.stream, (128, 128, 100), 1, (round, round))?;
    let mut c = ctx.poisoned(&[128, 128])?;
    let scales = Fp8Scales::per_tensor(p.scales());
    match gemm.run_fp8(&ctx.stream, &p.a, &p.b, &mut c, scales, &Fp8Epilogue::NONE) {
        Err(GemmError::UnalignedK { k: 100, .. }) => {}
        other => {
            return Err(GpuCheckError::Unexpected {
                check: "gemm_fp8 k = 100".into(),
                detail: format!("want UnalignedK, got {other:?}"),
            });
        }
    }
    Ok(Report {
        max_err: worst,
        tolerance: CheckResult::TOLERANCE,
        detail: format!("{}; k = 100 refused", lines.join("; ")),
    })
}

/// The FP8 checks' cases: each configuration built and run by `check` at its `(m, n, k)` on a
/// fresh seed; the worst relative error and a line a case (`name mxnxk: rel e` and what `note`
/// adds), or the first case that fails as [`GpuCheckError::Unexpected`] of `check_name`.
pub(crate) fn run_cases(
    ctx: &mut GpuCtx,
    check_name: &str,
    cases: impl IntoIterator<Item = (GemmConfig, (usize, usize, usize))>,
    mut check: impl FnMut(
        &Arc<CudaStream>,
        &Gemm,
        (usize, usize, usize),
        u64,
    ) -> Result<CheckResult, CheckError>,
    note: impl Fn(&CheckResult) -> String,
) -> Result<(f64, Vec<String>), GpuCheckError> {
    let mut worst = 0.0f64;
    let mut lines = Vec::new();
    for (cfg, shape) in cases {
        let gemm = Gemm::new(&ctx.dev, cfg)?;
        let r = check(&ctx.stream, &gemm, shape, ctx.rng.next_u64())?;
        let (m, n, k) = shape;
        let line = format!(
            "{} {m}x{n}x{k}: rel {:.2e}{}",
            cfg.name(),
            r.rel_error,
            note(&r)
        );
        if !r.passed() {
            return Err(GpuCheckError::Unexpected {
                check: check_name.into(),
                detail: format!("{line}, {} unwritten", r.unwritten),
            });
        }
        worst = worst.max(r.rel_error);
        lines.push(line);
    }
    Ok((worst, lines))
}
