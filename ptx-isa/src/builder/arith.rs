//! Integer, floating-point and half-precision arithmetic (PTX ISA 9.7.1, 9.7.3, 9.7.4).

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Src};
use crate::reg::{Reg, ty};
use crate::types::ScalarType;

/// A floating-point rounding modifier (PTX ISA 9.7.3 "Floating-Point Instructions": rounding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// `.rn`: to nearest even.
    Rn,
    /// `.rz`: towards zero.
    Rz,
    /// `.rm`: towards minus infinity.
    Rm,
    /// `.rp`: towards plus infinity.
    Rp,
}

impl Rounding {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rounding::Rn => "rn",
            Rounding::Rz => "rz",
            Rounding::Rm => "rm",
            Rounding::Rp => "rp",
        }
    }
}

/// Modifiers of floating-point arithmetic: rounding, flush-to-zero, saturation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FloatMods {
    /// `.rn` / `.rz` / `.rm` / `.rp` (none: the instruction's default, round to nearest).
    pub rounding: Option<Rounding>,
    /// `.ftz` (f32 and f16 only).
    pub ftz: bool,
    /// `.sat`: clamp to [0, 1] (f32 and f16 only).
    pub sat: bool,
}

impl FloatMods {
    /// No modifiers.
    pub const NONE: FloatMods = FloatMods {
        rounding: None,
        ftz: false,
        sat: false,
    };
    /// `.rn`
    pub const RN: FloatMods = FloatMods::NONE.round(Rounding::Rn);

    /// With `.ftz`.
    pub const fn ftz(mut self) -> FloatMods {
        self.ftz = true;
        self
    }
    /// With `.sat`.
    pub const fn sat(mut self) -> FloatMods {
        self.sat = true;
        self
    }
    /// With a rounding mode.
    pub const fn round(mut self, r: Rounding) -> FloatMods {
        self.rounding = Some(r);
        self
    }

    /// `mn{.rnd}{.ftz}{.sat}.t`: the opcode of an instruction with these modifiers (PTX ISA 9.7.3
    /// "Floating-Point Instructions"; on integers only `.sat`, 9.7.1.1). Which of them a type
    /// takes is its row's rule, checked by `emit`.
    fn opcode(self, mn: &'static str, t: ScalarType) -> Instruction {
        Instruction::new(mn)
            .modifier_if(
                self.rounding.is_some(),
                self.rounding.map_or("", Rounding::name),
            )
            .modifier_if(self.ftz, "ftz")
            .modifier_if(self.sat, "sat")
            .ty(t)
    }
}

/// The flavour of `div.f32` (PTX ISA 9.7.3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DivMode {
    /// `.approx`: fast, max 2 ulp in the full range.
    Approx,
    /// `.full`: max 2 ulp, full range.
    Full,
    /// IEEE 754 compliant with a rounding mode.
    Ieee(Rounding),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bin {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    Div,
    Rem,
}

impl Bin {
    fn name(self) -> &'static str {
        match self {
            Bin::Add => "add",
            Bin::Sub => "sub",
            Bin::Mul => "mul",
            Bin::Min => "min",
            Bin::Max => "max",
            Bin::Div => "div",
            Bin::Rem => "rem",
        }
    }
}

