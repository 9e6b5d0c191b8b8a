//! A Hopper (sm_90a) GEMM built only from ptxkit calls (its TMA loads, wgmma main loop and TMA
//! stores are tile ops dispatched by [`crate::tile`]; barriers, scheduling and the stmatrix staging
//! are builder calls): `C = A·Bᵀ` with A (M×K) and B (N×K)
//! row-major (both K-major), bf16 or f16 inputs, f32 accumulation, C in bf16/f16 or f32; or
//! FP8 inputs (e4m3/e5m2) with per-tensor scales, `C = sa·sb·A·Bᵀ` ([`Scaling::PerTensor`]), or
//! with DeepSeek-V3's fine-grained scales, one per 1 x 128 block of A and per 128 x 128 block of B,
//! applied in the main loop by two-level accumulation ([`Scaling::Block`]).
//!
//! The kernel (one module per [`GemmConfig`]):
//! - TMA loads with 128B swizzle into a `stages`-deep shared-memory ring guarded by full/empty
//!   mbarriers (the producer waits on "empty", arms "full" with the stage's byte count, and issues
//!   both tensor loads; consumers wait on "full" and release "empty" once their wgmmas are done);
//! - warp specialisation: warpgroup 0 produces (one elected thread), warpgroups 1 and 2 consume,
//!   each computing 64 of the tile's 128 rows with `wgmma.mma_async.m64nNk16` (N = the tile width,
//!   up to 256); `setmaxnreg` moves registers from the producer (24) to the consumers (240);
//! - a persistent grid: each CTA walks tiles `ctaid, ctaid + nctaid, ...` in grouped order (`group_m`
//!   M-tiles per band) so neighbouring CTAs share A and B tiles in L2;
//! - edges: TMA fills out-of-bounds elements with zeros, and the epilogue predicates its stores.
//!
//! Shapes and layout facts: PTX ISA 9.7.15.5.1.2 (K-major 128B-swizzled operands: 8-row atoms of
//! 1024 bytes, SBO 1024), 9.7.15.5.1.1.1 (the m64nNk16 f32 accumulator fragment), 9.7.9.27 (tensor
//! copies), 9.7.13.15 (mbarrier phases).

mod build;
pub mod check;
pub mod check_block;
pub mod cublaslt;
pub mod fixup;
pub mod grouped;
mod host;
mod layout;
mod pad;
pub mod split;
pub mod swap_ab;
pub mod tune;

pub use build::{
    EpiloguePace, GemmKernel, HopperGemm, Output, Promotion, StagedLoadAt, Tile, Tiles, build,
    build_with,
};
pub use grouped::Grouping;
pub use host::{Fp8Epilogue, Fp8Scales, Gemm, GemmError, OutScaleArg, check_operands};
pub use pad::{pad_module, pad_signature};

use crate::parts::WarpSpecialized;
use ptx_isa::{Module, ScalarType, Target};
use smem::pipeline::sync::WaitMode;

/// The GEMM benchmark shapes `(m, n, k)`: squares from 2048³ to 8192³, a long K, a short K and a
/// skinny M. The one list: `examples/gemm_hopper.rs` checks and times them against cuBLAS,
/// `benches/gemm.rs` times them, and `tests/gemm_ptx.rs` assembles the configuration each gets
/// ([`GemmConfig::for_problem`]).
pub const BENCH_SHAPES: &[(usize, usize, usize)] = &[
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (6144, 6144, 6144),
    (8192, 8192, 8192),
    (4096, 4096, 16384),
    (8192, 8192, 1024),
    (128, 8192, 8192),
];

/// DeepSeek-V3's FP8 GEMM shapes `(n, k)` (its layers' projections), which the FP8 benchmarks
/// (`benches/gemm_fp8.rs`, `benches/gemm_fp8_block.rs`) time at several M.
pub const DEEPSEEK_V3_NK: &[(usize, usize)] = &[
    (2112, 7168),
    (24576, 1536),
    (32768, 512),
    (7168, 16384),
    (4096, 7168),
    (7168, 2048),
];

/// Llama-3 8B's projection shapes `(n, k)`: qkv (4096 + 2 x 1024 rows), o, gate and up
/// together, down; the decode table (`benches/gemm_decode.rs`) times them at [`DECODE_MS`].
pub const LLAMA3_8B_NK: &[(usize, usize)] =
    &[(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)];

/// Llama-3 70B's projection shapes `(n, k)`, as [`LLAMA3_8B_NK`].
pub const LLAMA3_70B_NK: &[(usize, usize)] =
    &[(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)];

/// The decode table's token counts M (one sequence, and batches of 16, 64 and 128).
pub const DECODE_MS: [usize; 4] = [1, 16, 64, 128];

/// The input element types (A and B): wgmma's 16-bit floats, and its 8-bit floats (PTX ISA
/// 9.7.15.5: `.e4m3`/`.e5m2`, K = 32 per instruction, both operands K-major), which take
/// per-tensor scales ([`Scaling::PerTensor`]).
pub const INPUTS: [ScalarType; 4] = [
    ScalarType::Bf16,
    ScalarType::F16,
    ScalarType::E4m3,
    ScalarType::E5m2,
];

/// How the accumulators are scaled before C is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scaling {
    /// `C = A·Bᵀ` (16-bit inputs).
    None,
    /// `C = sa·sb·A·Bᵀ` with one f32 scale per operand (FP8 inputs): the kernel takes `scale_a`
    /// and `scale_b`, device tensors of one f32 each (what cuBLASLt's
    /// `CUBLASLT_MATMUL_DESC_A_SCALE_POINTER`/`B_SCALE_POINTER` and `torch._scaled_mm` take),
    /// reads them once per consumer thread and multiplies the accumulators by `sa·sb` before
    /// the epilogue's cast.
    PerTensor,
    /// `C[i, j] = Σ_kb sa[kb, i]·sb[j / 128, kb]·Σ_{k in kb} A[i, k]·B[j, k]` (FP8 inputs), the
    /// fine-grained scaling of DeepSeek-V3 and DeepGEMM: one f32 scale per 1 x 128 block of A
    /// (per row, per [`SCALE_BLOCK`] of K) and one per 128 x 128 block of B. `scale_a` is stored
    /// M-major, `[ceil(K/128), M]` (A's scales transposed, as DeepGEMM takes them: the scales
    /// of a tile's rows for one k-block are contiguous), `scale_b` is `[ceil(N/128),
    /// ceil(K/128)]`. A k-tile of an 8-bit input is exactly one k-block (BK = 128), so each
    /// k-tile's wgmmas run into a fresh partial accumulator (scale-d = 0 on the first) and the
    /// consumer then promotes it, `acc += partial·(sa[kb, row]·sb[nb, kb])` with one `fma` per
    /// value (two-level accumulation: the FP8 tensor core's reduced-precision sum never runs
    /// over more than 128 products). Needs a tile width of 64 or 128 (a tile's columns share one
    /// scale of B) or 256 (its two 128-column halves' wgmmas run into a half-width partial one
    /// after the other, each promoted with its own scale of B) ([`GemmConfigError::BlockTile`]).
    Block,
}

