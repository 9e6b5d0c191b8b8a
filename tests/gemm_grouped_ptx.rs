//! The grouped GEMM kernels (contiguous and masked, every configuration the benchmark times and
//! the variants the self-test runs) assemble with ptxas for sm_90a with no spills, no "wgmma
//! serialized" warning and no ignored `setmaxnreg`; their signatures take what the host launcher
//! passes; configurations a grouped kernel cannot be are refused.

mod support;

use ptxkit::isa::{ScalarType, Target, ptxas};
use ptxkit::library::gemm::grouped::{Grouping, bench_configs};
use ptxkit::library::gemm::{GemmConfig, build, build_with};
use ptxkit::signature::Param;
use ptxkit::smem::pipeline::sync::WaitMode;

/// Every grouped configuration: the benchmark's for both forms, then a register epilogue with an
/// odd N, f16 in and out, an f32 C, and the narrow tile of small problems.
fn configs() -> Vec<GemmConfig> {
    let mut all = bench_configs(Grouping::Contiguous);
    all.extend(bench_configs(Grouping::Masked));
    for grouping in [Grouping::Contiguous, Grouping::Masked] {
        let large = GemmConfig {
            grouping,
            ..GemmConfig::large()
        };
        all.extend([
            GemmConfig {
                tma_store: false,
                n_even: false,
                ..large
            }
            .deepest(),
            GemmConfig {
                input: ScalarType::F16,
                output: ScalarType::F16,
                ..large
            },
            GemmConfig {
                tma_store: false,
                output: ScalarType::F32,
                ..large
            }
            .deepest(),
            GemmConfig::grouped(grouping, 4, 100, 200, 132, ScalarType::Bf16),
        ]);
    }
    all
}

#[test]
fn grouped_kernels_assemble_without_spills_or_serialisation() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for cfg in configs() {
        let text = build(&cfg)
            .and_then(|m| m.to_ptx())
            .unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        support::assemble_clean(&ptxas, &cfg.name(), &text, Target::Sm90a);
    }
}

/// The debug build (bounded waits) of the grouped kernel checks its barrier protocol too.
#[test]
fn the_grouped_debug_build_assembles() {
    let cfg = bench_configs(Grouping::Contiguous)[0];
    let text = build_with(&cfg, WaitMode::Bounded)
        .and_then(|g| g.built.into_module().to_ptx())
        .unwrap();
    support::assemble(&text, Target::Sm90a);
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
            let g = build_with(&cfg, WaitMode::Spin).unwrap();
            let params: Vec<&Param> = g
                .signature()
                .params
                .iter()
                .filter(|p| p.takes_argument())
                .collect();
            let names: Vec<&str> = params.iter().map(|p| p.name()).collect();
            let want: Vec<&str> = if tma_store {
                vec!["a", "b", "c", "c_map", rows]
            } else {
                vec!["a", "b", "c", rows]
            };
            assert_eq!(names, want, "{}", cfg.name());
            assert_eq!(params[0].shape().unwrap().len(), a_rank);
            assert_eq!(params[1].shape().unwrap().len(), 3);
            let extents: Vec<&str> = g
                .signature()
                .params
                .iter()
                .filter(|p| !p.takes_argument())
                .map(|p| p.name())
                .collect();
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
    assert!(
        bench_configs(Grouping::Masked)[0]
            .name()
            .starts_with("gemm_masked_")
    );
    let fp8 = GemmConfig {
        grouping: Grouping::Contiguous,
        ..GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::Bf16)
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
    ] {
        assert!(build(&bad).is_err(), "{} should be refused", bad.name());
    }
}
