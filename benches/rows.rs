//! Memory-bound row kernels: GB/s (bytes read + written) of softmax, RMSNorm, LayerNorm and
//! SwiGLU for f32 and bf16, and each as a fraction of the device-to-device copy bandwidth measured
//! in this same process. `benches/rows_torch.py` times torch eager and torch.compile on the same
//! shapes; run both in one GPU call and put the tables side by side (BENCHMARKS.md).
//!
//! CPU (runs anywhere): the time to build a row kernel's PTX.
//!
//! ```text
//! cargo bench --bench rows
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use ptxkit::isa::{ScalarType, Target, ty};
use ptxkit::kernel::Elem;
use ptxkit::library::rows::{
    RowConfig, RowKernel, RowOp, RowTensors, SwigluConfig, build_swiglu_with,
};
use ptxkit::runtime::{
    Arg, Before, Device, DeviceTensor, Element, JitOptions, LoadedKernel, RuntimeError, median_ms,
};

/// rows x cols, as the issue lists them.
const SHAPES: &[(usize, usize)] = &[
    (4096, 4096),
    (4096, 8192),
    (16384, 8192),
    (2048, 65536),
    (32768, 1024),
];

fn build_ptx(c: &mut Criterion) {
    let cfg = RowConfig::for_cols(ScalarType::Bf16, 8192, true);
    c.bench_function("build_ptx/rmsnorm_bf16_8192", |b| {
        b.iter(|| {
            RowKernel::build::<ty::Bf16>(Target::Sm90a, RowOp::RmsNorm { eps: 1e-6 }, cfg)
                .map(|k| k.built.ptx().len())
        })
    });
}

/// Median GB/s of `launch` moving `bytes`, each run from a cold L2 ([`Before::ColdL2`]).
fn gbs(
    stream: &std::sync::Arc<ptxkit::runtime::cuda::CudaStream>,
    bytes: f64,
    launch: impl FnMut() -> Result<(), RuntimeError>,
) -> Option<f64> {
    median_ms::<RuntimeError>(stream, 3, 20, Before::ColdL2, launch)
        .ok()
        .map(|ms| bytes / ms / 1e6)
}

/// One configuration's GB/s and how many of its CTAs an SM holds at once.
#[derive(Clone, Copy)]
struct Timed {
    gbs: f64,
    per_sm: u32,
}

/// Each configuration timed (or why it has none).
type Timings<C> = Vec<(C, Result<Timed, String>)>;

/// A `shape` tensor of `len` zeros of `H`.
fn zeros<H: Element + Default>(
    stream: &std::sync::Arc<ptxkit::runtime::cuda::CudaStream>,
    shape: &[usize],
) -> Result<DeviceTensor<H>, String> {
    let len = shape.iter().product();
    DeviceTensor::<H>::from_host(stream, &vec![H::default(); len], shape.to_vec())
        .map_err(|e| e.to_string())
}

/// Loads `built` and times `launch` of it moving `bytes`, with the SM's residency of CTAs of
/// `threads` threads.
fn time_kernel(
    dev: &Device,
    built: Result<ptxkit::kernel::BuiltKernel, String>,
    threads: u32,
    bytes: f64,
    mut launch: impl FnMut(&LoadedKernel) -> Result<(), RuntimeError>,
) -> Result<Timed, String> {
    let stream = dev.default_stream();
    let loaded = built?
        .load(dev, &JitOptions::default())
        .map_err(|e| e.to_string())?;
    let per_sm = loaded
        .kernel()
        .max_active_blocks_per_sm([threads, 1, 1], 0)
        .unwrap_or(0);
    let gbs = gbs(&stream, bytes, || launch(&loaded)).ok_or("timing failed")?;
    Ok(Timed { gbs, per_sm })
}

/// One op on one shape for element type `T` held as `H`: the GB/s of each configuration of
/// `cfgs`, on the same tensors (allocated once).
fn row_op<T: Elem, H: Element + Default>(
    dev: &Device,
    op: RowOp,
    cfgs: &[RowConfig],
    rows: usize,
    cols: usize,
) -> Result<Timings<RowConfig>, String> {
    let stream = dev.default_stream();
    let mut t = RowTensors {
        x: zeros::<H>(&stream, &[rows, cols])?,
        residual: zeros::<H>(&stream, &[rows, cols])?,
        w: zeros::<H>(&stream, &[cols])?,
        b: zeros::<H>(&stream, &[cols])?,
        y: zeros::<H>(&stream, &[rows, cols])?,
        mean: zeros::<f32>(&stream, &[rows])?,
        rstd: zeros::<f32>(&stream, &[rows])?,
    };
    let (reads, writes) = match op {
        RowOp::ResidualRmsNorm { .. } => (2.0, 2.0),
        _ => (1.0, 1.0),
    };
    let bytes = (reads + writes) * (rows * cols) as f64 * T::TYPE.bytes() as f64;
    let mut out = Vec::new();
    for &cfg in cfgs {
        let built = RowKernel::build::<T>(dev.target(), op, cfg)
            .map(|k| k.built)
            .map_err(|e| e.to_string());
        let timed = time_kernel(dev, built, cfg.threads, bytes, |loaded| {
            op.launch(loaded, &stream, &mut t).map(|_| ())
        });
        out.push((cfg, timed));
    }
    Ok(out)
}

