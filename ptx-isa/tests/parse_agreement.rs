//! Agreement with ptxas (issue 9, part 5). A corpus of valid kernels (the catalog's example of every
//! form on a target that has it, the golden files, and the nvcc/Triton/LLVM-style files under
//! `tests/corpus/`) must all pass `check`; a mutation set derived from them (wrong type suffix,
//! undeclared register, a target or `.version` that lacks an instruction, wrong operand count, bad
//! vector arity, missing label, out-of-range immediate, redeclared register, wrong state space,
//! an address without brackets, a guard that is not a predicate) is
//! given to both ptxas and ptxkit, and every mutant ptxas rejects must be rejected by ptxkit. The
//! figures are printed with the test output (`--nocapture`).

use std::path::{Path, PathBuf};

use ptx_isa::validate::{Options, check, is_valid};

mod support;
use ptx_isa::{Form, Target, catalog, ptxas};
use support::{Disagreement, Tally, assert_none};

struct Source {
    name: String,
    text: String,
}

fn sources() -> Vec<Source> {
    let mut v = Vec::new();
    for spec in Form::all() {
        let t = [Target::Sm90a, Target::Sm100a, Target::Sm80]
            .into_iter()
            .find(|t| spec.targets.has(*t))
            .or_else(|| spec.targets.targets().next());
        let Some(t) = t else { continue };
        if let Ok(m) = catalog::module(spec.form, t) {
            v.push(Source {
                name: format!("catalog/{}@{t}", spec.name),
                text: m.to_ptx().unwrap(),
            });
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [root.join("tests/corpus"), root.join("../tests/golden")] {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            files.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "ptx")),
            );
        }
    }
    files.sort();
    for f in files {
        v.push(Source {
            name: f.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&f).unwrap(),
        });
    }
    v
}

/// Lines that hold one instruction of a form in the table: `\t[@p ]opcode operands;[ // comment]`.
/// Instructions the table does not know (nvcc's `wmma.*`, say) are kept as written with a warning;
/// ptxkit cannot judge their operands, so they are not mutated.
fn instruction_lines(text: &str) -> Vec<usize> {
    let unknown: Vec<usize> = ptx_isa::parse::parse(text)
        .map(|p| {
            p.warnings
                .iter()
                .filter(|w| w.message.contains("is not a form in ptxkit's table"))
                .map(|w| w.pos.line as usize - 1)
                .collect()
        })
        .unwrap_or_default();
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start();
            let code = t.split("//").next().unwrap_or("").trim_end();
            let first = code.split_whitespace().next().unwrap_or("");
            l.starts_with(['\t', ' '])
                && code.ends_with(';')
                && (t.starts_with('@') || t.starts_with(|c: char| c.is_ascii_lowercase()))
                && !first.ends_with(':')
        })
        .map(|(i, _)| i)
        .filter(|i| !unknown.contains(i))
        .collect()
}

fn replace_line(text: &str, k: usize, new: &str) -> String {
    let mut out: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(l) = out.get_mut(k) {
        *l = new.to_string();
    }
    out.join("\n") + "\n"
}

fn target_of(text: &str) -> Option<Target> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(".target"))?;
    let name = line.trim_start().trim_start_matches(".target").trim();
    name.split(',').next()?.trim().parse().ok()
}

const SIZE_SWAPS: &[(&str, &str)] = &[
    (".f32 ", ".f64 "),
    (".f64 ", ".f32 "),
    (".u32 ", ".u64 "),
    (".s32 ", ".s64 "),
    (".b32 ", ".b64 "),
    (".u64 ", ".u32 "),
    (".s64 ", ".s32 "),
    (".b64 ", ".b32 "),
    (".u16 ", ".u64 "),
    (".b16 ", ".b64 "),
];

