//! The GEMM kernels assemble with ptxas for sm_90a (the CI has no GPU; this is its check), with no
//! register spills, no "wgmma serialized" warning (C7515) and no ignored `setmaxnreg` (C7508).

mod support;

use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::gemm::{
    BENCH_SHAPES, GemmConfig, OutScale, Scaling, build, build_with, check,
};
use ptxkit::smem::pipeline::sync::WaitMode;

/// The configuration each benchmark shape gets on a 132-SM H100, then the other variants (those
/// the GPU check runs, [`check::variants`], among them); each configuration once.
fn configs() -> Vec<GemmConfig> {
    let large = GemmConfig::large();
    let for_shapes = BENCH_SHAPES
        .iter()
        .map(|&(m, n, _)| GemmConfig::for_problem(m, n, 132));
    let variants = [
        large,
        GemmConfig::for_problem(1024, 1024, 132),
        GemmConfig { bn: 192, ..large },
        GemmConfig {
            tma_store: false,
            n_even: false,
            ..large
        },
        GemmConfig {
            cluster_m: 2,
            tma_store: false,
            ..GemmConfig::for_problem(128, 8192, 132)
        },
    ];
    support::unique(
        for_shapes
            .chain(variants)
            .chain(support::epilogue_and_pair(large))
            .chain(check::variants()),
    )
}

/// The per-tensor-scaled FP8 configurations: the one each FP8 benchmark shape gets on a 132-SM
/// H100 (e4m3 -> bf16, the TMA-store epilogue; the first has a golden file), e5m2, an f32 C
/// (the register epilogue, 4 stages), a 16-bit C from registers, an odd N, a CTA pair, and
/// mixed e5m2 x e4m3 and e4m3 x e5m2.
fn fp8_configs() -> Vec<GemmConfig> {
    use ScalarType::{Bf16, E4m3, E5m2, F16, F32};
    let mut configs = support::fp8_family(
        GemmConfig::fp8,
        &[
            (4096, 4096),
            (8192, 8192),
            (64, 2112),
            (128, 7168),
            (300, 520),
            (4096, 4095),
        ],
        &[(E5m2, Bf16), (E4m3, F32), (E5m2, F16)],
        &[
            (4096, 4096, E5m2, E4m3, Bf16),
            (4096, 4096, E4m3, E5m2, F32),
        ],
    );
    let large = configs[0];
    // The epilogue's bias and output scale, with each epilogue.
    configs.extend([
        GemmConfig {
            bias: Some(F32),
            out_scale: OutScale::Value,
            ..large
        },
        GemmConfig {
            bias: Some(Bf16),
            out_scale: OutScale::Pointer,
            ..GemmConfig::fp8(4096, 4096, 132, E4m3, F32)
        },
        GemmConfig {
            bias: Some(Bf16),
            ..GemmConfig::fp8(4096, 4095, 132, E4m3, Bf16)
        },
    ]);
    support::unique(configs)
}

#[test]
fn fp8_configurations_fit_their_tiles() {
    let large = GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::Bf16);
    // 128 x 256 tiles, BK = 128 e4m3 (128 bytes), 3 stages of 48 KB beside 64 KB of C staging.
    assert_eq!((large.bn, large.bk(), large.stages), (256, 128, 3));
    assert!(large.tma_store);
    assert_eq!(large.name(), "gemm_e4m3_bf16_128x256x128_s3_g16_tmastore");
    // An f32 C has no staging: 4 stages.
    let f32c = GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::F32);
    assert_eq!((f32c.stages, f32c.tma_store), (4, false));
    for cfg in fp8_configs() {
        cfg.validate().unwrap();
        assert!(cfg.smem_bytes().unwrap() <= smem::max_smem_optin(GemmConfig::TARGET));
    }
    // Mixed inputs: wgmma's .atype is A's, .btype B's (PTX ISA 9.7.15.5.2).
    let mixed = GemmConfig {
        input_b: Some(ScalarType::E4m3),
        ..GemmConfig::fp8(4096, 4096, 132, ScalarType::E5m2, ScalarType::Bf16)
    };
    assert_eq!(
        mixed.name(),
        "gemm_e5m2xe4m3_bf16_128x256x128_s3_g16_tmastore"
    );
    let text = build(&mixed).and_then(|m| m.to_ptx()).unwrap();
    assert!(text.contains("wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e4m3 "));
}

#[test]
fn gemm_kernels_assemble_without_spills_or_serialisation() {
    let (spill, clean): (Vec<GemmConfig>, Vec<GemmConfig>) = configs()
        .into_iter()
        .chain(fp8_configs())
        .partition(|cfg| KNOWN_SPILLS.contains(&cfg.name().as_str()));
    support::gemm_configs_assemble_clean(clean);
    // The known spills still assemble; when one stops spilling, move it back.
    assert_eq!(spill.len(), KNOWN_SPILLS.len());
    for cfg in spill {
        support::assemble(
            &build(&cfg).and_then(|m| m.to_ptx()).unwrap(),
            Target::Sm90a,
        );
    }
}

