//! The one list of kernels ptxkit knows by name: what `ptxkit dump NAME` writes and `ptxkit dump
//! --list` lists, and what `ptxkit selftest` runs. Each [`Entry`] is a kernel of the library
//! ([`crate::library`]) or a kernel the self-test harness builds to check a layer
//! ([`crate::selftest`]: tile ops, refused launches, planted hangs, printf), with its GPU check
//! where it has one. Neither folder imports this list, so the library never sees the harness;
//! the self-test runner and `dump` read it.

use ptx_isa::{Module, Target, ty};

use crate::kernel::{BuiltKernel, Elem};
use crate::library::rows::{RowConfig, RowKernel, RowOp};
use crate::library::{cluster_exchange, gemm, rows, scale, tma_copy, vector_add};
use crate::selftest::{
    GpuCtx, RunResult, bad_launches, epilogue_check, hang_checks, library as runs, tile_checks,
};
use smem::pipeline::sync::WaitMode;

/// Which folder a registered kernel lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// A kernel of the library ([`crate::library`]).
    Library,
    /// A kernel the self-test harness builds to check a layer ([`crate::selftest`]).
    Selftest,
}

/// How `ptxkit selftest` runs an entry's GPU check.
#[derive(Clone, Copy)]
pub enum Selftest {
    /// In the `ptxkit selftest` process, on fresh random data against the host.
    InProcess(fn(&mut GpuCtx) -> RunResult),
    /// In a child process `ptxkit selftest --only NAME` (a trap ends the CUDA context, and
    /// `vprintf` writes to the process's output): the run, and the lines the child's output must
    /// hold, each exactly once.
    Isolated(fn(&mut GpuCtx) -> RunResult, &'static [&'static str]),
}

impl Selftest {
    /// The check's run.
    pub fn run(&self) -> fn(&mut GpuCtx) -> RunResult {
        match *self {
            Selftest::InProcess(run) | Selftest::Isolated(run, _) => run,
        }
    }
}

/// One named kernel.
pub struct Entry {
    /// The name (`ptxkit dump NAME`, `ptxkit selftest --only NAME`).
    pub name: &'static str,
    /// What it computes or checks, one line.
    pub summary: &'static str,
    /// The folder it lives in.
    pub home: Home,
    /// Whether it needs Hopper (sm_90a: TMA, clusters, wgmma) or its check runs only there (the
    /// isolated checks); otherwise it also builds for sm_80, and its check runs on any GPU.
    pub hopper: bool,
    /// Builds its module for a target.
    pub build: fn(Target) -> ptx_isa::Result<Module>,
    /// Its GPU check, if it has one.
    pub selftest: Option<Selftest>,
}

/// The module of a kernel-layer kernel.
fn module(k: crate::kernel::Result<BuiltKernel>) -> ptx_isa::Result<Module> {
    Ok(k?.into_module())
}

/// The row ops the registry builds, by index (a const generic cannot hold an `f32`).
const ROW_OPS: [RowOp; 5] = RowOp::ALL;

/// Row op `OP` over `T` rows of up to 8192 columns, a multiple of the vector width: one CTA per
/// row, 16-byte accesses.
fn row<T: Elem, const OP: usize>(target: Target) -> ptx_isa::Result<Module> {
    let cfg = RowConfig::for_op(ROW_OPS[OP], T::TYPE, 8192, true);
    Ok(RowKernel::build::<T>(target, ROW_OPS[OP], cfg)?
        .built
        .into_module())
}

/// SwiGLU over `T`, 16-byte accesses.
fn swiglu<T: Elem>(target: Target) -> ptx_isa::Result<Module> {
    module(rows::build_swiglu::<T>(target, true))
}

/// The attention kernel for f16 (`F16`) or bf16, head dim `D`, causal or not.
fn attention_module<const F16: bool, const D: u32, const CAUSAL: bool>(
    target: Target,
) -> ptx_isa::Result<Module> {
    let dtype = if F16 {
        ptx_isa::ScalarType::F16
    } else {
        ptx_isa::ScalarType::Bf16
    };
    let cfg = crate::library::attention::AttentionConfig::new(dtype, D, CAUSAL);
    module(crate::library::attention::build(target, &cfg))
}

