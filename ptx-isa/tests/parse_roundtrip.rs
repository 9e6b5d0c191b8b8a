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

/// Video operands (PTX ISA 9.7.18) and `.branchtargets` lists (11.3.1) read back as written; a
/// selector after a space (which ptxas 13.0 takes) prints attached.
#[test]
fn video_operands_and_branch_targets_round_trip() {
    let text = ".version 9.0\n.target sm_80\n.address_size 64\n\n\
                .visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\
                \tvadd.u32.u32.u32.sat %r3.h1, %r1.b0, %r2 .h1, %r3;\n\
                \tvmad.s32.s32.s32 %r3, -%r1.b3, -%r2, -%r3;\n\
                \tvadd4.u32.u32.u32 %r3.b31, %r1.b7654, %r2.b0000, %r3;\n\
                \tts: .branchtargets $L__0, $L__BB0_1;\n\
                \tbrx.idx %r1, ts;\n$L__0:\n$L__BB0_1:\n\tret;\n}\n";
    reads_back(
        "video and branch targets",
        text,
        &[
            "vadd.u32.u32.u32.sat %r3.h1, %r1.b0, %r2.h1, %r3;",
            "vmad.s32.s32.s32 %r3, -%r1.b3, -%r2, -%r3;",
            "vadd4.u32.u32.u32 %r3.b31, %r1.b7654, %r2.b0000, %r3;",
            "ts: .branchtargets $L__0, $L__BB0_1;",
            "brx.idx %r1, ts;",
        ],
    );
}

/// `text`'s reprint: it has each of `lines`, prints again byte-identically and passes `check`.
fn reads_back(name: &str, text: &str, lines: &[&str]) -> String {
    let printed = parse(text).unwrap().module.print();
    for line in lines {
        assert!(
            printed.lines().any(|l| l.trim() == *line),
            "{line}\n{printed}"
        );
    }
    byte_identical(name, &printed).unwrap();
    assert!(support::errors(&printed).is_empty(), "{printed}");
    printed
}

/// `[a+0]` reads back as written (issue 33's corpus): ptxas 13.0 compiles `[%rd+0]` and `[%rd]`
/// to different machine code (tinygrad's `cumsum` module on sm_120: other registers, another
/// order), so `fmt` keeps a written zero offset; an address written without one stays without.
#[test]
fn a_written_zero_offset_is_kept() {
    let text = ".version 8.7\n.target sm_120\n.address_size 64\n\n\
                .visible .entry k(.param .u64 data0)\n{\n\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<2>;\n\
                \tld.param.u64 %rd1, [data0+0];\n\
                \tld.global.f32 %f1, [%rd1+0];\n\
                \tst.global.f32 [%rd1], %f1;\n\
                \tst.global.f32 [%rd1+-0], %f1;\n\
                \tst.global.f32 [%rd1+4], %f1;\n\tret;\n}\n";
    let printed = reads_back(
        "zero offsets",
        text,
        &[
            "ld.param.u64 %rd1, [data0+0];",
            "ld.global.f32 %f1, [%rd1+0];",
            "st.global.f32 [%rd1], %f1;",
            "st.global.f32 [%rd1+0], %f1;",
            "st.global.f32 [%rd1+4], %f1;",
        ],
    );
    support::assemble(&printed, ptx_isa::Target::Sm120);
}