/// The configurations ptxas 13.0 assembles with register spills: the register epilogue of
/// alpha/beta into an f32 C with an odd N (428 bytes; only the GPU check runs it, for
/// correctness, and nothing times it).
const KNOWN_SPILLS: &[&str] = &["gemm_bf16_f32_128x256x64_s3_g16_nodd_ab"];

/// The exact PTX of every configuration above and of the debug build (bounded waits) of the large
/// one, against `tests/golden/gemm/<name>.ptx`: a change to how the GEMM is written that is meant
/// to keep its kernel shows here as no difference. `BLESS=1` rewrites the files.
#[test]
fn gemm_ptx_matches_the_golden_files() {
    let mut builds: Vec<(String, String)> = configs()
        .into_iter()
        .chain(fp8_configs().into_iter().take(1))
        .map(|cfg| {
            let text = build(&cfg).and_then(|m| m.to_ptx());
            (
                cfg.name(),
                text.unwrap_or_else(|e| panic!("{}: {e}", cfg.name())),
            )
        })
        .collect();
    let large = GemmConfig::large();
    let debug = build_with(&large, WaitMode::Bounded).and_then(|g| g.module().to_ptx());
    builds.push((
        format!("{}.debug", large.name()),
        debug.unwrap_or_else(|e| panic!("debug build: {e}")),
    ));
    let differ: Vec<String> = builds
        .iter()
        .filter_map(|(name, text)| support::golden(&format!("gemm/{name}.ptx"), text).err())
        .collect();
    assert!(
        differ.is_empty(),
        "GEMM PTX differs from tests/golden/gemm (BLESS=1 re-blesses): {differ:?}"
    );
}

#[test]
fn bad_configurations_are_refused() {
    let large = GemmConfig::large();
    let fp8 = GemmConfig::fp8(4096, 4096, 132, ScalarType::E4m3, ScalarType::Bf16);
    for bad in [
        GemmConfig { bn: 96, ..large },
        // A decode width (no multiple of 64) must be a multiple of 8 from 16 up.
        GemmConfig {
            bn: 100,
            tma_store: false,
            ..large
        },
        GemmConfig {
            bn: 8,
            tma_store: false,
            ..large
        },
        GemmConfig { stages: 1, ..large },
        GemmConfig { stages: 6, ..large },
        GemmConfig {
            output: ScalarType::F32,
            ..large
        },
        GemmConfig {
            group_m: 0,
            ..large
        },
        GemmConfig {
            cluster_m: 4,
            ..large
        },
        // 16-bit inputs with FP8 scales, FP8 inputs without, FP8 with alpha/beta.
        GemmConfig {
            scaling: Scaling::PerTensor,
            ..large
        },
        GemmConfig {
            scaling: Scaling::None,
            ..fp8
        },
        GemmConfig {
            tma_store: false,
            alpha_beta: true,
            ..fp8
        },
        // 128 x 256 FP8 tiles with C staging: 4 stages exceed the 227 KB.
        GemmConfig { stages: 4, ..fp8 },
        // Mixed inputs are 8-bit pairs only.
        GemmConfig {
            input_b: Some(ScalarType::F16),
            ..large
        },
        GemmConfig {
            input_b: Some(ScalarType::Bf16),
            ..fp8
        },
        // Split-K: 1 to 16 parts, its partials from registers, no ping-pong, no alpha/beta.
        GemmConfig {
            split_k: 0,
            tma_store: false,
            ..large
        },
        GemmConfig {
            split_k: 17,
            tma_store: false,
            ..large
        },
        GemmConfig {
            split_k: 4,
            ..large
        },
        GemmConfig {
            split_k: 4,
            tma_store: false,
            alpha_beta: true,
            ..large
        },
        GemmConfig {
            split_k: 4,
            ..large.with_pingpong()
        },
        // Swap-AB and the 16- and 32-wide tiles: the register epilogue of a dense problem only.
        GemmConfig {
            swap_ab: true,
            ..large
        },
        GemmConfig {
            cluster_m: 2,
            ..large.swapped(64, 1)
        },
        GemmConfig {
            alpha_beta: true,
            ..large.swapped(64, 1)
        },
        GemmConfig { bn: 16, ..large },
        GemmConfig {
            pingpong: true,
            ..large.swapped(32, 1)
        },
        GemmConfig {
            input_b: Some(ScalarType::E5m2),
            ..fp8.swapped(32, 1)
        },
        // The in-kernel fixup: only with split-K, tiles up to 128 wide.
        GemmConfig {
            split_fixup: true,
            ..large.swapped(64, 1)
        },
        GemmConfig {
            split_fixup: true,
            split_k: 4,
            tma_store: false,
            ..large
        },
        // A cluster along N: 1, 2 or 4 CTAs sharing the 128-row A tile, alone (no pair along
        // M), unsplit, unswapped, no ping-pong.
        GemmConfig {
            cluster_n: 3,
            ..large
        },
        GemmConfig {
            cluster_n: 8,
            ..large
        },
        GemmConfig {
            cluster_n: 2,
            cluster_m: 2,
            ..large
        },
        GemmConfig {
            cluster_n: 2,
            ..large.with_pingpong()
        },
        GemmConfig {
            cluster_n: 2,
            split_k: 2,
            ..large.decode_tile(32, 1, false)
        },
        GemmConfig {
            cluster_n: 2,
            ..large.swapped(32, 1)
        },
        GemmConfig {
            cluster_n: 2,
            ..large.with_epilogue_warps()
        },
    ] {
        assert!(build(&bad).is_err(), "{bad:?} should be refused");
    }
}