/// The row for `op` on type `t`, or `None` when PTX has no such form.
fn bin_form(op: Bin, t: ScalarType) -> Option<Form> {
    use ScalarType::*;
    let int = matches!(t, U16 | U32 | U64 | S16 | S32 | S64);
    Some(match (op, t) {
        (Bin::Add, _) if int => Form::AddInt,
        (Bin::Sub, _) if int => Form::SubInt,
        (Bin::Min, _) if int => Form::MinInt,
        (Bin::Max, _) if int => Form::MaxInt,
        (Bin::Div, _) if int => Form::DivInt,
        (Bin::Rem, _) if int => Form::RemInt,
        (Bin::Add, F32) => Form::AddF32,
        (Bin::Add, F64) => Form::AddF64,
        (Bin::Sub, F32) => Form::SubF32,
        (Bin::Sub, F64) => Form::SubF64,
        (Bin::Mul, F32) => Form::MulF32,
        (Bin::Mul, F64) => Form::MulF64,
        (Bin::Min, F32) => Form::MinF32,
        (Bin::Min, F64) => Form::MinF64,
        (Bin::Max, F32) => Form::MaxF32,
        (Bin::Max, F64) => Form::MaxF64,
        (Bin::Add, F16 | F16x2) => Form::AddF16,
        (Bin::Sub, F16 | F16x2) => Form::SubF16,
        (Bin::Mul, F16 | F16x2) => Form::MulF16,
        (Bin::Min, F16 | F16x2) => Form::MinF16,
        (Bin::Max, F16 | F16x2) => Form::MaxF16,
        (Bin::Add, Bf16 | Bf16x2) => Form::AddBf16,
        (Bin::Sub, Bf16 | Bf16x2) => Form::SubBf16,
        (Bin::Mul, Bf16 | Bf16x2) => Form::MulBf16,
        (Bin::Min, Bf16 | Bf16x2) => Form::MinBf16,
        (Bin::Max, Bf16 | Bf16x2) => Form::MaxBf16,
        _ => return None,
    })
}

/// Builder methods for one [`Bin`] operation: `fn name(d, a, b)` with no modifiers, or
/// `mods name(m, d, a, b)` with modifiers `m`; each emits through [`FunctionBuilder::binary`],
/// which picks the row for the operand type.
macro_rules! bin_methods {
    () => {};
    ($(#[$doc:meta])* fn $name:ident<T: $bound:path> = Bin::$op:ident; $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $name<T: $bound>(
            &mut self,
            d: Reg<T>,
            a: impl Into<Src<T>>,
            b: impl Into<Src<T>>,
        ) -> Result<()> {
            self.binary(Bin::$op, FloatMods::NONE, d, a.into(), b.into())
        }
        bin_methods! { $($rest)* }
    };
    ($(#[$doc:meta])* mods $name:ident<T: $bound:path> = Bin::$op:ident; $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $name<T: $bound>(
            &mut self,
            m: FloatMods,
            d: Reg<T>,
            a: impl Into<Src<T>>,
            b: impl Into<Src<T>>,
        ) -> Result<()> {
            self.binary(Bin::$op, m, d, a.into(), b.into())
        }
        bin_methods! { $($rest)* }
    };
}

/// Builder methods for the integer `mul`/`mad` modes (`.lo`, `.hi`, `.wide`; PTX ISA 9.7.1.5,
/// 9.7.1.6): `name(d, sources...)` with the destination's and each source's register type, the
/// mnemonic, the mode and the row; each emits through [`FunctionBuilder::int_mode`].
macro_rules! int_mode_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident<T: $bound:path>(d: $d:ty; $($src:ident: $st:ty),*) = $mn:literal $mode:literal $form:ident;
    )*) => {$(
        $(#[$doc])*
        pub fn $name<T: $bound>(&mut self, d: Reg<$d>, $($src: impl Into<Src<$st>>),*) -> Result<()> {
            self.int_mode::<T, $d>($mn, $mode, Form::$form, d, &[$($src.into().into()),*])
        }
    )*};
}

/// Builder methods for the `.approx` unary instructions of one type (PTX ISA 9.7.3.14-9.7.3.20):
/// `name(d, a)` writes `mn.approx[.ftz].T d, a` with the given row.
macro_rules! approx_methods {
    ($($(#[$doc:meta])* $name:ident($t:ident) = $mn:literal $form:ident, ftz: $ftz:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(&mut self, d: Reg<ty::$t>, a: impl Into<Src<ty::$t>>) -> Result<()> {
            let i = Instruction::new($mn)
                .modifier("approx")
                .modifier_if($ftz, "ftz")
                .ty(ScalarType::$t).operands((d, a.into()));
            self.emit(Form::$form, i)
        }
    )*};
}

