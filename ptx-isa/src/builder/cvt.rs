//! Conversions (PTX ISA 9.7.9.21 "cvt", 9.7.9.20 "cvta").

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, IntoOperands};
use crate::reg::{Reg, ty};
use crate::space::StateSpace;
use crate::types::ScalarType;

/// A `cvt` rounding modifier: float rounding (`.rn`...) or integer rounding (`.rni`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CvtRounding {
    Rn,
    Rz,
    Rm,
    Rp,
    /// round to nearest integer
    Rni,
    /// towards zero, to an integer (C's float-to-int)
    Rzi,
    Rmi,
    Rpi,
}

impl CvtRounding {
    fn name(self) -> &'static str {
        use CvtRounding::*;
        match self {
            Rn => "rn",
            Rz => "rz",
            Rm => "rm",
            Rp => "rp",
            Rni => "rni",
            Rzi => "rzi",
            Rmi => "rmi",
            Rpi => "rpi",
        }
    }
}

/// Modifiers of `cvt`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CvtMods {
    /// The rounding; `None` picks the one the conversion requires (`.rzi` float to integer, `.rn`
    /// integer to float and narrowing float conversions).
    pub rounding: Option<CvtRounding>,
    /// `.ftz` (f32 source or destination).
    pub ftz: bool,
    /// `.sat`: clamp to the destination range.
    pub sat: bool,
}

/// An 8-bit float format (PTX ISA 5.2.3 "Alternate Floating-Point Data Formats").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum F8Kind {
    /// `.e4m3`
    E4m3,
    /// `.e5m2`
    E5m2,
}

impl F8Kind {
    fn x2(self) -> ScalarType {
        match self {
            F8Kind::E4m3 => ScalarType::E4m3x2,
            F8Kind::E5m2 => ScalarType::E5m2x2,
        }
    }
}

/// The plain `cvt` types (the `cvt` row; bf16, tf32 and fp8 conversions have rows of their own).
fn plain_cvt_type(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        t,
        U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64 | F16 | F32 | F64
    )
}

/// The rounding a plain conversion requires (PTX ISA 9.7.9.21): `.rzi` from float to integer (as
/// C casts), `.rn` from integer to float and from a wider to a narrower float, none otherwise.
fn required_rounding(dt: ScalarType, st: ScalarType) -> Option<CvtRounding> {
    if st.is_float() && dt.is_int() {
        Some(CvtRounding::Rzi)
    } else if st.is_int() && dt.is_float()
        || (st.is_float() && dt.is_float() && dt.bits() < st.bits())
    {
        Some(CvtRounding::Rn)
    } else {
        None
    }
}

impl FunctionBuilder {
    /// `cvt.D.S d, a` with the rounding the conversion requires: `.rzi` from float to integer (as C
    /// casts), `.rn` from integer to float and from a wider to a narrower float, none otherwise.
    pub fn cvt<D: ty::RegType, S: ty::RegType>(&mut self, d: Reg<D>, a: Reg<S>) -> Result<()> {
        self.cvt_mods(CvtMods::default(), d, a)
    }

    /// `cvt` with explicit modifiers. Also converts `.f32` to `.bf16` (`cvt.rn.bf16.f32`, sm_80) and
    /// back (`cvt.f32.bf16`).
    pub fn cvt_mods<D: ty::RegType, S: ty::RegType>(
        &mut self,
        m: CvtMods,
        d: Reg<D>,
        a: Reg<S>,
    ) -> Result<()> {
        let (dt, st) = (D::TYPE, S::TYPE);
        let (form, required) = match (dt, st) {
            (ScalarType::Bf16, ScalarType::F32) => (Form::CvtBf16F32, Some(CvtRounding::Rn)),
            (ScalarType::F32, ScalarType::Bf16) => (Form::CvtF32Bf16, None),
            _ if plain_cvt_type(dt) && plain_cvt_type(st) => (Form::Cvt, required_rounding(dt, st)),
            _ => {
                return Err(self.err(
                    ErrorKind::OperandType,
                    "cvt",
                    format!("cvt{dt}{st} is not a conversion PTX has"),
                ));
            }
        };
        // An explicit rounding is written as asked; which rounding and `.ftz` a type pair takes
        // is the row's rule (PTX ISA 9.7.9.21), checked by `emit`.
        let rounding = m.rounding.or(required);
        let mods = [
            (rounding.is_some(), rounding.map_or("", CvtRounding::name)),
            (m.ftz, "ftz"),
            (m.sat, "sat"),
        ];
        self.write_cvt(form, &mods, [dt, st], (d, a))
    }