/// Clusters along N sharing A's tile ([`GemmConfig::cluster_n`], the decode kernels of
/// [`GemmConfig::decode_cluster`]): each CTA loads its `128 / cluster_n` rows of A and multicasts
/// them to every CTA of the cluster (ctaMask 3 or 15), and releases each stage in every CTA
/// (`cluster_n - 1` remote arrivals through `mapa`, none releasing at cluster scope); the
/// cluster's shape is in the kernel; bf16 and FP8 assemble without spills; the tuner offers
/// pairs along N at the fill width at M = 65 to 128 (and only there), not clusters of 4.
#[test]
fn clusters_along_n_share_a_and_assemble() {
    use ScalarType::{Bf16, E4m3};
    use ptxkit::library::gemm::tune::{TuneProblem, candidates};
    let bf = GemmConfig::large();
    let fp8 = GemmConfig::fp8(128, 2112, 132, E4m3, Bf16);
    let configs = vec![
        bf.decode_cluster(16, 4),
        bf.decode_cluster(24, 2),
        fp8.decode_cluster(16, 4),
        fp8.decode_cluster(56, 4),
        GemmConfig {
            n_even: false,
            ..bf
        }
        .decode_cluster(24, 4),
        GemmConfig { cluster_n: 2, ..bf },
    ];
    // 18 KB stages of a 128 x 16 bf16 tile: 12 of them.
    assert_eq!(configs[0].stages, 12);
    for cfg in &configs {
        cfg.validate().unwrap();
        let ctas = cfg.cluster_n;
        assert!(cfg.name().contains(&format!("_n{ctas}")), "{}", cfg.name());
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        assert!(
            ptx.contains(&format!(".reqnctapercluster {ctas}, 1, 1")),
            "{}: the cluster's shape",
            cfg.name()
        );
        let mask = (1u32 << ctas) - 1;
        assert_eq!(
            ptx.matches(".multicast::cluster").count(),
            1,
            "{}: one multicast load (A's part)",
            cfg.name()
        );
        assert!(
            ptx.contains(&format!(", {mask};")),
            "{}: ctaMask {mask}",
            cfg.name()
        );
        // Each release site: one local arrival and one remote per peer.
        let remote = ptx.matches("mbarrier.arrive.shared::cluster.b64").count();
        assert!(
            remote > 0 && remote % (ctas as usize - 1) == 0,
            "{}: {remote} remote arrivals",
            cfg.name()
        );
        assert!(
            !ptx.contains("mbarrier.arrive.release.cluster"),
            "{}",
            cfg.name()
        );
    }
    support::gemm_configs_assemble_clean(configs);
    let along_n = |m, dtype| {
        candidates(&TuneProblem::new(m, 2112, 7168, dtype, Bf16), 132)
            .into_iter()
            .filter(|c| c.cluster_n > 1)
            .map(|c| (c.bn, c.cluster_n))
            .collect::<Vec<_>>()
    };
    assert_eq!(along_n(128, Bf16), [(16, 2)]);
    assert_eq!(along_n(100, E4m3), [(16, 2)]);
    assert!(along_n(64, Bf16).is_empty());
}

