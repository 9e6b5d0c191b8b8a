//! The memory-bound row kernels build for every op, both access forms and the configurations
//! the benchmark shapes need; every one assembles with ptxas for sm_90a and sm_80 with no spills,
//! and the vector form's accesses are 16-byte vectors.

mod support;

use ptxkit::isa::{ScalarType, Target, ty};
use ptxkit::library::rows::{RowConfig, RowKernel, RowOp, build_swiglu, build_swiglu_halves};

const OPS: [RowOp; 5] = RowOp::ALL;

/// The PTX of `op` over f32 or bf16 rows (`dtype`) built as `cfg`.
fn ptx_of(op: RowOp, dtype: ScalarType, cfg: RowConfig) -> String {
    let k = match dtype {
        ScalarType::F32 => RowKernel::build::<ty::F32>(Target::Sm90a, op, cfg),
        _ => RowKernel::build::<ty::Bf16>(Target::Sm90a, op, cfg),
    };
    k.unwrap().built.ptx().to_string()
}

/// Assembles with `-v` and returns ptxas's log (no spills allowed).
fn assemble_no_spills(ptx: &str, target: Target) {
    support::assemble(ptx, target);
    if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
        let out = ptxas.assemble(ptx, target, &["-v"]).unwrap();
        assert!(out.ok, "{}", out.log);
        assert!(
            !out.log.contains("bytes spill stores") || out.log.contains(" 0 bytes spill stores"),
            "{}",
            out.log
        );
    }
}

#[test]
fn every_row_kernel_assembles() {
    for op in OPS {
        for cols in [1024u32, 8192] {
            for vector in [true, false] {
                let cfg = RowConfig::for_cols(ScalarType::F32, cols, vector);
                assert!(cfg.max_cols() >= cols, "{cfg:?}");
                let k = RowKernel::build::<ty::F32>(Target::Sm90a, op, cfg).unwrap();
                let ptx = k.built.ptx();
                if vector {
                    assert!(ptx.contains("ld.global.v4.f32"), "{op:?} {cfg:?}\n{ptx}");
                } else {
                    assert!(!ptx.contains("ld.global.v4"), "{op:?} {cfg:?}");
                }
                assemble_no_spills(ptx, Target::Sm90a);
            }
        }
        let cfg = RowConfig::for_cols(ScalarType::F32, 4096, true);
        let k = RowKernel::build::<ty::F32>(Target::Sm80, op, cfg).unwrap();
        assemble_no_spills(k.built.ptx(), Target::Sm80);
    }
}

#[test]
fn swiglu_assembles() {
    for vector in [true, false] {
        let k = build_swiglu::<ty::F32>(Target::Sm90a, vector).unwrap();
        assert_eq!(k.ptx().contains("ld.global.v4.f32"), vector);
        assemble_no_spills(k.ptx(), Target::Sm90a);
        // Gate and up as the halves of one [rows, 2, cols] tensor.
        let k = build_swiglu_halves::<ty::F32>(Target::Sm90a, vector).unwrap();
        assert_eq!(
            k.ptx().matches("ld.global.v4.f32").count(),
            if vector { 2 } else { 0 }
        );
        assert_eq!(k.signature().argument_count(), 2);
        assemble_no_spills(k.ptx(), Target::Sm90a);
        let k = build_swiglu_halves::<ty::Bf16>(Target::Sm90a, vector).unwrap();
        assemble_no_spills(k.ptx(), Target::Sm90a);
    }
}

#[test]
fn configurations_fit_the_rows() {
    for cols in [1u32, 7, 1000, 4097, 8192, 16384] {
        let c = RowConfig::for_cols(ScalarType::F32, cols, false);
        assert!(
            c.max_cols() >= cols && c.threads % 32 == 0 && c.chunks <= 8 || c.threads == 1024,
            "{cols}: {c:?}"
        );
    }
}

