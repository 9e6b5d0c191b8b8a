//! The grouped GEMM on the GPU against its f32 host reference
//! ([`crate::library::gemm::grouped::reference`]), on fresh random bf16 data with C poisoned
//! (NaN) first: every element of a group's rows must come out written and within tolerance, and
//! (masked form) every row past a group's count must still hold the poison. Cases: empty groups
//! (first, middle, last), groups of 1 row and of sizes that are not multiples of the 128-row
//! tile (so tiles end inside a group and the next group's rows follow in the same rows of C),
//! G = 1, N and K edges, the TMA-store epilogue (128 x 256, 128 x 128 tiles), the register
//! epilogue with an odd N, many ragged groups; then operands the launcher must refuse.
//!
//! The block-scaled FP8 form ([`crate::library::gemm::Scaling::Block`]) the same way against its
//! f64 reference ([`reference::contiguous_block`], [`reference::masked_block`]) on fresh random
//! e4m3 (one case e5m2) data with random per-block scales over ten binades (a scale of the wrong
//! row, group, column block or k-block is off by a large factor): the pipelined and the plain
//! promotion, 128- and 64-wide tiles, odd and even k-tile counts, a partial last k-block, both
//! epilogues; then scales of the wrong shape, a missing one and an 8-bit K of 8 refused.

use std::sync::Arc;

use half::bf16;
use ptx_isa::ScalarType;

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use crate::library::gemm::check::{CheckResult, FP8_RANGE, random_values};
use crate::library::gemm::check_block::{BlockOperands, Codec, random_scales};
use crate::library::gemm::grouped::{
    GroupedGemm, GroupedGemmError, Grouping, bench_configs, fp8_bench_configs, offs, reference,
};
use crate::library::gemm::{GemmConfig, GemmError, SCALE_BLOCK};
use crate::runtime::cuda::CudaStream;
use crate::runtime::{DeviceTensor, E4m3, E5m2, Element, TensorMut, TensorRef};

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
    let stream = ctx.stream.clone();
    let Operands { a, b, r, mut c } = upload(&stream, (&ah, &bh), rows, masked, (m, n, k))?;
    gemm.run(
        &stream,
        &TensorRef::from(&a),
        &TensorRef::from(&b),
        &TensorRef::from(&r),
        None,
        TensorMut::from(&mut c),
    )?;
    let got: Vec<bf16> = c.to_host(&stream)?;
    let want = if masked {
        reference::masked(&af, &bf, rows, m, n, k)
    } else {
        reference::contiguous(&af, &bf, rows, n, k)
    };
    Ok(compare(&got, want.into_iter().map(f64::from)))
}

/// A case's operands on the device: A, B, the row array and C, poisoned with the NaN `0xFFFF`.
struct Operands<I: Element> {
    a: DeviceTensor<I>,
    b: DeviceTensor<I>,
    r: DeviceTensor<i32>,
    c: DeviceTensor<bf16>,
}

/// Uploads a case's A and B (`[m, k]` and `[G, n, k]`, A `[G, m, k]` when `masked`), its row
/// array (`offs` or `counts`, G of them) and a poisoned C (`[m, n]`, or `[G, m, n]`).
fn upload<I: Element + Copy>(
    stream: &Arc<CudaStream>,
    (ah, bh): (&[I], &[I]),
    rows: &[i32],
    masked: bool,
    (m, n, k): (usize, usize, usize),
) -> Result<Operands<I>, GpuCheckError> {
    let groups = rows.len();
    let (a_shape, c_shape) = if masked {
        (vec![groups, m, k], vec![groups, m, n])
    } else {
        (vec![m, k], vec![m, n])
    };
    let poison = vec![bf16::from_bits(0xFFFF); c_shape.iter().product()];
    Ok(Operands {
        a: DeviceTensor::from_host(stream, ah, a_shape)?,
        b: DeviceTensor::from_host(stream, bh, vec![groups, n, k])?,
        r: DeviceTensor::from_host(stream, rows, vec![groups])?,
        c: DeviceTensor::from_host(stream, &poison, c_shape)?,
    })
}

