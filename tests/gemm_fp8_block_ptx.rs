//! The block-scaled FP8 GEMM ([`Scaling::Block`]) assembles with ptxas for sm_90a in every
//! variant the checks and benchmarks run (the CI has no GPU; this is its check): no register
//! spills (a consumer thread holds the partial and the promoted accumulator), no "wgmma
//! serialized" warning or info (C7515, C7514, C7517) and no ignored `setmaxnreg` (C7508); its configurations are
//! the ones documented, and the ones it cannot run are refused.

mod support;

use ptxkit::isa::ScalarType;
use ptxkit::library::gemm::{GemmConfig, GemmConfigError, OutScale, Scaling, build};

/// [`GemmConfig::fp8_block_pipelined`]'s configuration with the plain promotion
/// ([`GemmConfig::fp8_block_plain`]): the base the variants below are built from.
fn plain(m: usize, n: usize, sms: u32, input: ScalarType, output: ScalarType) -> GemmConfig {
    GemmConfig::fp8_block_pipelined(m, n, sms, input, output).fp8_block_plain()
}

/// The configurations the self-test and `benches/gemm_fp8_block.rs` build: the one each
/// benchmark shape gets on a 132-SM H100 (128 or 64 wide), the bench's stage and group
/// variants, e5m2 and mixed inputs, f32 and f16 C, an odd N (the register epilogue with single
/// stores), the register epilogue for a 16-bit C, a CTA pair, and the pipelined promotion
/// with each of those it is checked with.
fn block_configs() -> Vec<GemmConfig> {
    use ScalarType::{Bf16, E4m3, E5m2, F16, F32};
    // The benchmark's shapes' (M, N) and edges.
    let shapes = [
        (8192, 8192),
        (64, 2112),
        (128, 7168),
        (4096, 7168),
        (300, 520),
        (333, 501),
    ];
    let mut configs = support::fp8_family(
        plain,
        &shapes,
        &[(E5m2, Bf16), (E4m3, F32), (E4m3, F16)],
        &[(2048, 2048, E5m2, E4m3, Bf16), (260, 384, E4m3, E5m2, F32)],
    );
    let large = configs[0];
    // The defaults (pipelined promotion, scales in the stages where M % 4 == 0), the sweep
    // around the large one, the quick configurations of the DeepSeek-V3 rows.
    let default = GemmConfig::fp8_block(8192, 8192, 132, E4m3, Bf16);
    // The defaults of the DeepSeek-V3 rows with a 192-wide tile.
    for (m, n) in shapes.into_iter().chain([(4096, 2112), (128, 24576)]) {
        configs.push(GemmConfig::fp8_block(m, n, 132, E4m3, Bf16));
    }
    configs.extend(default.fp8_block_sweep());
    configs.extend(default.fp8_block_quick());
    configs.extend(GemmConfig::fp8_block(64, 2112, 132, E4m3, Bf16).fp8_block_quick());
    configs.push(
        GemmConfig {
            bn: 256,
            ..plain(8192, 8192, 132, E4m3, F32)
        }
        .deepest(),
    );
    let pipelined: Vec<GemmConfig> = configs
        .iter()
        .filter(|c| c.bn <= 128)
        .map(|c| GemmConfig {
            pipelined_promotion: true,
            ..*c
        })
        .collect();
    configs.extend(pipelined);
    // The scales in the stages, with each tile width, the pipelined promotion, a CTA pair, the
    // register epilogue and an f32 C.
    let staged: Vec<GemmConfig> = configs
        .iter()
        .map(|c| {
            GemmConfig {
                smem_scales: true,
                ..*c
            }
            .deepest()
        })
        .collect();
    configs.extend(staged);
    // The epilogue's bias and output scale: each tile width, both epilogues.
    configs.extend([
        GemmConfig {
            bias: Some(F32),
            out_scale: OutScale::Value,
            smem_scales: true,
            ..large
        }
        .deepest(),
        GemmConfig {
            bias: Some(Bf16),
            out_scale: OutScale::Pointer,
            smem_scales: true,
            bn: 256,
            ..large
        }
        .deepest(),
        GemmConfig {
            bias: Some(Bf16),
            pipelined_promotion: true,
            ..plain(8192, 8192, 132, E4m3, F32)
        },
        GemmConfig {
            bias: Some(F32),
            bn: 256,
            ..plain(8192, 8192, 132, E4m3, F32)
        }
        .deepest(),
    ]);
    support::unique(configs)
}