#[test]
fn sixteen_bit_rows_move_16_bytes_at_a_time() {
    for op in OPS {
        let cfg = RowConfig::for_cols(ScalarType::Bf16, 8192, true);
        assert_eq!(cfg.vec, 8);
        let k = RowKernel::build::<ty::Bf16>(Target::Sm90a, op, cfg).unwrap();
        let ptx = k.built.ptx();
        assert!(ptx.contains("ld.global.v4.b32"), "{op:?}\n{ptx}");
        assert!(ptx.contains("st.global.v4.b32"), "{op:?}");
        // Widened by `cvt` (softmax), or (the norms, which keep the loaded words) by a
        // `prmt` of each half into the high half of a zero word.
        let widened = ptx.contains("cvt.f32.bf16") || ptx.contains("prmt.b32");
        assert!(widened && ptx.contains("cvt.rn.bf16.f32"), "{op:?}");
        assemble_no_spills(ptx, Target::Sm90a);
        let cfg = RowConfig::for_cols(ScalarType::F16, 1000, false);
        let k = RowKernel::build::<ty::F16>(Target::Sm90a, op, cfg).unwrap();
        assemble_no_spills(k.built.ptx(), Target::Sm90a);
    }
    for vector in [true, false] {
        let k = build_swiglu::<ty::Bf16>(Target::Sm90a, vector).unwrap();
        assert_eq!(k.ptx().contains("ld.global.v4.b32"), vector);
        assemble_no_spills(k.ptx(), Target::Sm90a);
    }
}

#[test]
fn long_rows_are_walked_in_tiles() {
    for op in OPS {
        for (dtype, cols) in [(ScalarType::F32, 262_144u32), (ScalarType::Bf16, 262_144)] {
            let vector = cols % 8 == 0;
            let cfg = RowConfig::for_cols(dtype, cols, vector);
            assert!(cfg.looped && cfg.max_cols() >= cols, "{cfg:?}");
            let k = match dtype {
                ScalarType::Bf16 => RowKernel::build::<ty::Bf16>(Target::Sm90a, op, cfg),
                _ => RowKernel::build::<ty::F32>(Target::Sm90a, op, cfg),
            }
            .unwrap();
            let ptx = k.built.ptx();
            assert!(ptx.contains("bra $L"), "{op:?}: no loop\n{ptx}");
            if vector {
                assert!(ptx.contains(".v4."), "{op:?} {cfg:?}");
            }
            assemble_no_spills(ptx, Target::Sm90a);
        }
    }
}

/// Rows past one CTA's registers and up to what an 8-CTA cluster holds stay in registers: a
/// cluster per row, its statistics reduced through distributed shared memory (`mapa` and
/// `st.shared::cluster`, PTX ISA 9.7.9.24 and 9.7.9.11) behind `barrier.cluster` (9.7.13.3).
#[test]
fn long_rows_take_a_cluster() {
    for op in OPS {
        for (dtype, cols) in [
            (ScalarType::F32, 40_001u32),
            (ScalarType::F32, 65_536),
            (ScalarType::Bf16, 65_536),
            (ScalarType::Bf16, 131_072),
        ] {
            let vector = cols % 8 == 0;
            let cfg = RowConfig::for_cols(dtype, cols, vector);
            assert!(
                !cfg.looped && cfg.cluster > 1 && cfg.max_cols() >= cols,
                "{dtype} {cols}: {cfg:?}"
            );
            let k = match dtype {
                ScalarType::Bf16 => RowKernel::build::<ty::Bf16>(Target::Sm90a, op, cfg),
                _ => RowKernel::build::<ty::F32>(Target::Sm90a, op, cfg),
            }
            .unwrap();
            let ptx = k.built.ptx();
            assert!(
                ptx.contains("%cluster_ctaid.x")
                    && ptx.contains("mapa.shared::cluster")
                    && ptx.contains("barrier.cluster.arrive"),
                "{op:?} {cfg:?}\n{ptx}"
            );
            // Every peer has started before the first write into its shared memory.
            let started = ptx.find("barrier.cluster.arrive.relaxed.aligned");
            let first_remote = ptx.find("st.shared::cluster");
            assert!(
                started.is_some() && started < first_remote,
                "{op:?}: a remote write before the cluster barrier"
            );
            assemble_no_spills(ptx, Target::Sm90a);
        }
    }
}