/// The attention kernel over packed variable-length sequences, bf16, head dim 128, causal.
fn attention_varlen_module(target: Target) -> ptx_isa::Result<Module> {
    let cfg = crate::library::attention::AttentionConfig::new(ptx_isa::ScalarType::Bf16, 128, true)
        .with_varlen();
    module(crate::library::attention::build(target, &cfg))
}

/// The attention backward's main kernel, bf16, head dim 128, causal.
fn attention_backward_module(target: Target) -> ptx_isa::Result<Module> {
    let cfg = crate::library::attention::BackwardConfig::new(ptx_isa::ScalarType::Bf16, 128, true);
    module(crate::library::attention::backward::build_main(
        target, &cfg,
    ))
}

/// The decode attention kernel, bf16, head dim 128, 4 query heads a KV head, 16-token pages.
fn decode_module(target: Target) -> ptx_isa::Result<Module> {
    let cfg = crate::library::decode::DecodeConfig::new(128, 4, 16);
    module(crate::library::decode::build(target, &cfg))
}

/// A library kernel without a GPU check of its own.
const fn lib(
    name: &'static str,
    summary: &'static str,
    hopper: bool,
    build: fn(Target) -> ptx_isa::Result<Module>,
) -> Entry {
    Entry {
        name,
        summary,
        home: Home::Library,
        hopper,
        build,
        selftest: None,
    }
}

/// A harness kernel and its check.
const fn check(
    name: &'static str,
    summary: &'static str,
    hopper: bool,
    build: fn(Target) -> ptx_isa::Result<Module>,
    selftest: Selftest,
) -> Entry {
    Entry {
        name,
        summary,
        home: Home::Selftest,
        hopper,
        build,
        selftest: Some(selftest),
    }
}

