//! The block-scaled FP8 GEMM ([`Scaling::Block`]) assembles with ptxas for sm_90a in every
//! variant the checks and benchmarks run (the CI has no GPU; this is its check): no register
//! spills (a consumer thread holds the partial and the promoted accumulator), no "wgmma
//! serialized" warning (C7515) and no ignored `setmaxnreg` (C7508); its configurations are
//! the ones documented, and the ones it cannot run are refused.

mod support;

use ptxkit::isa::ScalarType;
use ptxkit::library::gemm::{GemmConfig, GemmConfigError, Scaling, build};

/// The configurations the self-test and `benches/gemm_fp8_block.rs` build: the one each
/// benchmark shape gets on a 132-SM H100 (128 or 64 wide), the bench's stage and group
/// variants, e5m2 and mixed inputs, f32 and f16 C, an odd N (the register epilogue with single
/// stores), the register epilogue for a 16-bit C, a CTA pair, and the pipelined promotion
/// with each of those it is checked with.
fn block_configs() -> Vec<GemmConfig> {
    use ScalarType::{Bf16, E4m3, E5m2, F16, F32};
    let mut configs = support::fp8_family(
        GemmConfig::fp8_block,
        &[
            (8192, 8192),
            (64, 2112),
            (128, 7168),
            (4096, 7168),
            (300, 520),
            (333, 501),
        ],
        &[(E5m2, Bf16), (E4m3, F32), (E4m3, F16)],
        &[(2048, 2048, E5m2, E4m3, Bf16), (260, 384, E4m3, E5m2, F32)],
    );
    configs.extend(configs[0].fp8_block_sweep());
    configs.push(
        GemmConfig {
            bn: 256,
            ..GemmConfig::fp8_block(8192, 8192, 132, E4m3, F32)
        }
        .deepest(),
    );
    let pipelined: Vec<GemmConfig> = configs
        .iter()
        .filter(|c| c.bn != 256)
        .map(|c| GemmConfig {
            pipelined_promotion: true,
            ..*c
        })
        .collect();
    configs.extend(pipelined);
    support::unique(configs)
}

#[test]
fn block_configurations_are_as_documented() {
    use ScalarType::{Bf16, E4m3};
    let large = GemmConfig::fp8_block(8192, 8192, 132, E4m3, Bf16);
    // 128 x 128 tiles, BK = 128 e4m3 (one scale block), 32 KB stages: 6 beside 32 KB of C
    // staging.
    assert_eq!((large.bn, large.bk(), large.stages), (128, 128, 6));
    assert_eq!(large.scaling, Scaling::Block);
    assert_eq!(
        large.name(),
        "gemm_e4m3_bf16_128x128x128_s6_g16_tmastore_blk128"
    );
    // A skinny M leaves SMs idle with 128-wide tiles: 64 wide.
    assert_eq!(GemmConfig::fp8_block(64, 2112, 132, E4m3, Bf16).bn, 64);
    for cfg in block_configs() {
        cfg.validate().unwrap();
        assert!(cfg.smem_bytes().unwrap() <= GemmConfig::ARCH.max_smem_optin());
    }
}

#[test]
fn block_kernels_assemble_without_spills_or_serialisation() {
    support::gemm_configs_assemble_clean(block_configs());
}

/// The promotion is in the PTX: the k-tile's wgmmas start from scale-d = 0 (the partial), and
/// one `fma` per accumulator value (64 for the 128-wide tile) adds it into the f32 accumulator.
#[test]
fn block_kernels_promote_each_k_tile() {
    let large = GemmConfig::fp8_block(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
    let text = build(&large).and_then(|m| m.to_ptx()).unwrap();
    assert!(text.contains("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "));
    assert_eq!(text.matches("fma.rn.f32").count(), 64, "one fma per value");
    for param in ["scale_a", "scale_b", "k_blocks", "n_blocks"] {
        assert!(
            text.contains(&format!(" {param},")) || text.contains(&format!(" {param}\n")),
            "{param}"
        );
    }
}

/// The 256-wide tile runs its two 128-column halves' wgmmas into one half-width partial (64
/// f32 per thread) and promotes each with its own scale of B: m64n128 wgmmas, 2 x 64 `fma`s,
/// and no register spills (128 + 64 f32 in 240 registers).
#[test]
fn wide_block_tile_promotes_its_halves() {
    let large = GemmConfig::fp8_block(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
    let wide = GemmConfig { bn: 256, ..large }.deepest();
    assert_eq!(
        wide.name(),
        "gemm_e4m3_bf16_128x256x128_s3_g16_tmastore_blk128"
    );
    let text = build(&wide).and_then(|m| m.to_ptx()).unwrap();
    assert!(text.contains("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "));
    assert!(!text.contains("m64n256k32"));
    assert_eq!(text.matches("fma.rn.f32").count(), 128, "one fma per value");
}

/// The pipelined promotion keeps the next k-tile's wgmmas in flight while it promotes
/// (`wgmma.wait_group 1`), with two partials: 128 promoting `fma`s in the unrolled pair.
#[test]
fn pipelined_promotion_overlaps_the_next_k_tile() {
    let large = GemmConfig::fp8_block(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
    let pp = GemmConfig {
        pipelined_promotion: true,
        ..large
    };
    assert_eq!(
        pp.name(),
        "gemm_e4m3_bf16_128x128x128_s6_g16_tmastore_blk128_pp"
    );
    let text = build(&pp).and_then(|m| m.to_ptx()).unwrap();
    assert!(text.contains("wgmma.wait_group.sync.aligned 1;"));
    assert_eq!(text.matches("fma.rn.f32").count(), 128);
    // Only block scales have partials to promote.
    let per_tensor = GemmConfig {
        pipelined_promotion: true,
        ..GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::Bf16)
    };
    assert_eq!(
        per_tensor.validate(),
        Err(GemmConfigError::PipelinedPromotion)
    );
}

#[test]
fn bad_block_configurations_are_refused() {
    use ScalarType::{Bf16, E4m3};
    let large = GemmConfig::fp8_block(8192, 8192, 132, E4m3, Bf16);
    // A 256-wide tile with two half-width partials (the pipelined promotion): 128 + 2 x 64 f32
    // per thread do not fit; a 192-wide one spans one and a half blocks of B's scales.
    let wide = GemmConfig {
        bn: 256,
        pipelined_promotion: true,
        ..large
    };
    assert_eq!(wide.validate(), Err(GemmConfigError::BlockTile(256)));
    assert!(build(&wide).is_err());
    let odd = GemmConfig { bn: 192, ..large };
    assert_eq!(odd.validate(), Err(GemmConfigError::BlockTile(192)));
    // 16-bit inputs take no block scales; nor alpha/beta.
    for bad in [
        GemmConfig {
            input: ScalarType::Bf16,
            ..large
        },
        GemmConfig {
            tma_store: false,
            alpha_beta: true,
            ..large
        },
    ] {
        assert!(
            matches!(bad.validate(), Err(GemmConfigError::Scaling { .. })),
            "{bad:?}"
        );
    }
}