#[test]
fn row_args_follow_the_signature() {
    use ptxkit::library::rows::{MissingTensor, RowArgs};
    for op in OPS {
        let cfg = RowConfig::for_cols(ScalarType::F32, 1024, true);
        let k = RowKernel::build::<ty::F32>(Target::Sm90a, op, cfg).unwrap();
        let names: Vec<&str> = k
            .built
            .signature()
            .params
            .iter()
            .filter(|p| p.takes_argument())
            .map(|p| p.name())
            .collect();
        assert_eq!(names, op.tensors(), "{op:?}");
    }
    let Err(e) = RowOp::LayerNorm { eps: 1e-5 }.args(RowArgs::default()) else {
        panic!("a launch with no tensors was taken");
    };
    assert_eq!(
        e,
        MissingTensor {
            op: "layernorm",
            tensor: "x"
        }
    );
}

/// Every configuration the benchmark times ([`RowConfig::sweep`] for cols 1024 to 65536, f32 and
/// bf16, every op: the register forms without and with cache hints, the looped forms at 256 to
/// 1024 threads) fits its registers: ptxas reports no spills for any of them but those with a
/// register bound ([`RowConfig::min_ctas`]).
#[test]
fn benchmark_configurations_do_not_spill() {
    let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() else {
        return;
    };
    for op in OPS {
        for cols in [1024u32, 4096, 8192, 65536] {
            for dtype in [ScalarType::F32, ScalarType::Bf16] {
                let all = RowConfig::sweep_for(op, dtype, cols, true);
                assert_eq!(all[0], RowConfig::for_op(op, dtype, cols, true));
                assert!(RowConfig::sweep(dtype, cols, true).contains(&all[0]));
                for cfg in all {
                    let out = ptxas
                        .assemble(&ptx_of(op, dtype, cfg), Target::Sm90a, &["-v"])
                        .unwrap();
                    assert!(out.ok, "{}", out.log);
                    let used = out.log.lines().find(|l| l.contains("Used")).unwrap_or("");
                    eprintln!("{} {dtype} {cols} {cfg}: {used}", op.name());
                    // A register bound (`.minnctapersm`) trades spills for residency: the
                    // bench measures which wins, so those may spill.
                    assert!(
                        cfg.min_ctas > 0 || out.log.contains(" 0 bytes spill stores"),
                        "{op:?} {dtype} {cols} {cfg:?} spills:\n{}",
                        out.log
                    );
                }
            }
        }
    }
}

/// The variants the selftest checks on the GPU at odd widths (scalar and vector forms): every
/// cache hint on the register form (`createpolicy` for both priorities, `.L2::cache_hint` on the
/// row's loads, the weight's and the stores), and the looped form in 2048-column tiles with its
/// first pass kept in L2 (`.L1::evict_last`) and its last read streamed; ptxas assembles each
/// with no spills.
#[test]
fn hinted_and_small_tile_variants_assemble_at_odd_widths() {
    use ptxkit::library::rows::RowHints;
    for op in OPS {
        for cols in [1u32, 7, 1000, 4097, 8192] {
            for dtype in [ScalarType::F32, ScalarType::Bf16] {
                let vector = cols % RowConfig::vec_for(dtype) == 0;
                let hinted =
                    RowConfig::for_cols(dtype, cols, vector).with_hints(RowHints::ReuseStreamOut);
                let looped =
                    RowConfig::looped_with(dtype, vector, 256, 8).with_hints(RowHints::Reuse);
                assert_eq!((looped.tile(), looped.looped), (2048, true));
                for cfg in [hinted, looped] {
                    let ptx = &ptx_of(op, dtype, cfg);
                    let what = format!("{op:?} {dtype} {cols} {cfg}");
                    assert!(
                        ptx.contains("createpolicy.fractional.L2::evict_last.b64")
                            && ptx.contains("createpolicy.fractional.L2::evict_first.b64"),
                        "{what}\n{ptx}"
                    );
                    assert!(
                        ptx.contains("ld.global.L1::evict_first.L2::cache_hint"),
                        "{what}: the last read of the row is not streamed"
                    );
                    if op != RowOp::Softmax && op != RowOp::LogSoftmax {
                        // The weight, which every row reads, is kept.
                        assert!(
                            ptx.contains("ld.global.L1::evict_last.L2::cache_hint"),
                            "{what}"
                        );
                    }
                    if cfg.looped {
                        assert!(ptx.contains("bra $L"), "{what}: no loop");
                    } else {
                        assert!(
                            ptx.contains("st.global.L1::evict_first.L2::cache_hint"),
                            "{what}: outputs not streamed"
                        );
                    }
                    assemble_no_spills(ptx, Target::Sm90a);
                }
            }
        }
    }
}

