//! The decode table: GEMMs of M ∈ [`DECODE_MS`] tokens on Llama-3 8B's and 70B's projection
//! shapes and DeepSeek-V3's, in bf16 against cuBLAS and in per-tensor FP8 (e4m3 in, bf16 out)
//! against cuBLASLt with fast accumulation, each in the same process (H100/H200; skipped with a
//! message where there is no GPU).
//!
//! First the checks of the decode paths (swap-AB, split-K's in-kernel fixup) on fresh random
//! data with C poisoned ([`check::check_config`] against an f32 cuBLAS reference,
//! [`check::check_fp8`] against cuBLASLt promoted), and the fixup's result against the
//! two-launch split-K's, bit for bit. With `DECODE_CHECK_ONLY` set it stops there (what the
//! sanitizer runs); `DECODE_CHECK_ONLY=decode-widths` keeps only the checks of the unswapped
//! decode widths, of the swapped tiles narrower than M and of the CTA pairs and clusters,
//! `DECODE_CHECK_ONLY=pairs` those of the CTA pairs, `DECODE_CHECK_ONLY=clusters` those of
//! the clusters along N (each with how many clusters the GPU holds at once),
//! `DECODE_CHECK_ONLY=fixup` those of the splits summed in the kernel (one launch) and the
//! fixup's bits against the second launch's, `DECODE_CHECK_ONLY=stream-k` those of stream-K
//! ([`GemmConfig::stream_k`]) and its result twice, bit for bit.
//!
//! Then each row: the baseline, and every candidate [`tune::candidates`] offers (the rule's
//! pick first, the swapped kernels and the split-K ones among them, each in one launch), each
//! run once on a poisoned C and compared with the baseline's C (a candidate off by more than
//! 1e-2 relative is counted and not timed), then timed; the fastest few and the rule's
//! configuration ([`finalists_with_rule`]) are timed again, all their runs and the baseline's
//! interleaved, and the pick is chosen among them ([`pick_over_rule`]: the fastest, a split
//! one only by the split margin, another than the rule's only by the rule margin). Runs 1 and
//! 2 each time the pick and the baseline with their runs interleaved
//! ([`median_ms_interleaved`]), so neither the pick's luck in the picking pass nor the drift
//! between two medians taken one after the other carries into the ratio. Times are CUDA-event medians with a cold L2 before each run
//! ([`Before::ColdL2`]: a decode step streams its weights from HBM). The weights are a random
//! 4M-element block repeated (uploading 470M random values would cost more than the table).
//!
//! `DECODE_SHAPE=MxNxK` (a comma-separated list) and `DECODE_DTYPE=bf16|e4m3` keep those
//! rows, `DECODE_M` the rows of one M; `DECODE_PROFILE` runs each candidate and the baseline
//! once, untimed (what `ncu` profiles), and `DECODE_PICK=MxNxK=name,...` keeps only the named
//! candidates at each shape it names (a shape may be named more than once; the name `rule` is
//! the rule's configuration), `DECODE_SKIP=part,...` none whose name holds a part;
//! `DECODE_NO_CHECKS` skips the checks before the table; `DECODE_GAP` times each row's pick
//! and baseline again, cold with their runs interleaved and back to back without a clear.
//! Every candidate of the wanted rows is loaded before the first row, on all host threads.
//! `DECODE_LARGE` times the large [`BENCH_SHAPES`] instead of the decode rows, the same way
//! (every candidate, CTA pairs among them); `DECODE_ALL` prints every candidate's time.
//! `DECODE_STREAM_K` sets stream-K apart: each row's pick is the tuner's among the other
//! candidates (the pick before stream-K), and after runs 1 and 2 the fastest stream-K
//! candidate of the first pass, that pick and the baseline are timed again, interleaved
//! (twice), on a `streamk` line.
//! `DECODE_CHECK=pick` compares only the pick with the baseline's C (on a poisoned C, before
//! runs 1 and 2; a pick off by 1e-2 is the row's error) instead of every candidate before it is
//! timed: the large rows' host comparisons of 16M-67M elements a candidate are most of their
//! time.
//! `DECODE_RULE=N` (3 where N is not a number): after runs 1 and 2, N rounds of the pick, the
//! rule's configuration and the baseline, their runs interleaved (cold, 30 each), on `rule`
//! lines (the rule compared with the baseline's C first where `DECODE_CHECK=pick` skipped it).
//! `DECODE_L2=N`: the L2 state a run starts in. After runs 1 and 2, N rounds of the pick and
//! the baseline interleaved (60 runs each) twice: after the 256 MiB clear of
//! [`Before::ColdL2`] (the table's way: an L2 of the clear's dirty lines, which the timed run
//! writes back), and after a read of as many bytes ([`CleanRead`], through [`Before::Run`]: an
//! L2 of clean lines), on `l2` lines.
//!
//! ```text
//! cargo bench --bench gemm_decode
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm as _};
use half::bf16;
use ptxkit::isa::ScalarType;
use ptxkit::library::gemm::check::{self, CheckError, blas_config, loaded, random_values};
use ptxkit::library::gemm::cublaslt::{Accum, LtFp8};
use ptxkit::library::gemm::tune::{TuneProblem, candidates, finalists_with_rule, pick_over_rule};
use ptxkit::library::gemm::{
    BENCH_SHAPES, DECODE_MS, DEEPSEEK_V3_NK, Fp8Epilogue, Fp8Scales, Gemm, GemmConfig, GemmError,
    LLAMA3_8B_NK, LLAMA3_70B_NK,
};
use ptxkit::runtime::cuda::{CudaSlice, CudaStream};
use ptxkit::runtime::{
    Before, Device, DeviceTensor, E4m3, Element, L2_FLUSH_BYTES, mean_ms_back_to_back, median_ms,
    median_ms_interleaved, medians_ms_interleaved,
};

/// Timed runs of each candidate in the first pass, of each finalist ([`finalists_with_rule`])
/// and the baseline when picking, and of the pick and the baseline in each of runs 1 and 2.
const PICK_ITERS: usize = 8;
const FINAL_ITERS: usize = 20;
const ITERS: usize = 30;

/// Elements of the random block the weights repeat.
const BLOCK: usize = 1 << 22;

