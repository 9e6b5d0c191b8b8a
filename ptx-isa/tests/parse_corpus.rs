//! Real-world PTX (issue 9, parts 1-3): the corpus under `tests/corpus/` is PTX as nvcc, Triton and
//! LLVM write it (debug directives, inline-asm scopes with named registers and labels, call
//! sequences, prototypes, initializers, linkage). Each file parses; printing it and parsing again
//! gives the same model; and the printed text still assembles with ptxas.

use std::path::PathBuf;

use ptx_isa::parse::parse;
use ptx_isa::{Target, ptxas};

fn corpus() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_corpus_parses_and_round_trips() {
    let files = corpus();
    assert!(files.len() >= 5);
    for (name, text) in &files {
        let p = parse(text).unwrap_or_else(|e| panic!("{name}:{e}"));
        for w in &p.warnings {
            eprintln!("{name}:{w}");
        }
        let printed = p.module.print();
        let again = parse(&printed).unwrap_or_else(|e| panic!("{name} printed:{e}\n{printed}"));
        assert!(
            again.module == p.module,
            "{name}: model changed on a second parse"
        );
        assert_eq!(
            again.module.print(),
            printed,
            "{name}: printing is not stable"
        );
    }
}

#[test]
fn printed_corpus_assembles_with_ptxas() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for (name, text) in corpus() {
        let p = parse(&text).unwrap();
        let target: Target = p.module.target_name().parse().unwrap();
        let printed = p.module.print();
        let original = ptxas.assemble(&text, target, &[]).unwrap();
        assert!(original.ok, "{name} as written: {}", original.log);
        let out = ptxas.assemble(&printed, target, &[]).unwrap();
        assert!(out.ok, "{name} printed:\n{}\n{printed}", out.log);
    }
}