/// How an FP8 GEMM's epilogue takes its optional output scale `s` (`C = s·(scaled A·Bᵀ) +
/// bias`, [`GemmConfig::out_scale`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutScale {
    /// No output scale.
    None,
    /// An f32 kernel parameter (`out_scale`), passed by value at each launch.
    Value,
    /// A device tensor of one f32 (`out_scale`), read by each consumer thread once (a scale
    /// computed on the device, as an FP8 output's amax-derived scale is).
    Pointer,
}

/// The block edge of [`Scaling::Block`]: scales cover 1 x 128 of A and 128 x 128 of B, and the
/// 8-bit k-tile ([`GemmConfig::bk`]) is one such block deep.
pub const SCALE_BLOCK: u32 = 128;

/// The element types of C.
pub const OUTPUTS: [ScalarType; 3] = [ScalarType::Bf16, ScalarType::F16, ScalarType::F32];

/// Why a [`GemmConfig`] is not a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GemmConfigError {
    /// A tile width other than 64, 128, 192 or 256, or with the decode kernel's register
    /// epilogue ([`swap_ab::takes`]) a multiple of 8 from 16 to 256.
    #[error(
        "tile width {0} is not 64, 128, 192 or 256 (or, with the decode kernel's register epilogue, a multiple of 8 from 16 to 256)"
    )]
    TileWidth(u32),
    /// Element types the kernel does not take.
    #[error(
        "{} inputs and {} output: the GEMM takes bf16/f16/e4m3/e5m2 in and bf16/f16/f32 out",
        input.name(),
        output.name()
    )]
    Types {
        /// A and B's type.
        input: ScalarType,
        /// C's type.
        output: ScalarType,
    },
    /// The TMA-store epilogue with an f32 C, alpha/beta or an odd N.
    #[error("the TMA-store epilogue needs a 16-bit C, no alpha/beta, and an even N")]
    TmaStore,
    /// A pipeline depth outside 2..=[`GemmConfig::MAX_STAGES`].
    #[error("{0} stages: 2..=16")]
    Stages(u32),
    /// A cluster of other than 1 or 2 CTAs along M.
    #[error("cluster_m {0}: 1 or 2")]
    Cluster(u32),
    /// A cluster along N ([`GemmConfig::cluster_n`]) of other than 1, 2 or 4 CTAs, or with
    /// what its shared A tile does not take: CTA pairs along M, ping-pong consumers (whose
    /// 64-row tiles the CTAs of a cluster would have to walk in step), split-K, swap-AB, a
    /// grouped problem, block scales or epilogue warps.
    #[error(
        "cluster_n {0}: 1, 2 or 4, for a dense problem's shared 128-row tile without CTA pairs along M, ping-pong, split-K, swap-AB, block scales or epilogue warps"
    )]
    ClusterN(u32),
    /// `group_m` of 0.
    #[error("group_m must be positive")]
    GroupM,
    /// A grouped GEMM ([`Grouping`]) with what it does not take: CTA pairs, alpha/beta or
    /// 8-bit inputs with per-tensor scales (8-bit inputs take block scales, [`Scaling::Block`]).
    #[error(
        "a grouped GEMM takes 16-bit or block-scaled 8-bit inputs, no alpha/beta and cluster_m 1"
    )]
    Grouped,
    /// Scales that do not fit the input type: 8-bit inputs take per-tensor or block scales
    /// (and no alpha/beta), 16-bit inputs none.
    #[error("{input} inputs with {scaling:?} scaling{}", if *alpha_beta { " and alpha/beta" } else { "" })]
    Scaling {
        /// A and B's type.
        input: &'static str,
        /// The scaling asked for.
        scaling: Scaling,
        /// Whether alpha/beta was asked for too.
        alpha_beta: bool,
    },
    /// [`Scaling::Block`] with a tile width of 192 or 256 and the pipelined promotion (two
    /// partials and the accumulator do not fit in a consumer's registers).
    #[error(
        "block-scaled FP8 with tile width {0}: 64, 128, or 192 and 256 without the pipelined promotion"
    )]
    BlockTile(u32),
    /// `pipelined_promotion` without block scales (there is nothing to promote).
    #[error("pipelined promotion needs block scales")]
    PipelinedPromotion,
    /// A bias or an output scale ([`GemmConfig::bias`], [`GemmConfig::out_scale`]) where the
    /// epilogue does not take them: 16-bit inputs, a grouped GEMM, or a bias that is not bf16
    /// or f32.
    #[error("a bias (bf16 or f32) and an output scale need a dense FP8 GEMM")]
    Epilogue,
    /// `smem_scales` without block scales, or in a grouped GEMM (whose scales are indexed
    /// through each tile's group and stay in global memory).
    #[error("scales in shared memory need dense block-scaled FP8")]
    SmemScales,
    /// [`GemmConfig::pingpong`] with a grouped problem or block scales (whose promotion and
    /// group cursor assume the shared 128-row tile).
    #[error("ping-pong consumers take a dense problem without block scales")]
    PingPong,
    /// [`GemmConfig::split_k`] outside 1..=16, or with what its partials cannot take: a
    /// grouped problem, the TMA-store epilogue, alpha/beta,
    /// a bias or an output scale; or [`GemmConfig::split_fixup`] without split-K, with a
    /// tile wider than 128, or with the pipelined promotion ([`GemmConfig::pipelined_promotion`])
    /// wider than 64.
    #[error(
        "split-K of {0} parts: 1 to 16, for a dense problem with the register epilogue and no fused epilogue operands (the in-kernel fixup: 2 or more parts, tiles up to 128 wide)"
    )]
    SplitK(u32),
    /// [`GemmConfig::stream_k`] with what it does not take: split-K, CTA pairs or clusters,
    /// ping-pong consumers, a grouped problem, block scales, the TMA-store epilogue,
    /// alpha/beta, a bias or an output scale, epilogue warps, or a tile wider than 128.
    #[error(
        "stream-K takes a dense 16-bit or per-tensor FP8 problem with the register epilogue, tiles up to 128 wide, no split-K, clusters, ping-pong, alpha/beta or fused epilogue operands"
    )]
    StreamK,
    /// [`GemmConfig::swap_ab`] with what the transposed store does not take: the TMA-store
    /// epilogue, alpha/beta, a bias or output scale, a grouped problem, block scales, CTA
    /// pairs or ping-pong consumers; a decode width (no multiple of 64) likewise, ping-pong
    /// consumers and (unsplit, a multiple of 16 wide) CTA pairs allowed unswapped.
    #[error(
        "swap-AB and the decode widths take a dense 16-bit or per-tensor FP8 problem with the register epilogue, no fused epilogue operands and cluster_m 1 (unswapped and unsplit also 2 at a width that is a multiple of 16; swapped, no ping-pong)"
    )]
    SwapAb,
    /// [`GemmConfig::epilogue_warps`] without what they take: the TMA-store epilogue of a
    /// dense problem, with the consumers sharing each tile (no ping-pong, split-K or swap-AB),
    /// on 2 or 3 warps ([`GemmConfig::epilogue_warp_count`]).
    #[error(
        "epilogue warps take the TMA-store epilogue (a 16-bit C) of a dense problem, no ping-pong, split-K or swap-AB, on 2 or 3 warps"
    )]
    EpilogueWarps,
    /// More shared memory than one sm_90 CTA may opt into ([`smem::max_smem_optin`]).
    #[error("{0} bytes of shared memory exceed the 227 KB of sm_90")]
    SharedMemory(u32),
}

