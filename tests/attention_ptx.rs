//! The attention kernels assemble with ptxas for sm_90a (the CI has no GPU; this is its check):
//! every configuration, with no register spills, no "wgmma serialized" warning (C7515) and no
//! ignored `setmaxnreg` (C7508); one configuration's exact PTX against its golden file.

mod support;

use ptxkit::isa::{ScalarType, Target, ptxas};
use ptxkit::library::attention::{AttentionConfig, build};

#[test]
fn attention_kernels_assemble_without_spills() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for cfg in AttentionConfig::all() {
        let built = build(Target::Sm90a, &cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        support::assemble_clean(&ptxas, &cfg.name(), built.ptx(), Target::Sm90a);
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
    let rel = format!("attention/{}.ptx", cfg.name());
    support::golden(&rel, &text).unwrap_or_else(|e| panic!("{e}"));
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
