//! Issue 33: modules of PTX ISA 1.0-5.0, the versions nvcc wrote before PTX 6, judged by ptxas
//! 13.0. nvcc 13 writes none of them, so the kernels in `tests/legacy/` are written here in the
//! style nvcc's Open64 back end used (`__cudaparm_` parameters, `$Lt_` labels, `cvt.u32.u16` of
//! `%tid.x`, `.u16` registers, `mad.f32` with no rounding, `vote.any.pred` with no `.sync`,
//! `.param` return values). Each is written at every version ptxas 13.0 reads from 1.0 to 5.0,
//! for targets from sm_10 to sm_62, with `.address_size 64` where the version has the directive
//! (PTX ISA 11.1.3: 2.3) and, for one kernel, where it has not: ptxas accepts some of these
//! modules and rejects the others (a target newer than the version, `.address_size` before 2.3,
//! `mad.f32` with no rounding on sm_20 and later, a `.param` return value before PTX 2.0...).
//!
//! `check` must agree with ptxas on every module, both ways, and `fmt`'s reprint of every module
//! ptxas accepts must assemble. Without ptxas (outside CI) the test says so and checks nothing.

use std::path::Path;

use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{Target, ptxas};

/// Every version ptxas 13.0 reads from PTX ISA 1.0 to 5.0 (PTX ISA chapter 13).
const VERSIONS: &[&str] = &[
    "1.0", "1.1", "1.2", "1.3", "1.4", "2.0", "2.1", "2.2", "2.3", "3.0", "3.1", "3.2", "4.0",
    "4.1", "4.2", "4.3", "5.0",
];

/// Targets of those versions' time, oldest first.
const TARGETS: &[&str] = &[
    "sm_10", "sm_11", "sm_12", "sm_13", "sm_20", "sm_21", "sm_30", "sm_32", "sm_35", "sm_37",
    "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62",
];

/// The kernels, each with `{VERSION}`, `{TARGET}` and `{ADDRESS_SIZE}` to fill.
fn templates() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/legacy");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/legacy")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// One module of the matrix: its name and its text.
fn modules() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, template) in templates() {
        for version in VERSIONS {
            let has_address_size = version.parse::<f32>().unwrap() >= 2.3;
            // The directive as nvcc wrote it; `vecadd` also with it where the version lacks it.
            let mut sizes = vec![has_address_size];
            if name == "vecadd" && !has_address_size {
                sizes.push(true);
            }
            for target in TARGETS {
                for &size in &sizes {
                    let text = template
                        .replace("{VERSION}", version)
                        .replace("{TARGET}", target)
                        .replace(
                            "{ADDRESS_SIZE}",
                            if size { "\t.address_size 64" } else { "" },
                        );
                    let tag = if size { ".a64" } else { "" };
                    out.push((format!("{name}.{version}.{target}{tag}"), text));
                }
            }
        }
    }
    out
}

fn errors(text: &str) -> Vec<String> {
    check(text, &Options::default())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn legacy_versions_agree_with_ptxas() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    let modules = modules();
    // ptxas 13.0 compiles for sm_75 and later; a module for an older target is compiled for
    // sm_80, the oldest target ptxkit models (its `.target` still gates what it may use).
    let judge = |text: &str| ptxas.assemble(text, Target::Sm80, &[]).unwrap();
    let verdicts: Vec<(bool, String)> = std::thread::scope(|s| {
        let chunks: Vec<_> = modules
            .chunks(modules.len().div_ceil(4))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(_, text)| {
                            let a = judge(text);
                            (a.ok, a.log)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut disagree = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for ((name, text), (ok, log)) in modules.iter().zip(&verdicts) {
        let errs = errors(text);
        if *ok {
            accepted += 1;
            if let Some(e) = errs.first() {
                disagree.push(format!("{name}: ptxas accepts, check says {e}"));
                continue;
            }
            // `fmt`'s reprint assembles too, and still passes `check`.
            let printed = ptx_isa::parse::parse(text).unwrap().module.print();
            let again = judge(&printed);
            if !again.ok {
                disagree.push(format!("{name}: fmt's reprint is refused: {}", again.log));
            }
            if let Some(e) = errors(&printed).first() {
                disagree.push(format!("{name}: fmt's reprint fails check: {e}"));
            }
        } else {
            rejected += 1;
            if errs.is_empty() {
                let why = log.lines().find(|l| !l.contains("warning")).unwrap_or("");
                disagree.push(format!("{name}: ptxas rejects ({why}), check passes it"));
            }
        }
    }
    eprintln!(
        "{} legacy modules: ptxas accepts {accepted}, rejects {rejected}; {} disagreements",
        modules.len(),
        disagree.len()
    );
    // Both verdicts occur: the matrix tests the gating from both sides.
    assert!(accepted > 100 && rejected > 100, "{accepted} / {rejected}");
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}
