//! GPU checking and timing for the GEMM against cuBLAS in the same process: fresh random inputs,
//! poisoned outputs, relative Frobenius error against an f32 cuBLAS reference (for FP8 inputs,
//! cuBLASLt FP8 with promoted accumulation and an f32 D: [`check_fp8`]), and median timings with
//! CUDA events. Used by `examples/gemm_hopper.rs`, `benches/gemm.rs`, `benches/gemm_fp8.rs` and
//! `ptxkit selftest`.

use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm as _, GemmConfig as BlasConfig, sys::cublasOperation_t};
use half::bf16;

use crate::runtime::cuda::{CudaSlice, CudaStream};
use crate::runtime::{Device, DeviceTensor, E4m3, E5m2, Element};
use ptx_isa::ScalarType;

use super::cublaslt::{Accum, Fp8Elem, LtError, LtFp8};
use super::{Fp8Epilogue, Fp8Scales, Gemm, GemmConfig, GemmError, OutScale, OutScaleArg, Scaling};

/// Deterministic xorshift random numbers in [-1, 1), for inputs.
pub fn random_values(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// One problem's result.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// `(m, n, k)`.
    pub shape: (usize, usize, usize),
    /// ‖ours − reference‖ / ‖reference‖ (Frobenius), the reference computed in f32 by cuBLAS.
    pub rel_error: f64,
    /// Elements of C never written (still the poison value) or NaN.
    pub unwritten: usize,
    /// ‖cuBLAS bf16 − reference‖ / ‖reference‖, for scale.
    pub cublas_rel_error: f64,
}

impl CheckResult {
    /// bf16 outputs round to 8 significant bits (relative 2^-9 per element); 1e-2 leaves room
    /// for the f32 accumulation order (the project's method note puts bf16 between 1e-3 and 1e-2).
    pub const TOLERANCE: f64 = 1e-2;

    /// True when every element was written and the error is within [`Self::TOLERANCE`].
    pub fn passed(&self) -> bool {
        self.unwritten == 0 && self.rel_error.is_finite() && self.rel_error <= Self::TOLERANCE
    }
}

/// Errors of the check harness.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The GEMM failed.
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// A driver call failed.
    #[error("CUDA: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    /// cuBLAS failed.
    #[error("cuBLAS: {0}")]
    Blas(#[from] cudarc::cublas::result::CublasError),
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] crate::runtime::RuntimeError),
    /// cuBLASLt (the FP8 reference) failed.
    #[error(transparent)]
    Lt(#[from] LtError),
}

/// Our kernel for `cfg` from `kernels`, built and loaded the first time a benchmark asks for it.
pub fn loaded<'a>(
    kernels: &'a mut std::collections::HashMap<GemmConfig, Gemm>,
    device: &Device,
    cfg: GemmConfig,
) -> Result<&'a Gemm, CheckError> {
    Ok(match kernels.entry(cfg) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => e.insert(Gemm::new(device, cfg)?),
    })
}

/// Checks our kernel (from `kernels`, loaded on `device`) for each `(configuration, shape)` of `checks` with `check`
/// (seed 100 + its index) and prints a line each: `describe`'s account of the result at that
/// shape, its unwritten count and PASS or FAIL; or `{label} {configuration} {m}x{n}x{k}: FAIL`
/// and the error.
pub fn print_checks(
    label: &str,
    mut check: impl FnMut(&Gemm, (usize, usize, usize), u64) -> Result<CheckResult, CheckError>,
    describe: impl Fn(&GemmConfig, (usize, usize, usize), &CheckResult) -> String,
    (kernels, device): (&mut std::collections::HashMap<GemmConfig, Gemm>, &Device),
    checks: impl IntoIterator<Item = (GemmConfig, (usize, usize, usize))>,
) {
    for (i, (cfg, (m, n, k))) in checks.into_iter().enumerate() {
        match loaded(kernels, device, cfg).and_then(|g| check(g, (m, n, k), 100 + i as u64)) {
            Ok(r) => println!(
                "{}, {} unwritten {}",
                describe(&cfg, (m, n, k), &r),
                r.unwritten,
                if r.passed() { "PASS" } else { "FAIL" }
            ),
            Err(e) => println!("{label} {} {m}x{n}x{k}: FAIL {e}", cfg.name()),
        }
    }
}

