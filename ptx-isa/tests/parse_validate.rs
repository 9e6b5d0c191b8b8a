//! The validator (issue 9, part 4): every kernel ptxkit writes and every corpus file is valid; each
//! rule reports what ptxas reports, at the right line and column.

use std::path::Path;

use ptx_isa::Target;
use ptx_isa::validate::{Options, check, is_valid};

mod support;
use support::{assert_none, catalog_kernels, errors, ptx_files};

#[test]
fn catalog_kernels_are_valid() {
    let mut bad = Vec::new();
    let kernels = catalog_kernels();
    let n = kernels.len();
    for (name, text) in &kernels {
        let e = errors(text);
        if !e.is_empty() {
            bad.push(format!("{name}: {}", e.join("; ")));
        }
    }
    eprintln!("{n} catalog kernels checked");
    assert_none(&bad, "invalid", 30, "\n");
}

#[test]
fn golden_and_corpus_files_are_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = ptx_files(&root.join("../tests/golden"));
    files.extend(ptx_files(&root.join("tests/corpus")));
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let e = errors(&text);
        if !e.is_empty() {
            bad.push(format!("{}: {}", f.display(), e.join("; ")));
        }
    }
    eprintln!("{} files checked", files.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn kernel(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.global .align 4 .b8 gv[16];\n\
         .visible .entry k(.param .u64 p)\n{{\n\t.reg .pred %p<2>;\n\t.reg .b16 %rs<3>;\n\
         \t.reg .b32 %r<4>;\n\t.reg .u32 %u<4>;\n\t.reg .f32 %f<3>;\n\t.reg .b64 %rd<3>;\n{body}\n\tret;\n}}\n"
    )
}

/// Each case: a body line and the start of the one error it must give (line 13 is the body).
#[test]
fn each_rule_reports_at_its_place() {
    let cases: &[(&str, &str)] = &[
        (
            "\tadd.s32 %r1, %r9, 1;",
            "13:2: error: register `%r9` is not declared",
        ),
        (
            "\tadd.f32 %f1, %u1, %f2;",
            "13:2: error: operand 1 of `add.f32`: `%u1` is .u32",
        ),
        (
            "\tadd.s32 %r1, %r2;",
            "13:2: error: `add.s32` takes 3 operands",
        ),
        (
            "\tadd.u8 %r1, %r2, %r3;",
            "13:2: error: `.u8` is not a type `add.u8` takes",
        ),
        (
            "\tbra $L__nowhere;",
            "13:2: error: `$L__nowhere` in `bra` is not declared",
        ),
        (
            "\tbar.sync 16;",
            "13:2: error: barrier number 16 of `bar.sync` is not in 0..=15",
        ),
        (
            "\tld.global.v2.f32 {%f1}, [%rd1];",
            "13:2: error: `ld.global.v2.f32` moves a vector of 2, not 1",
        ),
        (
            "\twgmma.fence.sync.aligned;",
            "13:2: error: sm_80 lacks `wgmma.fence`",
        ),
        (
            "\t.reg .b32 %r<2>;",
            "13:2: error: registers `%r<2>` are declared twice",
        ),
        (
            "\tld.shared.u32 %r1, [gv];",
            "13:2: error: `ld.shared.u32` addresses .shared but `gv` is a .global variable",
        ),
        (
            "\t@%r1 bra $L1;\n$L1:",
            "13:2: error: guard `%r1` of `bra` is .b32, not .pred",
        ),
        (
            "\tmov.u64 %rd1, %tid.x;",
            "13:2: error: `mov.u64`: `%tid.x` is .u32, not .u64",
        ),
        (
            "\tadd.f32 %f1, %f1, 1;",
            "13:2: error: operand 2 of `add.f32`: the immediate `1` is not a .f32 value",
        ),
        (
            "\tld.global.f32 %f1, [%r1];",
            "13:2: error: `ld.global.f32`: `%r1` is a 32-bit address",
        ),
        (
            "\tmul.wide.s32 %r1, %r1, %r2;",
            "13:2: error: operand 0 of `mul.wide.s32`: `%r1` is .b32 where .s64 is needed",
        ),
        (
            "\tld.global.f32 %f1, %rd1;",
            "13:2: error: operand 1 of `ld.global.f32` is an address",
        ),
        (
            "\tmov.u32 %r1, %cluster_ctarank;",
            "13:2: error: sm_80 lacks `mov.sreg.cluster`",
        ),
        ("\tld.global.L2::cache_hint.f32 %f1, [%rd1], %rd2;", ""),
        (
            "\t{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %r1, 0;\n\t@p bra DONE;\n\tDONE:\n\t}",
            "",
        ),
        (
            "\t@q bra $L1;\n$L1:",
            "13:2: error: guard register `q` of `bra` is not declared",
        ),
    ];
    for (body, want) in cases {
        let text = kernel(body);
        let e = errors(&text);
        if want.is_empty() {
            assert!(e.is_empty(), "{body:?}: unexpected {e:?}");
        } else {
            assert!(
                e.len() == 1 && e[0].starts_with(want),
                "{body:?}: want `{want}...`, got {e:?}"
            );
        }
    }
}

