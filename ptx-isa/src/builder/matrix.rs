//! Warp-level matrix instructions: `ldmatrix` (PTX ISA 9.7.14.5.15), `stmatrix` (9.7.14.5.16),
//! `movmatrix` (9.7.14.5.17) and `mma.sync` (9.7.14.5.14) for m16n8k16 f16/bf16, m16n8k8 tf32,
//! m16n8k32 e4m3/e5m2 and s8/u8.

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Operand};
use crate::reg::{Reg, RegRef, ty};
use crate::space::{Addr, spaces};
use crate::types::ScalarType;

/// How many 8x8 matrices `ldmatrix`/`stmatrix` move (one 32-bit register per thread each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixCount {
    /// `.x1`
    X1,
    /// `.x2`
    X2,
    /// `.x4`
    X4,
}

impl MatrixCount {
    /// The number of matrices (= registers per thread for the b16 forms).
    pub const fn count(self) -> usize {
        match self {
            MatrixCount::X1 => 1,
            MatrixCount::X2 => 2,
            MatrixCount::X4 => 4,
        }
    }
    fn name(self) -> &'static str {
        match self {
            MatrixCount::X1 => "x1",
            MatrixCount::X2 => "x2",
            MatrixCount::X4 => "x4",
        }
    }
}

/// The operand types of an `mma.sync`: `D.A.B.C` (PTX ISA 9.7.14.5.14, "Matrix shapes and types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaKind {
    /// m16n8k16, f16 or bf16 inputs (`ab`), f32 accumulators.
    F16F32 {
        /// `.f16` or `.bf16`.
        ab: ScalarType,
    },
    /// m16n8k16, f16 inputs and f16 accumulators (two f16x2 registers).
    F16F16,
    /// m16n8k8, tf32 inputs, f32 accumulators.
    Tf32,
    /// m16n8k32, fp8 inputs (`.e4m3`/`.e5m2` each), f32 accumulators (sm_89+).
    F8 {
        /// A's format.
        a: ScalarType,
        /// B's format.
        b: ScalarType,
    },
    /// m16n8k32, 8-bit integer inputs (`.s8`/`.u8` each), s32 accumulators.
    I8 {
        /// A's format.
        a: ScalarType,
        /// B's format.
        b: ScalarType,
        /// `.satfinite`: clamp to the s32 range.
        satfinite: bool,
    },
}

impl FunctionBuilder {
    fn check_regs(
        &mut self,
        mn: &str,
        what: &str,
        regs: &[RegRef],
        want: usize,
        bits32_ok: impl Fn(RegRef) -> bool,
    ) -> Result<()> {
        if regs.len() != want {
            return Err(self.err(
                ErrorKind::OperandCount,
                mn,
                format!("{what} needs {want} registers, not {}", regs.len()),
            ));
        }
        if let Some(bad) = regs.iter().find(|r| !bits32_ok(**r)) {
            return Err(self.err(
                ErrorKind::OperandType,
                mn,
                format!("{what} register {bad} has the wrong type"),
            ));
        }
        Ok(())
    }

    forward_methods! {
        /// `ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 {d...}, [p]`: each thread gets one
        /// 32-bit register per matrix; thread `t` supplies the row address of row `t % 8` of
        /// matrix `t / 8`.
        fn ldmatrix<T: ty::RegType>(
            n: MatrixCount,
            trans: bool,
            d: &[Reg<T>],
            p: Addr<spaces::Shared>,
        ) => matrix_move((Form::Ldmatrix, "ldmatrix.sync.aligned.m8n8"), (n, 1), trans, d, p);
        /// `stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [p], {r...}` (sm_90+).
        fn stmatrix<T: ty::RegType>(
            n: MatrixCount,
            trans: bool,
            p: Addr<spaces::Shared>,
            r: &[Reg<T>],
        ) => matrix_move((Form::Stmatrix, "stmatrix.sync.aligned.m8n8"), (n, 1), trans, r, p);
        /// `stmatrix.sync.aligned.m16n8.xN.trans.shared.b8 [p], {r...}` (sm_100a, sm_120a).
        fn stmatrix_b8<T: ty::RegType>(n: MatrixCount, p: Addr<spaces::Shared>, r: &[Reg<T>])
            => matrix_move((Form::StmatrixB8, "stmatrix.sync.aligned.m16n8"), (n, 1), true, r, p);
    }

