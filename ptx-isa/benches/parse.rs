//! Parse throughput (issue 9, part 7): MB/s of `parse` (and of `parse` + `validate`) on a large
//! generated module: the catalog's example kernel of every form on sm_90a and sm_100a, plus the
//! nvcc/Triton corpus, repeated under fresh names to about 8 MB.

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
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
    unresolved_group(c, "check");
}

fn unresolved_cpu(c: &mut Criterion<ThreadCpu>) {
    unresolved_group(c, "check-cpu");
}

fn unresolved_group<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for (name, line) in [
        ("resolved", "\tadd.f32 %f1, %f2, %f3;\n"),
        // `.f32x4` is no type: no row takes it, and the nearest-row search runs.
        ("unresolved", "\tadd.rn.f32x4 %rd1, %rd2, %rd3;\n"),
        // The same instruction twice, the second with a type no row takes: the two lines differ
        // by two bytes, so the time an instruction costs is compared, not the lexing of longer
        // lines (issue 33's bar: an unresolved instruction costs no more than a resolved one).
        ("same/resolved", "\tadd.rn.f32 %f1, %f2, %f3;\n"),
        ("same/unresolved", "\tadd.rn.f32x4 %f1, %f2, %f3;\n"),
    ] {
        let text = repeated(line, 2000);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| ptx_isa::validate::check(std::hint::black_box(&text), &Options::default()))
        });
    }
    g.finish();
}

/// Real modules of a megabyte or more (issue 33's bar: `check` and `fmt` each read 100 MB/s):
/// every `.ptx` file in `$PTX_BENCH_DIR`, by default `target/corpus/cutlass`, which
/// `ONLY=cutlass tools/corpus/gen.sh` writes (nvcc on CUTLASS's Hopper GEMMs). Absent files skip the group.
fn real_modules() -> Vec<(String, String)> {
    let dir = std::env::var_os("PTX_BENCH_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/corpus/cutlass"),
        std::path::PathBuf::from,
    );
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    files.sort();
    if files.is_empty() {
        eprintln!(
            "groups `real` and `real-cpu` skipped: no .ptx in {} (`ONLY=cutlass tools/corpus/gen.sh` writes them)",
            dir.display()
        );
    }
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("a readable module");
            let name = f
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            (name, text)
        })
        .collect()
}

/// `check` and `fmt` (parse, then print) of each real module, timed by `M`.
fn real_group<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    let modules = real_modules();
    if modules.is_empty() {
        return;
    }
    let mut g = c.benchmark_group(group);
    g.sample_size(20);
    for (name, text) in &modules {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("check/{name}"), |b| {
            b.iter(|| ptx_isa::validate::check(std::hint::black_box(text), &Options::default()))
        });
        g.bench_function(format!("fmt/{name}"), |b| {
            b.iter(|| {
                ptx_isa::parse::parse(std::hint::black_box(text))
                    .unwrap()
                    .module
                    .print()
            })
        });
    }
    g.finish();
}

fn real(c: &mut Criterion) {
    real_group(c, "real");
}

fn real_cpu(c: &mut Criterion<ThreadCpu>) {
    real_group(c, "real-cpu");
}

/// The CPU time of the benchmarking thread (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), not wall
/// time: on a development machine shared with other builds, wall time measures the load as much
/// as the code. Groups `real-cpu` and `check-cpu` report it.
struct ThreadCpu;

fn thread_cpu_time() -> Duration {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    // Linux's CLOCK_THREAD_CPUTIME_ID.
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(t.sec as u64, t.nsec as u32)
}

impl Measurement for ThreadCpu {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        thread_cpu_time()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu_time().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, d: &Duration) -> f64 {
        d.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, as wall time's are.
        static WALL: WallTime = WallTime;
        WALL.formatter()
    }
}

criterion_group!(benches, bench, unresolved, real);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = real_cpu, unresolved_cpu
}
criterion_main!(benches, cpu);