/// The row checks are said once per instruction shape and repeated for the later lines of that
/// shape (issue 33): a line repeated says at each of its places what it says alone, and an
/// immediate a rule reads is read on every line.
#[test]
fn repeated_lines_say_at_each_place_what_one_says() {
    let lines = [
        "\tadd.s32 %r1, %r2;",
        "\tadd.u8 %r1, %r2, %r3;",
        "\twgmma.fence.sync.aligned;",
        "\tld.global.f32 %f1, %rd1;",
        "\tld.global.v2.f32 {%f1}, [%rd1];",
        "\tmov.u32 %r1, %cluster_ctarank;",
        "\tadd.f32 %f1, %f1, 1;",
        "\tmul.wide.s32 %r1, %r1, %r2;",
        "\tmbarrier.arrive.shared.b64 %rd1, [%rd2], 1;",
        "\tadd.s32 %r1, %r2, 7;",
        "\tsetp.ne.b32 %p1, %r1, 0;",
    ];
    let said = |text: &str| -> Vec<String> {
        check(text, &Options::default())
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    for line in lines {
        let one = said(&kernel(line));
        let three = said(&kernel(&[line; 3].join("\n")));
        // The line is line 13 alone; 13, 14 and 15 repeated.
        let want: Vec<String> = (0..3)
            .flat_map(|k| {
                one.iter()
                    .map(move |d| d.replacen("13:", &format!("{}:", 13 + k), 1))
            })
            .collect();
        assert_eq!(three, want, "{line:?}");
    }
    let e = errors(&kernel(
        "\tbar.sync 1;\n\tbar.sync 16;\n\tbar.sync 2;\n\tbar.sync 17;",
    ));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e[0].starts_with("14:2: error: barrier number 16"), "{e:?}");
    assert!(e[1].starts_with("16:2: error: barrier number 17"), "{e:?}");
}

#[test]
fn targets_and_versions_gate() {
    let text = kernel("\tmov.u32 %r1, %cluster_ctarank;");
    let opts = Options {
        target: Some(Target::Sm90),
    };
    let d = check(&text, &opts);
    // sm_90 has the register, but .version 8.0 is fine for it; the module's own target is sm_80.
    assert!(is_valid(&d), "{d:?}");
    let low = text.replace(".version 8.0", ".version 7.0");
    let d = check(
        &low,
        &Options {
            target: Some(Target::Sm90),
        },
    );
    assert!(!is_valid(&d));
    assert!(
        d.iter().any(|x| x.message.contains("needs PTX ISA 7.8")),
        "{d:?}"
    );
}

#[test]
fn parse_errors_carry_line_and_column() {
    let d = check(
        ".version 8.0\n.target sm_80\n.address_size 64\n.entry k()\n{\n\tadd.s32 %r1, ?;\n}",
        &Options::default(),
    );
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].to_string(), "6:15: error: unexpected character '?'");
}

#[test]
fn unmodelled_targets_are_read_with_a_warning() {
    let text = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
    let d = check(text, &Options::default());
    assert!(is_valid(&d), "{d:?}");
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].to_string(),
        "2:1: warning: target `sm_75` is not one ptxkit models: target gating is not checked"
    );
    // With a modelled target given, gating applies again.
    let d = check(
        &text.replace("\tret;", "\twgmma.fence.sync.aligned;\n\tret;"),
        &Options {
            target: Some(Target::Sm80),
        },
    );
    assert!(!is_valid(&d));
}

