//! Grouped GEMM benchmark (GPU; skipped with a message elsewhere): TFLOP/s of ptxkit's grouped
//! bf16 GEMM (every configuration of `grouped::bench_configs`, so one run shows the fastest)
//! against a loop of cuBLAS bf16 GEMMs, one per group, in this same process, at N = K = 4096:
//! G = 8 with M_g in {128, 512, 2048, 4096} and a ragged mix, G = 64 with M_g in {128, 512} and
//! a ragged mix. CUDA-event medians; the main case's result (G = 8, M_g = 2048) is checked against
//! the cuBLAS loop's. `benches/gemm_grouped_torch.py` times `torch._grouped_mm` on the same shapes.
//! Then grouped block-scaled FP8 (e4m3 in, bf16 out, DeepSeek-V3 scales: every configuration of
//! `grouped::fp8_bench_configs`) at G = 8 with M_g in {2048, 4096}, beside grouped bf16.
//!
//! ```text
//! cargo bench --bench gemm_grouped
//! GROUPED_ONLY=8x2048,8x4096 cargo bench --bench gemm_grouped     # the short run (a GPU kit's)
//! GROUPED_ONLY=8x2048 GROUPED_CONFIG=<config name> cargo bench --bench gemm_grouped  # for ncu
//! ```
//!
//! Output: one `config` line per case and configuration, then a table `| G | M_g | best config |
//! ours | cuBLAS loop | ratio |` and the main case's check; `fp8` lines per configuration and a
//! table `| G x M_g | grouped bf16 | grouped FP8 block | FP8 config | FP8 / bf16 |`.

use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm as _};
use half::bf16;
use ptxkit::library::gemm::check::{Before, blas_config, median_ms, random_values};
use ptxkit::library::gemm::grouped::{
    GroupedGemm, Grouping, bench_configs, fp8_bench_configs, offs,
};
use ptxkit::runtime::cuda::{CudaSlice, CudaStream, DeviceRepr, DriverError};
use ptxkit::runtime::{E4m3, TensorMut, TensorRef};

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