/// The compile-time parameters of one GEMM kernel: changing one builds a new kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmConfig {
    /// Tile width N (the wgmma N): 64, 128, 192 or 256 (whole 64-column slabs for the TMA-store
    /// epilogue), or with the decode kernel's register epilogue ([`swap_ab::takes`]) any
    /// multiple of 8 from 16 to 256 ([`GemmConfig::decode_tile`]: 16 and 32 swapped, and
    /// unswapped the width that makes about one tile per SM, 48 for N = 6144).
    pub bn: u32,
    /// Pipeline depth (shared-memory stages), 2..=[`GemmConfig::MAX_STAGES`].
    pub stages: u32,
    /// M-tiles per band of the grouped tile order.
    pub group_m: u32,
    /// Input type (A, and B unless `input_b` differs): one of [`INPUTS`].
    pub input: ScalarType,
    /// B's type when it differs from `input` (`None`: the same, [`GemmConfig::b_type`]): with
    /// 8-bit inputs either 8-bit type (wgmma takes `.e4m3` or `.e5m2` for each operand
    /// independently, PTX ISA 9.7.15.5; e5m2 x e4m3 is the backward pass's gradients times
    /// weights).
    pub input_b: Option<ScalarType>,
    /// Output type (C): one of [`OUTPUTS`].
    pub output: ScalarType,
    /// True when N is even, so the epilogue can store element pairs (2 x bf16 in 4 bytes, 2 x f32
    /// in 8); otherwise it stores elements one by one.
    pub n_even: bool,
    /// `C = alpha·A·Bᵀ + beta·C` (reads C) instead of `C = A·Bᵀ`.
    pub alpha_beta: bool,
    /// The epilogue goes registers → shared memory (`stmatrix`, 128B-swizzled 64-column slabs)
    /// → global (TMA store, which clips at the edges and runs while the next tile's main loop
    /// starts). Needs a 16-bit C, no alpha/beta, and N a multiple of 8 (16-byte row pitch);
    /// otherwise the epilogue stores from registers with predicates.
    pub tma_store: bool,
    /// CTAs per cluster along M: 1, or 2 for a CTA pair that shares its B tile: each CTA loads
    /// half of it and multicasts it to both (`.multicast::cluster`), halving B's L2 traffic.
    pub cluster_m: u32,
    /// CTAs per cluster along N: 1, or 2 or 4 neighbouring tiles of one row of tiles that share
    /// their A tile: each CTA loads `128 / cluster_n` of its rows and multicasts them to every
    /// CTA of the cluster (`.multicast::cluster`), so A's tile is read from L2 once per cluster.
    /// A decode step's A is the tokens (M of 65 to 128), which every narrow weight tile re-reads
    /// otherwise ([`GemmConfigError::ClusterN`]).
    pub cluster_n: u32,
    /// How the accumulators are scaled: [`Scaling::PerTensor`] or [`Scaling::Block`] exactly
    /// for 8-bit inputs.
    pub scaling: Scaling,
    /// One problem, or groups of rows sharing N and K with a B each ([`Grouping`]).
    pub grouping: Grouping,
    /// With [`Scaling::Block`]: promote each k-tile's partial while the next k-tile's wgmmas
    /// run (two partial accumulators alternating, `wgmma.wait_group 1`), instead of waiting
    /// for all wgmmas before each promotion. Only with block scales.
    pub pipelined_promotion: bool,
    /// With [`Scaling::Block`] (dense GEMM): the producer brings each k-tile's scales with its
    /// stage, A's 128 row scales by a TMA load of one `1 x 128` box of `scale_a` and B's one
    /// or two scales by its own load and `st.shared` before the stage's arrival, into the
    /// stage's slot ([`GemmConfig::SCALE_SLOT_BYTES`]); the consumers read them with
    /// `ld.shared` after the full wait. `scale_a`'s row pitch must then be a multiple of 16
    /// bytes (M a multiple of 4: a tensor map's rule, CUDA Driver API
    /// `cuTensorMapEncodeTiled`). Without it the consumers load their scales from global
    /// memory at each k-tile.
    pub smem_scales: bool,
    /// An FP8 GEMM's optional per-column bias (`bias`, a tensor of N elements of this type:
    /// bf16 or f32), added in f32 after the scales and the output scale, before C's cast.
    pub bias: Option<ScalarType>,
    /// An FP8 GEMM's optional output scale ([`OutScale`]): `C = s·(scaled A·Bᵀ) + bias`.
    pub out_scale: OutScale,
    /// The consumer warpgroups take turns at whole tiles of 64 x `bn` (ping-pong,
    /// [`crate::parts::Turns`]) instead of sharing each 128 x `bn` tile: while one runs its
    /// epilogue the other's main loop keeps the tensor cores busy, which pays where the
    /// epilogue is long (a fused bias, activation and residual). Each consumer keeps one
    /// k-tile's wgmmas in flight while it releases the previous stage (`wgmma.wait_group 1`).
    /// Dense problems without block scales ([`GemmConfigError::PingPong`]).
    pub pingpong: bool,
    /// Split-K: each tile's reduction split into this many parts (1: none), each a work item of
    /// the persistent grid ([`crate::parts::GridSchedule::with_splits`]), so a problem with fewer
    /// tiles than SMs (a decode shape's M of 1 to 128) fills the GPU. Each part writes its f32
    /// partial tile to a workspace `[split_k, m, n]`; a second kernel sums the parts in order
    /// (deterministic, no atomics) into C ([`split`]), launched as a programmatic dependent of
    /// the GEMM. With ping-pong consumers each takes its items' parts in turn
    /// ([`crate::parts::Turns::skip_others`]; [`GemmConfig::decode_pair_split`]). With block
    /// scales ([`Scaling::Block`]) each part promotes its own k-blocks' partials into its f32
    /// accumulator, so the parts are scaled already when summed
    /// ([`GemmConfig::fp8_block_split`]; with [`GemmConfig::pipelined_promotion`] a part past
    /// the last k-tile skips the whole loop, its partial 0). Dense problems with the register epilogue and no
    /// bias, output scale or alpha/beta ([`GemmConfigError::SplitK`]); 1 to 16 parts.
    pub split_k: u32,
    /// Swap-AB for a small M ([`swap_ab`]): the kernel computes `Cᵀ = B·Aᵀ`, so B's N rows
    /// (a decode step's weight matrix) fill the 128-row wgmma M side and A's few M rows (the
    /// tokens) are the `bn`-wide wgmma N side (16 to 256: a narrow `bn` wastes no rows at
    /// M = 1 to 64). The launch passes B as the kernel's first operand and A as its second,
    /// and the epilogue stores each accumulator tile transposed into the row-major C
    /// `[m, n]` (split-K's partials too). The register epilogue of a dense 16-bit or
    /// per-tensor FP8 problem without alpha/beta, bias, output scale, CTA pairs or ping-pong
    /// ([`GemmConfigError::SwapAb`]).
    pub swap_ab: bool,
    /// With split-K: the parts sum themselves ([`fixup`]: each consumer warpgroup stores its
    /// part in fragment order and takes one ticket; the last part to arrive at each 64-row
    /// block adds the partials in part order and stores C), so there is no second launch;
    /// deterministic, no float atomics. Tile widths up to 128 (the parts' loaded vectors sit
    /// beside the accumulators) ([`GemmConfigError::SplitK`]).
    pub split_fixup: bool,
    /// The epilogue runs on warps that hold no accumulators ([`crate::parts::Epilogue::apply_staged`]):
    /// each consumer warpgroup rounds its accumulators to C's type into its C staging block
    /// and goes on to the next tile's main loop, while warps of the producer warpgroup (which
    /// otherwise idle beside the one thread issuing loads; three by default,
    /// [`GemmConfig::epilogue_warp_count`]) apply the epilogue's ops to the block in shared
    /// memory and store it by TMA, under the next tile's wgmmas. The ops then
    /// see the accumulators rounded to C's type (as an unfused `op(A·Bᵀ)` in PyTorch does) rather
    /// than in f32. The roles' budgets become [`GemmConfig::EPILOGUE_WARPS_ROLES`]. Only with
    /// the TMA-store epilogue of a dense cooperative GEMM ([`GemmConfigError::EpilogueWarps`]).
    /// A staged input ([`build::HopperGemm::staged_input`]) is loaded by the epilogue warps, a
    /// 64 x 64 slab at a time, by TMA into their slab buffers
    /// ([`GemmConfig::epilogue_input_bytes`]): on two warps each into its own just before it
    /// works on that slab, on three into the two buffers in turn, one slab ahead.
    pub epilogue_warps: bool,
    /// With [`GemmConfig::epilogue_warps`], how many warps of the producer warpgroup run the
    /// epilogue: 2, a warp a consumer warpgroup (warps 1 and 2, each on its consumer's block),
    /// or 3 (warps 1 to 3, each on a share of the bands of every slab of both blocks, so the
    /// pass's issue slots and MUFU work spread over three of the SM's four sub-partitions,
    /// [`build::HopperGemm::producer`]; the default: at 4096³ on the H200 bias + GELU + residual
    /// 0.984 of the plain GEMM against 0.982 on two, and at half the K 0.930 against 0.906,
    /// BENCHMARKS.md, session 20). Name suffix `_ew2` on two. 2 or 3
    /// ([`GemmConfigError::EpilogueWarps`]).
    pub epilogue_warp_count: u32,
    /// Stream-K ([`crate::parts::GridSchedule::stream_k`]): the `tiles x k-tiles` iterations of
    /// the whole problem dealt out evenly over a persistent grid of one CTA an SM, a CTA's
    /// range starting and ending anywhere in a tile, so a problem with fewer tiles than SMs
    /// (a decode shape) or a last wave of tiles that leaves SMs idle fills the GPU without a
    /// fixed split. A CTA stores a tile it runs whole into C; the parts of a tile shared by
    /// several CTAs go to a workspace of two slots a CTA ([`fixup::stream_workspace_shape`]),
    /// and the last part to arrive at each 64-row block (a ticket, [`fixup`]) adds them in k
    /// order and stores C: deterministic, no float atomics, the same bits run to run on one
    /// device (the grid, and so the parts, follow the SM count). One launch. A dense 16-bit or
    /// per-tensor FP8 problem with the register epilogue, tiles up to 128 wide (swapped or
    /// not), no split-K, clusters, ping-pong, alpha/beta, bias or output scale
    /// ([`GemmConfigError::StreamK`]).
    pub stream_k: bool,
}

