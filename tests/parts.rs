//! The kernel parts (`ptxkit::parts`) as a user meets them through the GEMM: epilogues whose
//! tensors do not fit the output, or that a grouped GEMM cannot take, are refused with the
//! tensor and the op named; a composed epilogue's kernel assembles.

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts, TmaTensor, Var};
use ptxkit::library::gemm::{EpiloguePace, GemmConfig, GemmKernel, Grouping, HopperGemm};
use ptxkit::parts::{Activation, Combine, Epilogue, EpilogueTensor};
use ptxkit::smem::pipeline::sync::WaitMode;

mod support;

/// The bf16 GEMM of `cfg` with the epilogue `epi` makes from the kernel and the GEMM's `m`
/// and `n`.
fn gemm_with(
    cfg: GemmConfig,
    epi: impl FnOnce(&mut KernelBuilder, [Var; 2]) -> Result<Epilogue, KernelError>,
) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new("gemm_parts_test", Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let e = epi(&mut k, [gemm.m(), gemm.n()])?;
    gemm.with_epilogue(e).build(k)
}

/// Why the GEMM of `cfg` with the epilogue `epi` makes is refused.
fn refusal(
    cfg: GemmConfig,
    epi: impl FnOnce(&mut KernelBuilder, [Var; 2]) -> Result<Epilogue, KernelError>,
) -> String {
    match gemm_with(cfg, epi) {
        Ok(_) => panic!("the epilogue was taken"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_vector_of_the_wrong_extent_is_refused_with_its_shape() {
    let e = refusal(GemmConfig::large(), |k, [m, _n]| {
        let wrong = k.tensor::<ty::Bf16>("bias", [m], TensorOpts::default())?;
        Ok(Epilogue::new().cols(&wrong, Combine::Add))
    });
    assert!(e.contains("`bias` has shape [m]"), "{e}");
    assert!(e.contains("columns is [n]"), "{e}");
}

#[test]
fn a_residual_of_the_wrong_shape_is_refused() {
    let e = refusal(GemmConfig::large(), |k, [m, n]| {
        let wrong = k.tensor::<ty::Bf16>("res", [n, m], TensorOpts::default())?;
        Ok(Epilogue::new().residual(&wrong))
    });
    assert!(e.contains("`res` has shape [n, m]"), "{e}");
}

#[test]
fn a_grouped_gemm_refuses_ops_that_need_its_rows() {
    let cfg = GemmConfig {
        grouping: Grouping::Contiguous,
        ..GemmConfig::large()
    };
    let e = refusal(cfg, |k, [m, _n]| {
        let v = k.tensor::<ty::F32>("row_scale", [m], TensorOpts::default())?;
        Ok(Epilogue::new().rows(&v, Combine::Mul))
    });
    assert!(e.contains("grouped GEMM"), "{e}");
    // Ops that need no row are taken.
    gemm_with(cfg, |_k, _| {
        Ok(Epilogue::new().activation(Activation::Silu).scale(0.5f32))
    })
    .unwrap();
}

#[test]
fn every_activation_builds_and_assembles() {
    for a in [
        Activation::Relu,
        Activation::GeluTanh,
        Activation::GeluErf,
        Activation::Silu,
    ] {
        let g = gemm_with(GemmConfig::large(), |_k, _| {
            Ok(Epilogue::new().activation(a))
        })
        .unwrap();
        ptxkit::selftest::check_ptx(g.built.ptx(), Target::Sm90a, &[])
            .unwrap_or_else(|e| panic!("{a:?}: {e}"));
    }
}

/// Ping-pong consumers ([`GemmConfig::pingpong`], `parts::Turns`): each takes its turn at the
/// ring (`bar.sync` at its own named barrier, 256 threads), passes it on (`bar.arrive` at the
/// other's) after its last wait and before its last wgmma wait, keeps one k-tile's wgmmas in
/// flight (`wgmma.wait_group 1`), and its cursor skips the other's tiles; the problems the turns
/// do not serve are refused.
#[test]
fn pingpong_consumers_take_turns_at_the_ring() {
    use ptxkit::library::gemm::{GemmConfigError, Scaling};
    let cfg = GemmConfig::large().with_pingpong();
    assert_eq!((cfg.bm(), cfg.stage_readers(), cfg.stages), (64, 1, 4));
    let g = gemm_with(cfg, |_k, _| Ok(Epilogue::new())).unwrap();
    let ptx = g.built.ptx();
    let at = |needle: &str| {
        ptx.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in the kernel"))
    };
    let (take, pass) = (at("bar.sync %r"), at("bar.arrive %r"));
    let (keep_one, drain) = (
        at("wgmma.wait_group.sync.aligned 1;"),
        at("wgmma.wait_group.sync.aligned 0;"),
    );
    assert!(take < keep_one && keep_one < pass && pass < drain, "{ptx}");
    assert!(ptx[take..].starts_with("bar.sync %r") && ptx[take..].contains(", 256;"));
    // The cursor's skip over the other consumer's tiles: stage and wraps of the ring of 4.
    assert!(ptx.contains("rem.u32") && ptx.contains(", 4;"), "{ptx}");
    for bad in [
        GemmConfig {
            grouping: Grouping::Contiguous,
            ..cfg
        },
        GemmConfig {
            scaling: Scaling::Block,
            input: ptxkit::isa::ScalarType::E4m3,
            ..cfg
        },
    ] {
        assert_eq!(bad.validate(), Err(GemmConfigError::PingPong), "{bad:?}");
    }
}

/// An epilogue that reads a residual prefetches its blocks into L2 at the tile's start
/// (`cp.async.bulk.prefetch.L2`), unless built `without_prefetch`; composing keeps the choice.
#[test]
fn the_residual_prefetch_can_be_left_out() {
    let residual = |prefetch: bool| {
        move |k: &mut KernelBuilder, [m, n]: [Var; 2]| {
            let r = k.tensor::<ty::Bf16>("res", [m, n], TensorOpts::default().align(16))?;
            let e = Epilogue::new().residual(&r);
            Ok(match prefetch {
                true => e,
                false => Epilogue::new().without_prefetch().then(e),
            })
        }
    };
    for cfg in [GemmConfig::large(), GemmConfig::large().with_pingpong()] {
        let with = gemm_with(cfg, residual(true)).unwrap();
        let without = gemm_with(cfg, residual(false)).unwrap();
        assert!(with.built.ptx().contains("cp.async.bulk.prefetch.L2"));
        assert!(!without.built.ptx().contains("cp.async.bulk.prefetch"));
    }
}

/// The bf16 GEMM of `cfg` with a staged input `res` ([`HopperGemm::staged_input`]) and the
/// epilogue `epi` makes from the kernel, the GEMM's `n` and `res`.
fn staged_gemm(
    cfg: GemmConfig,
    epi: impl FnOnce(&mut KernelBuilder, Var, &TmaTensor<ty::Bf16>) -> Result<Epilogue, KernelError>,
) -> Result<GemmKernel, KernelError> {
    staged_gemm_read(cfg, false, epi)
}

/// [`staged_gemm`], with `direct` its input declared by `HopperGemm::staged_input_direct`.
fn staged_gemm_read(
    cfg: GemmConfig,
    direct: bool,
    epi: impl FnOnce(&mut KernelBuilder, Var, &TmaTensor<ty::Bf16>) -> Result<Epilogue, KernelError>,
) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new("gemm_staged_test", Target::Sm90a);
    let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let res = match direct {
        true => gemm.staged_input_direct(&mut k, "res")?,
        false => gemm.staged_input(&mut k, "res")?,
    };
    let e = epi(&mut k, gemm.n(), &res)?;
    gemm.with_epilogue(e).build(k)
}

/// The GEMM on epilogue warps (three, the default) with bias, ReLU and a staged residual: what
/// the epilogue-warp tests compare their variants with.
fn staged_relu() -> (GemmConfig, GemmKernel) {
    let cfg = GemmConfig::large().with_epilogue_warps();
    let staged = staged_gemm(cfg, |k, n, res| {
        bias_act_residual(k, n, Activation::Relu, res)
    })
    .unwrap();
    (cfg, staged)
}

/// The issue's fused epilogue: a bf16 bias `[n]` (declared here) added, `act`, then `res` added.
fn bias_act_residual(
    k: &mut KernelBuilder,
    n: Var,
    act: Activation,
    res: impl Into<EpilogueTensor>,
) -> Result<Epilogue, KernelError> {
    let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
    Ok(Epilogue::new()
        .cols(&bias, Combine::Add)
        .activation(act)
        .residual(res))
}

/// A staged residual: each consumer's leader loads its block by TMA into its C staging block
/// after issuing a k-tile's wgmmas (once the block's last store has read it), on the
/// staging ring's barriers; the epilogue waits for it and reads it with `ldmatrix`; it is not
/// prefetched into L2 (the TMA reads it); the kernel assembles, with the consumers sharing
/// tiles, taking turns, and in a CTA pair.
#[test]
fn a_staged_residual_is_loaded_under_the_main_loop_and_read_by_ldmatrix() {
    let pair = GemmConfig {
        cluster_m: 2,
        ..GemmConfig::large()
    };
    for cfg in [
        GemmConfig::large(),
        GemmConfig::large().with_pingpong(),
        pair,
    ] {
        let g = staged_gemm(cfg, |k, n, res| {
            bias_act_residual(k, n, Activation::GeluTanh, res)
        })
        .unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
        let ptx = g.built.ptx();
        let at = |needle: &str| {
            ptx.find(needle)
                .unwrap_or_else(|| panic!("no `{needle}` in the kernel"))
        };
        // The consumers' part of the kernel: after the producer's loads.
        let consumer = at("setmaxnreg.inc");
        let first_wgmma = consumer + ptx[consumer..].find("wgmma.mma_async").unwrap();
        let load = first_wgmma
            + ptx[first_wgmma..]
                .find("cp.async.bulk.tensor.2d.shared::cluster.global")
                .unwrap_or_else(|| panic!("{cfg:?}: no staged load after the first wgmma"));
        let read = at("ldmatrix.sync.aligned");
        let store = at("cp.async.bulk.tensor.2d.global.shared::cta");
        assert!(load < read && read < store, "{cfg:?}");
        assert!(ptx[first_wgmma..load].contains("cp.async.bulk.wait_group.read 0"));
        assert!(!ptx.contains("cp.async.bulk.prefetch.L2"), "{cfg:?}");
        if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
            let name = format!("{} staged", cfg.name());
            support::assemble_clean_without(&ptxas, &name, ptx, Target::Sm90a, &["C7514"]);
        }
    }
}

/// An epilogue warp's band in `ptx`: from its first `ldmatrix` to its first `stmatrix` (the
/// epilogue warps' code comes first, in the producer warpgroup's branch).
fn band(ptx: &str) -> &str {
    let read = ptx.find("ldmatrix.sync.aligned").expect("no ldmatrix");
    let write = read
        + ptx[read..]
            .find("stmatrix.sync.aligned")
            .expect("no stmatrix");
    &ptx[read..write]
}

/// Each epilogue-warp kernel of `cfg`, named by how it reads its residual, assembles clean.
fn assemble_epilogue_warps(cfg: GemmConfig, kernels: &[(&str, &GemmKernel)]) {
    let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() else {
        return;
    };
    for (name, g) in kernels {
        let name = format!("{} epilogue warps, {name} residual", cfg.name());
        support::assemble_clean_without(&ptxas, &name, g.built.ptx(), Target::Sm90a, &["C7514"]);
    }
}

/// On epilogue warps ([`GemmConfig::epilogue_warps`]) a staged residual's bands are read without
/// the whole-tile / edge-tile branch (its slab holds the whole band, zeros past the edges), so
/// the band loop has one body: no branch between the warp's first `ldmatrix` and its first
/// `stmatrix` (the epilogue warps' code comes first, in the producer warpgroup's branch); so is
/// a residual from global memory read one band ahead into registers (bounded loads, zeros past
/// the edges); read where it is used (`Epilogue::without_prefetch`) it keeps the branch (its
/// edge bands read with bounds). All assemble without spills.
#[test]
fn epilogue_warps_read_a_staged_residual_without_the_edge_branch() {
    let (cfg, staged) = staged_relu();
    let ahead = gemm_with(cfg, |k, [m, n]| {
        let res = k.tensor::<ty::Bf16>("res", [m, n], TensorOpts::default().align(16))?;
        bias_act_residual(k, n, Activation::Relu, &res)
    })
    .unwrap();
    let global = gemm_with(cfg, |k, [m, n]| {
        let res = k.tensor::<ty::Bf16>("res", [m, n], TensorOpts::default().align(16))?;
        Ok(Epilogue::new().without_prefetch().then(bias_act_residual(
            k,
            n,
            Activation::Relu,
            &res,
        )?))
    })
    .unwrap();
    assert!(
        !band(staged.built.ptx()).contains("bra "),
        "a branch in the staged band"
    );
    assert!(
        !band(ahead.built.ptx()).contains("bra "),
        "a branch in the band read ahead"
    );
    assert!(
        band(global.built.ptx()).contains("bra "),
        "no edge branch in the global band"
    );
    assemble_epilogue_warps(
        cfg,
        &[("staged", &staged), ("ahead", &ahead), ("global", &global)],
    );
}

/// The epilogue's folds (`parts::epilogue`'s `apply_ops`), in an epilogue warp's band of 16
/// values a thread: bias + GELU (tanh) + a staged residual widens the block's bf16 pairs by a
/// shift or a mask (no `cvt.f32.bf16`) and leaves GELU's half to the residual's add, 2
/// `mul.f32` (x², the tanh's argument) and 4 `fma.rn.f32` (the bias, GELU's polynomial and
/// `x + x·tanh`, the residual's `fma(y, 0.5, r)`) a value and no `add.f32`; bias + GELU alone
/// makes GELU's half in the bias's `fma` (2 `mul.f32` and 3 `fma.rn.f32` a value, the bias halved
/// before the band); with identity maps between the ops, no fold: 3 `mul.f32`, 3 `fma.rn.f32`
/// and an `add.f32` a value. All assemble without spills.
#[test]
fn epilogue_folds_take_gelus_half_into_the_add_next_to_it() {
    let cfg = GemmConfig::large().with_epilogue_warps();
    let same = |_: &mut KernelBuilder, v, _: &_| Ok(v);
    let kernel = |residual: bool, unfold: bool| {
        staged_gemm(cfg, |k, n, res| {
            let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
            let mut e = Epilogue::new().cols(&bias, Combine::Add);
            e = match unfold {
                true => e.map(same).activation(Activation::GeluTanh).map(same),
                false => e.activation(Activation::GeluTanh),
            };
            Ok(if residual { e.residual(res) } else { e })
        })
        .unwrap()
    };
    let (folded, alone, unfolded) = (
        kernel(true, false),
        kernel(false, false),
        kernel(true, true),
    );
    let per_value = |g: &GemmKernel| {
        let b = band(g.built.ptx());
        assert_eq!(b.matches("tanh.approx.f32").count(), 16);
        assert!(!b.contains("cvt.f32.bf16"), "a cvt in the band");
        let n = |op: &str| b.matches(op).count() / 16;
        (n("mul.f32"), n("fma.rn.f32"), n("add.f32"))
    };
    assert_eq!(per_value(&folded), (2, 4, 0));
    assert_eq!(per_value(&alone), (2, 3, 0));
    assert_eq!(per_value(&unfolded), (3, 3, 1));
    let ptx = alone.built.ptx();
    let before = &ptx[..ptx.find("ldmatrix.sync.aligned").unwrap()];
    assert!(before.contains(", 0f3F000000;"), "the bias not halved");
    assemble_epilogue_warps(
        cfg,
        &[
            ("folded", &folded),
            ("no residual, folded", &alone),
            ("unfolded", &unfolded),
        ],
    );
}

/// Paced epilogue warps ([`EpiloguePace`]): the unpaced default has no `nanosleep` and reads no
/// `%globaltimer`; with a fixed pause a `nanosleep` follows each band's `stmatrix`; paced to a
/// share of the main loop each band's sleep is predicated on the band being early (by
/// `%globaltimer`); the band itself (its first `ldmatrix` to its first `stmatrix`) keeps one
/// body, no branch, and every kernel assembles without spills.
#[test]
fn paced_epilogue_warps_sleep_after_each_band() {
    let (cfg, unpaced) = staged_relu();
    // Two warps: the pace to the main loop schedules one warp's bands.
    let cfg = cfg.with_epilogue_warp_count(2);
    let paced = |pace| {
        let mut k = KernelBuilder::new("gemm_paced_test", Target::Sm90a);
        let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
        let res = gemm.staged_input(&mut k, "res")?;
        let e = bias_act_residual(&mut k, gemm.n(), Activation::Relu, &res)?;
        gemm.with_epilogue(e).with_epilogue_pace(pace).build(k)
    };
    let fixed = paced(EpiloguePace::Fixed(800)).unwrap();
    let share = paced(EpiloguePace::MainLoop(75)).unwrap();
    let ptx = unpaced.built.ptx();
    assert!(!ptx.contains("nanosleep") && !ptx.contains("%globaltimer"));
    // After the band's stmatrix, before the next band's ldmatrix.
    let after_band = |ptx: &str| {
        let write = ptx.find("stmatrix.sync.aligned").expect("no stmatrix");
        let next = write + ptx[write..].find("ldmatrix").unwrap_or(ptx.len() - write);
        ptx[write..next].to_string()
    };
    let f = after_band(fixed.built.ptx());
    assert!(
        f.contains("\tnanosleep.u32"),
        "no pause after the band:\n{f}"
    );
    let m = after_band(share.built.ptx());
    assert!(
        m.contains("%globaltimer"),
        "no clock read after the band:\n{m}"
    );
    assert!(
        m.lines()
            .any(|l| l.contains("@%p") && l.contains("nanosleep")),
        "no predicated sleep after the band:\n{m}"
    );
    for g in [&fixed, &share] {
        assert!(
            !band(g.built.ptx()).contains("bra "),
            "a branch in the paced band"
        );
    }
    assemble_epilogue_warps(
        cfg,
        &[
            ("unpaced", &unpaced),
            ("fixed pace", &fixed),
            ("paced", &share),
        ],
    );
}

/// Three epilogue warps ([`GemmConfig::epilogue_warp_count`], the default): warps 1 to 3 of the
/// producer warpgroup run the pass, sync on a named barrier of 96 threads after each slab (two
/// warps, `_ew2`, a warp a consumer, sync no such barrier), load the staged residual's slabs at
/// two sites (a tile's first, the loop's next one ahead; two warps at one), keep the band's one
/// body (no branch), are refused paced to the main loop, 4 warps are refused, and every kernel
/// (staged, read directly, fixed pace) assembles without spills in the 80 registers.
#[test]
fn three_epilogue_warps_share_each_slab_and_sync_after_it() {
    let (three_cfg, _) = staged_relu();
    assert_eq!(three_cfg.epilogue_warp_count, 3);
    let cfg = three_cfg.with_epilogue_warp_count(2);
    assert!(cfg.name().ends_with("_ew2"), "{}", cfg.name());
    assert!(three_cfg.name().ends_with("_ew"), "{}", three_cfg.name());
    let two = staged_gemm(cfg, |k, n, res| {
        bias_act_residual(k, n, Activation::GeluTanh, res)
    })
    .unwrap();
    let build = |direct: bool, pace| {
        let mut k = KernelBuilder::new("gemm_ew3_test", Target::Sm90a);
        let mut gemm =
            HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, three_cfg, WaitMode::Spin)?;
        let res = match direct {
            true => gemm.staged_input_direct(&mut k, "res")?,
            false => gemm.staged_input(&mut k, "res")?,
        };
        let e = bias_act_residual(&mut k, gemm.n(), Activation::GeluTanh, &res)?;
        gemm.with_epilogue(e).with_epilogue_pace(pace).build(k)
    };
    let three = build(false, EpiloguePace::Off).unwrap();
    let direct = build(true, EpiloguePace::Off).unwrap();
    let fixed = build(false, EpiloguePace::Fixed(800)).unwrap();
    let e = build(false, EpiloguePace::MainLoop(75)).unwrap_err();
    assert!(e.to_string().contains("paced to the main loop"), "{e}");
    let four = cfg.with_epilogue_warp_count(4);
    assert!(
        staged_gemm(four, |k, n, res| bias_act_residual(
            k,
            n,
            Activation::Relu,
            res
        ))
        .is_err()
    );
    let ptx = three.built.ptx();
    assert!(ptx.contains("bar.sync 5, 96;"), "no slab barrier");
    assert!(
        !two.built.ptx().contains("bar.sync 5,"),
        "a slab barrier on two warps"
    );
    assert!(!band(ptx).contains("bra "), "a branch in the shared band");
    let loads = |ptx: &str| {
        ptx.matches("cp.async.bulk.tensor.2d.shared::cluster.global")
            .count()
    };
    assert_eq!(
        loads(ptx),
        loads(two.built.ptx()) + 1,
        "the tile's first slab peeled"
    );
    assemble_epilogue_warps(
        three_cfg,
        &[
            ("staged", &three),
            ("direct", &direct),
            ("fixed pace", &fixed),
        ],
    );
}