/// Device 0, its default stream and the baselines of the FP8 and decode benchmarks on it:
/// cuBLASLt FP8 and cuBLAS; `None`, with why printed, where any cannot start.
pub fn baselines_or_skip() -> Option<(Device, Arc<CudaStream>, LtFp8, CudaBlas)> {
    let device = match Device::new(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("GPU benchmarks skipped: {e}");
            return None;
        }
    };
    let stream = device.default_stream();
    match (LtFp8::new(stream.clone()), CudaBlas::new(stream.clone())) {
        (Ok(l), Ok(b)) => Some((device, stream, l, b)),
        (l, b) => {
            eprintln!(
                "GPU benchmarks skipped: cuBLASLt {:?} / cuBLAS {:?}",
                l.err(),
                b.err()
            );
            None
        }
    }
}

/// cuBLAS computing `C = A·Bᵀ` for row-major A `[m, k]`, B `[n, k]`, C `[m, n]`: in column-major
/// terms `Cᵀ = B·Aᵀ`, so B is the transposed first operand.
pub fn blas_config<T>(m: usize, n: usize, k: usize, one: T, zero: T) -> BlasConfig<T> {
    BlasConfig {
        transa: cublasOperation_t::CUBLAS_OP_T,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: one,
        lda: k as i32,
        ldb: k as i32,
        beta: zero,
        ldc: n as i32,
    }
}

/// Device inputs for one problem.
pub struct Problem {
    /// `(m, n, k)`.
    pub shape: (usize, usize, usize),
    /// A `[m, k]`, bf16.
    pub a: DeviceTensor<bf16>,
    /// B `[n, k]`, bf16.
    pub b: DeviceTensor<bf16>,
    /// C `[m, n]`, bf16.
    pub c: DeviceTensor<bf16>,
    a_host: Vec<bf16>,
    b_host: Vec<bf16>,
    scratch: Option<CudaSlice<bf16>>,
    stream: Arc<CudaStream>,
}

impl Problem {
    /// Fresh random A and B (values in [-1, 1)), C allocated.
    pub fn new(
        stream: &Arc<CudaStream>,
        (m, n, k): (usize, usize, usize),
        seed: u64,
    ) -> Result<Problem, CheckError> {
        let a_host: Vec<bf16> = random_values(m * k, seed)
            .into_iter()
            .map(bf16::from_f32)
            .collect();
        let b_host: Vec<bf16> = random_values(n * k, seed ^ 0x5555)
            .into_iter()
            .map(bf16::from_f32)
            .collect();
        let a = DeviceTensor::from_host(stream, &a_host, vec![m, k])?;
        let b = DeviceTensor::from_host(stream, &b_host, vec![n, k])?;
        let c = DeviceTensor::new(stream.alloc_zeros::<bf16>(m * n)?, vec![m, n])?;
        Ok(Problem {
            shape: (m, n, k),
            a,
            b,
            c,
            a_host,
            b_host,
            scratch: None,
            stream: stream.clone(),
        })
    }

    /// cuBLAS's bf16 `C = A·Bᵀ` of this problem into `c` (`m * n` elements).
    fn cublas_into(&self, blas: &CudaBlas, c: &mut CudaSlice<bf16>) -> Result<(), CheckError> {
        let (m, n, k) = self.shape;
        if c.len() != m * n {
            return Err(CheckError::Gemm(GemmError::Operands(format!(
                "a C of {} elements for a {m} x {n} problem",
                c.len()
            ))));
        }
        // SAFETY: A and B hold m*k and n*k elements (made so by `new`), C m*n (checked above),
        // matching the configuration.
        unsafe {
            blas.gemm(
                blas_config(m, n, k, bf16::ONE, bf16::ZERO),
                self.b.slice(),
                self.a.slice(),
                c,
            )
        }?;
        Ok(())
    }
}

/// The f32 reference `A·Bᵀ` of f32 host inputs A `[m, k]` and B `[n, k]`, computed by cuBLAS.
pub fn f32_reference(
    stream: &Arc<CudaStream>,
    blas: &CudaBlas,
    (m, n, k): (usize, usize, usize),
    a: &[f32],
    b: &[f32],
) -> Result<Vec<f32>, CheckError> {
    if a.len() != m * k || b.len() != n * k {
        return Err(CheckError::Gemm(GemmError::Operands(format!(
            "{} and {} host elements for a {m} x {n} x {k} problem",
            a.len(),
            b.len()
        ))));
    }
    let da: CudaSlice<f32> = stream.clone_htod(a)?;
    let db: CudaSlice<f32> = stream.clone_htod(b)?;
    let mut dc: CudaSlice<f32> = stream.alloc_zeros(m * n)?;
    // SAFETY: the slices hold m*k, n*k (checked above) and m*n elements, matching the
    // configuration.
    unsafe { blas.gemm(blas_config(m, n, k, 1.0f32, 0.0f32), &db, &da, &mut dc) }?;
    Ok(stream.clone_dtoh(&dc)?)
}