impl GemmConfig {
    /// Tile height M: two consumer warpgroups of 64 rows ([`GemmConfig::bm`]: 64 rows a
    /// consumer with [`GemmConfig::pingpong`]).
    pub const BM: u32 = 128;
    /// Tile depth K: 64 bf16/f16 elements, one 128-byte swizzle row ([`GemmConfig::bk`] for the
    /// configuration's input type).
    pub const BK: u32 = 64;
    /// Tile depth K in bytes: one 128-byte swizzle row of each operand's rows (PTX ISA
    /// 9.7.15.5.1.2: a K-major 128B-swizzled wgmma operand).
    pub const BK_BYTES: u32 = 128;
    /// The roles: one producer and two consumer warpgroups with their register budgets.
    pub const ROLES: WarpSpecialized = WarpSpecialized::PRODUCER_AND_TWO_CONSUMERS;
    /// The roles with [`GemmConfig::epilogue_warps`]: the producer warpgroup keeps 80 registers
    /// (its epilogue warps hold an 8 x 64 band of f32 values beside the ops' vectors, residual
    /// and addresses without spilling; 72 spill with a closure, an extra output and an amax), the
    /// two consumers 208, all the producer gives back (each thread holds 168 at launch; 2 x 40
    /// of the 88 it frees: `setmaxnreg.inc` takes only what `.dec` returned, PTX ISA 9.7.19.5,
    /// and counts in steps of 8): they apply the epilogue to the CTA's last tile themselves,
    /// the accumulators live (200 spill there).
    pub const EPILOGUE_WARPS_ROLES: WarpSpecialized = WarpSpecialized::new(2, 80, 208);
    /// Bytes of one stage's scale slot with [`GemmConfig::smem_scales`]: A's 128 row scales
    /// (512 bytes, one TMA box), then B's one or two, rounded up to the 128 bytes a TMA
    /// destination is aligned to.
    pub const SCALE_SLOT_BYTES: u32 = 640;
    /// The deepest ring: a decode kernel's narrow stages (a 64 x 32 tile's 12 KB) keep 16 in
    /// flight.
    pub const MAX_STAGES: u32 = 16;
    /// The target the kernel is built for: its shared-memory limit bounds the stages.
    pub const TARGET: Target = Target::Sm90a;

    /// The configuration the benchmarks found fastest on H100/H200 for large square problems.
    pub fn large() -> GemmConfig {
        GemmConfig {
            bn: 256,
            stages: 3,
            group_m: 16,
            input: ScalarType::Bf16,
            input_b: None,
            output: ScalarType::Bf16,
            n_even: true,
            alpha_beta: false,
            tma_store: true,
            cluster_m: 1,
            cluster_n: 1,
            scaling: Scaling::None,
            grouping: Grouping::None,
            pipelined_promotion: false,
            smem_scales: false,
            bias: None,
            out_scale: OutScale::None,
            pingpong: false,
            split_k: 1,
            swap_ab: false,
            split_fixup: false,
            epilogue_warps: false,
            epilogue_warp_count: 3,
            stream_k: false,
        }
    }

    /// The per-tensor-scaled FP8 configuration for a problem `m x n x k` with `input` A and B
    /// (e4m3 or e5m2) and `output` C: [`GemmConfig::for_problem_typed`]. With BK = 128 8-bit
    /// elements a stage is the bf16 one's 48 KB (128 bytes of K per row), so the 128 x 256 tile
    /// keeps 3 stages beside the TMA-store staging (4 with the register epilogue of an f32 C).
    pub fn fp8(m: usize, n: usize, sms: u32, input: ScalarType, output: ScalarType) -> GemmConfig {
        GemmConfig::for_problem_typed(m, n, sms, input, output)
    }

