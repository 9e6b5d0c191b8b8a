//! Checking the block-scaled FP8 GEMM ([`super::Scaling::Block`]) on the GPU against an f64
//! host reference of the dequantized product: fresh random 8-bit A and B in ±[`FP8_RANGE`],
//! per-block scales spread over three orders of magnitude (so a scale read from the wrong row,
//! column block or k-block is off by a large factor), C poisoned with NaN first. Used by
//! `ptxkit selftest` (`gemm_fp8_block`) and `benches/gemm_fp8_block.rs`.

use std::sync::Arc;

use ptx_isa::ScalarType;

use crate::runtime::cuda::CudaStream;
use crate::runtime::{DeviceTensor, E4m3, E5m2, Element};

use super::check::{
    CheckEpilogue, CheckError, CheckResult, FP8_RANGE, Fp8Problem, fp8_values, random_values,
    rel_error, run_fp8_poisoned,
};
use super::{Fp8Epilogue, Fp8Scales, Gemm, GemmError, SCALE_BLOCK};

/// How host f32 values become 8-bit elements and back (`E4m3::from_f32`, `E4m3::to_f32`).
pub type Codec<T> = (fn(f32) -> T, fn(T) -> f32);

/// The binades the random block scales span: `2^-10 .. 2^0`.
pub const SCALE_BINADES: f32 = 10.0;

/// One block-scaled problem: A `[m, k]` of `I` and B `[n, k]` of `J` on the device and, decoded,
/// on the host; `scale_a` `[ceil(k/128), m]` and `scale_b` `[ceil(n/128), ceil(k/128)]`.
pub struct BlockProblem<I: Element, J: Element = I> {
    /// A, B and the scales on the device.
    pub device: Fp8Problem<I, J>,
    host: HostProblem,
}

/// The host copy of a problem, decoded to f32.
struct HostProblem {
    a: Vec<f32>,
    b: Vec<f32>,
    sa: Vec<f32>,
    sb: Vec<f32>,
}

/// The largest scale of A a check with `output` elements and depth `k` may draw: 1 where the
/// output has f32's range (f32, bf16); for f16 (largest finite 65504) the power of two that
/// keeps the worst case `k · FP8_RANGE² · sa · sb` (`sb` ≤ 1) under half of 65504, so no
/// element of C can overflow to infinity. The scales keep their spread of [`SCALE_BINADES`]
/// below it: a scale read from the wrong row or block is still off by a large factor.
pub fn scale_a_ceiling(output: ScalarType, k: usize) -> f32 {
    if output != ScalarType::F16 {
        return 1.0;
    }
    let worst = k as f64 * f64::from(FP8_RANGE).powi(2);
    let limit = f64::from(half::f16::MAX.to_f32()) / 2.0;
    (-(worst / limit).log2().ceil().max(0.0)).exp2() as f32
}

impl HostProblem {
    /// The problem as the reference reads it.
    fn operands(&self) -> BlockOperands<'_> {
        BlockOperands {
            a: &self.a,
            b: &self.b,
            sa: &self.sa,
            sb: &self.sb,
        }
    }
}

/// One block-scaled problem's host values, decoded to f32, as [`reference_row`] reads them:
/// A `[m, k]`, B `[n, k]`, `sa` `[ceil(k/128), m]`, `sb` `[ceil(n/128), ceil(k/128)]` (a grouped
/// GEMM's group is one: its rows of A, its B and its scales; the grouped references
/// ([`super::grouped::reference::contiguous_block`]) take every group's, stacked).
#[derive(Debug, Clone, Copy)]
pub struct BlockOperands<'a> {
    /// A `[m, k]`.
    pub a: &'a [f32],
    /// B `[n, k]`.
    pub b: &'a [f32],
    /// A's scales `[ceil(k/128), m]`.
    pub sa: &'a [f32],
    /// B's scales `[ceil(n/128), ceil(k/128)]`.
    pub sb: &'a [f32],
}

/// Random scales `2^-x`, `x` uniform in `[0, SCALE_BINADES)`, `n` of them from `seed`.
pub fn random_scales(n: usize, seed: u64) -> Vec<f32> {
    random_values(n, seed)
        .into_iter()
        .map(|u| (-(u + 1.0) * 0.5 * SCALE_BINADES).exp2())
        .collect()
}