/// Runs `gemm` on a fresh random problem of `shape` and compares it with cuBLAS.
pub fn check(
    device: &Device,
    stream: &Arc<CudaStream>,
    blas: &CudaBlas,
    gemm: &Gemm,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<CheckResult, CheckError> {
    let (m, n, _) = shape;
    let mut p = Problem::new(stream, shape, seed)?;
    let _ = device;
    // Poison C with NaN (0xFFFF) so unwritten elements show.
    let poison = vec![bf16::from_bits(0xFFFF); m * n];
    stream.memcpy_htod(&poison, p.c.slice_mut())?;
    gemm.run(stream, &p.a, &p.b, &mut p.c, None)?;
    let ours: Vec<bf16> = p.c.to_host(stream)?;

    // Reference: f32 cuBLAS on the same (bf16-rounded) inputs.
    let af: Vec<f32> = p.a_host.iter().map(|x| x.to_f32()).collect();
    let bf: Vec<f32> = p.b_host.iter().map(|x| x.to_f32()).collect();
    let reference = f32_reference(stream, blas, shape, &af, &bf)?;
    let mut dcb: CudaSlice<bf16> = stream.alloc_zeros(m * n)?;
    p.cublas_into(blas, &mut dcb)?;
    let theirs: Vec<bf16> = stream.clone_dtoh(&dcb)?;

    let unwritten = ours.iter().filter(|x| x.is_nan()).count();
    Ok(CheckResult {
        shape,
        rel_error: rel_error(&ours, &reference),
        unwritten,
        cublas_rel_error: rel_error(&theirs, &reference),
    })
}

/// ‖got − reference‖ / ‖reference‖ (Frobenius; the absolute error when the reference is 0).
pub fn rel_error<T: Copy + Into<f64>, R: Copy + Into<f64>>(got: &[T], reference: &[R]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (g, r) in got.iter().zip(reference) {
        let r: f64 = (*r).into();
        let d = (*g).into() - r;
        num += d * d;
        den += r * r;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

/// cuBLAS's bf16 GEMM on `p` (into a scratch C of its own), for timing.
pub fn cublas_bf16(blas: &CudaBlas, p: &mut Problem) -> Result<(), CheckError> {
    let (m, n, _) = p.shape;
    if p.scratch.is_none() {
        p.scratch = Some(p.stream.alloc_zeros::<bf16>(m * n)?);
    }
    let Some(mut c) = p.scratch.take() else {
        return Ok(());
    };
    let done = p.cublas_into(blas, &mut c);
    p.scratch = Some(c);
    done
}

pub use crate::runtime::{Before, median_ms};

/// Our TFLOP/s and cuBLAS's on one problem of `shape`, timed in the same process.
pub fn compare(
    stream: &Arc<CudaStream>,
    blas: &CudaBlas,
    gemm: &Gemm,
    shape: (usize, usize, usize),
    iters: usize,
) -> Result<(f64, f64), CheckError> {
    let (m, n, k) = shape;
    let mut p = Problem::new(stream, shape, 7)?;
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let ours = median_ms::<CheckError>(stream, 3, iters, Before::Nothing, || {
        Ok(gemm.run(stream, &p.a, &p.b, &mut p.c, None)?)
    })?;
    let mut dcb: CudaSlice<bf16> = stream.alloc_zeros(m * n)?;
    let theirs = median_ms::<CheckError>(stream, 3, iters, Before::Nothing, || {
        p.cublas_into(blas, &mut dcb)
    })?;
    Ok((flops / ours / 1e9, flops / theirs / 1e9))
}

/// The configuration for a problem on `device` ([`GemmConfig::for_problem`]).
pub fn config_for(device: &Device, m: usize, n: usize) -> GemmConfig {
    GemmConfig::for_problem(m, n, device.attributes().sm_count)
}

/// The other input, output and epilogue variants of [`GemmConfig::large`] that
/// `examples/gemm_hopper.rs` checks with [`check_config`] on shapes with edges (`tests/gemm_ptx.rs`
/// assembles each and keeps its golden PTX): an f32 C, alpha/beta (with an f32 C and an odd N
/// too), f16 in with f16 and f32 out, a CTA pair with either epilogue, and ping-pong consumers
/// ([`GemmConfig::pingpong`]) with each epilogue and in a pair, and split-K
/// ([`GemmConfig::split_k`]) with an even and an odd N, and swap-AB ([`GemmConfig::swap_ab`]):
/// 16 wide, 32 wide into an f32 C, and 64 wide in 4 parts with an odd N; and split-K's
/// in-kernel fixup ([`GemmConfig::split_fixup`]), 128 wide in 4 parts and swapped 32 wide in 3
/// parts with an odd N; and the unswapped decode widths 32 and 48 (48 also with ping-pong
/// consumers, 16 stages and an odd N, alone and in CTA pairs), and 16 in 2 parts with the
/// fixup and an odd N ([`GemmConfig::decode_tile`]); and clusters along N sharing A's tile
/// ([`GemmConfig::cluster_n`]): 2 CTAs with the TMA-store epilogue, 4 CTAs 24 wide with an odd
/// N ([`GemmConfig::decode_cluster`]).
pub fn variants() -> Vec<GemmConfig> {
    let large = GemmConfig::large();
    vec![
        GemmConfig {
            tma_store: false,
            output: ScalarType::F32,
            ..large
        },
        GemmConfig {
            tma_store: false,
            alpha_beta: true,
            ..large
        },
        GemmConfig {
            tma_store: false,
            alpha_beta: true,
            output: ScalarType::F32,
            n_even: false,
            ..large
        },
        GemmConfig {
            input: ScalarType::F16,
            output: ScalarType::F16,
            ..large
        },
        GemmConfig {
            input: ScalarType::F16,
            output: ScalarType::F32,
            tma_store: false,
            ..large
        },
        GemmConfig {
            cluster_m: 2,
            ..large
        },
        GemmConfig {
            cluster_m: 2,
            tma_store: false,
            n_even: false,
            ..large
        },
        // Ping-pong consumers: the TMA-store epilogue, in a CTA pair, and from registers with an
        // odd N.
        large.with_pingpong(),
        GemmConfig {
            cluster_m: 2,
            ..large
        }
        .with_pingpong(),
        GemmConfig {
            tma_store: false,
            n_even: false,
            ..large
        }
        .with_pingpong(),
        // Split-K in 4 parts (at K = 136 the last part has no k-tile), from registers, an even
        // and an odd N.
        GemmConfig {
            split_k: 4,
            tma_store: false,
            ..large
        }
        .deepest(),
        GemmConfig {
            split_k: 4,
            tma_store: false,
            n_even: false,
            bn: 128,
            ..large
        }
        .deepest(),
        large.swapped(16, 1),
        GemmConfig {
            output: ScalarType::F32,
            ..large
        }
        .swapped(32, 1),
        GemmConfig {
            n_even: false,
            ..large
        }
        .swapped(64, 4),
        // The in-kernel fixup ([`GemmConfig::split_fixup`]), unswapped and swapped.
        GemmConfig {
            split_k: 4,
            split_fixup: true,
            tma_store: false,
            bn: 128,
            ..large
        }
        .deepest(),
        GemmConfig {
            split_fixup: true,
            n_even: false,
            ..large.swapped(32, 3)
        },
        large.decode_tile(32, 1, false),
        large.decode_tile(48, 1, false),
        GemmConfig {
            n_even: false,
            ..large
        }
        .decode_pingpong(48),
        GemmConfig {
            n_even: false,
            ..large
        }
        .decode_pair(48),
        // The pairs with the reduction split, both sums: at K = 136 (3 k-tiles) and 520 (9)
        // the fourth part has none; at M = 300 the last pair's second CTA lies past M.
        GemmConfig {
            n_even: false,
            ..large
        }
        .decode_pair_split(48, 4, false),
        large.decode_pair_split(64, 4, true),
        large.decode_pair_split(96, 3, true),
        GemmConfig {
            split_fixup: true,
            n_even: false,
            ..large.decode_tile(16, 2, false)
        },
        GemmConfig {
            cluster_n: 2,
            ..large
        },
        GemmConfig {
            n_even: false,
            ..large
        }
        .decode_cluster(24, 4),
    ]
}

/// A 16- or 32-bit float element as the host checks hold it: rounded from f32, widened back.
trait HostFloat: Element {
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
}

impl HostFloat for bf16 {
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

impl HostFloat for half::f16 {
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
}

impl HostFloat for f32 {
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f32(self) -> f32 {
        self
    }
}

/// The error for an input/output pair [`Gemm::new`] would have refused.
fn not_a_configuration(input: ScalarType, output: ScalarType) -> CheckError {
    CheckError::Gemm(GemmError::Operands(format!(
        "{} in, {} out: not a GEMM configuration",
        input.name(),
        output.name()
    )))
}

/// One run of [`check_config`]'s GEMM on its f32 host inputs rounded to the element types.
struct TypedRun<'a> {
    stream: &'a Arc<CudaStream>,
    gemm: &'a Gemm,
    shape: (usize, usize, usize),
    a: &'a [f32],
    b: &'a [f32],
    c0: &'a [f32],
    alpha_beta: Option<(f32, f32)>,
}

impl TypedRun<'_> {
    /// A and B of `I`, C of `output`: the result read back as f32.
    fn with_output<I: HostFloat>(&self, output: ScalarType) -> Result<Vec<f32>, CheckError> {
        match output {
            ScalarType::Bf16 => self.run::<I, bf16>(),
            ScalarType::F16 => self.run::<I, half::f16>(),
            ScalarType::F32 => self.run::<I, f32>(),
            o => Err(not_a_configuration(I::DTYPE, o)),
        }
    }

    /// A and B of `I`, C of `O` (filled from `c0` first), the result read back as f32.
    fn run<I: HostFloat, O: HostFloat>(&self) -> Result<Vec<f32>, CheckError> {
        let (stream, (m, n, k)) = (self.stream, self.shape);
        let a: Vec<I> = self.a.iter().map(|&x| I::from_f32(x)).collect();
        let b: Vec<I> = self.b.iter().map(|&x| I::from_f32(x)).collect();
        let c: Vec<O> = self.c0.iter().map(|&x| O::from_f32(x)).collect();
        let a = DeviceTensor::from_host(stream, &a, vec![m, k])?;
        let b = DeviceTensor::from_host(stream, &b, vec![n, k])?;
        let mut c = DeviceTensor::from_host(stream, &c, vec![m, n])?;
        self.gemm.run(stream, &a, &b, &mut c, self.alpha_beta)?;
        Ok(c.to_host(stream)?.into_iter().map(O::to_f32).collect())
    }
}

/// Checks any configuration (input bf16/f16, output bf16/f16/f32, with or without alpha/beta) on
/// a fresh random problem against an f32 cuBLAS reference: C is first filled with random values
/// (read by `beta`) or poison, and every element must come out written and within tolerance.
pub fn check_config(
    device: &Device,
    stream: &Arc<CudaStream>,
    blas: &CudaBlas,
    cfg: super::GemmConfig,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<CheckResult, CheckError> {
    use ptx_isa::ScalarType::{Bf16, F16};
    let gemm = Gemm::new(device, cfg)?;
    let (m, n, k) = shape;
    let round_in = |x: f32| match cfg.input {
        Bf16 => bf16::from_f32(x).to_f32(),
        _ => half::f16::from_f32(x).to_f32(),
    };
    let af: Vec<f32> = random_values(m * k, seed)
        .into_iter()
        .map(round_in)
        .collect();
    let bf: Vec<f32> = random_values(n * k, seed ^ 0x5555)
        .into_iter()
        .map(round_in)
        .collect();
    let c0: Vec<f32> = if cfg.alpha_beta {
        random_values(m * n, seed ^ 0xAAAA)
    } else {
        vec![f32::NAN; m * n]
    };
    let (alpha, beta) = (1.5f32, -0.5f32);
    let ab = cfg.alpha_beta.then_some((alpha, beta));

    let run = TypedRun {
        stream,
        gemm: &gemm,
        shape,
        a: &af,
        b: &bf,
        c0: &c0,
        alpha_beta: ab,
    };
    let ours: Vec<f32> = match cfg.input {
        Bf16 => run.with_output::<bf16>(cfg.output)?,
        F16 => run.with_output::<half::f16>(cfg.output)?,
        i => return Err(not_a_configuration(i, cfg.output)),
    };
    // Reference: f32 cuBLAS of the same (rounded) inputs, then alpha/beta on the host.
    let mut reference = f32_reference(stream, blas, shape, &af, &bf)?;
    if cfg.alpha_beta {
        let round_out = |x: f32| match cfg.output {
            Bf16 => bf16::from_f32(x).to_f32(),
            F16 => half::f16::from_f32(x).to_f32(),
            _ => x,
        };
        for (r, c) in reference.iter_mut().zip(&c0) {
            *r = alpha * *r + beta * round_out(*c);
        }
    }
    let unwritten = ours.iter().filter(|x| x.is_nan()).count();
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (g, r) in ours.iter().zip(&reference) {
        let d = *g as f64 - *r as f64;
        num += d * d;
        den += (*r as f64).powi(2);
    }
    Ok(CheckResult {
        shape,
        rel_error: (num / den.max(f64::MIN_POSITIVE)).sqrt(),
        unwritten,
        cublas_rel_error: f64::NAN,
    })
}

/// The magnitude of the FP8 checks' inputs: uniform in ±200 before rounding to e4m3/e5m2 (most
/// of e4m3's binades below its 448 maximum), with [`FP8_SCALES`] bringing the products back to
/// O(1) per term.
pub const FP8_RANGE: f32 = 200.0;

/// The per-tensor scales `[sa, sb]` of the FP8 checks and benchmarks.
pub const FP8_SCALES: [f32; 2] = [0.01, 0.02];

/// The output scale of the FP8 checks' epilogue ([`CheckEpilogue`]).
pub const CHECK_OUT_SCALE: f32 = 0.75;

/// The epilogue operands an FP8 check passes to a kernel built with them
/// ([`GemmConfig::bias`], [`GemmConfig::out_scale`]): a fresh random bias of N values in ±4
/// (as a bf16 or f32 device tensor; the reference adds the values the kernel reads) and the
/// output scale [`CHECK_OUT_SCALE`] (by value, or in a device tensor of one f32), and what the
/// reference does with them: `s·x + bias[j]` in f32.
pub struct CheckEpilogue {
    bias: Option<(Vec<f32>, CheckBias)>,
    out_scale: Option<(f32, Option<DeviceTensor<f32>>)>,
}

/// The bias on the device, in the kernel's bias type.
enum CheckBias {
    Bf16(DeviceTensor<bf16>),
    F32(DeviceTensor<f32>),
}

impl CheckEpilogue {
    /// The operands for `cfg` (none when it takes none) for a problem of `n` columns.
    pub fn new(
        stream: &Arc<CudaStream>,
        cfg: &GemmConfig,
        n: usize,
        seed: u64,
    ) -> Result<CheckEpilogue, CheckError> {
        let bias = match cfg.bias {
            None => None,
            Some(t) => {
                let values: Vec<f32> = random_values(n, seed).iter().map(|x| 4.0 * x).collect();
                Some(if t == ScalarType::Bf16 {
                    let h: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x)).collect();
                    let seen = h.iter().map(|x| x.to_f32()).collect();
                    (
                        seen,
                        CheckBias::Bf16(DeviceTensor::from_host(stream, &h, vec![n])?),
                    )
                } else {
                    let dev = DeviceTensor::from_host(stream, &values, vec![n])?;
                    (values, CheckBias::F32(dev))
                })
            }
        };
        let s = CHECK_OUT_SCALE;
        let out_scale = match cfg.out_scale {
            OutScale::None => None,
            OutScale::Value => Some((s, None)),
            OutScale::Pointer => Some((s, Some(DeviceTensor::from_host(stream, &[s], vec![1])?))),
        };
        Ok(CheckEpilogue { bias, out_scale })
    }

    /// The epilogue operands as [`Gemm::run_fp8`] takes them.
    pub fn args(&self) -> Fp8Epilogue<'_> {
        Fp8Epilogue {
            bias: self.bias.as_ref().map(|(_, b)| match b {
                CheckBias::Bf16(t) => t.into(),
                CheckBias::F32(t) => t.into(),
            }),
            out_scale: self.out_scale.as_ref().map(|(s, dev)| match dev {
                Some(t) => OutScaleArg::Device(t.into()),
                None => OutScaleArg::Value(*s),
            }),
        }
    }

    /// The reference's element of column `j` after the epilogue: `s·x + bias[j]`.
    pub fn apply(&self, j: usize, x: f32) -> f32 {
        let s = self.out_scale.as_ref().map_or(1.0, |(s, _)| *s);
        let b = self.bias.as_ref().map_or(0.0, |(v, _)| v[j]);
        s * x + b
    }
}