    /// The block-scaled FP8 configuration ([`Scaling::Block`]) for a problem `m x n x k` with
    /// `input` A and B (e4m3 or e5m2) and `output` C on a GPU with `sms` multiprocessors, as
    /// measured on the H200 (notes/session5-call3-h200.log: 8192³ 1313 TFLOP/s for the
    /// 128 x 256 tile with the scales in the stages against 1290 for the 128 x 128 pipelined
    /// one, 4096³ 1218 against 1158, and the DeepSeek-V3 rows): where M is a multiple of 4
    /// (the scales can come with the stages) the widest of the 256- and 192-wide tiles that
    /// divides N (no part-empty last column of tiles: 192 wins N = 2112) and still gives
    /// about one tile or more to each SM (3/4 of a tile per SM), with the promotion not
    /// pipelined and as many stages as fit (3 and 4 beside the TMA-store staging); else
    /// [`GemmConfig::fp8_block_pipelined`] (skinny M and narrow N: the 64-wide tile).
    pub fn fp8_block(
        m: usize,
        n: usize,
        sms: u32,
        input: ScalarType,
        output: ScalarType,
    ) -> GemmConfig {
        let pipelined = GemmConfig::fp8_block_pipelined(m, n, sms, input, output);
        if !pipelined.smem_scales {
            return pipelined;
        }
        [256, 192]
            .into_iter()
            .filter(|&bn| n % bn == 0 && Self::fills(m, n, bn, sms as usize))
            .map(|bn| {
                GemmConfig {
                    bn: bn as u32,
                    pipelined_promotion: false,
                    ..pipelined
                }
                .deepest()
            })
            .find(|c| c.validate().is_ok())
            .unwrap_or(pipelined)
    }

    /// The block-scaled FP8 configuration with the pipelined promotion for a problem
    /// `m x n x k` (the [`GemmConfig::fp8_block`] default before the H200's call 3, and its
    /// choice where the wide tiles do not fit the problem): the 128 x 128 tile (a consumer
    /// thread holds two partials of 64 f32 and the promoted accumulator; H200, 8192³: 1290
    /// TFLOP/s with the scales in the stages), 64 wide when 128-wide tiles would leave SMs
    /// idle (fewer than 3/4 of a tile per SM: the fastest on DeepSeek-V3's M = 64 and 128
    /// rows), the scales brought with the stages where M is a multiple of 4 (A's scale map's
    /// row pitch), and as many stages as shared memory holds (at most 6).
    pub fn fp8_block_pipelined(
        m: usize,
        n: usize,
        sms: u32,
        input: ScalarType,
        output: ScalarType,
    ) -> GemmConfig {
        let bn = if Self::fills(m, n, 128, sms as usize) {
            128
        } else {
            64
        };
        GemmConfig {
            bn,
            scaling: Scaling::Block,
            pipelined_promotion: true,
            smem_scales: m % 4 == 0,
            ..GemmConfig::for_problem_typed(m, n, sms, input, output)
        }
        .deepest()
    }

    /// The fewest k-tiles a part of [`GemmConfig::fp8_block_split`] keeps: each part fills and
    /// drains its ring once, so a part of a few k-tiles spends more of its time there than
    /// streaming.
    pub const MIN_PART_KTILES: usize = 4;

    /// The deepest ring [`GemmConfig::fp8_block_split`] gives a split decode kernel: a decode
    /// step streams its weight, and a 64-wide block-scaled stage (24 KB and its 640-byte scale
    /// slot) keeps 8 in flight beside the register epilogue, as the per-tensor decode tiles do
    /// ([`GemmConfig::decode_tile`]).
    pub const SPLIT_BLOCK_STAGES: u32 = 8;

    /// The block-scaled FP8 configuration ([`Scaling::Block`]) for a problem `m x n x k`, its
    /// depth known: [`GemmConfig::fp8_block`], or for a decode step (M of at most
    /// [`tune::DECODE_M`] tokens) whose tiles leave SMs idle, the same tile with K split
    /// ([`GemmConfig::split_k`]) in as many parts as fill the SMs once (`sms / tiles`, at most
    /// 16, each part at least [`GemmConfig::MIN_PART_KTILES`] k-tiles), summed in the kernel
    /// ([`GemmConfig::split_fixup`]: one launch, deterministic), each part promoting its own
    /// k-blocks with the pipelined promotion where it is valid (64 wide), the register
    /// epilogue and a ring up to [`GemmConfig::SPLIT_BLOCK_STAGES`] deep. On 132 SMs
    /// DeepSeek-V3's N = 2112 (33 tiles 64 wide) takes 4 parts and N = 4096 (64 tiles) 2; its
    /// other N fill the SMs unsplit, and a decode step unsplit takes the plain promotion.
    ///
    /// Measured on the H200 (notes/session20-bs21-same-tile.txt, ncu in
    /// notes/session20-bs21-ncu-summary.txt): split, the pipelined promotion is 1.6 and 2.2 %
    /// faster by ncu's kernel durations at 64x2112x7168 and 128x4096x7168 (event-timed over
    /// the 8 split rows, geomean 1.008, single rows -3.9 to +4.9 %); unsplit at M ≤ 128 the
    /// plain promotion is faster at 9 of the 10 rows whose default is pipelined (geomean
    /// 1.034, up to 9.7 % at 1x7168x16384, ncu 77.4 against 84.2 µs), level at the tenth.
    pub fn fp8_block_split(
        m: usize,
        n: usize,
        k: usize,
        sms: u32,
        input: ScalarType,
        output: ScalarType,
    ) -> GemmConfig {
        let base = GemmConfig::fp8_block(m, n, sms, input, output);
        if m > tune::DECODE_M {
            return base;
        }
        let tiles = m.div_ceil(Self::BM as usize) * n.div_ceil(base.bn as usize);
        let ktiles = k.div_ceil(base.bk() as usize);
        let parts = (sms as usize / tiles.max(1))
            .min(ktiles / Self::MIN_PART_KTILES)
            .min(16);
        if parts < 2 {
            return GemmConfig {
                pipelined_promotion: false,
                ..base
            };
        }
        let split = GemmConfig {
            split_k: parts as u32,
            split_fixup: base.bn <= 128,
            pipelined_promotion: false,
            tma_store: false,
            ..base
        };
        let budget = smem::max_smem_optin(Self::TARGET) - 2048;
        let per_stage = split.stage_bytes() + split.scale_slot_bytes();
        let split = GemmConfig {
            stages: (budget / per_stage).clamp(2, Self::SPLIT_BLOCK_STAGES),
            ..split
        };
        let pipelined = GemmConfig {
            pipelined_promotion: true,
            ..split
        };
        [pipelined, split]
            .into_iter()
            .find(|c| c.validate().is_ok())
            .unwrap_or(base)
    }

    /// `self` with the promotion neither pipelined nor fed from the stages (each consumer
    /// thread loads its scales from global memory and waits for each k-tile's wgmmas before
    /// promoting), as deep as shared memory allows: the first block-scaled kernel, kept as
    /// the baseline of the sweep.
    pub fn fp8_block_plain(&self) -> GemmConfig {
        GemmConfig {
            pipelined_promotion: false,
            smem_scales: false,
            ..*self
        }
        .deepest()
    }

