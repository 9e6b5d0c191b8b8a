//! Issue 33: syntax that real modules use (nvcc, Triton, tinygrad, hand-written PTX) and the wrong
//! modules ptxkit used to accept. Each case says what ptxas 13.0.88 does with it; `check` must agree
//! (no error exactly when ptxas accepts), `fmt`'s reprint of an accepted case must parse to the same
//! model, and with ptxas present (`PTXAS`) every case is held to ptxas itself.

use ptx_isa::parse::parse;
use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{Target, ptxas};

/// (what, module text, whether ptxas 13.0.88 accepts it), from `real_world_syntax.ptx.txt`.
fn cases() -> Vec<(String, String, bool)> {
    let text = include_str!("real_world_syntax.ptx.txt");
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("//# ") {
            let (what, verdict) = h.rsplit_once(": ").unwrap();
            out.push((what.to_string(), String::new(), verdict == "accepts"));
        } else if let Some((_, module, _)) = out.last_mut() {
            module.push_str(line);
            module.push('\n');
        }
    }
    out
}

/// The `-arch` ptxas judges a case with: its target, or sm_80 for one older than ptxkit models
/// (ptxas compiles an older `.target` for a newer `-arch`).
fn target_of(text: &str) -> Target {
    text.lines()
        .find_map(|l| l.strip_prefix(".target "))
        .and_then(|t| t.parse().ok())
        .unwrap_or(Target::Sm80)
}

#[test]
fn check_agrees_with_ptxas_on_real_world_syntax() {
    let ptxas = ptxas::for_tests().unwrap();
    let mut wrong = Vec::new();
    for (what, text, accepts) in cases() {
        let d = check(&text, &Options::default());
        let error = d.iter().find(|d| d.severity == Severity::Error);
        if error.is_none() != accepts {
            wrong.push(format!(
                "{what}: check says {:?}, ptxas {}",
                error.map(ToString::to_string),
                if accepts { "accepts" } else { "rejects" }
            ));
        }
        if let Some(p) = &ptxas {
            let out = p.assemble(&text, target_of(&text), &[]).unwrap();
            assert_eq!(out.ok, accepts, "{what}: ptxas says\n{}", out.log);
        }
        if accepts {
            let parsed = parse(&text).unwrap();
            let again = parse(&parsed.module.print()).unwrap();
            assert!(again.module == parsed.module, "{what}: the reprint differs");
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn constant_expressions_evaluate_like_c() {
    let module = |e: &str| {
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\t.reg .b64 %rd<2>;\n\tmov.b64 %rd1, {e};\n\tret;\n}}\n"
        )
    };
    let v = |e: &str| {
        let text = module(e);
        let p = parse(&text).unwrap();
        p.module
            .print()
            .lines()
            .find(|l| l.contains("mov.b64"))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(v("((128 >> 4) << 16)"), "mov.b64 %rd1, 0x80000;");
    assert_eq!(v("1 + 2 * 3"), "mov.b64 %rd1, 7;");
    assert_eq!(v("10 - 4 - 3"), "mov.b64 %rd1, 3;");
    assert_eq!(v("-(2 * 3)"), "mov.b64 %rd1, -6;");
    assert_eq!(v("~0 & 0xff"), "mov.b64 %rd1, 255;");
    assert_eq!(v("(3 < 4) + (5 == 5) + !0"), "mov.b64 %rd1, 3;");
    assert_eq!(v("1 | 6 ^ 3"), "mov.b64 %rd1, 5;");
    // A division by zero or a shift past 63 is a typed parse error, not a panic.
    for bad in ["(1 / 0)", "(1 << 64)", "(1 << -1)"] {
        let e = parse(&module(bad)).unwrap_err();
        assert_eq!(e.kind, ptx_isa::parse::ParseErrorKind::BadNumber, "{bad}");
    }
}
