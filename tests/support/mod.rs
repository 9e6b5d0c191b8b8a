//! Shared by the kernel tests: assemble emitted PTX with ptxas when it is there (a failure when
//! `CI=true` and it is not).

#![allow(dead_code)]

use ptxkit::isa::Target;

/// Assembles `text` for `target` with ptxas when ptxas is there.
pub fn assemble(text: &str, target: Target) {
    if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
        let out = ptxas.assemble(text, target, &[]).unwrap();
        assert!(out.ok, "ptxas rejected:\n{}\n{text}", out.log);
    }
}