/// A staged input read directly ([`HopperGemm::staged_input_direct`]): the epilogue warps read
/// its bands from its global copy (`ld.global.b32` pairs, where the staged one reads none: one
/// band ahead, before the band's `ldmatrix` of the block; with `Epilogue::without_prefetch`
/// between it and the band's `stmatrix`) and load no slab of it by TMA (one TMA load site
/// fewer: the consumers' own last tile still stages it); the kernel takes the tensor twice and
/// assembles without spills.
#[test]
fn epilogue_warps_read_a_direct_staged_input_from_global_memory() {
    let (cfg, staged) = staged_relu();
    let direct_gemm = |ahead: bool| {
        staged_gemm_read(cfg, true, |k, n, res| {
            let epi = bias_act_residual(k, n, Activation::Relu, res)?;
            Ok(match ahead {
                true => epi,
                false => Epilogue::new().without_prefetch().then(epi),
            })
        })
        .unwrap()
    };
    let (direct, at_use) = (direct_gemm(true), direct_gemm(false));
    let names = direct.built.signature().param_names();
    assert!(
        names.contains(&"res") && names.contains(&"res_direct"),
        "{names:?}"
    );
    let first_read = |ptx: &str| ptx.find("ldmatrix.sync.aligned").expect("no ldmatrix");
    let ptx = direct.built.ptx();
    assert!(ptx[..first_read(ptx)].contains("ld.global.b32"));
    assert!(!band(ptx).contains("ld.global.b32"));
    assert!(band(at_use.built.ptx()).contains("ld.global.b32"));
    assert!(!staged.built.ptx().contains("ld.global.b32"));
    let loads = |ptx: &str| {
        ptx.matches("cp.async.bulk.tensor.2d.shared::cluster.global")
            .count()
    };
    // Three warps load a tile's first slab and, in the loop, the next one.
    assert_eq!(
        loads(direct.built.ptx()) + 2,
        loads(staged.built.ptx()),
        "the epilogue warps' slab loads left out"
    );
    assemble_epilogue_warps(cfg, &[("direct", &direct), ("direct, at use", &at_use)]);
}