/// The table's models and their `(n, k)`.
const MODELS: [(&str, &[(usize, usize)]); 3] = [
    ("Llama-3 8B", LLAMA3_8B_NK),
    ("Llama-3 70B", LLAMA3_70B_NK),
    ("DeepSeek-V3", DEEPSEEK_V3_NK),
];

/// A bf16 C of the rule's choice, poisoned (NaN) before a check run.
fn poison(stream: &Arc<CudaStream>, c: &mut DeviceTensor<bf16>) -> Result<(), CheckError> {
    let nan = vec![bf16::from_bits(0xFFFF); c.slice().len()];
    stream.memcpy_htod(&nan, c.slice_mut())?;
    Ok(())
}

/// `len` elements repeating `block` (device to device copies).
fn repeated<T: Element + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    block: &CudaSlice<T>,
    len: usize,
) -> Result<CudaSlice<T>, CheckError> {
    let mut out = stream.alloc_zeros::<T>(len)?;
    let mut at = 0;
    while at < len {
        let n = (len - at).min(block.len());
        stream.memcpy_dtod(&block.slice(0..n), &mut out.slice_mut(at..at + n))?;
        at += n;
    }
    Ok(out)
}

/// What one row measured.
struct Row {
    /// The baseline's time (ms), run 1 and run 2.
    base: [f64; 2],
    /// The pick's time (ms), run 1 (its picking run) and run 2.
    ours: [f64; 2],
    /// The rule's time (ms) in the first pass.
    rule: f64,
    /// The baseline's time (ms) in the first pass.
    base0: f64,
    pick: GemmConfig,
    /// The pick's relative error against the baseline's C.
    rel: f64,
    /// Candidates that failed their comparison.
    failed: Vec<String>,
}

