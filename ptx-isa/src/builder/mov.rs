//! `mov` (PTX ISA 9.7.9.1): registers, immediates, special registers, symbol addresses, and packing
//! scalars into and out of wider registers.

use std::borrow::Cow;

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Operand, Src};
use crate::reg::{Reg, ty};
use crate::sreg::SpecialReg;
use crate::types::ScalarType;

/// The name of a module-scope shared variable, whose address `mov` can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedSymbol(pub String);

impl SpecialReg {
    /// The form-table row that gates reading this register.
    pub fn form(self) -> Form {
        use SpecialReg::*;
        match self {
            IsExplicitCluster | ClusterId(_) | NClusterId(_) | ClusterCtaId(_)
            | ClusterNCtaId(_) | ClusterCtaRank | ClusterNCtaRank => Form::MovSregCluster,
            TotalSmemSize => Form::MovSregTotalSmem,
            _ => Form::MovSreg,
        }
    }
}

impl FunctionBuilder {
    /// `mov.T d, a`.
    pub fn mov<T: ty::RegType>(&mut self, d: Reg<T>, a: impl Into<Src<T>>) -> Result<()> {
        let t = T::TYPE;
        let form = match t {
            ScalarType::B128 => Form::MovB128,
            ScalarType::F16 | ScalarType::Bf16 | ScalarType::F16x2 | ScalarType::Bf16x2 => {
                // mov has no half types: move the bits (PTX ISA 9.7.9.1 lists b16/b32 for them).
                let i = Instruction::new("mov")
                    .ty(t.bits_type())
                    .operands((d, a.into()));
                return self.emit(Form::Mov, i);
            }
            _ => Form::Mov,
        };
        let i = Instruction::new("mov").ty(t).operands((d, a.into()));
        self.emit(form, i)
    }

    /// `mov.bN d, a`: `a`'s bits in `d`, a register of another type of the same size (a `.b32`
    /// word read as `.f32`: PTX ISA 9.7.9.1 mov takes `.bN` with operands of any type of N
    /// bits, 6.1 "Operand Type Information").
    pub fn mov_bits<D: ty::RegType, S: ty::RegType>(&mut self, d: Reg<D>, a: Reg<S>) -> Result<()> {
        let (dt, st) = (D::TYPE, S::TYPE);
        if dt.bits() != st.bits() || dt == ScalarType::Pred || st == ScalarType::Pred {
            return Err(self.err(
                ErrorKind::OperandType,
                "mov",
                format!("the bits of a {st} register are not a {dt}"),
            ));
        }
        let i = Instruction::new("mov").ty(dt.bits_type()).operands((d, a));
        self.emit(Form::Mov, i)
    }

    /// `mov.u32 d, %sreg` (or `.u64`, `.pred` as the register's type requires).
    pub fn mov_sreg<T: ty::RegType>(&mut self, d: Reg<T>, s: SpecialReg) -> Result<()> {
        let t = T::TYPE;
        if !s.ty().agrees_with(t) {
            return Err(self.err(
                ErrorKind::OperandType,
                "mov",
                format!("{s} is {}, not {t}", s.ty()),
            ));
        }
        let i = Instruction::new("mov").ty(s.ty()).operands((d, s));
        self.emit(s.form(), i)
    }

    /// Reads a 32-bit special register into a fresh register.
    pub fn sreg_u32(&mut self, s: SpecialReg) -> Result<Reg<ty::U32>> {
        let d = self.reg();
        self.mov_sreg(d, s)?;
        Ok(d)
    }

    forward_methods! {
        /// `mov.u32 d, name;`: the shared-window address of a shared variable.
        fn mov_shared_addr(d: Reg<ty::U32>, var: &str) => mov_symbol(d, var);
        /// `mov.u64 d, name;`: the generic address of a variable or a by-value parameter.
        fn mov_symbol_addr(d: Reg<ty::U64>, name: &str) => mov_symbol(d, name);
    }

    /// `mov.T d, name;` (`.u32` or `.u64`): the address of the variable or parameter `name` (PTX
    /// ISA 9.7.9.1 "mov": "the address of a variable").
    fn mov_symbol<T: ty::RegType>(&mut self, d: Reg<T>, name: &str) -> Result<()> {
        crate::module::check_identifier(name)?;
        let symbol = Operand::Symbol(Cow::Owned(name.to_string()));
        self.emit(
            Form::Mov,
            Instruction::new("mov").ty(T::TYPE).operands((d, symbol)),
        )
    }

    /// `mov.bN d, {parts...}`: packs 2 or 4 narrower registers into one (low part first).
    pub fn mov_pack<D: ty::RegType, S: ty::RegType>(
        &mut self,
        d: Reg<D>,
        parts: &[Reg<S>],
    ) -> Result<()> {
        self.mov_parts(D::TYPE, S::TYPE, d.into(), parts, true)
    }

    /// `mov.bN {parts...}, a`: splits a register into 2 or 4 narrower ones (low part first).
    pub fn mov_unpack<D: ty::RegType, S: ty::RegType>(
        &mut self,
        parts: &[Reg<D>],
        a: Reg<S>,
    ) -> Result<()> {
        self.mov_parts(S::TYPE, D::TYPE, a.into(), parts, false)
    }

    /// `mov.bN` between `whole` (a `wide` register) and `parts` (of type `part`): packing
    /// (`mov.bN d, {parts}`) or unpacking (`mov.bN {parts}, a`), PTX ISA 9.7.9.1.
    fn mov_parts<P: ty::RegType>(
        &mut self,
        wide: ScalarType,
        part: ScalarType,
        whole: Operand,
        parts: &[Reg<P>],
        pack: bool,
    ) -> Result<()> {
        self.check_pack("mov", wide, part, parts.len())?;
        let v = Operand::Vector(parts.iter().map(|r| Operand::Reg(r.as_ref())).collect());
        let form = if wide.bits() == 128 {
            Form::MovB128
        } else {
            Form::Mov
        };
        let (d, a) = if pack { (whole, v) } else { (v, whole) };
        let i = Instruction::new("mov")
            .ty(wide.bits_type())
            .operands((d, a));
        self.emit(form, i)
    }

    fn check_pack(&mut self, mn: &str, wide: ScalarType, part: ScalarType, n: usize) -> Result<()> {
        if !matches!(n, 2 | 4) || part.bits() * n as u32 != wide.bits() || part == ScalarType::Pred
        {
            return Err(self.err(
                ErrorKind::VectorWidth,
                mn,
                format!("{n} parts of {part} do not make one {wide}"),
            ));
        }
        Ok(())
    }
}
