//! The row kernels' GPU check behind `ptxkit selftest` (`row_kernels`): every op of
//! [`crate::library::rows`] on f32, f16 and bf16 rows of 1, 7, 1000, 4097, 8192, 40001, 65536
//! and 262144 columns (the last three in a cluster or walked in tiles; the vector form where
//! the width divides the columns, the scalar form elsewhere), and the variants the bench sweeps
//! (cache hints; the looped form in small tiles; a persistent grid over more rows than it holds
//! CTAs; several rows a CTA, a warp or a warpgroup each; LayerNorm of offset rows) at 1 to
//! 262144 columns, fresh random data, outputs
//! poisoned, against the library's f64 host reference ([`rows::reference`]) computed from the
//! rounded inputs; errors are relative (`|got - want| / (|want| + 1e-4)`).

use ptx_isa::ty;

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use crate::kernel::Elem;
use crate::library::rows::{
    self, RowConfig, RowHints, RowKernel, RowOp, RowTensors, SwigluConfig, build_swiglu_halves,
    build_swiglu_with,
};
use crate::runtime::Arg;

/// The relative error of `got` against `want`, one row of outputs (NaN counts as infinite).
/// An element much smaller than the row's RMS is measured against 1% of that RMS instead
/// of itself: a LayerNorm output near zero is a difference of terms the size of the row,
/// and its rounding error is theirs, not its own.
/// `abs_floor` is the smallest magnitude an element is measured against: at least the
/// output type's smallest normal value (below it, f16 subnormals hold fewer bits), and for
/// a log-softmax 1% of the inputs' RMS (its outputs are differences of the inputs and the
/// row's log-sum-exp: a one-column row's exact 0 carries their rounding).
fn rel_err(got: &[f32], want: &[f64], abs_floor: f64) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    let rms = (want.iter().map(|w| w * w).sum::<f64>() / want.len().max(1) as f64).sqrt();
    let floor = (0.01 * rms).max(abs_floor);
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            let d = (f64::from(g) - w).abs() / w.abs().max(floor);
            if d.is_nan() { f64::INFINITY } else { d }
        })
        .fold(0.0, f64::max)
}