/// How f32 values become A's and B's 8-bit elements (`E4m3::from_f32`, `E5m2::from_f32`).
pub type Rounds<I, J> = (fn(f32) -> I, fn(f32) -> J);

/// One FP8 problem on the device: A `[m, k]` of 8-bit `I` and B `[n, k]` of 8-bit `J` (random
/// values in ±[`FP8_RANGE`], rounded with saturation), and their scales as f32 device tensors:
/// per-tensor ([`Fp8Problem::new`]: [`FP8_SCALES`], one f32 each, as our GEMM and cuBLASLt both
/// read them) or per block (a [`super::check_block::BlockProblem`]'s).
pub struct Fp8Problem<I: Element, J: Element = I> {
    /// `(m, n, k)`.
    pub shape: (usize, usize, usize),
    /// A `[m, k]`.
    pub a: DeviceTensor<I>,
    /// B `[n, k]`.
    pub b: DeviceTensor<J>,
    /// A's scales: `[1]` per tensor, `[ceil(k/128), m]` (M-major) per block.
    pub scale_a: DeviceTensor<f32>,
    /// B's scales: `[1]` per tensor, `[ceil(n/128), ceil(k/128)]` per block.
    pub scale_b: DeviceTensor<f32>,
}

/// `len` random 8-bit values from `seed`: `x · FP8_RANGE` for `x` uniform in [-1, 1), rounded by
/// `round` (`E4m3::from_f32` or `E5m2::from_f32`, with saturation).
pub fn fp8_values<T>(len: usize, seed: u64, round: fn(f32) -> T) -> Vec<T> {
    random_values(len, seed)
        .into_iter()
        .map(|x| round(x * FP8_RANGE))
        .collect()
}

