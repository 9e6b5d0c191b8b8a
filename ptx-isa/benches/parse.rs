//! Parse throughput (issue 9, part 7): MB/s of `parse` (and of `parse` + `validate`) on a large
//! generated module: the catalog's example kernel of every form on sm_90a and sm_100a, plus the
//! nvcc/Triton corpus, repeated under fresh names to about 8 MB.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ptx_isa::validate::{Options, validate};
use ptx_isa::{Form, Target, catalog};

/// The functions of a printed module (everything after `.address_size`).
fn functions(text: &str) -> &str {
    text.find(".address_size 64\n")
        .map_or(text, |i| &text[i + ".address_size 64\n".len()..])
}

fn large_module() -> String {
    let mut bodies = Vec::new();
    for t in [Target::Sm90a, Target::Sm100a] {
        for spec in Form::all() {
            if let Ok(m) = catalog::module(spec.form, t) {
                let text = m.to_ptx().unwrap();
                // Variables (barriers, shared arrays) are module-scope: keep kernels only.
                if m.variables().is_empty() {
                    bodies.push(functions(&text).to_string());
                }
            }
        }
    }
    let corpus = include_str!("../tests/corpus/triton_softmax.ptx");
    let triton = &corpus[corpus.find(".visible .entry").unwrap()..corpus.find("\t.file").unwrap()];
    let mut s = String::from(".version 8.7\n.target sm_100a\n.address_size 64\n");
    s.push_str(".extern .shared .align 16 .b8 global_smem[];\n");
    let mut n = 0usize;
    while s.len() < 8 << 20 {
        for b in bodies
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(triton))
        {
            let start = b.find(".entry ").map_or(0, |i| i + ".entry ".len());
            let end = start + b[start..].find('(').unwrap_or(0);
            s.push_str(&b[..start]);
            s.push_str(&format!("{}_{n}", &b[start..end]));
            s.push_str(&b[end..]);
            n += 1;
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let text = large_module();
    let parsed = ptx_isa::parse::parse(&text).expect("the generated module parses");
    assert!(parsed.module.functions().len() > 1000);
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(10);
    g.bench_function("parse", |b| {
        b.iter(|| ptx_isa::parse::parse(std::hint::black_box(&text)).unwrap())
    });
    g.bench_function("parse+validate", |b| {
        b.iter(|| {
            let p = ptx_isa::parse::parse(std::hint::black_box(&text)).unwrap();
            validate(&p.module, Some(&p.source_map), &Options::default())
        })
    });
    g.bench_function("print", |b| b.iter(|| parsed.module.print()));
    g.finish();
}

/// A module of `n` kernels, each `count` copies of `line` (issue 33: an instruction no row takes
/// must cost no more than one a row takes).
fn repeated(line: &str, n: usize) -> String {
    let mut s = String::from(".version 8.7\n.target sm_100a\n.address_size 64\n");
    for k in 0..n {
        s.push_str(&format!(
            ".visible .entry k{k}()\n{{\n\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<4>;\n"
        ));
        for _ in 0..64 {
            s.push_str(line);
        }
        s.push_str("\tret;\n}\n");
    }
    s
}

fn unresolved(c: &mut Criterion) {
    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    for (name, line) in [
        ("resolved", "\tadd.f32 %f1, %f2, %f3;\n"),
        // `.f32x4` is no type: no row takes it, and the nearest-row search runs.
        ("unresolved", "\tadd.rn.f32x4 %rd1, %rd2, %rd3;\n"),
    ] {
        let text = repeated(line, 2000);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| ptx_isa::validate::check(std::hint::black_box(&text), &Options::default()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench, unresolved);
criterion_main!(benches);
