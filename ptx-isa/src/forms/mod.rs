//! The table of instruction forms: the one source of truth for gating, validation, docs and the
//! catalog.
//!
//! Every row records a form's name (also its catalog file name), its syntax pattern (opcode
//! modifiers and operands, see [`syntax`]), the lowest PTX ISA version that has it, the targets that
//! have it, and the PTX ISA section it comes from. Builder methods name the row of each instruction
//! they write; rows for optional features (an eviction-priority qualifier, a `.cluster` scope) are
//! added as extra requirements by the methods that use them.

pub mod families;
pub mod features;
pub mod operand_types;
pub mod rules;
pub mod syntax;
mod table;

pub use table::Form;

use crate::target::{PtxVersion, Target, TargetSet};

/// One row of the form table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormSpec {
    /// The row.
    pub form: Form,
    /// A unique name such as `add.f32` (the catalog's file name).
    pub name: &'static str,
    /// The syntax pattern: `add{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b`.
    pub syntax: &'static str,
    /// The lowest PTX ISA version that has the form.
    pub min_ptx: PtxVersion,
    /// The targets that have the form.
    pub targets: TargetSet,
    /// The PTX ISA section that defines it.
    pub section: &'static str,
    /// True for feature rows (a qualifier that other forms take), false for instructions.
    pub feature: bool,
}

impl Form {
    /// The form's row.
    pub fn spec(self) -> &'static FormSpec {
        &table::FORMS[self as usize]
    }

    /// Every row, in table order.
    pub fn all() -> &'static [FormSpec] {
        table::FORMS
    }

    /// The row called `name`.
    pub fn by_name(name: &str) -> Option<Form> {
        table::FORMS.iter().find(|f| f.name == name).map(|f| f.form)
    }

    /// The row's syntax pattern, parsed once (every row's pattern parses: `table_is_consistent`).
    pub fn pattern(self) -> &'static syntax::Pattern {
        static PATTERNS: std::sync::OnceLock<Vec<syntax::Pattern>> = std::sync::OnceLock::new();
        let all = PATTERNS.get_or_init(|| {
            table::FORMS
                .iter()
                .map(|f| {
                    syntax::Pattern::parse(f.syntax).unwrap_or_else(|e| {
                        // A malformed row is a bug in the table, caught by its tests.
                        panic!("form table row {}: {}", f.name, e.0)
                    })
                })
                .collect()
        });
        &all[self as usize]
    }

    /// The types the row's opcode names (`ld`: `.b8` ... `.f64`), in pattern order.
    pub fn types(self) -> Vec<crate::types::ScalarType> {
        let mut out = Vec::new();
        for e in self.pattern().elements() {
            for alt in e.alternatives() {
                for m in alt {
                    if let Some(t) = crate::types::ScalarType::from_name(m) {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
            }
        }
        out
    }

    /// True when `target` has the form.
    pub fn available_on(self, target: Target) -> bool {
        self.spec().targets.has(target)
    }

    /// The lowest PTX version that can express the form on `target`: the larger of the form's and the
    /// target's minimum.
    pub fn min_ptx_on(self, target: Target) -> PtxVersion {
        let later = table::LATER_ON
            .iter()
            .filter(|(f, set, _)| *f == self && set.has(target))
            .map(|(_, _, v)| *v)
            .max();
        self.spec()
            .min_ptx
            .max(target.min_ptx())
            .max(later.unwrap_or(PtxVersion::MIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One pattern parser: outside `forms/syntax.rs`, no code reads a row's syntax string except
    /// to quote it in a message; everything else asks [`Form::pattern`].
    #[test]
    fn one_pattern_parser() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        walk(&src, &mut files);
        let mut found = Vec::new();
        for f in files {
            if f.ends_with("forms/syntax.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let l = line.replace(' ', "");
                // The needles are built so that this file does not hold them.
                let reads =
                    ["split", "find", "chars", "strip", "trim"].map(|m| format!("syntax.{m}"));
                if reads.iter().any(|r| l.contains(r)) {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "a second pattern parser:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn table_is_consistent() {
        let mut names = std::collections::HashSet::new();
        for (i, f) in Form::all().iter().enumerate() {
            assert_eq!(f.form as usize, i, "row {} out of order", f.name);
            assert!(names.insert(f.name), "duplicate form name {}", f.name);
            assert!(!f.targets.is_empty(), "{} has no target", f.name);
            assert!(
                f.min_ptx <= PtxVersion::MAX,
                "{} needs PTX {}",
                f.name,
                f.min_ptx
            );
            assert!(f.section.contains(' '), "{} cites no section", f.name);
            syntax::Pattern::parse(f.syntax)
                .unwrap_or_else(|e| panic!("{}: bad syntax pattern: {}", f.name, e.0));
            assert_eq!(Form::by_name(f.name), Some(f.form));
        }
    }
}
