//! `brx.idx` and its `.branchtargets` list (PTX ISA 9.7.12.4, 11.3.1): what the builder writes,
//! that it reads back as written, and that `ptxkit check` accepts exactly what ptxas 13.0 accepts
//! on the ways a list and its use can be wrong.

mod support;

use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{ErrorKind, Module, Target, ptxas, ty};

#[test]
fn the_builder_writes_a_list_then_the_branch() {
    let mut m = Module::new(Target::Sm80);
    let mut k = m.entry("t");
    let write = |k: &mut ptx_isa::FunctionBuilder| -> ptx_isa::Result<()> {
        let (l0, l1, l2) = (k.label(), k.label(), k.label());
        let i = k.reg::<ty::U32>();
        k.mov(i, 2u32)?;
        let list = k.branch_targets(&[l0, l1, l2, l0])?;
        k.brx_idx(i, list)?;
        let p = k.pred();
        k.setp(ptx_isa::builder::CmpOp::Eq, p, i, 0u32)?;
        k.when(p).brx_idx_uni(i, list)?;
        k.place(l0)?;
        k.place(l1)?;
        k.place(l2)
    };
    write(&mut k).unwrap();
    k.ret().unwrap();
    m.add(k.finish().unwrap()).unwrap();
    let text = m.to_ptx().unwrap();
    support::assemble(&text, Target::Sm80);
    // The validator, which reads only the rows, takes what the builder writes.
    assert!(support::errors(&text).is_empty(), "{text}");
    let lines: Vec<String> = text.lines().map(|l| l.trim().to_string()).collect();
    assert!(
        lines.contains(&"$T__0: .branchtargets $L__0, $L__1, $L__2, $L__0;".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"brx.idx %r0, $T__0;".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"@%p0 brx.idx.uni %r0, $T__0;".to_string()),
        "{lines:?}"
    );
}

#[test]
fn the_builder_refuses_what_ptxas_refuses() {
    // No label at all (ptxas: "syntax error").
    let e = support::error_on(Target::Sm80, |_, k| k.branch_targets(&[]).map(|_| ()));
    assert_eq!(e.kind, ErrorKind::OperandCount);
    // A list of another function.
    let m = Module::new(Target::Sm80);
    let mut other = m.entry("other");
    let l = other.label();
    let foreign = other.branch_targets(&[l]).unwrap();
    let e = support::error_on(Target::Sm80, |_, k| {
        let i = k.reg::<ty::U32>();
        k.mov(i, 0u32)?;
        k.brx_idx(i, foreign)
    });
    assert_eq!(e.kind, ErrorKind::UndefinedLabel);
    // A label listed but never placed.
    let e = support::error_on(Target::Sm80, |_, k| {
        let (l, i) = (k.label(), k.reg::<ty::U32>());
        k.mov(i, 0u32)?;
        let list = k.branch_targets(&[l])?;
        k.brx_idx(i, list)
    });
    assert_eq!(e.kind, ErrorKind::UndefinedLabel);
}

/// A kernel around `body` on sm_80, PTX 9.0.
fn kernel(body: &str) -> String {
    format!(
        ".version 9.0\n.target sm_80\n.address_size 64\n\n\
         .visible .entry k(.param .u32 p)\n{{\n\
         \t.reg .pred %p<2>;\n\t.reg .b16 %rs<2>;\n\t.reg .b32 %r<2>;\n\t.reg .s32 %s<2>;\n\
         \t.reg .f32 %f<2>;\n\t.reg .b64 %rd<2>;\n\
         \tld.param.u32 %r1, [p];\n\
         {body}\n}}\n"
    )
}