/// `RowHints::NoAllocate`: the row's last read skips L1 (`ld.global.L1::no_allocate` with the
/// evict-first L2 policy), the weight is still kept, the outputs leave evict-first; ptxas
/// assembles each with no spills (one CTA a row, and a warp a row where a warp holds one).
#[test]
fn no_allocate_hint_reads_past_l1() {
    use ptxkit::library::rows::RowHints;
    for op in OPS {
        for cols in [7u32, 1000, 8192] {
            for dtype in [ScalarType::F32, ScalarType::Bf16] {
                let vector = cols % RowConfig::vec_for(dtype) == 0;
                let one = RowConfig::for_cols(dtype, cols, vector).with_hints(RowHints::NoAllocate);
                let vec = RowConfig::vec_for(dtype);
                let warp = one.rows_of(256, 32, cols.div_ceil(32 * vec) * vec);
                // (A warp holds a row of 1000, not of 8192: 256 f32 values a lane.)
                let cfgs = if cols <= 1000 {
                    vec![one, warp]
                } else {
                    vec![one]
                };
                for cfg in cfgs {
                    let ptx = &ptx_of(op, dtype, cfg);
                    let what = format!("{op:?} {dtype} {cols} {cfg}");
                    assert!(
                        ptx.contains("ld.global.L1::no_allocate.L2::cache_hint"),
                        "{what}: the row's last read is allocated in L1"
                    );
                    assert!(
                        ptx.contains("st.global.L1::evict_first.L2::cache_hint"),
                        "{what}: outputs not streamed"
                    );
                    assert!(cfg.to_string().contains('n'), "{what}: unnamed hint");
                    assemble_no_spills(ptx, Target::Sm90a);
                }
            }
        }
    }
}

/// The sweep starts with the default, lists each configuration once, names each one
/// distinctly (the bench's `ROWS_CONFIG` picks by name), and has looped forms only where a
/// tile is less than twice the row.
#[test]
fn the_sweep_is_distinct_and_named() {
    for cols in [1024u32, 4096, 8192, 65536] {
        for dtype in [ScalarType::F32, ScalarType::Bf16] {
            let all = RowConfig::sweep(dtype, cols, true);
            assert_eq!(all[0], RowConfig::for_cols(dtype, cols, true));
            let names: Vec<String> = all.iter().map(|c| c.to_string()).collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{names:?}");
            // Looped forms where the row spans more than one tile, or fills more than half
            // of one (the second pass reading the row again, as torch.compile's do).
            assert!(
                all.iter().all(|c| !c.looped || c.tile() < 2 * cols),
                "{names:?}"
            );
        }
    }
    let c = RowConfig::looped_with(ScalarType::Bf16, true, 512, 8)
        .with_hints(ptxkit::library::rows::RowHints::Reuse);
    assert_eq!(c.to_string(), "L1x512x8h");
    assert_eq!(
        RowConfig::for_cols(ScalarType::Bf16, 8192, true).to_string(),
        "1x256x32"
    );
}

