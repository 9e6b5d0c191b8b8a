//! A GEMM with a fused epilogue, written with the public API only: `C = GELU(A·Bᵀ + bias) +
//! residual` in bf16 ([`gemm_bias_gelu_residual`]), and a second epilogue that scales rows,
//! keeps the pre-activation as an extra output and applies GELU (erf)
//! ([`gemm_rows_store_gelu`]). Both are the library's Hopper GEMM (its roles, rings,
//! tile scheduler and mainloop) with an [`Epilogue`] of the kernel parts.
//!
//! On a GPU it checks both against a reference (cuBLAS's f32 `A·Bᵀ` of the same inputs, the
//! epilogue applied on the host) on fresh random data with the outputs poisoned first, at edge
//! shapes and at 4096³ and 8192³. `benches/gemm_epilogue.rs` times such epilogues against the
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
use ptxkit::runtime::{Arg, Device, DeviceTensor, JitOptions};
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
    }
    Ok(all)
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
            for kernel in [
                super::gemm_bias_gelu_residual(cfg, false).unwrap(),
                super::gemm_bias_gelu_residual(cfg, true).unwrap(),
                super::gemm_rows_store_gelu(cfg).unwrap(),
            ] {
                let out = ptxas
                    .assemble(kernel.built.ptx(), Target::Sm90a, &["-v"])
                    .unwrap();
                assert!(out.ok, "{}", out.log);
                assert!(out.log.contains(" 0 bytes spill stores"), "{}", out.log);
            }
        }
    }
}