/// Split-K's sum ([`ptxkit::library::gemm::split`]) assembles for every output type and
/// part count; a thread issues every part's load before its first add, and the sum waits for
/// the GEMM it depends on (`griddepcontrol.wait`); the GEMM's parts run the k-tiles
/// `[s·k_part, min((s + 1)·k_part, ktiles))`, store f32 partials and let the sum start after
/// their last loads (`griddepcontrol.launch_dependents`; not with the in-kernel fixup, which
/// has no second launch); the parts of an FP8 problem too.
#[test]
fn split_k_kernels_assemble() {
    use ptxkit::library::gemm::split::reduce_kernel;
    for out in [ScalarType::Bf16, ScalarType::F16, ScalarType::F32] {
        for parts in [2, 4, 16] {
            let k = reduce_kernel(out, parts, Target::Sm90a).unwrap();
            let ptx = k.ptx();
            assert_eq!(
                ptx.matches("ld.global.f32").count(),
                parts as usize,
                "{ptx}"
            );
            let (last_load, first_add) = (
                ptx.rfind("ld.global.f32").unwrap(),
                ptx.find("add.f32").unwrap(),
            );
            assert!(last_load < first_add, "the loads before the adds: {ptx}");
            assert!(ptx.contains("griddepcontrol.wait;"), "{ptx}");
            support::assemble(ptx, Target::Sm90a);
        }
    }
    assert!(reduce_kernel(ScalarType::E4m3, 4, Target::Sm90a).is_err());
    for parts in [0, 1, 17] {
        assert!(reduce_kernel(ScalarType::Bf16, parts, Target::Sm90a).is_err());
    }
    let fp8 = GemmConfig {
        split_k: 8,
        tma_store: false,
        ..GemmConfig::fp8(64, 7168, 132, ScalarType::E4m3, ScalarType::Bf16)
    }
    .deepest();
    let ptx = build(&fp8).and_then(|m| m.to_ptx()).unwrap();
    assert!(ptx.contains(".param .u64 .ptr .global .align 8 gemm") || ptx.contains("partials"));
    assert!(
        ptx.contains("st.global.v2.f32"),
        "the partials are stored as f32 pairs"
    );
    assert_eq!(ptx.matches("griddepcontrol.launch_dependents;").count(), 1);
    support::assemble(&ptx, Target::Sm90a);
    let fixup = GemmConfig {
        split_fixup: true,
        ..fp8
    };
    let ptx = build(&fixup).and_then(|m| m.to_ptx()).unwrap();
    assert!(
        !ptx.contains("griddepcontrol"),
        "the fixup has no second launch"
    );
}

/// Swap-AB ([`ptxkit::library::gemm::swap_ab`]): bf16 and FP8, each tile width, unsplit and
/// split, each output type, assemble without spills; C is `[n, m]` of the kernel's extents
/// (the problem's `[m, n]`), stored one element at a time (the transposed pair's halves lie
/// in different rows), and the tuner offers the swapped kernels at decode shapes.
#[test]
fn swap_ab_kernels_assemble() {
    use ScalarType::{Bf16, E4m3, F32};
    use ptxkit::library::gemm::swap_ab::WIDTHS;
    let bf = GemmConfig::large();
    let fp8 = GemmConfig::fp8(64, 7168, 132, E4m3, Bf16);
    let mut configs = Vec::new();
    for &bn in &WIDTHS {
        configs.push(bf.swapped(bn, 1));
        configs.push(fp8.swapped(bn, 1));
    }
    configs.extend([
        bf.swapped(64, 4),
        fp8.swapped(32, 8),
        GemmConfig { output: F32, ..bf }.swapped(16, 1),
        GemmConfig { output: F32, ..fp8 }.swapped(128, 2),
        GemmConfig {
            n_even: false,
            ..bf
        }
        .swapped(32, 1),
    ]);
    for cfg in &configs {
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        assert!(cfg.name().ends_with("_swapab"), "{}", cfg.name());
        if cfg.split_k == 1 && cfg.output == Bf16 {
            assert!(
                ptx.contains("st.global.b16"),
                "{}: element stores",
                cfg.name()
            );
        }
        assert!(!ptx.contains("st.global.v2.b16"), "{}", cfg.name());
    }
    support::gemm_configs_assemble_clean(configs);
    // The in-kernel fixup: unswapped and swapped, bf16 and FP8: one ticket per warpgroup (its
    // verdict shared by a barrier's reduction), the parts stored and loaded as 16-byte
    // vectors, no second kernel.
    let fixup = |c: GemmConfig| GemmConfig {
        split_fixup: true,
        ..c
    };
    let fixups = [
        fixup(GemmConfig {
            split_k: 4,
            tma_store: false,
            bn: 128,
            ..bf
        })
        .deepest(),
        fixup(bf.swapped(32, 4)),
        fixup(fp8.swapped(64, 8)),
        fixup(bf.swapped(64, 4)),
        fixup(fp8.swapped(64, 4)),
        fixup(bf.swapped(128, 7)),
        fixup(GemmConfig { output: F32, ..fp8 }.swapped(16, 2)),
    ];
    for cfg in &fixups {
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        assert!(cfg.name().ends_with("_fixup"), "{}", cfg.name());
        assert_eq!(
            ptx.matches("atom.acq_rel.gpu.global.add.u32").count(),
            1,
            "{}: the ticket",
            cfg.name()
        );
        assert!(
            ptx.contains("bar.red.or.pred"),
            "{}: the verdict",
            cfg.name()
        );
        let vectors = cfg.bn as usize / 8;
        assert_eq!(
            ptx.matches("st.global.v4.f32").count(),
            vectors,
            "{}: the part's stores",
            cfg.name()
        );
        assert_eq!(
            ptx.matches("ld.global.v4.f32").count(),
            vectors * cfg.split_k as usize,
            "{}: the parts' loads",
            cfg.name()
        );
    }
    support::gemm_configs_assemble_clean(fixups);
    let m16 = ptxkit::library::gemm::tune::candidates(
        &ptxkit::library::gemm::tune::TuneProblem::new(16, 4096, 4096, Bf16, Bf16),
        132,
    );
    assert!(m16.iter().any(|c| c.swap_ab && c.bn == 16));
}