/// A host element type of the check: f32, f16 or bf16 data.
pub(crate) trait Host: crate::runtime::Element {
    /// The smallest normal value of the type.
    const MIN_NORMAL: f64;
    /// The check's relative tolerance for outputs of the type (its output rounding: 2^-8 for
    /// bf16, 2^-11 for f16, f32 within 2e-4).
    const TOL: f64;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
}
impl Host for f32 {
    const MIN_NORMAL: f64 = f32::MIN_POSITIVE as f64;
    const TOL: f64 = 2e-4;
    fn from_f32(x: f32) -> f32 {
        x
    }
    fn to_f32(self) -> f32 {
        self
    }
}
impl Host for half::f16 {
    const MIN_NORMAL: f64 = 6.103_515_625e-5; // 2^-14
    const TOL: f64 = 2e-3;
    fn from_f32(x: f32) -> half::f16 {
        half::f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
}
impl Host for half::bf16 {
    const MIN_NORMAL: f64 = f32::MIN_POSITIVE as f64; // bf16 keeps f32's exponent range
    const TOL: f64 = 1.6e-2;
    fn from_f32(x: f32) -> half::bf16 {
        half::bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}

/// `n` random values as `H`, and the values they hold back in f32 (the reference's input).
pub(crate) fn random<H: Host>(ctx: &mut GpuCtx, n: usize, scale: f32) -> (Vec<H>, Vec<f32>) {
    let h: Vec<H> = ctx
        .rng
        .vec_f32(n)
        .iter()
        .map(|v| H::from_f32(v * scale))
        .collect();
    let back = h.iter().map(|v| v.to_f32()).collect();
    (h, back)
}

/// Which configuration of a row kernel a check builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// The library's configuration of the op ([`RowConfig::for_op`]).
    Default,
    /// The default with every cache hint ([`RowHints::ReuseStreamOut`]).
    Hinted,
    /// The default with last reads not allocated in L1 ([`RowHints::NoAllocate`]).
    NoAllocate,
    /// The looped form with the smallest tile the bench sweeps (256 threads x 8 values) and
    /// cache hints: several tiles and a partial last one at these widths.
    LoopedHinted,
    /// The default (one CTA a row) with hints on a persistent grid: checked with more rows
    /// than the device holds CTAs, so CTAs take several rows each.
    Persistent,
    /// [`Variant::LoopedHinted`] on a persistent grid.
    PersistentLooped,
    /// Eight rows a 256-thread CTA, a warp each (reduced by shuffles alone); checked over a
    /// row count the CTAs do not divide.
    WarpRows,
    /// Four rows a 512-thread CTA, a warpgroup each (a named barrier per row).
    WarpgroupRows,
    /// The default with its rows packed ([`RowConfig::packed`]).
    Packed,
    /// 128 threads a row, packed, as many values a thread as the row needs (64 bf16 at 8192
    /// columns: the widest share the bench sweeps).
    PackedWide,
    /// [`Variant::WarpgroupRows`] packed.
    PackedWarpgroupRows,
    /// The default with hints and a bound of 4 CTAs an SM ([`RowConfig::min_ctas`]: ptxas
    /// spills what does not fit), packed.
    Bounded,
    /// The default on rows offset by 256 (LayerNorm: a mean 64 times the spread, where a
    /// variance from the sum of squares loses its digits).
    Shifted,
}

/// One op at one width over `T` data held as `H` on the host, built as `variant`: the largest
/// relative error over its outputs, and the case's shape and configuration (`rows x cols` and
/// [`RowConfig`]'s label) for the report.
fn one<T: Elem, H: Host>(
    ctx: &mut GpuCtx,
    op: RowOp,
    rows: usize,
    cols: usize,
    variant: Variant,
) -> Result<(f64, String), GpuCheckError> {
    let vector = cols % RowConfig::vec_for(T::TYPE) as usize == 0;
    let cfg = match variant {
        Variant::Default => RowConfig::for_op(op, T::TYPE, cols as u32, vector),
        Variant::Hinted => {
            RowConfig::for_cols(T::TYPE, cols as u32, vector).with_hints(RowHints::ReuseStreamOut)
        }
        Variant::NoAllocate => {
            RowConfig::for_cols(T::TYPE, cols as u32, vector).with_hints(RowHints::NoAllocate)
        }
        Variant::LoopedHinted => {
            RowConfig::looped_with(T::TYPE, vector, 256, 8).with_hints(RowHints::Reuse)
        }
        Variant::Persistent => RowConfig::for_cols(T::TYPE, cols as u32, vector)
            .with_hints(RowHints::Reuse)
            .on_persistent_grid(),
        Variant::PersistentLooped => RowConfig::looped_with(T::TYPE, vector, 256, 8)
            .with_hints(RowHints::Reuse)
            .on_persistent_grid(),
        Variant::WarpRows | Variant::WarpgroupRows | Variant::PackedWarpgroupRows => {
            let (threads, row_threads) = if variant == Variant::WarpRows {
                (256, 32)
            } else {
                (512, 128)
            };
            let vec = RowConfig::vec_for(T::TYPE);
            let values = (cols as u32).div_ceil(row_threads * vec) * vec;
            let c = RowConfig::for_cols(T::TYPE, cols as u32, vector).rows_of(
                threads,
                row_threads,
                values,
            );
            if variant == Variant::PackedWarpgroupRows {
                c.packed_form()
            } else {
                c
            }
        }
        Variant::Bounded => RowConfig::for_cols(T::TYPE, cols as u32, vector)
            .with_hints(RowHints::Reuse)
            .with_min_ctas(4)
            .packed_form(),
        Variant::Packed => RowConfig::for_cols(T::TYPE, cols as u32, vector).packed_form(),
        Variant::PackedWide => {
            let vec = RowConfig::vec_for(T::TYPE);
            let values = (cols as u32).div_ceil(128 * vec) * vec;
            RowConfig::for_cols(T::TYPE, cols as u32, vector)
                .rows_of(128, 128, values)
                .packed_form()
        }
        Variant::Shifted => RowConfig::for_cols(T::TYPE, cols as u32, vector),
    };
    let case = format!("{rows}x{cols} {cfg}");
    let k = RowKernel::build::<T>(ctx.target(), op, cfg)?;
    let loaded = ctx.load(&k.built)?;
    let (hx, fx) = if variant == Variant::Shifted {
        let (_, f) = random::<H>(ctx, rows * cols, 4.0);
        let h: Vec<H> = f.iter().map(|v| H::from_f32(v + 256.0)).collect();
        let back = h.iter().map(|v| v.to_f32()).collect::<Vec<f32>>();
        (h, back)
    } else {
        random::<H>(ctx, rows * cols, 4.0)
    };
    let (hres, fres) = random::<H>(ctx, rows * cols, 1.0);
    let (hw, fw) = random::<H>(ctx, cols, 1.0);
    let (hb, fb) = random::<H>(ctx, cols, 1.0);
    let mut t = RowTensors {
        x: ctx.upload(&hx, &[rows, cols])?,
        residual: ctx.upload(&hres, &[rows, cols])?,
        w: ctx.upload(&hw, &[cols])?,
        b: ctx.upload(&hb, &[cols])?,
        y: ctx.upload(&vec![H::from_f32(f32::NAN); rows * cols], &[rows, cols])?,
        mean: ctx.poisoned(&[rows])?,
        rstd: ctx.poisoned(&[rows])?,
    };
    op.launch(&loaded, &ctx.stream, &mut t)?;
    let f32s = |v: Vec<H>| v.into_iter().map(H::to_f32).collect::<Vec<f32>>();
    let gy = f32s(ctx.download(&t.y)?);
    let gres = f32s(ctx.download(&t.residual)?);
    let (gmean, grstd) = (ctx.download(&t.mean)?, ctx.download(&t.rstd)?);
    let mut err = 0.0f64;
    for r in 0..rows {
        let span = r * cols..(r + 1) * cols;
        let with_res = matches!(op, RowOp::ResidualRmsNorm { .. });
        let (wy, wres, (m, s)) = rows::reference(
            op,
            &fx[span.clone()],
            if with_res { &fres[span.clone()] } else { &[] },
            &fw,
            &fb,
        );
        let floor = if op == RowOp::LogSoftmax {
            let xs = &fx[span.clone()];
            let rms =
                (xs.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
            (0.01 * rms).max(H::MIN_NORMAL)
        } else {
            H::MIN_NORMAL
        };
        // Rows offset by 256: the mean is held in f32, whose rounding at 256 is 64 times that
        // at the rows' spread, and `y = (x - mean) rstd w + b` carries it times `rstd`: a
        // rounding of the mean the f64 reference does not have (2 ulps of 256 are 8 times the
        // f32 tolerance). So y is checked against the reference taken with the kernel's own
        // statistics, and the statistics against the exact ones below (the variance's
        // cancellation, what these rows are for, shows in `rstd`).
        let wy = if variant == Variant::Shifted {
            let (gm, gs) = (f64::from(gmean[r]), f64::from(grstd[r]));
            fx[span.clone()]
                .iter()
                .zip(fw.iter().zip(&fb))
                .map(|(&v, (&w, &b))| (f64::from(v) - gm) * gs * f64::from(w) + f64::from(b))
                .collect()
        } else {
            wy
        };
        err = err.max(rel_err(&gy[span.clone()], &wy, floor));
        if with_res {
            err = err.max(rel_err(&gres[span.clone()], &wres, H::MIN_NORMAL));
        }
        if let RowOp::LayerNorm { .. } = op {
            // A mean is a sum: its error is relative to the size of the values summed, not to
            // the mean itself, which can be near 0 (one of 3000 random rows was: 7x the
            // tolerance relative to its own tiny mean).
            let xs = &fx[span.clone()];
            let rms = (xs.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / cols as f64).sqrt();
            err = err.max(rel_err(&gmean[r..=r], &[m], rms)).max(rel_err(
                &grstd[r..=r],
                &[s],
                f64::from(f32::MIN_POSITIVE),
            ));
        }
    }
    Ok((err, case))
}

/// SwiGLU on `rows x cols` of `T` (held as `H`): separate gate and up, and the two halves of
/// one `[rows, 2, cols]` tensor; the largest relative error of either.
fn swiglu_one<T: Elem, H: Host>(
    ctx: &mut GpuCtx,
    rows: usize,
    cols: usize,
) -> Result<f64, GpuCheckError> {
    let n = rows * cols;
    let (hg, fg) = random::<H>(ctx, n, 4.0);
    let (hu, fu) = random::<H>(ctx, n, 1.0);
    let want: Vec<f64> = fg
        .iter()
        .zip(&fu)
        .map(|(&g, &u)| {
            let g = f64::from(g);
            g / (1.0 + (-g).exp()) * f64::from(u)
        })
        .collect();
    let vector = cols % RowConfig::vec_for(T::TYPE) as usize == 0;
    let poison = vec![H::from_f32(f32::NAN); n];
    // Separate tensors, flat: the default spread, and 4 streamed accesses a thread (the
    // widest the bench sweeps; several partial CTAs at these sizes).
    let (g, u) = (ctx.upload(&hg, &[n])?, ctx.upload(&hu, &[n])?);
    let mut err = 0.0f64;
    for cfg in [
        SwigluConfig::default(),
        SwigluConfig {
            threads: 128,
            vectors: 4,
            hints: true,
        },
    ] {
        let k = ctx.load(&build_swiglu_with::<T>(ctx.target(), vector, cfg)?)?;
        let mut y = ctx.upload(&poison, &[n])?;
        k.launch(
            &ctx.stream,
            &mut [Arg::tensor(&g), Arg::tensor(&u), Arg::tensor_mut(&mut y)],
        )?;
        let got: Vec<f32> = ctx.download(&y)?.into_iter().map(H::to_f32).collect();
        err = err.max(rel_err(&got, &want, H::MIN_NORMAL));
    }
    // Halves of one tensor: row r is gate row r then up row r.
    let halves: Vec<H> = hg
        .chunks(cols)
        .zip(hu.chunks(cols))
        .flat_map(|(g, u)| g.iter().chain(u).copied())
        .collect();
    let k = ctx.load(&build_swiglu_halves::<T>(ctx.target(), vector)?)?;
    let x = ctx.upload(&halves, &[rows, 2, cols])?;
    let mut y = ctx.upload(&poison, &[rows, cols])?;
    k.launch(&ctx.stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y)])?;
    let got: Vec<f32> = ctx.download(&y)?.into_iter().map(H::to_f32).collect();
    err = err.max(rel_err(&got, &want, H::MIN_NORMAL));
    Ok(err)
}