/// SwiGLU over `rows x cols` (gate and up separate): the GB/s of each configuration of
/// `cfgs`, on the same tensors.
fn swiglu<T: Elem, H: Element + Default>(
    dev: &Device,
    cfgs: &[SwigluConfig],
    rows: usize,
    cols: usize,
) -> Result<Timings<SwigluConfig>, String> {
    let stream = dev.default_stream();
    let n = rows * cols;
    let (g, u, mut y) = (
        zeros::<H>(&stream, &[n])?,
        zeros::<H>(&stream, &[n])?,
        zeros::<H>(&stream, &[n])?,
    );
    let bytes = 3.0 * n as f64 * T::TYPE.bytes() as f64;
    let mut out = Vec::new();
    for &cfg in cfgs {
        let built = build_swiglu_with::<T>(dev.target(), true, cfg).map_err(|e| e.to_string());
        let timed = time_kernel(dev, built, cfg.threads, bytes, |loaded| {
            loaded
                .launch(
                    &stream,
                    &mut [Arg::tensor(&g), Arg::tensor(&u), Arg::tensor_mut(&mut y)],
                )
                .map(|_| ())
        });
        out.push((cfg, timed));
    }
    Ok(out)
}

/// The table row of one case (the default configuration's GB/s, as a fraction of the 1 GiB
/// copy and of the copy of the same bytes, then the sweep's best) and its sweep line.
fn report<C: Copy + PartialEq + std::fmt::Display>(
    case: [&str; 3],
    [copy, same]: [f64; 2],
    default: C,
    timed: &[(C, Result<Timed, String>)],
) -> String {
    let [name, d, shape] = case;
    let ok = || {
        timed
            .iter()
            .filter_map(|(c, g)| g.as_ref().ok().map(|g| (*c, g.gbs)))
    };
    let best = ok().fold(None, |b: Option<(C, f64)>, (c, g)| match b {
        Some((_, bg)) if bg >= g => b,
        _ => Some((c, g)),
    });
    let dflt = ok().find(|(c, _)| *c == default).map(|(_, g)| g);
    match (dflt, best) {
        (Some(g), Some((c, b))) => println!(
            "| {name} | {d} | {shape} | {g:.0} | {:.3} | {:.3} | {default} | {b:.0} | {c} |",
            g / copy,
            g / same,
        ),
        _ => println!(
            "| {name} | {d} | {shape} | not built: {} | | | {default} | | |",
            timed
                .iter()
                .find_map(|(_, g)| g.as_ref().err().cloned())
                .unwrap_or_default()
        ),
    }
    let line: Vec<String> = timed
        .iter()
        .map(|(c, g)| match g {
            Ok(g) => format!("{c} {:.0} ({}/SM)", g.gbs, g.per_sm),
            Err(e) => format!("{c} failed ({e})"),
        })
        .collect();
    format!("sweep {name} {d} {shape}: {}", line.join(", "))
}

/// Device-to-device copy of `bytes` (read + written counted): the bandwidth to compare with.
fn copy_gbs(dev: &Device, bytes: usize) -> Option<f64> {
    let stream = dev.default_stream();
    let src = stream.alloc_zeros::<u8>(bytes).ok()?;
    let mut dst = stream.alloc_zeros::<u8>(bytes).ok()?;
    gbs(&stream, 2.0 * bytes as f64, || {
        stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(RuntimeError::from)
    })
}