impl<I: Element, J: Element> Fp8Problem<I, J> {
    /// Fresh random A and B from `seed`, each value `x · FP8_RANGE` rounded by `round_a` and
    /// `round_b` (`E4m3::from_f32` or `E5m2::from_f32`).
    pub fn new(
        stream: &Arc<CudaStream>,
        (m, n, k): (usize, usize, usize),
        seed: u64,
        (round_a, round_b): Rounds<I, J>,
    ) -> Result<Fp8Problem<I, J>, CheckError> {
        let (a, b) = (
            fp8_values(m * k, seed, round_a),
            fp8_values(n * k, seed ^ 0x5555, round_b),
        );
        let [sa, sb] = FP8_SCALES;
        Fp8Problem::from_host(
            stream,
            (m, n, k),
            (&a, &b),
            [(&[sa], vec![1]), (&[sb], vec![1])],
        )
    }

    /// A and B (`[m, k]`, `[n, k]`) and the scales (each its values and shape) copied to the
    /// device.
    pub fn from_host(
        stream: &Arc<CudaStream>,
        (m, n, k): (usize, usize, usize),
        (a, b): (&[I], &[J]),
        [(sa, sa_shape), (sb, sb_shape)]: [(&[f32], Vec<usize>); 2],
    ) -> Result<Fp8Problem<I, J>, CheckError> {
        Ok(Fp8Problem {
            shape: (m, n, k),
            a: DeviceTensor::from_host(stream, a, vec![m, k])?,
            b: DeviceTensor::from_host(stream, b, vec![n, k])?,
            scale_a: DeviceTensor::from_host(stream, sa, sa_shape)?,
            scale_b: DeviceTensor::from_host(stream, sb, sb_shape)?,
        })
    }