    /// The block-scaled variants the benchmark times around `self` (a
    /// [`GemmConfig::fp8_block`] configuration) so one GPU run shows which is fastest: the
    /// plain promotion ([`GemmConfig::fp8_block_plain`]: 128 and 256 wide, pipelined), and
    /// with the scales in the stages 128 wide pipelined (other stages, band heights, the
    /// register epilogue with a sixth stage), 192 and 256 wide (either epilogue). `self` is
    /// not among them.
    pub fn fp8_block_sweep(&self) -> Vec<GemmConfig> {
        let plain = GemmConfig { bn: 128, ..*self }.fp8_block_plain();
        let wide = |bn: u32, tma_store: bool, stages: u32| GemmConfig {
            bn,
            tma_store,
            pipelined_promotion: false,
            smem_scales: true,
            stages,
            ..*self
        };
        let pp = |stages: u32, group_m: u32, tma_store: bool| GemmConfig {
            bn: 128,
            stages,
            group_m,
            tma_store,
            pipelined_promotion: true,
            smem_scales: true,
            ..*self
        };
        let mut v = vec![
            plain,
            GemmConfig {
                pipelined_promotion: true,
                ..plain
            },
            GemmConfig { bn: 256, ..plain }.deepest(),
            GemmConfig {
                pipelined_promotion: false,
                ..pp(5, 16, true)
            },
            pp(5, 16, true),
            pp(4, 16, true),
            pp(5, 8, true),
            pp(5, 32, true),
            pp(6, 16, false),
            wide(192, true, 4),
            wide(192, false, 5),
            wide(256, true, 3),
            wide(256, false, 4),
        ];
        v.retain(|c| c != self && c.validate().is_ok());
        v
    }

    /// The few block-scaled configurations a benchmark times at shapes where the whole sweep
    /// would take too long: `self`, the pipelined promotion at most 128 wide (the scales in
    /// the stages as in `self`), its plain promotion ([`GemmConfig::fp8_block_plain`]), and
    /// with the scales in the stages the 192- and 256-wide tiles (not pipelined), each once.
    pub fn fp8_block_quick(&self) -> Vec<GemmConfig> {
        let ss = |bn: u32| {
            GemmConfig {
                smem_scales: true,
                pipelined_promotion: false,
                bn,
                ..*self
            }
            .deepest()
        };
        let narrow = GemmConfig {
            bn: self.bn.min(128),
            pipelined_promotion: true,
            ..*self
        }
        .deepest();
        let mut v: Vec<GemmConfig> = Vec::new();
        for c in [*self, narrow, narrow.fp8_block_plain(), ss(192), ss(256)] {
            if !v.contains(&c) && c.validate().is_ok() {
                v.push(c);
            }
        }
        v
    }

    /// The roles this configuration's kernel runs: [`GemmConfig::ROLES`], or
    /// [`GemmConfig::EPILOGUE_WARPS_ROLES`] with [`GemmConfig::epilogue_warps`].
    pub fn roles(&self) -> WarpSpecialized {
        match self.epilogue_warps {
            true => Self::EPILOGUE_WARPS_ROLES,
            false => Self::ROLES,
        }
    }

    /// `self` with the epilogue on warps that hold no accumulators
    /// ([`GemmConfig::epilogue_warps`]).
    pub fn with_epilogue_warps(self) -> GemmConfig {
        GemmConfig {
            epilogue_warps: true,
            ..self
        }
    }

    /// `self` with the epilogue on `count` warps ([`GemmConfig::epilogue_warp_count`]).
    pub fn with_epilogue_warp_count(self, count: u32) -> GemmConfig {
        GemmConfig {
            epilogue_warp_count: count,
            ..self
        }
    }

    /// `self` with ping-pong consumers ([`GemmConfig::pingpong`]: 64-row tiles, a consumer
    /// each) and as many stages as then fit ([`GemmConfig::deepest`]): the pick for a long
    /// fused epilogue, whose work then overlaps the other consumer's main loop.
    pub fn with_pingpong(self) -> GemmConfig {
        GemmConfig {
            pingpong: true,
            ..self
        }
        .deepest()
    }

    /// Bytes of the epilogue warps' staged-input slabs ([`GemmConfig::epilogue_warps`]): two
    /// 64 x 64 16-bit slabs (one per consumer's warp on two warps, taken in turn on three); 0
    /// without epilogue warps.
    pub fn epilogue_input_bytes(&self) -> u32 {
        match self.epilogue_warps {
            true => 2 * 64 * 64 * 2,
            false => 0,
        }
    }

    /// `self` with as many stages as shared memory holds beside its C staging (2 to 6).
    pub fn deepest(self) -> GemmConfig {
        let budget = smem::max_smem_optin(Self::TARGET)
            - self.c_staging_bytes()
            - self.epilogue_input_bytes()
            - 2048;
        GemmConfig {
            stages: (budget / (self.stage_bytes() + self.scale_slot_bytes())).clamp(2, 6),
            ..self
        }
    }

    /// The configuration for a bf16 problem `m x n x k` on a GPU with `sms` multiprocessors: of
    /// the tile widths (256, 192 or 128) that still give every SM about one tile or more, the one
    /// whose last wave wastes least ([`GemmConfig::wave_width`]), else 64 (skinny problems need
    /// narrow tiles to fill the GPU); as many stages as shared memory holds (at most 6); the
    /// TMA-store epilogue when N is a multiple of 8. The rule alone: the device-aware entry,
    /// [`Gemm::for_problem`] ([`tune::config_for_problem`]), reads the tuning cache first.
    pub fn for_problem(m: usize, n: usize, sms: u32) -> GemmConfig {
        GemmConfig::for_problem_typed(m, n, sms, ScalarType::Bf16, ScalarType::Bf16)
    }

    /// [`GemmConfig::for_problem`] for `input` A and B and `output` C: the TMA-store epilogue
    /// only for a 16-bit C, per-tensor scales for 8-bit inputs ([`Scaling::PerTensor`]).
    pub fn for_problem_typed(
        m: usize,
        n: usize,
        sms: u32,
        input: ScalarType,
        output: ScalarType,
    ) -> GemmConfig {
        let bn = GemmConfig::wave_width(m, n, sms);
        let cfg = GemmConfig {
            bn,
            input,
            input_b: None,
            output,
            n_even: n % 2 == 0,
            tma_store: n % 8 == 0 && output.bytes() == 2,
            scaling: if input.bytes() == 1 {
                Scaling::PerTensor
            } else {
                Scaling::None
            },
            ..GemmConfig::large()
        };
        cfg.deepest()
    }

    /// The tile widths [`GemmConfig::wave_width`] weighs, each with its throughput a tile
    /// column relative to the 256-wide tile's: a narrower tile reloads A more often for the
    /// same columns and runs shorter wgmmas (H200, block-scaled FP8 at 8192³,
    /// notes/session5-call3-h200.log: 192 wide 1303 TFLOP/s, 256 wide 1313, 128 wide 1168-1259;
    /// 0.95 for 192 keeps a margin, so only a clearly wasted wave moves the rule off 256).
    pub const WAVE_WIDTHS: [(u32, f64); 3] = [(256, 1.0), (192, 0.95), (128, 0.85)];

