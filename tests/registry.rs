//! The one registry of kernels ([`ptxkit::registry`]): every entry dumps PTX that ptxas
//! assembles for its targets (sm_90a for all; sm_80 too for all but the Hopper ones, which
//! may refuse it), the names are unique, and every kernel `ptxkit selftest` checks is
//! an entry that `ptxkit selftest --only NAME` knows.

mod support;

use std::collections::HashSet;

use ptxkit::isa::Target;
use ptxkit::registry::{Home, Selftest, entry, registry};

#[test]
fn every_entry_assembles_for_its_targets() {
    for e in registry() {
        let ptx = (e.build)(Target::Sm90a)
            .and_then(|m| m.to_ptx())
            .unwrap_or_else(|err| panic!("{} for sm_90a: {err}", e.name));
        support::assemble(&ptx, Target::Sm90a);
        match (e.build)(Target::Sm80).and_then(|m| m.to_ptx()) {
            Ok(ptx) => support::assemble(&ptx, Target::Sm80),
            Err(err) => assert!(e.hopper, "{} for sm_80: {err}", e.name),
        }
    }
}

#[test]
fn names_are_unique_and_found() {
    let mut seen = HashSet::new();
    for e in registry() {
        assert!(seen.insert(e.name), "{} twice", e.name);
        assert!(std::ptr::eq(entry(e.name).unwrap(), e));
    }
    assert!(entry("no_such_kernel").is_none());
}

/// The row kernels are library entries: each op for f32, f16 and bf16.
#[test]
fn the_row_kernels_are_registered() {
    for op in [
        "softmax",
        "log_softmax",
        "rmsnorm",
        "residual_rmsnorm",
        "layernorm",
        "swiglu",
    ] {
        for dtype in ["f32", "f16", "bf16"] {
            let name = format!("{op}_{dtype}");
            let e = entry(&name).unwrap_or_else(|| panic!("{name} is not registered"));
            assert_eq!(e.home, Home::Library, "{name}");
        }
    }
}

/// The checks `ptxkit selftest` runs: each an entry, in registry order; a harness kernel is in
/// the registry only for its check.
#[test]
fn every_selftest_name_is_an_entry() {
    let names: Vec<&str> = registry()
        .iter()
        .filter(|e| e.selftest.is_some())
        .map(|e| e.name)
        .collect();
    // Every check `ptxkit selftest` ran before the registry, in its order.
    assert_eq!(
        names,
        [
            "vector_add",
            "scale",
            "tma_copy",
            "cluster_exchange",
            "gemm_fp8",
            "gemm_fp8_block",
            "gemm_grouped",
            "gemm_grouped_masked",
            "gemm_grouped_fp8_block",
            "gemm_grouped_fp8_block_masked",
            "gemm_debug",
            "attention",
            "attention_varlen",
            "attention_backward",
            "decode",
            "tile_copies",
            "tile_matrix",
            "tile_tma",
            "tile_tma_multicast",
            "tile_wgmma_bf16",
            "tile_wgmma_f16",
            "tile_wgmma_tf32",
            "tile_wgmma_e4m3",
            "tile_wgmma_e5m2",
            "tile_wgmma_regs_a",
            "tile_bulk_cluster",
            "tile_epilogue",
            "gemm_epilogue",
            "row_kernels",
            "row_kernels_packed",
            "bad_launches",
            "hang_baseline",
            "hang_expect_tx",
            "hang_wrong_phase",
            "hang_missing_arrive",
            "printf",
        ]
    );
    // Without a GPU, `--only NAME` knows each (exit 3: nothing run); on a GPU it would run
    // them, planted hangs included, in this process, so it is not asked.
    if ptxkit::runtime::Device::new(0).is_err() {
        for name in &names {
            let out = ptxkit::cli::run(&["selftest".into(), "--only".into(), name.to_string()])
                .unwrap_or_else(|e| panic!("selftest --only {name}: {}", e.message));
            assert_eq!(out.code, 3, "{name}: {}", out.stdout);
        }
    }
    for e in registry() {
        if e.home == Home::Selftest {
            assert!(
                e.selftest.is_some(),
                "{} is a harness kernel without a check",
                e.name
            );
        }
    }
    let isolated: Vec<&str> = registry()
        .iter()
        .filter(|e| matches!(e.selftest, Some(Selftest::Isolated(..))))
        .map(|e| e.name)
        .collect();
    assert_eq!(
        isolated,
        [
            "gemm_debug",
            "attention",
            "attention_varlen",
            "attention_backward",
            "decode",
            "hang_baseline",
            "hang_expect_tx",
            "hang_wrong_phase",
            "hang_missing_arrive",
            "printf"
        ]
    );
}

/// No import ring: nothing in `src/library/` uses the self-test harness or the registry (doc
/// comments may name them).
#[test]
fn the_library_does_not_import_the_harness() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/library"),
        &mut files,
    );
    assert!(files.len() > 5);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for used in [
                "selftest::",
                "crate::registry",
                "ptxkit::registry",
                "GpuCtx",
            ] {
                assert!(
                    !code.contains(used),
                    "{}:{}: the library uses {used}: {line}",
                    f.display(),
                    i + 1
                );
            }
        }
    }
}