/// The mutants of one source: (kind, text).
fn mutants(text: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let instrs = instruction_lines(text);
    // Wrong type suffix: up to three instructions.
    let mut n = 0;
    for &k in &instrs {
        let l = lines[k];
        let code = l.split("//").next().unwrap_or("");
        if let Some((from, to)) = SIZE_SWAPS.iter().find(|(f, _)| code.contains(f)) {
            out.push((
                "type suffix",
                replace_line(text, k, &l.replacen(from, to, 1)),
            ));
            n += 1;
            if n == 3 {
                break;
            }
        }
    }
    // Undeclared register: the last register operand of the first instruction that has one.
    if let Some(&k) = instrs.iter().find(|&&k| lines[k].contains(", %")) {
        let l = lines[k];
        if let Some(at) = l.rfind(", %") {
            let end = l[at + 2..]
                .find(|c: char| !(c == '%' || c.is_ascii_alphanumeric()))
                .map_or(l.len(), |e| at + 2 + e);
            let new = format!("{}, %undeclared9{}", &l[..at], &l[end..]);
            out.push(("undeclared register", replace_line(text, k, &new)));
        }
    }
    // A target and a version that lack what the kernel uses.
    if let Some(t) = target_of(text) {
        if t != Target::Sm80 {
            out.push((
                "target",
                text.replacen(&format!(".target {}", t.name()), ".target sm_80", 1),
            ));
        }
        if let Some(v) = lines.iter().find(|l| l.starts_with(".version")) {
            out.push(("version", text.replacen(v, ".version 7.0", 1)));
        }
    }
    // Wrong operand count: drop the last operand of up to two instructions.
    let mut n = 0;
    for &k in &instrs {
        let l = lines[k];
        let code = l.split("//").next().unwrap_or("").trim_end();
        if code.contains('{') || code.contains('(') || !code.contains(", ") {
            continue;
        }
        if let Some(at) = code.rfind(", ") {
            out.push((
                "operand count",
                replace_line(text, k, &format!("{};", &code[..at])),
            ));
            n += 1;
            if n == 2 {
                break;
            }
        }
    }
    // Bad vector arity: drop (or add) an element of the braced vector of up to three .vN accesses.
    for &k in instrs
        .iter()
        .filter(|&&k| lines[k].contains(".v2") || lines[k].contains(".v4"))
        .take(3)
    {
        let l = lines[k];
        if let (Some(open), Some(close)) = (l.find('{'), l.find('}')) {
            let inner = &l[open + 1..close];
            if let Some(at) = inner.rfind(',') {
                let new = format!("{}{}{}", &l[..open + 1], &inner[..at], &l[close..]);
                out.push(("vector arity", replace_line(text, k, &new)));
                let first = inner.split(',').next().unwrap_or("").trim();
                let new = format!("{}{inner}, {first}{}", &l[..open + 1], &l[close..]);
                out.push(("vector arity", replace_line(text, k, &new)));
            }
        }
    }
    // Missing label: up to three branches.
    for &k in instrs.iter().filter(|&&k| lines[k].contains("bra")).take(3) {
        let l = lines[k];
        if let Some(at) = l.rfind(' ') {
            let new = format!("{} $L__missing;", &l[..at]);
            out.push(("missing label", replace_line(text, k, &new)));
        }
    }
    // Operand kind: an address written without its brackets.
    if let Some(&k) = instrs.iter().find(|&&k| lines[k].contains("[%")) {
        let l = lines[k];
        if let (Some(open), Some(close)) = (l.find("[%"), l.find(']')) {
            if close > open {
                let new = format!("{}{}{}", &l[..open], &l[open + 1..close], &l[close + 1..]);
                out.push(("operand kind", replace_line(text, k, &new)));
            }
        }
    }
    // A guard that is not a predicate.
    if let Some(&k) = instrs
        .iter()
        .find(|&&k| lines[k].trim_start().starts_with("@%p"))
    {
        let l = lines[k];
        let new = l.replacen("@%p", "@%rd", 1);
        out.push(("guard type", replace_line(text, k, &new)));
    }
    // Out-of-range immediate: a barrier number past 15.
    if let Some(&k) = instrs.iter().find(|&&k| lines[k].contains("ret;")) {
        let new = format!("\tbar.sync 16;\n{}", lines[k]);
        out.push(("immediate range", replace_line(text, k, &new)));
        let new = format!("\tbar.sync -1;\n{}", lines[k]);
        out.push(("immediate range", replace_line(text, k, &new)));
    }
    // Redeclared register: the first `.reg` line twice.
    if let Some((k, l)) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with(".reg"))
    {
        out.push((
            "redeclared register",
            replace_line(text, k, &format!("{l}\n{l}")),
        ));
    }
    // Wrong state space: a parameter read from .global.
    if let Some(&k) = instrs.iter().find(|&&k| lines[k].contains("ld.param")) {
        out.push((
            "state space",
            replace_line(text, k, &lines[k].replacen("ld.param", "ld.global", 1)),
        ));
    }
    out
}

