//! The block-scaled FP8 GEMM ([`crate::library::gemm::Scaling::Block`]) on the GPU: e4m3,
//! e5m2 and mixed inputs, bf16, f16 and f32 outputs, the TMA-store and the register epilogue,
//! the 256-, 128- and 64-wide tiles, a CTA pair, the pipelined promotion (odd and even k-tile
//! counts), on shapes with edges in M, N and K (K not a multiple
//! of 128: a partial last scale block), each on fresh random data with random per-block
//! scales against an f64 host reference of the dequantized product ([`check_block`]); and
//! scale tensors of the wrong shape refused with [`GemmError::BlockScales`] before anything
//! runs.

use ptx_isa::ScalarType::{Bf16, E4m3, E5m2, F16, F32};

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use super::gemm_fp8::run_cases;
use crate::library::gemm::check::CheckResult;
use crate::library::gemm::check_block::{BlockProblem, Codec, check_block};
use crate::library::gemm::{Fp8Epilogue, Fp8Scales, Gemm, GemmConfig, GemmError, OutScale};
use crate::runtime::{DeviceTensor, E4m3 as HostE4m3};

/// Runs every case; the report's error is the worst relative Frobenius error.
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let sms = ctx.dev.attributes().sm_count;
    // The plain promotion (the variants below are built from it), and the default.
    let block = |m, n, i, o| GemmConfig::fp8_block_pipelined(m, n, sms, i, o).fp8_block_plain();
    let default = |m, n, i, o| GemmConfig::fp8_block(m, n, sms, i, o);
    let large = block(8192, 8192, E4m3, Bf16);
    let pipelined = |cfg: GemmConfig| GemmConfig {
        pipelined_promotion: true,
        ..cfg
    };
    let wide = |cfg: GemmConfig| {
        GemmConfig {
            bn: 256,
            pipelined_promotion: false,
            ..cfg
        }
        .deepest()
    };
    let staged = |cfg: GemmConfig| {
        GemmConfig {
            smem_scales: true,
            ..cfg
        }
        .deepest()
    };
    let straddling = |cfg: GemmConfig| {
        GemmConfig {
            bn: 192,
            smem_scales: true,
            pipelined_promotion: false,
            ..cfg
        }
        .deepest()
    };
    let cases = [
        // The defaults (GemmConfig::fp8_block): large M and N's 128 x 256 tile with the
        // scales in the stages on edges and a large square, the 192-wide one of N = 2112,
        // DeepSeek-V3's decode shape (64 wide, pipelined promotion, scales in the stages), and
        // the pipelined promotion without them for M = 333.
        (default(8192, 8192, E4m3, Bf16), (300, 520, 400)),
        (default(8192, 8192, E4m3, Bf16), (4096, 4096, 4096)),
        (default(4096, 2112, E4m3, Bf16), (260, 2112, 384)),
        (default(64, 2112, E4m3, Bf16), (64, 2112, 7168)),
        (default(333, 501, E4m3, Bf16), (333, 501, 160)),
        // The 192-wide tile: tiles whose first column starts a block of B's scales and tiles
        // whose first column is in a block's second half (N = 520: three tiles; N = 200: the
        // second tile's second block past N, clamped), the register epilogue and an f32 C,
        // the epilogue's bias, a large square.
        (straddling(large), (300, 520, 400)),
        (straddling(large), (136, 200, 272)),
        (
            GemmConfig {
                tma_store: false,
                ..straddling(large)
            },
            (260, 584, 256),
        ),
        (straddling(block(8192, 8192, E4m3, F32)), (384, 640, 768)),
        (
            GemmConfig {
                bias: Some(F32),
                out_scale: OutScale::Value,
                ..straddling(large)
            },
            (300, 520, 400),
        ),
        (straddling(large), (4096, 4096, 4096)),
        // The 128 x 128 tile on edges in M, N and K (400 = 3 x 128 + 16).
        (large, (300, 520, 400)),
        (large, (1024, 1024, 1024)),
        // DeepSeek-V3's decode shape: the 64-wide tile, M = 64.
        (block(64, 2112, E4m3, Bf16), (64, 2112, 7168)),
        // The 64-wide tile, N edge inside a scale block of B.
        (block(64, 2112, E4m3, Bf16), (200, 328, 272)),
        // e5m2, e5m2 x e4m3, e4m3 x e5m2 (f32 C).
        (block(2048, 2048, E5m2, Bf16), (256, 384, 512)),
        (
            GemmConfig {
                input_b: Some(E4m3),
                ..block(2048, 2048, E5m2, Bf16)
            },
            (512, 256, 640),
        ),
        (
            GemmConfig {
                input_b: Some(E5m2),
                ..block(260, 384, E4m3, F32)
            },
            (260, 384, 144),
        ),
        // f32 and f16 C; N = 501 (odd): the register epilogue with single stores.
        (block(8192, 8192, E4m3, F32), (384, 640, 768)),
        (block(8192, 8192, E4m3, F16), (256, 256, 256)),
        (block(333, 501, E4m3, Bf16), (333, 501, 160)),
        // A CTA pair sharing B; the register epilogue for a bf16 C; fewer stages.
        (
            GemmConfig {
                cluster_m: 2,
                ..large
            },
            (520, 384, 1040),
        ),
        (
            GemmConfig {
                tma_store: false,
                ..large
            },
            (136, 264, 256),
        ),
        (GemmConfig { stages: 4, ..large }, (4096, 4096, 4096)),
        // Pipelined promotion (two partials): odd and even k-tile counts (3, 4, 9, 1), a
        // partial last k-block, the 64-wide tile, a CTA pair, an f32 C, a large square.
        (pipelined(large), (300, 520, 272)),
        (pipelined(large), (1024, 1024, 512)),
        (pipelined(block(64, 2112, E4m3, Bf16)), (64, 2112, 1040)),
        (
            GemmConfig {
                cluster_m: 2,
                ..pipelined(large)
            },
            (520, 384, 1040),
        ),
        (pipelined(block(8192, 8192, E4m3, F32)), (130, 136, 128)),
        (pipelined(large), (4096, 4096, 4096)),
        // The 256-wide tile (two 128-column halves, each promoted with its own scale of B):
        // N ending inside a tile's first half, its second half past N and its scale block
        // clamped (304, 520 = 2 x 256 + 8; a multiple of 8 as the TMA store needs), a partial
        // last k-block, the register epilogue and an f32 C, a large square.
        (wide(large), (300, 304, 400)),
        (wide(large), (1024, 520, 1024)),
        (
            GemmConfig {
                tma_store: false,
                ..wide(large)
            },
            (136, 264, 256),
        ),
        (wide(block(8192, 8192, E4m3, F32)), (384, 640, 768)),
        (wide(large), (4096, 4096, 4096)),
        // The scales in the stages (M a multiple of 4): both tile widths on edges in M, N and
        // K, the pipelined promotion with odd and even k-tile counts, the 64-wide tile, a CTA
        // pair, the register epilogue and an f32 C, large squares.
        (staged(large), (300, 520, 400)),
        (staged(large), (4096, 4096, 4096)),
        (staged(pipelined(large)), (300, 520, 272)),
        (staged(pipelined(large)), (1024, 1024, 512)),
        (staged(pipelined(large)), (4096, 4096, 4096)),
        (
            staged(pipelined(block(64, 2112, E4m3, Bf16))),
            (64, 2112, 1040),
        ),
        (staged(wide(large)), (300, 304, 400)),
        (staged(wide(large)), (4096, 4096, 4096)),
        (
            GemmConfig {
                cluster_m: 2,
                ..staged(large)
            },
            (520, 384, 1040),
        ),
        (staged(block(8192, 8192, E4m3, F32)), (384, 640, 768)),
        (staged(wide(block(8192, 8192, E4m3, F32))), (136, 264, 256)),
        // The epilogue's bias (f32 or bf16, added after the scales in f32) and output scale (by
        // value or device pointer): each tile width, both epilogues, pipelined promotion.
        (
            GemmConfig {
                bias: Some(F32),
                out_scale: OutScale::Value,
                ..staged(large)
            },
            (300, 520, 400),
        ),
        (
            GemmConfig {
                bias: Some(Bf16),
                out_scale: OutScale::Pointer,
                ..staged(wide(large))
            },
            (300, 304, 400),
        ),
        (
            GemmConfig {
                bias: Some(Bf16),
                ..pipelined(block(8192, 8192, E4m3, F32))
            },
            (130, 136, 128),
        ),
        (
            GemmConfig {
                out_scale: OutScale::Pointer,
                ..block(333, 501, E4m3, Bf16)
            },
            (333, 501, 160),
        ),
        (
            GemmConfig {
                bias: Some(F32),
                ..block(64, 2112, E4m3, Bf16)
            },
            (200, 328, 272),
        ),
    ];
    let chosen = cases.into_iter().filter(|(c, s)| narrowed(c, *s));
    let (worst, lines) = run_cases(ctx, "gemm_fp8_block", chosen, check_block, |_| {
        String::new()
    })?;
    refuses_bad_scales(ctx, &block(128, 256, E4m3, F32))?;
    refuses_unaligned_scale_rows(ctx, &staged(large))?;
    refuses_bad_epilogue(ctx, &large)?;
    Ok(Report {
        max_err: worst,
        tolerance: CheckResult::TOLERANCE,
        detail: format!("{}; wrong scale shapes refused", lines.join("; ")),
    })
}

