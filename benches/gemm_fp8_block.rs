//! The block-scaled FP8 GEMM (DeepSeek-V3's 1 x 128 / 128 x 128 scales,
//! [`Scaling::Block`](ptxkit::library::gemm::Scaling::Block)) beside, in the same process and
//! at the same shapes, our bf16 GEMM (the issue's bar: block-scaled FP8 at least 1.6x it at
//! 8192³), our per-tensor FP8 GEMM and cuBLASLt FP8 (per-tensor, fast accumulation; cuBLASLt
//! has no block-scaled FP8 on sm_90). H100/H200; skipped with a message where there is no GPU.
//!
//! First the checks (f64 host reference of the dequantized product, random per-block scales,
//! poisoned C: [`check_block`]) of the configurations the table times, then per shape the
//! TFLOP/s (CUDA-event medians) of each block-scaled configuration of the sweep
//! ([`GemmConfig::fp8_block_sweep`]) and of the baselines. `FP8_BLOCK_ONLY=MxNxK` times that
//! shape alone with the default configuration, or with the configuration of the sweep named
//! `FP8_BLOCK_CONFIG` (for ncu); `FP8_BLOCK_SHAPES=MxNxK,...` times those shapes only;
//! `FP8_BLOCK_CHECKS=0` skips the checks (where the self-test has just run them);
//! `FP8_BLOCK_SECONDS` (default 150) stops starting new shapes after that long. The square
//! shapes time the whole sweep, DeepSeek-V3's the few configurations of
//! [`GemmConfig::fp8_block_quick`] (so the whole list fits the time limit).
//!
//! `FP8_BLOCK_SAME_TILE` times instead, at DeepSeek-V3's shapes for M ∈ {1, 16, 64, 128} (or
//! those of `FP8_BLOCK_SHAPES`), the block-scaled decode default
//! ([`GemmConfig::fp8_block_split`]) and the same with the other promotion against our
//! per-tensor FP8 GEMM at the same tile (the same configuration with per-tensor scales) on
//! the same A and B, each from a cold L2 with their runs interleaved, as the decode table
//! times (issue 29's bar for block-scaled FP8 at the decode shapes); `FP8_BLOCK_RUNS=N` times
//! N runs after one warm-up round (under ncu: few launches).
//!
//! `FP8_BLOCK_SPLIT` checks and times split-K of the block-scaled GEMM at decode shapes
//! ([`GemmConfig::fp8_block_split`], [`split_k_mode`]): the checks of the split kernels with
//! either promotion (C poisoned, fresh random data and scales, edges in M, N and K, a part of
//! one k-tile, parts past the last k-tile), the in-kernel fixup against the second launch's
//! sum bit for bit, then (unless
//! `FP8_BLOCK_SPLIT=checks`, what the sanitizer runs; `checks-pp` those of the pipelined
//! promotion only; `checks-rule` instead checks the decode rule's pick, split or not, at every
//! decode shape) the split default against the unsplit
//! default and our per-tensor FP8 GEMM at each one's tile.
//!
//! ```text
//! cargo bench --bench gemm_fp8_block
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use half::bf16;
use ptxkit::isa::ScalarType;
use ptxkit::library::gemm::check::{self, CheckError, Fp8Problem, loaded};
use ptxkit::library::gemm::check_block::{BlockProblem, Codec, check_block};
use ptxkit::library::gemm::cublaslt::{Accum, LtFp8};
use ptxkit::library::gemm::{
    DECODE_MS, DEEPSEEK_V3_NK, Fp8Epilogue, Fp8Scales, Gemm, GemmConfig, Scaling,
};
use ptxkit::runtime::cuda::{CudaSlice, CudaStream};
use ptxkit::runtime::{Before, Device, DeviceTensor, E4m3, median_ms, median_ms_interleaved};
use ptxkit::selftest::gpu_with_or_skip;

/// C's type in these benchmarks.
const OUT: ScalarType = ScalarType::Bf16;

/// How the e4m3 operands are made on the host and read back.
const E4: Codec<E4m3> = (E4m3::from_f32, E4m3::to_f32);