impl<I: Element + Copy, J: Element + Copy> BlockProblem<I, J> {
    /// Fresh random A, B and scales from `seed`, A's and B's values `x · FP8_RANGE` rounded by
    /// the codecs' first functions (with saturation); A's scales under
    /// [`scale_a_ceiling`]`(output, k)` so that C of `output` elements cannot overflow.
    pub fn new(
        stream: &Arc<CudaStream>,
        (m, n, k): (usize, usize, usize),
        seed: u64,
        (ca, cb): (Codec<I>, Codec<J>),
        output: ScalarType,
    ) -> Result<BlockProblem<I, J>, CheckError> {
        fn values<T: Copy>(len: usize, seed: u64, (round, decode): Codec<T>) -> (Vec<T>, Vec<f32>) {
            let v = fp8_values(len, seed, round);
            let f = v.iter().map(|&x| decode(x)).collect();
            (v, f)
        }
        let block = SCALE_BLOCK as usize;
        let (kb, nb) = (k.div_ceil(block), n.div_ceil(block));
        let (a, a_host) = values(m * k, seed, ca);
        let (b, b_host) = values(n * k, seed ^ 0x5555, cb);
        let ceiling = scale_a_ceiling(output, k);
        let sa: Vec<f32> = random_scales(kb * m, seed ^ 0xA11)
            .into_iter()
            .map(|s| s * ceiling)
            .collect();
        let sb = random_scales(nb * kb, seed ^ 0xB22);
        let scales = [(&sa[..], vec![kb, m]), (&sb[..], vec![nb, kb])];
        Ok(BlockProblem {
            device: Fp8Problem::from_host(stream, (m, n, k), (&a, &b), scales)?,
            host: HostProblem {
                a: a_host,
                b: b_host,
                sa,
                sb,
            },
        })
    }

    /// `gemm` on this problem into `c`.
    pub fn run<O: Element>(
        &self,
        stream: &Arc<CudaStream>,
        gemm: &Gemm,
        c: &mut DeviceTensor<O>,
    ) -> Result<(), GemmError> {
        let p = &self.device;
        let scales = Fp8Scales::block([&p.scale_a, &p.scale_b]);
        gemm.run_fp8(stream, &p.a, &p.b, c, scales, &Fp8Epilogue::NONE)
    }

