//! Shared by the builder tests: build a kernel body, read back its instruction lines, assemble it.

#![allow(dead_code)]

use ptx_isa::{FunctionBuilder, Module, Target};

/// Assembles `text` for `target` with ptxas when ptxas is there (a failure when `CI=true` and it
/// is not).
pub fn assemble(text: &str, target: Target) {
    if let Some(ptxas) = ptx_isa::ptxas::for_tests().unwrap() {
        let out = ptxas.assemble(text, target, &[]).unwrap();
        assert!(out.ok, "ptxas rejected:\n{}\n{text}", out.log);
    }
}

/// Builds a kernel body with `f` on `target`, assembles it, and returns its instruction lines.
pub fn body(
    target: Target,
    f: impl FnOnce(&mut Module, &mut FunctionBuilder) -> ptx_isa::Result<()>,
) -> ptx_isa::Result<Vec<String>> {
    let mut m = Module::new(target);
    let mut k = m.entry("t");
    f(&mut m, &mut k)?;
    m.add(k.finish()?)?;
    let text = m.to_ptx()?;
    assemble(&text, target);
    Ok(text
        .lines()
        .skip_while(|l| !l.starts_with('{'))
        .filter(|l| l.starts_with('\t') && !l.trim_start().starts_with(".reg"))
        .map(|l| l.trim().to_string())
        .collect())
}

/// The instruction lines of a body that must build on `target`.
pub fn lines_on(
    target: Target,
    f: impl FnOnce(&mut Module, &mut FunctionBuilder) -> ptx_isa::Result<()>,
) -> Vec<String> {
    body(target, f).unwrap()
}

/// The error of a body that must fail on `target`.
pub fn error_on(
    target: Target,
    f: impl FnOnce(&mut Module, &mut FunctionBuilder) -> ptx_isa::Result<()>,
) -> ptx_isa::Error {
    body(target, f).unwrap_err()
}
