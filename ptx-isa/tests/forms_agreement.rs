//! Generated agreement with ptxas (issue 14, part 5). For every instruction row of the form table,
//! on up to three of its targets, the row's catalog instruction is varied one modifier at a time:
//! every other alternative of each element of the row's pattern (an optional one also left out),
//! numbers in `*` modifiers (`m64n*k16`, `x*`) from a probe list, and every position swapped for
//! each modifier of the rows that share the mnemonic (the same and the neighbouring families).
//! Each variant keeps the catalog's operands; a video row's variants also write every selector
//! and negation on each of its operands (on its first target). ptxas 13.0 and `ptxkit check`
//! judge every variant; the per-family counts are printed (`--nocapture`).
//!
//! Variants are batched: one kernel per (row, target) holds up to [`BATCH`] variant lines, and a
//! rejection is attributed by the line ptxas names. ptxas stops at a syntax error, so a batch that
//! fails is run again without the lines it named until it assembles; a batch that fails without
//! naming a line is split into single lines.
//!
//! The disagreements left are listed in `tests/agreement_known.txt` (one per line: direction,
//! row, target, opcode); the test fails when a new one appears or a listed one is gone, so the list only
//! shrinks by fixing the table. The per-family counts are also the table that ends `AGREEMENT.md`,
//! which must be current. `BLESS=1` rewrites both.

mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use ptx_isa::error::ErrorKind;
use ptx_isa::forms::families::family_of;
use ptx_isa::forms::syntax::Pattern;
use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{Form, Target, catalog, ptxas};
use support::{Disagreement, Tally};

/// Variant lines per ptxas run.
const BATCH: usize = 48;

/// Numbers tried in `*` modifiers: legal and illegal ones for wgmma N, tcgen05 `.num`, `x*`.
const PROBES: &[u32] = &[0, 1, 2, 3, 4, 8, 12, 16, 24, 40, 48, 64, 128, 132, 256, 264];

/// The targets a row is tried on: the oldest, an arch-specific one and the newest it has.
fn targets_of(form: Form) -> Vec<Target> {
    let all: Vec<Target> = form.spec().targets.targets().collect();
    let mut v = Vec::new();
    for t in [
        all.first().copied(),
        all.iter().copied().find(|t| *t == Target::Sm90a),
        all.last().copied(),
    ]
    .into_iter()
    .flatten()
    {
        if !v.contains(&t) {
            v.push(t);
        }
    }
    v
}

/// The catalog kernel of `form` on `t`, and the line (0-based) of its instruction of that row.
fn base(form: Form, t: Target) -> Option<(String, usize)> {
    let text = catalog::module(form, t).ok()?.to_ptx().ok()?;
    let parsed = ptx_isa::parse::parse(&text).ok()?;
    let f = parsed.module.functions().first()?;
    let spans = parsed.source_map.functions.first()?;
    let (k, _) = f.instructions().find(|(_, i)| i.form == Some(form))?;
    let line = spans.body.get(k)?.line as usize - 1;
    Some((text, line))
}

/// Splits an instruction line into (guard prefix, opcode, operands and the rest).
fn split_line(line: &str) -> (String, String, String) {
    let t = line.trim_start();
    let indent = &line[..line.len() - t.len()];
    let (guard, t) = if t.starts_with('@') {
        let end = t.find(char::is_whitespace).unwrap_or(t.len());
        (format!("{indent}{} ", &t[..end]), t[end..].trim_start())
    } else {
        (indent.to_string(), t)
    };
    let end = t
        .find(|c: char| c.is_whitespace() || c == ';')
        .unwrap_or(t.len());
    (guard, t[..end].to_string(), t[end..].to_string())
}

/// The modifiers of the rows that share `head` (the same and the neighbouring families).
fn sibling_tokens(head: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for spec in Form::all() {
        let p = spec.form.pattern();
        if p.mnemonic() != head || spec.name.starts_with("directive.") {
            continue;
        }
        for e in p.elements() {
            for alt in e.alternatives() {
                for m in alt.iter().filter(|m| !m.contains('*')) {
                    out.insert(m.clone());
                }
            }
        }
    }
    out
}

/// Every alternative of `alt` with its `*` replaced by each probe number.
fn expand(alt: &[String]) -> Vec<Vec<String>> {
    if !alt.iter().any(|m| m.contains('*')) {
        return vec![alt.to_vec()];
    }
    PROBES
        .iter()
        .map(|n| alt.iter().map(|m| m.replace('*', &n.to_string())).collect())
        .collect()
}