/// Runs the row of `problem`: `baseline` writes the reference C into the C it is given,
/// `ours` runs a kernel into C; `clean` is `DECODE_L2`'s read ([`CleanRead`]).
fn row(
    (kernels, device, stream): (&mut HashMap<GemmConfig, Gemm>, &Device, &Arc<CudaStream>),
    problem: &TuneProblem,
    mut baseline: impl FnMut(&mut CudaSlice<bf16>) -> Result<(), CheckError>,
    ours: impl Fn(&Gemm, &mut DeviceTensor<bf16>) -> Result<(), GemmError>,
    clean: Option<Run<'_>>,
) -> Result<Row, CheckError> {
    let (m, n) = (problem.m, problem.n);
    let sms = device.attributes().sm_count;
    let rule_cfg = problem.rule(sms);
    let mut c = DeviceTensor::new(stream.alloc_zeros::<bf16>(m * n)?, vec![m, n])?;
    let mut base_c: CudaSlice<bf16> = stream.alloc_zeros(m * n)?;
    baseline(&mut base_c)?;
    let reference: Vec<f32> = stream
        .clone_dtoh(&base_c)?
        .into_iter()
        .map(bf16::to_f32)
        .collect();
    // Profiled, each kernel runs once: the baseline's reference run and each candidate's check
    // run (what ncu measures), nothing timed.
    let profile = std::env::var_os("DECODE_PROFILE").is_some();
    let time = |f: &mut dyn FnMut() -> Result<(), CheckError>, iters| match profile {
        true => Ok(f64::NAN),
        false => median_ms::<CheckError>(stream, 2, iters, Before::ColdL2, f),
    };
    let base0 = time(&mut || baseline(&mut base_c), ITERS)?;
    // `cfg`'s relative error against the baseline's C, run once on a poisoned C.
    let compare = |gemm: &Gemm, c: &mut DeviceTensor<bf16>| -> Result<f64, CheckError> {
        poison(stream, c)?;
        ours(gemm, c)?;
        let got: Vec<f32> = c.to_host(stream)?.into_iter().map(bf16::to_f32).collect();
        Ok(check::rel_error(&got, &reference))
    };
    let bad = |rel: f64| rel.is_nan() || rel >= 1e-2;
    // `DECODE_CHECK=pick`: only the pick is compared (below), each candidate timed unchecked.
    let pick_only = std::env::var("DECODE_CHECK").is_ok_and(|v| v == "pick");
    // `DECODE_STREAM_K`: the pick among the candidates other than stream-K's.
    let stream_k_apart = std::env::var_os("DECODE_STREAM_K").is_some();
    let mut timed: Vec<(GemmConfig, f64, f64)> = Vec::new();
    let (mut rule, mut failed) = (f64::NAN, Vec::new());
    for (i, cfg) in row_candidates(problem, sms).into_iter().enumerate() {
        let gemm = loaded(kernels, device, cfg)?;
        let rel = match pick_only {
            true => f64::NAN,
            false => compare(gemm, &mut c)?,
        };
        if !pick_only && bad(rel) {
            failed.push(format!("{} ({rel:.1e})", cfg.name()));
            continue;
        }
        let ms = time(&mut || Ok(ours(gemm, &mut c)?), PICK_ITERS)?;
        if std::env::var_os("DECODE_ALL").is_some() {
            println!(
                "  {m}x{n}x{} {}: {:.1} µs, {:.3} of the baseline",
                problem.k,
                cfg.name(),
                ms * 1e3,
                base0 / ms
            );
        }
        if i == 0 {
            rule = ms;
        }
        timed.push((cfg, ms, rel));
    }
    // The finalists ([`finalists_with_rule`]: the fastest few of the first pass and the rule's
    // configuration) timed again, longer, all their runs and the baseline's interleaved; then
    // the tuner's pick among them ([`pick_over_rule`]: a split only where it is faster by the
    // split margin, another than the rule's only where it is faster by the rule margin).
    // Profiled, nothing is timed and the first candidate that passed stands.
    let picked = match profile {
        true => timed.first().map(|&(c, ms, _)| (c, ms)),
        false => {
            let pool = timed.iter().filter(|t| !(stream_k_apart && t.0.stream_k));
            let finals = finalists_with_rule(rule_cfg, pool.map(|&(c, ms, _)| (c, ms)));
            for &cfg in &finals {
                loaded(kernels, device, cfg)?;
            }
            // Each finalist with its kernel (all loaded above), in the finalists' order.
            let (finals, gemms): (Vec<GemmConfig>, Vec<&Gemm>) = finals
                .iter()
                .filter_map(|cfg| kernels.get(cfg).map(|g| (*cfg, g)))
                .unzip();
            let ms = medians_ms_interleaved::<CheckError>(
                stream,
                1,
                FINAL_ITERS,
                Before::ColdL2,
                gemms.len() + 1,
                |i| match gemms.get(i) {
                    Some(g) => Ok(ours(g, &mut c)?),
                    None => baseline(&mut base_c),
                },
            )?;
            let base = ms[gemms.len()];
            let mut line = format!(
                "  finalists {m}x{n}x{} (baseline {:.2} µs):",
                problem.k,
                base * 1e3
            );
            for (cfg, t) in finals.iter().zip(&ms) {
                let rule = if *cfg == rule_cfg { " (rule)" } else { "" };
                line.push_str(&format!(
                    " {}{rule} {:.2} µs ({:.3});",
                    cfg.name(),
                    t * 1e3,
                    base / t
                ));
            }
            println!("{line}");
            pick_over_rule(rule_cfg, finals.iter().copied().zip(ms))
        }
    };
    let Some((pick, mut rel)) =
        picked.and_then(|(p, _)| timed.iter().find(|t| t.0 == p).map(|t| (p, t.2)))
    else {
        return Err(CheckError::Gemm(GemmError::Operands(format!(
            "no candidate passed: {}",
            failed.join(", ")
        ))));
    };
    if pick_only {
        rel = compare(loaded(kernels, device, pick)?, &mut c)?;
        if bad(rel) {
            return Err(CheckError::Gemm(GemmError::Operands(format!(
                "the pick {} is off by {rel:.1e} against the baseline",
                pick.name()
            ))));
        }
    }
    // Runs 1 and 2: each the pick and the baseline timed cold with their runs interleaved
    // (no order or drift between two medians taken one after the other, and not the picking
    // pass's own median, which favours the pick).
    let gemm = loaded(kernels, device, pick)?;
    let mut run = || -> Result<[f64; 2], CheckError> {
        match profile {
            true => Ok([f64::NAN; 2]),
            false => median_ms_interleaved::<CheckError, 2>(
                stream,
                2,
                ITERS,
                Before::ColdL2,
                [&mut || Ok(ours(gemm, &mut c)?), &mut || {
                    baseline(&mut base_c)
                }],
            ),
        }
    };
    let [ours1, base1] = run()?;
    let [ours2, base2] = run()?;
    if std::env::var_os("DECODE_GAP").is_some() && !profile {
        gap(
            stream,
            problem,
            (&mut || Ok(ours(gemm, &mut c)?), &mut || {
                baseline(&mut base_c)
            }),
        )?;
    }
    // `DECODE_STREAM_K`: the first pass's fastest stream-K candidate against the pick and the
    // baseline, interleaved.
    let fastest_sk = timed
        .iter()
        .filter(|t| t.0.stream_k)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|t| t.0);
    if let (true, false, Some(sk)) = (stream_k_apart, profile, fastest_sk) {
        let [gemm, sk_gemm] = loaded_pair((kernels, device), [pick, sk])?;
        pick_rounds(
            stream,
            problem,
            ("streamk", 2, 2),
            (pick, sk, "stream-K"),
            |i| match i {
                0 => Ok(ours(gemm, &mut c)?),
                1 => Ok(ours(sk_gemm, &mut c)?),
                _ => baseline(&mut base_c),
            },
            |[p, s, _]| format!("; pick/stream-K {:.3}", p / s),
        )?;
    }
    if let (Some(rounds), false) = (rounds_of("DECODE_RULE"), profile) {
        let rule_rel = match (rule_cfg == pick, pick_only) {
            (true, _) => rel,
            (false, true) => compare(loaded(kernels, device, rule_cfg)?, &mut c)?,
            (false, false) => timed
                .iter()
                .find(|t| t.0 == rule_cfg)
                .map_or(f64::NAN, |t| t.2),
        };
        let [gemm, rule_gemm] = loaded_pair((kernels, device), [pick, rule_cfg])?;
        pick_rounds(
            stream,
            problem,
            ("rule", rounds, 1),
            (pick, rule_cfg, "rule"),
            |i| match i {
                0 => Ok(ours(gemm, &mut c)?),
                1 => Ok(ours(rule_gemm, &mut c)?),
                _ => baseline(&mut base_c),
            },
            |_| format!(" (rel {rule_rel:.1e})"),
        )?;
    }
    // `DECODE_L2`: the pick and the baseline after the clear and after a clean read.
    if let (Some(rounds), false, Some(clean)) = (rounds_of("DECODE_L2"), profile, clean) {
        let Some(gemm) = kernels.get(&pick) else {
            return Err(CheckError::Gemm(GemmError::Operands(
                "the L2 rounds: not loaded".into(),
            )));
        };
        for round in 1..=rounds {
            let mut pair = |before: Before<'_, CheckError>| {
                medians_ms_interleaved::<CheckError>(stream, 2, GAP_ITERS, before, 2, |i| match i {
                    0 => Ok(ours(gemm, &mut c)?),
                    _ => baseline(&mut base_c),
                })
            };
            let dirty = pair(Before::ColdL2)?;
            let read = pair(Before::Run(&mut *clean))?;
            println!(
                "  l2 {m}x{n}x{} {} round {round}: after the clear ours {:.2} base {:.2} µs \
                 ({:.3}); after a clean read ours {:.2} base {:.2} µs ({:.3}) {}",
                problem.k,
                problem.input.name(),
                dirty[0] * 1e3,
                dirty[1] * 1e3,
                dirty[1] / dirty[0],
                read[0] * 1e3,
                read[1] * 1e3,
                read[1] / read[0],
                pick.name()
            );
        }
    }
    Ok(Row {
        base: [base1, base2],
        ours: [ours1, ours2],
        rule,
        base0,
        pick,
        rel,
        failed,
    })
}

/// The kernels of `configs`, each loaded where it is not yet ([`loaded`]).
fn loaded_pair<'a>(
    (kernels, device): (&'a mut HashMap<GemmConfig, Gemm>, &Device),
    configs: [GemmConfig; 2],
) -> Result<[&'a Gemm; 2], CheckError> {
    for cfg in configs {
        loaded(kernels, device, cfg)?;
    }
    let kernels = &*kernels;
    match configs.map(|c| kernels.get(&c)) {
        [Some(a), Some(b)] => Ok([a, b]),
        _ => Err(CheckError::Gemm(GemmError::Operands(
            "a kernel loaded is missing".into(),
        ))),
    }
}