/// A persistent row kernel (one CTA a row, in registers or looped) states a persistent grid and
/// walks the rows in a loop stepped by the grid's size (`%nctaid.x`); a cluster per row cannot
/// be persistent. ptxas assembles each with no spills.
#[test]
fn persistent_row_kernels_loop_over_rows() {
    use ptxkit::library::rows::RowHints;
    for op in OPS {
        for cfg in [
            RowConfig::for_cols(ScalarType::Bf16, 8192, true),
            RowConfig::looped_with(ScalarType::Bf16, true, 512, 8),
        ] {
            let cfg = cfg.with_hints(RowHints::Reuse).on_persistent_grid();
            assert!(cfg.to_string().starts_with('P'), "{cfg}");
            let k = RowKernel::build::<ty::Bf16>(Target::Sm90a, op, cfg).unwrap();
            assert!(k.built.launch_spec().persistent.is_some(), "{op:?} {cfg}");
            let ptx = k.built.ptx();
            assert!(
                ptx.contains("%nctaid.x") && ptx.contains("bra $L"),
                "{op:?} {cfg}\n{ptx}"
            );
            // The row's offset (`row * cols`) is computed once a row, as in the kernel of one
            // CTA a row, not once an access: the loop's counter holds still within a trip.
            let once = RowKernel::build::<ty::Bf16>(
                Target::Sm90a,
                op,
                RowConfig {
                    persistent: false,
                    ..cfg
                },
            )
            .unwrap();
            assert_eq!(
                ptx.matches("mul.lo.u32").count(),
                once.built.ptx().matches("mul.lo.u32").count(),
                "{op:?} {cfg}\n{ptx}"
            );
            assemble_no_spills(ptx, Target::Sm90a);
        }
        let cluster = RowConfig::for_cols(ScalarType::F32, 65536, true).on_persistent_grid();
        assert!(cluster.cluster > 1);
        assert!(RowKernel::build::<ty::F32>(Target::Sm90a, op, cluster).is_err());
    }
}

/// Every SwiGLU configuration the bench sweeps assembles without spills; each thread's loads
/// all come before its first store, streamed (`.L1::evict_first` + an evict-first policy) when
/// asked.
#[test]
fn swiglu_configurations_assemble() {
    use ptxkit::library::rows::{SwigluConfig, build_swiglu_with};
    let all = SwigluConfig::sweep();
    assert_eq!(all[0], SwigluConfig::default());
    for cfg in all {
        for vector in [true, false] {
            let k = build_swiglu_with::<ty::Bf16>(Target::Sm90a, vector, cfg).unwrap();
            let ptx = k.ptx();
            let last_load = ptx.rfind("ld.global").unwrap();
            let first_store = ptx.find("st.global").unwrap();
            assert!(last_load < first_store, "{cfg}\n{ptx}");
            assert_eq!(
                ptx.contains("ld.global.L1::evict_first.L2::cache_hint")
                    && ptx.contains("st.global.L1::evict_first.L2::cache_hint"),
                cfg.hints,
                "{cfg}"
            );
            if vector {
                assert_eq!(
                    ptx.matches("ld.global").count(),
                    2 * cfg.vectors as usize,
                    "{cfg}"
                );
            }
            assemble_no_spills(ptx, Target::Sm90a);
        }
    }
    let bad = SwigluConfig {
        threads: 100,
        ..SwigluConfig::default()
    };
    assert!(build_swiglu_with::<ty::F32>(Target::Sm90a, true, bad).is_err());
}

