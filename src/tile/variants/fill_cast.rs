//! `fill.registers` (`mov` of a constant into every register of a register tile),
//! `fill.memory` (a dense shared/global tile, 4-byte stores spread over the scope's threads) and
//! `cast.registers` (f32 registers ↔ packed bf16x2/f16x2 pairs: `cvt.rn.{bf16,f16}x2.f32` one
//! way, `mov.b32 {lo, hi}` and `cvt.f32.{bf16,f16}` the other; PTX ISA 9.7.9.21, 9.7.9.9), the
//! pieces a GEMM epilogue needs.

use ptx_isa::{
    FunctionBuilder, Imm, Reg, RegClass, RegRef, Result, ScalarType, Src, TargetSet, ty,
};

use super::common::{MemBase, PlanFn, registers_variant, strided_loop, thread_index};
use crate::tile::op::{OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, ExecScope, Storage};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// A register of a register tile, typed by its class for the `mov` that fills it.
#[derive(Debug, Clone, Copy)]
enum FillReg {
    F32(Reg<ty::F32>),
    B64(Reg<ty::B64>),
    B16(Reg<ty::B16>),
    B32(Reg<ty::B32>),
    Pair(Reg<ty::Bf16x2>),
    Half(Reg<ty::Bf16>),
}

impl FillReg {
    fn of(r: RegRef) -> std::result::Result<FillReg, Rejection> {
        let typed = match r.class {
            RegClass::F32 => r.retype().map(FillReg::F32),
            RegClass::B64 => r.retype().map(FillReg::B64),
            RegClass::B16 => r.retype().map(FillReg::B16),
            RegClass::B32 => r.retype().map(FillReg::B32),
            RegClass::H32 => r.retype().map(FillReg::Pair),
            RegClass::H16 => r.retype().map(FillReg::Half),
            other => {
                return Err(Rejection::operand(
                    Aspect::Registers,
                    format!("cannot fill {other:?} registers with mov"),
                ));
            }
        };
        typed.map_err(|e| Rejection::operand(Aspect::Registers, e.to_string()))
    }
}

/// `mov` of the value into every register.
struct FillRegisters {
    regs: Vec<FillReg>,
    value: Imm,
}

fn plan_fill_regs<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    match &ctx.op {
        TileOp::Fill { dst, value } if dst.storage == Storage::Local => {
            let Base::Registers(regs) = &dst.base else {
                return Err(Rejection::operand(Aspect::Base, "not a register tile"));
            };
            Ok(Box::new(FillRegisters {
                regs: regs
                    .iter()
                    .map(|r| FillReg::of(*r))
                    .collect::<std::result::Result<_, _>>()?,
                value: *value,
            }))
        }
        _ => Err(Rejection::operand(Aspect::Base, "not a register tile")),
    }
}

impl Plan for FillRegisters {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        for r in &self.regs {
            match *r {
                FillReg::F32(r) => k.mov(r, Src::Imm(self.value))?,
                FillReg::B64(r) => k.mov(r, Src::Imm(self.value))?,
                FillReg::B16(r) => k.mov(r, Src::Imm(self.value))?,
                FillReg::B32(r) => k.mov(r, Src::Imm(self.value))?,
                FillReg::Pair(r) => k.mov(r, Src::Imm(self.value))?,
                FillReg::Half(r) => k.mov(r, Src::Imm(self.value))?,
            }
        }
        Ok(())
    }
}

/// 4-byte stores of the value's bits over the tile, spread over the scope's threads.
struct FillMemory {
    dst: MemBase,
    bits: u64,
    words: u32,
    scope: ExecScope,
}

fn plan_fill_mem<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let TileOp::Fill { dst, value } = &ctx.op else {
        return Err(Rejection::operand(Aspect::Op, "not a fill"));
    };
    if !matches!(dst.storage, Storage::Shared | Storage::Global) {
        return Err(Rejection::operand(Aspect::Base, "not a memory tile"));
    }
    if !dst.is_contiguous() || dst.bytes() % 4 != 0 || dst.align % 4 != 0 || dst.dtype.bits() != 32
    {
        return Err(Rejection::operand(
            Aspect::Layout,
            "a dense, 4-byte aligned tile of 32-bit elements expected",
        ));
    }
    let bits = match value {
        Imm::F32(b) => *b as u64,
        Imm::UInt(u) => *u,
        Imm::Int(i) => *i as u32 as u64,
        Imm::F64(_) => {
            return Err(Rejection::operand(
                Aspect::ElementType,
                "a 32-bit fill value expected",
            ));
        }
    };
    Ok(Box::new(FillMemory {
        dst: MemBase::of(dst)?,
        bits,
        words: (dst.bytes() / 4) as u32,
        scope: ctx.scope,
    }))
}

impl Plan for FillMemory {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let t = thread_index(k, self.scope)?;
        strided_loop(k, t, self.words, self.scope.threads(), |k, i| {
            let off = k.reg::<ty::U32>();
            k.shl(off, i, 2u32)?;
            let v = Src::<ty::B32>::Imm(Imm::UInt(self.bits));
            let reg = k.reg::<ty::B32>();
            k.mov(reg, v)?;
            let at = self.dst.address(k, off)?;
            super::copy_vector::store(k, at, &[reg])
        })
    }
}

