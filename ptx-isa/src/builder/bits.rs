//! Logic, shift and bit-manipulation instructions (PTX ISA 9.7.7 "Logic and Shift Instructions";
//! popc, clz, brev, bfe, bfi from 9.7.1; prmt from 9.7.9.7).

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Operand, Src};
use crate::reg::{Reg, ty};
use crate::types::ScalarType;

impl FunctionBuilder {
    fn logic<T: ty::RegType>(
        &mut self,
        mn: &'static str,
        form: Form,
        d: Reg<T>,
        srcs: &[Operand],
    ) -> Result<()> {
        let t = T::TYPE;
        let bt = if t == ScalarType::Pred {
            t
        } else {
            t.bits_type()
        };
        if !matches!(
            bt,
            ScalarType::Pred | ScalarType::B16 | ScalarType::B32 | ScalarType::B64
        ) || !(t.is_int() || t == bt)
        {
            return Err(self.err(
                ErrorKind::OperandType,
                mn,
                format!("{mn} needs .pred or 16/32/64-bit integers, not {t}"),
            ));
        }
        let mut i = Instruction::new(mn).ty(bt).operand(d);
        for s in srcs {
            i = i.operand(s.clone());
        }
        self.emit(form, i)
    }

    /// `and.bN d, a, b` (or `and.pred`).
    pub fn and<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.logic("and", Form::And, d, &[a.into().into(), b.into().into()])
    }

    /// `or.bN d, a, b`.
    pub fn or<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.logic("or", Form::Or, d, &[a.into().into(), b.into().into()])
    }

    /// `xor.bN d, a, b`.
    pub fn xor<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.logic("xor", Form::Xor, d, &[a.into().into(), b.into().into()])
    }

    /// `not.bN d, a`.
    pub fn not<T: ty::RegType>(&mut self, d: Reg<T>, a: impl Into<Src<T>>) -> Result<()> {
        self.logic("not", Form::Not, d, &[a.into().into()])
    }

    /// `lop3.b32 d, a, b, c, lut`: any three-input boolean function given by its truth table
    /// (PTX ISA 9.7.7.6: `lut` is `F(0xF0, 0xCC, 0xAA)`).
    pub fn lop3<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: impl Into<Src<T>>,
        lut: u8,
    ) -> Result<()> {
        if T::TYPE.bits() != 32 || !T::TYPE.agrees_with(ScalarType::B32) {
            return Err(self.err(
                ErrorKind::OperandType,
                "lop3",
                format!("lop3 needs 32-bit integers, not {}", T::TYPE),
            ));
        }
        let i = Instruction::new("lop3").ty(ScalarType::B32).operands((
            d,
            a.into(),
            b.into(),
            c.into(),
            Imm::UInt(lut as u64),
        ));
        self.emit(Form::Lop3, i)
    }

    /// `shl.bN d, a, b` (shift amount `b` is `.u32`).
    pub fn shl<T: ty::Int>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let t = T::TYPE;
        let i = Instruction::new("shl")
            .ty(t.bits_type())
            .operands((d, a.into(), b.into()));
        self.emit(Form::Shl, i)
    }

    /// `shr.T d, a, b`: logical for `.uN`/`.bN`, arithmetic for `.sN`.
    pub fn shr<T: ty::Int>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::new("shr")
            .ty(T::TYPE)
            .operands((d, a.into(), b.into()));
        self.emit(Form::Shr, i)
    }

    fn count_bits<T: ty::Bits32Or64>(
        &mut self,
        mn: &'static str,
        form: Form,
        d: Reg<ty::U32>,
        a: Src<T>,
    ) -> Result<()> {
        let i = Instruction::new(mn)
            .ty(T::TYPE.bits_type())
            .operands((d, a));
        self.emit(form, i)
    }

    /// `popc.bN d, a`: population count into a `.u32`.
    pub fn popc<T: ty::Bits32Or64>(&mut self, d: Reg<ty::U32>, a: impl Into<Src<T>>) -> Result<()> {
        self.count_bits("popc", Form::Popc, d, a.into())
    }

    /// `clz.bN d, a`: leading zeros into a `.u32`.
    pub fn clz<T: ty::Bits32Or64>(&mut self, d: Reg<ty::U32>, a: impl Into<Src<T>>) -> Result<()> {
        self.count_bits("clz", Form::Clz, d, a.into())
    }

    /// `brev.bN d, a`: bit reverse.
    pub fn brev<T: ty::Bits32Or64>(&mut self, d: Reg<T>, a: impl Into<Src<T>>) -> Result<()> {
        let i = Instruction::new("brev")
            .ty(T::TYPE.bits_type())
            .operands((d, a.into()));
        self.emit(Form::Brev, i)
    }

    /// `bfe.T d, a, pos, len`: extract `len` bits at `pos` (sign-extended for `.sN`).
    pub fn bfe<T: ty::Bits32Or64>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        pos: impl Into<Src<ty::U32>>,
        len: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let t = T::TYPE;
        if !t.is_int() {
            return Err(self.err(
                ErrorKind::OperandType,
                "bfe",
                format!("bfe needs .u32/.s32/.u64/.s64, not {t}"),
            ));
        }
        let i = Instruction::new("bfe")
            .ty(t)
            .operands((d, a.into(), pos.into(), len.into()));
        self.emit(Form::Bfe, i)
    }

    /// `bfi.bN f, a, b, pos, len`: insert the low `len` bits of `a` into `b` at `pos`.
    pub fn bfi<T: ty::Bits32Or64>(
        &mut self,
        f: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        pos: impl Into<Src<ty::U32>>,
        len: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::new("bfi").ty(T::TYPE.bits_type()).operands((
            f,
            a.into(),
            b.into(),
            pos.into(),
            len.into(),
        ));
        self.emit(Form::Bfi, i)
    }

    /// `prmt.b32 d, a, b, c`: byte permute with selector `c` (default mode, PTX ISA 9.7.9.7).
    pub fn prmt<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        selector: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        if T::TYPE.bits() != 32 || !T::TYPE.agrees_with(ScalarType::B32) {
            return Err(self.err(
                ErrorKind::OperandType,
                "prmt",
                format!("prmt needs 32-bit integers, not {}", T::TYPE),
            ));
        }
        let i = Instruction::new("prmt").ty(ScalarType::B32).operands((
            d,
            a.into(),
            b.into(),
            selector.into(),
        ));
        self.emit(Form::Prmt, i)
    }
}