/// Whether the case of `cfg` at `(m, n, k)` runs: every case, or with `PTXKIT_FP8_BLOCK_ONLY`
/// set (kernel names, comma-separated), for a run under compute-sanitizer, the named kernels'
/// cases of at most 2^28 multiply-adds (the large squares would take minutes there).
fn narrowed(cfg: &GemmConfig, (m, n, k): (usize, usize, usize)) -> bool {
    let only = std::env::var("PTXKIT_FP8_BLOCK_ONLY")
        .ok()
        .filter(|s| !s.is_empty());
    only.as_deref()
        .is_none_or(|names| names.split(',').any(|name| name == cfg.name()) && m * n * k <= 1 << 28)
}

/// A kernel with its scales in the stages refuses an M that is not a multiple of 4 (A's scale
/// map's row pitch) with [`GemmError::ScaleRowPitch`] before anything runs.
fn refuses_unaligned_scale_rows(ctx: &mut GpuCtx, cfg: &GemmConfig) -> Result<(), GpuCheckError> {
    let gemm = Gemm::new(&ctx.dev, *cfg)?;
    let e4: Codec<HostE4m3> = (HostE4m3::from_f32, HostE4m3::to_f32);
    let (m, n, k) = (130, 256, 256);
    let p = BlockProblem::new(&ctx.stream, (m, n, k), 1, (e4, e4), cfg.output)?.device;
    let mut c = ctx.poisoned(&[m, n])?;
    let scales = Fp8Scales::block([&p.scale_a, &p.scale_b]);
    match gemm.run_fp8(&ctx.stream, &p.a, &p.b, &mut c, scales, &Fp8Epilogue::NONE) {
        Err(GemmError::ScaleRowPitch { m: 130 }) => Ok(()),
        other => Err(GpuCheckError::Unexpected {
            check: "gemm_fp8_block scales in the stages at m = 130".into(),
            detail: format!("want ScaleRowPitch, got {other:?}"),
        }),
    }
}