    /// `[scale_a, scale_b]`, as [`Fp8Scales::per_tensor`] and [`Fp8Scales::block`] take them.
    pub fn scales(&self) -> [&DeviceTensor<f32>; 2] {
        [&self.scale_a, &self.scale_b]
    }

    /// cuBLASLt's `d = sa·sb·A·Bᵀ` with `accum`.
    pub fn cublaslt<D: super::cublaslt::Fp8Out>(
        &self,
        lt: &LtFp8,
        d: &mut CudaSlice<D>,
        accum: Accum,
    ) -> Result<(), CheckError>
    where
        I: Fp8Elem,
        J: Fp8Elem,
    {
        let (a, b) = (self.a.slice(), self.b.slice());
        let (sa, sb) = (self.scale_a.slice(), self.scale_b.slice());
        Ok(lt.matmul(self.shape, a, b, sa, sb, d, accum)?)
    }
}

/// Checks a per-tensor-scaled FP8 `gemm` (e4m3/e5m2 A and B, but not both e5m2: cuBLASLt
/// multiplies no e5m2 x e5m2; bf16, f16 or f32 out) on a fresh random
/// [`Fp8Problem`] of `shape` (K a multiple of 16) against cuBLASLt FP8 with promoted
/// accumulation and an f32 D (itself checked against an f64 host reference by
/// `benches/gemm_fp8.rs`): C poisoned with NaN first, every element must come out written and
/// within [`CheckResult::TOLERANCE`] relative. `cublas_rel_error` is cuBLASLt's fast
/// accumulation (the tensor core's accumulator throughout, as this kernel's) against the same
/// reference, for scale.
pub fn check_fp8(
    stream: &Arc<CudaStream>,
    lt: &LtFp8,
    gemm: &Gemm,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<CheckResult, CheckError> {
    fn typed<I: Element + Fp8Elem, J: Element + Fp8Elem>(
        (stream, lt, gemm): (&Arc<CudaStream>, &LtFp8, &Gemm),
        p: Fp8Problem<I, J>,
    ) -> Result<CheckResult, CheckError> {
        let (m, n, _) = p.shape;
        let epi = CheckEpilogue::new(stream, gemm.config(), n, 0xb1a5 ^ m as u64)?;
        let ours = run_fp8_poisoned(stream, gemm, &p, &epi)?;
        let lt_d = |accum: Accum| -> Result<Vec<f32>, CheckError> {
            let mut d: CudaSlice<f32> = stream.clone_htod(&vec![f32::NAN; m * n])?;
            p.cublaslt(lt, &mut d, accum)?;
            Ok(stream.clone_dtoh(&d)?)
        };
        // cuBLASLt's product, then the epilogue (the same for both, so the fast one's error
        // stays the product's).
        let with_epilogue = |d: Vec<f32>| -> Vec<f32> {
            d.into_iter()
                .enumerate()
                .map(|(i, x)| epi.apply(i % n, x))
                .collect()
        };
        let reference = with_epilogue(lt_d(Accum::Promoted)?);
        let fast = with_epilogue(lt_d(Accum::Fast)?);
        Ok(CheckResult {
            shape: p.shape,
            rel_error: rel_error(&ours, &reference),
            unwritten: ours.iter().filter(|x| x.is_nan()).count(),
            cublas_rel_error: rel_error(&fast, &reference),
        })
    }
    use ptx_isa::ScalarType::{E4m3 as E4, E5m2 as E5};
    let (e4, e5) = (
        E4m3::from_f32 as fn(f32) -> E4m3,
        E5m2::from_f32 as fn(f32) -> E5m2,
    );
    let (cfg, run) = (gemm.config(), (stream, lt, gemm));
    match (cfg.input, cfg.b_type()) {
        (E4, E4) => typed(run, Fp8Problem::new(stream, shape, seed, (e4, e4))?),
        (E4, E5) => typed(run, Fp8Problem::new(stream, shape, seed, (e4, e5))?),
        (E5, E4) => typed(run, Fp8Problem::new(stream, shape, seed, (e5, e4))?),
        (a, b) => Err(CheckError::Gemm(GemmError::Operands(format!(
            "{} x {} inputs: not an FP8 GEMM cuBLASLt multiplies",
            a.name(),
            b.name()
        )))),
    }
}

/// Our FP8 `gemm` on `p` (per-tensor or block scales, as its configuration says) with the
/// epilogue operands `epi`, into a C of its output type poisoned with NaN first, read back as
/// f32.
pub fn run_fp8_poisoned<I: Element, J: Element>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    p: &Fp8Problem<I, J>,
    epi: &CheckEpilogue,
) -> Result<Vec<f32>, CheckError> {
    match gemm.config().output {
        ScalarType::Bf16 => run_fp8(stream, gemm, p, epi, bf16::NAN, bf16::to_f32),
        ScalarType::F16 => run_fp8(stream, gemm, p, epi, half::f16::NAN, half::f16::to_f32),
        ScalarType::F32 => run_fp8(stream, gemm, p, epi, f32::NAN, |x| x),
        other => Err(CheckError::Gemm(GemmError::Operands(format!(
            "{} output: not an FP8 GEMM configuration",
            other.name()
        )))),
    }
}

/// [`run_fp8_poisoned`] with C of `O`, filled with `poison`.
fn run_fp8<I: Element, J: Element, O: Element + Copy>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    p: &Fp8Problem<I, J>,
    epi: &CheckEpilogue,
    poison: O,
    to_f32: fn(O) -> f32,
) -> Result<Vec<f32>, CheckError> {
    let (m, n, _) = p.shape;
    let mut c = DeviceTensor::from_host(stream, &vec![poison; m * n], vec![m, n])?;
    let (a, b, args) = (&p.a, &p.b, &epi.args());
    let scales = match gemm.config().scaling {
        Scaling::Block => Fp8Scales::block(p.scales()),
        _ => Fp8Scales::per_tensor(p.scales()),
    };
    gemm.run_fp8(stream, a, b, &mut c, scales, args)?;
    Ok(c.to_host(stream)?.into_iter().map(to_f32).collect())
}