/// C as the kernel left it (poisoned with the NaN `0xFFFF` first) against the reference, whose
/// NaN elements are the rows the kernel must leave alone.
fn compare(got: &[bf16], want: impl IntoIterator<Item = f64>) -> Outcome {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    let (mut unwritten, mut overwritten) = (0, 0);
    for (g, w) in got.iter().zip(want) {
        if w.is_nan() {
            // Past a masked group's count: the poison must still be there, bit for bit.
            overwritten += usize::from(g.to_bits() != 0xFFFF);
        } else if g.is_nan() {
            unwritten += 1;
        } else {
            let d = f64::from(g.to_f32()) - w;
            num += d * d;
            den += w * w;
        }
    }
    let rel_error = if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    };
    Outcome {
        rel_error,
        unwritten,
        overwritten,
    }
}

/// Runs a block-scaled `gemm` (8-bit A and B of `I`, bf16 C) on fresh data: `rows` as
/// [`run_case`]'s, random block scales (`scale_a` `[kb, M_total]` or `[G, kb, M_cap]`,
/// `scale_b` `[G, nb, kb]`), C poisoned first; against the f64 reference.
fn run_block_case<I: Element + Copy>(
    ctx: &mut GpuCtx,
    gemm: &GroupedGemm,
    rows: &[i32],
    m: usize,
    (n, k): (usize, usize),
    (encode, decode): Codec<I>,
) -> Result<Outcome, GpuCheckError> {
    let groups = rows.len();
    let masked = gemm.config().grouping == Grouping::Masked;
    let a_rows = if masked { groups * m } else { m };
    let mut values = |len: usize| -> (Vec<I>, Vec<f32>) {
        let h: Vec<I> = random_values(len, ctx.rng.next_u64())
            .into_iter()
            .map(|x| encode(x * FP8_RANGE))
            .collect();
        let f = h.iter().map(|&x| decode(x)).collect();
        (h, f)
    };
    let (ah, af) = values(a_rows * k);
    let (bh, bf) = values(groups * n * k);
    let block = SCALE_BLOCK as usize;
    let (kb, nb) = (k.div_ceil(block), n.div_ceil(block));
    let sa = random_scales(kb * a_rows, ctx.rng.next_u64());
    let sb = random_scales(groups * nb * kb, ctx.rng.next_u64());
    let sa_shape = if masked {
        vec![groups, kb, m]
    } else {
        vec![kb, m]
    };
    let stream = ctx.stream.clone();
    let Operands { a, b, r, mut c } = upload(&stream, (&ah, &bh), rows, masked, (m, n, k))?;
    let sa_d = DeviceTensor::from_host(&stream, &sa, sa_shape)?;
    let sb_d = DeviceTensor::from_host(&stream, &sb, vec![groups, nb, kb])?;
    gemm.run(
        &stream,
        &TensorRef::from(&a),
        &TensorRef::from(&b),
        &TensorRef::from(&r),
        Some([&TensorRef::from(&sa_d), &TensorRef::from(&sb_d)]),
        TensorMut::from(&mut c),
    )?;
    let got: Vec<bf16> = c.to_host(&stream)?;
    let p = BlockOperands {
        a: &af,
        b: &bf,
        sa: &sa,
        sb: &sb,
    };
    let want = if masked {
        reference::masked_block(p, rows, m, n, k)
    } else {
        reference::contiguous_block(p, rows, n, k)
    };
    Ok(compare(&got, want))
}

/// A case: configuration, group sizes (contiguous) or counts (masked), the capacity (masked),
/// n, k.
type Case = (GemmConfig, Vec<usize>, Option<usize>, usize, usize);

/// `cfg` with the register epilogue, odd N allowed, at its deepest ring.
fn registers_odd(cfg: GemmConfig) -> GemmConfig {
    GemmConfig {
        tma_store: false,
        n_even: false,
        ..cfg
    }
    .deepest()
}

/// Sixteen random group sizes below `max`, every fifth group empty.
fn ragged(ctx: &mut GpuCtx, max: u64) -> Vec<usize> {
    (0..16)
        .map(|g| {
            if g % 5 == 4 {
                0
            } else {
                (ctx.rng.next_u64() % max) as usize
            }
        })
        .collect()
}