/// One case of a check: an op built as a variant over `rows x cols`.
#[derive(Debug, Clone, Copy)]
struct At {
    op: RowOp,
    rows: usize,
    cols: usize,
    variant: Variant,
}

/// The cases of a check: each one's error as a fraction of its dtype's tolerance, the worst and
/// where it was, and every case over its tolerance, named (op, dtype, variant, rows x cols,
/// configuration).
#[derive(Default)]
struct Tally {
    worst: (f64, String),
    failed: Vec<String>,
    cases: usize,
}

impl Tally {
    fn note(&mut self, err: f64, tol: f64, case: String) {
        let ratio = if err.is_nan() {
            f64::INFINITY
        } else {
            err / tol
        };
        self.cases += 1;
        if ratio > 1.0 {
            self.failed.push(format!("FAIL {case} err/tol {ratio:.3e}"));
        }
        if ratio > self.worst.0 {
            self.worst = (ratio, case);
        }
    }

    /// `at`'s case over f32 and over bf16, each noted.
    fn f32_and_bf16(&mut self, ctx: &mut GpuCtx, at: At) -> Result<(), GpuCheckError> {
        self.case::<ty::F32, f32>(ctx, at)?;
        self.case::<ty::Bf16, half::bf16>(ctx, at)
    }

    /// `at`'s case over `T` (held as `H`), noted against `H`'s tolerance.
    fn case<T: Elem, H: Host>(&mut self, ctx: &mut GpuCtx, at: At) -> Result<(), GpuCheckError> {
        let At {
            op,
            rows,
            cols,
            variant,
        } = at;
        let (e, c) =
            one::<T, H>(ctx, op, rows, cols, variant).map_err(|e| GpuCheckError::Case {
                case: format!("{op:?} {variant:?} cols {cols}"),
                source: Box::new(e),
            })?;
        let d = T::TYPE.to_string();
        let d = d.trim_start_matches('.');
        self.note(e, H::TOL, format!("{} {d} {variant:?} {c}", op.name()));
        Ok(())
    }