#[test]
fn block_configurations_are_as_documented() {
    use ScalarType::{Bf16, E4m3};
    let large = plain(8192, 8192, 132, E4m3, Bf16);
    // 128 x 128 tiles, BK = 128 e4m3 (one scale block), 32 KB stages: 6 beside 32 KB of C
    // staging.
    assert_eq!((large.bn, large.bk(), large.stages), (128, 128, 6));
    assert_eq!(large.scaling, Scaling::Block);
    assert_eq!(
        large.name(),
        "gemm_e4m3_bf16_128x128x128_s6_g16_tmastore_blk128"
    );
    // The default (notes/session5-call3-h200.log): the 128 x 256 tile with the scales in the
    // stages (3 stages beside the C staging) for large M and N, 192 wide where 256 does not
    // divide N; the pipelined promotion with the scales in the stages (5 stages beside their
    // slots) where neither fits, without them where M is not a multiple of 4 (A's scale
    // map's row pitch).
    let name = |m, n| GemmConfig::fp8_block(m, n, 132, E4m3, Bf16).name();
    let wide = "gemm_e4m3_bf16_128x256x128_s3_g16_tmastore_blk128_ss";
    assert_eq!(name(8192, 8192), wide);
    assert_eq!(name(4096, 4096), wide);
    assert_eq!(name(4096, 24576), wide);
    assert_eq!(
        name(4096, 2112),
        "gemm_e4m3_bf16_128x192x128_s4_g16_tmastore_blk128_ss"
    );
    assert_eq!(
        name(128, 24576),
        "gemm_e4m3_bf16_128x192x128_s4_g16_tmastore_blk128_ss"
    );
    assert_eq!(
        GemmConfig::fp8_block_pipelined(8192, 8192, 132, E4m3, Bf16).name(),
        "gemm_e4m3_bf16_128x128x128_s5_g16_tmastore_blk128_pp_ss"
    );
    let odd_m = GemmConfig::fp8_block(8191, 8192, 132, E4m3, Bf16);
    assert_eq!(
        (odd_m.bn, odd_m.pipelined_promotion, odd_m.smem_scales),
        (128, true, false)
    );
    let odd_m = GemmConfig::fp8_block(333, 501, 132, E4m3, Bf16);
    assert!(odd_m.pipelined_promotion && !odd_m.smem_scales);
    // A skinny M leaves SMs idle with 128-wide tiles: 64 wide, pipelined, scales staged.
    let skinny = GemmConfig::fp8_block(64, 2112, 132, E4m3, Bf16);
    assert_eq!(
        (skinny.bn, skinny.pipelined_promotion, skinny.smem_scales),
        (64, true, true)
    );
    assert_eq!(GemmConfig::fp8_block(128, 7168, 132, E4m3, Bf16).bn, 64);
    for cfg in block_configs() {
        cfg.validate().unwrap();
        assert!(cfg.smem_bytes().unwrap() <= smem::max_smem_optin(GemmConfig::TARGET));
    }
}

#[test]
fn block_kernels_assemble_without_spills_or_serialisation() {
    // Not serialised: the pipelined promotion's waits are unconditional on every path.
    support::gemm_configs_assemble_clean_without(block_configs(), &["C7514", "C7517"]);
}