/// The unswapped decode widths (the tokens on the 128-row side, the weight's rows 16, 32 or
/// the width that makes one tile per SM to a tile): bf16 and FP8, unsplit and with the
/// in-kernel fixup, each output type, assemble without spills; C is stored as pairs (a
/// thread's two values lie in one row of C, unlike the swapped kernel's), and the tuner offers
/// them at M = 64 and 128 (with the swapped 64-wide tile at M = 128), not at M = 16.
#[test]
fn narrow_unswapped_kernels_assemble() {
    use ScalarType::{Bf16, E4m3, F32};
    use ptxkit::library::gemm::swap_ab::{fill_width, pair_width};
    use ptxkit::library::gemm::tune::{TuneProblem, candidates};
    // One tile per SM of 132: 128 tiles at N = 4096, 6144 and 7168, 132 at 2112; at most 256.
    let widths: Vec<u32> = [4096, 6144, 7168, 2112, 57344]
        .iter()
        .map(|&n| fill_width(n, 132))
        .collect();
    assert_eq!(widths, [32, 48, 56, 16, 256]);
    let pairs: Vec<u32> = [4096, 6144, 7168, 2112, 8192]
        .iter()
        .map(|&n| pair_width(n, 132))
        .collect();
    assert_eq!(pairs, [64, 96, 112, 32, 128]);
    let bf = GemmConfig::large();
    let fp8 = GemmConfig::fp8(64, 4096, 132, E4m3, Bf16);
    let fixup = |c: GemmConfig| GemmConfig {
        split_fixup: true,
        ..c
    };
    let configs = vec![
        bf.decode_tile(32, 1, false),
        bf.decode_tile(16, 1, false),
        fp8.decode_tile(32, 1, false),
        fp8.decode_tile(16, 1, false),
        GemmConfig { output: F32, ..bf }.decode_tile(32, 1, false),
        GemmConfig {
            n_even: false,
            ..bf
        }
        .decode_tile(16, 1, false),
        fixup(bf.decode_tile(32, 2, false)),
        fixup(fp8.decode_tile(16, 2, false)),
        bf.decode_tile(48, 1, false),
        fp8.decode_tile(56, 1, false),
        GemmConfig { output: F32, ..fp8 }.decode_tile(40, 1, false),
        fixup(bf.decode_tile(24, 3, false)),
        // The deepest rings: 11 stages of a 128 x 32 tile, 16 of a 64 x 32 ping-pong one.
        bf.decode_tile(32, 1, false)
            .stages_up_to(GemmConfig::MAX_STAGES),
        fp8.decode_pingpong(32),
        GemmConfig {
            n_even: false,
            ..bf
        }
        .decode_pingpong(48),
    ];
    assert_eq!(configs[configs.len() - 3].stages, 11);
    assert_eq!(configs[configs.len() - 2].stages, 16);
    // CTA pairs of ping-pong consumers sharing the weight (M = 65 to 128): 64, 96 and 112 wide.
    let pairs: Vec<GemmConfig> = [(bf, 64), (fp8, 112), (bf, 96), (fp8, 32)]
        .into_iter()
        .map(|(c, bn)| c.decode_pair(bn))
        .collect();
    assert!(
        bf.decode_pair(56).validate().is_err(),
        "28-row halves are no whole swizzle atoms"
    );
    assert!(
        GemmConfig {
            cluster_m: 2,
            ..bf.decode_tile(32, 2, false)
        }
        .validate()
        .is_err(),
        "decode-width pairs are unsplit"
    );
    for cfg in &pairs {
        cfg.validate().unwrap();
        assert!(cfg.name().contains("_c2_pingpong"), "{}", cfg.name());
        // A stage released in the peer too: a plain arrival through `mapa`, never a
        // `.release.cluster` one (ptxas puts a whole-GPU memory barrier before that).
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        assert!(
            ptx.contains("mbarrier.arrive.shared::cluster.b64")
                && !ptx.contains("mbarrier.arrive.release.cluster"),
            "{}: the peer's release",
            cfg.name()
        );
        // The barriers' inits reach the peer through `fence.mbarrier_init` and a relaxed
        // cluster arrival (a releasing one is a whole-GPU memory barrier at every start); none
        // at the end: the producer's tail waits out the ring's last releases instead
        // (`Ring::drain`), so no releasing arrival (ptxas: `MEMBAR.ALL.GPU`) is left.
        assert_eq!(
            (
                ptx.matches("barrier.cluster.arrive.relaxed.aligned;")
                    .count(),
                ptx.matches("barrier.cluster.arrive.release.aligned;")
                    .count(),
                ptx.matches("barrier.cluster.wait").count()
            ),
            (1, 0, 1),
            "{}: the cluster barriers",
            cfg.name()
        );
    }
    support::gemm_configs_assemble_clean(pairs);
    // The pairs with their reduction split (cuBLAS's layout at 128x2112x7168: 96 wide, 3
    // parts), summed by a second launch or in the kernel: a ping-pong consumer's k-tiles are its
    // part's, its cursor passing the other consumer's parts one by one, a part with none
    // guarded (the wgmma waits stay unconditional within it: no C7514).
    let split_pairs = support::unique([
        bf.decode_pair_split(96, 3, false),
        bf.decode_pair_split(96, 3, true),
        fp8.decode_pair_split(64, 2, true),
        GemmConfig {
            n_even: false,
            ..bf
        }
        .decode_pair_split(128, 4, false),
    ]);
    for cfg in &split_pairs {
        cfg.validate().unwrap();
        assert!(cfg.name().contains("_c2_pingpong_splitk"), "{}", cfg.name());
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        assert_eq!(
            ptx.matches("griddepcontrol.launch_dependents;").count(),
            usize::from(!cfg.split_fixup),
            "{}: the sum a programmatic dependent",
            cfg.name()
        );
    }
    support::gemm_configs_assemble_clean_without(split_pairs, &["C7514"]);
    // Offered summed in the kernel only: a decode problem's candidates take one launch.
    let at_2112 = candidates(&TuneProblem::new(128, 2112, 7168, Bf16, Bf16), 132);
    assert!(
        at_2112.contains(&bf.decode_pair_split(96, 3, true)),
        "cuBLAS's split pair offered"
    );
    assert!(!at_2112.contains(&bf.decode_pair_split(96, 3, false)));
    assert!(
        candidates(&TuneProblem::new(64, 2112, 7168, Bf16, Bf16), 132)
            .iter()
            .all(|c| !(c.pingpong && c.cluster_m == 2 && c.split_k > 1)),
        "no split pairs where one 64-row tile holds the tokens"
    );
    for cfg in &configs {
        cfg.validate().unwrap();
        assert!(!cfg.name().contains("_swapab"), "{}", cfg.name());
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        if cfg.split_k == 1 && cfg.output == Bf16 && cfg.n_even {
            assert!(
                ptx.contains("st.global.v2.b16") || ptx.contains("st.global.b32"),
                "{}: pair stores",
                cfg.name()
            );
        }
    }
    support::gemm_configs_assemble_clean(configs);
    for (m, dtype) in [(64, Bf16), (128, E4m3)] {
        let picks = candidates(&TuneProblem::new(m, 4096, 7168, dtype, Bf16), 132);
        assert!(
            picks
                .iter()
                .any(|c| !c.swap_ab && c.bn == 32 && c.split_k == 1)
        );
    }
    let m128 = candidates(&TuneProblem::new(128, 4096, 4096, Bf16, Bf16), 132);
    assert!(
        m128.iter()
            .any(|c| c.swap_ab && c.bn == 64 && c.split_k == 2)
    );
    let wide = candidates(&TuneProblem::new(64, 6144, 4096, E4m3, Bf16), 132);
    assert!(
        wide.iter()
            .any(|c| !c.swap_ab && c.bn == 48 && c.split_k == 1)
    );
    // N = 2112 in 32-row tiles: 66 tiles, split in 2 to fill the 132 SMs once.
    let narrow = candidates(&TuneProblem::new(64, 2112, 7168, Bf16, Bf16), 132);
    assert!(
        narrow
            .iter()
            .any(|c| !c.swap_ab && c.bn == 32 && c.split_k == 2 && c.split_fixup)
    );
    let m16 = candidates(&TuneProblem::new(16, 4096, 4096, Bf16, Bf16), 132);
    assert!(m16.iter().all(|c| c.swap_ab || c.bn >= 64));
    // Ping-pong decode widths where one 64-row tile holds the tokens, not at M = 128.
    let pp = |m| {
        candidates(&TuneProblem::new(m, 4096, 7168, Bf16, Bf16), 132)
            .into_iter()
            .any(|c| c.pingpong && c.bn == 32 && c.stages == 16)
    };
    assert!(pp(64) && !pp(128));
    let paired = candidates(&TuneProblem::new(128, 7168, 2048, E4m3, Bf16), 132);
    assert!(
        paired
            .iter()
            .any(|c| c.pingpong && c.cluster_m == 2 && c.bn == 112 && c.stages == 10)
    );
}

