//! Fused GEMM epilogues against the library's plain GEMM in one process (H100/H200; skipped with
//! a message elsewhere): each epilogue ([`ptxkit::parts::Epilogue`] on `HopperGemm`) alone and
//! composed, with the consumers sharing each tile (the plain GEMM's configuration) and taking
//! turns at tiles (ping-pong), each with the residual read from global memory (prefetched into
//! L2 at the tile's start) and staged (`HopperGemm::staged_input`: loaded by TMA into the C
//! staging block under the main loop), and on epilogue warps (`GemmConfig::epilogue_warps`, the
//! residual from global memory, staged slab by slab, or staged for the consumers' own last
//! tile and read by the epilogue warps from global memory into registers:
//! `HopperGemm::staged_input_direct`; staged and paced: `EpiloguePace`; staged on two warps, the
//! default before three: `GemmConfig::epilogue_warp_count`), at 4096³ and 8192³,
//! the plain GEMM timed beside each (their launches interleaved: `median_ms_interleaved`),
//! three rounds; a row per timing with the fused / plain ratio, and first a row per paced
//! kernel comparing its output's bits with the unpaced one's on a poisoned C, and a row for
//! bias + GELU + residual on the consumers and on epilogue warps (staged) comparing its bits with
//! the same ops unfolded (identity maps between them: no fold of `apply_ops`). Then, on
//! epilogue warps ("epilogue warps, in place"), bias + GELU (tanh) and bias + ReLU with the
//! residual added in place (`Epilogue::accumulate`: C holds the residual, the TMA store's
//! reduction adds the output to it in L2; no residual loaded), with a bits row against
//! "epilogue warps, staged" on C filled with the residual (the same sums rounded once more:
//! the elements that differ, and those more than one bf16 step apart). Timed, C is not
//! filled with the residual again before each launch: the reduction's time does not depend on
//! what C holds (its values only grow by the outputs, far from bf16's range).
//!
//! ```text
//! cargo bench --bench gemm_epilogue
//! GEMM_EPILOGUE_SIZES=4096 cargo bench --bench gemm_epilogue   # only 4096³ (a profiler's run)
//! GEMM_EPILOGUE_SIZES=4096x4096x2048 cargo bench --bench gemm_epilogue   # one M x N x K shape
//! GEMM_EPILOGUE_SCHEDULES="epilogue warps, staged" cargo bench --bench gemm_epilogue   # one schedule
//! GEMM_EPILOGUE_ROUNDS=5 cargo bench --bench gemm_epilogue   # rounds (3 unless told)
//! ```

use half::bf16;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts};
use ptxkit::library::gemm::check::{self, CheckError, Problem, random_values};
use ptxkit::library::gemm::{EpiloguePace, Gemm, GemmConfig, GemmKernel, HopperGemm};
use ptxkit::parts::{Activation, Combine, Epilogue};
use ptxkit::runtime::{Arg, Before, DeviceTensor, JitOptions, median_ms_interleaved};
use ptxkit::smem::pipeline::sync::WaitMode;

/// The epilogues timed: a name, and which of bias, activation and residual it applies.
const VARIANTS: &[(&str, bool, Option<Activation>, bool)] = &[
    ("none", false, None, false),
    ("bias", true, None, false),
    ("relu", false, Some(Activation::Relu), false),
    ("gelu_tanh", false, Some(Activation::GeluTanh), false),
    ("residual", false, None, true),
    (
        "bias+gelu_tanh+residual",
        true,
        Some(Activation::GeluTanh),
        true,
    ),
    ("bias+relu+residual", true, Some(Activation::Relu), true),
];

