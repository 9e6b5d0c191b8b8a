//! The grouped GEMM of mixture-of-experts layers on the Hopper GEMM's layers: G problems
//! `C_g = A_g·B_gᵀ` that share N and K, each with its own B (`[G, N, K]`, K-major) and its own
//! number of rows M_g (tokens routed to expert g, possibly 0), in one persistent launch.
//!
//! Two ways to lay the rows out ([`Grouping`]):
//! - **contiguous** (training, prefill): A `[M_total, K]` holds every group's rows one group after
//!   the other, C `[M_total, N]` likewise, and `offs` `[G]` (int32, on the device) holds the
//!   cumulative ends: group g is rows `offs[g-1]..offs[g]` (`offs[-1] = 0`), as
//!   `torch._grouped_mm`'s `offs`;
//! - **masked** (decoding): A `[G, M_cap, K]` and C `[G, M_cap, N]` give each group a fixed
//!   capacity, and `counts` `[G]` (int32, on the device) how many of its rows are live: rows
//!   `counts[g]..M_cap` of C are not written.
//!
//! The kernel is [`super::HopperGemm`] (producer warpgroup, TMA loads, two wgmma consumer
//! warpgroups) with the grouped tile schedule of [`schedule::GroupedSchedule`]: the tiles of all
//! groups numbered group after group (within a group in the dense GEMM's `group_m` bands), each
//! CTA walking `id, id + grid, ...` with a cursor over the groups read from `offs`/`counts` on the
//! device. A tile's rows past its group's end are loaded (harmless: another group's rows or TMA's
//! zeros) but never stored: whole 64-row blocks go out by TMA store, a block that holds the
//! group's end from registers with a row bound ([`schedule::GroupTile::c_block`]).
//!
//! Inputs are bf16/f16, or FP8 with DeepSeek-V3's block scales ([`super::Scaling::Block`],
//! [`GemmConfig::grouped`] of an 8-bit input, [`GroupedGemm::run`] with scales): `scale_a` per 1 x 128
//! block of A's rows, indexed by A's own row (`[ceil(K/128), M_total]` contiguous, `[G,
//! ceil(K/128), M_cap]` masked), `scale_b` per 128 x 128 block of each group's B (`[G,
//! ceil(N/128), ceil(K/128)]`); the main loop's two-level promotion is the dense GEMM's, reading
//! the tile's group's scales through [`schedule::GroupTile::scale_a_at`] and
//! [`schedule::GroupTile::scale_b_at`].

pub mod host;
pub mod reference;
pub mod schedule;

pub use host::{GroupedGemm, GroupedGemmError, GroupedShape, check_block_scales, check_grouped};
pub use schedule::{GroupTile, GroupedSchedule};

use ptx_isa::ScalarType;

use crate::signature::TmaBox;
use smem::SwizzleMode;

use super::GemmConfig;

/// How a GEMM's rows are grouped ([`GemmConfig::grouping`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Grouping {
    /// One problem (the dense GEMM).
    #[default]
    None,
    /// G groups whose rows follow one another in A and C, ended by the device array `offs`.
    Contiguous,
    /// G groups of a fixed capacity `M_cap` each (A `[G, M_cap, K]`, C `[G, M_cap, N]`), with
    /// the device array `counts` of their live rows.
    Masked,
}

impl Grouping {
    /// The name of the per-group row array the kernel takes: `offs` or `counts`.
    pub fn rows_name(self) -> &'static str {
        match self {
            Grouping::Masked => "counts",
            _ => "offs",
        }
    }
}

/// The cumulative row ends of groups of `sizes` rows: the `offs` array of the contiguous form
/// (group g is rows `offs[g-1]..offs[g]`).
pub fn offs(sizes: &[usize]) -> Vec<i32> {
    sizes
        .iter()
        .scan(0i32, |end, &s| {
            *end += s as i32;
            Some(*end)
        })
        .collect()
}

/// The box of the TMA view of C (`c_map`) a grouped kernel with the TMA-store epilogue stores
/// whole 64-row blocks through: 64 x 64 elements (one 128-byte swizzle row of 16-bit C), one
/// group deep for the masked form's `[G, M_cap, N]`. The kernel declares the view with it and
/// the host encodes the map with it: the one place both read.
pub fn c_box(grouping: Grouping) -> TmaBox {
    let shape = match grouping {
        Grouping::Masked => vec![1, 64, 64],
        _ => vec![64, 64],
    };
    TmaBox::new(shape).swizzle(SwizzleMode::B128)
}