/// Runs every case of `grouping`; the report's error is the worst relative Frobenius error.
pub fn run_form(ctx: &mut GpuCtx, grouping: Grouping) -> RunResult {
    let bench = bench_configs(grouping);
    let (large, narrow) = (bench[0], bench[4]);
    let registers_odd = registers_odd(large);
    let ragged = ragged(ctx, 300);
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
    let mut tally = Tally::default();
    for (cfg, sizes, cap, n, k) in cases {
        let gemm = GroupedGemm::new(&ctx.dev, cfg)?;
        let (rows, m) = rows_of(&sizes, cap);
        let o = run_case(ctx, &gemm, &rows, m, (n, k))?;
        tally.add(
            &format!("gemm_grouped {grouping:?}"),
            &cfg,
            &rows,
            (m, n, k),
            &o,
        )?;
    }
    refusals(ctx, large)?;
    Ok(tally.report())
}

/// The row array and M of a case: cumulative `offs` and M_total of group `sizes` (contiguous),
/// or the counts themselves and the capacity `cap` (masked).
fn rows_of(sizes: &[usize], cap: Option<usize>) -> (Vec<i32>, usize) {
    match cap {
        Some(cap) => (sizes.iter().map(|&s| s as i32).collect(), cap),
        None => (offs(sizes), sizes.iter().sum()),
    }
}

/// The cases' outcomes so far: the worst error and one line per case.
#[derive(Default)]
struct Tally {
    worst: f64,
    lines: Vec<String>,
}

impl Tally {
    /// Adds a case's outcome, or fails `check` with it: every element of the groups' rows
    /// written and within [`CheckResult::TOLERANCE`], none past a count.
    fn add(
        &mut self,
        check: &str,
        cfg: &GemmConfig,
        rows: &[i32],
        (m, n, k): (usize, usize, usize),
        o: &Outcome,
    ) -> Result<(), GpuCheckError> {
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
                check: check.into(),
                detail: format!(
                    "{line}, {} unwritten, {} written past a count; rows {rows:?}",
                    o.unwritten, o.overwritten
                ),
            });
        }
        self.worst = self.worst.max(o.rel_error);
        self.lines.push(line);
        Ok(())
    }

    /// The report: the worst error, the cases' lines and the refusals.
    fn report(self) -> Report {
        Report {
            max_err: self.worst,
            tolerance: CheckResult::TOLERANCE,
            detail: format!("{}; bad operands refused", self.lines.join("; ")),
        }
    }
}

/// Runs every block-scaled FP8 case of `grouping`; the report's error is the worst relative
/// Frobenius error against the f64 reference.
pub fn run_block_form(ctx: &mut GpuCtx, grouping: Grouping) -> RunResult {
    let bench = fp8_bench_configs(grouping);
    // Pipelined (128 wide), not pipelined, the 64-wide tile (pipelined).
    let (pp, plain, narrow) = (bench[0], bench[1], bench[4]);
    let registers_odd = registers_odd(pp);
    let e5 = GemmConfig {
        input: ScalarType::E5m2,
        ..plain
    };
    let ragged = ragged(ctx, 200);
    // k-tile counts 3 (272 = 2 x 128 + 16, a partial last k-block), 4, 5, 1, 2, 9.
    let cases: Vec<Case> = match grouping {
        Grouping::Masked => vec![
            (pp, vec![0, 200, 77, 129], Some(200), 264, 272),
            (pp, vec![1], Some(333), 136, 128),
            // Counts past the capacity are clamped to it; odd N from registers.
            (registers_odd, vec![64, 3, 90], Some(64), 97, 160),
            (narrow, ragged, Some(200), 256, 528),
            (plain, vec![130, 0, 255], Some(256), 384, 400),
        ],
        _ => vec![
            (pp, vec![0, 1, 300, 128, 257, 0], None, 520, 272),
            (plain, vec![0, 1, 300, 128, 257, 0], None, 520, 400),
            (narrow, vec![333], None, 136, 144),
            (registers_odd, vec![130, 0, 70], None, 199, 160),
            (pp, ragged, None, 256, 1040),
            (e5, vec![129, 127, 600], None, 392, 256),
        ],
    };
    let mut tally = Tally::default();
    for (cfg, sizes, cap, n, k) in cases {
        let gemm = GroupedGemm::new(&ctx.dev, cfg)?;
        let (rows, m) = rows_of(&sizes, cap);
        let o = match cfg.input {
            ScalarType::E5m2 => {
                let codec: Codec<E5m2> = (E5m2::from_f32, E5m2::to_f32);
                run_block_case(ctx, &gemm, &rows, m, (n, k), codec)?
            }
            _ => {
                let codec: Codec<E4m3> = (E4m3::from_f32, E4m3::to_f32);
                run_block_case(ctx, &gemm, &rows, m, (n, k), codec)?
            }
        };
        let check = format!("gemm_grouped_fp8_block {grouping:?}");
        tally.add(&check, &cfg, &rows, (m, n, k), &o)?;
    }
    block_refusals(ctx, pp)?;
    Ok(tally.report())
}

