//! Grouped GEMM benchmark (GPU; skipped with a message elsewhere): TFLOP/s of ptxkit's grouped
//! bf16 GEMM (every configuration of `grouped::bench_configs`, so one run shows the fastest)
//! against a loop of cuBLAS bf16 GEMMs, one per group, in this same process, at N = K = 4096:
//! G = 8 with M_g in {128, 512, 2048, 4096} and a ragged mix, G = 64 with M_g in {128, 512} and
//! a ragged mix. CUDA-event medians; the main case's result (G = 8, M_g = 2048) is checked against
//! the cuBLAS loop's. `benches/gemm_grouped_torch.py` times `torch._grouped_mm` on the same shapes.
//!
//! ```text
//! cargo bench --bench gemm_grouped
//! GROUPED_ONLY=8x2048 GROUPED_CONFIG=<config name> cargo bench --bench gemm_grouped  # for ncu
//! ```
//!
//! Output: one `config` line per case and configuration, then a table `| G | M_g | best config |
//! ours | cuBLAS loop | ratio |` and the main case's check.

use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm as _};
use half::bf16;
use ptxkit::library::gemm::check::{blas_config, median_ms, random_values};
use ptxkit::library::gemm::grouped::{GroupedGemm, Grouping, bench_configs};
use ptxkit::runtime::cuda::{CudaSlice, CudaStream, DriverError};
use ptxkit::runtime::{TensorMut, TensorRef};

const N: usize = 4096;
const K: usize = 4096;

/// The 64-group ragged mix (some empty, up to 1002 rows; 28412 in all), the same list as
/// `benches/gemm_grouped_torch.py`'s.
const RAGGED64: [usize; 64] = [
    827, 779, 409, 366, 0, 471, 508, 272, 177, 514, 784, 183, 1002, 0, 408, 863, 443, 765, 794,
    435, 311, 945, 0, 366, 693, 169, 179, 960, 647, 824, 87, 0, 551, 15, 870, 417, 742, 165, 946,
    405, 0, 947, 105, 732, 264, 442, 329, 904, 363, 0, 360, 75, 224, 47, 350, 970, 858, 166, 0,
    871, 176, 292, 634, 11,
];

/// One benchmark case: a name and the rows of each group.
struct Case {
    name: String,
    sizes: Vec<usize>,
}

fn cases() -> Vec<Case> {
    let uniform = |g: usize, m: usize| Case {
        name: format!("{g}x{m}"),
        sizes: vec![m; g],
    };
    vec![
        uniform(8, 128),
        uniform(8, 512),
        uniform(8, 2048),
        uniform(8, 4096),
        Case {
            name: "8xragged".into(),
            sizes: vec![3000, 17, 2048, 0, 4096, 1500, 777, 2944],
        },
        uniform(64, 128),
        uniform(64, 512),
        Case {
            name: "64xragged".into(),
            sizes: RAGGED64.to_vec(),
        },
    ]
}