    /// Writes `cvt.MODS.D.S ops` as `form`, each `(on, modifier)` of `mods` written when on: the
    /// one shape of every conversion (PTX ISA 9.7.9.21). Which modifiers a type pair takes is the
    /// row's rule, checked by `emit`.
    fn write_cvt(
        &mut self,
        form: Form,
        mods: &[(bool, &'static str)],
        [dt, st]: [ScalarType; 2],
        ops: impl IntoOperands,
    ) -> Result<()> {
        let mut i = Instruction::new("cvt");
        for &(on, m) in mods {
            i = i.modifier_if(on, m);
        }
        self.emit(form, i.ty(dt).ty(st).operands(ops))
    }

    forward_methods! {
        /// `cvt.rn{.relu}.bf16x2.f32 d, hi, lo`: packs two f32 into bf16x2, `hi` into the upper
        /// half (PTX ISA 9.7.9.21: "the result of a is stored in the upper half").
        fn cvt_pack_bf16x2(d: Reg<ty::Bf16x2>, hi: Reg<ty::F32>, lo: Reg<ty::F32>, relu: bool)
            => cvt_pack_half(Form::CvtBf16x2F32, d, (hi, lo), relu);
        /// `cvt.rn{.relu}.f16x2.f32 d, hi, lo`.
        fn cvt_pack_f16x2(d: Reg<ty::F16x2>, hi: Reg<ty::F32>, lo: Reg<ty::F32>, relu: bool)
            => cvt_pack_half(Form::CvtF16x2F32, d, (hi, lo), relu);
    }

    /// `cvt.rn{.relu}.T.f32 d, hi, lo` of row `form`, for a pair of halves `T` (`.bf16x2`,
    /// `.f16x2`).
    fn cvt_pack_half<T: ty::RegType>(
        &mut self,
        form: Form,
        d: Reg<T>,
        (hi, lo): (Reg<ty::F32>, Reg<ty::F32>),
        relu: bool,
    ) -> Result<()> {
        let types = [T::TYPE, ScalarType::F32];
        self.write_cvt(form, &[(true, "rn"), (relu, "relu")], types, (d, hi, lo))
    }

    /// `cvt.rna.tf32.f32 d, a`: round to tf32 (the result is a `.b32` holding the tf32 bits).
    pub fn cvt_tf32(&mut self, d: Reg<ty::B32>, a: Reg<ty::F32>) -> Result<()> {
        let types = [ScalarType::Tf32, ScalarType::F32];
        self.write_cvt(Form::CvtTf32F32, &[(true, "rna")], types, (d, a))
    }

    /// `cvt.rn.satfinite{.relu}.e4m3x2.f32 d, hi, lo` (or `.e5m2x2`): two f32 to a packed pair of
    /// 8-bit floats in a 16-bit register (sm_89+).
    pub fn cvt_pack_f8x2(
        &mut self,
        kind: F8Kind,
        d: Reg<ty::B16>,
        hi: Reg<ty::F32>,
        lo: Reg<ty::F32>,
        relu: bool,
    ) -> Result<()> {
        let mods = [(true, "rn"), (true, "satfinite"), (relu, "relu")];
        let types = [kind.x2(), ScalarType::F32];
        self.write_cvt(Form::CvtF8x2F32, &mods, types, (d, hi, lo))
    }

    /// `cvt.rn{.relu}.f16x2.e4m3x2 d, a` (or `.e5m2x2`): a packed pair of 8-bit floats to f16x2.
    pub fn cvt_unpack_f8x2(
        &mut self,
        kind: F8Kind,
        d: Reg<ty::F16x2>,
        a: Reg<ty::B16>,
        relu: bool,
    ) -> Result<()> {
        let types = [ScalarType::F16x2, kind.x2()];
        self.write_cvt(
            Form::CvtF16x2F8x2,
            &[(true, "rn"), (relu, "relu")],
            types,
            (d, a),
        )
    }

    fn cvta_impl(
        &mut self,
        to: bool,
        space: StateSpace,
        d: Reg<ty::U64>,
        a: Reg<ty::U64>,
    ) -> Result<()> {
        use crate::space::SharedScope;
        let (name, form) = match space {
            StateSpace::Global => ("global", Form::Cvta),
            StateSpace::Local => ("local", Form::Cvta),
            StateSpace::Const => ("const", Form::Cvta),
            StateSpace::Param => ("param", Form::Cvta),
            StateSpace::Shared(SharedScope::Implicit | SharedScope::Cta) => ("shared", Form::Cvta),
            StateSpace::Shared(SharedScope::Cluster) => ("shared::cluster", Form::CvtaCluster),
            other => {
                return Err(self.err(
                    ErrorKind::OperandKind,
                    "cvta",
                    format!("cvta has no form for {other:?}"),
                ));
            }
        };
        let i = Instruction::new("cvta")
            .modifier_if(to, "to")
            .modifier(name)
            .ty(ScalarType::U64)
            .operands((d, a));
        self.emit(form, i)
    }

    /// `cvta.to.SPACE.u64 d, a`: a generic address to an address in `space`.
    pub fn cvta_to(&mut self, space: StateSpace, d: Reg<ty::U64>, a: Reg<ty::U64>) -> Result<()> {
        self.cvta_impl(true, space, d, a)
    }

    /// `cvta.SPACE.u64 d, a`: an address in `space` to a generic address.
    pub fn cvta_from(&mut self, space: StateSpace, d: Reg<ty::U64>, a: Reg<ty::U64>) -> Result<()> {
        self.cvta_impl(false, space, d, a)
    }
}
