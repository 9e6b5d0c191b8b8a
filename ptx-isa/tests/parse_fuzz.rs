//! The fuzz target's property as an ordinary test (issue 9, part 6), so CI covers it without
//! cargo-fuzz: for arbitrary text, and for the corpus with bytes cut, repeated and replaced, the
//! parser and the validator never panic, and whatever parses prints to text that parses to the same
//! model. Crash inputs the fuzzer found are kept in `tests/fuzz_regressions/` and replayed here.

use std::path::PathBuf;

use proptest::prelude::*;
use ptx_isa::parse::{ParseErrorKind, limits, parse};
use ptx_isa::validate::{Options, validate};

fn property(text: &str) -> Result<(), TestCaseError> {
    let Ok(p) = parse(text) else { return Ok(()) };
    let _ = validate(&p.module, Some(&p.source_map), &Options::default());
    let printed = p.module.print();
    let again = parse(&printed)
        .map_err(|e| TestCaseError::fail(format!("printed text does not parse: {e}\n{printed}")))?;
    prop_assert!(again.module == p.module, "model changed:\n{}", printed);
    prop_assert_eq!(again.module.print(), printed);
    Ok(())
}

fn corpus() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    v.sort();
    v
}

/// Tokens PTX is made of, to build text that gets past the lexer.
const PIECES: &[&str] = &[
    ".version 8.0\n",
    ".target sm_90a\n",
    ".address_size 64\n",
    ".visible",
    ".entry",
    ".func",
    ".reg",
    ".b32",
    ".pred",
    ".f32",
    ".u64",
    ".v4",
    ".param",
    ".shared",
    ".global",
    ".align 8",
    ".loc 1 2 3\n",
    ".pragma \"nounroll\";",
    "k",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "@",
    "!",
    "|",
    "+",
    "-",
    "<",
    ">",
    "=",
    "%r1",
    "%r<4>",
    "%p1",
    "%rd2",
    "%f0",
    "%tid.x",
    "%tid.w",
    // Issue 33's syntax: constant expressions, array elements, `.reg` parameters, packed f32x2.
    "*",
    "/",
    "&",
    "^",
    "~",
    "<<",
    ">>",
    "arr[2]",
    "(1 << 63)",
    ".reg .b32 a",
    "add.f32x2",
    ".noreturn",
    "_",
    "$L__BB0_1",
    "$L__3",
    "add",
    ".s32",
    "ld",
    "st",
    "mov",
    "bra",
    "setp.eq",
    "ret",
    "0",
    "16",
    "0x10",
    "0f3F800000",
    "0d3FF0000000000000",
    "1.5",
    "-1",
    "p",
    "// c\n",
    "/* c */",
    "\n",
    " ",
    "\t",
    "\"s\"",
    ".file 1 \"a.cu\"\n",
    ".section .debug_info { .b8 1 }\n",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        property(&text)?;
    }

    #[test]
    fn ptx_shaped_text_never_panics(pieces in proptest::collection::vec(0..PIECES.len(), 0..80)) {
        let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
        property(&text)?;
    }

    #[test]
    fn damaged_corpus_never_panics(
        file in 0usize..6,
        edits in proptest::collection::vec((any::<u16>(), 0usize..3, 0..PIECES.len()), 1..6),
    ) {
        let files = corpus();
        let mut text = files[file % files.len()].clone().into_bytes();
        for (at, what, piece) in edits {
            let at = usize::from(at) % (text.len() + 1);
            let end = (at + 7).min(text.len());
            match what {
                0 => { text.drain(at..end); }
                1 => { let dup = text[at..end].to_vec(); text.splice(at..at, dup); }
                _ => { text.splice(at..end, PIECES[piece].bytes()); }
            }
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        property(&text)?;
    }
}

#[test]
fn limits_are_enforced() {
    let deep = format!(
        ".version 8.0\n.target sm_80\n.entry k()\n{{\n{}\n}}",
        "{".repeat(limits::MAX_BLOCK_DEPTH + 1)
    );
    assert_eq!(
        parse(&deep).unwrap_err().kind,
        ParseErrorKind::LimitExceeded
    );
    let huge = ".version 8.0\n.target sm_80\n.entry k()\n{\n.reg .b32 %r<99999999>;\n}";
    assert_eq!(parse(huge).unwrap_err().kind, ParseErrorKind::LimitExceeded);
    let wide = format!(
        ".version 8.0\n.target sm_80\n.entry k()\n{{\nmov.b32 %r1, {{{}}};\n}}",
        vec!["%r1"; limits::MAX_OPERANDS + 2].join(",")
    );
    assert_eq!(
        parse(&wide).unwrap_err().kind,
        ParseErrorKind::LimitExceeded
    );
    let nested = format!(
        ".version 8.0\n.target sm_80\n.entry k()\n{{\nmov.b32 %r1, {}%r1{};\n}}",
        "{".repeat(10),
        "}".repeat(10)
    );
    assert_eq!(
        parse(&nested).unwrap_err().kind,
        ParseErrorKind::LimitExceeded
    );
}

#[test]
fn fuzzer_crash_inputs_stay_fixed() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            continue;
        }
        let bytes = std::fs::read(e.path()).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            property(text).unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
        }
        n += 1;
    }
    eprintln!("{n} fuzzer inputs replayed");
}
