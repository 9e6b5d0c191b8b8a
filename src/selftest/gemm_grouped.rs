//! The grouped GEMM on the GPU against its f32 host reference
//! ([`crate::library::gemm::grouped::reference`]), on fresh random bf16 data with C poisoned
//! (NaN) first: every element of a group's rows must come out written and within tolerance, and
//! (masked form) every row past a group's count must still hold the poison. Cases: empty groups
//! (first, middle, last), groups of 1 row and of sizes that are not multiples of the 128-row
//! tile (so tiles end inside a group and the next group's rows follow in the same rows of C),
//! G = 1, N and K edges, the TMA-store epilogue (128 x 256, 128 x 128 tiles), the register
//! epilogue with an odd N, many ragged groups; then operands the launcher must refuse.

use half::bf16;

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use crate::library::gemm::GemmConfig;
use crate::library::gemm::check::{CheckResult, random_values};
use crate::library::gemm::grouped::{
    GroupedGemm, GroupedGemmError, Grouping, bench_configs, reference,
};
use crate::runtime::{DeviceTensor, TensorMut, TensorRef};

/// One case's outcome.
struct Outcome {
    /// ‖ours − reference‖ / ‖reference‖ over the groups' rows.
    rel_error: f64,
    /// Elements of the groups' rows left unwritten (poison) or NaN.
    unwritten: usize,
    /// Elements past a masked group's count that were written.
    overwritten: usize,
}

/// Runs `gemm` on fresh data: `rows` is `offs` (contiguous, `m` = M_total) or `counts` (masked,
/// `m` = M_cap); B is `[G, n, k]`.
fn run_case(
    ctx: &mut GpuCtx,
    gemm: &GroupedGemm,
    rows: &[i32],
    m: usize,
    (n, k): (usize, usize),
) -> Result<Outcome, GpuCheckError> {
    let groups = rows.len();
    let masked = gemm.config().grouping == Grouping::Masked;
    let a_rows = if masked { groups * m } else { m };
    let round = |v: Vec<f32>| -> (Vec<bf16>, Vec<f32>) {
        let h: Vec<bf16> = v.into_iter().map(bf16::from_f32).collect();
        let f = h.iter().map(|x| x.to_f32()).collect();
        (h, f)
    };
    let (ah, af) = round(random_values(a_rows * k, ctx.rng.next_u64()));
    let (bh, bf) = round(random_values(groups * n * k, ctx.rng.next_u64()));
    let (a_shape, c_shape) = if masked {
        (vec![groups, m, k], vec![groups, m, n])
    } else {
        (vec![m, k], vec![m, n])
    };
    let stream = ctx.stream.clone();
    let a = DeviceTensor::from_host(&stream, &ah, a_shape)?;
    let b = DeviceTensor::from_host(&stream, &bh, vec![groups, n, k])?;
    let r = DeviceTensor::from_host(&stream, rows, vec![groups])?;
    let poison = vec![bf16::from_bits(0xFFFF); a_rows * n];
    let mut c = DeviceTensor::from_host(&stream, &poison, c_shape)?;
    gemm.run(
        &stream,
        &TensorRef::from(&a),
        &TensorRef::from(&b),
        &TensorRef::from(&r),
        TensorMut::from(&mut c),
    )?;
    let got: Vec<bf16> = c.to_host(&stream)?;
    let want = if masked {
        reference::masked(&af, &bf, rows, m, n, k)
    } else {
        reference::contiguous(&af, &bf, rows, n, k)
    };
    let (mut num, mut den) = (0.0f64, 0.0f64);
    let (mut unwritten, mut overwritten) = (0, 0);
    for (g, w) in got.iter().zip(&want) {
        if w.is_nan() {
            // Past a masked group's count: the poison must still be there, bit for bit.
            overwritten += usize::from(g.to_bits() != 0xFFFF);
        } else if g.is_nan() {
            unwritten += 1;
        } else {
            let d = f64::from(g.to_f32()) - f64::from(*w);
            num += d * d;
            den += f64::from(*w) * f64::from(*w);
        }
    }
    let rel_error = if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    };
    Ok(Outcome {
        rel_error,
        unwritten,
        overwritten,
    })
}

/// The cumulative ends of groups of `sizes` rows.
fn offs(sizes: &[usize]) -> Vec<i32> {
    sizes
        .iter()
        .scan(0i32, |end, &s| {
            *end += s as i32;
            Some(*end)
        })
        .collect()
}

