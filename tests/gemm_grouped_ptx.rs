//! The grouped GEMM kernels (contiguous and masked, every configuration the benchmark times and
//! the variants the self-test runs) assemble with ptxas for sm_90a with no spills, no "wgmma
//! serialized" warning and no ignored `setmaxnreg`; their signatures take what the host launcher
//! passes; configurations a grouped kernel cannot be are refused. The same for the grouped
//! block-scaled FP8 kernels (every configuration their benchmark times, the self-test's register
//! epilogue with an odd N and e5m2), whose signatures add the scales.

mod support;

use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::gemm::grouped::{Grouping, bench_configs, fp8_bench_configs};
use ptxkit::library::gemm::{GemmConfig, Scaling, build, build_with};
use ptxkit::signature::Param;
use ptxkit::smem::pipeline::sync::WaitMode;

/// Every grouped configuration: for the bf16 kernels and then for the block-scaled FP8 ones (e4m3
/// in, bf16 out), the benchmark's for both forms, then a register epilogue with an odd N, the
/// other input (f16 in and out; e5m2 in with the promotion not pipelined), an f32 C, and what
/// few rows get (the narrow tile).
fn configs() -> Vec<GemmConfig> {
    let mut all = Vec::new();
    for (input, output) in [
        (ScalarType::Bf16, ScalarType::Bf16),
        (ScalarType::E4m3, ScalarType::Bf16),
    ] {
        let fp8 = input == ScalarType::E4m3;
        for grouping in [Grouping::Contiguous, Grouping::Masked] {
            let bench = match fp8 {
                true => fp8_bench_configs(grouping),
                false => bench_configs(grouping),
            };
            let base = match fp8 {
                true => bench[0],
                false => GemmConfig {
                    grouping,
                    ..GemmConfig::large()
                },
            };
            let other_input = match fp8 {
                true => GemmConfig {
                    input: ScalarType::E5m2,
                    pipelined_promotion: false,
                    ..base
                },
                false => GemmConfig {
                    input: ScalarType::F16,
                    output: ScalarType::F16,
                    ..base
                },
            };
            all.extend(bench);
            all.extend([
                GemmConfig {
                    tma_store: false,
                    n_even: false,
                    ..base
                }
                .deepest(),
                other_input,
                GemmConfig {
                    tma_store: false,
                    output: ScalarType::F32,
                    ..base
                }
                .deepest(),
                GemmConfig::grouped(grouping, 4, 100, 200, 132, input, output),
            ]);
        }
    }
    all
}

#[test]
fn grouped_kernels_assemble_without_spills_or_serialisation() {
    support::gemm_configs_assemble_clean(configs());
}

/// The debug build (bounded waits) of the grouped kernels checks their barrier protocol too.
#[test]
fn the_grouped_debug_build_assembles() {
    for cfg in [
        bench_configs(Grouping::Contiguous)[0],
        fp8_bench_configs(Grouping::Masked)[0],
    ] {
        let text = build_with(&cfg, WaitMode::Bounded)
            .and_then(|g| g.built.into_module().to_ptx())
            .unwrap();
        support::assemble(&text, Target::Sm90a);
    }
}

/// The parameters of `cfg`'s kernel that take an argument, in the order the launcher passes
/// them, and the names of its extents (the rest, which the launcher reads from the shapes).
fn arguments_and_extents(cfg: &GemmConfig) -> (Vec<Param>, Vec<String>) {
    let g = build_with(cfg, WaitMode::Spin).unwrap();
    let (arguments, extents): (Vec<&Param>, Vec<&Param>) = g
        .signature()
        .params
        .iter()
        .partition(|p| p.takes_argument());
    let extents = extents.iter().map(|p| p.name().to_string()).collect();
    (arguments.into_iter().cloned().collect(), extents)
}