    /// The report: the cases over their tolerance lead the line (`; `-separated, so a script
    /// can list them), then what was checked, then the worst case.
    fn report(self, what: &str) -> Report {
        let over = if self.failed.is_empty() {
            String::new()
        } else {
            format!(
                "{} of {} cases over tolerance: {}; ",
                self.failed.len(),
                self.cases,
                self.failed.join("; ")
            )
        };
        Report {
            max_err: self.worst.0,
            tolerance: 1.0,
            detail: format!(
                "{over}{what}; error as a fraction of the dtype's tolerance, worst: {}",
                self.worst.1
            ),
        }
    }
}

/// Every op and width, f32, f16 and bf16; each dtype's error against its own tolerance (its
/// output rounding: 2^-8 for bf16, 2^-11 for f16, f32 within 2e-4).
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let mut tally = Tally::default();
    for op in RowOp::ALL {
        for cols in [1usize, 7, 1000, 4096, 4097, 8192, 40_001, 65_536, 262_144] {
            let at = At {
                op,
                rows: 3,
                cols,
                variant: Variant::Default,
            };
            tally.case::<ty::F16, half::f16>(ctx, at)?;
            tally.f32_and_bf16(ctx, at)?;
        }
        // The variants the bench sweeps: cache hints on the register and cluster forms, and the
        // looped form in small tiles (f32, and bf16 for the 16-bit path).
        for (variant, rows, widths) in [
            (
                Variant::Hinted,
                3,
                &[1usize, 7, 1000, 4097, 8192, 65_536][..],
            ),
            (Variant::NoAllocate, 3, &[7, 1000, 8192][..]),
            (Variant::LoopedHinted, 3, &[1, 7, 1000, 4097, 8192][..]),
            // More rows than resident CTAs (132 SMs x at most 16 CTAs on an H100).
            (Variant::Persistent, 3000, &[7, 1000][..]),
            (Variant::PersistentLooped, 2000, &[4097][..]),
            (Variant::WarpRows, 2999, &[7, 1000][..]),
            (Variant::WarpgroupRows, 2999, &[7, 1000, 4096][..]),
            (Variant::Shifted, 3, &[1000, 8192, 65_536, 262_144][..]),
        ] {
            if variant == Variant::Shifted && !matches!(op, RowOp::LayerNorm { .. }) {
                continue;
            }
            for &cols in widths {
                tally.f32_and_bf16(
                    ctx,
                    At {
                        op,
                        rows,
                        cols,
                        variant,
                    },
                )?;
            }
        }
    }
    for cols in [1usize, 7, 1000, 4097] {
        let at = |e: GpuCheckError| GpuCheckError::Case {
            case: format!("swiglu cols {cols}"),
            source: Box::new(e),
        };
        let e = swiglu_one::<ty::F32, f32>(ctx, 3, cols).map_err(at)?;
        tally.note(e, f32::TOL, format!("swiglu f32 3x{cols}"));
        let e = swiglu_one::<ty::Bf16, half::bf16>(ctx, 3, cols).map_err(at)?;
        tally.note(e, half::bf16::TOL, format!("swiglu bf16 3x{cols}"));
    }
    Ok(tally.report(
        "softmax, log-softmax, rmsnorm, residual rmsnorm, layernorm (f32/f16/bf16; cols 1, 7, 1000, 4097, 8192 in one CTA, 40001 and 65536 in a cluster, 262144 looped; f32/bf16 with cache hints at 1 to 65536 and L1::no_allocate at 7 to 8192, looped in 2048-column tiles with hints at 1 to 8192, on a persistent grid over 2000-3000 rows at 7 to 4097, 8 rows a CTA of a warp each at 7 and 1000 and 4 of a warpgroup each at 7 to 4096 over 2999 rows; layernorm of rows offset by 256 at 1000 to 262144); swiglu both forms (f32/bf16; the flat one also 128 threads x 4 streamed accesses)",
    ))
}

