//! `elementwise.registers`: `dst = f(a, b)` over f32 register tiles that hold the same fragment
//! (the same thread-value layout, register for register), one `mul`/`fma`/`add`/`max` per
//! register (PTX ISA 9.7.3 floating-point instructions). What a GEMM epilogue applies between its
//! accumulators and C: `alpha * acc + beta * C`, a scale, a bias add, a ReLU.

use ptx_isa::{FunctionBuilder, Reg, RegClass, Result, ScalarType, TargetSet, ty};

use super::common::scope_in;
use crate::tile::op::{Elementwise, OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, TileRef};
use crate::tile::registry::{Predicate, Variant};

fn f32_regs<'a>(t: &'a TileRef, what: &str) -> std::result::Result<&'a [ptx_isa::RegRef], String> {
    let Base::Registers(r) = &t.base else {
        return Err(format!("{what} is not a register tile"));
    };
    if t.dtype != ScalarType::F32 || r.iter().any(|x| x.class != RegClass::F32) {
        return Err(format!("{what} is not f32 registers"));
    }
    Ok(r)
}

fn check(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let TileOp::Elementwise { dst, a, b, f } = &ctx.op else {
        return Err("not an elementwise op".into());
    };
    let d = f32_regs(dst, "dst")?;
    let ar = f32_regs(a, "a")?;
    if ar.len() != d.len() || a.fragment != dst.fragment || a.shape != dst.shape {
        return Err("a and dst hold different fragments".into());
    }
    match (f.binary(), b) {
        (true, Some(b)) => {
            let br = f32_regs(b, "b")?;
            if br.len() != d.len() || b.fragment != dst.fragment || b.shape != dst.shape {
                return Err("b and dst hold different fragments".into());
            }
        }
        (true, None) => return Err(format!("{f} needs b")),
        (false, Some(_)) => return Err(format!("{f} takes no b")),
        (false, None) => {}
    }
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Elementwise,
    name: "elementwise.registers",
    targets: TargetSet::all(),
    priority: 10,
    views: false,
    predicates: &[
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread", "warp", "warpgroup", "cta"]),
        },
        Predicate {
            name: "registers",
            check,
        },
    ],
    lower,
};

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let invalid = |m: String| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, m);
    check(ctx).map_err(invalid)?;
    let TileOp::Elementwise { dst, a, b, f } = &ctx.op else {
        return Err(invalid("not an elementwise op".into()));
    };
    let reg = |t: &TileRef, i: usize| -> Option<Reg<ty::F32>> {
        match &t.base {
            Base::Registers(r) => r.get(i).map(|x| Reg::<ty::F32>::from_index(x.index)),
            _ => None,
        }
    };
    let n = match &dst.base {
        Base::Registers(r) => r.len(),
        _ => 0,
    };
    for i in 0..n {
        let (Some(d), Some(x)) = (reg(dst, i), reg(a, i)) else {
            return Err(invalid(format!("register {i} is missing")));
        };
        let y = b.and_then(|b| reg(b, i));
        match (f, y) {
            (Elementwise::Scale { alpha }, _) => k.mul(d, x, *alpha)?,
            (Elementwise::Axpby { alpha, beta }, Some(y)) => {
                // alpha * a + beta * b: the b term first, so `dst` may be `a`.
                let t = k.reg::<ty::F32>();
                k.mul(t, y, *beta)?;
                k.fma(d, x, *alpha, t)?;
            }
            (Elementwise::Add, Some(y)) => k.add(d, x, y)?,
            (Elementwise::Mul, Some(y)) => k.mul(d, x, y)?,
            (Elementwise::Relu, _) => k.max(d, x, 0.0f32)?,
            _ => return Err(invalid(format!("{f} needs b"))),
        }
    }
    Ok(())
}
