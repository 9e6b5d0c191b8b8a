//! The operand types of the rows (`forms::operand_types`, issue 14: "derived, not copied") against
//! the builder and the validator. Every row's catalog instruction, which the builder writes, passes
//! the validator's type checks, and every typed operand it has is one the table names; each typed
//! operand given a register of a wrong type is an `OperandType` error at its line, and ptxas 13.0
//! refuses the same text.

use ptx_isa::forms::operand_types::{self, ALL, Fit, Slot};
use ptx_isa::instr::Operand;
use ptx_isa::types::ScalarType;
use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{ErrorKind, Form, Target, catalog, ptxas};

/// The catalog kernel of `form` on its first target, the instruction of the row and its line
/// (0-based).
fn catalog_instr(form: Form) -> Option<(Target, String, ptx_isa::instr::Instruction, usize)> {
    let t = [Target::Sm90a, Target::Sm100a, Target::Sm80]
        .into_iter()
        .find(|t| form.spec().targets.has(*t))
        .or_else(|| form.spec().targets.targets().next())?;
    let text = catalog::module(form, t).ok()?.to_ptx().ok()?;
    let parsed = ptx_isa::parse::parse(&text).ok()?;
    let f = parsed.module.functions().first()?;
    let spans = parsed.source_map.functions.first()?;
    let (k, i) = f
        .instructions()
        .find(|(_, i)| i.form == Some(form))
        .map(|(k, i)| (k, i.to_instruction()))?;
    let line = spans.body.get(k)?.line as usize - 1;
    Some((t, text, i, line))
}

/// The slots of `form` that apply to `i`, one per operand position.
fn applying(form: Form, i: &ptx_isa::instr::Instruction) -> Vec<(usize, Slot)> {
    let types: Vec<ScalarType> = i.types().collect();
    let mut out = Vec::new();
    for s in operand_types::of(form) {
        if !operand_types::applies(s.when, &i.modifiers, &types)
            || operand_types::wanted(s.want, &types).is_none()
        {
            continue;
        }
        let positions: Vec<usize> = if s.operand == ALL {
            (0..i.operands.len()).collect()
        } else {
            vec![s.operand]
        };
        for k in positions {
            if k < i.operands.len() {
                out.push((k, *s));
            }
        }
    }
    out
}

/// True when operand `o` holds a register whose type the validator checks.
fn is_register(o: &Operand) -> bool {
    match o {
        Operand::Reg(_) | Operand::Symbol(_) => true,
        Operand::Vector(v) | Operand::Tensor { coords: v, .. } => {
            v.first().is_some_and(is_register)
        }
        _ => false,
    }
}

/// The operands of an instruction line split at top-level commas, after the opcode.
fn split_operands(line: &str) -> (String, Vec<String>) {
    let t = line.trim_end().trim_end_matches(';');
    let start = t.trim_start();
    let lead = &t[..t.len() - start.len()];
    let (head, rest) = start.split_once(char::is_whitespace).unwrap_or((start, ""));
    let mut ops = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in rest.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                ops.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        ops.push(cur.trim().to_string());
    }
    (format!("{lead}{head}"), ops)
}

/// `op` with its (first) register replaced by `%wrong`: `{%f1, %f2}` gives `{%wrong, %f2}`,
/// `[%rd1, {%f5, %f6}]` gives `[%rd1, {%wrong, %f6}]`.
fn wrong_register(op: &str) -> String {
    if let Some(open) = op.find('{') {
        let rest = &op[open + 1..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        return format!("{}%wrong{}", &op[..open + 1], &rest[end..]);
    }
    "%wrong".to_string()
}

/// A register type the slot refuses, of another size and kind: an .f64, a .b16 for a 64-bit
/// type, a .b32 for a predicate (ptxas 13.0 takes a predicate register for some .b32 operands).
/// Where a wider register is taken (`ld`, `st`, `cvt`), a narrower one; `None` below 32 bits.
fn refused(slot: &Slot, i: &ptx_isa::instr::Instruction) -> Option<&'static str> {
    let types: Vec<ScalarType> = i.types().collect();
    let want = operand_types::wanted(slot.want, &types)?;
    Some(match (slot.fit, want.bits()) {
        (Fit::Wider, 64) => ".b32",
        (Fit::Wider, 32) => ".b16",
        (Fit::Wider, _) => return None,
        _ if want == ScalarType::Pred => ".b32",
        (_, 64) => ".b16",
        _ => ".f64",
    })
}

#[test]
fn the_builder_writes_what_the_rows_type() {
    let mut typed = 0;
    for spec in Form::all() {
        let Some((t, text, i, _)) = catalog_instr(spec.form) else {
            continue;
        };
        let bad: Vec<String> = check(&text, &Options::default())
            .into_iter()
            .filter(|d| {
                d.severity == Severity::Error
                    && matches!(d.kind, ErrorKind::OperandType | ErrorKind::OperandKind)
            })
            .map(|d| d.to_string())
            .collect();
        assert!(bad.is_empty(), "{} on {t}: {bad:#?}", spec.name);
        typed += applying(spec.form, &i)
            .iter()
            .filter(|(k, _)| is_register(&i.operands[*k]))
            .count();
    }
    // Most rows type at least one operand of their catalog instruction.
    assert!(typed > 200, "only {typed} typed operands in the catalog");
}