    /// The tile width for a C of `m x n` on `sms` multiprocessors, one persistent CTA an SM:
    /// of the widths of [`GemmConfig::WAVE_WIDTHS`] that give every SM about one tile or more
    /// (3/4 of one), the one whose busiest SM finishes first: `ceil(tiles / sms)` tiles, each
    /// taking its width over its relative throughput. A width that leaves a part-empty last
    /// column of tiles or a part-empty last wave pays for it: N = 2112 takes 192 (11 whole
    /// columns, 352 tiles at M = 4096: 3 waves of 192) over 256 (9 columns, the last a quarter
    /// full: 288 tiles, 3 waves of 256). A narrower width must finish
    /// [`GemmConfig::WAVE_MARGIN`] sooner than the widest so far (the throughputs are
    /// estimates); 64 where none fills the GPU.
    pub fn wave_width(m: usize, n: usize, sms: u32) -> u32 {
        let sms = sms.max(1) as usize;
        let tiles = |bn: u32| m.div_ceil(Self::BM as usize) * n.div_ceil(bn as usize);
        let cost = |(bn, rate): (u32, f64)| tiles(bn).div_ceil(sms) as f64 * f64::from(bn) / rate;
        Self::WAVE_WIDTHS
            .into_iter()
            .filter(|&(bn, _)| Self::fills(m, n, bn as usize, sms))
            .fold(None, |best: Option<(u32, f64)>, w| match best {
                Some((_, c)) if cost(w) >= c * (1.0 - Self::WAVE_MARGIN) => best,
                _ => Some((w.0, cost(w))),
            })
            .map_or(64, |(bn, _)| bn)
    }

    /// Whether `bn`-wide tiles of a C of `m x n` give each of `sms` SMs about one tile or more
    /// (3/4 of one): the test of the tile widths [`GemmConfig::wave_width`],
    /// [`GemmConfig::fp8_block`] and [`GemmConfig::fp8_block_pipelined`] choose from.
    fn fills(m: usize, n: usize, bn: usize, sms: usize) -> bool {
        m.div_ceil(Self::BM as usize) * n.div_ceil(bn) * 4 >= sms * 3
    }

    /// How much sooner (a fraction) a narrower tile width's busiest SM must finish for
    /// [`GemmConfig::wave_width`] to take it.
    pub const WAVE_MARGIN: f64 = 0.1;

    /// Bytes of the C staging buffers of the TMA-store epilogue (one 64 x bn 16-bit block per
    /// consumer warpgroup), 0 without it.
    pub fn c_staging_bytes(&self) -> u32 {
        if self.tma_store {
            2 * 64 * self.bn * 2
        } else {
            0
        }
    }

    /// B's element type: `input_b`, else `input`.
    pub fn b_type(&self) -> ScalarType {
        self.input_b.unwrap_or(self.input)
    }

    /// Tile depth K in elements of the input type: [`GemmConfig::BK_BYTES`] of them (64 16-bit
    /// elements; an 8-bit input takes 128, four wgmma k32 steps).
    pub fn bk(&self) -> u32 {
        Self::BK_BYTES / self.input.bytes().max(1)
    }

    /// Bytes of one stage: an A tile ([`GemmConfig::bm`] x BK) and a B tile (bn x BK).
    pub fn stage_bytes(&self) -> u32 {
        (self.bm() + self.bn) * Self::BK_BYTES
    }

    /// The height of a tile: [`GemmConfig::BM`], the two consumers' 64 rows each; with
    /// [`GemmConfig::pingpong`] 64, one consumer's.
    pub fn bm(&self) -> u32 {
        if self.pingpong { 64 } else { Self::BM }
    }

    /// The CTAs of a cluster: [`GemmConfig::cluster_m`] (a pair along M) or
    /// [`GemmConfig::cluster_n`] (along N), one of them 1.
    pub fn cluster_size(&self) -> u32 {
        self.cluster_m * self.cluster_n
    }

    /// The kernel launches one run takes: 2 for split-K summed by a second launch
    /// ([`GemmConfig::split_k`] over 1 without [`GemmConfig::split_fixup`]), else 1.
    pub fn launches(&self) -> u32 {
        if self.split_k > 1 && !self.split_fixup {
            2
        } else {
            1
        }
    }

    /// How many consumer warpgroups release each stage: both (each read its 64 rows of A), or
    /// with [`GemmConfig::pingpong`] the one whose tile it holds.
    pub fn stage_readers(&self) -> u32 {
        if self.pingpong {
            1
        } else {
            Self::ROLES.consumers
        }
    }

    /// Bytes of a stage's scale slot: [`GemmConfig::SCALE_SLOT_BYTES`] with
    /// [`GemmConfig::smem_scales`], else 0.
    pub fn scale_slot_bytes(&self) -> u32 {
        if self.smem_scales {
            Self::SCALE_SLOT_BYTES
        } else {
            0
        }
    }

    /// Dynamic shared memory the launch needs: the pool's layout of the stages, the C staging
    /// blocks and the barriers, and 1024 bytes to align the base for the 128B swizzle; a layout
    /// over the limit is [`GemmConfigError::SharedMemory`].
    pub fn smem_bytes(&self) -> Result<u32, GemmConfigError> {
        self.smem_layout().map(|l| l.launch_bytes)
    }

