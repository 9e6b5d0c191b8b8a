//! GPU check of the tile ops a GEMM epilogue is made of, on a block at the edge of a matrix:
//! `copy.fragment_view` (registers ↔ a global block with a run-time pitch and bounds),
//! `cast.registers` both ways and `elementwise.registers`.
//!
//! A warpgroup holds a 64 x 64 block in the wgmma accumulator fragment. It loads `c` (bf16, as
//! packed pairs) and `x` (f32) from the block at `(row0, col0)` of matrices with `pitch` columns,
//! of which only `rows x cols` exist, computes `out = bf16(relu(alpha * x + beta * c))` and stores
//! it into the same block of `out`. Elements outside the bounds must read as zero and must not be
//! written. Two pitches: an odd one (each bf16 pair goes as two 16-bit halves) and a multiple of 8
//! (pairs as 32-bit words, f32 as `.v2`).

use ptx_isa::{RegRef, ScalarType, Target, ty};

use super::ctx::{GpuCtx, Report, RunResult};
use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Ptr, Result, TensorOpts};
use crate::runtime::Arg;
use crate::tile::{Elementwise, ExecScope, RunCount, TileOp, TileRef};

/// The block's side.
const B: u32 = 64;

fn op(k: &mut KernelBuilder, op: TileOp<'_>) -> Result<&'static str> {
    super::tile_checks::op(k, op, ExecScope::Warpgroup)
}

/// The kernel `tile_epilogue(c, x, out, pitch, row0, col0, rows, cols, alpha, beta)` for pitches
/// that are multiples of `pitch_multiple` (and `col0` of the same multiple).
pub fn build_for(target: Target, pitch_multiple: u32) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new(&format!("tile_epilogue_p{pitch_multiple}"), target);
    let len = k.symbol("len")?;
    let opts = TensorOpts::default().align(16);
    let c = k.tensor::<ty::Bf16>("c", [Expr::from(len)], opts.clone())?;
    let x = k.tensor::<ty::F32>("x", [Expr::from(len)], opts.clone())?;
    let out = k.tensor::<ty::Bf16>("out", [Expr::from(len)], opts)?;
    let pitch = k.scalar::<ty::U32>("pitch")?;
    let row0 = k.scalar::<ty::U32>("row0")?;
    let col0 = k.scalar::<ty::U32>("col0")?;
    let rows = k.scalar::<ty::U32>("rows")?;
    let cols = k.scalar::<ty::U32>("cols")?;
    let alpha = k.scalar::<ty::F32>("alpha")?;
    let beta = k.scalar::<ty::F32>("beta")?;
    let [_t] = k.thread_id([128])?;
    let ptr = |k: &KernelBuilder, p: Option<Ptr>| match p {
        Some(Ptr::Global(r)) => Ok(r),
        _ => Err(k.error("a global tensor expected")),
    };
    let (pc, px, po) = (ptr(&k, c.data())?, ptr(&k, x.data())?, ptr(&k, out.data())?);
    // The block's first element: (row0 * pitch + col0).
    let first = k.reg::<ty::U32>();
    k.mad_lo(first, row0, pitch, col0)?;
    let block = |k: &mut KernelBuilder, base, bytes: u32| -> Result<ptx_isa::Reg<ty::U64>> {
        let (off, at) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
        k.mul_wide(off, first, bytes)?;
        k.add(at, base, off)?;
        Ok(at)
    };
    let (bc, bx, bo) = (
        block(&mut k, pc, 2)?,
        block(&mut k, px, 4)?,
        block(&mut k, po, 2)?,
    );
    let m = pitch_multiple;
    // With an even pitch the column bound is even too (the runs below keep to that).
    let col_multiple = if m % 2 == 0 { 2 } else { 1 };
    let view = |dtype: ScalarType, base, bytes: u32| {
        TileRef::global_pitched(
            dtype,
            B,
            B,
            base,
            (m * bytes).min(16),
            RunCount::new(pitch, m),
        )
        .with_bounds(RunCount::new(rows, 1), RunCount::new(cols, col_multiple))
    };
    let (vc, vx, vo) = (
        view(ScalarType::Bf16, bc, 2),
        view(ScalarType::F32, bx, 4),
        view(ScalarType::Bf16, bo, 2),
    );
    let frag = layouts::fragment::wgmma::accumulator(B as i64, ptx_isa::ScalarType::Bf16)
        .map_err(|e| k.error(e.to_string()))?;
    let values = (B * B / 128) as usize;
    let f32s = |k: &mut KernelBuilder| -> Vec<RegRef> {
        k.regs::<ty::F32>(values)
            .into_iter()
            .map(|r| r.as_ref())
            .collect()
    };
    let pairs = |k: &mut KernelBuilder| -> Vec<RegRef> {
        k.regs::<ty::Bf16x2>(values / 2)
            .into_iter()
            .map(|r| r.as_ref())
            .collect()
    };
    let c_pairs = TileRef::registers(ScalarType::Bf16, frag.clone(), pairs(&mut k));
    let c_f32 = TileRef::registers(ScalarType::F32, frag.clone(), f32s(&mut k));
    let x_f32 = TileRef::registers(ScalarType::F32, frag.clone(), f32s(&mut k));
    let y = TileRef::registers(ScalarType::F32, frag.clone(), f32s(&mut k));
    let y_pairs = TileRef::registers(ScalarType::Bf16, frag, pairs(&mut k));
    op(
        &mut k,
        TileOp::Copy {
            dst: &c_pairs,
            src: &vc,
        },
    )?;
    op(
        &mut k,
        TileOp::Copy {
            dst: &x_f32,
            src: &vx,
        },
    )?;
    op(
        &mut k,
        TileOp::Cast {
            dst: &c_f32,
            src: &c_pairs,
        },
    )?;
    op(
        &mut k,
        TileOp::Elementwise {
            dst: &y,
            a: &x_f32,
            b: Some(&c_f32),
            f: Elementwise::Axpby {
                alpha: alpha.into(),
                beta: beta.into(),
            },
        },
    )?;
    op(
        &mut k,
        TileOp::Elementwise {
            dst: &y,
            a: &y,
            b: None,
            f: Elementwise::Relu,
        },
    )?;
    op(
        &mut k,
        TileOp::Cast {
            dst: &y_pairs,
            src: &y,
        },
    )?;
    op(
        &mut k,
        TileOp::Copy {
            dst: &vo,
            src: &y_pairs,
        },
    )?;
    k.finish()
}