/// A fill's registration: the register fill and the memory fill differ only in name and
/// planner (each planner checks the storage itself).
const fn fill_variant(name: &'static str, plan: PlanFn) -> Variant {
    Variant {
        op: OpKind::Fill,
        name,
        targets: TargetSet::all(),
        priority: 10,
        views: false,
        predicates: &[],
        planner: Planner {
            name: "storage",
            plan,
        },
    }
}

/// `fill.registers`.
pub const FILL_REGISTERS: Variant = fill_variant("fill.registers", plan_fill_regs);

/// `fill.memory`.
pub const FILL_MEMORY: Variant = fill_variant("fill.memory", plan_fill_mem);

/// Which 16-bit float a packed pair holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    Bf16,
    F16,
}

/// The packed-pair registers, typed by what they hold.
enum Pairs {
    Bf16(Vec<Reg<ty::Bf16x2>>),
    F16(Vec<Reg<ty::F16x2>>),
}

/// f32 registers to packed pairs (`cvt.rn.{bf16,f16}x2.f32`, the high element first), or pairs
/// to f32 (`mov.b32 {lo, hi}` and a `cvt.f32` of each).
struct CastRegisters {
    narrow: bool,
    wide: Vec<Reg<ty::F32>>,
    pairs: Pairs,
}

fn plan_cast<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let TileOp::Cast { dst, src } = &ctx.op else {
        return Err(Rejection::operand(Aspect::Op, "not a cast"));
    };
    let (Base::Registers(d), Base::Registers(s)) = (&dst.base, &src.base) else {
        return Err(Rejection::operand(Aspect::Base, "register tiles expected"));
    };
    let half = |t: ScalarType| match t {
        ScalarType::Bf16 => Some(Half::Bf16),
        ScalarType::F16 => Some(Half::F16),
        _ => None,
    };
    // f32 -> packed pairs, or packed pairs -> f32.
    let (wide, wide_t, packed, packed_t, h, narrow) = match (half(src.dtype), half(dst.dtype)) {
        (None, Some(h)) if src.dtype == ScalarType::F32 => (s, "source", d, dst.dtype, h, true),
        (Some(h), None) if dst.dtype == ScalarType::F32 => {
            (d, "destination", s, src.dtype, h, false)
        }
        _ => {
            return Err(Rejection::operand(
                Aspect::ElementType,
                format!(
                    "{} -> {}: this variant casts between f32 and bf16/f16 pairs",
                    src.dtype, dst.dtype
                ),
            ));
        }
    };
    if wide.len() != 2 * packed.len()
        || wide.iter().any(|r| r.class != RegClass::F32)
        || packed.iter().any(|r| r.class != RegClass::H32)
    {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!(
                "{} f32 registers ({wide_t}) and {} {packed_t} pair registers: want 2 to 1, .f32 and %hh",
                wide.len(),
                packed.len()
            ),
        ));
    }
    if dst.shape != src.shape {
        return Err(Rejection::operand(Aspect::Shape, "shapes differ"));
    }
    fn typed<T: ty::RegType>(r: &[RegRef]) -> std::result::Result<Vec<Reg<T>>, Rejection> {
        r.iter()
            .map(|x| x.retype::<T>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Rejection::operand(Aspect::Registers, e.to_string()))
    }
    let pairs = match h {
        Half::Bf16 => Pairs::Bf16(typed(packed)?),
        Half::F16 => Pairs::F16(typed(packed)?),
    };
    Ok(Box::new(CastRegisters {
        narrow,
        wide: typed(wide)?,
        pairs,
    }))
}

/// Splits each packed word of `pairs` into its two `H` halves (`mov.b32 {lo, hi}`, low first)
/// and converts them to the f32 registers `wide(i)` gives for word `i`.
fn widen<H: ty::RegType, P: ty::RegType>(
    k: &mut FunctionBuilder,
    pairs: &[Reg<P>],
    wide: impl Fn(usize) -> (Reg<ty::F32>, Reg<ty::F32>),
) -> Result<()> {
    for (i, &word) in pairs.iter().enumerate() {
        let (lo, hi) = wide(i);
        let h = [k.reg::<H>(), k.reg::<H>()];
        k.mov_unpack(&h, word)?;
        k.cvt(lo, h[0])?;
        k.cvt(hi, h[1])?;
    }
    Ok(())
}

impl Plan for CastRegisters {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let wide = |i: usize| (self.wide[2 * i], self.wide[2 * i + 1]);
        match (&self.pairs, self.narrow) {
            // Pairs -> f32: split each word into its halves (low first) and widen them.
            (Pairs::Bf16(p), false) => widen::<ty::Bf16, _>(k, p, wide)?,
            (Pairs::F16(p), false) => widen::<ty::F16, _>(k, p, wide)?,
            (Pairs::Bf16(p), true) => {
                for (i, &out) in p.iter().enumerate() {
                    let (lo, hi) = wide(i);
                    k.cvt_pack_bf16x2(out, hi, lo, false)?;
                }
            }
            (Pairs::F16(p), true) => {
                for (i, &out) in p.iter().enumerate() {
                    let (lo, hi) = wide(i);
                    k.cvt_pack_f16x2(out, hi, lo, false)?;
                }
            }
        }
        Ok(())
    }
}

/// `cast.registers`.
pub const CAST_REGISTERS: Variant = registers_variant(OpKind::Cast, "cast.registers", plan_cast);
