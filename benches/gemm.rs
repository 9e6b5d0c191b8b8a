//! GEMM benchmarks.
//!
//! CPU (runs anywhere): the time to build the GEMM kernel's PTX text from builder calls.
//! GPU (H100/H200; skipped with a message elsewhere): the driver JIT time of that PTX, and for
//! every shape of `ptxkit::library::gemm::BENCH_SHAPES` our TFLOP/s and cuBLAS's in this same
//! process, then a table of shape, ours, cuBLAS and the ratio.
//!
//! ```text
//! cargo bench --bench gemm                    # everything available here
//! cargo bench --bench gemm -- build_ptx       # only the CPU benchmark
//! GEMM_SHAPES=4096x2112x7168 cargo bench --bench gemm   # those shapes instead, each checked
//! ```

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use cudarc::cublas::CudaBlas;
use ptxkit::library::gemm::{BENCH_SHAPES, Gemm, GemmConfig, build, build_with, check};
use ptxkit::runtime::JitOptions;
use ptxkit::selftest::{gpu_with_or_skip, or_skip};
use ptxkit::smem::pipeline::sync::WaitMode;

/// Building the GEMM's kernel, every check the builder makes included, to its PTX text (the
/// text `KernelBuilder::finish` prints once; `build(..).to_ptx()` would print it a second time).
fn build_ptx(c: &mut Criterion) {
    let cfg = GemmConfig::large();
    c.bench_function("build_ptx/gemm_128x256x64", |b| {
        b.iter(|| {
            build_with(std::hint::black_box(&cfg), WaitMode::Spin).map(|g| g.built.ptx().len())
        })
    });
}

fn gpu(c: &mut Criterion) {
    let Some((device, stream, blas)) = gpu_with_or_skip("GPU benchmarks skipped", CudaBlas::new)
    else {
        return;
    };
    let ptx = build(&GemmConfig::large()).and_then(|m| m.to_ptx());
    let Some(ptx) = or_skip(ptx, "GPU benchmarks skipped") else {
        return;
    };
    c.bench_function("jit/gemm_128x256x64", |b| {
        b.iter(|| {
            device
                .load_ptx_uncached(&ptx, &JitOptions::default())
                .map(|_| ())
        })
    });

    let mut table = Vec::new();
    let mut group = c.benchmark_group("gemm");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    // `GEMM_SHAPES` (`MxNxK,...`) times those shapes instead, each first checked against an f32
    // reference on fresh random data (C poisoned): a shape off the list may take a tile the
    // golden files do not hold.
    let listed = std::env::var("GEMM_SHAPES").ok().map(|v| {
        v.split(',')
            .filter_map(
                |s| match s.split('x').map(str::parse).collect::<Vec<_>>()[..] {
                    [Ok(m), Ok(n), Ok(k)] => Some((m, n, k)),
                    _ => {
                        eprintln!("GEMM_SHAPES: `{s}` is not MxNxK; left out");
                        None
                    }
                },
            )
            .collect::<Vec<(usize, usize, usize)>>()
    });
    for &shape in listed.as_deref().unwrap_or(BENCH_SHAPES) {
        let (m, n, k) = shape;
        let cfg = check::config_for(&device, m, n);
        let gemm = match Gemm::new(&device, cfg) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{m}x{n}x{k}: {e}");
                continue;
            }
        };
        if listed.is_some() {
            match check::check(&device, &stream, &blas, &gemm, shape, 5) {
                Ok(r) if r.unwritten == 0 && r.rel_error < 1e-2 => {
                    println!(
                        "check {m}x{n}x{k} {}: PASS rel {:.2e}",
                        cfg.name(),
                        r.rel_error
                    )
                }
                r => {
                    println!("check {m}x{n}x{k} {}: FAIL {r:?}", cfg.name());
                    continue;
                }
            }
        }
        let Ok(mut p) = check::Problem::new(&stream, shape, 11) else {
            continue;
        };
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        let label = format!("{m}x{n}x{k}");
        group.throughput(criterion::Throughput::Elements(flops as u64));
        group.bench_function(format!("ptxkit/{label}"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    let _ = gemm.run(&stream, &p.a, &p.b, &mut p.c, None);
                }
                let _ = stream.synchronize();
                start.elapsed()
            })
        });
        group.bench_function(format!("cublas/{label}"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    let _ = check::cublas_bf16(&blas, &mut p);
                }
                let _ = stream.synchronize();
                start.elapsed()
            })
        });
        // The table uses CUDA-event medians taken here, in the same process.
        if let Ok((ours, theirs)) = check::compare(&stream, &blas, &gemm, shape, 20) {
            table.push((label, cfg.name(), ours, theirs));
        }
    }
    group.finish();
    println!(
        "\n| shape | config | ptxkit TFLOP/s | cuBLAS TFLOP/s | ratio |\n| --- | --- | --- | --- | --- |"
    );
    for (label, name, ours, theirs) in table {
        println!(
            "| {label} | {name} | {ours:.0} | {theirs:.0} | {:.3} |",
            ours / theirs
        );
    }
    println!("device: {}", device.attributes().name);
}

criterion_group!(benches, build_ptx, gpu);
criterion_main!(benches);