/// LayerNorm's two statistics take one barrier round, as RMSNorm's one (`reduce_moments`:
/// each thread's mean and squared deviations, merged per warp and then across the warps), in
/// registers and looped, on one CTA a row or a persistent grid; in a cluster, a round for the
/// mean and one for the squared deviations. The merge across warps holds a few registers, not
/// three per warp: the 1024-thread form fits the 32 registers of full occupancy.
#[test]
fn layer_norm_statistics_take_one_barrier_round() {
    use ptxkit::library::rows::RowHints;
    let ln = RowOp::LayerNorm { eps: 1e-5 };
    let rms = RowOp::RmsNorm { eps: 1e-6 };
    for cfg in [
        RowConfig::for_cols(ScalarType::Bf16, 8192, true),
        RowConfig::for_cols(ScalarType::Bf16, 8192, true)
            .with_hints(RowHints::Reuse)
            .on_persistent_grid(),
        RowConfig::looped_with(ScalarType::Bf16, true, 512, 8),
        RowConfig::for_cols(ScalarType::F32, 1000, false),
    ] {
        let bars = |op| {
            let k = RowKernel::build::<ty::Bf16>(Target::Sm90a, op, cfg).unwrap();
            k.built.ptx().matches("bar.sync").count()
        };
        assert_eq!(bars(ln), bars(rms), "{cfg}");
    }
    let cluster = RowConfig::for_cols(ScalarType::F32, 65536, true);
    let waits = |op| {
        let k = RowKernel::build::<ty::F32>(Target::Sm90a, op, cluster).unwrap();
        k.built.ptx().matches("barrier.cluster.wait").count()
    };
    assert_eq!(waits(ln), waits(rms) + 1, "{cluster}");
    let wide = RowConfig::for_cols(ScalarType::Bf16, 8192, true).rows_of(1024, 1024, 8);
    let k = RowKernel::build::<ty::Bf16>(Target::Sm90a, ln, wide).unwrap();
    if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
        let out = ptxas
            .assemble(k.built.ptx(), Target::Sm90a, &["-v"])
            .unwrap();
        assert!(out.log.contains("Used 32 registers"), "{}", out.log);
    }
}

/// The default configuration is the one the H100's sweep ranked first for each row length
/// (`notes/rows-run7-h100-bench.log`): 256 threads where the row has that many accesses.
#[test]
fn defaults_follow_the_measured_winners() {
    let f32_ = ScalarType::F32;
    let bf16 = ScalarType::Bf16;
    for (dtype, cols, name) in [
        (f32_, 1024, "1x256x4"),
        (bf16, 1024, "1x128x8"),
        (f32_, 4096, "1x256x16"),
        (bf16, 4096, "1x256x16"),
        (f32_, 8192, "1x256x32"),
        (bf16, 8192, "1x256x32"),
        (f32_, 65536, "4x512x32"),
        (bf16, 65536, "8x256x32"),
    ] {
        assert_eq!(
            RowConfig::for_cols(dtype, cols, true).to_string(),
            name,
            "{dtype:?} {cols}"
        );
    }
}

/// `reduce_moments` wants one predicate per value, and moments are not merged over a cluster
/// (its CTAs exchange one word a round): both refused with a typed error, not a wrong kernel.
#[test]
fn moments_refuse_what_they_cannot_merge() {
    use ptxkit::kernel::ReduceScope;
    let (mut k, _, t, v) = support::four_per_thread("moments", 1024, 256);
    let p = k.cmp(ptxkit::isa::builder::CmpOp::Lt, t * 4, 1024).unwrap();
    assert!(k.reduce_moments(&v, &[p; 3], ReduceScope::Cta).is_err());
    let m = k.reduce_moments(&v, &[p; 4], ReduceScope::Thread).unwrap();
    assert!(k.merge_moments(m, ReduceScope::Cluster).is_err());
    k.merge_moments(m, ReduceScope::Warpgroup).unwrap();
    let ptx = k.finish().unwrap().ptx().to_string();
    // A warpgroup's named barrier (id 1 + warpgroup, 128 threads), once.
    assert_eq!(ptx.matches("bar.sync").count(), 1, "{ptx}");
}