static REGISTRY: &[Entry] = &[
    // ---- the library -------------------------------------------------------------------------
    Entry {
        selftest: Some(Selftest::InProcess(runs::run_vector_add)),
        ..lib(
            "vector_add",
            "c[i] = a[i] + b[i] over f32 vectors of length n",
            false,
            vector_add::vector_add,
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(runs::run_scale)),
        ..lib(
            "scale",
            "y = s * x over f32[m, 64] (runtime scalar s, vector loads)",
            false,
            scale::scale,
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(runs::run_tma_copy)),
        ..lib(
            "tma_copy",
            "2-D TMA load with 128B swizzle and an mbarrier, TMA store (sm_90a)",
            true,
            tma_copy::tma_copy,
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(runs::run_cluster_exchange)),
        ..lib(
            "cluster_exchange",
            "4-CTA clusters reading a neighbour's shared memory (sm_90a)",
            true,
            cluster_exchange::cluster_exchange,
        )
    },
    lib(
        "gemm",
        "bf16 C = A·Bᵀ, 128x256x64 tiles, 3 stages, warp-specialised wgmma (sm_90a)",
        true,
        |t| gemm::large_module(t, WaitMode::Spin),
    ),
    Entry {
        selftest: Some(Selftest::InProcess(crate::selftest::gemm_fp8::run)),
        ..lib(
            "gemm_fp8",
            "FP8 C = sa·sb·A·Bᵀ, e4m3 in, bf16 out, per-tensor scales, 128x256x128 tiles, 3 stages (sm_90a); its check: e4m3/e5m2, bf16/f32 out, both epilogues, edges, against cuBLASLt FP8 (promoted, f32 out)",
            true,
            gemm::fp8_module,
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(crate::selftest::gemm_fp8_block::run)),
        ..lib(
            "gemm_fp8_block",
            "FP8 C = Σ_kb sa·sb·A·Bᵀ with DeepSeek-V3 block scales (1x128 of A, 128x128 of B), e4m3 in, bf16 out, 128x128x128 tiles, two-level accumulation pipelined, scales in the stages (sm_90a); its check: e4m3/e5m2, bf16/f32 out, both epilogues, bias and output scale, 64/128/192/256-wide tiles, edges in M, N and K, against an f64 host reference (PTXKIT_FP8_BLOCK_ONLY narrows it)",
            true,
            gemm::fp8_block_module,
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(|ctx| {
            crate::selftest::gemm_grouped::run_form(ctx, gemm::Grouping::Contiguous)
        })),
        ..lib(
            "gemm_grouped",
            "grouped bf16 C_g = A_g·B_gᵀ over offs (MoE), B [G, N, K], one persistent launch, 128x256x64 tiles (sm_90a); its check: empty and 1-row groups, tiles ending inside a group, G = 1, N/K edges, both epilogues, against an f32 reference",
            true,
            |t| gemm::grouped::module(t, gemm::Grouping::Contiguous),
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(|ctx| {
            crate::selftest::gemm_grouped::run_form(ctx, gemm::Grouping::Masked)
        })),
        ..lib(
            "gemm_grouped_masked",
            "masked grouped bf16 GEMM (decoding): A [G, M_cap, K], counts [G], rows past a count not written (sm_90a); its check: against an f32 reference, the rows past each count still poisoned",
            true,
            |t| gemm::grouped::module(t, gemm::Grouping::Masked),
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(|ctx| {
            crate::selftest::gemm_grouped::run_block_form(ctx, gemm::Grouping::Contiguous)
        })),
        ..lib(
            "gemm_grouped_fp8_block",
            "grouped block-scaled FP8 (DeepSeek-V3 scales: scale_a [K/128, M_total] by global row, scale_b [G, N/128, K/128]) over offs, e4m3 in, bf16 out, 128x128x128 tiles, pipelined promotion (sm_90a); its check: empty and 1-row groups, both promotions, 64/128 tiles, odd and partial k-blocks, both epilogues, e5m2, against an f64 reference",
            true,
            |t| gemm::grouped::fp8_block_module(t, gemm::Grouping::Contiguous),
        )
    },
    Entry {
        selftest: Some(Selftest::InProcess(|ctx| {
            crate::selftest::gemm_grouped::run_block_form(ctx, gemm::Grouping::Masked)
        })),
        ..lib(
            "gemm_grouped_fp8_block_masked",
            "masked grouped block-scaled FP8 (decoding): A [G, M_cap, K], scale_a [G, K/128, M_cap], counts [G] (sm_90a); its check: against an f64 reference, the rows past each count still poisoned",
            true,
            |t| gemm::grouped::fp8_block_module(t, gemm::Grouping::Masked),
        )
    },
    Entry {
        selftest: Some(Selftest::Isolated(hang_checks::gemm_debug, &[])),
        ..lib(
            "gemm_debug",
            "the gemm's debug build: bounded waits that record where they hang (sm_90a); its check: matches cuBLAS at >= 0.9x the release build's speed",
            true,
            |t| gemm::large_module(t, WaitMode::Bounded),
        )
    },
    Entry {
        selftest: Some(Selftest::Isolated(crate::selftest::attention::run, &[])),
        ..lib(
            "attention",
            "attention forward, bf16, head dim 128, causal (sm_90a); its check: bf16/f16, d 64/128/256, causal or not, GQA/MQA, odd lengths, O and LSE",
            true,
            attention_module::<false, 128, true>,
        )
    },
    Entry {
        selftest: Some(Selftest::Isolated(
            crate::selftest::attention::run_varlen,
            &[],
        )),
        ..lib(
            "attention_varlen",
            "attention forward over packed variable-length sequences (cu_seqlens), bf16, head dim 128, causal (sm_90a); its check: bf16/f16, d 64/128/256, causal or not, ragged lengths from 1, GQA, O and LSE",
            true,
            attention_varlen_module,
        )
    },
    Entry {
        selftest: Some(Selftest::Isolated(
            crate::selftest::attention_backward::run,
            &[],
        )),
        ..lib(
            "attention_backward",
            "attention backward (dQ, dK, dV), bf16, head dim 128, causal: the main kernel (sm_90a); its check: bf16/f16, d 64/128/256, causal or not, GQA/MQA, odd lengths, against the f64 reference",
            true,
            attention_backward_module,
        )
    },
    Entry {
        selftest: Some(Selftest::Isolated(crate::selftest::decode::run, &[])),
        ..lib(
            "decode",
            "decode attention over a paged KV cache, bf16, head dim 128, 4 query heads a KV head, 16-token pages (sm_90a); its check: d 64/128/256, GQA 1-16, q_len 1-16, ragged lengths, pages 16-256 and contiguous, split-KV with the combine, O",
            true,
            decode_module,
        )
    },
    lib(
        "decode_combine",
        "decode attention's split combine, head dim 128: the splits' O and LSE merged in a fixed order",
        true,
        |t| module(crate::library::decode::build_combine(t, 128)),
    ),
    lib(
        "attention_fwd_bf16_d64",
        "attention forward O = softmax(Q·Kᵀ·s)·V and LSE, bf16, head dim 64 (sm_90a)",
        true,
        attention_module::<false, 64, false>,
    ),
    lib(
        "attention_fwd_bf16_d128",
        "attention forward, bf16, head dim 128 (sm_90a)",
        true,
        attention_module::<false, 128, false>,
    ),
    lib(
        "attention_fwd_f16_d128",
        "attention forward, f16, head dim 128 (sm_90a)",
        true,
        attention_module::<true, 128, false>,
    ),
    lib(
        "attention_fwd_bf16_d256_causal",
        "attention forward, bf16, head dim 256, causal (sm_90a)",
        true,
        attention_module::<false, 256, true>,
    ),
    lib(
        "softmax_f32",
        "row softmax, f32 rows of up to 8192 columns (a multiple of 4), one CTA per row",
        false,
        row::<ty::F32, 0>,
    ),
    lib(
        "softmax_f16",
        "row softmax, f16 rows of up to 8192 columns (a multiple of 8), one CTA per row",
        false,
        row::<ty::F16, 0>,
    ),
    lib(
        "softmax_bf16",
        "row softmax, bf16 rows of up to 8192 columns (a multiple of 8), one CTA per row",
        false,
        row::<ty::Bf16, 0>,
    ),
    lib(
        "log_softmax_f32",
        "row log-softmax, f32 rows of up to 8192 columns (a multiple of 4), one CTA per row",
        false,
        row::<ty::F32, 1>,
    ),
    lib(
        "log_softmax_f16",
        "row log-softmax, f16 rows of up to 8192 columns (a multiple of 8), one CTA per row",
        false,
        row::<ty::F16, 1>,
    ),
    lib(
        "log_softmax_bf16",
        "row log-softmax, bf16 rows of up to 8192 columns (a multiple of 8), one CTA per row",
        false,
        row::<ty::Bf16, 1>,
    ),
    lib(
        "rmsnorm_f32",
        "RMSNorm (eps 1e-6) times a weight, f32 rows of up to 8192 columns (a multiple of 4)",
        false,
        row::<ty::F32, 2>,
    ),
    lib(
        "rmsnorm_f16",
        "RMSNorm (eps 1e-6) times a weight, f16 rows of up to 8192 columns (a multiple of 8)",
        false,
        row::<ty::F16, 2>,
    ),
    lib(
        "rmsnorm_bf16",
        "RMSNorm (eps 1e-6) times a weight, bf16 rows of up to 8192 columns (a multiple of 8)",
        false,
        row::<ty::Bf16, 2>,
    ),
    lib(
        "residual_rmsnorm_f32",
        "h = x + residual (written back), RMSNorm(h) times a weight, f32 rows of up to 8192 columns",
        false,
        row::<ty::F32, 3>,
    ),
    lib(
        "residual_rmsnorm_f16",
        "h = x + residual (written back), RMSNorm(h) times a weight, f16 rows of up to 8192 columns",
        false,
        row::<ty::F16, 3>,
    ),
    lib(
        "residual_rmsnorm_bf16",
        "h = x + residual (written back), RMSNorm(h) times a weight, bf16 rows of up to 8192 columns",
        false,
        row::<ty::Bf16, 3>,
    ),
    lib(
        "layernorm_f32",
        "LayerNorm (eps 1e-5) with weight and bias, row mean and rstd written, f32 rows of up to 8192 columns",
        false,
        row::<ty::F32, 4>,
    ),
    lib(
        "layernorm_f16",
        "LayerNorm (eps 1e-5) with weight and bias, row mean and rstd written, f16 rows of up to 8192 columns",
        false,
        row::<ty::F16, 4>,
    ),
    lib(
        "layernorm_bf16",
        "LayerNorm (eps 1e-5) with weight and bias, row mean and rstd written, bf16 rows of up to 8192 columns",
        false,
        row::<ty::Bf16, 4>,
    ),
    lib(
        "swiglu_f32",
        "y = silu(g) * u over f32 vectors, 16-byte accesses",
        false,
        swiglu::<ty::F32>,
    ),
    lib(
        "swiglu_f16",
        "y = silu(g) * u over f16 vectors, 16-byte accesses",
        false,
        swiglu::<ty::F16>,
    ),
    lib(
        "swiglu_bf16",
        "y = silu(g) * u over bf16 vectors, 16-byte accesses",
        false,
        swiglu::<ty::Bf16>,
    ),
    // ---- the self-test harness's kernels -----------------------------------------------------
    check(
        "tile_copies",
        "tile ops: copy.vector, copy_async.cp_async, copy.scalar into a 128B-swizzled tile",
        false,
        |t| module(tile_checks::build_copies(t)),
        Selftest::InProcess(tile_checks::tile_copies),
    ),
    check(
        "tile_matrix",
        "tile ops: copy.ldmatrix x4 and copy.stmatrix x4 round trip",
        true,
        |t| module(tile_checks::build_matrix(t)),
        Selftest::InProcess(tile_checks::tile_matrix),
    ),
    check(
        "tile_tma",
        "tile ops: copy_async.tma_load / tma_store, 128B swizzle, mbarrier",
        true,
        |t| module(tile_checks::build_tma_plain(t)),
        Selftest::InProcess(tile_checks::tile_tma),
    ),
    check(
        "tile_tma_multicast",
        "tile ops: copy_async.tma_multicast into both CTAs of a cluster",
        true,
        |t| module(tile_checks::build_tma_mc(t)),
        Selftest::InProcess(tile_checks::tile_tma_multicast),
    ),
    check(
        "tile_wgmma_bf16",
        "tile ops: TMA + gemm_async.wgmma (bf16) + copy.fragment, 64x64x64",
        true,
        |t| module(tile_checks::build_wgmma_bf16(t)),
        Selftest::InProcess(tile_checks::tile_wgmma_bf16),
    ),
    check(
        "tile_wgmma_f16",
        "tile ops: TMA + gemm_async.wgmma (f16) + copy.fragment, 64x64x64",
        true,
        |t| module(tile_checks::build_wgmma_f16(t)),
        Selftest::InProcess(tile_checks::tile_wgmma_f16),
    ),
    check(
        "tile_wgmma_tf32",
        "tile ops: TMA + gemm_async.wgmma (tf32) + copy.fragment, 64x64x32",
        true,
        |t| module(tile_checks::build_wgmma_tf32(t)),
        Selftest::InProcess(tile_checks::tile_wgmma_tf32),
    ),
    check(
        "tile_wgmma_e4m3",
        "tile ops: TMA + gemm_async.wgmma (e4m3) + copy.fragment, 64x64x128",
        true,
        |t| module(tile_checks::build_wgmma_e4m3(t)),
        Selftest::InProcess(tile_checks::tile_wgmma_e4m3),
    ),
    check(
        "tile_wgmma_e5m2",
        "tile ops: TMA + gemm_async.wgmma (e5m2) + copy.fragment, 64x64x128",
        true,
        |t| module(tile_checks::build_wgmma_e5m2(t)),
        Selftest::InProcess(tile_checks::tile_wgmma_e5m2),
    ),
    check(
        "tile_wgmma_regs_a",
        "tile ops: A in registers (copy.fragment_view) x B by TMA 32B, gemm_async.wgmma",
        true,
        |t| module(tile_checks::build_wgmma_regs(t)),
        Selftest::InProcess(tile_checks::tile_wgmma_regs_a),
    ),
    check(
        "tile_bulk_cluster",
        "tile ops: copy_async.bulk_cluster between the two CTAs of a cluster",
        true,
        |t| module(tile_checks::build_bulk_cluster(t)),
        Selftest::InProcess(tile_checks::tile_bulk_cluster),
    ),
    check(
        "tile_epilogue",
        "tile ops: copy.fragment_view (pitch, bounds), cast.registers, elementwise at a matrix edge",
        false,
        |t| module(epilogue_check::build(t)),
        Selftest::InProcess(epilogue_check::run),
    ),
    check(
        "gemm_epilogue",
        "composed GEMM epilogues (parts::Epilogue): scale, column and row vectors, ReLU/SiLU/GELU tanh and erf, a closure of (row, col), a residual, alpha/beta, an extra output and amax, TMA-store and register C at edges, against an f64 reference (sm_90a)",
        true,
        crate::selftest::gemm_epilogue::module,
        Selftest::InProcess(crate::selftest::gemm_epilogue::run),
    ),
    check(
        "row_kernels",
        "the row kernels' check: softmax, log-softmax, rmsnorm (+residual), layernorm over f32/f16/bf16 rows of 1 to 262144 columns, swiglu; its kernel is softmax_f32's",
        false,
        row::<ty::F32, 0>,
        Selftest::InProcess(crate::selftest::rows::run),
    ),
    check(
        "row_kernels_packed",
        "the row kernels' packed form (16-bit rows held as loaded): rmsnorm (+residual), layernorm over f32/bf16 rows of 1 to 8192 columns, one CTA, a warpgroup or 128 threads a row; its kernel is softmax_f32's",
        false,
        row::<ty::F32, 0>,
        Selftest::InProcess(crate::selftest::rows::run_packed),
    ),
    check(
        "bad_launches",
        "wrong shape, dtype, misaligned map, too much smem, too large a cluster are refused; its kernel is vector_add's",
        false,
        vector_add::vector_add,
        Selftest::InProcess(bad_launches::run),
    ),
    check(
        "hang_baseline",
        "debug waits in a correct TMA ring: finishes, sums right",
        true,
        |t| module(hang_checks::build_baseline(t)),
        Selftest::Isolated(hang_checks::hang_baseline, &[]),
    ),
    check(
        "hang_expect_tx",
        "planted: expect_tx 1 KB too large -> wrong expect_tx on full[0] (a consumer)",
        true,
        |t| module(hang_checks::build_expect_tx(t)),
        Selftest::Isolated(hang_checks::hang_expect_tx, &[]),
    ),
    check(
        "hang_wrong_phase",
        "planted: producer starts at parity 0 -> wrong phase on empty[0] (the producer)",
        true,
        |t| module(hang_checks::build_wrong_phase(t)),
        Selftest::Isolated(hang_checks::hang_wrong_phase, &[]),
    ),
    check(
        "hang_missing_arrive",
        "planted: expect_tx without arrive -> missing arrive on full[0] (a consumer)",
        true,
        |t| module(hang_checks::build_missing_arrive(t)),
        Selftest::Isolated(hang_checks::hang_missing_arrive, &[]),
    ),
    check(
        "printf",
        "device printf of every argument class, guarded to two threads",
        true,
        |t| module(hang_checks::build_printf(t)),
        Selftest::Isolated(hang_checks::printf_check, hang_checks::PRINTF_LINES),
    ),
];

/// Every named kernel: the library's first, then the harness's, in the order `ptxkit selftest`
/// runs their checks (in-process checks first, then the isolated ones).
pub fn registry() -> &'static [Entry] {
    REGISTRY
}

/// The entry called `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}
