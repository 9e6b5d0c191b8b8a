//! `elementwise.registers`: `dst = f(a, b)` over f32 register tiles that hold the same fragment
//! (the same thread-value layout, register for register), one `mul`/`fma`/`add`/`max` per
//! register (PTX ISA 9.7.3 floating-point instructions), or `ex2`/`rcp`/`rsqrt` approximations
//! (9.7.3.17-9.7.3.21). What a GEMM epilogue applies between its accumulators and C (`alpha * acc
//! + beta * C`, a scale, a bias add, a ReLU) and what an online softmax applies to a score tile
//! (`2^(s * scale - max * scale)`, a rescale).

use ptx_isa::{FunctionBuilder, Reg, RegClass, Result, ScalarType, ty};

use super::common::registers_variant;
use crate::tile::op::{Elementwise, OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, TileRef};
use crate::tile::registry::{Plan, Planned, Variant};
use crate::tile::reject::{Aspect, Rejection};

fn f32_regs(t: &TileRef, what: &str) -> std::result::Result<Vec<Reg<ty::F32>>, Rejection> {
    let Base::Registers(r) = &t.base else {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!("{what} is not a register tile"),
        ));
    };
    let not_f32 = || Rejection::operand(Aspect::Registers, format!("{what} is not f32 registers"));
    if t.dtype != ScalarType::F32 || r.iter().any(|x| x.class != RegClass::F32) {
        return Err(not_f32());
    }
    r.iter()
        .map(|x| x.retype::<ty::F32>().map_err(|_| not_f32()))
        .collect()
}

/// What the registers compute, register by register: `y` is `b`'s register for the binary
/// functions.
#[derive(Debug, Clone, Copy)]
enum Step {
    Scale(ptx_isa::Src<ty::F32>),
    Axpby(Reg<ty::F32>, ptx_isa::Src<ty::F32>, ptx_isa::Src<ty::F32>),
    Add(Reg<ty::F32>),
    Mul(Reg<ty::F32>),
    Relu,
    Max(Reg<ty::F32>),
    Min(Reg<ty::F32>),
    Sub(Reg<ty::F32>),
    Fma(Reg<ty::F32>, ptx_isa::Src<ty::F32>),
    Exp2(ptx_isa::Src<ty::F32>, ptx_isa::Src<ty::F32>),
    Rcp,
    Rsqrt,
}

/// `dst[i] = f(a[i], b[i])` for every register `i`.
struct Registers {
    steps: Vec<(Reg<ty::F32>, Reg<ty::F32>, Step)>,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let TileOp::Elementwise { dst, a, b, f } = &ctx.op else {
        return Err(Rejection::operand(Aspect::Op, "not an elementwise op"));
    };
    let d = f32_regs(dst, "dst")?;
    let ar = f32_regs(a, "a")?;
    if ar.len() != d.len() || a.fragment != dst.fragment || a.shape != dst.shape {
        return Err(Rejection::operand(
            Aspect::Fragment,
            "a and dst hold different fragments",
        ));
    }
    let br = match (f.binary(), b) {
        (true, Some(b)) => {
            let br = f32_regs(b, "b")?;
            if br.len() != d.len() || b.fragment != dst.fragment || b.shape != dst.shape {
                return Err(Rejection::operand(
                    Aspect::Fragment,
                    "b and dst hold different fragments",
                ));
            }
            br
        }
        (true, None) => return Err(Rejection::operand(Aspect::Op, format!("{f} needs b"))),
        (false, Some(_)) => {
            return Err(Rejection::operand(Aspect::Op, format!("{f} takes no b")));
        }
        (false, None) => Vec::new(),
    };
    let steps = (0..d.len())
        .map(|i| {
            let step = match f {
                Elementwise::Scale { alpha } => Step::Scale(*alpha),
                Elementwise::Axpby { alpha, beta } => Step::Axpby(br[i], *alpha, *beta),
                Elementwise::Add => Step::Add(br[i]),
                Elementwise::Mul => Step::Mul(br[i]),
                Elementwise::Relu => Step::Relu,
                Elementwise::Max => Step::Max(br[i]),
                Elementwise::Min => Step::Min(br[i]),
                Elementwise::Sub => Step::Sub(br[i]),
                Elementwise::Fma { scale } => Step::Fma(br[i], *scale),
                Elementwise::Exp2 { scale, bias } => Step::Exp2(*scale, *bias),
                Elementwise::Rcp => Step::Rcp,
                Elementwise::Rsqrt => Step::Rsqrt,
            };
            (d[i], ar[i], step)
        })
        .collect();
    Ok(Box::new(Registers { steps }))
}

/// The registration.
pub const VARIANT: Variant = registers_variant(OpKind::Elementwise, "elementwise.registers", plan);

impl Plan for Registers {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        for &(d, x, step) in &self.steps {
            match step {
                Step::Scale(alpha) => k.mul(d, x, alpha)?,
                Step::Axpby(y, alpha, beta) => {
                    // alpha * a + beta * b: the b term first, so `dst` may be `a`.
                    let t = k.reg::<ty::F32>();
                    k.mul(t, y, beta)?;
                    k.fma(d, x, alpha, t)?;
                }
                Step::Add(y) => k.add(d, x, y)?,
                Step::Mul(y) => k.mul(d, x, y)?,
                Step::Relu => k.max(d, x, 0.0f32)?,
                Step::Max(y) => k.max(d, x, y)?,
                Step::Min(y) => k.min(d, x, y)?,
                Step::Sub(y) => k.sub(d, x, y)?,
                Step::Fma(y, scale) => k.fma(d, x, scale, y)?,
                Step::Exp2(scale, bias) => {
                    k.fma(d, x, scale, bias)?;
                    k.ex2(d, d)?;
                }
                Step::Rcp => k.rcp_approx(d, x)?,
                Step::Rsqrt => k.rsqrt(d, x)?,
            }
        }
        Ok(())
    }
}