    /// The f64 reference of `rows` of C (all n columns each, row after row):
    /// `Σ_kb sa[kb, i]·sb[j/128, kb]·Σ_{k in kb} A[i, k]·B[j, k]`, on the host's cores.
    pub fn reference_rows(&self, rows: &[usize]) -> Vec<f64> {
        let shape = self.device.shape;
        let h = &self.host;
        let row = |i: usize| -> Vec<f64> { reference_row(h.operands(), shape, i) };
        let threads = std::thread::available_parallelism().map_or(4, |t| t.get());
        let chunk = rows.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(chunk)
                .map(|part| s.spawn(move || part.iter().flat_map(|&i| row(i)).collect::<Vec<_>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    }
}

/// Row `i` of the f64 reference of the block-scaled problem `h` of shape `(m, n, k)`:
/// `C[i, j] = Σ_kb sa[kb, i]·sb[j/128, kb]·Σ_{k in kb} A[i, k]·B[j, k]` for every column `j`.
pub fn reference_row(h: BlockOperands<'_>, (m, n, k): (usize, usize, usize), i: usize) -> Vec<f64> {
    let block = SCALE_BLOCK as usize;
    let kb = k.div_ceil(block);
    let a = &h.a[i * k..(i + 1) * k];
    (0..n)
        .map(|j| {
            let b = &h.b[j * k..(j + 1) * k];
            (0..kb)
                .map(|q| {
                    let (lo, hi) = (q * block, ((q + 1) * block).min(k));
                    let dot: f64 = (lo..hi).map(|x| a[x] as f64 * b[x] as f64).sum();
                    dot * h.sa[q * m + i] as f64 * h.sb[(j / block) * kb + q] as f64
                })
                .sum()
        })
        .collect()
}

/// The rows a check compares: all of them when the reference is cheap (m·n·k up to 2^31),
/// else 32 spread over M, the first and last among them.
pub fn checked_rows((m, n, k): (usize, usize, usize)) -> Vec<usize> {
    if (m as u128) * (n as u128) * (k as u128) <= 1 << 31 {
        return (0..m).collect();
    }
    let mut rows: Vec<usize> = (0..32).map(|i| i * (m - 1) / 31).collect();
    rows.dedup();
    rows
}

/// Checks a block-scaled FP8 `gemm` (any 8-bit A and B; bf16, f16 or f32 out) on a fresh
/// random [`BlockProblem`] of `shape` (K a multiple of 16): C poisoned with NaN first, every
/// element must come out written, and the rows of [`checked_rows`] within
/// [`CheckResult::TOLERANCE`] relative (Frobenius) of the f64 reference. `cublas_rel_error`
/// is 0: there is no cuBLASLt block-scaled FP8 on sm_90 to compare with.
pub fn check_block(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    shape: (usize, usize, usize),
    seed: u64,
) -> Result<CheckResult, CheckError> {
    use ScalarType::{E4m3 as E4, E5m2 as E5};
    let e4: Codec<E4m3> = (E4m3::from_f32, E4m3::to_f32);
    let e5: Codec<E5m2> = (E5m2::from_f32, E5m2::to_f32);
    let cfg = gemm.config();
    match (cfg.input, cfg.b_type()) {
        (E4, E4) => typed(stream, gemm, shape, seed, (e4, e4)),
        (E4, E5) => typed(stream, gemm, shape, seed, (e4, e5)),
        (E5, E4) => typed(stream, gemm, shape, seed, (e5, e4)),
        (E5, E5) => typed(stream, gemm, shape, seed, (e5, e5)),
        (a, b) => Err(CheckError::Gemm(GemmError::Operands(format!(
            "{} x {} inputs: not an FP8 GEMM",
            a.name(),
            b.name()
        )))),
    }
}

fn typed<I: Element + Copy, J: Element + Copy>(
    stream: &Arc<CudaStream>,
    gemm: &Gemm,
    shape: (usize, usize, usize),
    seed: u64,
    codecs: (Codec<I>, Codec<J>),
) -> Result<CheckResult, CheckError> {
    let p = BlockProblem::new(stream, shape, seed, codecs, gemm.config().output)?;
    let epi = CheckEpilogue::new(stream, gemm.config(), shape.1, seed ^ 0xb1a5)?;
    let ours = run_fp8_poisoned(stream, gemm, &p.device, &epi)?;
    let (_, n, _) = shape;
    let rows = checked_rows(shape);
    let reference: Vec<f32> = p
        .reference_rows(&rows)
        .into_iter()
        .enumerate()
        .map(|(i, x)| epi.apply(i % n, x as f32))
        .collect();
    let got: Vec<f32> = rows
        .iter()
        .flat_map(|&i| ours[i * n..(i + 1) * n].iter().copied())
        .collect();
    // A reference thread that failed leaves rows out: never a pass.
    let rel = if reference.len() == got.len() {
        rel_error(&got, &reference)
    } else {
        f64::INFINITY
    };
    Ok(CheckResult {
        shape,
        rel_error: rel,
        unwritten: ours.iter().filter(|x| x.is_nan()).count(),
        cublas_rel_error: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_a_ceiling_keeps_f16_outputs_finite() {
        assert_eq!(scale_a_ceiling(ScalarType::Bf16, 4096), 1.0);
        assert_eq!(scale_a_ceiling(ScalarType::F32, 4096), 1.0);
        for k in [16, 128, 256, 300, 4096] {
            let ceiling = scale_a_ceiling(ScalarType::F16, k);
            let worst = k as f32 * FP8_RANGE * FP8_RANGE * ceiling;
            assert!(
                worst <= half::f16::MAX.to_f32() / 2.0,
                "k = {k}: worst |C| {worst}"
            );
            // No more headroom than needed: twice the ceiling would pass the limit.
            assert!(
                2.0 * worst > half::f16::MAX.to_f32() / 2.0 || ceiling == 1.0,
                "k = {k}"
            );
        }
    }
}