/// `FP8_BLOCK_SAME_TILE`: at each shape of `shapes`, the block-scaled decode default (the
/// rule, [`GemmConfig::fp8_block_split`]), the same with the other promotion (pipelined or
/// plain, where it is valid: the split and unsplit both take either at 64 wide), our per-tensor
/// FP8 at the default's tile (the same configuration with per-tensor scales: tile, stages,
/// order and split), and the unsplit default ([`GemmConfig::fp8_block`]), on the same A and B
/// (per-tensor scales of 1), cold runs of each interleaved ([`median_ms_interleaved`] after
/// [`Before::ColdL2`]; 20 after 2 warm-up rounds, or `FP8_BLOCK_RUNS` after one, what ncu
/// profiles); prints µs and per-tensor µs / block µs (≥ 1.0: the block scales cost nothing).
fn same_tile(
    (device, stream): (&Device, &Arc<CudaStream>),
    kernels: &mut HashMap<GemmConfig, Gemm>,
    shapes: &[(usize, usize, usize)],
) {
    let sms = device.attributes().sm_count;
    let (warmup, runs) = match std::env::var("FP8_BLOCK_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        Some(runs) => (1, runs),
        None => (2, 20),
    };
    println!(
        "\n| shape | block-scaled default | default µs | other promotion | other µs | per-tensor at the same tile µs | per-tensor / default | per-tensor / other | unsplit default µs |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for &(m, n, k) in shapes {
        let block = GemmConfig::fp8_block_split(m, n, k, sms, ScalarType::E4m3, OUT);
        let other = promoted_otherwise(block);
        let tensor = per_tensor_twin(block);
        let whole = GemmConfig::fp8_block(m, n, sms, ScalarType::E4m3, OUT);
        let configs = [block, other, tensor, whole];
        let row = (|| -> Result<[f64; 4], Box<dyn std::error::Error>> {
            for c in configs {
                loaded(kernels, device, c)?;
            }
            let g = configs.map(|c| &kernels[&c]);
            let p = BlockProblem::new(stream, (m, n, k), 7, (E4, E4), OUT)?;
            let one = DeviceTensor::from_host(stream, &[1.0f32], vec![1])?;
            let mut cs = outputs(stream, (m, n), configs.len())?;
            let [c0, c1, c2, c3] = &mut cs[..] else {
                return Err("four outputs".into());
            };
            let d = &p.device;
            Ok(median_ms_interleaved::<CheckError, 4>(
                stream,
                warmup,
                runs,
                Before::ColdL2,
                [
                    &mut || Ok(p.run(stream, g[0], c0)?),
                    &mut || Ok(p.run(stream, g[1], c1)?),
                    &mut || {
                        let scales = Fp8Scales::per_tensor([&one, &one]);
                        Ok(g[2].run_fp8(stream, &d.a, &d.b, c2, scales, &Fp8Epilogue::NONE)?)
                    },
                    &mut || Ok(p.run(stream, g[3], c3)?),
                ],
            )?)
        })();
        let short = |c: &GemmConfig| c.name().replace("gemm_e4m3_bf16_", "");
        match row {
            Ok([b, o, t, w]) => println!(
                "| {m}x{n}x{k} | {} | {:.2} | {} | {:.2} | {:.2} | {:.3} | {:.3} | {:.2} |",
                short(&block),
                b * 1e3,
                short(&other),
                o * 1e3,
                t * 1e3,
                t / b,
                t / o,
                w * 1e3
            ),
            Err(e) => println!(
                "| {m}x{n}x{k} | {} | error: {e} | | | | | | |",
                short(&block)
            ),
        }
    }
}

/// `count` zeroed bf16 outputs `[m, n]`, one for each kernel a timed row runs.
fn outputs(
    stream: &Arc<CudaStream>,
    (m, n): (usize, usize),
    count: usize,
) -> Result<Vec<DeviceTensor<bf16>>, Box<dyn std::error::Error>> {
    (0..count)
        .map(|_| {
            Ok(DeviceTensor::new(
                stream.alloc_zeros::<bf16>(m * n)?,
                vec![m, n],
            )?)
        })
        .collect()
}

/// `cfg` with the other promotion ([`GemmConfig::pipelined_promotion`] on or off) where that
/// configuration is valid, else `cfg`.
fn promoted_otherwise(cfg: GemmConfig) -> GemmConfig {
    let other = GemmConfig {
        pipelined_promotion: !cfg.pipelined_promotion,
        ..cfg
    };
    match other.validate() {
        Ok(()) => other,
        Err(_) => cfg,
    }
}