#[test]
fn every_valid_kernel_passes_check() {
    let mut bad = Vec::new();
    let all = sources();
    for s in &all {
        let d = check(&s.text, &Options::default());
        if !is_valid(&d) {
            bad.push(format!("{}: {}", s.name, d[0]));
        }
    }
    eprintln!(
        "{} valid kernels: {} pass check",
        all.len(),
        all.len() - bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn ptxkit_rejects_every_mutant_ptxas_rejects() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    let mut jobs = Vec::new();
    for s in sources() {
        let Some(t) = target_of(&s.text) else {
            continue;
        };
        for (kind, text) in mutants(&s.text) {
            let target = target_of(&text).unwrap_or(t);
            jobs.push((s.name.clone(), kind, text, target));
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    let chunk = jobs.len().div_ceil(threads).max(1);
    let results: Vec<(String, &str, bool, bool, String)> = std::thread::scope(|sc| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                let ptxas = &ptxas;
                sc.spawn(move || {
                    part.iter()
                        .map(|(name, kind, text, target)| {
                            let out = ptxas.assemble(text, *target, &[]).unwrap();
                            let d = check(text, &Options::default());
                            let first = d.iter().find(|x| !is_valid(std::slice::from_ref(*x)));
                            let why = first.map_or(out.log.clone(), |x| x.to_string());
                            (name.clone(), *kind, out.ok, is_valid(&d), why)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut by_kind: std::collections::BTreeMap<&str, Tally> = Default::default();
    let mut missed = Vec::new();
    let mut alarms = Vec::new();
    for (name, kind, ptxas_ok, ptxkit_ok, why) in &results {
        let t = by_kind.entry(kind).or_default();
        match t.record(*ptxas_ok, *ptxkit_ok) {
            Some(Disagreement::Missed) => missed.push(format!(
                "{name} [{kind}]: ptxas rejects, ptxkit accepts:\n{why}"
            )),
            Some(Disagreement::FalseAlarm) => {
                alarms.push(format!("{name} [{kind}]: ptxas accepts, ptxkit says {why}"))
            }
            None => {}
        }
    }
    let mut total = Tally::default();
    eprintln!(
        "ptxas agreement on {} mutants ({}):",
        results.len(),
        ptxas.version()
    );
    eprintln!(
        "  {:<20} {:>8} {:>8} {:>8} {:>8}",
        "mutation", "both-rej", "both-ok", "missed", "f-alarm"
    );
    for (kind, t) in &by_kind {
        eprintln!(
            "  {kind:<20} {:>8} {:>8} {:>8} {:>8}",
            t.both_reject, t.both_accept, t.missed, t.false_alarm
        );
        total.add(t);
    }
    let rejected = total.both_reject + total.missed;
    eprintln!(
        "  ptxas rejected {rejected}; ptxkit rejected {} of them ({:.1}%); ptxkit also rejected {} that ptxas accepts; agreement {:.1}% overall",
        total.both_reject,
        100.0 * total.both_reject as f64 / rejected.max(1) as f64,
        total.false_alarm,
        100.0 * (total.both_reject + total.both_accept) as f64 / results.len().max(1) as f64
    );
    for a in alarms.iter().take(10) {
        eprintln!("  false alarm: {a}");
    }
    assert_none(
        &alarms,
        "mutants ptxas accepts are rejected by ptxkit",
        15,
        "\n",
    );
    assert_none(&missed, "mutants ptxas rejects pass ptxkit", 15, "\n---\n");
}