/// `rounds` rounds of the pick, `other` and the baseline, their runs interleaved (cold, [`ITERS`]
/// each after `warmup` untimed ones): `run(0)` runs the pick, `run(1)` `other`, `run(2)` the
/// baseline. Each round on a `label` line: the baseline's µs, the pick's and `other`'s (named
/// `other_label`) each with the baseline's time over theirs, then `tail` of the three times.
fn pick_rounds(
    stream: &Arc<CudaStream>,
    problem: &TuneProblem,
    (label, rounds, warmup): (&str, usize, usize),
    (pick, other, other_label): (GemmConfig, GemmConfig, &str),
    mut run: impl FnMut(usize) -> Result<(), CheckError>,
    tail: impl Fn([f64; 3]) -> String,
) -> Result<(), CheckError> {
    for round in 1..=rounds {
        let ms = medians_ms_interleaved::<CheckError>(
            stream,
            warmup,
            ITERS,
            Before::ColdL2,
            3,
            &mut run,
        )?;
        let [p, o, b] = [ms[0], ms[1], ms[2]];
        println!(
            "  {label} {}x{}x{} {} round {round}: baseline {:.2} µs, pick {:.2} µs ({:.3}) {}, \
             {other_label} {:.2} µs ({:.3}) {}{}",
            problem.m,
            problem.n,
            problem.k,
            problem.input.name(),
            b * 1e3,
            p * 1e3,
            b / p,
            pick.name(),
            o * 1e3,
            b / o,
            other.name(),
            tail([p, o, b])
        );
    }
    Ok(())
}

/// One call [`gap`] times: the pick's or the baseline's.
type Run<'a> = &'a mut dyn FnMut() -> Result<(), CheckError>;

/// Runs of each call in [`gap`]'s timings and in each of `DECODE_L2`'s.
const GAP_ITERS: usize = 60;

/// The rounds the environment variable `var` asks for (`DECODE_RULE`, `DECODE_L2`): its
/// number, 3 where it is set but not a number; `None` where it is unset.
fn rounds_of(var: &str) -> Option<usize> {
    std::env::var(var).ok().map(|v| v.parse().unwrap_or(3))
}

/// `DECODE_L2`'s work before each timed run ([`Before::Run`]): cuBLAS's GEMV over a
/// 16384x8192 bf16 matrix, the 256 MiB of [`Before::ColdL2`]'s clear ([`L2_FLUSH_BYTES`])
/// read instead of written (32 KiB written): the timed run finds an L2 of clean lines, none of
/// its own inputs among them, where after the clear it finds the clear's dirty lines and
/// writes them back as its weight comes in.
struct CleanRead {
    w: CudaSlice<bf16>,
    x: CudaSlice<bf16>,
    y: CudaSlice<bf16>,
}

impl CleanRead {
    const N: usize = 16384;
    const K: usize = L2_FLUSH_BYTES / 2 / CleanRead::N;

    fn new(stream: &Arc<CudaStream>) -> Result<CleanRead, CheckError> {
        Ok(CleanRead {
            w: stream.alloc_zeros(CleanRead::N * CleanRead::K)?,
            x: stream.alloc_zeros(CleanRead::K)?,
            y: stream.alloc_zeros(CleanRead::N)?,
        })
    }

    fn run(&mut self, blas: &CudaBlas) -> Result<(), CheckError> {
        let cfg = blas_config(1, CleanRead::N, CleanRead::K, bf16::ONE, bf16::ZERO);
        // SAFETY: w, x and y hold N*K, K and N elements, as the configuration says.
        unsafe { blas.gemm(cfg, &self.w, &self.x, &mut self.y) }?;
        Ok(())
    }
}

/// Where a row's time outside the kernels goes (`DECODE_GAP`): the pick (`ours`) and the
/// baseline timed cold with their runs interleaved ([`median_ms_interleaved`] after [`Before::ColdL2`], 60 each:
/// the table's way without the order and drift between two medians), and back to back without
/// a clear ([`mean_ms_back_to_back`]: no dirty lines of the clear to write back and no idle
/// GPU before the launch, the weight partly left in L2 by the run before), each with the
/// baseline's time over ours.
fn gap(
    stream: &Arc<CudaStream>,
    problem: &TuneProblem,
    (ours, base): (Run<'_>, Run<'_>),
) -> Result<(), CheckError> {
    let [o, b] =
        median_ms_interleaved::<CheckError, 2>(stream, 2, GAP_ITERS, Before::ColdL2, [ours, base])?;
    let o2 = mean_ms_back_to_back::<CheckError>(stream, 3, GAP_ITERS, |_| ours())?;
    let b2 = mean_ms_back_to_back::<CheckError>(stream, 3, GAP_ITERS, |_| base())?;
    println!(
        "  gap {}x{}x{} {}: cold interleaved ours {:.2} base {:.2} µs ({:.3}); back to back ours \
         {:.2} base {:.2} µs ({:.3})",
        problem.m,
        problem.n,
        problem.k,
        problem.input.name(),
        o * 1e3,
        b * 1e3,
        b / o,
        o2 * 1e3,
        b2 * 1e3,
        b2 / o2
    );
    Ok(())
}

/// The candidates of `problem` the row times: [`candidates`], or with `DECODE_PICK`
/// (`MxNxK=name,...`) at a shape it names only the candidates it names there (what ncu
/// profiles; a shape named twice keeps both, `rule` names the rule's configuration).
fn row_candidates(problem: &TuneProblem, sms: u32) -> Vec<GemmConfig> {
    let shape = format!("{}x{}x{}=", problem.m, problem.n, problem.k);
    let picks: Vec<String> = std::env::var("DECODE_PICK")
        .unwrap_or_default()
        .split(',')
        .filter_map(|e| e.strip_prefix(&shape).map(str::to_string))
        .collect();
    let rule = problem.rule(sms).name();
    let named = |name: &str| {
        picks.is_empty()
            || picks
                .iter()
                .any(|p| p == name || (p == "rule" && name == rule))
    };
    // `DECODE_SKIP=part,...`: no candidate whose name holds one of them (a family whose checks
    // failed, kept out of the table).
    let skip = std::env::var("DECODE_SKIP").unwrap_or_default();
    let skipped = |name: &str| skip.split(',').any(|s| !s.is_empty() && name.contains(s));
    candidates(problem, sms)
        .into_iter()
        .filter(|c| named(&c.name()) && !skipped(&c.name()))
        .collect()
}