/// The odd-pitch kernel (for `ptxkit dump` and the selftest list).
pub fn build(target: Target) -> Result<BuiltKernel> {
    build_for(target, 1)
}

/// One case: the pitch multiple the kernel assumes, the pitch, the block's origin and bounds.
struct Case {
    multiple: u32,
    pitch: usize,
    origin: (usize, usize),
    bounds: (usize, usize),
}

/// Runs both kernels on fresh random data and counts wrong elements (inside: the bf16 of the
/// reference, bit for bit; outside: the poison, untouched).
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let cases = [
        Case {
            multiple: 1,
            pitch: 83,
            origin: (5, 7),
            bounds: (41, 29),
        },
        Case {
            multiple: 8,
            pitch: 136,
            origin: (3, 64),
            bounds: (64, 50),
        },
        Case {
            multiple: 8,
            pitch: 96,
            origin: (70, 32),
            bounds: (64, 64),
        },
    ];
    let mut wrong = 0usize;
    let mut checked = 0usize;
    for case in &cases {
        let k = ctx.load(&build_for(ctx.target(), case.multiple)?)?;
        let total_rows = case.origin.0 + B as usize + 8;
        let len = total_rows * case.pitch;
        let hc: Vec<half::bf16> = ctx
            .rng
            .vec_f32(len)
            .into_iter()
            .map(half::bf16::from_f32)
            .collect();
        let hx = ctx.rng.vec_f32(len);
        let (alpha, beta) = (ctx.rng.f32() * 2.0, ctx.rng.f32() * 2.0 - 1.0);
        // A NaN no result can be: what an element the kernel must not touch keeps.
        const POISON: half::bf16 = half::bf16::from_bits(0x7FC1);
        let c = ctx.upload(&hc, &[len])?;
        let x = ctx.upload(&hx, &[len])?;
        let mut out = ctx.upload(&vec![POISON; len], &[len])?;
        let (r0, c0) = case.origin;
        let (rows, cols) = case.bounds;
        k.launch(
            &ctx.stream,
            &mut [
                Arg::tensor(&c),
                Arg::tensor(&x),
                Arg::tensor_mut(&mut out),
                (case.pitch as u32).into(),
                (r0 as u32).into(),
                (c0 as u32).into(),
                (rows as u32).into(),
                (cols as u32).into(),
                alpha.into(),
                beta.into(),
            ],
        )?;
        let got = ctx.download(&out)?;
        for (i, &g) in got.iter().enumerate() {
            let (r, col) = (i / case.pitch, i % case.pitch);
            let inside = (r0..r0 + rows.min(B as usize)).contains(&r)
                && (c0..c0 + cols.min(B as usize)).contains(&col);
            let want = if inside {
                let cv = hc[i].to_f32();
                let y = hx[i].mul_add(alpha, cv * beta).max(0.0);
                half::bf16::from_f32(y)
            } else {
                POISON
            };
            checked += 1;
            // Bits, not values: POISON is a NaN.
            if g.to_bits() != want.to_bits() {
                wrong += 1;
            }
        }
    }
    Ok(Report {
        max_err: wrong as f64,
        tolerance: 0.0,
        detail: format!(
            "64x64 edge blocks, pitches 83/136/96: copy.fragment_view, cast.registers, \
             elementwise.registers ({checked} elements, max err = wrong ones)"
        ),
    })
}
