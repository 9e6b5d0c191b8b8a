//! Comparison and selection (PTX ISA 9.7.5 "Comparison and Selection Instructions", 9.7.6 "Half
//! Precision Comparison Instructions").

use super::FunctionBuilder;
use crate::error::Result;
use crate::forms::Form;
use crate::instr::{Instruction, Operand, Src};
use crate::reg::{Pred, Reg, ty};
use crate::types::ScalarType;

/// A comparison operator (PTX ISA 9.7.5.1, tables "Operators for signed integer, unsigned integer,
/// and bit-size types" and "Floating-point comparison operators").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// unsigned `<` (`.uN` only)
    Lo,
    /// unsigned `<=`
    Ls,
    /// unsigned `>`
    Hi,
    /// unsigned `>=`
    Hs,
    /// unordered or equal (floats)
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// both numbers (floats)
    Num,
    /// either NaN (floats)
    Nan,
}

impl CmpOp {
    fn name(self) -> &'static str {
        use CmpOp::*;
        match self {
            Eq => "eq",
            Ne => "ne",
            Lt => "lt",
            Le => "le",
            Gt => "gt",
            Ge => "ge",
            Lo => "lo",
            Ls => "ls",
            Hi => "hi",
            Hs => "hs",
            Equ => "equ",
            Neu => "neu",
            Ltu => "ltu",
            Leu => "leu",
            Gtu => "gtu",
            Geu => "geu",
            Num => "num",
            Nan => "nan",
        }
    }
}

/// How `setp`/`set` combine the comparison with the predicate `c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

impl BoolOp {
    fn name(self) -> &'static str {
        match self {
            BoolOp::And => "and",
            BoolOp::Or => "or",
            BoolOp::Xor => "xor",
        }
    }
}

/// A predicate source, possibly negated (`p` or `!p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredSrc {
    /// The predicate.
    pub pred: Pred,
    /// True for `!p`.
    pub negated: bool,
}

impl PredSrc {
    /// `!p`
    pub fn not(p: Pred) -> PredSrc {
        PredSrc {
            pred: p,
            negated: true,
        }
    }
}

impl From<Pred> for PredSrc {
    fn from(p: Pred) -> PredSrc {
        PredSrc {
            pred: p,
            negated: false,
        }
    }
}

impl From<PredSrc> for Operand {
    fn from(p: PredSrc) -> Operand {
        if p.negated {
            Operand::NotPred(p.pred.as_ref())
        } else {
            Operand::Reg(p.pred.as_ref())
        }
    }
}

impl FunctionBuilder {
    fn setp_form(&mut self, mn: &str, t: ScalarType) -> Result<Form> {
        use ScalarType::*;
        let form = match t {
            B16 | B32 | B64 | U16 | U32 | U64 | S16 | S32 | S64 => Form::SetpInt,
            F32 => Form::SetpF32,
            F64 => Form::SetpF64,
            F16 | F16x2 => Form::SetpF16,
            Bf16 | Bf16x2 => Form::SetpBf16,
            _ => {
                return Err(self.no_form(mn, mn, t));
            }
        };
        // Which comparisons a type takes is the rows' rule (PTX ISA 9.7.5.2, tables "Operators
        // for signed integer, unsigned integer, and bit-size types" and "Floating-point
        // comparison operators"), checked by `emit`.
        Ok(form)
    }

    /// `setp.op.T p, a, b`.
    pub fn setp<T: ty::RegType>(
        &mut self,
        op: CmpOp,
        p: Pred,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        let t = T::TYPE;
        let form = self.setp_form("setp", t)?;
        let i = Instruction::new("setp")
            .modifier(op.name())
            .ty(t)
            .operands((p, a.into(), b.into()));
        self.emit(form, i)
    }

    /// `setp.op.bop.T p|q, a, b, c`: `p = (a op b) bop c`, and `q = !(a op b) bop c` when `q` is given.
    #[allow(clippy::too_many_arguments)] // one parameter per PTX operand
    pub fn setp_bool<T: ty::RegType>(
        &mut self,
        op: CmpOp,
        bop: BoolOp,
        p: Pred,
        q: Option<Pred>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: impl Into<PredSrc>,
    ) -> Result<()> {
        let t = T::TYPE;
        let form = self.setp_form("setp", t)?;
        let dst = match q {
            Some(q) => Operand::Pair(p.as_ref(), q.as_ref()),
            None => Operand::Reg(p.as_ref()),
        };
        let i = Instruction::new("setp")
            .modifier(op.name())
            .modifier(bop.name())
            .ty(t)
            .operands((dst, a.into(), b.into(), c.into()));
        self.emit(form, i)
    }

    /// `selp.T d, a, b, c`: `d = c ? a : b`.
    pub fn selp<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: Pred,
    ) -> Result<()> {
        let t = T::TYPE;
        if !(t.is_int()
            || matches!(
                t,
                ScalarType::B16
                    | ScalarType::B32
                    | ScalarType::B64
                    | ScalarType::F32
                    | ScalarType::F64
            ))
        {
            return Err(self.no_form("selp", "selp", t));
        }
        let i = Instruction::new("selp")
            .ty(t)
            .operands((d, a.into(), b.into(), c));
        self.emit(Form::Selp, i)
    }

    /// `set.op.D.T d, a, b`: `d` is all ones (integers) or 1.0 (f32) when the comparison holds
    /// (`D` is `.u32`, `.s32` or `.f32`; `T` an integer, bit-size, `.f32` or `.f64` type).
    pub fn set<D: ty::RegType, T: ty::RegType>(
        &mut self,
        op: CmpOp,
        d: Reg<D>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        // Which destination and source types `set` takes is its row's (PTX ISA 9.7.5.1),
        // checked by `emit`.
        let (dt, t) = (D::TYPE, T::TYPE);
        let i = Instruction::new("set")
            .modifier(op.name())
            .ty(dt)
            .ty(t)
            .operands((d, a.into(), b.into()));
        self.emit(Form::Set, i)
    }
}
