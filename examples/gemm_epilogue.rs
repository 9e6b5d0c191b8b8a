//! A GEMM with a fused epilogue, written with the public API only: `C = GELU(A·Bᵀ + bias) +
//! residual` in bf16 ([`gemm_bias_gelu_residual`]), and a second epilogue that scales rows,
//! keeps the pre-activation as an extra output and applies GELU (erf)
//! ([`gemm_rows_store_gelu`]), and `C += GELU(A·Bᵀ + bias)` in place, C holding the residual
//! before the call and the TMA store's reduction adding to it in L2 ([`gemm_bias_gelu_in_place`]).
//! All are the library's Hopper GEMM (its roles, rings, tile scheduler and mainloop) with an
//! [`Epilogue`] of the kernel parts.
//!
//! On a GPU it checks both against a reference (cuBLAS's f32 `A·Bᵀ` of the same inputs, the
//! epilogue applied on the host) on fresh random data with the outputs poisoned first, at edge
//! shapes and at 4096³ and 8192³ (in place, C is the residual, so only the memory around it is
//! poisoned; an element whose sum must move off the residual by more than 2⁻⁶ of it and by
//! more than 2⁻⁶, and does not, counts as unwritten). `benches/gemm_epilogue.rs` times such epilogues against the
//! library's plain GEMM.
//!
//! ```text
//! cargo run --release --example gemm_epilogue            # check (needs an H100/H200)
//! cargo run --release --example gemm_epilogue -- --ptx   # print the fused kernel's PTX
//! cargo run --release --example gemm_epilogue -- --check # edge shapes only
//! ```

use std::process::ExitCode;

use cudarc::cublas::CudaBlas;
use half::bf16;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts};
use ptxkit::library::gemm::check::{self, Problem, f32_reference, random_values, rel_error};
use ptxkit::library::gemm::{GemmConfig, GemmKernel, HopperGemm};
use ptxkit::parts::{Activation, Combine, Epilogue};
use ptxkit::runtime::{Arg, Device, DeviceTensor, JitOptions, TensorMut};
use ptxkit::smem::pipeline::sync::WaitMode;

/// `C = GELU(A·Bᵀ + bias) + residual`: A `[m, k]`, B `[n, k]`, C and the residual `[m, n]`,
/// the bias `[n]`, all bf16. With the TMA-store epilogue the residual is a staged input: each
/// consumer loads its block by TMA while its main loop runs, and the epilogue reads it from
/// shared memory (on epilogue warps, [`GemmConfig::epilogue_warps`], each warp loads it slab by
/// slab into a buffer of its own; `direct`: they read it from global memory into registers
/// instead, [`HopperGemm::staged_input_direct`], launched with the residual twice); with the
/// register epilogue it is read from global memory.
fn gemm_bias_gelu_residual(cfg: GemmConfig, direct: bool) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new("gemm_bias_gelu_residual", Target::Sm90a);
    let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let (m, n) = (gemm.m(), gemm.n());
    let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
    let epilogue = Epilogue::new()
        .cols(&bias, Combine::Add)
        .activation(Activation::GeluTanh);
    let epilogue = if cfg.tma_store && direct {
        epilogue.residual(&gemm.staged_input_direct(&mut k, "residual")?)
    } else if cfg.tma_store {
        epilogue.residual(&gemm.staged_input(&mut k, "residual")?)
    } else {
        let opts = TensorOpts::default().align(16);
        epilogue.residual(&k.tensor::<ty::Bf16>("residual", [m, n], opts)?)
    };
    gemm.with_epilogue(epilogue).build(k)
}

/// `C += GELU(A·Bᵀ + bias)` in place ([`Epilogue::accumulate`]): C holds the residual before the
/// call, and the TMA store adds each box of the epilogue's bf16 output to it in L2 (the
/// residual stream's update of a transformer block, `x += MLP(x)`): no residual is loaded, C's
/// staged boxes are reduced instead of stored. Its numerics are torch eager's: the function's
/// output rounded to bf16, then the add rounded to bf16.
fn gemm_bias_gelu_in_place(cfg: GemmConfig) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new("gemm_bias_gelu_in_place", Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let bias = k.tensor::<ty::Bf16>("bias", [gemm.n()], TensorOpts::default())?;
    let epilogue = Epilogue::new()
        .cols(&bias, Combine::Add)
        .activation(Activation::GeluTanh)
        .accumulate();
    gemm.with_epilogue(epilogue).build(k)
}