/// bf16 rows in the vector form are kept as the loaded `.b32` words (no 16-bit register split
/// out of them) and the norms' weight and bias are loaded an access at a time beside the
/// output: ptxas 13.0 fits LayerNorm of 8192 columns at 256 threads x 32 in 64 registers
/// (4 CTAs an SM; 80 before; the library's default there, the H200 sweep's best), 128 threads
/// x 64 packed in 96 (5 CTAs an SM; 156 before), and RMSNorm at 256 x 32 packed in 40 (64
/// before).
#[test]
fn bf16_norms_hold_words_in_few_registers() {
    use ptxkit::library::rows::RowHints;
    let ln = RowOp::LayerNorm { eps: 1e-5 };
    let rms = RowOp::RmsNorm { eps: 1e-6 };
    let base = RowConfig::for_cols(ScalarType::Bf16, 8192, true);
    assert_eq!(RowConfig::for_op(ln, ScalarType::Bf16, 8192, true), base);
    let packed = base.with_hints(RowHints::Reuse).packed_form();
    let narrow = base
        .rows_of(128, 128, 64)
        .with_hints(RowHints::Reuse)
        .packed_form();
    assert_eq!(narrow.to_string(), "1x128x64hp");
    for (op, cfg, most) in [(ln, base, 64), (ln, narrow, 96), (rms, packed, 40)] {
        let ptx = ptx_of(op, ScalarType::Bf16, cfg);
        assert!(!ptx.contains("mov.b32 {%h"), "{cfg}: split halves");
        assert!(
            ptx.contains("ld.global.L1::evict_first.L2::cache_hint.v4.b32")
                || ptx.contains("ld.global.v4.b32"),
            "{cfg}"
        );
        let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() else {
            continue;
        };
        let out = ptxas.assemble(&ptx, Target::Sm90a, &["-v"]).unwrap();
        let used: u32 = out
            .log
            .split("Used ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(used <= most, "{} {cfg}: {used} registers", op.name());
        assert!(out.log.contains(" 0 bytes spill stores"), "{}", out.log);
    }
}

/// [`RowConfig::for_op`] picks the H200 sweeps' winners (`notes/session5-call4-h200-rows.log`,
/// `notes/session6-h200-rows-sweeps.log`) for the vector form, and leaves the scalar form and f16 at [`RowConfig::for_cols`].
#[test]
fn library_defaults_are_the_h200_sweeps_best() {
    let (f32, bf16) = (ScalarType::F32, ScalarType::Bf16);
    let ln = RowOp::LayerNorm { eps: 1e-5 };
    let rms = RowOp::RmsNorm { eps: 1e-6 };
    let res = RowOp::ResidualRmsNorm { eps: 1e-6 };
    for (op, dtype, cols, want) in [
        (RowOp::Softmax, f32, 8192, "L1x512x8H"),
        (rms, f32, 8192, "L1x512x8H"),
        (res, f32, 8192, "1x1024x8"),
        (ln, f32, 8192, "L1x512x16h"),
        (RowOp::Softmax, bf16, 8192, "1x256x32"),
        (rms, bf16, 8192, "L1x512x16h"),
        (res, bf16, 8192, "L1x1024x8"),
        (ln, bf16, 8192, "1x256x32"),
        (rms, f32, 4096, "L1x512x8h"),
        (ln, f32, 4096, "L1x512x8h"),
        (res, f32, 4096, "1x256x16"),
        (RowOp::Softmax, f32, 1024, "1x32x32"),
        (rms, f32, 1024, "1x32x32"),
        (ln, f32, 1024, "1x32x32"),
        (res, f32, 1024, "1x256x4"),
        (RowOp::Softmax, bf16, 1024, "1x32x32"),
        (rms, bf16, 1024, "1x128x8"),
        (ln, bf16, 1024, "1x64x32/32"),
        (ln, bf16, 65536, "L1x1024x8h"),
        (ln, f32, 65536, "4x512x32"),
    ] {
        assert_eq!(
            RowConfig::for_op(op, dtype, cols, true).to_string(),
            want,
            "{} {dtype} {cols}",
            op.name()
        );
    }
    for op in OPS {
        for dtype in [f32, bf16] {
            assert_eq!(
                RowConfig::for_op(op, dtype, 8190, false),
                RowConfig::for_cols(dtype, 8190, false)
            );
        }
        assert_eq!(
            RowConfig::for_op(op, ScalarType::F16, 8192, true),
            RowConfig::for_cols(ScalarType::F16, 8192, true)
        );
    }
}