/// Bodies ptxas 13.0 was measured on: (body, whether ptxas accepts it).
const CASES: &[(&str, bool)] = &[
    (
        "ts: .branchtargets $L__0, $L__1;\nbrx.idx %r1, ts;\n$L__0: ret;\n$L__1: ret;",
        true,
    ),
    (
        "ts: .branchtargets $L__0, $L__1;\nbrx.idx.uni %r1, ts;\n$L__0: ret;\n$L__1: ret;",
        true,
    ),
    (
        "ts: .branchtargets $L__0, $L__1;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 brx.idx %r1, ts;\n$L__0: ret;\n$L__1: ret;",
        true,
    ),
    (
        "$L__0: ret;\n$L__1: ret;\nts: .branchtargets $L__0, $L__1;\nbrx.idx %r1, ts;",
        true,
    ),
    (
        "ts: .branchtargets $L__0, $L__0;\nbrx.idx %r1, ts;\n$L__0: ret;",
        true,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx %s1, ts;\n$L__0: ret;",
        true,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx 1, ts;\n$L__0: ret;",
        true,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx.uni.uni %r1, ts;\n$L__0: ret;",
        true,
    ),
    // An index of another type ("Arguments mismatch").
    (
        "ts: .branchtargets $L__0;\nbrx.idx %rs1, ts;\n$L__0: ret;",
        false,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx %f1, ts;\n$L__0: ret;",
        false,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx %rd1, ts;\n$L__0: ret;",
        false,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx %p1, ts;\n$L__0: ret;",
        false,
    ),
    // A type or another modifier ("Unexpected instruction types", "Illegal modifier").
    (
        "ts: .branchtargets $L__0;\nbrx.idx.s32 %r1, ts;\n$L__0: ret;",
        false,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx.uni.aligned %r1, ts;\n$L__0: ret;",
        false,
    ),
    // A label that is not placed, or not visible to the list ("Unknown symbol").
    (
        "ts: .branchtargets $L__0, $L__9;\nbrx.idx %r1, ts;\n$L__0: ret;",
        false,
    ),
    (
        "ts: .branchtargets $L__0;\nbrx.idx %r1, ts;\n{\n$L__0: ret;\n}",
        false,
    ),
    // The list used before it is declared ("Label expected for forward reference").
    (
        "brx.idx %r1, ts;\nts: .branchtargets $L__0;\n$L__0: ret;",
        false,
    ),
    // The list declared in a block the branch is outside of.
    (
        "{\nts: .branchtargets $L__0;\n}\nbrx.idx %r1, ts;\n$L__0: ret;",
        false,
    ),
    // Two definitions of the name ("Duplicate definition of label").
    (
        "ts: .branchtargets $L__0;\nts: .branchtargets $L__0;\nbrx.idx %r1, ts;\n$L__0: ret;",
        false,
    ),
    // A label where the list goes, a list where a label goes, an operand too many.
    (
        "ts: .branchtargets $L__0;\nbrx.idx %r1, $L__0;\n$L__0: ret;",
        false,
    ),
    ("ts: .branchtargets $L__0;\nbra ts;\n$L__0: ret;", false),
    (
        "ts: .branchtargets $L__0;\nbrx.idx %r1, ts, ts;\n$L__0: ret;",
        false,
    ),
];

#[test]
fn check_accepts_exactly_what_ptxas_accepts() {
    let ptxas = ptxas::for_tests().unwrap();
    let mut wrong = Vec::new();
    for (body, ok) in CASES {
        let text = kernel(body);
        if let Some(p) = &ptxas {
            let out = p.assemble(&text, Target::Sm80, &[]).unwrap();
            assert_eq!(out.ok, *ok, "ptxas on\n{body}\n{}", out.log);
        }
        let diags = check(&text, &Options::default());
        let errors: Vec<String> = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.to_string())
            .collect();
        if errors.is_empty() != *ok {
            wrong.push(format!("ptxas {ok}, ptxkit {errors:?} on\n{body}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn an_old_version_lacks_the_list_and_the_branch() {
    let text = kernel("ts: .branchtargets $L__0;\nbrx.idx %r1, ts;\n$L__0: ret;")
        .replace(".version 9.0", ".version 5.0");
    let errors: Vec<String> = check(&text, &Options::default())
        .iter()
        .filter(|d| d.severity == Severity::Error && d.kind == ErrorKind::PtxVersionTooLow)
        .map(|d| d.to_string())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("directive.branchtargets"))
            && errors.iter().any(|e| e.contains("brx.idx")),
        "{errors:?}"
    );
}
