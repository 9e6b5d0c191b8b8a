//! Issue 18 on the CPU: the planted-bug ring kernels build, assemble with ptxas and are refused at
//! build time where the protocol check can see the bug; the debug build's wait sites point at
//! the waits in the PTX; the printf check kernel assembles. (The GPU runs are in
//! `ptxkit selftest`; they have not run where no GPU is.)

mod support;

use ptxkit::isa::Target;
use ptxkit::runtime::decode_records;
use ptxkit::selftest::hang_checks::{
    PRINTF_LINES, PlantedBug, RingBuildError, build_printf, build_ring, check_diagnosis,
    output_has_lines, ring_reference,
};
use smem::pipeline::hang::{
    BUFFER_BYTES, OBSERVED_PARITY1_DONE, OBSERVED_VALID, PROGRESS_UNCOUNTED, RECORD_BYTES,
    RECORD_MAGIC, Word,
};
use smem::pipeline::protocol::ProtocolError;
use smem::pipeline::sync::WaitMode;

const BUGS: [PlantedBug; 4] = [
    PlantedBug::None,
    PlantedBug::ExpectTx,
    PlantedBug::WrongPhase,
    PlantedBug::MissingArrive,
];

#[test]
fn every_ring_builds_and_assembles_in_both_modes() {
    for bug in BUGS {
        for mode in [WaitMode::Spin, WaitMode::Bounded] {
            let ring = build_ring(Target::Sm90a, bug, mode, false)
                .unwrap_or_else(|e| panic!("{bug:?} {mode:?}: {e}"));
            let ptx = ring.built.ptx();
            support::assemble(ptx, Target::Sm90a);
            match mode {
                WaitMode::Spin => {
                    assert!(ring.sites.sites.is_empty());
                    assert!(!ptx.contains("globaltimer") && !ptx.contains("trap;"));
                }
                WaitMode::Bounded => {
                    // The producer's wait on empty[s], the consumers' on full[s].
                    assert_eq!(ring.sites.sites.len(), 2);
                    let lines: Vec<&str> = ptx.lines().collect();
                    for s in &ring.sites.sites {
                        let l = s.ptx_line.expect("every site is found in the PTX");
                        assert!(
                            lines[l - 1].contains("mbarrier.try_wait.parity"),
                            "{}",
                            lines[l - 1]
                        );
                    }
                    let full = ring.sites.sites.iter().find(|s| s.array == "full").unwrap();
                    let tx = if bug == PlantedBug::ExpectTx {
                        5120
                    } else {
                        4096
                    };
                    assert_eq!((full.expect_tx, full.arrivals, full.indexed), (tx, 1, true));
                    assert!(ptx.contains(".visible .global .align 8 .b8 ptxkit_hang[24]"));
                }
            }
        }
    }
}

#[test]
fn the_protocol_check_refuses_what_it_can_see() {
    let err = |bug| build_ring(Target::Sm90a, bug, WaitMode::Bounded, true).err();
    assert!(err(PlantedBug::None).is_none());
    let e = err(PlantedBug::ExpectTx).unwrap();
    assert_eq!(
        e.to_string(),
        "kernel `ring_expect_tx`: barrier `full[0]`: expect_tx announces 5120 bytes per phase, \
         the copies completing on it deliver 4096"
    );
    assert!(matches!(
        e,
        RingBuildError::Protocol {
            source: ProtocolError::TxMismatch { .. },
            ..
        }
    ));
    let e = err(PlantedBug::MissingArrive).unwrap();
    assert!(
        matches!(&e, RingBuildError::Protocol { source: ProtocolError::ArrivalsShort { barrier, count: 1, arrivals: 0 }, .. }
            if barrier.to_string() == "full[0]"),
        "{e}"
    );
    // A wrong start phase is consistent bookkeeping: only the debug build finds it.
    assert!(err(PlantedBug::WrongPhase).is_none());
    // Release builds are checked the same way.
    assert!(build_ring(Target::Sm90a, PlantedBug::ExpectTx, WaitMode::Spin, true).is_err());
}