/// Fills `dst` with copies of `chunk` (random values): random enough for timing, and quick to
/// write for the 2 GB of B at G = 64.
fn fill<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    dst: &mut CudaSlice<T>,
    chunk: &[T],
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
        .filter(|c| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|o| o == c.name))
        })
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
        let d_offs = stream.clone_htod(&offs(&case.sizes))?;
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
            let ms = median_ms::<Box<dyn std::error::Error>>(
                &stream,
                2,
                iters,
                Before::Nothing,
                || {
                    let c_t = TensorMut::view(&mut c_view, [rows, N])?;
                    gemm.run(&stream, &a_t, &b_t, &o_t, None, c_t)?;
                    Ok(())
                },
            )?;
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
        let ms =
            median_ms::<Box<dyn std::error::Error>>(&stream, 2, iters, Before::Nothing, || {
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
    for (name, cfg, ours, theirs) in &table {
        println!(
            "| {name} | {cfg} | {ours:.0} | {theirs:.0} | {:.3} |",
            ours / theirs
        );
    }
    if only_cfg.is_none() {
        drop((a, b, c, c_ref));
        let bf16_best: Vec<(String, f64)> = table.iter().map(|t| (t.0.clone(), t.2)).collect();
        fp8_block(&device, &stream, &cases, &bf16_best)?;
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
            let ms =
                median_ms::<Box<dyn std::error::Error>>(stream, 2, 10, Before::Nothing, || {
                    let c_t = TensorMut::view(&mut c_view, [groups, cap, N])?;
                    gemm.run(stream, &a_t, &b_t, &n_t, None, c_t)?;
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

/// Grouped block-scaled FP8 (e4m3 in, bf16 out) at the cases G = 8 with M_g of 2048 and 4096
/// (when they were run): every configuration of `fp8_bench_configs`, then a table beside the
/// best grouped bf16 of the same case. Scales of about 1 (the timing does not depend on them).
fn fp8_block(
    device: &ptxkit::runtime::Device,
    stream: &Arc<CudaStream>,
    cases: &[Case],
    bf16_best: &[(String, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let cases: Vec<&Case> = cases
        .iter()
        .filter(|c| c.name == "8x2048" || c.name == "8x4096")
        .collect();
    let Some(rows_max) = cases.iter().map(|c| c.sizes.iter().sum::<usize>()).max() else {
        return Ok(());
    };
    let groups = 8;
    let (kb, nb) = (K.div_ceil(128), N.div_ceil(128));
    let chunk: Vec<E4m3> = random_values(1 << 22, 11)
        .into_iter()
        .map(|x| E4m3::from_f32(x * 200.0))
        .collect();
    let mut a = stream.alloc_zeros::<E4m3>(rows_max * K)?;
    let mut b = stream.alloc_zeros::<E4m3>(groups * N * K)?;
    fill(stream, &mut a, &chunk)?;
    fill(stream, &mut b, &chunk[777..])?;
    let scales: Vec<f32> = random_values(1 << 16, 13)
        .into_iter()
        .map(|x| 1.0 + 0.5 * x)
        .collect();
    let mut sa = stream.alloc_zeros::<f32>(kb * rows_max)?;
    let mut sb = stream.alloc_zeros::<f32>(groups * nb * kb)?;
    fill(stream, &mut sa, &scales)?;
    fill(stream, &mut sb, &scales)?;
    let mut c = stream.alloc_zeros::<bf16>(rows_max * N)?;
    let mut kernels = Vec::new();
    for cfg in fp8_bench_configs(Grouping::Contiguous) {
        match GroupedGemm::new(device, cfg) {
            Ok(g) => kernels.push(g),
            Err(e) => println!("fp8 config {}: {e}", cfg.name()),
        }
    }
    let mut table = Vec::new();
    for case in cases {
        let rows = case.sizes.iter().sum::<usize>();
        let d_offs = stream.clone_htod(&offs(&case.sizes))?;
        let flops = 2.0 * rows as f64 * N as f64 * K as f64;
        let a_view = a.slice(..rows * K);
        let sa_view = sa.slice(..kb * rows);
        let a_t = TensorRef::view(&a_view, [rows, K])?;
        let b_t = TensorRef::slice(&b, [groups, N, K])?;
        let sa_t = TensorRef::view(&sa_view, [kb, rows])?;
        let sb_t = TensorRef::slice(&sb, [groups, nb, kb])?;
        let o_t = TensorRef::slice(&d_offs, [groups])?;
        let mut best: Option<(f64, String)> = None;
        for gemm in &kernels {
            let mut c_view = c.slice_mut(..rows * N);
            let ms =
                median_ms::<Box<dyn std::error::Error>>(stream, 2, 10, Before::Nothing, || {
                    let c_t = TensorMut::view(&mut c_view, [rows, N])?;
                    gemm.run(stream, &a_t, &b_t, &o_t, Some([&sa_t, &sb_t]), c_t)?;
                    Ok(())
                })?;
            let tflops = flops / ms / 1e9;
            let name = gemm.config().name();
            println!("fp8 {} {name}: {tflops:.0} TFLOP/s", case.name);
            if best.as_ref().is_none_or(|(t, _)| tflops > *t) {
                best = Some((tflops, name));
            }
        }
        if let Some((fp8, name)) = best {
            let bf = bf16_best
                .iter()
                .find(|(n, _)| *n == case.name)
                .map_or(f64::NAN, |b| b.1);
            table.push((case.name.clone(), bf, fp8, name));
        }
    }
    println!(
        "\n| G x M_g | grouped bf16 TFLOP/s | grouped FP8 block TFLOP/s | FP8 config | FP8 / bf16 |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (name, bf, fp8, cfg) in table {
        println!("| {name} | {bf:.0} | {fp8:.0} | {cfg} | {:.2} |", fp8 / bf);
    }
    Ok(())
}