/// The variant opcodes of a row's base opcode.
fn variants(p: &Pattern, opcode: &str) -> BTreeSet<String> {
    let mut parts = opcode.split('.');
    let head = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    let mut out = BTreeSet::new();
    let Some(chosen) = p.choices_of(head, &rest) else {
        return out;
    };
    // The base opcode's tokens, element by element.
    let mut segments: Vec<Vec<String>> = Vec::new();
    let mut at = 0;
    for (e, c) in p.elements().iter().zip(&chosen) {
        let n = c.map_or(0, |k| e.alternatives()[k].len());
        segments.push(rest[at..at + n].iter().map(|s| s.to_string()).collect());
        at += n;
    }
    let join = |segs: &[Vec<String>]| {
        let mut s = head.to_string();
        for m in segs.iter().flatten() {
            s.push('.');
            s.push_str(m);
        }
        s
    };
    // Every alternative of each element, and an optional element left out.
    for (k, e) in p.elements().iter().enumerate() {
        for alt in e.alternatives() {
            for a in expand(alt) {
                let mut segs = segments.clone();
                segs[k] = a;
                out.insert(join(&segs));
            }
        }
        if e.is_optional() {
            let mut segs = segments.clone();
            segs[k].clear();
            out.insert(join(&segs));
        }
    }
    // Each position swapped for a sibling's modifier.
    let siblings = sibling_tokens(head);
    for j in 0..rest.len() {
        for s in &siblings {
            let mut t: Vec<&str> = rest.clone();
            t[j] = s;
            out.insert(format!("{head}.{}", t.join(".")));
        }
    }
    out.remove(opcode);
    out.insert(opcode.to_string());
    out
}

/// Selectors tried on each operand of a video instruction (PTX ISA 9.7.18): legal and illegal ones
/// of each shape (scalar `.b0`..`.h1`, SIMD masks `.h10`, `.b31`, sources `.h32`, `.b7654`).
const SELECTORS: &[&str] = &[
    "b0", "b3", "b4", "h0", "h1", "h2", "h10", "h01", "h32", "h33", "h333", "b31", "b13", "b3210",
    "b0123", "b7654", "b765", "b8888", "x",
];

/// Operand variants of a video row's instruction (`operands` as written after the opcode, `;`
/// included): each selector on each operand, every set of negated sources, and, for a three-operand
/// base, the same on the merge form with a fourth operand `c` (where `d` takes a selector).
fn video_operands(operands: &str) -> Vec<String> {
    let Some((list, tail)) = operands.split_once(';') else {
        return Vec::new();
    };
    let base: Vec<String> = list.split(',').map(|o| o.trim().to_string()).collect();
    let mut forms = vec![base.clone()];
    if base.len() == 3 {
        let mut merge = base.clone();
        merge.push(base[0].clone());
        forms.push(merge);
    }
    let mut out = Vec::new();
    let join = |ops: &[String]| format!(" {};{tail}", ops.join(", "));
    for ops in &forms {
        out.push(join(ops));
        for k in 0..ops.len() {
            for sel in SELECTORS {
                let mut v = ops.clone();
                v[k] = format!("{}.{sel}", ops[k]);
                out.push(join(&v));
            }
        }
        for mask in 1u32..(1 << ops.len()) {
            let v: Vec<String> = ops
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    if mask & (1 << k) != 0 {
                        format!("-{o}")
                    } else {
                        o.clone()
                    }
                })
                .collect();
            out.push(join(&v));
        }
    }
    out
}

/// One (row, target) of the generated set: the row, the target, the catalog kernel, the line of
/// its instruction, the variant lines and their opcodes.
type Job = (Form, Target, String, usize, Vec<String>, Vec<String>);

/// One variant's verdicts.
struct Verdict {
    row: &'static str,
    family: String,
    target: Target,
    opcode: String,
    ptxas_ok: bool,
    ptxkit_ok: bool,
}