/// Epilogue operands that do not fit the kernel are refused with [`GemmError::Epilogue`]
/// naming the operand: a bias to a kernel built without one, a bias one column short, an
/// output scale by value to a kernel that reads it from a device tensor.
fn refuses_bad_epilogue(ctx: &mut GpuCtx, plain: &GemmConfig) -> Result<(), GpuCheckError> {
    let e4: Codec<HostE4m3> = (HostE4m3::from_f32, HostE4m3::to_f32);
    let (m, n, k) = (128, 256, 256);
    let p = BlockProblem::new(&ctx.stream, (m, n, k), 1, (e4, e4), plain.output)?.device;
    let mut c = ctx.poisoned(&[m, n])?;
    let bias = DeviceTensor::from_host(&ctx.stream, &vec![1.0f32; n], vec![n])?;
    let short = DeviceTensor::from_host(&ctx.stream, &vec![1.0f32; n - 1], vec![n - 1])?;
    let with_bias = GemmConfig {
        bias: Some(F32),
        out_scale: OutScale::Pointer,
        ..*plain
    };
    let scales = p.scales();
    let tries = [
        (
            plain,
            "bias",
            Fp8Epilogue {
                bias: Some((&bias).into()),
                out_scale: None,
            },
        ),
        (
            &with_bias,
            "bias",
            Fp8Epilogue {
                bias: Some((&short).into()),
                out_scale: None,
            },
        ),
        (
            &with_bias,
            "out_scale",
            Fp8Epilogue {
                bias: Some((&bias).into()),
                out_scale: Some(crate::library::gemm::OutScaleArg::Value(2.0)),
            },
        ),
    ];
    for (cfg, want, epi) in tries {
        let gemm = Gemm::new(&ctx.dev, *cfg)?;
        match gemm.run_fp8(
            &ctx.stream,
            &p.a,
            &p.b,
            &mut c,
            Fp8Scales::block(scales),
            &epi,
        ) {
            Err(GemmError::Epilogue { operand, .. }) if operand == want => {}
            other => {
                return Err(GpuCheckError::Unexpected {
                    check: format!("gemm_fp8_block bad epilogue {want}"),
                    detail: format!("want Epilogue, got {other:?}"),
                });
            }
        }
    }
    Ok(())
}