    /// `ldmatrix.sync.aligned.m16n16.xN.trans.shared.b8 {d...}, [p]` (sm_100a, sm_120a): `.x1`
    /// gives 2 registers, `.x2` 4.
    pub fn ldmatrix_b8<T: ty::RegType>(
        &mut self,
        n: MatrixCount,
        d: &[Reg<T>],
        p: Addr<spaces::Shared>,
    ) -> Result<()> {
        if n == MatrixCount::X4 {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                "ldmatrix",
                "m16n16 .b8 has .x1 and .x2 only",
            ));
        }
        let row = (Form::LdmatrixB8, "ldmatrix.sync.aligned.m16n16");
        self.matrix_move(row, (n, 2), true, d, p)
    }

    /// `ldmatrix` or `stmatrix` (PTX ISA 9.7.14.5.15, 9.7.14.5.16) of row `form`, written
    /// `opcode.xN{.trans}.shared.{b16|b8}`: `n` matrices of `per_matrix` 32-bit registers per
    /// thread each, the registers before the address to load and after it to store.
    fn matrix_move<T: ty::RegType>(
        &mut self,
        (form, opcode): (Form, &'static str),
        (n, per_matrix): (MatrixCount, usize),
        trans: bool,
        regs: &[Reg<T>],
        p: Addr<spaces::Shared>,
    ) -> Result<()> {
        let load = matches!(form, Form::Ldmatrix | Form::LdmatrixB8);
        let (mn, what) = if load {
            ("ldmatrix", "the destination")
        } else {
            ("stmatrix", "the source")
        };
        let regs: Vec<RegRef> = regs.iter().map(|r| r.as_ref()).collect();
        self.check_regs(mn, what, &regs, per_matrix * n.count(), |r| {
            r.class.decl_type().bits() == 32
        })?;
        let elem = match form {
            Form::LdmatrixB8 | Form::StmatrixB8 => ScalarType::B8,
            _ => ScalarType::B16,
        };
        let regs = Operand::Vector(regs.into_iter().map(Operand::Reg).collect());
        let i = Instruction::from_opcode(opcode)
            .modifier(n.name())
            .modifier_if(trans, "trans")
            .modifier("shared")
            .ty(elem);
        let i = if load {
            i.operands((regs, p))
        } else {
            i.operands((p, regs))
        };
        self.emit(form, i)
    }

    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a` (PTX ISA 9.7.14.5.17; PTX 7.8, sm_75+): the
    /// warp transposes an 8x8 matrix of 16-bit elements in registers. Thread `t` holds two
    /// elements of row `t / 4` in `a` (columns `2 * (t % 4)` and the next) and receives the same
    /// two positions of the transposed matrix in `d`; both are 32-bit registers.
    pub fn movmatrix<T: ty::RegType>(&mut self, d: Reg<T>, a: Reg<T>) -> Result<()> {
        let mn = "movmatrix";
        let regs = [d.as_ref(), a.as_ref()];
        for (what, r) in ["the destination", "the source"].into_iter().zip(regs) {
            self.check_regs(mn, what, &[r], 1, |r| r.class.decl_type().bits() == 32)?;
        }
        let i = Instruction::from_opcode("movmatrix.sync.aligned.m8n8")
            .modifier("trans")
            .ty(ScalarType::B16)
            .operands((Operand::Reg(regs[0]), Operand::Reg(regs[1])));
        self.emit(Form::Movmatrix, i)
    }

    /// `mma.sync.aligned.shape.row.col.D.A.B.C {d}, {a}, {b}, {c}`: one warp-wide MMA. Register
    /// counts per thread (PTX ISA 9.7.14.5.14, fragment figures): A 4, B 2, C and D 4 (f32, s32) or
    /// 2 (f16x2).
    pub fn mma_sync(
        &mut self,
        kind: MmaKind,
        d: &[RegRef],
        a: &[RegRef],
        b: &[RegRef],
        c: &[RegRef],
    ) -> Result<()> {
        use ScalarType::*;
        let mn = "mma.sync";
        let (form, shape, dt, at, bt, ct, sat) = match kind {
            MmaKind::F16F32 { ab } if matches!(ab, F16 | Bf16) => {
                (Form::MmaF16, "m16n8k16", F32, ab, ab, F32, false)
            }
            MmaKind::F16F16 => (Form::MmaF16, "m16n8k16", F16, F16, F16, F16, false),
            MmaKind::Tf32 => (Form::MmaTf32, "m16n8k8", F32, Tf32, Tf32, F32, false),
            MmaKind::F8 { a, b } if matches!(a, E4m3 | E5m2) && matches!(b, E4m3 | E5m2) => {
                (Form::MmaF8, "m16n8k32", F32, a, b, F32, false)
            }
            MmaKind::I8 { a, b, satfinite } if matches!(a, S8 | U8) && matches!(b, S8 | U8) => {
                (Form::MmaI8, "m16n8k32", S32, a, b, S32, satfinite)
            }
            other => {
                return Err(self.err(
                    ErrorKind::OperandType,
                    mn,
                    format!("{other:?} is not an mma.sync type combination"),
                ));
            }
        };
        let acc_regs = if dt == F16 { 2 } else { 4 };
        let acc_ok = |r: RegRef| match dt {
            F32 => r.class == crate::reg::RegClass::F32,
            _ => r.class.decl_type() == B32,
        };
        let b32 = |r: RegRef| r.class.decl_type().bits() == 32;
        self.check_regs(mn, "D", d, acc_regs, acc_ok)?;
        self.check_regs(mn, "A", a, 4, b32)?;
        self.check_regs(mn, "B", b, 2, b32)?;
        self.check_regs(mn, "C", c, acc_regs, acc_ok)?;
        let vec = |v: &[RegRef]| Operand::Vector(v.iter().map(|r| Operand::Reg(*r)).collect());
        let i = Instruction::from_opcode("mma.sync.aligned")
            .modifier(shape)
            .modifier("row")
            .modifier("col")
            .modifier_if(sat, "satfinite")
            .ty(dt)
            .ty(at)
            .ty(bt)
            .ty(ct)
            .operands((vec(d), vec(a), vec(b), vec(c)));
        self.emit(form, i)
    }
}