/// The records a planted bug's debug build writes on the GPU, as the ring runs: in each CTA the
/// producer (warp 0, its trips counted) gives up on `empty[0]` phase 0, on trip 0 with the wrong
/// phase and two trips on otherwise, and claims its slot first; the consumers (warps 1, 2, their
/// trips not counted: `PROGRESS_UNCOUNTED`, as the kernel writes it) give up on `full[0]` phase
/// 0. Every barrier is observed in phase 0. Slots `(cta, warp)` in `missing` stay empty (a warp
/// that wrote no record before the trap).
fn gpu_like_records(
    bug: PlantedBug,
    sites: &smem::pipeline::hang::HangSites,
    missing: &[(u32, u32)],
) -> Vec<u8> {
    let site = |array: &str| sites.sites.iter().position(|s| s.array == array).unwrap() as u32;
    let producer_trips = if bug == PlantedBug::WrongPhase { 0 } else { 2 };
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let mut slot = 0;
    for cta in 0..2u32 {
        for (warp, array, trips, start) in [
            (0, "empty", producer_trips, 100),
            (1, "full", PROGRESS_UNCOUNTED, 200),
            (2, "full", PROGRESS_UNCOUNTED, 300),
        ] {
            if missing.contains(&(cta, warp)) {
                continue;
            }
            let rec = &mut buffer[slot * RECORD_BYTES..][..RECORD_BYTES];
            let mut put =
                |w: Word, v: u32| rec[w.offset() as usize..][..4].copy_from_slice(&v.to_le_bytes());
            put(Word::Magic, RECORD_MAGIC);
            put(Word::Site, site(array));
            put(Word::CtaX, cta);
            put(Word::ClusterX, cta);
            put(Word::Warp, warp);
            put(Word::StartLo, start);
            put(Word::Progress, trips);
            put(Word::Observed, OBSERVED_VALID | OBSERVED_PARITY1_DONE);
            slot += 1;
        }
    }
    buffer
}