/// The promotion is in the PTX: the k-tile's wgmmas start from scale-d = 0 (the partial), and
/// one `fma` per accumulator value (64 for the 128-wide tile) adds it into the f32 accumulator.
#[test]
fn block_kernels_promote_each_k_tile() {
    let large = plain(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
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
    let large = plain(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
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

/// The 192-wide tile (scales in the stages) runs one m64n192 partial (96 f32 per thread) and
/// promotes each 64-column chunk with its block's scale of B: the middle chunk's picked per
/// tile by `selp` (the tile's first column in a block's first or second half), 96 `fma`s, no
/// spills (96 + 96 f32 in 240 registers: the assembly test), 4 stages beside the C staging.
#[test]
fn straddling_block_tile_picks_each_chunks_scale() {
    let default = GemmConfig::fp8_block(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
    let tile = GemmConfig {
        bn: 192,
        pipelined_promotion: false,
        ..default
    }
    .deepest();
    assert_eq!(
        tile.name(),
        "gemm_e4m3_bf16_128x192x128_s4_g16_tmastore_blk128_ss"
    );
    let text = build(&tile).and_then(|m| m.to_ptx()).unwrap();
    assert!(text.contains("wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 "));
    assert_eq!(text.matches("fma.rn.f32").count(), 96, "one fma per value");
    assert_eq!(
        text.matches("selp.f32").count(),
        1,
        "the middle chunk's scale of B"
    );
    // Two pipelined partials of 96 and the accumulator do not fit.
    let pp = GemmConfig {
        pipelined_promotion: true,
        ..tile
    };
    assert_eq!(pp.validate(), Err(GemmConfigError::BlockTile(192)));
}

/// The pipelined promotion keeps the next k-tile's wgmmas in flight while it promotes
/// (`wgmma.wait_group 1`), with two partials: 64 promoting `fma`s at each of its five
/// promotion sites (the loop's pair, the two-k-tile tail's pair, the one-k-tile tail), every
/// wait unconditional on its path (no wait under a branch: ptxas would serialise).
#[test]
fn pipelined_promotion_overlaps_the_next_k_tile() {
    let large = plain(8192, 8192, 132, ScalarType::E4m3, ScalarType::Bf16);
    let pp = GemmConfig {
        pipelined_promotion: true,
        ..large
    };
    assert_eq!(
        pp.name(),
        "gemm_e4m3_bf16_128x128x128_s6_g16_tmastore_blk128_pp"
    );
    pipelined_ptx(&pp, 64);
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
    let large = plain(8192, 8192, 132, E4m3, Bf16);
    // A 256-wide tile with two half-width partials (the pipelined promotion): 128 + 2 x 64 f32
    // per thread do not fit; nor 96 + 2 x 96 of a 192-wide one.
    let wide = GemmConfig {
        bn: 256,
        pipelined_promotion: true,
        ..large
    };
    assert_eq!(wide.validate(), Err(GemmConfigError::BlockTile(256)));
    assert!(build(&wide).is_err());
    let odd = GemmConfig {
        bn: 192,
        pipelined_promotion: true,
        ..large
    };
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

/// With the scales in the stages the producer brings them: a third TMA load per k-tile (A's
/// 128 row scales, a 1 x 128 box) counted by the stage's full barrier, B's scale stored with
/// `st.shared`; the consumers read them with `ld.shared` after the full wait and load no
/// scale from global memory.
#[test]
fn stage_scales_come_with_the_stage() {
    use ScalarType::{Bf16, E4m3};
    let large = plain(8192, 8192, 132, E4m3, Bf16);
    for (cfg, blocks) in [
        (
            GemmConfig {
                smem_scales: true,
                ..large
            }
            .deepest(),
            1,
        ),
        (
            GemmConfig {
                smem_scales: true,
                pipelined_promotion: true,
                ..large
            }
            .deepest(),
            1,
        ),
        (
            GemmConfig {
                smem_scales: true,
                bn: 256,
                ..large
            }
            .deepest(),
            2,
        ),
    ] {
        assert!(cfg.name().ends_with("_ss"), "{}", cfg.name());
        let text = build(&cfg).and_then(|m| m.to_ptx()).unwrap();
        // A, B and A's scales: three tensor loads per k-tile.
        assert_eq!(
            text.matches("cp.async.bulk.tensor.2d.shared::cluster.global")
                .count(),
            3,
            "{}",
            cfg.name()
        );
        // 128 x 128 bytes of A, bn x 128 of B, 512 of scales.
        let tx = 128 * 128 + cfg.bn * 128 + 512;
        assert!(
            text.contains(&format!(", {tx};")),
            "{}: expect_tx {tx}",
            cfg.name()
        );
        assert_eq!(
            text.matches("st.shared.f32").count(),
            blocks,
            "{}",
            cfg.name()
        );
        // The consumers' scale loads: each partial's rows (2) and blocks of B from the slot.
        assert!(text.matches("ld.shared.f32").count() >= 2 + blocks);
        // The only global scale loads are the producer's of B.
        assert_eq!(
            text.matches("ld.global.f32").count(),
            blocks,
            "{}",
            cfg.name()
        );
    }
    // Only a dense block-scaled GEMM takes its scales in the stages.
    let per_tensor = GemmConfig {
        smem_scales: true,
        ..GemmConfig::fp8(4096, 4096, 132, E4m3, Bf16)
    };
    assert_eq!(per_tensor.validate(), Err(GemmConfigError::SmemScales));
}

/// The epilogue's bias and output scale: `bias` `[n]` and `out_scale` are parameters after the
/// scales (a value, or a tensor read once per thread), the bias is added by one `fma` per
/// accumulator value with the output scale as the factor (after the promotion, in f32, before
/// the cast), a bf16 bias converted once per distinct column (in each of two branches: where
/// the thread's columns all lie inside, loads at constant offsets from one address; at the edge,
/// clamped indices); only FP8 GEMMs take them.
#[test]
fn epilogue_takes_a_bias_and_an_output_scale() {
    use ScalarType::{Bf16, E4m3, F32};
    let large = plain(8192, 8192, 132, E4m3, Bf16);
    let plain = build(&large).and_then(|m| m.to_ptx()).unwrap();
    let cfg = GemmConfig {
        bias: Some(Bf16),
        out_scale: OutScale::Value,
        ..large
    };
    assert_eq!(
        cfg.name(),
        "gemm_e4m3_bf16_128x128x128_s6_g16_tmastore_blk128_biasbf16_osv"
    );
    let text = build(&cfg).and_then(|m| m.to_ptx()).unwrap();
    for param in ["bias", "out_scale"] {
        assert!(text.contains(&format!(" {param},")) || text.contains(&format!(" {param}\n")));
    }
    // 64 more fmas (one per value of the 128-wide fragment) and 32 columns' bf16 converted,
    // in either branch; the inside branch's 31 loads after its first at constant offsets.
    let fmas = |t: &str| t.matches("fma.rn.f32").count();
    assert_eq!(fmas(&text), fmas(&plain) + 64);
    assert_eq!(text.matches("cvt.f32.bf16").count(), 2 * 32);
    let offset_loads = text
        .lines()
        .filter(|l| l.contains("ld.global.b16") && l.contains("+"))
        .count();
    assert_eq!(offset_loads, 31);
    // By pointer: the scale is loaded (once per consumer thread) from a tensor.
    let pointer = GemmConfig {
        out_scale: OutScale::Pointer,
        bias: None,
        ..large
    };
    assert!(pointer.name().ends_with("_osp"));
    build(&pointer).unwrap();
    for bad in [
        GemmConfig {
            bias: Some(F32),
            ..GemmConfig::for_problem(4096, 4096, 132)
        },
        GemmConfig {
            bias: Some(ScalarType::F16),
            ..large
        },
    ] {
        assert_eq!(bad.validate(), Err(GemmConfigError::Epilogue), "{bad:?}");
    }
}

/// The split block-scaled kernels the decode checks and `FP8_BLOCK_SPLIT` run
/// ([`GemmConfig::fp8_block_split`]): the rule's at DeepSeek-V3's N = 2112 and 4096 for each
/// decode M (the scales from global memory at M = 1, in the stages at 16 to 128), at odd
/// M, N and K, in 16 parts, in 8 parts of 25 k-tiles (a part of one), 128 wide, and summed by
/// the second launch; each with the other
/// promotion ([`GemmConfig::pipelined_promotion`] on or off).
fn split_configs() -> Vec<GemmConfig> {
    let configs = rule_split_configs();
    let other = configs.iter().map(|c| GemmConfig {
        pipelined_promotion: !c.pipelined_promotion,
        ..*c
    });
    let both = configs.clone().into_iter().chain(other);
    support::unique(both.filter(|c| c.validate().is_ok()))
}

/// [`split_configs`] with the rule's promotion.
fn rule_split_configs() -> Vec<GemmConfig> {
    use ScalarType::{Bf16, E4m3};
    let split = |m, n, k| GemmConfig::fp8_block_split(m, n, k, 132, E4m3, Bf16);
    let mut configs = Vec::new();
    for m in [1, 16, 64, 128] {
        configs.push(split(m, 2112, 7168));
        configs.push(split(m, 4096, 7168));
    }
    let odd = split(37, 999, 2960);
    configs.extend([odd, split(1, 1000, 4112)]);
    configs.push(GemmConfig { split_k: 16, ..odd });
    // 25 k-tiles in 8 parts of 4: a part of one k-tile and one past the last.
    configs.push(GemmConfig {
        split_k: 8,
        ..split(37, 999, 3088)
    });
    configs.push(GemmConfig {
        split_fixup: false,
        ..odd
    });
    // 128 wide with the fixup: the plain promotion (the pipelined one spills there).
    configs.push(
        GemmConfig {
            bn: 128,
            split_k: 7,
            pipelined_promotion: false,
            ..split(64, 2112, 7168)
        }
        .deepest(),
    );
    support::unique(configs)
}

/// The split rule: at a decode M whose 64-wide tiles leave SMs idle, as many parts as fill
/// the 132 SMs once (N = 2112: 33 tiles, 4 parts; N = 4096: 64 tiles, 2), summed in the
/// kernel, the pipelined promotion, the register epilogue, 8 stages; unsplit where the tiles
/// fill the SMs (N = 7168 and 24576) and where the parts would be shorter than
/// [`GemmConfig::MIN_PART_KTILES`] k-tiles, there with the plain promotion (the tile of
/// [`GemmConfig::fp8_block`]); past a decode M, [`GemmConfig::fp8_block`].
#[test]
fn block_split_k_rule_at_decode_shapes() {
    use ScalarType::{Bf16, E4m3};
    let split = |m, n, k| GemmConfig::fp8_block_split(m, n, k, 132, E4m3, Bf16);
    assert_eq!(
        split(1, 2112, 7168).name(),
        "gemm_e4m3_bf16_128x64x128_s8_g16_blk128_pp_splitk4_fixup"
    );
    assert_eq!(
        split(64, 2112, 7168).name(),
        "gemm_e4m3_bf16_128x64x128_s8_g16_blk128_pp_ss_splitk4_fixup"
    );
    assert_eq!(split(128, 4096, 7168).split_k, 2);
    let plain = |c: GemmConfig| GemmConfig {
        pipelined_promotion: false,
        ..c
    };
    for (m, n, k) in [(128, 7168, 16384), (64, 24576, 1536), (16, 2112, 512)] {
        let whole = GemmConfig::fp8_block(m, n, 132, E4m3, Bf16);
        assert_eq!(split(m, n, k), plain(whole), "{m}x{n}x{k}");
    }
    assert_eq!(
        split(1, 7168, 16384).name(),
        "gemm_e4m3_bf16_128x64x128_s6_g16_tmastore_blk128"
    );
    for (m, n, k) in [(256, 2112, 7168), (4096, 4096, 7168)] {
        let whole = GemmConfig::fp8_block(m, n, 132, E4m3, Bf16);
        assert_eq!(split(m, n, k), whole, "{m}x{n}x{k}");
    }
    for cfg in split_configs() {
        cfg.validate().unwrap();
        assert!(cfg.split_k > 1, "{}", cfg.name());
    }
}

/// The split kernels assemble clean (no spills: the fixup's loaded parts sit beside the
/// promoted accumulator; no serialised wgmmas), and with the plain promotion each part
/// promotes its own k-tiles: one `fma` per value of the 64-wide partial, no pipelined wait,
/// the fixup's ticket.
#[test]
fn block_split_k_kernels_assemble_and_promote_their_parts() {
    support::gemm_configs_assemble_clean_without(split_configs(), &["C7514", "C7517"]);
    let cfg = GemmConfig {
        pipelined_promotion: false,
        ..GemmConfig::fp8_block_split(64, 2112, 7168, 132, ScalarType::E4m3, ScalarType::Bf16)
    };
    let text = build(&cfg).and_then(|m| m.to_ptx()).unwrap();
    assert!(text.contains("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "));
    assert!(!text.contains("wgmma.wait_group.sync.aligned 1;"));
    assert_eq!(text.matches("fma.rn.f32").count(), 32, "one fma per value");
    assert!(
        text.contains("atom.acq_rel.gpu.global.add.u32"),
        "the fixup's ticket"
    );
}

/// The pipelined promotion in a split part (the rule's, [`GemmConfig::fp8_block_split`]): the next k-tile's wgmmas in flight while a
/// partial is promoted (`wgmma.wait_group 1` at the loop's pair and the two-k-tile tail, every
/// wait unconditional on its path inside the branch a part with k-tiles takes), 5 promotion
/// sites of one `fma` per value of the 64-wide partial, the fixup's ticket outside the branch
/// (a part past the last k-tile still takes it, its partial 0).
#[test]
fn block_split_k_takes_the_pipelined_promotion() {
    use ScalarType::{Bf16, E4m3};
    let cfg = GemmConfig::fp8_block_split(64, 2112, 7168, 132, E4m3, Bf16);
    cfg.validate().unwrap();
    assert_eq!(
        cfg.name(),
        "gemm_e4m3_bf16_128x64x128_s8_g16_blk128_pp_ss_splitk4_fixup"
    );
    let text = pipelined_ptx(&cfg, 32);
    assert_eq!(text.matches("atom.acq_rel.gpu.global.add.u32").count(), 1);
    // 128 wide the two partials, the accumulator and the fixup's loaded parts spill; summed by
    // the second launch they fit.
    let wide = GemmConfig { bn: 128, ..cfg }.deepest();
    assert_eq!(wide.validate(), Err(GemmConfigError::SplitK(cfg.split_k)));
    let two_launch = GemmConfig {
        split_fixup: false,
        ..wide
    };
    two_launch.validate().unwrap();
    support::gemm_configs_assemble_clean_without([two_launch], &["C7514", "C7517"]);
}

/// What a split block-scaled GEMM does not take, refused with its typed error: swap-AB (the
/// scales' roles would swap), the TMA-store epilogue, a grouped problem.
#[test]
fn block_split_k_refusals_are_typed() {
    use ScalarType::{Bf16, E4m3};
    let cfg = GemmConfig::fp8_block_split(16, 2112, 7168, 132, E4m3, Bf16);
    let swapped = GemmConfig {
        swap_ab: true,
        ..cfg
    };
    assert_eq!(swapped.validate(), Err(GemmConfigError::SwapAb));
    let staged = GemmConfig {
        tma_store: true,
        ..cfg
    };
    assert_eq!(staged.validate(), Err(GemmConfigError::SplitK(cfg.split_k)));
    let grouped = GemmConfig {
        grouping: ptxkit::library::gemm::grouped::Grouping::Contiguous,
        smem_scales: false,
        split_fixup: false,
        ..cfg
    };
    assert_eq!(
        grouped.validate(),
        Err(GemmConfigError::SplitK(cfg.split_k))
    );
}

/// `cfg`'s PTX, checked for the pipelined promotion's shape: three `wgmma.wait_group 1` (the
/// loop's pair and the two-k-tile tail's), two `wait_group 0`, and 5 promotion sites of one
/// `fma` per value of a `width`-wide partial.
fn pipelined_ptx(cfg: &GemmConfig, width: usize) -> String {
    let text = build(cfg).and_then(|m| m.to_ptx()).unwrap();
    assert_eq!(text.matches("wgmma.wait_group.sync.aligned 1;").count(), 3);
    assert_eq!(text.matches("wgmma.wait_group.sync.aligned 0;").count(), 2);
    assert_eq!(text.matches("fma.rn.f32").count(), 5 * width);
    text
}