    /// The alignment C's base must have: what the epilogue's widest access needs. With
    /// `tma_store` the TMA store reads C's address from a tensor map, whose global address must
    /// be 16-byte aligned (CUDA Driver API `cuTensorMapEncodeTiled`); with `n_even` the epilogue
    /// stores element pairs (a 2-vector, aligned to its size, PTX ISA 5.4.5 "Vectors"); else
    /// single elements. The kernel declares it (`.ptr .global .align`) and the launcher checks
    /// it, so a C borrowed at an element offset is refused before the launch when the epilogue
    /// could not store there.
    pub fn c_align(&self) -> u32 {
        let size = self.output.bytes();
        if self.tma_store {
            16
        } else if self.n_even {
            2 * size
        } else {
            size
        }
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), GemmConfigError> {
        // A width that is no whole number of 64-column slabs: the decode kernel's only (any
        // wgmma N, a multiple of 8, PTX ISA 9.7.15.5; 16 or more, whole 8-row 128B-swizzle atoms
        // of B, 9.7.15.5.1.2).
        let narrow = self.bn % 64 != 0;
        if self.bn % 8 != 0 || !(16..=256).contains(&self.bn) {
            return Err(GemmConfigError::TileWidth(self.bn));
        }
        let b = self.b_type();
        let mixed_ok = b == self.input || (self.input.bytes() == 1 && b.bytes() == 1);
        if !INPUTS.contains(&self.input)
            || !INPUTS.contains(&b)
            || !mixed_ok
            || !OUTPUTS.contains(&self.output)
        {
            return Err(GemmConfigError::Types {
                input: self.input,
                output: self.output,
            });
        }
        let fp8 = self.input.bytes() == 1;
        let fits = match self.scaling {
            Scaling::None => !fp8,
            Scaling::PerTensor | Scaling::Block => fp8 && !self.alpha_beta,
        };
        if !fits {
            return Err(GemmConfigError::Scaling {
                input: self.input.name(),
                scaling: self.scaling,
                alpha_beta: self.alpha_beta,
            });
        }
        // A 256-wide tile promotes one 128-column half at a time through a half-width
        // partial, a 192-wide one its whole partial (each 64-column chunk with its block's
        // scale of B): two partials (the pipelined promotion) and the accumulator do not fit
        // in a consumer's registers.
        let wide_ok = matches!(self.bn, 192 | 256) && !self.pipelined_promotion;
        if self.scaling == Scaling::Block && !(matches!(self.bn, 64 | 128) || wide_ok) {
            return Err(GemmConfigError::BlockTile(self.bn));
        }
        if self.pipelined_promotion && self.scaling != Scaling::Block {
            return Err(GemmConfigError::PipelinedPromotion);
        }
        if self.smem_scales && (self.scaling != Scaling::Block || self.grouping != Grouping::None) {
            return Err(GemmConfigError::SmemScales);
        }
        if self.tma_store && (self.output == ScalarType::F32 || self.alpha_beta || !self.n_even) {
            return Err(GemmConfigError::TmaStore);
        }
        if !(2..=Self::MAX_STAGES).contains(&self.stages) {
            return Err(GemmConfigError::Stages(self.stages));
        }
        if !matches!(self.cluster_m, 1 | 2) {
            return Err(GemmConfigError::Cluster(self.cluster_m));
        }
        if !matches!(self.cluster_n, 1 | 2 | 4)
            || (self.cluster_n > 1
                && (self.cluster_m != 1
                    || self.pingpong
                    || self.split_k != 1
                    || self.swap_ab
                    || self.grouping != Grouping::None
                    || self.scaling == Scaling::Block
                    || self.epilogue_warps))
        {
            return Err(GemmConfigError::ClusterN(self.cluster_n));
        }
        if self.group_m == 0 {
            return Err(GemmConfigError::GroupM);
        }
        let grouped_scaling = !fp8 || self.scaling == Scaling::Block;
        if self.grouping != Grouping::None
            && (self.cluster_m != 1 || self.alpha_beta || !grouped_scaling)
        {
            return Err(GemmConfigError::Grouped);
        }
        if self.pingpong && (self.grouping != Grouping::None || self.scaling == Scaling::Block) {
            return Err(GemmConfigError::PingPong);
        }
        let epilogue = self.bias.is_some() || self.out_scale != OutScale::None;
        if self.split_k != 1
            && (!(1..=16).contains(&self.split_k)
                || self.grouping != Grouping::None
                || self.tma_store
                || self.alpha_beta
                || epilogue)
        {
            return Err(GemmConfigError::SplitK(self.split_k));
        }
        if self.epilogue_warps
            && (!self.tma_store
                || self.grouping != Grouping::None
                || self.pingpong
                || self.split_k != 1
                || self.swap_ab)
            || !matches!(self.epilogue_warp_count, 2 | 3)
        {
            return Err(GemmConfigError::EpilogueWarps);
        }
        // The fixup's loaded parts beside the accumulator and the pipelined promotion's two
        // partials spill at 128 wide (ptxas 13.0: 12 bytes); 64 wide they fit.
        let pp_wide = self.pipelined_promotion && self.bn > 64;
        if self.split_fixup && (self.split_k == 1 || self.bn > 128 || pp_wide) {
            return Err(GemmConfigError::SplitK(self.split_k));
        }
        if self.stream_k
            && (self.split_k != 1
                || self.split_fixup
                || self.cluster_size() != 1
                || self.pingpong
                || self.grouping != Grouping::None
                || self.scaling == Scaling::Block
                || self.tma_store
                || self.alpha_beta
                || epilogue
                || self.epilogue_warps
                || self.bn > 128)
        {
            return Err(GemmConfigError::StreamK);
        }
        if (narrow || self.swap_ab) && !swap_ab::takes(self) {
            return Err(GemmConfigError::SwapAb);
        }
        let bias_ok = matches!(self.bias, None | Some(ScalarType::Bf16 | ScalarType::F32));
        if epilogue && (!fp8 || self.grouping != Grouping::None || !bias_ok) {
            return Err(GemmConfigError::Epilogue);
        }
        self.smem_layout().map(|_| ())
    }

    /// The kernel's name: the configuration spelled out.
    pub fn name(&self) -> String {
        format!(
            "gemm{}_{}{}_{}_{}x{}x{}_s{}_g{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}",
            match self.grouping {
                Grouping::None => "",
                Grouping::Contiguous => "_grouped",
                Grouping::Masked => "_masked",
            },
            self.input.name(),
            if self.b_type() == self.input {
                String::new()
            } else {
                format!("x{}", self.b_type().name())
            },
            self.output.name(),
            self.bm(),
            self.bn,
            self.bk(),
            self.stages,
            self.group_m,
            if self.n_even { "" } else { "_nodd" },
            if self.alpha_beta { "_ab" } else { "" },
            if self.tma_store { "_tmastore" } else { "" },
            if self.cluster_m == 2 { "_c2" } else { "" },
            match self.cluster_n {
                1 => String::new(),
                c => format!("_n{c}"),
            },
            if self.scaling == Scaling::Block {
                "_blk128"
            } else {
                ""
            },
            if self.pipelined_promotion { "_pp" } else { "" },
            if self.smem_scales { "_ss" } else { "" },
            match self.bias {
                Some(t) => format!("_bias{}", t.name()),
                None => String::new(),
            },
            match self.out_scale {
                OutScale::None => "",
                OutScale::Value => "_osv",
                OutScale::Pointer => "_osp",
            },
            if self.pingpong { "_pingpong" } else { "" },
            match self.split_k {
                1 => String::new(),
                s => format!("_splitk{s}"),
            },
            if self.swap_ab { "_swapab" } else { "" },
            if self.split_fixup { "_fixup" } else { "" },
            match (self.epilogue_warps, self.epilogue_warp_count) {
                (false, _) => "",
                (true, 2) => "_ew2",
                (true, _) => "_ew",
            },
            if self.stream_k { "_streamk" } else { "" },
        )
    }
}

/// The module of the large-tile bf16 GEMM ([`GemmConfig::large`]) with `mode`'s waits: what
/// `ptxkit dump gemm` (spinning waits) and `ptxkit dump gemm_debug` (bounded waits) write.
/// sm_90a only: any other target is `UnsupportedTarget`.
pub fn large_module(target: Target, mode: WaitMode) -> ptx_isa::Result<Module> {
    module_for(&GemmConfig::large(), target, mode)
}

/// The module of the per-tensor-scaled FP8 GEMM (e4m3 in, bf16 out) in the configuration a
/// 4096 x 4096 problem gets on a 132-SM H100 (128 x 256 x 128 tiles, 3 stages, TMA-store
/// epilogue): what `ptxkit dump gemm_fp8` writes. sm_90a only.
pub fn fp8_module(target: Target) -> ptx_isa::Result<Module> {
    let cfg = GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::Bf16);
    module_for(&cfg, target, WaitMode::Spin)
}

/// The module of the block-scaled FP8 GEMM ([`Scaling::Block`], e4m3 in, bf16 out) in the
/// configuration an 8192 x 8192 problem gets on a 132-SM H100 (128 x 256 x 128 tiles, the
/// scales in the stages, 3 stages, TMA-store epilogue): what `ptxkit dump
/// gemm_fp8_block` writes. sm_90a only.
pub fn fp8_block_module(target: Target) -> ptx_isa::Result<Module> {
    let cfg = GemmConfig::fp8_block(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
    module_for(&cfg, target, WaitMode::Spin)
}

/// `cfg`'s module with `mode`'s waits, for sm_90a (any other target is `UnsupportedTarget`).
fn module_for(cfg: &GemmConfig, target: Target, mode: WaitMode) -> ptx_isa::Result<Module> {
    if target != Target::Sm90a {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::UnsupportedTarget,
            "the GEMM uses wgmma and setmaxnreg: sm_90a only",
        )
        .on_target(target));
    }
    build_with(cfg, mode).map(|g| g.built.into_module())
}
