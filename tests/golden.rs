//! Golden PTX files: the exact text of the built-in kernels and of the instruction catalog, for
//! review. `BLESS=1 cargo test --test golden` rewrites them; otherwise a difference fails. Every
//! golden kernel also assembles with ptxas for its target.

mod support;

use ptxkit::isa::{Form, Target, catalog, ptxas};

/// Compares `text` with the golden file `rel` (or writes it under `BLESS=1`) and assembles it.
fn check(rel: &str, text: &str, target: Target) -> Result<(), String> {
    support::golden(rel, text)?;
    if let Some(ptxas) = ptxas::for_tests()? {
        let out = ptxas
            .assemble(text, target, &[])
            .map_err(|e| e.to_string())?;
        if !out.ok {
            return Err(format!("{rel}: ptxas rejected it:\n{}", out.log));
        }
    }
    Ok(())
}

fn builtin(name: &str, target: Target) {
    let b = ptxkit::registry::entry(name).unwrap();
    let text = (b.build)(target).and_then(|m| m.to_ptx()).unwrap();
    check(&format!("{name}.{}.ptx", target.name()), &text, target).unwrap();
}

#[test]
fn vector_add_sm_80() {
    builtin("vector_add", Target::Sm80);
}

#[test]
fn vector_add_sm_90a() {
    builtin("vector_add", Target::Sm90a);
}

#[test]
fn catalog_sm_90a() {
    let mut errors = Vec::new();
    for spec in Form::all().iter().filter(|f| f.targets.has(Target::Sm90a)) {
        let text = catalog::module(spec.form, Target::Sm90a)
            .and_then(|m| m.to_ptx())
            .unwrap();
        if let Err(e) = check(
            &format!("catalog/sm_90a/{}.ptx", spec.name),
            &text,
            Target::Sm90a,
        ) {
            errors.push(e);
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
