//! Shared by the builder tests: build a kernel body, read back its instruction lines, assemble it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{Form, FunctionBuilder, Module, Target, catalog};

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

/// Every `.ptx` file below `dir`, sorted (none when `dir` is not there).
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The validator's errors on `text`.
pub fn errors(text: &str) -> Vec<String> {
    check(text, &Options::default())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect()
}

/// Fails unless `problems` is empty, saying how many there are (`{count} {what}`) and showing
/// the first `shown`, separated by `sep`.
pub fn assert_none(problems: &[String], what: &str, shown: usize, sep: &str) {
    assert!(
        problems.is_empty(),
        "{} {what}:\n{}",
        problems.len(),
        problems[..problems.len().min(shown)].join(sep)
    );
}

/// The catalog's kernel of every form on every target that has it: `("{form} on {target}",
/// text)`.
pub fn catalog_kernels() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for spec in Form::all() {
        for &t in Target::ALL {
            if let Ok(m) = catalog::module(spec.form, t) {
                out.push((format!("{} on {t}", spec.name), m.to_ptx().unwrap()));
            }
        }
    }
    out
}

/// How ptxkit's verdicts on a set of variants compare with ptxas's (the agreement tests).
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Variants judged.
    pub variants: usize,
    /// Both accept.
    pub both_accept: usize,
    /// Both reject.
    pub both_reject: usize,
    /// ptxas rejects, ptxkit accepts.
    pub missed: usize,
    /// ptxas accepts, ptxkit rejects.
    pub false_alarm: usize,
}

/// A variant ptxkit and ptxas judge differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// ptxas rejects, ptxkit accepts.
    Missed,
    /// ptxas accepts, ptxkit rejects.
    FalseAlarm,
}

impl Tally {
    /// Counts one variant's verdicts; says how they disagree, if they do.
    pub fn record(&mut self, ptxas_ok: bool, ptxkit_ok: bool) -> Option<Disagreement> {
        self.variants += 1;
        match (ptxas_ok, ptxkit_ok) {
            (true, true) => self.both_accept += 1,
            (false, false) => self.both_reject += 1,
            (false, true) => {
                self.missed += 1;
                return Some(Disagreement::Missed);
            }
            (true, false) => {
                self.false_alarm += 1;
                return Some(Disagreement::FalseAlarm);
            }
        }
        None
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Tally) {
        self.variants += other.variants;
        self.both_accept += other.both_accept;
        self.both_reject += other.both_reject;
        self.missed += other.missed;
        self.false_alarm += other.false_alarm;
    }
}