impl FunctionBuilder {
    fn binary<T: ty::RegType>(
        &mut self,
        op: Bin,
        m: FloatMods,
        d: Reg<T>,
        a: Src<T>,
        b: Src<T>,
    ) -> Result<()> {
        let t = T::TYPE;
        let Some(form) = bin_form(op, t) else {
            return Err(self.no_form(op.name(), op.name(), t));
        };
        // Which modifiers the type takes is the row's to say: `emit` checks the instruction
        // against the row's pattern and rules (`.sat` only on `.s32`, PTX ISA 9.7.1.1).
        // Integer mul is written with its mode; float mul without.
        self.emit(form, m.opcode(op.name(), t).operands((d, a, b)))
    }

    bin_methods! {
        /// `add.T d, a, b` (integers, f32, f64, f16/f16x2, bf16/bf16x2).
        fn add<T: ty::RegType> = Bin::Add;
        /// `add` with modifiers: `add.rn.ftz.sat.f32`, or `add.sat.s32` (`FloatMods::NONE.sat()`).
        mods add_mods<T: ty::RegType> = Bin::Add;
        /// `sub.T d, a, b`.
        fn sub<T: ty::RegType> = Bin::Sub;
        /// `sub` with modifiers.
        mods sub_mods<T: ty::RegType> = Bin::Sub;
        /// `mul.T d, a, b` for floating-point types (integers use [`Self::mul_lo`],
        /// [`Self::mul_hi`], [`Self::mul_wide`]).
        fn mul<T: ty::Float> = Bin::Mul;
        /// Floating-point `mul` with modifiers.
        mods mul_mods<T: ty::Float> = Bin::Mul;
        /// `min.T d, a, b`.
        fn min<T: ty::RegType> = Bin::Min;
        /// `max.T d, a, b`.
        fn max<T: ty::RegType> = Bin::Max;
        /// `rem.T d, a, b` (integers).
        fn rem<T: ty::Int> = Bin::Rem;
    }

    fn int_mode<T: ty::Int, D: ty::RegType>(
        &mut self,
        mn: &'static str,
        mode: &'static str,
        form: Form,
        d: Reg<D>,
        srcs: &[crate::instr::Operand],
    ) -> Result<()> {
        let t = T::TYPE;
        if !t.is_int() {
            return Err(self.err(
                ErrorKind::OperandType,
                mn,
                format!("{mn}.{mode} needs .uN or .sN operands, not {t}"),
            ));
        }
        let mut i = Instruction::new(mn).modifier(mode).ty(t).operand(d);
        for s in srcs {
            i = i.operand(s.clone());
        }
        self.emit(form, i)
    }

    int_mode_methods! {
        /// `mul.lo.T d, a, b`: the low half of the product.
        mul_lo<T: ty::Int>(d: T; a: T, b: T) = "mul" "lo" MulInt;
        /// `mul.hi.T d, a, b`: the high half of the product.
        mul_hi<T: ty::Int>(d: T; a: T, b: T) = "mul" "hi" MulInt;
        /// `mul.wide.T d, a, b`: the full product in a register twice as wide (16 and 32-bit
        /// sources).
        mul_wide<T: Widen>(d: T::Wide; a: T, b: T) = "mul" "wide" MulInt;
        /// `mad.lo.T d, a, b, c`: `a * b + c`, low half.
        mad_lo<T: ty::Int>(d: T; a: T, b: T, c: T) = "mad" "lo" MadInt;
        /// `mad.hi.T d, a, b, c`.
        mad_hi<T: ty::Int>(d: T; a: T, b: T, c: T) = "mad" "hi" MadInt;
        /// `mad.wide.T d, a, b, c`: `c` and `d` twice as wide as `a` and `b`.
        mad_wide<T: Widen>(d: T::Wide; a: T, b: T, c: T::Wide) = "mad" "wide" MadInt;
    }