/// Scale tensors of the wrong shapes (A's transposed, B's one block short) are refused with
/// [`GemmError::BlockScales`] naming the operand.
fn refuses_bad_scales(ctx: &mut GpuCtx, cfg: &GemmConfig) -> Result<(), GpuCheckError> {
    let gemm = Gemm::new(&ctx.dev, *cfg)?;
    let e4: Codec<HostE4m3> = (HostE4m3::from_f32, HostE4m3::to_f32);
    let (m, n, k) = (128, 256, 256);
    let p = BlockProblem::new(&ctx.stream, (m, n, k), 1, (e4, e4), cfg.output)?.device;
    let mut c = ctx.poisoned(&[m, n])?;
    let a_transposed = DeviceTensor::from_host(&ctx.stream, &vec![1.0f32; m * 2], vec![m, 2])?;
    let b_short = DeviceTensor::from_host(&ctx.stream, &[1.0f32; 2], vec![1, 2])?;
    let mut run = |scales| {
        let scales = Fp8Scales::block(scales);
        gemm.run_fp8(&ctx.stream, &p.a, &p.b, &mut c, scales, &Fp8Epilogue::NONE)
    };
    let tries = [
        ("scale_a", run([&a_transposed, &p.scale_b])),
        ("scale_b", run([&p.scale_a, &b_short])),
    ];
    for (want, got) in tries {
        match got {
            Err(GemmError::BlockScales { operand, .. }) if operand == want => {}
            other => {
                return Err(GpuCheckError::Unexpected {
                    check: format!("gemm_fp8_block bad {want}"),
                    detail: format!("want BlockScales, got {other:?}"),
                });
            }
        }
    }
    Ok(())
}