/// `cfg` with per-tensor scales at the same tile, stages and split (the block scales' cost
/// alone between them).
fn per_tensor_twin(cfg: GemmConfig) -> GemmConfig {
    GemmConfig {
        scaling: Scaling::PerTensor,
        pipelined_promotion: false,
        smem_scales: false,
        ..cfg
    }
}

/// `FP8_BLOCK_SPLIT`: split-K of the block-scaled GEMM at decode shapes.
/// - Checks (f64 reference, C poisoned, fresh random data and per-block scales) of the split
///   default ([`GemmConfig::fp8_block_split`]) at DeepSeek-V3's N = 2112 and 4096 for
///   M = 1, 16, 64, 128, at odd M, N and K (a last k-block of 16 columns), in 16 parts (a
///   part past the last k-tile), in 8 parts of 25 k-tiles (a part of one), 128 wide, and
///   summed by the second launch, each also with the other promotion where valid
///   ([`promoted_otherwise`]); the fixup's C against the second launch's bit for bit on the
///   same data, with either promotion.
/// - Unless `FP8_BLOCK_SPLIT=checks`: at each of those decode shapes, cold and interleaved (20
///   runs each), the split default, the unsplit default ([`GemmConfig::fp8_block`]), our
///   per-tensor FP8 at the split's tile and at the unsplit's, the split summed by a second
///   launch and the split 128 wide (the plain promotion) in as many parts as fill the SMs; µs
///   and ratios.
fn split_k_mode(
    (device, stream): (&Device, &Arc<CudaStream>),
    kernels: &mut HashMap<GemmConfig, Gemm>,
    shapes: &[(usize, usize, usize)],
) {
    let sms = device.attributes().sm_count;
    let (e4m3, out, e4) = (ScalarType::E4m3, OUT, E4);
    let split =
        |(m, n, k): (usize, usize, usize)| GemmConfig::fp8_block_split(m, n, k, sms, e4m3, out);
    let two_launch = |c: GemmConfig| GemmConfig {
        split_fixup: false,
        ..c
    };
    let wide = |(m, n, k): (usize, usize, usize)| {
        let tiles = m.div_ceil(128) * n.div_ceil(128);
        let parts = (sms as usize / tiles).clamp(2, 16) as u32;
        GemmConfig {
            bn: 128,
            split_k: parts,
            pipelined_promotion: false,
            ..split((m, n, k))
        }
        .deepest()
    };
    let mut checks: Vec<(GemmConfig, (usize, usize, usize))> = Vec::new();
    for &shape in shapes {
        checks.push((split(shape), shape));
    }
    let (odd, odd1) = ((37, 999, 2960), (1, 1000, 4112));
    checks.push((split(odd), odd));
    checks.push((split(odd1), odd1));
    checks.push((
        GemmConfig {
            split_k: 16,
            ..split(odd)
        },
        odd,
    ));
    checks.push((two_launch(split(odd)), odd));
    checks.push((two_launch(split((16, 4096, 7168))), (16, 4096, 7168)));
    checks.push((wide((64, 2112, 7168)), (64, 2112, 7168)));
    // 25 k-tiles in 8 parts of 4: a part of one k-tile and one past the last.
    let short = (37, 999, 3088);
    checks.push((
        GemmConfig {
            split_k: 8,
            ..split(short)
        },
        short,
    ));
    // Each with the other promotion (pipelined or plain) where that is valid.
    let others: Vec<_> = checks
        .iter()
        .map(|&(c, shape)| (promoted_otherwise(c), shape))
        .collect();
    checks.extend(others);
    checks.retain(|(c, _)| c.split_k > 1);
    let mut seen = Vec::new();
    checks.retain(|item| {
        let new = !seen.contains(item);
        seen.push(*item);
        new
    });
    for (c, shape) in &checks {
        if let Err(e) = c.validate() {
            println!("split check {} {shape:?}: FAIL invalid: {e}", c.name());
        }
    }
    checks.retain(|(c, _)| c.validate().is_ok());
    let mode = std::env::var("FP8_BLOCK_SPLIT").unwrap_or_default();
    if mode == "checks-pp" {
        checks.retain(|(c, _)| c.pipelined_promotion);
    }
    block_checks("split check", (stream, kernels, device), checks);
    // The fixup against the second launch, bit for bit, on the same data (each promotion).
    let bits = [odd, odd1, (64, 2112, 7168)]
        .into_iter()
        .flat_map(|s| [(split(s), s), (promoted_otherwise(split(s)), s)]);
    let bits = bits.filter(|(c, _)| mode != "checks-pp" || c.pipelined_promotion);
    for (fixup, shape @ (m, n, k)) in bits {
        let r = (|| -> Result<bool, Box<dyn std::error::Error>> {
            loaded(kernels, device, fixup)?;
            loaded(kernels, device, two_launch(fixup))?;
            let p = BlockProblem::new(stream, shape, 5, (e4, e4), out)?;
            let mut c = [0, 1].map(|_| vec![bf16::from_bits(0xFFFF); m * n]);
            for (cfg, host) in [fixup, two_launch(fixup)].iter().zip(c.iter_mut()) {
                let mut dc = DeviceTensor::from_host(stream, host, vec![m, n])?;
                p.run(stream, &kernels[cfg], &mut dc)?;
                *host = dc.to_host(stream)?;
            }
            Ok(c[0]
                .iter()
                .zip(&c[1])
                .all(|(x, y)| x.to_bits() == y.to_bits()))
        })();
        match r {
            Ok(same) => println!(
                "split bits {} {m}x{n}x{k}: fixup vs second launch {}",
                fixup.name(),
                if same {
                    "identical PASS"
                } else {
                    "differ FAIL"
                }
            ),
            Err(e) => println!("split bits {m}x{n}x{k}: FAIL {e}"),
        }
    }
    if mode.starts_with("checks") {
        return;
    }
    println!(
        "\n| shape | split default | split µs | unsplit µs | unsplit / split | per-tensor same tile (split) µs | per-tensor / block (split) | per-tensor same tile (unsplit) µs | per-tensor / block (unsplit) | two-launch split µs | 128-wide split µs |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for &shape @ (m, n, k) in shapes {
        let whole = GemmConfig::fp8_block(m, n, sms, e4m3, out);
        let configs = [
            split(shape),
            whole,
            per_tensor_twin(split(shape)),
            per_tensor_twin(whole),
            two_launch(split(shape)),
            wide(shape),
        ];
        let row = (|| -> Result<[f64; 6], Box<dyn std::error::Error>> {
            for c in configs {
                loaded(kernels, device, c)?;
            }
            let p = BlockProblem::new(stream, shape, 7, (e4, e4), out)?;
            let one = DeviceTensor::from_host(stream, &[1.0f32], vec![1])?;
            let mut cs = outputs(stream, (m, n), configs.len())?;
            let g = configs.map(|c| &kernels[&c]);
            let d = &p.device;
            let [c0, c1, c2, c3, c4, c5] = &mut cs[..] else {
                return Err("six outputs".into());
            };
            let tensor = |gemm: &Gemm, c: &mut DeviceTensor<bf16>| -> Result<(), CheckError> {
                let scales = Fp8Scales::per_tensor([&one, &one]);
                Ok(gemm.run_fp8(stream, &d.a, &d.b, c, scales, &Fp8Epilogue::NONE)?)
            };
            Ok(median_ms_interleaved::<CheckError, 6>(
                stream,
                2,
                20,
                Before::ColdL2,
                [
                    &mut || Ok(p.run(stream, g[0], c0)?),
                    &mut || Ok(p.run(stream, g[1], c1)?),
                    &mut || tensor(g[2], c2),
                    &mut || tensor(g[3], c3),
                    &mut || Ok(p.run(stream, g[4], c4)?),
                    &mut || Ok(p.run(stream, g[5], c5)?),
                ],
            )?)
        })();
        let us = |ms: f64| ms * 1e3;
        match row {
            Ok(t) => println!(
                "| {m}x{n}x{k} | {} | {:.2} | {:.2} | {:.3} | {:.2} | {:.3} | {:.2} | {:.3} | {:.2} | {:.2} |",
                configs[0].name(),
                us(t[0]),
                us(t[1]),
                t[1] / t[0],
                us(t[2]),
                t[2] / t[0],
                us(t[3]),
                t[3] / t[1],
                us(t[4]),
                us(t[5])
            ),
            Err(e) => println!(
                "| {m}x{n}x{k} | {} | error: {e} | | | | | | | | |",
                configs[0].name()
            ),
        }
    }
}