#[test]
fn shared_memory_sizes_are_what_benchmarks_md_reports() {
    let large = GemmConfig::large();
    assert_eq!(large.smem_bytes(), Ok(214_080));
    assert_eq!(
        GemmConfig::for_problem(128, 8192, 132).smem_bytes(),
        Ok(164_976)
    );
    assert_eq!(GemmConfig { bn: 192, ..large }.smem_bytes(), Ok(173_120));
    assert_eq!(
        GemmConfig {
            tma_store: false,
            ..large
        }
        .smem_bytes(),
        Ok(148_528)
    );
}

#[test]
fn the_k_padding_kernel_assembles() {
    let text = ptxkit::library::gemm::pad_module(Target::Sm90a)
        .and_then(|m| m.to_ptx())
        .unwrap();
    support::assemble(&text, Target::Sm90a);
}

/// The launch comes from the kernel itself: its signature (A, B and C as tensors the launcher
/// builds tensor maps from, m, n, k read from their shapes, with the facts the kernel relies on)
/// and its launch spec (a persistent grid of `min(tiles, SMs)` CTAs, or of
/// `min(pairs, clusters resident)` CTA pairs, 384 threads, the layout's shared memory). No
/// host-side grid arithmetic, no hand-built tensor map.
#[test]
fn the_launch_is_derived_from_the_kernel() {
    use ptxkit::kernel::PersistentUnit;
    use ptxkit::runtime::{ArgDesc, Residency, TensorDesc};
    let tensor = |dtype: ScalarType, shape: &[usize]| {
        let len = shape.iter().product();
        ArgDesc::Tensor(
            TensorDesc::of_memory("test", dtype, 0x7f00_0000_0000, len, shape.to_vec(), 0).unwrap(),
        )
    };
    let bf = ScalarType::Bf16;
    let args = |m: usize, n: usize, k: usize| {
        vec![
            tensor(bf, &[m, k]),
            tensor(bf, &[n, k]),
            tensor(bf, &[m, n]),
        ]
    };
    let h100 = Residency {
        sm_count: 132,
        ctas_per_sm: 1,
        clusters: Some(66),
    };
    let large = GemmConfig::large();
    let g = build_with(&large, WaitMode::Spin).unwrap();
    let names = g.signature().param_names();
    assert_eq!(names, ["m", "n", "k", "a", "b", "c"]);
    let spec = g.built.launch_spec();
    assert_eq!(spec.block, [384, 1, 1]);
    assert_eq!(spec.dynamic_smem_bytes, large.smem_bytes().unwrap());
    let p = spec.persistent.as_ref().unwrap();
    assert_eq!((p.unit, p.ctas_per_sm), (PersistentUnit::Cta, Some(1)));
    // 8192²: 64 x 32 tiles on 132 SMs; 256 x 512: 2 x 2 tiles, one CTA each.
    let (cfg, syms) = g
        .built
        .config_on(&args(8192, 8192, 8192), 0, Some(h100))
        .unwrap();
    assert_eq!(cfg.grid, [132, 1, 1]);
    assert_eq!((syms["m"], syms["n"], syms["k"]), (8192, 8192, 8192));
    let (cfg, _) = g
        .built
        .config_on(&args(256, 512, 64), 0, Some(h100))
        .unwrap();
    assert_eq!(cfg.grid, [4, 1, 1]);
    // The TMA-store epilogue needs N a multiple of 8, K a multiple of 8 (the host pads other K).
    assert!(
        g.built
            .config_on(&args(256, 516, 64), 0, Some(h100))
            .is_err()
    );
    assert!(
        g.built
            .config_on(&args(256, 512, 60), 0, Some(h100))
            .is_err()
    );

    // CTA pairs: 8192²: 32 x 32 pairs, as many as are resident (66), two CTAs each; 384 x 512:
    // 2 x 2 pairs.
    let pair = GemmConfig {
        cluster_m: 2,
        ..large
    };
    let g = build_with(&pair, WaitMode::Spin).unwrap();
    let spec = g.built.launch_spec();
    assert_eq!(spec.cluster, Some([2, 1, 1]));
    assert_eq!(
        spec.persistent.as_ref().map(|p| p.unit),
        Some(PersistentUnit::Cluster)
    );
    let (cfg, _) = g
        .built
        .config_on(&args(8192, 8192, 8192), 0, Some(h100))
        .unwrap();
    assert_eq!((cfg.grid, cfg.cluster), ([132, 1, 1], Some([2, 1, 1])));
    let (cfg, _) = g
        .built
        .config_on(&args(384, 512, 64), 0, Some(h100))
        .unwrap();
    assert_eq!(cfg.grid, [8, 1, 1]);
}