/// The GEMM of `cfg` with a bias `[n]` and a residual `[m, n]` declared (both always, so every
/// variant launches with the same arguments) and the epilogue of `bias`, `act`, `residual`,
/// the residual staged or read from global memory; `direct`: staged, and read directly by the
/// epilogue warps (a further parameter, the residual again), one band ahead unless `no_ahead`
/// (`Epilogue::without_prefetch`); epilogue warps paced as `pace` says; `unfolded`: the
/// activation between two identity maps, so that no two ops meet in one of `apply_ops`' folds
/// (the ops one by one, what the folds must give the bits of); `in_place`: the residual not
/// read but added in place (`Epilogue::accumulate`, C holding it; the residual parameter is
/// still declared, unused).
fn fused(
    name: &str,
    (cfg, pace): (GemmConfig, EpiloguePace),
    (staged, direct, no_ahead): (bool, bool, bool),
    (bias_on, act, residual_on): (bool, Option<Activation>, bool),
    unfolded: bool,
    in_place: bool,
) -> Result<GemmKernel, KernelError> {
    // A kernel name of its own for each epilogue and schedule (what a profiler's filter picks).
    let turns = match (cfg.pingpong, cfg.epilogue_warps, cfg.epilogue_warp_count) {
        (true, ..) => "_pingpong",
        (_, true, 2) => "_epiwarps2",
        (_, true, _) => "_epiwarps",
        _ => "",
    };
    let read = match (staged, direct, no_ahead) {
        (true, true, true) => "_direct_noahead",
        (true, true, false) => "_direct",
        (true, false, _) => "_staged",
        _ => "",
    };
    let paced = match pace {
        EpiloguePace::Off => String::new(),
        EpiloguePace::Fixed(ns) => format!("_pace{ns}"),
        EpiloguePace::MainLoop(percent) => format!("_loop{percent}"),
    };
    let unfold = if unfolded { "_unfolded" } else { "" };
    let kernel = format!(
        "gemm_epi_{}{turns}{read}{paced}{unfold}",
        name.replace(['+', ' '], "_")
    );
    let mut k = KernelBuilder::new(&kernel, Target::Sm90a);
    let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let (m, n) = (gemm.m(), gemm.n());
    let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
    let mut epi = match no_ahead {
        true => Epilogue::new().without_prefetch(),
        false => Epilogue::new(),
    };
    if bias_on {
        epi = epi.cols(&bias, Combine::Add);
    }
    let same = |_: &mut KernelBuilder, v, _: &_| Ok(v);
    if let (Some(a), true) = (act, unfolded) {
        epi = epi.map(same).activation(a).map(same);
    } else if let Some(a) = act {
        epi = epi.activation(a);
    }
    if staged && residual_on && direct {
        epi = epi.residual(&gemm.staged_input_direct(&mut k, "residual")?);
    } else if staged && residual_on {
        epi = epi.residual(&gemm.staged_input(&mut k, "residual")?);
    } else {
        let res = k.tensor::<ty::Bf16>("residual", [m, n], TensorOpts::default().align(16))?;
        if residual_on && in_place {
            epi = epi.accumulate();
        } else if residual_on {
            epi = epi.residual(&res);
        }
    }
    gemm.with_epilogue(epi).with_epilogue_pace(pace).build(k)
}

/// A fused kernel's arguments: A, B, C, the bias and the residual (twice for `direct`: its
/// global copy too).
fn fused_args<'a>(
    [a, b]: [&'a DeviceTensor<bf16>; 2],
    c: &'a mut DeviceTensor<bf16>,
    [bias, res]: [&'a DeviceTensor<bf16>; 2],
    direct: bool,
) -> Vec<Arg<'a>> {
    let mut args = vec![
        Arg::tensor(a),
        Arg::tensor(b),
        Arg::tensor_mut(c),
        Arg::tensor(bias),
        Arg::tensor(res),
    ];
    if direct {
        args.push(Arg::tensor(res));
    }
    args
}

