//! Logic, shift and bit-manipulation instructions (PTX ISA 9.7.7 "Logic and Shift Instructions";
//! popc, clz, brev, bfe, bfi from 9.7.1; prmt from 9.7.9.7).

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, IntoOperands, Operand, Src};
use crate::reg::{Reg, ty};
use crate::types::ScalarType;

/// Builder methods for the logic instructions (PTX ISA 9.7.7.1-9.7.7.4): `name(d, sources...)`
/// writes `mn.bN d, sources` (or `.pred`) with the given row through [`FunctionBuilder::logic`].
macro_rules! logic_methods {
    ($($(#[$doc:meta])* $name:ident($($src:ident),+) = $mn:literal $form:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name<T: ty::RegType>(
            &mut self,
            d: Reg<T>,
            $($src: impl Into<Src<T>>),+
        ) -> Result<()> {
            self.logic($mn, Form::$form, d, &[$($src.into().into()),+])
        }
    )*};
}

impl FunctionBuilder {
    /// `mn.bN d, srcs` (or `.pred`): the shape of and, or, xor, not (PTX ISA 9.7.7.1-9.7.7.4).
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

    logic_methods! {
        /// `and.bN d, a, b` (or `and.pred`).
        and(a, b) = "and" And;
        /// `or.bN d, a, b`.
        or(a, b) = "or" Or;
        /// `xor.bN d, a, b`.
        xor(a, b) = "xor" Xor;
        /// `not.bN d, a`.
        not(a) = "not" Not;
    }

    forward_methods! {
        /// `lop3.b32 d, a, b, c, lut`: any three-input boolean function given by its truth table
        /// (PTX ISA 9.7.7.6: `lut` is `F(0xF0, 0xCC, 0xAA)`).
        fn lop3<T: ty::RegType>(
            d: Reg<T>,
            a: impl Into<Src<T>>,
            b: impl Into<Src<T>>,
            c: impl Into<Src<T>>,
            lut: u8,
        ) => write_b32::<T>(
            "lop3",
            Form::Lop3,
            (d, a.into(), b.into(), c.into(), Imm::UInt(lut as u64)),
        );
        /// `prmt.b32 d, a, b, c`: byte permute with selector `c` (default mode, PTX ISA 9.7.9.7).
        fn prmt<T: ty::RegType>(
            d: Reg<T>,
            a: impl Into<Src<T>>,
            b: impl Into<Src<T>>,
            selector: impl Into<Src<ty::U32>>,
        ) => write_b32::<T>("prmt", Form::Prmt, (d, a.into(), b.into(), selector.into()));
        /// `shl.bN d, a, b` (shift amount `b` is `.u32`).
        fn shl<T: ty::Int>(d: Reg<T>, a: impl Into<Src<T>>, b: impl Into<Src<ty::U32>>)
            => shift("shl", Form::Shl, T::TYPE.bits_type(), d, a.into(), b.into());
        /// `shr.T d, a, b`: logical for `.uN`/`.bN`, arithmetic for `.sN`.
        fn shr<T: ty::Int>(d: Reg<T>, a: impl Into<Src<T>>, b: impl Into<Src<ty::U32>>)
            => shift("shr", Form::Shr, T::TYPE, d, a.into(), b.into());
    }

    /// `mn.b32 ops` on a 32-bit integer type `T`: lop3 and prmt (PTX ISA 9.7.7.6, 9.7.9.7).
    fn write_b32<T: ty::RegType>(
        &mut self,
        mn: &'static str,
        form: Form,
        ops: impl IntoOperands,
    ) -> Result<()> {
        if T::TYPE.bits() != 32 || !T::TYPE.agrees_with(ScalarType::B32) {
            return Err(self.err(
                ErrorKind::OperandType,
                mn,
                format!("{mn} needs 32-bit integers, not {}", T::TYPE),
            ));
        }
        self.emit(form, Instruction::new(mn).ty(ScalarType::B32).operands(ops))
    }

    /// `mn.T d, a, b` with a `.u32` shift amount (PTX ISA 9.7.7.7 shl, 9.7.7.8 shr).
    fn shift<T: ty::Int>(
        &mut self,
        mn: &'static str,
        form: Form,
        t: ScalarType,
        d: Reg<T>,
        a: Src<T>,
        b: Src<ty::U32>,
    ) -> Result<()> {
        self.emit(form, Instruction::new(mn).ty(t).operands((d, a, b)))
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
}