/// Runs every case of `grouping`; the report's error is the worst relative Frobenius error.
fn run_form(ctx: &mut GpuCtx, grouping: Grouping) -> RunResult {
    let bench = bench_configs(grouping);
    let (large, narrow) = (bench[0], bench[4]);
    let registers_odd = GemmConfig {
        tma_store: false,
        n_even: false,
        ..large
    }
    .deepest();
    let ragged: Vec<usize> = (0..16)
        .map(|g| {
            if g % 5 == 4 {
                0
            } else {
                (ctx.rng.next_u64() % 300) as usize
            }
        })
        .collect();
    // (configuration, group sizes (contiguous) or counts and capacity (masked), n, k)
    type Case = (GemmConfig, Vec<usize>, Option<usize>, usize, usize);
    let cases: Vec<Case> = match grouping {
        Grouping::Masked => vec![
            (large, vec![0, 200, 77, 129], Some(200), 264, 136),
            (narrow, vec![1], Some(333), 136, 64),
            // Counts past the capacity are clamped to it.
            (registers_odd, vec![64, 3, 90], Some(64), 97, 40),
            (bench[1], ragged.clone(), Some(300), 256, 128),
        ],
        _ => vec![
            (large, vec![0, 1, 300, 128, 257, 0], None, 520, 200),
            (narrow, vec![333], None, 136, 64),
            (registers_odd, vec![130, 0, 70], None, 199, 72),
            (bench[1], ragged, None, 256, 128),
            (bench[3], vec![129, 127, 1000], None, 392, 256),
        ],
    };
    let mut worst = 0.0f64;
    let mut lines = Vec::new();
    for (cfg, sizes, cap, n, k) in cases {
        let gemm = GroupedGemm::new(&ctx.dev, cfg)?;
        let (rows, m) = match cap {
            Some(cap) => (sizes.iter().map(|&s| s as i32).collect::<Vec<_>>(), cap),
            None => (offs(&sizes), sizes.iter().sum()),
        };
        let o = run_case(ctx, &gemm, &rows, m, (n, k))?;
        let line = format!(
            "{} G={} m={m} n={n} k={k}: rel {:.2e}",
            cfg.name(),
            rows.len(),
            o.rel_error
        );
        if o.unwritten > 0
            || o.overwritten > 0
            || o.rel_error.is_nan()
            || o.rel_error > CheckResult::TOLERANCE
        {
            return Err(GpuCheckError::Unexpected {
                check: format!("gemm_grouped {grouping:?}"),
                detail: format!(
                    "{line}, {} unwritten, {} written past a count; rows {rows:?}",
                    o.unwritten, o.overwritten
                ),
            });
        }
        worst = worst.max(o.rel_error);
        lines.push(line);
    }
    refusals(ctx, large)?;
    Ok(Report {
        max_err: worst,
        tolerance: CheckResult::TOLERANCE,
        detail: format!("{}; bad operands refused", lines.join("; ")),
    })
}

/// Operands the launcher must refuse before anything runs: a row array of the wrong length, a K
/// that is not a multiple of 8.
fn refusals(ctx: &mut GpuCtx, cfg: GemmConfig) -> Result<(), GpuCheckError> {
    let gemm = GroupedGemm::new(&ctx.dev, cfg)?;
    let masked = cfg.grouping == Grouping::Masked;
    for (groups, rows_len, k) in [(2usize, 3usize, 64usize), (2, 2, 100)] {
        let (m, n) = (128usize, 256usize);
        let a_rows = if masked { groups * m } else { m };
        let stream = ctx.stream.clone();
        let zeros = |len: usize| vec![bf16::ZERO; len];
        let a_shape = if masked {
            vec![groups, m, k]
        } else {
            vec![m, k]
        };
        let c_shape = if masked {
            vec![groups, m, n]
        } else {
            vec![m, n]
        };
        let a = DeviceTensor::from_host(&stream, &zeros(a_rows * k), a_shape)?;
        let b = DeviceTensor::from_host(&stream, &zeros(groups * n * k), vec![groups, n, k])?;
        let r = DeviceTensor::from_host(&stream, &vec![0i32; rows_len], vec![rows_len])?;
        let mut c = DeviceTensor::from_host(&stream, &zeros(a_rows * n), c_shape)?;
        let got = gemm.run(
            &stream,
            &TensorRef::from(&a),
            &TensorRef::from(&b),
            &TensorRef::from(&r),
            TensorMut::from(&mut c),
        );
        if !matches!(got, Err(GroupedGemmError::Operand { .. })) {
            return Err(GpuCheckError::Unexpected {
                check: format!("gemm_grouped refusal G={groups} rows={rows_len} k={k}"),
                detail: format!("want an operand error, got {got:?}"),
            });
        }
    }
    Ok(())
}

/// The contiguous form (`offs`).
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    run_form(ctx, Grouping::Contiguous)
}

/// The masked form (`counts`).
pub fn run_masked(ctx: &mut GpuCtx) -> RunResult {
    run_form(ctx, Grouping::Masked)
}