/// Whether the table keeps the row of `dtype` at `m x n x k`: `DECODE_SHAPE`, `DECODE_DTYPE`
/// and `DECODE_M` (comma-separated lists) each keep theirs.
fn wanted_row(dtype: ScalarType, (m, n, k): (usize, usize, usize)) -> bool {
    let keep =
        |var: &str, v: &str| std::env::var(var).map_or(true, |x| x.split(',').any(|x| x == v));
    keep("DECODE_SHAPE", &format!("{m}x{n}x{k}"))
        && keep("DECODE_DTYPE", dtype.name())
        && keep("DECODE_M", &m.to_string())
}

/// Loads each of `configs` not in `kernels` yet, on as many threads as the host has (each
/// kernel's PTX built and its module loaded once, before the table times anything; with the
/// driver's lazy loading the JIT may still run at a kernel's first launch); one that fails to
/// load is left for the row to report.
fn preload(kernels: &mut HashMap<GemmConfig, Gemm>, device: &Device, configs: Vec<GemmConfig>) {
    let mut todo: Vec<GemmConfig> = Vec::new();
    for c in configs {
        if !kernels.contains_key(&c) && !todo.contains(&c) {
            todo.push(c);
        }
    }
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads.min(todo.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&cfg) = todo.get(i) else { break };
                    if let Ok(g) = Gemm::new(device, cfg) {
                        done.lock().map(|mut d| d.push((cfg, g))).ok();
                    }
                }
            });
        }
    });
    let loaded = done.into_inner().unwrap_or_default();
    println!(
        "preloaded {} of {} kernels on {threads} threads in {:.1} s",
        loaded.len(),
        todo.len(),
        started.elapsed().as_secs_f64()
    );
    kernels.extend(loaded);
}

/// A weight matrix `[n, k]` of the row's type.
enum Weight {
    Bf16(DeviceTensor<bf16>),
    E4m3(DeviceTensor<E4m3>),
}

/// The row of `m` tokens times `w`: cuBLAS bf16 or cuBLASLt FP8 fast against ours.
fn weight_row(
    ctx: (&mut HashMap<GemmConfig, Gemm>, &Device, &Arc<CudaStream>),
    (blas, lt): (&CudaBlas, &LtFp8),
    (w, scales): (&Weight, &[DeviceTensor<f32>; 2]),
    m: usize,
    clean: Option<&mut CleanRead>,
) -> Result<Row, CheckError> {
    let mut clean_run = clean.map(|r| move || r.run(blas));
    let clean = clean_run
        .as_mut()
        .map(|f| f as &mut dyn FnMut() -> Result<(), CheckError>);
    let stream = ctx.2.clone();
    let stream = &stream;
    match w {
        Weight::Bf16(w) => {
            let (n, k) = (w.desc().shape[0], w.desc().shape[1]);
            let hx: Vec<bf16> = random_values(m * k, (m * 31 + n) as u64)
                .into_iter()
                .map(bf16::from_f32)
                .collect();
            let x = DeviceTensor::from_host(stream, &hx, vec![m, k])?;
            let problem = TuneProblem::new(m, n, k, ScalarType::Bf16, ScalarType::Bf16);
            let baseline = |d: &mut CudaSlice<bf16>| -> Result<(), CheckError> {
                // SAFETY: A, B and C hold m*k, n*k and m*n elements, as the configuration says.
                unsafe {
                    blas.gemm(
                        blas_config(m, n, k, bf16::ONE, bf16::ZERO),
                        w.slice(),
                        x.slice(),
                        d,
                    )
                }?;
                Ok(())
            };
            row(
                ctx,
                &problem,
                baseline,
                |g, c| g.run(stream, &x, w, c, None),
                clean,
            )
        }
        Weight::E4m3(w) => {
            let (n, k) = (w.desc().shape[0], w.desc().shape[1]);
            let hx: Vec<E4m3> = random_values(m * k, (m * 31 + n) as u64)
                .into_iter()
                .map(|x| E4m3::from_f32(x * check::FP8_RANGE))
                .collect();
            let x = DeviceTensor::from_host(stream, &hx, vec![m, k])?;
            let problem = TuneProblem::new(m, n, k, ScalarType::E4m3, ScalarType::Bf16);
            let [sa, sb] = scales;
            let baseline = |d: &mut CudaSlice<bf16>| -> Result<(), CheckError> {
                let (x, w, sa, sb) = (x.slice(), w.slice(), sa.slice(), sb.slice());
                lt.matmul((m, n, k), x, w, sa, sb, d, Accum::Fast)?;
                Ok(())
            };
            row(
                ctx,
                &problem,
                baseline,
                |g, c| {
                    let scales = Fp8Scales::per_tensor([sa, sb]);
                    g.run_fp8(stream, &x, w, c, scales, &Fp8Epilogue::NONE)
                },
                clean,
            )
        }
    }
}

/// Prints one row of the table (or its error): µs to 0.01, the ratios (baseline µs / ours µs,
/// from the unrounded times) to 0.001, so a row within 0.5 % of 1.0 reads as above or below it.
fn print_row(
    model: &str,
    dtype: &str,
    (m, n, k): (usize, usize, usize),
    r: Result<Row, CheckError>,
) {
    match r {
        Ok(r) => println!(
            "| {model} | {m}x{n}x{k} | {dtype} | {:.2} | {:.2} | {:.3} | {:.2} | {:.2} | {:.3} | {:.2} | {} | {:.1e} | {} |",
            r.base[0] * 1e3,
            r.ours[0] * 1e3,
            r.base[0] / r.ours[0],
            r.base[1] * 1e3,
            r.ours[1] * 1e3,
            r.base[1] / r.ours[1],
            r.base0 / r.rule,
            r.pick.name(),
            r.rel,
            match r.failed.len() {
                0 => "0".to_string(),
                _ => format!("FAIL {}", r.failed.join(", ")),
            }
        ),
        Err(e) => println!("| {model} | {m}x{n}x{k} | {dtype} | error: {e} | | | | | | | | | |"),
    }
}

