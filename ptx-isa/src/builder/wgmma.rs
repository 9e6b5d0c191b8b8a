//! Warpgroup MMA, sm_90a (PTX ISA 9.7.15: `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group`,
//! `wgmma.mma_async` for every dense shape).

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Operand};
use crate::reg::{Pred, Reg, RegClass, RegRef, ty};
use crate::types::ScalarType;

/// The types of a `wgmma.mma_async` (PTX ISA 9.7.15.5.2, "Matrix shapes and data types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WgmmaTypes {
    /// m64nNk16: `.f16` or `.bf16` inputs; `.f32` accumulators, or `.f16` with `.f16` inputs.
    Half {
        /// `.f32` or `.f16`.
        d: ScalarType,
        /// `.f16` or `.bf16`.
        ab: ScalarType,
    },
    /// m64nNk8: `.tf32` inputs, `.f32` accumulators.
    Tf32,
    /// m64nNk32: `.e4m3`/`.e5m2` inputs, `.f32` or `.f16` accumulators.
    F8 {
        /// `.f32` or `.f16`.
        d: ScalarType,
        /// A's format.
        a: ScalarType,
        /// B's format.
        b: ScalarType,
    },
    /// m64nNk32: `.s8`/`.u8` inputs, `.s32` accumulators.
    I8 {
        /// A's format.
        a: ScalarType,
        /// B's format.
        b: ScalarType,
        /// `.satfinite`
        satfinite: bool,
    },
}

/// One `wgmma.mma_async` shape: M is 64; N as given; K from the types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wgmma {
    /// N: a multiple of 8 in 8..=256 (integer types: 8, 16, 24, then multiples of 16 to 256).
    pub n: u32,
    /// The operand types.
    pub types: WgmmaTypes,
}

impl Wgmma {
    /// K for the types: 16 (f16/bf16), 8 (tf32), 32 (fp8, int8).
    pub fn k(self) -> u32 {
        match self.types {
            WgmmaTypes::Half { .. } => 16,
            WgmmaTypes::Tf32 => 8,
            WgmmaTypes::F8 { .. } | WgmmaTypes::I8 { .. } => 32,
        }
    }

    /// The accumulator's type.
    pub fn d_type(self) -> ScalarType {
        match self.types {
            WgmmaTypes::Half { d, .. } | WgmmaTypes::F8 { d, .. } => d,
            WgmmaTypes::Tf32 => ScalarType::F32,
            WgmmaTypes::I8 { .. } => ScalarType::S32,
        }
    }

    /// Accumulator registers per thread: N/2 (32-bit accumulators) or N/4 (f16 pairs).
    pub fn accumulator_registers(self) -> usize {
        if self.d_type() == ScalarType::F16 {
            self.n as usize / 4
        } else {
            self.n as usize / 2
        }
    }

    /// Registers per thread of an A fragment in registers: 4.
    pub const A_REGISTERS: usize = 4;

    /// Whether N is legal for the types: the rows' rule (PTX ISA 9.7.15.5.1).
    pub fn n_is_valid(self) -> bool {
        let form = match self.types {
            WgmmaTypes::I8 { .. } => Form::WgmmaI8,
            WgmmaTypes::Tf32 => Form::WgmmaTf32,
            WgmmaTypes::F8 { .. } => Form::WgmmaF8,
            _ => Form::WgmmaF16,
        };
        crate::forms::rules::number_values(form, &[])
            .is_some_and(|v| v.contains(i128::from(self.n)))
    }
}

/// Where A comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WgmmaA<'a> {
    /// A shared-memory matrix descriptor.
    Desc(Reg<ty::B64>),
    /// Four 32-bit registers per thread holding the A fragment.
    Regs(&'a [RegRef]),
}

/// scale-d: whether D is accumulated into (`D = A*B + D`) or overwritten (`D = A*B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleD {
    /// A predicate: accumulate where true.
    Pred(Pred),
    /// A constant.
    Const(bool),
}

/// The immediate operands: negate A or B (`imm-scale-a/b` = -1) and transpose A or B
/// (`imm-trans-a/b`, f16/bf16 from descriptors only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WgmmaImm {
    /// imm-scale-a = -1
    pub negate_a: bool,
    /// imm-scale-b = -1
    pub negate_b: bool,
    /// imm-trans-a = 1 (A is MN-major)
    pub transpose_a: bool,
    /// imm-trans-b = 1 (B is MN-major)
    pub transpose_b: bool,
}

impl FunctionBuilder {
    /// `wgmma.fence.sync.aligned`: orders register accesses before the next `wgmma.mma_async`.
    pub fn wgmma_fence(&mut self) -> Result<()> {
        self.emit_row(Form::WgmmaFence)
    }

    /// `wgmma.commit_group.sync.aligned`.
    pub fn wgmma_commit_group(&mut self) -> Result<()> {
        self.emit_row(Form::WgmmaCommit)
    }

    /// `wgmma.wait_group.sync.aligned n`: waits until at most `n` groups are pending.
    pub fn wgmma_wait_group(&mut self, n: u32) -> Result<()> {
        let i =
            Instruction::from_opcode("wgmma.wait_group.sync.aligned").operand(Imm::UInt(n as u64));
        self.emit(Form::WgmmaWait, i)
    }

