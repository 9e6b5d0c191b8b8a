//! The form table against ptxas 13.0, from both sides: for every form, its example kernel assembles
//! on the targets ptxkit accepts it for (sm_80, sm_90a, sm_100a and the rest of the table's targets),
//! and on a target the table says lacks it, ptxkit refuses it and ptxas rejects the same text.
//! Every instruction written also matches its row's syntax pattern.

use ptx_isa::forms::syntax::Pattern;
use ptx_isa::{Form, Module, Target, catalog, ptxas};

fn check_patterns(m: &Module) {
    for f in m.functions() {
        for (_, i) in f.instructions() {
            let form = i.form.expect("builder instructions name their form");
            let p = Pattern::parse(form.spec().syntax).unwrap();
            assert!(
                p.matches_opcode(i.mnemonic, i.modifiers),
                "`{}` does not match its form `{}` ({})",
                i.opcode(),
                form.spec().name,
                form.spec().syntax
            );
            assert!(
                p.matches_operand_count(i.operands.len()),
                "`{}` has {} operands; `{}` wants {:?}",
                i.opcode(),
                i.operands.len(),
                form.spec().syntax,
                p.operand_range()
            );
        }
    }
}

#[test]
fn every_form_builds_where_the_table_allows_it_and_not_elsewhere() {
    for spec in Form::all() {
        for &t in Target::ALL {
            match catalog::module(spec.form, t) {
                Ok(m) if spec.targets.has(t) => {
                    check_patterns(&m);
                    let text = m.to_ptx().unwrap();
                    let v = m.version().unwrap();
                    assert!(
                        v >= spec.min_ptx && v >= t.min_ptx(),
                        "{} on {t}: .version {v}",
                        spec.name
                    );
                    assert!(text.contains(&format!(".version {v}\n")));
                }
                Ok(_) => panic!("{} built on {t}, which the table says lacks it", spec.name),
                Err(e) if spec.targets.has(t) => panic!("{} on {t}: {e}", spec.name),
                Err(e) => {
                    assert_eq!(
                        e.kind,
                        ptx_isa::ErrorKind::UnsupportedTarget,
                        "{}: {e}",
                        spec.name
                    );
                    assert_eq!(e.place.target, Some(t));
                    // The first instruction the target lacks is named: this form, or one its
                    // example needs first (the bulk shared-to-cluster copy needs `mapa`).
                    assert!(
                        e.message.contains("lacks") && e.place.instruction.is_some(),
                        "{e}"
                    );
                }
            }
        }
    }
}

#[test]
fn ptxas_agrees_with_the_gating() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    eprintln!("ptxas: {}", ptxas.version());
    let mut accepted = 0;
    let mut rejected = 0;
    let mut failures = Vec::new();
    for spec in Form::all() {
        // Accepting side: the project's main targets and the lowest target that has the form.
        let mut targets: Vec<Target> = [Target::Sm80, Target::Sm90a, Target::Sm100a]
            .into_iter()
            .filter(|t| spec.targets.has(*t))
            .collect();
        if let Some(lowest) = spec.targets.targets().next() {
            if !targets.contains(&lowest) {
                targets.push(lowest);
            }
        }
        for t in targets {
            let text = catalog::module(spec.form, t)
                .and_then(|m| m.to_ptx())
                .unwrap();
            let out = ptxas.assemble(&text, t, &[]).unwrap();
            if out.ok {
                accepted += 1;
            } else {
                failures.push(format!(
                    "{} on {t}: ptxas rejected what ptxkit accepts:\n{}\n{text}",
                    spec.name, out.log
                ));
            }
        }
        // Rejecting side: the highest target the table says lacks the form.
        if let Some(t) = Target::ALL
            .iter()
            .rev()
            .copied()
            .find(|t| !spec.targets.has(*t))
        {
            let text = catalog::module_unchecked(spec.form, t)
                .and_then(|m| m.to_ptx())
                .unwrap();
            let out = ptxas.assemble(&text, t, &[]).unwrap();
            if out.ok {
                failures.push(format!(
                    "{} on {t}: ptxkit rejects it but ptxas assembles it",
                    spec.name
                ));
            } else {
                rejected += 1;
            }
        }
    }
    eprintln!("ptxas agreed on {accepted} accepted and {rejected} rejected form/target pairs");
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n---\n")
    );
}