/// The decode paths' checks: each prints PASS or FAIL.
fn checks(
    (kernels, device, stream): (&mut HashMap<GemmConfig, Gemm>, &Device, &Arc<CudaStream>),
    blas: &CudaBlas,
    lt: &LtFp8,
) {
    let sms = device.attributes().sm_count;
    // `DECODE_CHECK_ONLY=decode-widths`: only the unswapped decode widths, the swapped tiles
    // narrower than M, the CTA pairs and the clusters along N; `=pairs`, the CTA pairs alone,
    // `=clusters` the clusters along N alone (what the sanitizer runs on those paths).
    let only = std::env::var("DECODE_CHECK_ONLY").unwrap_or_default();
    let (only_pairs, only_clusters) = (only == "pairs", only == "clusters");
    let only_fixup = only == "fixup";
    let only_stream = only == "stream-k";
    let only_widths =
        only == "decode-widths" || only_pairs || only_clusters || only_fixup || only_stream;
    let wanted = |&(c, (m, _, _)): &(GemmConfig, (usize, usize, usize))| {
        if only_stream {
            c.stream_k
        } else if only_fixup {
            c.split_fixup
        } else if only_pairs {
            c.cluster_m == 2
        } else if only_clusters {
            c.cluster_n > 1
        } else {
            !only_widths
                || (!c.swap_ab && c.bn % 64 != 0)
                || (c.swap_ab && (c.bn as usize) < m)
                || c.cluster_size() > 1
        }
    };
    let bf = GemmConfig::large();
    let fixup = |c: GemmConfig| GemmConfig {
        split_fixup: true,
        ..c
    };
    let sk = |c: GemmConfig| GemmConfig {
        stream_k: true,
        ..c
    };
    let odd = GemmConfig {
        n_even: false,
        ..bf
    };
    let unswapped = |bn, split_k| {
        GemmConfig {
            bn,
            split_k,
            tma_store: false,
            ..bf
        }
        .deepest()
    };
    let bf16_checks = [
        (bf.swapped(16, 1), (1, 1000, 520)),
        (bf.swapped(16, 1), (13, 4104, 1000)),
        (bf.swapped(64, 1), (64, 6144, 4096)),
        (fixup(bf.swapped(64, 4)), (64, 4096, 4096)),
        (fixup(bf.swapped(32, 8)), (16, 1000, 2000)),
        (fixup(bf.swapped(128, 4)), (128, 4096, 4096)),
        (fixup(bf.swapped(16, 7)), (1, 2112, 7168)),
        (fixup(unswapped(128, 4)), (128, 4096, 4096)),
        (fixup(unswapped(64, 3)), (70, 1000, 1000)),
        // The unswapped narrow tiles (the weight's rows 16 or 32 to a tile) and the swapped
        // 64-wide tile at M = 128 (two token tiles of each weight tile).
        (bf.decode_tile(32, 1, false), (64, 4096, 7168)),
        (bf.decode_tile(16, 1, false), (70, 1000, 520)),
        (fixup(bf.decode_tile(32, 2, false)), (128, 2112, 7168)),
        (fixup(bf.swapped(64, 2)), (128, 4096, 4096)),
        (bf.swapped(64, 1), (100, 1000, 1000)),
        (bf.decode_tile(48, 1, false), (64, 6144, 4096)),
        (bf.decode_tile(56, 1, false), (128, 7000, 2048)),
        (
            bf.decode_tile(32, 1, false)
                .stages_up_to(GemmConfig::MAX_STAGES),
            (128, 4096, 4096),
        ),
        (bf.decode_pingpong(32), (64, 4096, 7168)),
        // Ping-pong decode tiles in CTA pairs sharing the weight, edges in M and N.
        (bf.decode_pair(64), (128, 4096, 4096)),
        (bf.decode_pair(32), (100, 2112, 7168)),
        (bf.decode_pair(112), (128, 7000, 2048)),
        // The same pairs with the reduction split (cuBLAS's layout at 128x2112x7168), summed
        // by a second launch or in the kernel; at K = 520 (9 k-tiles) the fourth part has none.
        (bf.decode_pair_split(96, 3, false), (128, 2112, 7168)),
        (bf.decode_pair_split(96, 3, true), (100, 2112, 7168)),
        (bf.decode_pair_split(64, 2, true), (128, 2112, 7168)),
        (
            GemmConfig {
                n_even: false,
                ..bf
            }
            .decode_pair_split(48, 4, true),
            (77, 1001, 520),
        ),
        // The decode table's splits in one launch (session 17): the swapped 64-wide tile in 4
        // parts at 64x2112x7168 (the table's pick there was its second-launch form), the
        // 16-wide one in 2 and 4 parts at M = 1 and 13, the split pair 96 wide in 3.
        (fixup(bf.swapped(64, 4)), (64, 2112, 7168)),
        (fixup(bf.swapped(16, 2)), (1, 4096, 4096)),
        (fixup(bf.swapped(16, 4)), (13, 6144, 4096)),
        (bf.decode_pair_split(96, 3, true), (128, 2112, 7168)),
        // Clusters along N sharing the tokens' tile: 33 clusters of 4 at N = 2112, edges in M
        // and N (N = 2000 in 16-wide tiles: the last cluster's last three CTAs lie past N),
        // an odd N.
        (bf.decode_cluster(16, 4), (128, 2112, 7168)),
        (bf.decode_cluster(24, 2), (100, 2000, 1000)),
        (bf.decode_cluster(16, 4), (128, 2000, 520)),
        (bf.decode_cluster(32, 4), (128, 4096, 4096)),
        (
            GemmConfig {
                n_even: false,
                ..bf
            }
            .decode_cluster(24, 4),
            (77, 1001, 520),
        ),
        // Stream-K: swapped at M = 1 (17 tiles of 112 k-tiles over the SMs: each tile in
        // parts of 7 or 8 CTAs), 13 and 64, an odd N and a K padded to a multiple of 8
        // (1001), unswapped 64 wide and 128 wide at N = 57344 (448 tiles over 132 CTAs: a CTA's
        // range spans 3 or more tiles, the middle ones whole), and an odd N unswapped.
        (sk(bf.swapped(16, 1)), (1, 2112, 7168)),
        (sk(odd.swapped(16, 1)), (13, 1001, 1001)),
        (sk(bf.swapped(64, 1)), (64, 4096, 4096)),
        (sk(bf.swapped(32, 1)), (16, 6144, 4096)),
        (sk(bf.decode_tile(64, 1, false)), (128, 4096, 4096)),
        (sk(bf.decode_tile(128, 1, false)), (128, 57344, 8192)),
        (sk(odd.decode_tile(48, 1, false)), (77, 1001, 520)),
    ];
    for (i, (cfg, shape)) in bf16_checks.into_iter().enumerate() {
        if !wanted(&(cfg, shape)) {
            continue;
        }
        let (m, n, k) = shape;
        match check::check_config(device, stream, blas, cfg, shape, 500 + i as u64) {
            Ok(r) => println!(
                "check {} {m}x{n}x{k}: rel {:.2e}, {} unwritten {}",
                cfg.name(),
                r.rel_error,
                r.unwritten,
                if r.passed() { "PASS" } else { "FAIL" }
            ),
            Err(e) => println!("check {} {m}x{n}x{k}: FAIL {e}", cfg.name()),
        }
    }
    let (e4m3, out) = (ScalarType::E4m3, ScalarType::Bf16);
    let fp8 = |m, n| GemmConfig::fp8(m, n, sms, e4m3, out);
    let fp8_checks = [
        (fp8(16, 2112).swapped(16, 1), (16, 2112, 7168)),
        (fp8(64, 7168).swapped(64, 1), (64, 7168, 2048)),
        (fixup(fp8(64, 7168).swapped(64, 8)), (64, 7168, 16384)),
        (fixup(fp8(128, 2112).swapped(128, 4)), (128, 2112, 7168)),
        (fixup(fp8(128, 2112).swapped(128, 7)), (100, 2112, 7168)),
        (fp8(64, 4096).decode_tile(32, 1, false), (64, 4096, 7168)),
        (
            fixup(fp8(128, 2112).decode_tile(16, 2, false)),
            (100, 2112, 7168),
        ),
        (fixup(fp8(128, 4096).swapped(64, 2)), (128, 4096, 7168)),
        (fp8(128, 7168).decode_tile(56, 1, false), (128, 7168, 2048)),
        (fp8(64, 6144).decode_tile(48, 1, false), (100, 6100, 4096)),
        (fp8(64, 2112).decode_pingpong(16), (50, 2112, 7168)),
        (fp8(128, 7168).decode_pair(112), (128, 7168, 2048)),
        (fp8(128, 6144).decode_pair(96), (120, 6100, 4096)),
        (
            fp8(128, 2112).decode_pair_split(96, 3, false),
            (128, 2112, 7168),
        ),
        (
            fp8(128, 2112).decode_pair_split(64, 2, true),
            (120, 2112, 7168),
        ),
        (fp8(128, 2112).decode_cluster(16, 4), (128, 2112, 7168)),
        (fp8(128, 2112).decode_cluster(24, 2), (100, 2112, 7168)),
        (fp8(128, 7168).decode_cluster(56, 4), (128, 7000, 2048)),
        (
            fixup(GemmConfig {
                bn: 128,
                split_k: 4,
                tma_store: false,
                ..fp8(64, 4096)
            })
            .deepest(),
            (64, 4096, 7168),
        ),
        // The e4m3 splits in one launch where the decode table picked the second launch
        // (session 16b: 1x4096x4096 in 2 parts, 16x4096x4096 in 4), an M that is no multiple
        // of 16 in 8 parts, and the split pair 96 wide in 3 summed in the kernel.
        (fixup(fp8(1, 4096).swapped(16, 2)), (1, 4096, 4096)),
        (fixup(fp8(16, 4096).swapped(16, 4)), (16, 4096, 4096)),
        (fixup(fp8(16, 4096).swapped(16, 8)), (13, 4096, 2048)),
        (fixup(fp8(64, 4096).swapped(64, 4)), (64, 4096, 4096)),
        (
            fp8(128, 2112).decode_pair_split(96, 3, true),
            (128, 2112, 7168),
        ),
        // Stream-K: swapped at M = 1, 16 and 64, unswapped at 100 x 2112 (edges in M) and 128
        // wide at N = 57344 (a CTA's range over 3 or more tiles), edges in M and N (cuBLASLt
        // takes no odd N).
        (sk(fp8(1, 2112).swapped(16, 1)), (1, 2112, 7168)),
        (sk(fp8(16, 4096).swapped(16, 1)), (16, 4096, 4096)),
        (sk(fp8(64, 7168).swapped(64, 1)), (64, 7168, 2048)),
        (
            sk(fp8(128, 2112).decode_tile(32, 1, false)),
            (100, 2112, 7168),
        ),
        (
            sk(fp8(128, 57344).decode_tile(128, 1, false)),
            (128, 57344, 8192),
        ),
        (sk(fp8(32, 1000).swapped(32, 1)), (29, 1000, 2048)),
    ];
    check::print_checks(
        "ours",
        |g, shape, seed| check::check_fp8(stream, lt, g, shape, seed),
        |cfg, (m, n, k), r| {
            format!(
                "check {} {m}x{n}x{k}: rel {:.2e} vs cuBLASLt promoted (cuBLASLt fast {:.2e})",
                cfg.name(),
                r.rel_error,
                r.cublas_rel_error
            )
        },
        (kernels, device),
        fp8_checks.into_iter().filter(wanted),
    );
    // How many clusters along N the GPU holds at once (a GPC holds whole clusters only).
    for cfg in [bf.decode_cluster(16, 2), bf.decode_cluster(16, 4)] {
        match loaded(kernels, device, cfg) {
            Ok(g) => println!(
                "occupancy {}: {} clusters of {} at once",
                cfg.name(),
                g.max_active_clusters(),
                cfg.cluster_size()
            ),
            Err(e) => println!("occupancy {}: FAIL {e}", cfg.name()),
        }
    }
    // The fixup sums the parts in the order the second launch does: the same bits (the split
    // CTA pairs' too, with the pairs' checks).
    let same_bits = [
        (bf.swapped(64, 4), (64, 4096, 4096)),
        (bf.decode_pair_split(96, 3, false), (128, 2112, 7168)),
    ];
    // Stream-K's parts summed in k order: the same bits run to run (a fresh C, poisoned,
    // each time).
    let twice = [
        (sk(bf.swapped(16, 1)), (1, 2112, 7168)),
        (sk(bf.decode_tile(128, 1, false)), (128, 57344, 8192)),
        (sk(bf.swapped(64, 1)), (64, 4096, 4096)),
    ];
    for (cfg, shape) in twice {
        if only_widths && !only_stream {
            continue;
        }
        let (m, n, k) = shape;
        let name = format!(
            "check stream-K twice, bit for bit, {} {m}x{n}x{k}",
            cfg.name()
        );
        same_bits_check((kernels, device, stream), &name, (shape, 93), [cfg, cfg]);
    }
    for (cfg, shape) in same_bits {
        if only_widths && !(only_pairs && cfg.cluster_m == 2) && !only_fixup {
            continue;
        }
        let (m, n, k) = shape;
        let name = format!(
            "check fixup == second launch, bit for bit, {} {m}x{n}x{k}",
            cfg.name()
        );
        same_bits_check(
            (kernels, device, stream),
            &name,
            (shape, 91),
            [cfg, fixup(cfg)],
        );
    }
}