/// The rule's tile width weighs the last wave (`GemmConfig::wave_width`): the benchmark shapes
/// keep the 256-wide tile (their golden files above), DeepSeek-V3's N = 2112 takes 192 wide at
/// M = 4096 (11 whole columns; 256 wide leaves the ninth a quarter full), its other layers stay
/// 256 wide, a skinny problem still gets 64, and the pick is a valid kernel.
#[test]
fn the_rule_weighs_the_last_wave() {
    use ptxkit::library::gemm::DEEPSEEK_V3_NK;
    for &(m, n, _) in BENCH_SHAPES.iter().filter(|s| s.0 >= 2048) {
        assert_eq!(GemmConfig::wave_width(m, n, 132), 256, "{m}x{n}");
    }
    for &(n, _) in DEEPSEEK_V3_NK {
        let want = if n == 2112 { 192 } else { 256 };
        assert_eq!(GemmConfig::wave_width(4096, n, 132), want, "4096x{n}");
        for input in [ScalarType::Bf16, ScalarType::E4m3] {
            let cfg = GemmConfig::for_problem_typed(4096, n, 132, input, ScalarType::Bf16);
            assert_eq!(cfg.bn, want);
            assert!(cfg.tma_store && cfg.validate().is_ok(), "{}", cfg.name());
        }
    }
    // 1024 x 5120: 160 tiles of 256 (two waves, the second 28 tiles) against 216 of 192.
    assert_eq!(GemmConfig::wave_width(1024, 5120, 132), 192);
    assert_eq!(GemmConfig::wave_width(128, 8192, 132), 64);
    assert_eq!(GemmConfig::wave_width(4096, 4096, 0), 256);
}