/// The packed form of the norms ([`RowConfig::packed`]; `row_kernels_packed`, small enough
/// for compute-sanitizer): every op with hints, packed and bounded to 4 CTAs an SM (spilling)
/// at 7, 1000 and 8192 columns (f32 and bf16); the default packed at 1 to 8192 columns (f32
/// and bf16), 128 threads a row packed at 1000 to 8192 (bf16: 64 values a thread at 8192),
/// and 4 rows a 512-thread CTA of a warpgroup each, packed, over 2999 rows at 7 to 4096.
pub fn run_packed(ctx: &mut GpuCtx) -> RunResult {
    let mut tally = Tally::default();
    for op in RowOp::ALL {
        // (variant, rows, widths, whether f32 too): softmax only bounded (packing leaves it be).
        for (variant, rows, widths, f32_too) in [
            (Variant::Bounded, 3, &[7usize, 1000, 8192][..], true),
            (Variant::Packed, 3, &[1, 7, 1000, 4097, 8192][..], true),
            (Variant::PackedWide, 3, &[1000, 4096, 8192][..], false),
            (
                Variant::PackedWarpgroupRows,
                2999,
                &[7, 1000, 4096][..],
                true,
            ),
        ] {
            let norm = !matches!(op, RowOp::Softmax | RowOp::LogSoftmax);
            if variant != Variant::Bounded && !norm {
                continue;
            }
            for &cols in widths {
                let at = At {
                    op,
                    rows,
                    cols,
                    variant,
                };
                if f32_too {
                    tally.case::<ty::F32, f32>(ctx, at)?;
                }
                tally.case::<ty::Bf16, half::bf16>(ctx, at)?;
            }
        }
    }
    Ok(tally.report(
        "every op packed with a 4-CTA register bound at cols 7, 1000, 8192 (f32/bf16); rmsnorm, residual rmsnorm, layernorm packed (f32/bf16 default at cols 1, 7, 1000, 4097, 8192; bf16 128 threads a row at 1000, 4096, 8192; f32/bf16 4 rows a CTA of a warpgroup each over 2999 rows at 7, 1000, 4096)",
    ))
}