/// What a block-scaled grouped launch must refuse before anything runs: no scales
/// ([`GemmError::ScalingMismatch`]), `scale_a` transposed, `scale_b` without its group
/// dimension, and an 8-bit K of 8 (not 16 bytes), each as the operand error naming it.
fn block_refusals(ctx: &mut GpuCtx, cfg: GemmConfig) -> Result<(), GpuCheckError> {
    let gemm = GroupedGemm::new(&ctx.dev, cfg)?;
    let masked = cfg.grouping == Grouping::Masked;
    let stream = ctx.stream.clone();
    let (groups, m, n) = (2usize, 128usize, 256usize);
    let a_rows = if masked { groups * m } else { m };
    let zeros = |len: usize| vec![E4m3::from_f32(0.0); len];
    let ones = |shape: Vec<usize>| {
        let len = shape.iter().product();
        DeviceTensor::from_host(&stream, &vec![1.0f32; len], shape)
    };
    for (k, want) in [
        (256usize, "no scales"),
        (256, "scale_a"),
        (256, "scale_b"),
        (8, "a"),
    ] {
        let (kb, nb) = (k.div_ceil(128), n.div_ceil(128));
        let (a_shape, sa_shape, c_shape) = if masked {
            (vec![groups, m, k], vec![groups, kb, m], vec![groups, m, n])
        } else {
            (vec![m, k], vec![kb, m], vec![m, n])
        };
        let a = DeviceTensor::from_host(&stream, &zeros(a_rows * k), a_shape)?;
        let b = DeviceTensor::from_host(&stream, &zeros(groups * n * k), vec![groups, n, k])?;
        let r = DeviceTensor::from_host(&stream, &[0i32; 2], vec![groups])?;
        let mut c = DeviceTensor::from_host(&stream, &vec![bf16::ZERO; a_rows * n], c_shape)?;
        let (sa, sb) = match want {
            "scale_a" => (ones(vec![m, kb])?, ones(vec![groups, nb, kb])?),
            "scale_b" => (ones(sa_shape)?, ones(vec![nb, kb])?),
            _ => (ones(sa_shape)?, ones(vec![groups, nb, kb])?),
        };
        let (a, b, r) = (
            TensorRef::from(&a),
            TensorRef::from(&b),
            TensorRef::from(&r),
        );
        let c = TensorMut::from(&mut c);
        let got = match want {
            "no scales" => gemm.run(&stream, &a, &b, &r, None, c),
            _ => {
                let scales = [&TensorRef::from(&sa), &TensorRef::from(&sb)];
                gemm.run(&stream, &a, &b, &r, Some(scales), c)
            }
        };
        let refused = match &got {
            Err(GroupedGemmError::Gemm(GemmError::ScalingMismatch { .. })) => want == "no scales",
            Err(GroupedGemmError::Operand { operand, .. }) => *operand == want,
            _ => false,
        };
        if !refused {
            return Err(GpuCheckError::Unexpected {
                check: format!("gemm_grouped_fp8_block refusal ({want})"),
                detail: format!("want it refused, got {got:?}"),
            });
        }
    }
    Ok(())
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
            None,
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