/// Stream-K ([`GemmConfig::stream_k`], [`ptxkit::parts::GridSchedule::stream_k`]): bf16 and
/// per-tensor FP8, swapped and unswapped, 32 to 128 wide, assemble without spills or wgmma
/// serialisation; the kernel is one launch (no `griddepcontrol`), takes a ticket with
/// `atom.acq_rel` and adds no float atomically; the first has a golden file; what it does not
/// take is refused with [`ptxkit::library::gemm::GemmConfigError::StreamK`].
#[test]
fn stream_k_kernels_assemble() {
    use ScalarType::{Bf16, E4m3};
    use ptxkit::library::gemm::GemmConfigError;
    let bf = GemmConfig::large();
    let fp8 = GemmConfig::fp8(64, 7168, 132, E4m3, Bf16);
    let sk = |c: GemmConfig| GemmConfig {
        stream_k: true,
        ..c
    };
    let configs = [
        sk(bf.swapped(64, 1)),
        sk(bf.swapped(32, 1)),
        sk(bf.swapped(16, 1)),
        sk(fp8.swapped(16, 1)),
        sk(bf.decode_tile(128, 1, false)),
        sk(bf.decode_tile(48, 1, false)),
        sk(fp8.swapped(64, 1)),
        sk(fp8.decode_tile(128, 1, false)),
        GemmConfig {
            n_even: false,
            ..sk(bf.decode_tile(64, 1, false))
        },
    ];
    for cfg in &configs {
        let ptx = build(cfg).and_then(|m| m.to_ptx()).unwrap();
        assert!(
            !ptx.contains("griddepcontrol"),
            "{}: one launch",
            cfg.name()
        );
        assert!(
            ptx.contains("atom.acq_rel.gpu.global.add.u32"),
            "{}",
            cfg.name()
        );
        assert!(!ptx.contains("red.global.add.f32") && !ptx.contains("atom.global.add.f32"));
        assert!(cfg.name().ends_with("_streamk"));
    }
    let first = build(&configs[0]).and_then(|m| m.to_ptx()).unwrap();
    support::golden(&format!("gemm/{}.ptx", configs[0].name()), &first).unwrap();
    support::gemm_configs_assemble_clean_without(configs, &["C7514", "C7517"]);
    for bad in [
        GemmConfig {
            split_k: 2,
            ..sk(bf.swapped(64, 1))
        },
        GemmConfig {
            split_fixup: true,
            split_k: 2,
            ..sk(bf.swapped(64, 1))
        },
        sk(bf.decode_tile(128, 1, false).with_pingpong()),
        sk(bf.decode_pair(64)),
        sk(bf.decode_cluster(64, 2)),
        sk(bf),
        sk(bf.decode_tile(192, 1, false)),
        sk(GemmConfig::fp8_block(64, 7168, 132, E4m3, Bf16)),
        GemmConfig {
            tma_store: false,
            ..sk(GemmConfig::fp8_block(64, 7168, 132, E4m3, Bf16))
        },
        GemmConfig {
            alpha_beta: true,
            ..sk(bf.decode_tile(128, 1, false))
        },
        GemmConfig {
            bias: Some(Bf16),
            ..sk(fp8.swapped(64, 1))
        },
    ] {
        assert_eq!(
            bad.validate(),
            Err(GemmConfigError::StreamK),
            "{}",
            bad.name()
        );
        assert!(build(&bad).is_err());
    }
}