    /// `fma.rn.T d, a, b, c` (f32, f64, f16/f16x2, bf16/bf16x2).
    pub fn fma<T: ty::Float>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: impl Into<Src<T>>,
    ) -> Result<()> {
        self.fma_mods(FloatMods::RN, d, a, b, c)
    }

    /// `fma` with modifiers (a rounding mode is required).
    pub fn fma_mods<T: ty::Float>(
        &mut self,
        m: FloatMods,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: impl Into<Src<T>>,
    ) -> Result<()> {
        use ScalarType::*;
        let t = T::TYPE;
        let form = match t {
            F32 => Form::FmaF32,
            F64 => Form::FmaF64,
            F16 | F16x2 => Form::FmaF16,
            _ => Form::FmaBf16,
        };
        // The rounding the row requires (`fma.rnd`, PTX ISA 9.7.3.6) is its pattern's to say:
        // without one, `emit` refuses.
        self.emit(
            form,
            m.opcode("fma", t)
                .operands((d, a.into(), b.into(), c.into())),
        )
    }

    /// `div.T d, a, b`: integers as they are, f32 and f64 IEEE round-to-nearest (`div.rn`).
    pub fn div<T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        if T::TYPE.is_int() {
            return self.binary(Bin::Div, FloatMods::NONE, d, a.into(), b.into());
        }
        self.div_mode(DivMode::Ieee(Rounding::Rn), false, d, a, b)
    }

    /// Floating-point `div` with a mode (`.approx` and `.full` are f32 only) and `.ftz` (f32 only).
    pub fn div_mode<T: ty::RegType>(
        &mut self,
        mode: DivMode,
        ftz: bool,
        d: Reg<T>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        let t = T::TYPE;
        let form = match t {
            ScalarType::F32 => Form::DivF32,
            ScalarType::F64 => Form::DivF64,
            _ => {
                return Err(self.err(
                    ErrorKind::OperandType,
                    "div",
                    format!("div with a mode needs .f32 or .f64, not {t}"),
                ));
            }
        };
        let m = match mode {
            DivMode::Approx => "approx",
            DivMode::Full => "full",
            DivMode::Ieee(r) => r.name(),
        };
        // `.approx`, `.full` and `.ftz` are f32 only: the `div.f64` row's pattern says so
        // (PTX ISA 9.7.3.8), checked by `emit`.
        let i = Instruction::new("div")
            .modifier(m)
            .modifier_if(ftz, "ftz")
            .ty(t)
            .operands((d, a.into(), b.into()));
        self.emit(form, i)
    }

    fn unary_float_or_signed<T: ty::RegType>(
        &mut self,
        mn: &'static str,
        d: Reg<T>,
        a: Src<T>,
    ) -> Result<()> {
        use ScalarType::*;
        let t = T::TYPE;
        let neg = mn == "neg";
        let form = match t {
            S16 | S32 | S64 => {
                if neg {
                    Form::NegInt
                } else {
                    Form::AbsInt
                }
            }
            F32 => {
                if neg {
                    Form::NegF32
                } else {
                    Form::AbsF32
                }
            }
            F64 => {
                if neg {
                    Form::NegF64
                } else {
                    Form::AbsF64
                }
            }
            F16 | F16x2 => {
                if neg {
                    Form::NegF16
                } else {
                    Form::AbsF16
                }
            }
            Bf16 | Bf16x2 => {
                if neg {
                    Form::NegBf16
                } else {
                    Form::AbsBf16
                }
            }
            _ => {
                return Err(self.no_form(mn, mn, t));
            }
        };
        let i = Instruction::new(mn).ty(t).operands((d, a));
        self.emit(form, i)
    }

    forward_methods! {
        /// `abs.T d, a` (signed integers and floats).
        fn abs<T: ty::RegType>(d: Reg<T>, a: impl Into<Src<T>>)
            => unary_float_or_signed("abs", d, a.into());
        /// `neg.T d, a` (signed integers and floats).
        fn neg<T: ty::RegType>(d: Reg<T>, a: impl Into<Src<T>>)
            => unary_float_or_signed("neg", d, a.into());
        /// `rcp.rn.T d, a`: IEEE reciprocal (f32, f64).
        fn rcp<T: ty::Float>(d: Reg<T>, a: impl Into<Src<T>>)
            => ieee_unary("rcp", Form::RcpF32, Form::RcpF64, d, a.into());
        /// `sqrt.rn.T d, a`: IEEE square root (f32, f64).
        fn sqrt<T: ty::Float>(d: Reg<T>, a: impl Into<Src<T>>)
            => ieee_unary("sqrt", Form::SqrtF32, Form::SqrtF64, d, a.into());
    }

    fn ieee_unary<T: ty::RegType>(
        &mut self,
        mn: &'static str,
        f32_form: Form,
        f64_form: Form,
        d: Reg<T>,
        a: Src<T>,
    ) -> Result<()> {
        let form = match T::TYPE {
            ScalarType::F32 => f32_form,
            ScalarType::F64 => f64_form,
            t => {
                return Err(self.err(
                    ErrorKind::OperandType,
                    mn,
                    format!("{mn}.rn needs .f32 or .f64, not {t}"),
                ));
            }
        };
        let i = Instruction::new(mn)
            .modifier("rn")
            .ty(T::TYPE)
            .operands((d, a));
        self.emit(form, i)
    }

    approx_methods! {
        /// `rcp.approx.ftz.f32 d, a`: fast reciprocal.
        rcp_approx(F32) = "rcp" RcpF32, ftz: true;
        /// `rcp.approx.ftz.f64 d, a`: fast double reciprocal (about 20 bits of the mantissa; PTX
        /// ISA 9.7.3.14). nvcc emits it as the seed of a Newton iteration for double division.
        rcp_approx_f64(F64) = "rcp" RcpApproxF64, ftz: true;
        /// `sqrt.approx.ftz.f32 d, a`.
        sqrt_approx(F32) = "sqrt" SqrtF32, ftz: true;
        /// `rsqrt.approx.ftz.f32 d, a`.
        rsqrt(F32) = "rsqrt" RsqrtF32, ftz: true;
        /// `rsqrt.approx.f64 d, a`.
        rsqrt_f64(F64) = "rsqrt" RsqrtF64, ftz: false;
        /// `sin.approx.ftz.f32 d, a`.
        sin(F32) = "sin" SinF32, ftz: true;
        /// `cos.approx.ftz.f32 d, a`.
        cos(F32) = "cos" CosF32, ftz: true;
        /// `lg2.approx.ftz.f32 d, a`: log base 2.
        lg2(F32) = "lg2" Lg2F32, ftz: true;
    }

    /// `ex2.approx` for f32 (`.ftz`), f16/f16x2, and bf16/bf16x2 (`.ftz`, sm_90).
    pub fn ex2<T: ty::Float>(&mut self, d: Reg<T>, a: impl Into<Src<T>>) -> Result<()> {
        use ScalarType::*;
        let t = T::TYPE;
        let (form, ftz) = match t {
            F32 => (Form::Ex2F32, true),
            F16 | F16x2 => (Form::Ex2F16, false),
            Bf16 | Bf16x2 => (Form::Ex2Bf16, true),
            _ => {
                return Err(self.no_form("ex2", "ex2.approx", t));
            }
        };
        let i = Instruction::from_opcode("ex2.approx")
            .modifier_if(ftz, "ftz")
            .ty(t)
            .operands((d, a.into()));
        self.emit(form, i)
    }

    /// `tanh.approx` for f32, f16/f16x2 and bf16/bf16x2 (sm_90).
    pub fn tanh<T: ty::Float>(&mut self, d: Reg<T>, a: impl Into<Src<T>>) -> Result<()> {
        use ScalarType::*;
        let t = T::TYPE;
        let form = match t {
            F32 => Form::TanhF32,
            F16 | F16x2 => Form::TanhF16,
            Bf16 | Bf16x2 => Form::TanhBf16,
            _ => {
                return Err(self.no_form("tanh", "tanh.approx", t));
            }
        };
        let i = Instruction::from_opcode("tanh.approx")
            .ty(t)
            .operands((d, a.into()));
        self.emit(form, i)
    }
}

/// Integer types with a twice-as-wide partner, for `mul.wide` and `mad.wide`.
pub trait Widen: ty::Int {
    /// The wide type.
    type Wide: ty::Int;
}
impl Widen for ty::U16 {
    type Wide = ty::U32;
}
impl Widen for ty::S16 {
    type Wide = ty::S32;
}
impl Widen for ty::U32 {
    type Wide = ty::U64;
}
impl Widen for ty::S32 {
    type Wide = ty::S64;
}