/// Issue 33: every PTX ISA release ptxas 13.0 reads (1.0-9.0) and every target it names. Typed
/// instructions are PTX 1.0 (`.f16x2` is 4.2); `.address_size` is PTX 2.3; each target has its
/// lowest version; `ptxkit fmt`'s reprint keeps a module without `.address_size` without one.
#[test]
fn old_versions_and_targets_read_as_ptxas_reads_them() {
    let module = |version: &str, target: &str, head: &str, body: &str| {
        format!(
            ".version {version}\n.target {target}\n{head}.entry k()\n{{\n\t.reg .u32 %r<2>;\n{body}\n\tret;\n}}\n"
        )
    };
    let errors_of = |text: &str| -> Vec<String> {
        check(text, &Options::default())
            .iter()
            .filter(|d| d.severity == ptx_isa::validate::Severity::Error)
            .map(ToString::to_string)
            .collect()
    };
    // `mov.u32 loop_counter, 0;` under .version 6.5 (issue 33's 250-file cause).
    let ok = module("6.5", "sm_75", ".address_size 64\n", "\tmov.u32 %r1, 0;");
    assert_eq!(errors_of(&ok), Vec::<String>::new());
    let ok = module("1.4", "sm_13", "", "\tmov.u32 %r1, 0;");
    assert_eq!(errors_of(&ok), Vec::<String>::new());
    // `.address_size` under 1.4; sm_75 under 6.0; a version no release has; an unknown target.
    let cases = [
        (
            module("1.4", "sm_13", ".address_size 64\n", ""),
            "3:1: error: .address_size needs PTX ISA 2.3; the module says .version 1.4",
        ),
        (
            module("6.0", "sm_75", ".address_size 64\n", ""),
            "2:1: error: target sm_75 needs PTX ISA 6.3; the module says .version 6.0",
        ),
        (
            module("5.2", "sm_60", ".address_size 64\n", ""),
            "1:1: error: .version 5.2 is no release of the PTX ISA (chapter 13)",
        ),
        (
            module("8.0", "sm_99", ".address_size 64\n", ""),
            "2:1: error: ptxas 13.0 reads no target `sm_99`",
        ),
        (
            module(
                "4.1",
                "sm_52",
                ".address_size 64\n",
                "\tadd.f16x2 %r1, %r1, %r1;",
            ),
            "type .f16x2 of `add.f16x2` needs PTX ISA 4.2",
        ),
    ];
    for (text, want) in cases {
        let e = errors_of(&text);
        assert!(e.iter().any(|x| x.contains(want)), "{want}: {e:?}");
    }
    // nvcc's `WARP_SZ` (PTX ISA 4.4) and a prototype with no body and no `;`.
    let ok = module(
        "7.0",
        "sm_80",
        ".address_size 64\n",
        "\tmov.u32 %r1, WARP_SZ;",
    );
    assert_eq!(errors_of(&ok), Vec::<String>::new());
    let proto = ".version 7.0\n.target sm_80\n.address_size 64\n\
                 .extern .func (.param .b32 r) f(.param .b32 a)\n\
                 .visible .entry k()\n{\n\tret;\n}\n.extern .func g()\n";
    assert_eq!(errors_of(proto), Vec::<String>::new());
    let printed = ptx_isa::parse::parse(proto).unwrap().module.print();
    assert!(printed.contains("f(\n\t.param .b32 a\n)\n;\n"), "{printed}");
    // The reprint writes `.address_size` only where the text does.
    let old = module("2.2", "sm_20", "", "\tmov.u32 %r1, 0;");
    let printed = ptx_isa::parse::parse(&old).unwrap().module.print();
    assert!(!printed.contains(".address_size"), "{printed}");
    let new = module("7.0", "sm_80", ".address_size 64\n", "");
    let printed = ptx_isa::parse::parse(&new).unwrap().module.print();
    assert!(printed.contains(".address_size 64\n"), "{printed}");
}
