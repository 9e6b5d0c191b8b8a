//! `fill.registers` (`mov` of a constant into every register of a register tile),
//! `fill.memory` (a dense shared/global tile, 4-byte stores spread over the scope's threads) and
//! `cast.registers` (f32 registers → packed bf16x2/f16x2 pairs, `cvt.rn.{bf16,f16}x2.f32`: PTX ISA
//! 9.7.9.21), the pieces a GEMM epilogue needs.

use ptx_isa::{Imm, RegClass, ScalarType, Src, TargetSet, ty};

use super::common::{address, scope_in, strided_loop, thread_index};
use crate::tile::op::{OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, Storage};
use crate::tile::registry::{Predicate, Variant};

fn fill_regs(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    match &ctx.op {
        TileOp::Fill { dst, .. }
            if dst.storage == Storage::Local && matches!(dst.base, Base::Registers(_)) =>
        {
            Ok(())
        }
        _ => Err("not a register tile".into()),
    }
}

fn fill_mem(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    match &ctx.op {
        TileOp::Fill { dst, .. } if matches!(dst.storage, Storage::Shared | Storage::Global) => {
            if !dst.is_contiguous()
                || dst.bytes() % 4 != 0
                || dst.align % 4 != 0
                || dst.dtype.bits() != 32
            {
                return Err("a dense, 4-byte aligned tile of 32-bit elements expected".into());
            }
            Ok(())
        }
        _ => Err("not a memory tile".into()),
    }
}

/// `fill.registers`.
pub const FILL_REGISTERS: Variant = Variant {
    op: OpKind::Fill,
    name: "fill.registers",
    targets: TargetSet::all(),
    priority: 10,
    predicates: &[Predicate {
        name: "storage",
        check: fill_regs,
    }],
    lower: |k, ctx| {
        let TileOp::Fill { dst, value } = &ctx.op else {
            return Ok(());
        };
        let Base::Registers(regs) = &dst.base else {
            return Ok(());
        };
        for r in regs {
            match r.class {
                RegClass::F32 => k.mov(
                    ptx_isa::Reg::<ty::F32>::from_index(r.index),
                    Src::Imm(*value),
                )?,
                RegClass::B64 => k.mov(
                    ptx_isa::Reg::<ty::B64>::from_index(r.index),
                    Src::Imm(*value),
                )?,
                RegClass::B16 => k.mov(
                    ptx_isa::Reg::<ty::B16>::from_index(r.index),
                    Src::Imm(*value),
                )?,
                _ => k.mov(
                    ptx_isa::Reg::<ty::B32>::from_index(r.index),
                    Src::Imm(*value),
                )?,
            }
        }
        Ok(())
    },
};

/// `fill.memory`.
pub const FILL_MEMORY: Variant = Variant {
    op: OpKind::Fill,
    name: "fill.memory",
    targets: TargetSet::all(),
    priority: 10,
    predicates: &[Predicate {
        name: "storage",
        check: fill_mem,
    }],
    lower: |k, ctx| {
        let TileOp::Fill { dst, value } = &ctx.op else {
            return Ok(());
        };
        let bits = match value {
            Imm::F32(b) => *b as u64,
            Imm::UInt(u) => *u,
            Imm::Int(i) => *i as u32 as u64,
            Imm::F64(_) => {
                return Err(ptx_isa::Error::new(
                    ptx_isa::ErrorKind::OperandType,
                    "a 32-bit fill value expected",
                ));
            }
        };
        let n = (dst.bytes() / 4) as u32;
        let t = thread_index(k, ctx.scope)?;
        strided_loop(k, t, n, ctx.scope.threads(), |k, i| {
            let off = k.reg::<ty::U32>();
            k.shl(off, i, 2u32)?;
            let v = Src::<ty::B32>::Imm(Imm::UInt(bits));
            let reg = k.reg::<ty::B32>();
            k.mov(reg, v)?;
            let at = address(k, dst, off)?;
            super::copy_vector::store(k, at, &[reg])
        })
    },
};

fn cast_check(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let TileOp::Cast { dst, src } = &ctx.op else {
        return Err("not a cast".into());
    };
    let (Base::Registers(d), Base::Registers(s)) = (&dst.base, &src.base) else {
        return Err("register tiles expected".into());
    };
    if src.dtype != ScalarType::F32 || !matches!(dst.dtype, ScalarType::Bf16 | ScalarType::F16) {
        return Err(format!(
            "{} -> {}: this variant casts f32 to bf16/f16 pairs",
            src.dtype, dst.dtype
        ));
    }
    if s.len() != 2 * d.len()
        || s.iter().any(|r| r.class != RegClass::F32)
        || d.iter().any(|r| r.class != RegClass::H32)
    {
        return Err(format!(
            "{} f32 registers into {} pair registers: want 2 to 1, .f32 into %hh",
            s.len(),
            d.len()
        ));
    }
    if dst.shape != src.shape {
        return Err("shapes differ".into());
    }
    Ok(())
}

/// `cast.registers`.
pub const CAST_REGISTERS: Variant = Variant {
    op: OpKind::Cast,
    name: "cast.registers",
    targets: TargetSet::all(),
    priority: 10,
    predicates: &[
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread", "warp", "warpgroup", "cta"]),
        },
        Predicate {
            name: "registers",
            check: cast_check,
        },
    ],
    lower: |k, ctx| {
        let TileOp::Cast { dst, src } = &ctx.op else {
            return Ok(());
        };
        let (Base::Registers(d), Base::Registers(s)) = (&dst.base, &src.base) else {
            return Ok(());
        };
        for (i, out) in d.iter().enumerate() {
            let (lo, hi) = (
                ptx_isa::Reg::<ty::F32>::from_index(s[2 * i].index),
                ptx_isa::Reg::<ty::F32>::from_index(s[2 * i + 1].index),
            );
            if dst.dtype == ScalarType::Bf16 {
                k.cvt_pack_bf16x2(ptx_isa::Reg::from_index(out.index), hi, lo, false)?;
            } else {
                k.cvt_pack_f16x2(ptx_isa::Reg::from_index(out.index), hi, lo, false)?;
            }
        }
        Ok(())
    },
};