fn gpu(_c: &mut Criterion) {
    let Some(dev) = ptxkit::selftest::device_or_skip("GPU benchmarks skipped") else {
        return;
    };
    let copy = copy_gbs(&dev, 1 << 30).unwrap_or(f64::NAN);
    println!(
        "\ndevice: {}; device-to-device copy {copy:.0} GB/s (1 GiB, read + write)",
        dev.attributes().name
    );
    println!(
        "| op | dtype | rows x cols | ptxkit GB/s | of 1 GiB copy | of same-size copy | config | best GB/s | best config |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let ops = [
        ("softmax", RowOp::Softmax),
        ("rmsnorm", RowOp::RmsNorm { eps: 1e-6 }),
        ("residual_rmsnorm", RowOp::ResidualRmsNorm { eps: 1e-6 }),
        ("layernorm", RowOp::LayerNorm { eps: 1e-5 }),
    ];
    // ROWS_ONLY="rmsnorm bf16 4096x8192" times one case (a comma-separated list of parts of
    // case names: "layernorm,32768x1024" times those that contain any); ROWS_NO_SWEEP=1 times
    // only the default configuration, ROWS_CONFIG=L1x512x8h only that one of the sweep (what a
    // profiler run wants: `ncu -k regex:rmsnorm -s 3 -c 1`); SwiGLU is "swiglu bf16 4096x8192".
    let only = std::env::var("ROWS_ONLY").ok();
    let pick = std::env::var("ROWS_CONFIG").ok().filter(|s| !s.is_empty());
    let sweep = std::env::var_os("ROWS_NO_SWEEP").is_none();
    // Past this many seconds the sweep stops (the default alone is timed), so the whole bench
    // stays inside the GPU call's limit for it (`benches/gpu.sh`: 240 s).
    let budget = std::time::Duration::from_secs(
        std::env::var("ROWS_SWEEP_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(190),
    );
    let wanted = |case: &str| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|p| case.contains(p.trim())))
    };
    let began = std::time::Instant::now();
    // Each case's sweep, printed after the table (one line per case).
    let mut sweeps = Vec::new();
    for &(rows, cols) in SHAPES {
        // A plain copy of the same bytes as a one-input op: what this size allows (the table's
        // second fraction), timed where a case of the shape and type is.
        let mut same = [f64::NAN; 2];
        for (i, (d, size)) in [("f32", 4), ("bf16", 2)].into_iter().enumerate() {
            let any = [
                "softmax",
                "rmsnorm",
                "residual_rmsnorm",
                "layernorm",
                "swiglu",
            ]
            .iter()
            .any(|n| wanted(&format!("{n} {d} {rows}x{cols}")));
            if !any {
                continue;
            }
            let g = copy_gbs(&dev, rows * cols * size).unwrap_or(f64::NAN);
            same[i] = g;
            println!(
                "| copy | {d} | {rows}x{cols} | {g:.0} | {:.3} | 1.000 | cuMemcpyDtoD | | |",
                g / copy
            );
        }
        for (name, op) in ops {
            for (i, dtype) in [ScalarType::F32, ScalarType::Bf16].into_iter().enumerate() {
                let d = dtype.to_string();
                let d = d.trim_start_matches('.');
                if !wanted(&format!("{name} {d} {rows}x{cols}")) {
                    continue;
                }
                let vector = cols % 8 == 0;
                let all = RowConfig::sweep_for(op, dtype, cols as u32, vector);
                let default = all[0];
                let cfgs: Vec<RowConfig> = match &pick {
                    Some(p) => all.into_iter().filter(|c| c.to_string() == *p).collect(),
                    None if sweep && began.elapsed() < budget => all,
                    None => vec![default],
                };
                let timed = match dtype {
                    ScalarType::F32 => row_op::<ty::F32, f32>(&dev, op, &cfgs, rows, cols),
                    _ => row_op::<ty::Bf16, half::bf16>(&dev, op, &cfgs, rows, cols),
                };
                let timed = match timed {
                    Ok(t) => t,
                    Err(e) => {
                        println!("| {name} | {d} | {rows}x{cols} | not run: {e} | | | | | |");
                        continue;
                    }
                };
                sweeps.push(report(
                    [name, d, &format!("{rows}x{cols}")],
                    [copy, same[i]],
                    default,
                    &timed,
                ));
            }
        }
        let swiglu_f32 = wanted(&format!("swiglu f32 {rows}x{cols}"));
        let swiglu_bf16 = wanted(&format!("swiglu bf16 {rows}x{cols}"));
        if !swiglu_f32 && !swiglu_bf16 {
            continue;
        }
        let all = SwigluConfig::sweep();
        let cfgs = match &pick {
            Some(p) => all
                .iter()
                .copied()
                .filter(|c| c.to_string() == *p)
                .collect(),
            None if sweep && began.elapsed() < budget => all.clone(),
            None => vec![all[0]],
        };
        let mut runs = Vec::new();
        if swiglu_f32 {
            runs.push((
                "f32",
                same[0],
                swiglu::<ty::F32, f32>(&dev, &cfgs, rows, cols),
            ));
        }
        if swiglu_bf16 {
            runs.push((
                "bf16",
                same[1],
                swiglu::<ty::Bf16, half::bf16>(&dev, &cfgs, rows, cols),
            ));
        }
        for (d, same, r) in runs {
            match r {
                Ok(timed) => sweeps.push(report(
                    ["swiglu", d, &format!("{rows}x{cols}")],
                    [copy, same],
                    all[0],
                    &timed,
                )),
                Err(e) => println!("| swiglu | {d} | {rows}x{cols} | not run: {e} | | | | | |"),
            }
        }
    }
    println!(
        "\nsweep: GB/s of every configuration timed ({:.0} s; `RowConfig`'s Display: L looped, cluster x threads x values per thread, h hints, H hints with streamed outputs, n those and last reads past L1, p packed 16-bit rows, /r threads a row; (n/SM): CTAs an SM holds)",
        began.elapsed().as_secs_f64()
    );
    for s in sweeps {
        println!("{s}");
    }
}

criterion_group!(benches, build_ptx, gpu);
criterion_main!(benches);