/// `pre = s[row]·A·Bᵀ` (stored, f32), `C = GELU_erf(pre)`: a row scale, an extra output (the
/// pre-activation a backward pass keeps) and an erf GELU.
fn gemm_rows_store_gelu(cfg: GemmConfig) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new("gemm_rows_store_gelu", Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let (m, n) = (gemm.m(), gemm.n());
    let scale = k.tensor::<ty::F32>("row_scale", [m], TensorOpts::default())?;
    let pre = k.tensor::<ty::F32>("pre", [m, n], TensorOpts::default().align(16))?;
    let epilogue = Epilogue::new()
        .rows(&scale, Combine::Mul)
        .store(&pre)
        .activation(Activation::GeluErf);
    gemm.with_epilogue(epilogue).build(k)
}

fn bf16_tensor(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    shape: Vec<usize>,
    seed: u64,
) -> Result<(DeviceTensor<bf16>, Vec<f64>), Box<dyn std::error::Error>> {
    let host: Vec<bf16> = random_values(shape.iter().product(), seed)
        .into_iter()
        .map(bf16::from_f32)
        .collect();
    let exact = host.iter().map(|x| f64::from(x.to_f32())).collect();
    Ok((DeviceTensor::from_host(stream, &host, shape)?, exact))
}

/// Launches `kernel` on `p`'s A and B, `c` and the epilogue's `extra` operands.
fn launch<'a>(
    device: &Device,
    kernel: GemmKernel,
    p: &'a Problem,
    c: &'a mut DeviceTensor<bf16>,
    extra: Vec<Arg<'a>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let loaded = kernel.built.load(device, &JitOptions::default())?;
    let mut args = vec![Arg::tensor(&p.a), Arg::tensor(&p.b), Arg::tensor_mut(c)];
    args.extend(extra);
    loaded.launch(&device.default_stream(), &mut args)?;
    Ok(())
}

/// bf16 values widened to f64.
fn widen(v: &[bf16]) -> Vec<f64> {
    v.iter().map(|x| f64::from(x.to_f32())).collect()
}