    /// `wgmma.mma_async.sync.aligned.m64nNkK.D.A.B {d}, a, b-desc, scale-d, ...`: D = A*B (+ D),
    /// warpgroup-wide. The accumulator register count and types, N, and which immediates the types
    /// take are checked (PTX ISA 9.7.15.5.2).
    pub fn wgmma_mma_async(
        &mut self,
        w: Wgmma,
        d: &[RegRef],
        a: WgmmaA<'_>,
        b: Reg<ty::B64>,
        scale_d: ScaleD,
        imm: WgmmaImm,
    ) -> Result<()> {
        use ScalarType::*;
        let mn = "wgmma.mma_async";
        let (form, at, bt, sat) = match w.types {
            WgmmaTypes::Half { d: F32, ab } if matches!(ab, F16 | Bf16) => {
                (Form::WgmmaF16, ab, ab, false)
            }
            WgmmaTypes::Half { d: F16, ab: F16 } => (Form::WgmmaF16, F16, F16, false),
            WgmmaTypes::Tf32 => (Form::WgmmaTf32, Tf32, Tf32, false),
            WgmmaTypes::F8 { d: F32 | F16, a, b }
                if matches!(a, E4m3 | E5m2) && matches!(b, E4m3 | E5m2) =>
            {
                (Form::WgmmaF8, a, b, false)
            }
            WgmmaTypes::I8 { a, b, satfinite } if matches!(a, S8 | U8) && matches!(b, S8 | U8) => {
                (Form::WgmmaI8, a, b, satfinite)
            }
            other => {
                return Err(self.err(
                    ErrorKind::OperandType,
                    mn,
                    format!("{other:?} is not a wgmma type combination"),
                ));
            }
        };
        if !w.n_is_valid() {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                format!("N = {} is not a wgmma shape for {:?}", w.n, w.types),
            ));
        }
        let dt = w.d_type();
        let want = w.accumulator_registers();
        if d.len() != want {
            return Err(self
                .err(
                    ErrorKind::OperandCount,
                    mn,
                    format!(
                        "m64n{}k{} .{} needs {want} accumulator registers, not {}",
                        w.n,
                        w.k(),
                        dt.name(),
                        d.len()
                    ),
                )
                .at_operand(0));
        }
        let acc_ok = |r: &RegRef| {
            if dt == F32 {
                r.class == RegClass::F32
            } else {
                r.class.decl_type() == B32
            }
        };
        if let Some(bad) = d.iter().find(|r| !acc_ok(r)) {
            return Err(self
                .err(
                    ErrorKind::OperandType,
                    mn,
                    format!("accumulator {bad} is not a .{} register", dt.name()),
                )
                .at_operand(0));
        }
        let half = form == Form::WgmmaF16;
        let a_regs = matches!(a, WgmmaA::Regs(_));
        if imm.transpose_a && (!half || a_regs) || imm.transpose_b && !half {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                "transposes apply to f16/bf16 operands in shared memory only",
            ));
        }
        if form == Form::WgmmaI8 && (imm.negate_a || imm.negate_b) {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                "integer wgmma takes no imm-scale",
            ));
        }
        let a_op = match a {
            WgmmaA::Desc(r) => Operand::Reg(r.as_ref()),
            WgmmaA::Regs(regs) => {
                if regs.len() != Wgmma::A_REGISTERS
                    || regs.iter().any(|r| r.class.decl_type() != B32)
                {
                    return Err(self.err(ErrorKind::OperandCount, mn, format!("an A fragment is 4 .b32 registers (not .f32, even for tf32), not {regs:?}")).at_operand(1));
                }
                Operand::Vector(regs.iter().map(|r| Operand::Reg(*r)).collect())
            }
        };
        let mut i = Instruction::from_opcode("wgmma.mma_async.sync.aligned")
            .modifier(format!("m64n{}k{}", w.n, w.k()))
            .modifier_if(sat, "satfinite")
            .ty(dt)
            .ty(at)
            .ty(bt)
            .operand(Operand::Vector(
                d.iter().map(|r| Operand::Reg(*r)).collect(),
            ))
            .operands((
                a_op,
                b,
                match scale_d {
                    ScaleD::Pred(p) => Operand::Reg(p.as_ref()),
                    ScaleD::Const(c) => Operand::Imm(Imm::Int(c as i64)),
                },
            ));
        if form != Form::WgmmaI8 {
            let sc = |neg: bool| Operand::Imm(Imm::Int(if neg { -1 } else { 1 }));
            i = i.operands((sc(imm.negate_a), sc(imm.negate_b)));
        }
        if half {
            if !a_regs {
                i = i.operand(Imm::Int(imm.transpose_a as i64));
            }
            i = i.operand(Imm::Int(imm.transpose_b as i64));
        }
        // Mixed .s8/.u8 came in PTX 8.4 (ptxas 13.0: "WGMMA with mixed integer types").
        self.emit(form, i)
    }
}