/// A block-scaled grouped kernel takes the scales after the row array: `scale_a` `[k_blocks, m]`
/// (contiguous) or `[g, k_blocks, m]` (masked), `scale_b` `[g, n_blocks, k_blocks]`; its
/// extents add `k_blocks` and `n_blocks`. The defaults are 128 x 128 x 128 with the pipelined
/// promotion.
#[test]
fn the_block_scaled_signatures_take_the_scales() {
    for (grouping, rows, sa_rank) in [
        (Grouping::Contiguous, "offs", 2),
        (Grouping::Masked, "counts", 3),
    ] {
        let cfg = fp8_bench_configs(grouping)[0];
        assert_eq!((cfg.bn, cfg.bk(), cfg.scaling), (128, 128, Scaling::Block));
        assert!(cfg.pipelined_promotion && cfg.tma_store, "{}", cfg.name());
        let (params, extents) = arguments_and_extents(&cfg);
        let names: Vec<&str> = params.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["a", "b", "c", "c_map", rows, "scale_a", "scale_b"]);
        assert_eq!(params[5].shape().unwrap().len(), sa_rank);
        assert_eq!(params[6].shape().unwrap().len(), 3);
        assert_eq!(extents, ["m", "n", "k", "g", "k_blocks", "n_blocks"]);
    }
}

/// The parameters, in the order the launcher passes arguments: A, B, C (and C's TMA view as a
/// raw tensor map with the TMA-store epilogue), then the row array; the extents m, n, k, g.
#[test]
fn the_signatures_take_what_the_launcher_passes() {
    for (grouping, rows, a_rank) in [
        (Grouping::Contiguous, "offs", 2),
        (Grouping::Masked, "counts", 3),
    ] {
        for tma_store in [true, false] {
            let cfg = GemmConfig {
                grouping,
                tma_store,
                ..GemmConfig::large()
            }
            .deepest();
            let (params, extents) = arguments_and_extents(&cfg);
            let names: Vec<&str> = params.iter().map(|p| p.name()).collect();
            let want: Vec<&str> = if tma_store {
                vec!["a", "b", "c", "c_map", rows]
            } else {
                vec!["a", "b", "c", rows]
            };
            assert_eq!(names, want, "{}", cfg.name());
            assert_eq!(params[0].shape().unwrap().len(), a_rank);
            assert_eq!(params[1].shape().unwrap().len(), 3);
            assert_eq!(extents, ["m", "n", "k", "g"]);
        }
    }
}

#[test]
fn grouped_names_and_refusals() {
    let cfg = bench_configs(Grouping::Contiguous)[0];
    assert_eq!(
        cfg.name(),
        "gemm_grouped_bf16_bf16_128x256x64_s3_g16_tmastore"
    );
    assert_eq!(
        fp8_bench_configs(Grouping::Contiguous)[0].name(),
        "gemm_grouped_e4m3_bf16_128x128x128_s6_g16_tmastore_blk128_pp"
    );
    // The bf16 default for the benchmark's shapes is the configuration it measured fastest
    // (H200: 128 x 256, 3 stages, TMA stores, 788-792 TFLOP/s at 8 x 2048 and 8 x 4096).
    for m_g in [2048, 4096] {
        let bf16 = ScalarType::Bf16;
        let picked = GemmConfig::grouped(Grouping::Contiguous, 8, m_g, 4096, 132, bf16, bf16);
        assert_eq!(picked, cfg);
    }
    assert!(
        bench_configs(Grouping::Masked)[0]
            .name()
            .starts_with("gemm_masked_")
    );
    // Per-tensor FP8 scales and a 256-wide block-scaled tile are not grouped kernels.
    let fp8 = GemmConfig {
        grouping: Grouping::Contiguous,
        ..GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::Bf16)
    };
    let block_wide = GemmConfig {
        bn: 256,
        ..fp8_bench_configs(Grouping::Contiguous)[0]
    };
    let block_pair = GemmConfig {
        cluster_m: 2,
        ..fp8_bench_configs(Grouping::Masked)[0]
    };
    for bad in [
        GemmConfig {
            cluster_m: 2,
            ..cfg
        },
        GemmConfig {
            tma_store: false,
            alpha_beta: true,
            ..cfg
        },
        fp8,
        block_wide,
        block_pair,
    ] {
        assert!(build(&bad).is_err(), "{} should be refused", bad.name());
    }
}