/// A staged input is refused where the GEMM has no staging blocks to load it into, a second one,
/// one no op reads, and one an op would address in global memory.
#[test]
fn a_staged_input_is_refused_where_it_cannot_be_staged() {
    let registers = GemmConfig {
        tma_store: false,
        ..GemmConfig::large()
    };
    let e = staged_gemm(registers, |_k, _n, res| Ok(Epilogue::new().residual(res))).unwrap_err();
    assert!(e.to_string().contains("the register epilogue"), "{e}");
    let mut k = KernelBuilder::new("twice", Target::Sm90a);
    let mut gemm =
        HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, GemmConfig::large(), WaitMode::Spin)
            .unwrap();
    gemm.staged_input(&mut k, "r1").unwrap();
    let e = gemm.staged_input(&mut k, "r2").unwrap_err().to_string();
    assert!(
        e.contains("a second staged input `r2`") && e.contains("`r1`"),
        "{e}"
    );
    let e = staged_gemm(GemmConfig::large(), |_k, _n, _res| Ok(Epilogue::new())).unwrap_err();
    assert!(
        e.to_string().contains("`res` that no epilogue op reads"),
        "{e}"
    );
    let e = staged_gemm(GemmConfig::large(), |_k, _n, res| {
        Ok(Epilogue::new().residual(res).store(res))
    })
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("the staged tensor `res` as an extra output"),
        "{e}"
    );
}