/// Runs `configs` one after the other on one problem of `shape` (random data from `seed`), C
/// poisoned before each run, and prints `name` with PASS where both wrote the same bits and no
/// NaN (every element written).
fn same_bits_check(
    (kernels, device, stream): (&mut HashMap<GemmConfig, Gemm>, &Device, &Arc<CudaStream>),
    name: &str,
    (shape, seed): ((usize, usize, usize), u64),
    configs: [GemmConfig; 2],
) {
    let same = (|| -> Result<bool, CheckError> {
        let mut p = check::Problem::new(stream, shape, seed)?;
        let mut outs = Vec::new();
        for cfg in configs {
            let gemm = loaded(kernels, device, cfg)?;
            poison(stream, &mut p.c)?;
            gemm.run(stream, &p.a, &p.b, &mut p.c, None)?;
            outs.push(p.c.to_host(stream)?);
        }
        Ok(outs[0]
            .iter()
            .zip(&outs[1])
            .all(|(x, y)| x.to_bits() == y.to_bits() && !x.is_nan()))
    })();
    match same {
        Ok(true) => println!("{name}: PASS"),
        Ok(false) => println!("{name}: FAIL"),
        Err(e) => println!("{name}: FAIL {e}"),
    }
}

fn main() {
    let Some((device, stream, lt, blas)) = check::baselines_or_skip() else {
        return;
    };
    let mut kernels: HashMap<GemmConfig, Gemm> = HashMap::new();
    // `DECODE_NO_CHECKS`: the table alone (each timed candidate is still compared with the
    // baseline's C first).
    let no_checks = std::env::var_os("DECODE_NO_CHECKS").is_some();
    if std::env::var_os("DECODE_PROFILE").is_none() && !no_checks {
        checks((&mut kernels, &device, &stream), &blas, &lt);
    }
    if std::env::var_os("DECODE_CHECK_ONLY").is_some() {
        return;
    }
    println!(
        "\n| model | MxNxK | dtype | baseline µs | ours µs | ratio run 1 | baseline µs run 2 | ours µs run 2 | ratio run 2 | rule's ratio | our config | rel err vs baseline | candidates failed |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let started = std::time::Instant::now();
    let block: Vec<f32> = random_values(BLOCK, 17);
    // Each row group: a label, the weight's (n, k), and the token counts M it is timed at.
    let rows: Vec<(&str, (usize, usize), Vec<usize>)> =
        match std::env::var_os("DECODE_LARGE").is_some() {
            true => BENCH_SHAPES
                .iter()
                .map(|&(m, n, k)| ("bench", (n, k), vec![m]))
                .collect(),
            false => MODELS
                .iter()
                .flat_map(|&(model, shapes)| {
                    shapes
                        .iter()
                        .map(move |&nk| (model, nk, DECODE_MS.to_vec()))
                })
                .collect(),
        };
    let dtypes = [ScalarType::Bf16, ScalarType::E4m3];
    let sms = device.attributes().sm_count;
    let every: Vec<GemmConfig> = dtypes
        .iter()
        .flat_map(|&dtype| {
            rows.iter().flat_map(move |(_, (n, k), ms)| {
                ms.iter()
                    .filter(move |&&m| wanted_row(dtype, (m, *n, *k)))
                    .map(move |&m| TuneProblem::new(m, *n, *k, dtype, ScalarType::Bf16))
            })
        })
        .flat_map(|p| row_candidates(&p, sms))
        .collect();
    preload(&mut kernels, &device, every);
    for dtype in dtypes {
        let r = (|| -> Result<(), CheckError> {
            let scales = [
                DeviceTensor::from_host(&stream, &check::FP8_SCALES[..1], vec![1])?,
                DeviceTensor::from_host(&stream, &check::FP8_SCALES[1..], vec![1])?,
            ];
            let mut clean = match rounds_of("DECODE_L2") {
                Some(_) => Some(CleanRead::new(&stream)?),
                None => None,
            };
            for (model, (n, k), ms) in &rows {
                let (n, k) = (*n, *k);
                let wanted = |m: usize| wanted_row(dtype, (m, n, k));
                if !ms.iter().copied().any(wanted) {
                    continue;
                }
                let w = match dtype {
                    ScalarType::Bf16 => {
                        let b: Vec<bf16> = block.iter().map(|&x| bf16::from_f32(x)).collect();
                        let b = stream.clone_htod(&b)?;
                        Weight::Bf16(DeviceTensor::new(
                            repeated(&stream, &b, n * k)?,
                            vec![n, k],
                        )?)
                    }
                    _ => {
                        let b: Vec<E4m3> = block
                            .iter()
                            .map(|&x| E4m3::from_f32(x * check::FP8_RANGE))
                            .collect();
                        let b = stream.clone_htod(&b)?;
                        Weight::E4m3(DeviceTensor::new(
                            repeated(&stream, &b, n * k)?,
                            vec![n, k],
                        )?)
                    }
                };
                for &m in ms {
                    if !wanted(m) {
                        continue;
                    }
                    let ctx = (&mut kernels, &device, &stream);
                    let r = weight_row(ctx, (&blas, &lt), (&w, &scales), m, clean.as_mut());
                    print_row(model, dtype.name(), (m, n, k), r);
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            println!("{}: error {e}", dtype.name());
        }
    }
    println!(
        "device: {}, {:.0} s",
        device.attributes().name,
        started.elapsed().as_secs_f64()
    );
}
