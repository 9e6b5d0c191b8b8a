//! The attention kernels assemble with ptxas for sm_90a (the CI has no GPU; this is its check):
//! every configuration, with no register spills, no "wgmma serialized" warning (C7515) and no
//! ignored `setmaxnreg` (C7508); one configuration's exact PTX against its golden file.

use std::path::PathBuf;

use ptxkit::isa::{ScalarType, Target, ptxas};
use ptxkit::library::attention::{AttentionConfig, build};

#[test]
fn attention_kernels_assemble_without_spills() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for cfg in AttentionConfig::all() {
        let built = build(Target::Sm90a, &cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        let out = ptxas.assemble(built.ptx(), Target::Sm90a, &["-v"]).unwrap();
        assert!(out.ok, "{}: ptxas rejected it:\n{}", cfg.name(), out.log);
        assert!(
            out.log
                .contains("0 bytes spill stores, 0 bytes spill loads"),
            "{}: spills\n{}",
            cfg.name(),
            out.log
        );
        for warning in ["C7515", "C7508", "warning"] {
            assert!(
                !out.log.contains(warning),
                "{}: {warning}\n{}",
                cfg.name(),
                out.log
            );
        }
        let regs = out.log.lines().find(|l| l.contains("Used")).unwrap_or("");
        eprintln!("{}: {regs}", cfg.name());
        assert!(
            built.launch_spec().dynamic_smem_bytes <= cfg.smem_bytes(),
            "{}: the pool needs {} bytes, the configuration says {}",
            cfg.name(),
            built.launch_spec().dynamic_smem_bytes,
            cfg.smem_bytes()
        );
    }
}

/// The exact PTX of the bf16, head dim 128, causal kernel against
/// `tests/golden/attention/<name>.ptx`. `BLESS=1` rewrites it.
#[test]
fn attention_ptx_matches_the_golden_file() {
    let cfg = AttentionConfig::new(ScalarType::Bf16, 128, true);
    let text = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/attention")
        .join(format!("{}.ptx", cfg.name()));
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BLESS=1 writes it)", path.display()));
    let line = want
        .lines()
        .zip(text.lines())
        .position(|(a, b)| a != b)
        .map_or(0, |l| l + 1);
    assert!(
        want == text,
        "{} differs near line {line} (BLESS=1 re-blesses)",
        path.display()
    );
}

#[test]
fn bad_configurations_are_refused_when_built() {
    for bad in [
        AttentionConfig::new(ScalarType::F32, 128, false),
        AttentionConfig::new(ScalarType::Bf16, 80, false),
        AttentionConfig {
            stages: 0,
            ..AttentionConfig::new(ScalarType::Bf16, 128, false)
        },
    ] {
        assert!(
            build(Target::Sm90a, &bad).is_err(),
            "{bad:?} should be refused"
        );
    }
}