/// Consumers raised past what the producer gives back would wait in `setmaxnreg.inc` forever
/// (the CTA's registers are fixed at launch): refused, the budgets named; the library's own
/// role sets fit.
#[test]
fn register_budgets_the_producer_cannot_fund_are_refused() {
    use ptxkit::parts::WarpSpecialized;
    let declare = |roles: WarpSpecialized, ctas: u32| {
        let mut k = KernelBuilder::new("roles", Target::Sm90a);
        roles.declare_ctas(&mut k, ctas).map(|_| ())
    };
    // 384 threads hold 168 each at launch; 80 gives back 88, two consumers at 216 ask for 96.
    let e = declare(WarpSpecialized::new(2, 80, 216), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("register budgets 80 / 216"), "{e}");
    assert!(
        e.contains("ask for 96") && e.contains("gives back 88"),
        "{e}"
    );
    for (roles, ctas) in [
        (GemmConfig::ROLES, 1),
        (GemmConfig::EPILOGUE_WARPS_ROLES, 1),
        (WarpSpecialized::PRODUCER_AND_THREE_CONSUMERS, 1),
        (WarpSpecialized::new(1, 24, 232), 2),
    ] {
        declare(roles, ctas).unwrap_or_else(|e| panic!("{roles:?}: {e}"));
    }
}