fn main() -> Result<(), CheckError> {
    let Some(device) = ptxkit::selftest::device_or_skip("GPU benchmarks skipped") else {
        return Ok(());
    };
    let stream = device.default_stream();
    println!("device: {}", device.attributes().name);
    println!(
        "| shape | consumers | epilogue | round | fused TFLOP/s | plain TFLOP/s | fused / plain |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    // GEMM_EPILOGUE_SIZES: sizes `s` (s³) or shapes `MxNxK`, comma-separated.
    let sizes = std::env::var("GEMM_EPILOGUE_SIZES").unwrap_or_else(|_| "4096,8192".into());
    let shapes: Vec<(usize, usize, usize)> = sizes
        .split(',')
        .filter_map(|s| {
            let d: Vec<usize> = s.split('x').filter_map(|x| x.trim().parse().ok()).collect();
            match d[..] {
                [s] => Some((s, s, s)),
                [m, n, k] => Some((m, n, k)),
                _ => None,
            }
        })
        .collect();
    for &shape in &shapes {
        let (m, n, k) = shape;
        let cfg = check::config_for(&device, m, n);
        let mut p = Problem::new(&stream, shape, 3)?;
        let host = |len: usize, seed| -> Vec<bf16> {
            random_values(len, seed)
                .into_iter()
                .map(bf16::from_f32)
                .collect()
        };
        let bias = DeviceTensor::from_host(&stream, &host(n, 4), vec![n])?;
        let res = DeviceTensor::from_host(&stream, &host(m * n, 5), vec![m, n])?;
        let mut c = DeviceTensor::new(stream.alloc_zeros::<bf16>(m * n)?, vec![m, n])?;
        let plain = Gemm::new(&device, cfg)?;
        let flops = 2.0 * (m * n * k) as f64;
        // The consumer schedules, the residual read from global memory or staged (the staged
        // schedules time only the epilogues with a residual).
        let o = EpiloguePace::Off;
        let pingpong = (cfg.with_pingpong(), o);
        let ew = (cfg.with_epilogue_warps(), o);
        // Two epilogue warps, a warp a consumer (the default before session 20's ew3), alone
        // and paced (the pace to the main loop takes two).
        let ew2 = (ew.0.with_epilogue_warp_count(2), o);
        let paced = |pace| (ew2.0, pace);
        let schedules = [
            ("cooperative", (cfg, o), (false, false, false)),
            ("cooperative, staged", (cfg, o), (true, false, false)),
            ("ping-pong", pingpong, (false, false, false)),
            ("ping-pong, staged", pingpong, (true, false, false)),
            ("epilogue warps", ew, (false, false, false)),
            ("epilogue warps, staged", ew, (true, false, false)),
            ("epilogue warps, staged, direct", ew, (true, true, false)),
            (
                "epilogue warps, staged, direct, no read-ahead",
                ew,
                (true, true, true),
            ),
            // The epilogue warps paced (EpiloguePace; unpaced above).
            (
                "epilogue warps, staged, paced 800 ns",
                (ew.0, EpiloguePace::Fixed(800)),
                (true, false, false),
            ),
            ("2 epilogue warps, staged", ew2, (true, false, false)),
            (
                "2 epilogue warps, staged, paced 800 ns",
                paced(EpiloguePace::Fixed(800)),
                (true, false, false),
            ),
            (
                "2 epilogue warps, staged, paced to 75 %",
                paced(EpiloguePace::MainLoop(75)),
                (true, false, false),
            ),
        ];
        // GEMM_EPILOGUE_SCHEDULES: only the schedules named (a `;`-separated list, exact).
        let only = std::env::var("GEMM_EPILOGUE_SCHEDULES").ok();
        let wanted = |s: &str| {
            only.as_ref()
                .is_none_or(|o| o.split(';').any(|x| x.trim() == s))
        };
        let mut kernels = Vec::new();
        for (schedule, cfg, staged) in schedules.into_iter().filter(|(s, ..)| wanted(s)) {
            for &(name, b, a, r) in VARIANTS.iter().filter(|v| v.3 || !staged.0) {
                let built = fused(name, cfg, staged, (b, a, r), false, false).map_err(|e| {
                    CheckError::Gemm(ptxkit::library::gemm::GemmError::Operands(e.to_string()))
                })?;
                let loaded = built.built.load(&device, &JitOptions::default())?;
                kernels.push((schedule, name, staged.1 && r, loaded));
            }
        }
        // The residual added in place by the store's reduction, on epilogue warps (the
        // default's schedule): named as the staged rows' epilogue, " in place".
        let in_place = "epilogue warps, in place";
        if wanted(in_place) {
            for (name, act) in [
                ("bias+gelu_tanh+residual in place", Activation::GeluTanh),
                ("bias+relu+residual in place", Activation::Relu),
            ] {
                let built = fused(
                    name,
                    ew,
                    (false, false, false),
                    (true, Some(act), true),
                    false,
                    true,
                )
                .map_err(|e| {
                    CheckError::Gemm(ptxkit::library::gemm::GemmError::Operands(e.to_string()))
                })?;
                let loaded = built.built.load(&device, &JitOptions::default())?;
                kernels.push((in_place, name, false, loaded));
            }
        }
        // The GELU epilogue with its ops one by one (no fold), on the consumers and on epilogue
        // warps, staged: its bits are the folded kernel's (a row each below).
        let mut unfolded = Vec::new();
        let unfold = ["cooperative, staged", "epilogue warps, staged"];
        for (schedule, cfg, staged) in schedules
            .into_iter()
            .filter(|(s, ..)| unfold.contains(s) && wanted(s))
        {
            let name = "bias+gelu_tanh+residual";
            let act = Some(Activation::GeluTanh);
            let built = fused(name, cfg, staged, (true, act, true), true, false).map_err(|e| {
                CheckError::Gemm(ptxkit::library::gemm::GemmError::Operands(e.to_string()))
            })?;
            let loaded = built.built.load(&device, &JitOptions::default())?;
            unfolded.push((schedule, name, loaded));
        }
        // Each kernel once on a poisoned C: a paced schedule only moves work in time, so it
        // must give the same bits as "epilogue warps, staged" (the example checks that one
        // against the host); printed as a row each.
        let mut reference: Vec<(&str, Vec<u16>)> = Vec::new();
        let poison = vec![bf16::from_bits(0xFFFF); m * n];
        let bits_of = |kernel: &ptxkit::runtime::LoadedKernel,
                       direct: bool|
         -> Result<Vec<u16>, CheckError> {
            let mut out = DeviceTensor::from_host(&stream, &poison, vec![m, n])?;
            let mut args = fused_args([&p.a, &p.b], &mut out, [&bias, &res], direct);
            kernel.launch(&stream, &mut args)?;
            Ok(out.to_host(&stream)?.iter().map(|x| x.to_bits()).collect())
        };
        for (schedule, name, kernel) in &unfolded {
            let Some((.., folded)) = kernels.iter().find(|(s, n, ..)| s == schedule && n == name)
            else {
                continue;
            };
            let (want, got) = (bits_of(kernel, false)?, bits_of(folded, false)?);
            let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            let unwritten = got.iter().filter(|&&b| b == 0xFFFF).count();
            println!(
                "| {m}x{n}x{k} | {schedule} | {name} | bits | {differ} differ from the ops \
                 unfolded, unwritten {unwritten} |"
            );
        }
        let res_host = host(m * n, 5);
        for (schedule, name, direct, kernel) in &kernels {
            if *schedule == in_place {
                // C holds the residual; against the staged kernel's bits (its sum rounded once).
                let mut out = DeviceTensor::from_host(&stream, &res_host, vec![m, n])?;
                let mut args = fused_args([&p.a, &p.b], &mut out, [&bias, &res], false);
                kernel.launch(&stream, &mut args)?;
                let got = out.to_host(&stream)?;
                let staged = name.trim_end_matches(" in place");
                let Some((_, want)) = reference.iter().find(|(r, _)| *r == staged) else {
                    continue;
                };
                let step = |w: u16| f32::from(bf16::from_bits(w)).abs() / 128.0;
                let (mut differ, mut far) = (0, 0);
                for (g, &w) in got.iter().zip(want) {
                    if g.to_bits() != w {
                        differ += 1;
                        let d = (g.to_f32() - f32::from(bf16::from_bits(w))).abs();
                        far += usize::from(d > step(w) * 1.01 || d.is_nan());
                    }
                }
                println!(
                    "| {m}x{n}x{k} | {schedule} | {name} | bits | {differ} differ from \
                     \"epilogue warps, staged\" (double rounding), {far} by more than a bf16 \
                     step |"
                );
                continue;
            }
            let mut out = DeviceTensor::from_host(&stream, &poison, vec![m, n])?;
            let mut args = fused_args([&p.a, &p.b], &mut out, [&bias, &res], *direct);
            kernel.launch(&stream, &mut args)?;
            let bits: Vec<u16> = out.to_host(&stream)?.iter().map(|x| x.to_bits()).collect();
            let unwritten = bits.iter().filter(|&&b| b == 0xFFFF).count();
            if *schedule == "epilogue warps, staged" {
                reference.push((name, bits));
                println!("| {m}x{n}x{k} | {schedule} | {name} | bits | unwritten {unwritten} |");
                continue;
            }
            let Some((_, want)) = reference.iter().find(|(r, _)| r == name) else {
                continue;
            };
            let differ = bits.iter().zip(want).filter(|(a, b)| a != b).count();
            println!(
                "| {m}x{n}x{k} | {schedule} | {name} | bits | {differ} differ from \
                 \"epilogue warps, staged\", unwritten {unwritten} |"
            );
        }
        let rounds = std::env::var("GEMM_EPILOGUE_ROUNDS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(3);
        for round in 1..=rounds {
            for (schedule, name, direct, kernel) in &kernels {
                // The fused and the plain launches interleaved, so a drift of the clock (the
                // H200 at its power limit) touches both alike.
                let mut fused_run = || -> Result<(), CheckError> {
                    let mut args = fused_args([&p.a, &p.b], &mut c, [&bias, &res], *direct);
                    kernel.launch(&stream, &mut args)?;
                    Ok(())
                };
                let (a, b, plain_c) = (&p.a, &p.b, &mut p.c);
                let mut plain_run = || Ok(plain.run(&stream, a, b, plain_c, None)?);
                let [ours, base] = median_ms_interleaved::<CheckError, 2>(
                    &stream,
                    3,
                    20,
                    Before::Nothing,
                    [&mut fused_run, &mut plain_run],
                )?;
                let (f, b) = (flops / ours / 1e9, flops / base / 1e9);
                println!(
                    "| {m}x{n}x{k} | {schedule} | {name} | {round} | {f:.0} | {b:.0} | {:.3} |",
                    f / b
                );
            }
        }
    }
    Ok(())
}