#[test]
fn each_planted_bug_gets_its_own_headline_from_its_records() {
    let mut headlines = Vec::new();
    for bug in &BUGS[1..] {
        let ring = build_ring(Target::Sm90a, *bug, WaitMode::Bounded, false).unwrap();
        let buffer = gpu_like_records(*bug, &ring.sites, &[]);
        let d = decode_records(&buffer, &ring.sites, 500_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(d.waits.len(), 6);
        check_diagnosis(*bug, &d).unwrap_or_else(|e| panic!("{bug:?}: {e}"));
        // Another bug's expectation does not pass.
        for other in &BUGS[1..] {
            if other != bug {
                assert!(check_diagnosis(*other, &d).is_err(), "{bug:?} as {other:?}");
            }
        }
        headlines.push(d.to_string().lines().next().unwrap().to_string());
    }
    let starts = [
        "hang in `ring_expect_tx`: wrong expect_tx: `full[0]` phase 0 expects 5120 tx bytes per \
         phase but the copies completing on it deliver 4096, so it never completes; its arrivers \
         got past their part, and CTA (0,0,0) warp 1 lane 0 waited > 500 ms (expects 5120 tx \
         bytes, 1 arrival; trip 0 (inferred); observed in phase 0;",
        "hang in `ring_wrong_phase`: wrong phase: a wait on `empty[0]` phase 0 on trip 0 round \
         the ring, where its role waits on phase 1; CTA (0,0,0) warp 0 lane 0 waited > 500 ms \
         (expects 2 arrivals; trip 0; observed in phase 0;",
        "hang in `ring_missing_arrive`: missing arrive: `full[0]` phase 0 expects 1 arrival per \
         phase but the kernel makes 0, so it never completes; its arrivers got past their part, \
         and CTA (0,0,0) warp 1 lane 0 waited > 500 ms (expects 4096 tx bytes, 1 arrival; trip \
         0 (inferred);",
    ];
    for (h, want) in headlines.iter().zip(starts) {
        assert!(h.starts_with(want), "{h}\n  wanted: {want}");
    }
    // The baseline has no planted cause to find.
    let ring = build_ring(Target::Sm90a, PlantedBug::None, WaitMode::Bounded, false).unwrap();
    let d = decode_records(
        &gpu_like_records(PlantedBug::ExpectTx, &ring.sites, &[]),
        &ring.sites,
        1,
    )
    .unwrap()
    .unwrap();
    assert!(check_diagnosis(PlantedBug::None, &d).is_err());
}

#[test]
fn the_headline_holds_when_some_warps_wrote_no_record() {
    // A trap ends the grid a grace period after the first wait gives up, so a slow warp may
    // write nothing: the cause is still named from what is there. The wrong phase needs one
    // producer's record (its trip is what tells the phase is wrong); the byte and arrival
    // mismatches need only a consumer's.
    let cases: [(PlantedBug, &[(u32, u32)]); 7] = [
        (PlantedBug::ExpectTx, &[(0, 0), (1, 0)]),
        (PlantedBug::ExpectTx, &[(0, 0), (0, 1), (0, 2)]),
        (PlantedBug::ExpectTx, &[(0, 1), (1, 0), (1, 1), (1, 2)]),
        (PlantedBug::WrongPhase, &[(0, 0)]),
        (
            PlantedBug::WrongPhase,
            &[(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)],
        ),
        (PlantedBug::MissingArrive, &[(0, 0), (1, 0)]),
        (PlantedBug::MissingArrive, &[(0, 2), (1, 1), (1, 2)]),
    ];
    for (bug, missing) in cases {
        let ring = build_ring(Target::Sm90a, bug, WaitMode::Bounded, false).unwrap();
        let buffer = gpu_like_records(bug, &ring.sites, missing);
        let d = decode_records(&buffer, &ring.sites, 500_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(d.waits.len(), 6 - missing.len());
        check_diagnosis(bug, &d).unwrap_or_else(|e| panic!("{bug:?} without {missing:?}: {e}"));
    }
    // Without any producer record a wrong phase looks like a stall of `full[0]`: the check
    // says so rather than passing.
    let bug = PlantedBug::WrongPhase;
    let ring = build_ring(Target::Sm90a, bug, WaitMode::Bounded, false).unwrap();
    let buffer = gpu_like_records(bug, &ring.sites, &[(0, 0), (1, 0)]);
    let d = decode_records(&buffer, &ring.sites, 500_000_000)
        .unwrap()
        .unwrap();
    let e = check_diagnosis(bug, &d).unwrap_err().to_string();
    support::assert_contains(&e, "expected WrongPhase");
    support::assert_contains(&e, "`full[0]` phase 0 never completed although");
}

#[test]
fn the_printf_kernel_assembles() {
    let k = build_printf(Target::Sm90a).unwrap();
    support::assemble(k.ptx(), Target::Sm90a);
    assert!(k.ptx().contains("call.uni (param"), "{}", k.ptx());
    assert_eq!(k.ptx().matches("call.uni").count(), 1);
    // Two lines, each once; a third copy or a missing one is a failure.
    let out = format!("{}\nPASS printf\n{}\n", PRINTF_LINES[1], PRINTF_LINES[0]);
    assert!(output_has_lines(&out, PRINTF_LINES).is_ok());
    let twice = format!("{out}{}\n", PRINTF_LINES[0]);
    let e = output_has_lines(&twice, PRINTF_LINES)
        .unwrap_err()
        .to_string();
    assert!(e.contains("printed 2 times"), "{e}");
    assert!(output_has_lines(PRINTF_LINES[0], PRINTF_LINES).is_err());
}

#[test]
fn the_reference_sums_half_columns() {
    // src[r][c] = 1 everywhere: each output is 16 rows x 4 k-blocks.
    let src = vec![1f32; 64 * 128];
    assert!(ring_reference(&src).iter().all(|&v| v == 64.0));
}

#[test]
fn the_gemm_debug_build_assembles() {
    use ptxkit::library::gemm::{GemmConfig, build, build_with};
    let large = GemmConfig::large();
    for cfg in [
        large,
        GemmConfig {
            cluster_m: 2,
            ..large
        },
    ] {
        let g = build_with(&cfg, WaitMode::Bounded).unwrap();
        let (m, sites) = (g.built.module().clone(), g.sites);
        let text = m.to_ptx().unwrap();
        // The producer's wait on empty[s], the consumers' on full[s], each found in the text;
        // in a CTA pair the producer's tail waits on empty[s] once more (`Ring::drain`).
        let names: Vec<&str> = sites.sites.iter().map(|s| s.array.as_str()).collect();
        match cfg.cluster_m {
            1 => assert_eq!(names, ["empty", "full"]),
            _ => assert_eq!(names, ["empty", "empty", "full"]),
        }
        let full = sites.sites.iter().find(|s| s.array == "full").unwrap();
        assert_eq!(full.expect_tx, u64::from(cfg.stage_bytes()));
        assert_eq!(sites.sites[0].arrivals, 2 * cfg.cluster_m);
        assert!(sites.sites.iter().all(|s| s.ptx_line.is_some()));
        if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
            let out = ptxas.assemble(&text, Target::Sm90a, &["-v"]).unwrap();
            assert!(out.ok, "{}: ptxas rejected it:\n{}", cfg.name(), out.log);
            // No spills, no serialised wgmma (C7515), no ignored setmaxnreg (C7508), and the
            // release build's register count: the debug waits cost the main loop nothing there.
            assert!(
                out.log
                    .contains("0 bytes spill stores, 0 bytes spill loads"),
                "{}",
                out.log
            );
            assert!(
                !out.log.contains("C7515") && !out.log.contains("C7508"),
                "{}",
                out.log
            );
            let regs = |log: &str| {
                log.lines().find_map(|l| {
                    l.split("Used ")
                        .nth(1)?
                        .split(' ')
                        .next()?
                        .parse::<u32>()
                        .ok()
                })
            };
            let release = build(&cfg).unwrap().to_ptx().unwrap();
            let rel = ptxas.assemble(&release, Target::Sm90a, &["-v"]).unwrap();
            assert_eq!(regs(&out.log), regs(&rel.log), "{}\n{}", out.log, rel.log);
        }
        // The release build has no debug code.
        let release = build(&cfg).unwrap().to_ptx().unwrap();
        assert!(!release.contains("globaltimer") && !release.contains("ptxkit_hang"));
    }
}

#[test]
fn debug_and_printf_kernels_round_trip_and_validate() {
    use ptxkit::isa::parse::parse;
    use ptxkit::isa::validate::{Options, Severity, check};
    let ring = build_ring(Target::Sm90a, PlantedBug::None, WaitMode::Bounded, true).unwrap();
    let printf = build_printf(Target::Sm90a).unwrap();
    for (name, text) in [("ring", ring.built.ptx()), ("printf", printf.ptx())] {
        let parsed = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            parsed.module.print(),
            text,
            "{name}: the parser's print differs"
        );
        let errors: Vec<_> = check(text, &Options::default())
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[test]
fn tile_op_barriers_are_named_and_their_waits_bounded_in_a_debug_build() {
    use ptxkit::selftest::tile_checks::{build_bulk_cluster_with, build_tma_with};
    let tma = |multicast| build_tma_with(Target::Sm90a, multicast, WaitMode::Bounded).unwrap();
    let bulk = build_bulk_cluster_with(Target::Sm90a, WaitMode::Bounded).unwrap();
    for ((built, sites), bytes) in [(tma(false), 8192), (tma(true), 8192), (bulk, 1024)] {
        support::assemble(built.ptx(), Target::Sm90a);
        // The one wait, on `bar`, bounded and found in the PTX; the bytes the tile op's copy
        // delivers recorded against it, equal to what the leader announces.
        let [site] = &sites.sites[..] else {
            panic!("{}: {sites:?}", built.ptx())
        };
        assert_eq!(
            (
                site.array.as_str(),
                site.indexed,
                site.arrivals,
                site.arrive_ops
            ),
            ("bar", false, 1, 1)
        );
        assert_eq!((site.expect_tx, site.copied), (bytes, bytes));
        let line = site.ptx_line.expect("the wait is found in the PTX");
        let lines: Vec<&str> = built.ptx().lines().collect();
        assert!(lines[line - 1].contains("mbarrier.try_wait.parity"));
        assert!(built.ptx().contains("%globaltimer"));
    }
    // The release builds the GPU checks run have no debug code.
    let (release, sites) = build_tma_with(Target::Sm90a, false, WaitMode::Spin).unwrap();
    assert!(sites.sites.is_empty() && !release.ptx().contains("%globaltimer"));
}