#[test]
fn each_typed_operand_of_a_wrong_type_is_refused_by_both() {
    let ptxas = ptxas::for_tests().unwrap();
    let mut tried = 0;
    let mut failures = Vec::new();
    for spec in Form::all() {
        let Some((t, text, i, line)) = catalog_instr(spec.form) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let (head, ops) = split_operands(lines[line]);
        let mut seen = std::collections::BTreeSet::new();
        for (k, slot) in applying(spec.form, &i) {
            // One mutation per operand; packed vectors (`mov.b64 d, {lo, hi}`) are sized, not typed.
            if !is_register(&i.operands[k]) || slot.fit == Fit::Packed || !seen.insert(k) {
                continue;
            }
            let (Some(op), Some(wrong)) = (ops.get(k), refused(&slot, &i)) else {
                continue;
            };
            let mut new_ops = ops.clone();
            new_ops[k] = wrong_register(op);
            let mut out = Vec::new();
            for (n, l) in lines.iter().enumerate() {
                if n == line {
                    out.push(format!("{head} {};", new_ops.join(", ")));
                } else {
                    out.push(l.to_string());
                }
                if l.trim() == "{" && !out.iter().any(|x| x.contains("%wrong;")) {
                    out.push(format!("\t.reg {wrong} %wrong;"));
                }
            }
            let mutant = out.join("\n") + "\n";
            let at = line as u32 + 2;
            tried += 1;
            let d = check(&mutant, &Options::default());
            if !d.iter().any(|x| {
                x.severity == Severity::Error
                    && x.kind == ErrorKind::OperandType
                    && x.pos.is_some_and(|p| p.line == at)
            }) {
                failures.push(format!(
                    "{} operand {k} on {t}: no OperandType error at line {at}: {d:#?}\n{mutant}",
                    spec.name
                ));
            }
            if let Some(p) = &ptxas {
                if p.assemble(&mutant, t, &[]).expect("ptxas runs").ok {
                    failures.push(format!(
                        "{} operand {k} on {t}: ptxas takes the wrong type\n{mutant}",
                        spec.name
                    ));
                }
            }
        }
    }
    assert!(tried > 200, "only {tried} mutations");
    assert!(
        failures.is_empty(),
        "{} of {tried}:\n{}",
        failures.len(),
        failures[..failures.len().min(40)]
            .iter()
            .map(|f| f.lines().next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `mbarrier.arrive.noComplete` takes `.release.cta` (PTX ISA 9.7.13.15.13): the builder writes
/// it, the validator accepts it, and ptxas too; `.release.cluster` is refused by all three.
#[test]
fn no_complete_takes_release_at_cta_scope() {
    use ptx_isa::builder::{ArriveOpts, Scope};
    use ptx_isa::reg::ty;
    use ptx_isa::space::{Addr, spaces};
    let build = |scope: Scope| {
        let mut m = ptx_isa::Module::new(Target::Sm90a);
        m.shared("bar", 8, 8).unwrap();
        let mut k = m.entry("k");
        let (b, s) = (k.reg::<ty::U32>(), k.reg::<ty::B64>());
        k.mov_shared_addr(b, "bar").unwrap();
        let r = k.mbarrier_arrive_with(
            &ArriveOpts {
                no_complete: true,
                count: Some(2u32.into()),
                release: Some(scope),
                ..ArriveOpts::default()
            },
            s.into(),
            Addr::<spaces::Shared>::reg32(b),
        );
        (r, k, m)
    };
    let (r, mut k, mut m) = build(Scope::Cta);
    r.unwrap();
    k.ret().unwrap();
    m.add(k.finish().unwrap()).unwrap();
    let text = m.to_ptx().unwrap();
    assert!(text.contains("mbarrier.arrive.noComplete.release.cta.shared.b64"));
    let errs: Vec<_> = check(&text, &Options::default())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert!(errs.is_empty(), "{errs:#?}");
    if let Some(p) = ptxas::for_tests().unwrap() {
        assert!(p.assemble(&text, Target::Sm90a, &[]).unwrap().ok);
        let cluster = text.replace("release.cta", "release.cluster");
        assert!(!p.assemble(&cluster, Target::Sm90a, &[]).unwrap().ok);
        assert!(
            check(&cluster, &Options::default())
                .iter()
                .any(|d| d.severity == Severity::Error && d.kind == ErrorKind::InvalidModifier)
        );
    }
    let (r, _, _) = build(Scope::Cluster);
    assert_eq!(r.unwrap_err().kind, ErrorKind::InvalidModifier);
}
