//! Round trips through the parser (issue 9, part 3): every kernel ptxkit writes (the catalog of
//! every form on every target that has it, and the golden files) reads back and prints
//! byte-identically; parsing printed text gives the same model again.

use std::path::{Path, PathBuf};

use ptx_isa::parse::parse;

mod support;
use support::{assert_none, catalog_kernels, ptx_files};

fn golden_files() -> Vec<PathBuf> {
    ptx_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden"))
}

/// emit -> parse -> emit is byte-identical, and parse -> emit -> parse gives the same model.
fn byte_identical(name: &str, text: &str) -> Result<(), String> {
    let parsed = parse(text).map_err(|e| format!("{name}: {e}"))?;
    let printed = parsed.module.print();
    if printed != text {
        let line = text
            .lines()
            .zip(printed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "{name}: printed text differs at line {}:\n  wrote: {:?}\n  print: {:?}",
            line + 1,
            text.lines().nth(line),
            printed.lines().nth(line)
        ));
    }
    let again = parse(&printed).map_err(|e| format!("{name} (again): {e}"))?;
    if again.module != parsed.module {
        return Err(format!("{name}: the model changed on a second parse"));
    }
    Ok(())
}

#[test]
fn every_catalog_kernel_round_trips_byte_identically() {
    let mut failures = Vec::new();
    let kernels = catalog_kernels();
    let n = kernels.len();
    let mut unknown = 0;
    for (name, text) in &kernels {
        if let Err(e) = byte_identical(name, text) {
            failures.push(e);
        }
        if let Ok(p) = parse(text) {
            unknown += p.warnings.len();
        }
    }
    eprintln!("{n} catalog kernels round-tripped; {unknown} instructions outside the table");
    assert_none(&failures, &format!("of {n} failed"), 20, "\n");
}

#[test]
fn every_golden_file_round_trips_byte_identically() {
    let files = golden_files();
    assert!(!files.is_empty(), "no golden files found");
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if let Err(e) = byte_identical(&f.display().to_string(), &text) {
            failures.push(e);
        }
    }
    eprintln!("{} golden files round-tripped", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