impl GemmConfig {
    /// The grouped GEMM's configuration for groups of about `m_per_group` rows, N = `n`, on a GPU
    /// with `sms` multiprocessors, A and B of `input`, C of `output`:
    /// - 16-bit input: the tile width of [`GemmConfig::for_problem_typed`] for all groups' rows
    ///   together (`groups x m_per_group`), the TMA-store epilogue where N allows it;
    /// - 8-bit input (e4m3, e5m2): the block-scaled FP8 GEMM ([`super::Scaling::Block`], the
    ///   grouped GEMM's one FP8 form): [`GemmConfig::fp8_block_pipelined`] for all groups' rows
    ///   together (128 x 128 x 128 tiles, 64 wide for few rows, as many stages as fit) with the
    ///   pipelined promotion (the fastest at 8192³ on the H200, 985 against 899 TFLOP/s).
    pub fn grouped(
        grouping: Grouping,
        groups: usize,
        m_per_group: usize,
        n: usize,
        sms: u32,
        input: ScalarType,
        output: ScalarType,
    ) -> GemmConfig {
        let rows = groups * m_per_group.max(1);
        match input {
            ScalarType::E4m3 | ScalarType::E5m2 => GemmConfig {
                grouping,
                pipelined_promotion: true,
                smem_scales: false,
                ..GemmConfig::fp8_block_pipelined(rows, n, sms, input, output)
            }
            .deepest(),
            _ => GemmConfig {
                grouping,
                ..GemmConfig::for_problem_typed(rows, n, sms, input, output)
            },
        }
    }
}

/// The block-scaled FP8 configurations (e4m3 in, bf16 out) the grouped benchmark times for
/// `grouping`: the default ([`GemmConfig::grouped`] of e4m3 for many rows: 128 x 128 x 128,
/// pipelined promotion, 6 stages, bands of 16), the promotion not pipelined, 4 stages, bands of
/// 8, and the 64-wide tile. `tests/gemm_grouped_ptx.rs` assembles every one.
pub fn fp8_bench_configs(grouping: Grouping) -> Vec<GemmConfig> {
    let e4 = ScalarType::E4m3;
    let default = GemmConfig::grouped(grouping, 8, 4096, 4096, 132, e4, ScalarType::Bf16);
    vec![
        default,
        GemmConfig {
            pipelined_promotion: false,
            ..default
        },
        GemmConfig {
            stages: 4,
            ..default
        },
        GemmConfig {
            group_m: 8,
            ..default
        },
        GemmConfig { bn: 64, ..default }.deepest(),
    ]
}

/// The configurations the grouped benchmark times for `grouping` (bf16 in and out, N a multiple
/// of 8), each beside the others in one run so it shows which is fastest: 128 x 256 tiles with
/// the TMA-store epilogue in bands of 16 and of 8 M-tiles, the same from registers (4 stages),
/// and 128 x 192 and 128 x 128 tiles with the TMA-store epilogue (as many stages as fit).
/// `tests/gemm_grouped_ptx.rs` assembles every one.
pub fn bench_configs(grouping: Grouping) -> Vec<GemmConfig> {
    let large = GemmConfig {
        grouping,
        ..GemmConfig::large()
    };
    vec![
        large,
        GemmConfig {
            group_m: 8,
            ..large
        },
        GemmConfig {
            tma_store: false,
            ..large
        }
        .deepest(),
        GemmConfig { bn: 192, ..large }.deepest(),
        GemmConfig { bn: 128, ..large }.deepest(),
    ]
}

/// The module of the grouped block-scaled FP8 GEMM in its benchmark's first configuration for
/// `grouping` (e4m3 in, bf16 out, 128 x 128 x 128 tiles, pipelined promotion): what `ptxkit dump
/// gemm_grouped_fp8_block` and `gemm_grouped_fp8_block_masked` write. sm_90a only.
pub fn fp8_block_module(
    target: ptx_isa::Target,
    grouping: Grouping,
) -> ptx_isa::Result<ptx_isa::Module> {
    let cfg = fp8_bench_configs(grouping)[0];
    super::module_for(&cfg, target, smem::pipeline::sync::WaitMode::Spin)
}

/// The module of the grouped GEMM in the benchmark's first configuration for `grouping` (128 x
/// 256 x 64 tiles, 3 stages, TMA stores of whole blocks): what `ptxkit dump gemm_grouped` and
/// `ptxkit dump gemm_grouped_masked` write. sm_90a only.
pub fn module(target: ptx_isa::Target, grouping: Grouping) -> ptx_isa::Result<ptx_isa::Module> {
    let cfg = bench_configs(grouping)[0];
    super::module_for(&cfg, target, smem::pipeline::sync::WaitMode::Spin)
}