/// Fills `dst` with copies of `chunk` (random bf16): random enough for timing, and quick to write
/// for the 2 GB of B at G = 64.
fn fill(
    stream: &Arc<CudaStream>,
    dst: &mut CudaSlice<bf16>,
    chunk: &[bf16],
) -> Result<(), DriverError> {
    let len = dst.len();
    let mut at = 0;
    while at < len {
        let n = chunk.len().min(len - at);
        stream.memcpy_htod(&chunk[..n], &mut dst.slice_mut(at..at + n))?;
        at += n;
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("grouped GEMM bench failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let Some(device) = ptxkit::selftest::device_or_skip("grouped GEMM bench skipped") else {
        return Ok(());
    };
    let stream = device.default_stream();
    let blas = CudaBlas::new(stream.clone())?;
    let only = std::env::var("GROUPED_ONLY").ok();
    let only_cfg = std::env::var("GROUPED_CONFIG").ok();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| only.as_ref().is_none_or(|o| *o == c.name))
        .collect();
    let max_rows = cases
        .iter()
        .map(|c| c.sizes.iter().sum::<usize>())
        .max()
        .unwrap_or(0);
    let max_groups = cases.iter().map(|c| c.sizes.len()).max().unwrap_or(0);

    let chunk: Vec<bf16> = random_values(1 << 22, 7)
        .into_iter()
        .map(bf16::from_f32)
        .collect();
    let mut a = stream.alloc_zeros::<bf16>(max_rows * K)?;
    let mut b = stream.alloc_zeros::<bf16>(max_groups * N * K)?;
    fill(&stream, &mut a, &chunk)?;
    fill(&stream, &mut b, &chunk[12345..])?;
    let mut c = stream.alloc_zeros::<bf16>(max_rows * N)?;
    let mut c_ref = stream.alloc_zeros::<bf16>(max_rows * N)?;

    let configs = bench_configs(Grouping::Contiguous);
    let mut kernels = Vec::new();
    for cfg in &configs {
        if only_cfg.as_ref().is_some_and(|o| *o != cfg.name()) {
            continue;
        }
        match GroupedGemm::new(&device, *cfg) {
            Ok(g) => kernels.push(g),
            Err(e) => println!("config {}: {e}", cfg.name()),
        }
    }

    let mut table = Vec::new();
    for case in &cases {
        let (groups, rows) = (case.sizes.len(), case.sizes.iter().sum::<usize>());
        let offs: Vec<i32> = case
            .sizes
            .iter()
            .scan(0i32, |e, &s| {
                *e += s as i32;
                Some(*e)
            })
            .collect();
        let d_offs = stream.clone_htod(&offs)?;
        let flops = 2.0 * rows as f64 * N as f64 * K as f64;
        let iters = if flops > 2e11 { 10 } else { 30 };
        let a_view = a.slice(..rows * K);
        let b_view = b.slice(..groups * N * K);
        let a_t = TensorRef::view(&a_view, [rows, K])?;
        let b_t = TensorRef::view(&b_view, [groups, N, K])?;
        let o_t = TensorRef::slice(&d_offs, [groups])?;
        if case.name == "8x2048" {
            // Poisoned (NaN) first, so an element no configuration writes shows in the check.
            fill(&stream, &mut c, &[bf16::from_bits(0xFFFF); 1 << 16])?;
        }
        let mut best: Option<(f64, String)> = None;
        for gemm in &kernels {
            let mut c_view = c.slice_mut(..rows * N);
            let ms = median_ms::<Box<dyn std::error::Error>>(&stream, 2, iters, || {
                let c_t = TensorMut::view(&mut c_view, [rows, N])?;
                gemm.run(&stream, &a_t, &b_t, &o_t, c_t)?;
                Ok(())
            })?;
            let tflops = flops / ms / 1e9;
            println!(
                "config {} {}: {tflops:.0} TFLOP/s",
                case.name,
                gemm.config().name()
            );
            if best.as_ref().is_none_or(|(t, _)| tflops > *t) {
                best = Some((tflops, gemm.config().name()));
            }
        }
        // The cuBLAS loop: one bf16 GEMM per non-empty group, on the same memory.
        let ms = median_ms::<Box<dyn std::error::Error>>(&stream, 2, iters, || {
            let mut start = 0usize;
            for (g, &m) in case.sizes.iter().enumerate() {
                if m > 0 {
                    let a_g = a.slice(start * K..(start + m) * K);
                    let b_g = b.slice(g * N * K..(g + 1) * N * K);
                    let mut c_g = c_ref.slice_mut(start * N..(start + m) * N);
                    // SAFETY: the views hold m*K, N*K and m*N elements, as the configuration says.
                    unsafe {
                        blas.gemm(
                            blas_config(m, N, K, bf16::ONE, bf16::ZERO),
                            &b_g,
                            &a_g,
                            &mut c_g,
                        )
                    }?;
                }
                start += m;
            }
            Ok(())
        })?;
        let theirs = flops / ms / 1e9;
        println!("cublas-loop {}: {theirs:.0} TFLOP/s", case.name);
        if let Some((ours, name)) = best {
            table.push((case.name.clone(), name, ours, theirs));
        }
        if case.name == "8x2048" {
            check_against_cublas(&stream, &c, &c_ref, rows * N)?;
        }
    }
    if only.is_none() {
        masked(&device, &stream, &a, &b, &mut c)?;
    }
    println!("\n| G x M_g | best config | ptxkit TFLOP/s | cuBLAS loop TFLOP/s | ratio |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, cfg, ours, theirs) in table {
        println!(
            "| {name} | {cfg} | {ours:.0} | {theirs:.0} | {:.3} |",
            ours / theirs
        );
    }
    println!("device: {}", device.attributes().name);
    Ok(())
}