/// Lines of a ptxas log that name a line of the input: the 1-based line numbers.
fn named_lines(log: &str) -> BTreeSet<usize> {
    log.lines()
        .filter(|l| l.contains("error") || l.contains("fatal"))
        .filter_map(|l| {
            let at = l.find(", line ")?;
            let n: String = l[at + 7..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            n.parse().ok()
        })
        .collect()
}

/// Writes the items (lines or kernels) given into one module text, with the item of each line.
type Build<'a> = dyn Fn(&[usize]) -> (String, HashMap<usize, usize>) + 'a;

/// ptxas's verdicts on the items `pending` (lines or kernels), written together by `build`, which
/// also gives the item of each text line: run until the rest assembles, rejecting the items whose
/// lines ptxas names; an error at a line up to `header` (the module's `.version`/`.target`) rejects
/// every item; a failure that names no item's line is judged item by item.
fn ptxas_verdicts(
    ptxas: &ptxas::Ptxas,
    target: Target,
    ok: &mut [bool],
    mut pending: Vec<usize>,
    header: usize,
    build: &Build,
) {
    while !pending.is_empty() {
        let (t, at) = build(&pending);
        let out = ptxas.assemble(&t, target, &[]).expect("ptxas runs");
        if out.ok {
            break;
        }
        let lines = named_lines(&out.log);
        if lines.iter().any(|l| *l <= header) {
            pending.drain(..).for_each(|k| ok[k] = false);
            break;
        }
        let named: BTreeSet<usize> = lines.iter().filter_map(|n| at.get(n).copied()).collect();
        if named.is_empty() {
            // Nothing attributable: one item at a time.
            for k in pending.drain(..) {
                let (t, _) = build(&[k]);
                ok[k] = ptxas.assemble(&t, target, &[]).expect("ptxas runs").ok;
            }
            break;
        }
        for k in &named {
            ok[*k] = false;
        }
        pending.retain(|k| !named.contains(k));
    }
}

/// `f` on every job, on up to 8 threads; the results in no particular order.
fn in_parallel<J: Sync, R: Send>(jobs: &[J], f: &(dyn Fn(&J) -> Vec<R> + Sync)) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let next = &next;
                sc.spawn(move || {
                    let mut out = Vec::new();
                    while let Some(j) =
                        jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        out.extend(f(j));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Judges the variant lines of one (row, target): which ptxas accepts, which ptxkit accepts.
fn judge(
    ptxas: &ptxas::Ptxas,
    text: &str,
    line: usize,
    target: Target,
    lines: &[String],
) -> Vec<(bool, bool)> {
    let base: Vec<&str> = text.lines().collect();
    let build = |idx: &[usize]| -> (String, HashMap<usize, usize>) {
        let mut out = String::new();
        let mut at = HashMap::new();
        for (n, l) in base.iter().enumerate() {
            if n == line {
                for &k in idx {
                    at.insert(out.lines().count() + 1, k);
                    out.push_str(&lines[k]);
                    out.push('\n');
                }
            } else {
                out.push_str(l);
                out.push('\n');
            }
        }
        (out, at)
    };
    let mut ptxas_ok = vec![true; lines.len()];
    let mut ptxkit_ok = vec![true; lines.len()];
    for chunk in (0..lines.len()).collect::<Vec<_>>().chunks(BATCH) {
        // ptxkit: one check of the whole chunk; errors by line. A rule across the function's
        // instructions (one `.cta_group`) judges the chunk's lines together, where ptxas names no
        // line and each is judged alone: then so is each line for ptxkit.
        let (t, _) = build(chunk);
        let diags = check(&t, &Options::default());
        let across = diags.iter().any(|d| d.kind == ErrorKind::MixedCtaGroup);
        let judged: Vec<(Vec<usize>, Vec<_>)> = if across {
            chunk
                .iter()
                .map(|&k| {
                    let (t, _) = build(&[k]);
                    (vec![k], check(&t, &Options::default()))
                })
                .collect()
        } else {
            vec![(chunk.to_vec(), diags)]
        };
        for (lines_of, diags) in judged {
            let (_, at) = build(&lines_of);
            for d in diags {
                if d.severity != Severity::Error {
                    continue;
                }
                if let Some(k) = d.pos.and_then(|p| at.get(&(p.line as usize))) {
                    ptxkit_ok[*k] = false;
                }
            }
        }
        // ptxas: run until the rest assembles.
        ptxas_verdicts(ptxas, target, &mut ptxas_ok, chunk.to_vec(), 0, &build);
    }
    ptxas_ok.into_iter().zip(ptxkit_ok).collect()
}

#[test]
fn ptxkit_accepts_exactly_what_ptxas_accepts() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    // The jobs: (row, target, kernel, line, variant lines, opcodes).
    let mut jobs: Vec<Job> = Vec::new();
    // `AGREE_ROWS=tex,suld` judges only the rows whose names start with one of those (while
    // writing rows); the list of known disagreements is then not compared.
    let only: Option<Vec<String>> = std::env::var("AGREE_ROWS")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    for spec in Form::all() {
        if spec.feature || spec.name.starts_with("directive.") {
            continue;
        }
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|p| spec.name.starts_with(p.as_str())))
        {
            continue;
        }
        for t in targets_of(spec.form) {
            let Some((text, line)) = base(spec.form, t) else {
                continue;
            };
            let l = text.lines().nth(line).unwrap_or("").to_string();
            let (guard, opcode, rest) = split_line(&l);
            let opcodes: Vec<String> = variants(spec.form.pattern(), &opcode).into_iter().collect();
            let mut lines: Vec<String> = opcodes
                .iter()
                .map(|o| format!("{guard}{o}{rest}"))
                .collect();
            let mut opcodes = opcodes;
            // A video row's operands, on its first target: selectors and negations (the
            // variant is named by its opcode and operands).
            if spec.section.starts_with("9.7.18") && Some(&t) == targets_of(spec.form).first() {
                for ops in video_operands(&rest) {
                    lines.push(format!("{guard}{opcode}{ops}"));
                    opcodes.push(format!("{opcode}{}", ops.trim_end_matches(';')));
                }
            }
            jobs.push((spec.form, t, text, line, lines, opcodes));
        }
    }
    let judge_job = |(form, t, text, line, lines, opcodes): &Job| {
        judge(&ptxas, text, *line, *t, lines)
            .into_iter()
            .zip(opcodes)
            .map(|((ptxas_ok, ptxkit_ok), opcode)| {
                let op_only = opcode.split(' ').next().unwrap_or("");
                let mut parts = op_only.split('.');
                let head = parts.next().unwrap_or("");
                let mods: Vec<&str> = parts.collect();
                let family = family_of(head, &mods).map_or(head, |f| f.name);
                Verdict {
                    row: form.spec().name,
                    family: family.to_string(),
                    target: *t,
                    opcode: opcode.clone(),
                    ptxas_ok,
                    ptxkit_ok,
                }
            })
            .collect()
    };
    let verdicts: Vec<Verdict> = in_parallel(&jobs, &judge_job);
    // Per-family counts. A variant is judged with its row's catalog operands, so the same opcode
    // from two rows is two variants.
    let mut by_family: BTreeMap<String, Tally> = BTreeMap::new();
    let mut disagreements = BTreeSet::new();
    for v in &verdicts {
        let t = by_family.entry(v.family.clone()).or_default();
        if let Some(d) = t.record(v.ptxas_ok, v.ptxkit_ok) {
            let word = match d {
                Disagreement::Missed => "missed",
                Disagreement::FalseAlarm => "alarm",
            };
            disagreements.insert(format!("{word}\t{}\t{}\t{}", v.row, v.target, v.opcode));
        }
    }
    let mut total = Tally::default();
    eprintln!(
        "generated agreement with {} ({} rows x targets):",
        ptxas.version(),
        jobs.len()
    );
    eprintln!(
        "  {:<34} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "family", "variants", "both-ok", "both-rej", "missed", "f-alarm"
    );
    for (family, t) in &by_family {
        eprintln!(
            "  {family:<34} {:>8} {:>8} {:>8} {:>8} {:>8}",
            t.variants, t.both_accept, t.both_reject, t.missed, t.false_alarm
        );
        total.add(t);
    }
    eprintln!(
        "  {:<34} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "total",
        total.variants,
        total.both_accept,
        total.both_reject,
        total.missed,
        total.false_alarm
    );
    // The same counts as the table of `AGREEMENT.md`, which must be current (`BLESS=1` rewrites
    // it): after its heading, up to the end of the file.
    let version = ptxas.version();
    let mut table = format!(
        "## Per family (ptxas {})\n\n\
         | family | variants | both accept | both reject | missed | f-alarm |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n",
        version.rsplit_once(", V").map_or(version, |(_, v)| v)
    );
    for (family, t) in &by_family {
        table.push_str(&format!(
            "| `{family}` | {} | {} | {} | {} | {} |\n",
            t.variants, t.both_accept, t.both_reject, t.missed, t.false_alarm
        ));
    }
    table.push_str(&format!(
        "| **total** | **{}** | **{}** | **{}** | **{}** | **{}** |\n",
        total.variants, total.both_accept, total.both_reject, total.missed, total.false_alarm
    ));
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("AGREEMENT.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap_or_default();
    let prose = doc.split("## Per family").next().unwrap_or("").to_string();
    let known_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agreement_known.txt");
    let listed: BTreeSet<String> = std::fs::read_to_string(&known_path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        let mut s = String::from(
            "# Variants of tests/forms_agreement.rs where ptxkit and ptxas 13.0 disagree.\n\
             # missed: ptxas rejects, ptxkit accepts; alarm: ptxas accepts, ptxkit rejects.\n",
        );
        for d in &disagreements {
            s.push_str(d);
            s.push('\n');
        }
        std::fs::write(&known_path, s).unwrap();
        if only.is_none() {
            std::fs::write(&doc_path, format!("{prose}{table}")).unwrap();
        }
        return;
    }
    if only.is_some() {
        for d in &disagreements {
            eprintln!("{d}");
        }
        assert!(
            disagreements.is_empty(),
            "{} disagreements",
            disagreements.len()
        );
        return;
    }
    assert!(
        doc.ends_with(&table),
        "AGREEMENT.md's per-family table is not current (BLESS=1 rewrites it); now:\n{table}"
    );
    let new: Vec<&String> = disagreements.difference(&listed).collect();
    let gone: Vec<&String> = listed.difference(&disagreements).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "{} new disagreements with ptxas:\n{}\n{} listed ones are gone (BLESS=1 rewrites the list):\n{}",
        new.len(),
        new.iter()
            .take(40)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.len(),
        gone.iter()
            .take(40)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// One kernel of the version axis: its row and the catalog text with `.version` rewritten.
struct Member {
    row: &'static str,
    family: &'static str,
    /// The module-scope lines between the header and the kernel (`.shared` variables).
    preamble: String,
    /// The kernel, from its `.entry` line to the end.
    kernel: String,
}

/// The version just below `v` in `PtxVersion::all()`, or 6.5 below 7.0.
fn below(v: ptx_isa::PtxVersion) -> ptx_isa::PtxVersion {
    ptx_isa::PtxVersion::all()
        .take_while(|x| *x < v)
        .last()
        .unwrap_or(ptx_isa::target::v(6, 5))
}

/// Judges `members` written together for `target` at `version` (one module, one kernel each):
/// which kernels ptxas accepts, which ptxkit accepts. An error outside every kernel (the header)
/// rejects them all; ptxas is run again without the kernels it named until the rest assembles, and
/// a failure that names no line is judged kernel by kernel.
fn judge_kernels(
    ptxas: &ptxas::Ptxas,
    target: Target,
    version: ptx_isa::PtxVersion,
    members: &[&Member],
) -> Vec<(bool, bool)> {
    // The text of the kernels `idx`, and the line range (1-based, inclusive) of each.
    let build = |idx: &[usize]| -> (String, Vec<(usize, usize, usize)>) {
        let mut out = format!(".version {version}\n.target {target}\n.address_size 64\n\n");
        let mut seen = BTreeSet::new();
        for &k in idx {
            for l in members[k].preamble.lines() {
                if !l.trim().is_empty() && seen.insert(l.to_string()) {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
        let mut ranges = Vec::new();
        for &k in idx {
            let first = out.lines().count() + 1;
            out.push_str(&members[k].kernel);
            out.push('\n');
            ranges.push((first, out.lines().count(), k));
        }
        (out, ranges)
    };
    let owner = |ranges: &[(usize, usize, usize)], line: usize| {
        ranges
            .iter()
            .find(|(a, b, _)| (*a..=*b).contains(&line))
            .map(|r| r.2)
    };
    let all: Vec<usize> = (0..members.len()).collect();
    let mut ptxkit_ok = vec![true; members.len()];
    let (text, ranges) = build(&all);
    for d in check(&text, &Options::default()) {
        if d.severity != Severity::Error {
            continue;
        }
        match d.pos.and_then(|p| owner(&ranges, p.line as usize)) {
            Some(k) => ptxkit_ok[k] = false,
            None => ptxkit_ok.iter_mut().for_each(|x| *x = false),
        }
    }
    let mut ptxas_ok = vec![true; members.len()];
    let by_line = |idx: &[usize]| {
        let (text, ranges) = build(idx);
        let at = ranges
            .iter()
            .flat_map(|&(a, b, k)| (a..=b).map(move |l| (l, k)))
            .collect();
        (text, at)
    };
    ptxas_verdicts(ptxas, target, &mut ptxas_ok, all, 3, &by_line);
    ptxas_ok.into_iter().zip(ptxkit_ok).collect()
}

/// The version axis (issue 14, part 5: "each target and version"): every instruction row's
/// catalog kernel on every target the row claims, at the kernel's own `.version` (the row's first
/// version on that target, or later where the example needs more), at the newest version (9.0),
/// and at the version just below the kernel's, which both must reject. ptxas and ptxkit must agree
/// on each, and accept the first two. Kernels of one (target, version) are judged in one module.
#[test]
fn every_row_on_every_target_at_its_first_and_newest_version_and_below() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    enum At {
        First,
        Newest,
        Below,
    }
    // (target, version) -> kernels, with what each is.
    let mut groups: BTreeMap<(Target, ptx_isa::PtxVersion), Vec<(Member, At)>> = BTreeMap::new();
    for spec in Form::all() {
        if spec.feature || spec.name.starts_with("directive.") {
            continue;
        }
        for t in spec.targets.targets() {
            let m = catalog::module(spec.form, t).unwrap();
            let first = m.version().unwrap();
            let text = m.to_ptx().unwrap();
            let entry = text.find(".visible .entry").expect("a kernel");
            let preamble: String = text[..entry]
                .lines()
                .filter(|l| {
                    !l.starts_with("//")
                        && !l.starts_with(".version")
                        && !l.starts_with(".target")
                        && !l.starts_with(".address_size")
                })
                .map(|l| format!("{l}\n"))
                .collect();
            let kernel = text[entry..].trim_end().to_string();
            let (head, rest) = spec.name.split_once('.').unwrap_or((spec.name, ""));
            let mods: Vec<&str> = rest.split('.').collect();
            let family = family_of(head, &mods).map_or(head, |f| f.name);
            let family: &'static str = Box::leak(family.to_string().into_boxed_str());
            for (v, at) in [
                (first, At::First),
                (ptx_isa::PtxVersion::MAX, At::Newest),
                (below(first), At::Below),
            ] {
                if at == At::Newest && v == first {
                    continue;
                }
                let member = Member {
                    row: spec.name,
                    family,
                    preamble: preamble.clone(),
                    kernel: kernel.clone(),
                };
                groups.entry((t, v)).or_default().push((member, at));
            }
        }
    }
    let jobs: Vec<_> = groups.iter().collect();
    type Judged = (
        &'static str,
        &'static str,
        Target,
        ptx_isa::PtxVersion,
        At,
        bool,
        bool,
    );
    let judge_group = |((t, v), members): &(&(Target, ptx_isa::PtxVersion), &Vec<(Member, At)>)| {
        let refs: Vec<&Member> = members.iter().map(|(m, _)| m).collect();
        judge_kernels(&ptxas, *t, *v, &refs)
            .into_iter()
            .zip(members.iter())
            .map(|((a, k), (m, at))| (m.row, m.family, *t, *v, *at, a, k))
            .collect::<Vec<Judged>>()
    };
    let verdicts: Vec<Judged> = in_parallel(&jobs, &judge_group);
    // Per family: kernels judged at each kind of version, and the failures.
    let mut by_family: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    let mut failures = Vec::new();
    for &(row, family, t, v, at, ptxas_ok, ptxkit_ok) in &verdicts {
        by_family.entry(family).or_default()[at as usize] += 1;
        let want = at != At::Below;
        if ptxas_ok != ptxkit_ok || ptxas_ok != want {
            failures.push(format!(
                "{row} on {t} at .version {v} ({at:?}): ptxas {}, ptxkit {}",
                if ptxas_ok { "accepts" } else { "rejects" },
                if ptxkit_ok { "accepts" } else { "rejects" },
            ));
        }
    }
    eprintln!(
        "version axis with {}: {} kernels in {} modules (target x version)",
        ptxas.version(),
        verdicts.len(),
        jobs.len()
    );
    eprintln!(
        "  {:<34} {:>8} {:>8} {:>8}",
        "family", "first", "9.0", "below"
    );
    let mut total = [0usize; 3];
    for (family, n) in &by_family {
        eprintln!("  {family:<34} {:>8} {:>8} {:>8}", n[0], n[1], n[2]);
        for k in 0..3 {
            total[k] += n[k];
        }
    }
    eprintln!(
        "  {:<34} {:>8} {:>8} {:>8}",
        "total", total[0], total[1], total[2]
    );
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} kernels where ptxas and ptxkit disagree or accept below the first version:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