/// The square shapes, then DeepSeek-V3's (M ∈ {64, 128, 4096}; N x K from its layers).
/// [`check::print_checks`] of block-scaled configurations against the f64 reference
/// ([`check_block`]), each line `{label} {configuration} {m}x{n}x{k} vs f64 reference: rel ...`.
fn block_checks(
    label: &str,
    (stream, kernels, device): (&Arc<CudaStream>, &mut HashMap<GemmConfig, Gemm>, &Device),
    checks: Vec<(GemmConfig, (usize, usize, usize))>,
) {
    check::print_checks(
        label,
        |g, shape, seed| check_block(stream, g, shape, seed),
        |cfg, (m, n, k), r| {
            format!(
                "{label} {} {m}x{n}x{k} vs f64 reference: rel {:.2e}",
                cfg.name(),
                r.rel_error
            )
        },
        (kernels, device),
        checks,
    );
}

fn shapes() -> Vec<(usize, usize, usize)> {
    let mut s = vec![(8192, 8192, 8192), (4096, 4096, 4096), (6144, 6144, 6144)];
    for m in [4096, 128, 64] {
        s.extend(DEEPSEEK_V3_NK.iter().map(|&(n, k)| (m, n, k)));
    }
    s
}

fn main() {
    let Some((device, stream, lt)) = gpu_with_or_skip("GPU benchmarks skipped", LtFp8::new) else {
        return;
    };
    let sms = device.attributes().sm_count;
    let (e4m3, out) = (ScalarType::E4m3, ScalarType::Bf16);
    let only = std::env::var("FP8_BLOCK_ONLY").ok();
    let pick = std::env::var("FP8_BLOCK_CONFIG").ok();
    let budget = std::env::var("FP8_BLOCK_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(150.0);
    let listed: Option<Vec<String>> = std::env::var("FP8_BLOCK_SHAPES")
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect());
    let start = Instant::now();
    let mut kernels: HashMap<GemmConfig, Gemm> = HashMap::new();
    let large = GemmConfig::fp8_block(8192, 8192, sms, e4m3, out);
    let checks = std::env::var("FP8_BLOCK_CHECKS").map_or(true, |v| v != "0");
    if only.is_none() && checks {
        // The configurations the table times, checked first on shapes with edges.
        let mut checks = vec![(large, (300, 520, 400)), (large, (4096, 4096, 4096))];
        for cfg in large.fp8_block_sweep() {
            checks.push((cfg, (520, 264, 656)));
        }
        checks.push((
            GemmConfig::fp8_block(64, 2112, sms, e4m3, out),
            (64, 2112, 7168),
        ));
        block_checks("check", (&stream, &mut kernels, &device), checks);
    }
    // The decode shapes (M of DECODE_MS) of `nk`, those of `FP8_BLOCK_SHAPES` where it is set.
    let decode = |nk: &[(usize, usize)]| -> Vec<(usize, usize, usize)> {
        DECODE_MS
            .into_iter()
            .flat_map(|m| nk.iter().map(move |&(n, k)| (m, n, k)))
            .filter(|&(m, n, k)| {
                let name = format!("{m}x{n}x{k}");
                listed.as_ref().is_none_or(|l| l.contains(&name))
            })
            .collect()
    };
    if std::env::var("FP8_BLOCK_SPLIT").is_ok_and(|v| v == "checks-rule") {
        // The decode rule's pick at every decode shape, split or not.
        let checks = decode(DEEPSEEK_V3_NK)
            .into_iter()
            .map(|(m, n, k)| {
                (
                    GemmConfig::fp8_block_split(m, n, k, sms, e4m3, out),
                    (m, n, k),
                )
            })
            .collect::<Vec<_>>();
        block_checks("rule check", (&stream, &mut kernels, &device), checks);
    } else if std::env::var_os("FP8_BLOCK_SPLIT").is_some() {
        // The decode shapes the split rule splits on 132 SMs: DeepSeek-V3's N = 2112 and 4096.
        let shapes = decode(&[(2112, 7168), (4096, 7168)]);
        split_k_mode((&device, &stream), &mut kernels, &shapes);
    } else if std::env::var_os("FP8_BLOCK_SAME_TILE").is_some() {
        same_tile((&device, &stream), &mut kernels, &decode(DEEPSEEK_V3_NK));
    }
    if ["FP8_BLOCK_SPLIT", "FP8_BLOCK_SAME_TILE"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
    {
        println!("device: {}", device.attributes().name);
        return;
    }
    println!(
        "\n| shape | block FP8 best TFLOP/s | best config | block default | per-tensor FP8 (ours) | cuBLASLt FP8 fast | bf16 (ours) | best / bf16 |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let e4 = E4;
    for (m, n, k) in shapes() {
        let name = format!("{m}x{n}x{k}");
        if only.as_ref().is_some_and(|o| *o != name)
            || listed.as_ref().is_some_and(|l| !l.contains(&name))
        {
            continue;
        }
        if start.elapsed().as_secs_f64() > budget {
            println!("| {name} | skipped: past FP8_BLOCK_SECONDS = {budget} | | | | | | |");
            continue;
        }
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        let default = GemmConfig::fp8_block(m, n, sms, e4m3, out);
        let mut configs = vec![default];
        if pick.is_some() || (only.is_none() && m == n && n == k) {
            configs.extend(default.fp8_block_sweep());
        } else if only.is_none() {
            configs = default.fp8_block_quick();
        }
        if let (Some(_), Some(pick)) = (&only, &pick) {
            configs.retain(|c| c.name() == *pick);
            if configs.is_empty() {
                println!("| {name} | no configuration of the sweep is named {pick} | | | | | | |");
                continue;
            }
        }
        let row = (|| -> Result<String, Box<dyn std::error::Error>> {
            let tflops = |ms: f64| flops / ms / 1e9;
            // Block-scaled: every configuration of the sweep on one problem.
            let p = BlockProblem::new(&stream, (m, n, k), 7, (e4, e4), ScalarType::Bf16)?;
            let mut c = DeviceTensor::new(stream.alloc_zeros::<bf16>(m * n)?, vec![m, n])?;
            let mut block = Vec::new();
            for cfg in &configs {
                let gemm = loaded(&mut kernels, &device, *cfg)?;
                let ms = median_ms::<CheckError>(&stream, 3, 20, Before::Nothing, || {
                    Ok(p.run(&stream, gemm, &mut c)?)
                })?;
                println!("sweep {name} {}: {:.0} TFLOP/s", cfg.name(), tflops(ms));
                block.push((tflops(ms), cfg.name()));
            }
            drop(p);
            if only.is_some() {
                return Ok(format!(
                    "| {name} | {:.0} | {} | | | | | |",
                    block[0].0, block[0].1
                ));
            }
            // Per-tensor FP8: ours and cuBLASLt fast.
            let round = E4m3::from_f32 as fn(f32) -> E4m3;
            let p = Fp8Problem::new(&stream, (m, n, k), 7, (round, round))?;
            let gemm = loaded(&mut kernels, &device, GemmConfig::fp8(m, n, sms, e4m3, out))?;
            let ms = median_ms::<CheckError>(&stream, 3, 20, Before::Nothing, || {
                let scales = Fp8Scales::per_tensor(p.scales());
                Ok(gemm.run_fp8(&stream, &p.a, &p.b, &mut c, scales, &Fp8Epilogue::NONE)?)
            })?;
            let per_tensor = tflops(ms);
            let mut dd: CudaSlice<bf16> = stream.alloc_zeros(m * n)?;
            let ms = median_ms::<CheckError>(&stream, 3, 20, Before::Nothing, || {
                p.cublaslt(&lt, &mut dd, Accum::Fast)
            })?;
            let cublaslt = tflops(ms);
            drop(p);
            // Our bf16 GEMM in the configuration its benchmarks give the shape.
            let q = check::Problem::new(&stream, (m, n, k), 11)?;
            let gemm = loaded(&mut kernels, &device, GemmConfig::for_problem(m, n, sms))?;
            let mut cb = DeviceTensor::new(stream.alloc_zeros::<bf16>(m * n)?, vec![m, n])?;
            let ms = median_ms::<CheckError>(&stream, 3, 20, Before::Nothing, || {
                Ok(gemm.run(&stream, &q.a, &q.b, &mut cb, None)?)
            })?;
            let bf16_ours = tflops(ms);
            let (best, best_name) = block
                .iter()
                .cloned()
                .fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a });
            Ok(format!(
                "| {name} | {best:.0} | {best_name} | {:.0} | {per_tensor:.0} | {cublaslt:.0} | {bf16_ours:.0} | {:.2} |",
                block[0].0,
                best / bf16_ours
            ))
        })();
        match row {
            Ok(line) => println!("{line}"),
            Err(e) => println!("| {name} | error: {e} | | | | | | |"),
        }
    }
    println!("device: {}", device.attributes().name);
}