/// The output accumulated in place ([`Epilogue::accumulate`]): C's boxes leave the staging
/// blocks by the TMA's reduction (`cp.reduce.async.bulk.tensor...add`, PTX ISA 9.7.9.27), never
/// by a plain TMA store, and no residual is loaded (no TMA load into shared memory beside the
/// producer's A and B) or read (the epilogue warps' band reads the block's own band only); on the consumers (cooperative, ping-pong), on three and two epilogue warps (the
/// consumers' own last tile too). It assembles without spills. Where C would be stored from
/// registers, or the op is not the last, the build refuses it, naming the op.
#[test]
fn the_output_accumulates_in_place_through_the_tma_reduction() {
    let large = GemmConfig::large();
    let ew = large.with_epilogue_warps();
    let in_place = |k: &mut KernelBuilder, [_, n]: [Var; 2]| {
        let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
        Ok(Epilogue::new()
            .cols(&bias, Combine::Add)
            .activation(Activation::GeluTanh)
            .accumulate())
    };
    let ptxas = ptxkit::isa::ptxas::for_tests().unwrap();
    for cfg in [
        large,
        large.with_pingpong(),
        ew,
        ew.with_epilogue_warp_count(2),
    ] {
        let g = gemm_with(cfg, in_place).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
        let ptx = g.built.ptx();
        let reduce = "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group";
        assert!(ptx.contains(reduce), "{cfg:?}: no reduction");
        assert!(
            !ptx.contains("cp.async.bulk.tensor.2d.global.shared::cta"),
            "{cfg:?}: a plain TMA store of C"
        );
        // The producer's loads of A and B (one each) are the only TMA loads.
        let loads = ptx
            .matches("cp.async.bulk.tensor.2d.shared::cluster.global")
            .count();
        assert_eq!(loads, 2, "{cfg:?}: a TMA load besides A's and B's");
        if cfg.epilogue_warps {
            let b = band(ptx);
            // The block's own band only: two `.x4` (8 rows x 64 bf16), no residual's.
            let reads = b.matches("ldmatrix.sync.aligned").count();
            assert_eq!(reads, 2, "{cfg:?}: a residual read");
            // Both the warps' slabs and the consumers' own last tile reduce.
            assert!(ptx.matches(reduce).count() >= 2, "{cfg:?}");
        }
        if let Some(ptxas) = &ptxas {
            let name = format!("{} in place", cfg.name());
            support::assemble_clean_without(ptxas, &name, ptx, Target::Sm90a, &["C7514"]);
        }
    }
    let register = GemmConfig {
        tma_store: false,
        ..large
    };
    let why = refusal(register, in_place);
    assert!(
        why.contains("Accumulate") && why.contains("registers"),
        "{why}"
    );
    let why = refusal(ew, |k, [_, n]| {
        let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
        Ok(Epilogue::new().accumulate().cols(&bias, Combine::Add))
    });
    assert!(why.contains("Accumulate") && why.contains("last"), "{why}");
}