/// Checks both fused GEMMs at `shape`, with the consumers sharing each tile and taking turns,
/// against cuBLAS's f32 product with the epilogue on the host; returns whether all passed.
fn check_shape(
    device: &Device,
    blas: &CudaBlas,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<bool, Box<dyn std::error::Error>> {
    let (m, n, _) = shape;
    let stream = device.default_stream();
    let cfg = check::config_for(device, m, n);
    let p = Problem::new(&stream, shape, seed)?;
    let af: Vec<f32> = p.a.to_host(&stream)?.iter().map(|x| x.to_f32()).collect();
    let bf: Vec<f32> = p.b.to_host(&stream)?.iter().map(|x| x.to_f32()).collect();
    let acc = f32_reference(&stream, blas, shape, &af, &bf)?;
    let poisoned = || vec![bf16::from_bits(0xFFFF); m * n];

    // C = GELU(acc + bias) + residual.
    let (bias, bias_h) = bf16_tensor(&stream, vec![n], seed + 1)?;
    let (res, res_h) = bf16_tensor(&stream, vec![m, n], seed + 2)?;
    let s_h: Vec<f32> = random_values(m, seed + 3);
    let s = DeviceTensor::from_host(&stream, &s_h, vec![m])?;
    let mut all = true;
    // The consumers sharing each tile (the plain GEMM's pick), taking turns at tiles
    // (ping-pong), and handing each tile to epilogue warps (the pick for a long epilogue).
    // The epilogue warps also with the residual read from global memory into registers
    // (`direct`); three epilogue warps share both blocks, two take one each.
    let two = cfg.with_epilogue_warps().with_epilogue_warp_count(2);
    let schedules = [
        ("cooperative", cfg, false),
        ("ping-pong", cfg.with_pingpong(), false),
        ("epi-warps", cfg.with_epilogue_warps(), false),
        ("epi-direct", cfg.with_epilogue_warps(), true),
        ("epi-warps2", two, false),
        ("epi2-direct", two, true),
    ];
    for (schedule, cfg, direct) in schedules {
        // Epilogue warps apply the ops to the accumulator rounded to C's bf16.
        let acc: Vec<f64> = match cfg.epilogue_warps {
            true => acc.iter().map(|&x| f64::from(bf16::from_f32(x))).collect(),
            false => acc.iter().map(|&x| f64::from(x)).collect(),
        };
        let mut c = DeviceTensor::from_host(&stream, &poisoned(), vec![m, n])?;
        let mut extra = vec![Arg::tensor(&bias), Arg::tensor(&res)];
        if direct {
            extra.push(Arg::tensor(&res));
        }
        launch(
            device,
            gemm_bias_gelu_residual(cfg, direct)?,
            &p,
            &mut c,
            extra,
        )?;
        let got = widen(&c.to_host(&stream)?);
        let want: Vec<f64> = (0..m * n)
            .map(|i| Activation::GeluTanh.reference(acc[i] + bias_h[i % n]) + res_h[i])
            .collect();
        let e1 = rel_error(&got, &want);
        let unwritten = got.iter().filter(|x| x.is_nan()).count();

        // pre = s[row]·acc, C = GELU_erf(pre), with the register epilogue (on epilogue warps,
        // with theirs).
        let cfg2 = match cfg.epilogue_warps {
            true => cfg,
            false => GemmConfig {
                tma_store: false,
                ..cfg
            },
        };
        let mut pre = DeviceTensor::from_host(&stream, &vec![f32::NAN; m * n], vec![m, n])?;
        let mut c2 = DeviceTensor::from_host(&stream, &poisoned(), vec![m, n])?;
        let extra = vec![Arg::tensor(&s), Arg::tensor_mut(&mut pre)];
        launch(device, gemm_rows_store_gelu(cfg2)?, &p, &mut c2, extra)?;
        let pre_want: Vec<f64> = (0..m * n).map(|i| f64::from(s_h[i / n]) * acc[i]).collect();
        let pre_got: Vec<f64> = pre
            .to_host(&stream)?
            .iter()
            .map(|&x| f64::from(x))
            .collect();
        let c2_want: Vec<f64> = (0..m * n)
            .map(|i| Activation::GeluErf.reference(pre_want[i]))
            .collect();
        let c2_got = widen(&c2.to_host(&stream)?);
        let (e2, e3) = (rel_error(&pre_got, &pre_want), rel_error(&c2_got, &c2_want));
        let unwritten2 = c2_got.iter().chain(&pre_got).filter(|x| x.is_nan()).count();
        // bf16 outputs round to 2^-9 relative; the f32 `pre` is as exact as the accumulation
        // (on epilogue warps, as its bf16 rounding: where the kernel's f32 sum and cuBLAS's lie
        // on two sides of a rounding boundary, one element differs by a last bit, 2^-8).
        let pre_tol = if cfg.epilogue_warps { 1e-3 } else { 1e-4 };
        let ok = e1 < 1e-2 && e3 < 1e-2 && e2 < pre_tol && unwritten == 0 && unwritten2 == 0;
        println!(
            "check {m:>5}x{n:>5}x{:>5} {schedule:>11}: bias+gelu+residual rel {e1:.2e}; \
             rows+store+gelu_erf pre {e2:.2e} c {e3:.2e}; unwritten {} -> {}",
            shape.2,
            unwritten + unwritten2,
            if ok { "ok" } else { "FAIL" }
        );
        all &= ok;
        if !direct {
            let ok = check_in_place(device, cfg, &p, (&bias, &bias_h), &acc, seed + 4)?;
            println!("check {m:>5}x{n:>5}x{:>5} {schedule:>11}: {ok}", shape.2);
            all &= ok.ok;
        }
    }
    Ok(all)
}

/// What [`check_in_place`] found.
struct InPlace {
    ok: bool,
    rel: f64,
    /// Elements whose sum must differ from the residual (by more than 2⁻⁶ of it, two bf16
    /// steps and more, and by more than 2⁻⁶: the tails of GELU's `tanh.approx`, values of
    /// 10⁻⁶, move a residual near 0 on the host and not on the GPU) and do not: the kernel did
    /// not add to them.
    not_added: usize,
    /// Of how many that must change.
    must_change: usize,
    /// Poisoned elements around C changed.
    outside: usize,
}

impl std::fmt::Display for InPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bias+gelu in place (C += ..) rel {:.2e}; not added {} of {} that must change; \
             poison around C touched {} -> {}",
            self.rel,
            self.not_added,
            self.must_change,
            self.outside,
            if self.ok { "ok" } else { "FAIL" }
        )
    }
}