/// The masked form (decoding): A `[G, M_cap, K]` with `counts`, TFLOP/s over the live rows, for
/// the TMA-store and the register epilogue: G = 8 with M_cap = 4096 and 2048 live rows each (the
/// contiguous 8x2048 case's work), G = 64 with M_cap = 512 and the ragged counts (clamped).
fn masked(
    device: &ptxkit::runtime::Device,
    stream: &Arc<CudaStream>,
    a: &CudaSlice<bf16>,
    b: &CudaSlice<bf16>,
    c: &mut CudaSlice<bf16>,
) -> Result<(), Box<dyn std::error::Error>> {
    let configs = bench_configs(Grouping::Masked);
    let kernels = [
        GroupedGemm::new(device, configs[0])?,
        GroupedGemm::new(device, configs[2])?,
    ];
    let ragged: Vec<i32> = RAGGED64.iter().map(|&m| m.min(512) as i32).collect();
    for (name, counts, cap) in [
        ("8x2048 of 4096", vec![2048i32; 8], 4096usize),
        ("64xragged of 512", ragged, 512),
    ] {
        let groups = counts.len();
        if a.len() < groups * cap * K || b.len() < groups * N * K || c.len() < groups * cap * N {
            continue;
        }
        let live: usize = counts.iter().map(|&x| x as usize).sum();
        let flops = 2.0 * live as f64 * N as f64 * K as f64;
        let d_counts = stream.clone_htod(&counts)?;
        let a_view = a.slice(..groups * cap * K);
        let b_view = b.slice(..groups * N * K);
        let a_t = TensorRef::view(&a_view, [groups, cap, K])?;
        let b_t = TensorRef::view(&b_view, [groups, N, K])?;
        let n_t = TensorRef::slice(&d_counts, [groups])?;
        for gemm in &kernels {
            let mut c_view = c.slice_mut(..groups * cap * N);
            let ms = median_ms::<Box<dyn std::error::Error>>(stream, 2, 10, || {
                let c_t = TensorMut::view(&mut c_view, [groups, cap, N])?;
                gemm.run(stream, &a_t, &b_t, &n_t, c_t)?;
                Ok(())
            })?;
            let cfg = gemm.config().name();
            println!("masked {name} {cfg}: {:.0} TFLOP/s", flops / ms / 1e9);
        }
    }
    Ok(())
}

/// The last configuration's C against the cuBLAS loop's on the main case: relative Frobenius
/// difference (both bf16, so about 2^-9).
fn check_against_cublas(
    stream: &Arc<CudaStream>,
    ours: &CudaSlice<bf16>,
    theirs: &CudaSlice<bf16>,
    len: usize,
) -> Result<(), DriverError> {
    let o: Vec<bf16> = stream.clone_dtoh(&ours.slice(..len))?;
    let t: Vec<bf16> = stream.clone_dtoh(&theirs.slice(..len))?;
    let (mut num, mut den, mut nan) = (0.0f64, 0.0f64, 0usize);
    for (x, y) in o.iter().zip(&t) {
        if x.is_nan() {
            nan += 1;
            continue;
        }
        let d = f64::from(x.to_f32()) - f64::from(y.to_f32());
        num += d * d;
        den += f64::from(y.to_f32()).powi(2);
    }
    let rel = (num / den.max(f64::MIN_POSITIVE)).sqrt();
    let verdict = if nan == 0 && rel < 1e-2 {
        "PASS"
    } else {
        "FAIL"
    };
    println!("check 8x2048 vs cuBLAS loop: {verdict} rel {rel:.2e}, {nan} NaN");
    Ok(())
}