/// `C += GELU(acc + bias)` in place on `cfg`'s schedule ([`gemm_bias_gelu_in_place`]): C starts
/// as a fresh random residual inside a larger allocation whose elements around it are poisoned
/// (the kernel must add to every element of C and touch nothing else), against the host's
/// torch-eager numerics: `y = bf16(GELU(acc + bias))`, then `bf16(f32(y) + f32(residual))`
/// (`acc` as the schedule's epilogue sees it).
fn check_in_place(
    device: &Device,
    cfg: GemmConfig,
    p: &Problem,
    (bias, bias_h): (&DeviceTensor<bf16>, &[f64]),
    acc: &[f64],
    seed: u64,
) -> Result<InPlace, Box<dyn std::error::Error>> {
    let stream = device.default_stream();
    let (m, n) = (p.shape.0, p.shape.1);
    // 512 poisoned elements (1 KiB) before C and after it: C's first element stays 16-byte
    // aligned, as its tensor map needs.
    const GUARD: usize = 512;
    let res: Vec<bf16> = random_values(m * n, seed)
        .into_iter()
        .map(bf16::from_f32)
        .collect();
    let poison = bf16::from_bits(0xFFFF);
    let mut host = vec![poison; GUARD];
    host.extend_from_slice(&res);
    host.extend(std::iter::repeat_n(poison, GUARD));
    let mut all = DeviceTensor::from_host(&stream, &host, vec![host.len()])?;
    {
        let kernel = gemm_bias_gelu_in_place(cfg)?;
        let loaded = kernel.built.load(device, &JitOptions::default())?;
        let mut view = all.slice_mut().slice_mut(GUARD..GUARD + m * n);
        let c = TensorMut::view(&mut view, vec![m, n])?;
        let mut args = vec![Arg::tensor(&p.a), Arg::tensor(&p.b), Arg::from(c)];
        args.push(Arg::tensor(bias));
        loaded.launch(&stream, &mut args)?;
    }
    let out = all.to_host(&stream)?;
    let outside = out[..GUARD]
        .iter()
        .chain(&out[GUARD + m * n..])
        .filter(|x| x.to_bits() != 0xFFFF)
        .count();
    let got = &out[GUARD..GUARD + m * n];
    let want: Vec<f64> = (0..m * n)
        .map(|i| {
            let y = bf16::from_f64(Activation::GeluTanh.reference(acc[i] + bias_h[i % n]));
            f64::from(bf16::from_f32(y.to_f32() + res[i].to_f32()).to_f32())
        })
        .collect();
    let rel = rel_error(&widen(got), &want);
    let (mut not_added, mut must_change) = (0, 0);
    for ((g, r), w) in got.iter().zip(&res).zip(&want) {
        let r64 = f64::from(r.to_f32());
        if (w - r64).abs() > r64.abs().max(1.0) / 64.0 {
            must_change += 1;
            not_added += usize::from(g.to_bits() == r.to_bits());
        }
    }
    Ok(InPlace {
        ok: rel < 1e-2 && not_added == 0 && outside == 0 && must_change > 0,
        rel,
        not_added,
        must_change,
        outside,
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--ptx") || !ptxkit::runtime::driver_available() {
        return match gemm_bias_gelu_residual(GemmConfig::large(), false) {
            Ok(g) => {
                print!("{}", g.built.ptx());
                if !ptxkit::runtime::driver_available() {
                    eprintln!("gemm_epilogue: no CUDA driver here; printed the PTX only");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gemm_epilogue: {e}");
                ExitCode::from(2)
            }
        };
    }
    match run(args.iter().any(|a| a == "--check")) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("gemm_epilogue: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(check_only: bool) -> Result<bool, Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let blas = CudaBlas::new(device.default_stream())?;
    println!("device: {}", device.attributes().name);
    let mut ok = true;
    let edges = [
        (300, 520, 136),
        (1000, 1000, 520),
        (257, 384, 200),
        (128, 256, 64),
        // 288 tiles: two or three a CTA, so the epilogue warps take tiles, edge tiles too.
        (3000, 3000, 200),
    ];
    let big = [(4096, 4096, 4096), (8192, 8192, 8192)];
    let shapes: Vec<_> = match check_only {
        true => edges.to_vec(),
        false => edges.iter().chain(&big).copied().collect(),
    };
    for (i, &shape) in shapes.iter().enumerate() {
        ok &= check_shape(&device, &blas, shape, 500 + 10 * i as u64)?;
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::Target;

    /// `cargo test` holds both fused kernels to ptxas, with the TMA-store and the register
    /// epilogue: they assemble, without spills (the example runs them only with a GPU).
    #[test]
    fn the_kernels_assemble_without_spills() {
        use ptxkit::library::gemm::GemmConfig;
        let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() else {
            return;
        };
        let large = GemmConfig::large();
        let register = GemmConfig {
            tma_store: false,
            ..large
        };
        for cfg in [
            large,
            register,
            large.with_pingpong(),
            register.with_pingpong(),
            large.with_epilogue_warps(),
            large.with_epilogue_warps().with_epilogue_warp_count(2),
        ] {
            let mut kernels = vec![
                super::gemm_bias_gelu_residual(cfg, false).unwrap(),
                super::gemm_bias_gelu_residual(cfg, true).unwrap(),
                super::gemm_rows_store_gelu(cfg).unwrap(),
            ];
            // In place only where C is stored by TMA (the register epilogue refuses it).
            match super::gemm_bias_gelu_in_place(cfg) {
                Ok(kernel) => kernels.push(kernel),
                Err(e) => assert!(
                    !cfg.tma_store && e.to_string().contains("Accumulate"),
                    "{e}"
                ),
            }
            for kernel in kernels {
                let out = ptxas
                    .assemble(kernel.built.ptx(), Target::Sm90a, &["-v"])
                    .unwrap();
                assert!(out.ok, "{}", out.log);
                assert!(out.log.contains(" 0 bytes spill stores"), "{}", out.log);
            }
        }
    }
}
