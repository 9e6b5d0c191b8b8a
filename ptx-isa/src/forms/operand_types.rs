//! The types of each row's operands, per modifier choice: what the validator holds a parsed
//! instruction's registers to (PTX ISA 6.1 "Operand Type Information"), read from here and nowhere
//! else. An operand the table does not name is not type-checked; an operand that is not a register
//! or an immediate (an address, the sink `_`, a pair `p|q`, a negated predicate) is not either.

use super::Form;
use crate::types::ScalarType;

/// The type an operand is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// The instruction's type at this position: 0 for the first type the opcode names.
    Type(usize),
    /// Twice the width of the type at this position (`mul.wide.s32` writes an `.s64`).
    Wide(usize),
    /// This type.
    Fixed(ScalarType),
}

/// How a register's type must relate to the wanted type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The same size and a compatible kind (PTX ISA 6.1).
    Agree,
    /// A compatible kind and at least as wide (`ld`, `st`, `cvt`: PTX ISA 9.7.9.8, 9.7.9.21).
    Wider,
    /// As [`Fit::Agree`]; a braced vector there packs elements of one size that fill the type
    /// (`mov.b64 d, {lo, hi}`, PTX ISA 9.7.9.1).
    Packed,
    /// As [`Fit::Agree`], and a register: an immediate there is refused (tcgen05.commit's ctaMask).
    Register,
    /// As [`Fit::Agree`], and one value: a braced vector there is refused (tex's `lod`).
    Scalar,
    /// A braced vector's elements agree with the wanted type; one value agrees with this type
    /// (tex's `e, f`: an `.s32` offset vector, or the `.f32` depth compare value alone).
    ScalarOr(ScalarType),
    /// A coordinate vector of an array geometry: the first element is the `.s32` array index, the
    /// others agree with the wanted type (PTX ISA 9.7.10.3: "the first element ... array index").
    ArrayIndex,
}

/// When a slot applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Always.
    Always,
    /// With the modifier written.
    With(&'static str),
    /// Without the modifier.
    Without(&'static str),
    /// With one of the modifiers written.
    WithAny(&'static [&'static str]),
    /// With none of the modifiers written.
    WithoutAny(&'static [&'static str]),
    /// When the instruction's type at the position is one of these.
    TypeIn(usize, &'static [ScalarType]),
}

/// One operand's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The operand's position; [`ALL`] for every operand.
    pub operand: usize,
    /// The type it is held to.
    pub want: Want,
    /// How.
    pub fit: Fit,
    /// When.
    pub when: When,
}

/// The `operand` of a [`Slot`] that stands for every operand.
pub const ALL: usize = usize::MAX;

const fn at(operand: usize, want: Want) -> Slot {
    Slot {
        operand,
        want,
        fit: Fit::Agree,
        when: When::Always,
    }
}

const fn wider(operand: usize, want: Want) -> Slot {
    Slot {
        fit: Fit::Wider,
        ..at(operand, want)
    }
}

const fn packed(operand: usize, want: Want) -> Slot {
    Slot {
        fit: Fit::Packed,
        ..at(operand, want)
    }
}

const fn scalar(operand: usize, want: Want) -> Slot {
    Slot {
        fit: Fit::Scalar,
        ..at(operand, want)
    }
}

/// The array geometries of textures, whose coordinates start with the array index.
const ARRAYS: &[&str] = &["a1d", "a2d", "acube", "a2dms"];

/// A texture's coordinates `[a, c]`, of ctype (the second type).
const COORDS: Slot = when(at(1, Type(1)), When::WithoutAny(ARRAYS));

/// An array texture's coordinates: the `.s32` index, then ctype.
const ARRAY_COORDS: Slot = when(
    Slot {
        fit: Fit::ArrayIndex,
        ..at(1, Type(1))
    },
    When::WithAny(ARRAYS),
);

const fn when(s: Slot, when: When) -> Slot {
    Slot { when, ..s }
}

use ScalarType::{B32, B64, B128, F32, F64, Pred, S32, U32, U64};
use Want::{Fixed, Type, Wide};

const T0: Want = Type(0);
const T1: Want = Type(1);
const T2: Want = Type(2);
/// Every operand has the instruction's (first) type.
const UNIFORM: &[Slot] = &[at(ALL, T0)];
const F32_S32: &[ScalarType] = &[F32, S32];

/// The rows' operand types: each row with the slots of its operands.
pub static OPERAND_TYPES: &[(&[Form], &[Slot])] = {
    use Form::*;
    &[
        (
            &[
                AddInt,
                SubInt,
                DivInt,
                RemInt,
                AbsInt,
                NegInt,
                MinInt,
                MaxInt,
                MinIntRelu,
                MaxIntRelu,
                AddF32,
                AddF64,
                SubF32,
                SubF64,
                MulF32,
                MulF64,
                FmaF32,
                FmaF64,
                DivF32,
                DivF64,
                AbsF32,
                AbsF64,
                NegF32,
                NegF64,
                MadF32,
                MadF64,
                MinF32,
                MinF64,
                MaxF32,
                MaxF64,
                Min3F32,
                Max3F32,
                AddF32x2,
                SubF32x2,
                MulF32x2,
                FmaF32x2,
                RcpF32,
                RcpF64,
                RcpApproxF64,
                SqrtF32,
                SqrtF64,
                RsqrtF32,
                RsqrtF64,
                SinF32,
                CosF32,
                Lg2F32,
                Ex2F32,
                TanhF32,
                And,
                Or,
                Xor,
                Not,
                Brev,
                AddCc,
                Addc,
                SubCc,
                Subc,
                Mul24,
                Mad24,
                Sad,
                Cnot,
                Copysign,
                Fns,
                Bmsk,
                Shf,
                AddF16,
                AddBf16,
                SubF16,
                SubBf16,
                MulF16,
                MulBf16,
                FmaF16,
                FmaBf16,
                FmaF16Relu,
                FmaOob,
                FmaOobBf16,
                NegF16,
                NegBf16,
                AbsF16,
                AbsBf16,
                MinF16,
                MinBf16,
                MaxF16,
                MaxBf16,
                TanhF16,
                TanhBf16,
                Ex2F16,
                Ex2Bf16,
                MadCc,
                Madc,
            ],
            UNIFORM,
        ),
        // PTX ISA 9.7.1.3/9.7.1.4: `.wide` writes (and mad adds) twice the width.
        (
            &[MulInt],
            &[
                when(at(0, Wide(0)), When::With("wide")),
                when(at(0, T0), When::Without("wide")),
                at(1, T0),
                at(2, T0),
            ],
        ),
        (
            &[MadInt],
            &[
                when(at(0, Wide(0)), When::With("wide")),
                when(at(0, T0), When::Without("wide")),
                at(1, T0),
                at(2, T0),
                when(at(3, Wide(0)), When::With("wide")),
                when(at(3, T0), When::Without("wide")),
            ],
        ),
        // PTX ISA 9.7.5.2: predicates out, the compared type in, a predicate to combine.
        (
            &[SetpInt, SetpF32, SetpF64, SetpF16, SetpBf16],
            &[at(0, Fixed(Pred)), at(1, T0), at(2, T0), at(3, Fixed(Pred))],
        ),
        // PTX ISA 9.7.5.1: `set.dtype.stype d, a, b`.
        (&[Set], &[at(0, T0), at(1, T1), at(2, T1)]),
        // Mixed precision: the `.f16`/`.bf16` sources, the `.f32` destination and addend.
        (
            &[AddF32Mixed, SubF32Mixed],
            &[at(0, T0), at(1, T1), at(2, T0)],
        ),
        (
            &[FmaF32Mixed],
            &[at(0, T0), at(1, T1), at(2, T1), at(3, T0)],
        ),
        (&[AtomInt, AtomCas16], &[at(0, T0), at(2, T0), at(3, T0)]),
        (
            &[AtomF32, AtomF64, AtomF16, AtomBf16],
            &[at(0, T0), at(2, T0)],
        ),
        (&[RedInt, RedF32, RedF64, RedF16, RedBf16], &[at(1, T0)]),
        // PTX ISA 9.7.13.11: the floating-point redux reads and writes .f32.
        (&[ReduxSyncF32], &[at(0, T0), at(1, T0)]),
        // PTX ISA 9.7.13.9: the mask of matching lanes and the member mask are .b32.
        (
            &[MatchAny, MatchAll],
            &[at(0, Fixed(B32)), at(1, T0), at(2, Fixed(B32))],
        ),
        (&[Mapa], &[at(0, T0), at(1, T0), at(2, Fixed(U32))]),
        (&[Getctarank], &[at(0, Fixed(U32)), at(1, T0)]),
        (
            &[Selp],
            &[at(0, T0), at(1, T0), at(2, T0), at(3, Fixed(Pred))],
        ),
        // PTX ISA 9.7.7.8/9.7.7.9: the shift amount is .u32.
        (&[Shl, Shr], &[at(0, T0), at(1, T0), at(2, Fixed(U32))]),
        (
            &[Bfe],
            &[at(0, T0), at(1, T0), at(2, Fixed(U32)), at(3, Fixed(U32))],
        ),
        (
            &[Bfi],
            &[
                at(0, T0),
                at(1, T0),
                at(2, T0),
                at(3, Fixed(U32)),
                at(4, Fixed(U32)),
            ],
        ),
        (&[Popc, Clz, Bfind], &[at(0, Fixed(U32)), at(1, T0)]),
        (&[Mov, MovB128], &[packed(0, T0), packed(1, T0)]),
        // PTX ISA 10: special registers are read as integers of their width.
        (
            &[MovSreg, MovSregCluster, MovSregTotalSmem],
            &[at(0, T0), at(1, T0)],
        ),
        // PTX ISA 9.7.13.15: the state is .b64, counts and transaction counts .u32, the phase
        // parity .u32, the waited-on result a predicate.
        (
            &[
                MbarrierArrive,
                MbarrierArriveDrop,
                MbarrierArriveNoComplete,
                MbarrierArriveExpectTx,
            ],
            &[at(0, Fixed(B64)), at(2, Fixed(U32))],
        ),
        (
            &[MbarrierInit, MbarrierExpectTx, MbarrierCompleteTx],
            &[at(1, Fixed(U32))],
        ),
        (
            &[MbarrierTestWait],
            &[
                at(0, Fixed(Pred)),
                when(at(2, Fixed(U32)), When::With("parity")),
                when(at(2, Fixed(B64)), When::Without("parity")),
            ],
        ),
        (
            &[MbarrierTryWait],
            &[
                at(0, Fixed(Pred)),
                when(at(2, Fixed(U32)), When::With("parity")),
                when(at(2, Fixed(B64)), When::Without("parity")),
                at(3, Fixed(U32)),
            ],
        ),
        // PTX ISA 9.7.14.2: .f32 and .s32 fragments are registers of that type (.f16 ones are
        // packed .f16x2 in 32-bit registers).
        (&[WmmaStore], &[when(at(1, T0), When::TypeIn(0, F32_S32))]),
        (&[WmmaLoad], &[when(at(0, T0), When::TypeIn(0, F32_S32))]),
        (
            &[WmmaMma],
            &[
                when(at(0, T0), When::TypeIn(0, &[F32])),
                when(at(3, Fixed(F32)), When::TypeIn(1, &[F32])),
            ],
        ),
        // The .bf16 and .tf32 fragments' accumulators are .f32, the integer ones' .s32, every
        // .f64 one .f64; .bf16/.tf32/.s8/.u8 inputs are packed in .b32 registers.
        (
            &[WmmaMmaBf16, WmmaMmaTf32],
            &[at(0, Fixed(F32)), at(3, Fixed(F32))],
        ),
        (&[WmmaMmaInt], &[at(0, Fixed(S32)), at(3, Fixed(S32))]),
        (&[WmmaMmaF64], &[at(ALL, Fixed(F64))]),
        (&[WmmaLoadTf32], &[when(at(0, T0), When::TypeIn(0, &[F32]))]),
        (&[WmmaLoadF64], &[at(0, Fixed(F64))]),
        (&[WmmaStoreTf32], &[at(1, Fixed(F32))]),
        (&[WmmaStoreF64], &[at(1, Fixed(F64))]),
        (&[Cvt], &[wider(0, T0), wider(1, T1)]),
        // PTX ISA 9.7.9.21: a .tf32 result is the 32-bit pattern of the value, rounded from an
        // .f32; a packed pair of halves is one 32-bit register, made of two .f32.
        (&[CvtTf32F32], &[at(0, Fixed(B32)), at(1, Fixed(F32))]),
        (
            &[
                CvtBf16Int, CvtIntBf16, CvtBf16F64, CvtF64Bf16, CvtBf16F16, CvtF16Bf16, CvtBf16F32,
                CvtF32Bf16,
            ],
            &[at(0, T0), at(1, T1)],
        ),
        (
            &[CvtF16x2F32, CvtBf16x2F32],
            &[at(0, Fixed(B32)), at(1, Fixed(F32)), at(2, Fixed(F32))],
        ),
        (&[Ld, LdOrdered, LdGlobalNc, Ldu], &[wider(0, T0)]),
        (&[St, StOrdered], &[wider(1, T0)]),
        (&[Szext], &[at(0, T0), at(1, T0), at(2, Fixed(U32))]),
        (&[Testp], &[at(0, Fixed(Pred)), at(1, T0)]),
        (&[Isspacep], &[at(0, Fixed(Pred))]),
        (&[Slct], &[at(0, T0), at(1, T0), at(2, T0), at(3, T1)]),
        (&[Movmatrix], &[at(0, Fixed(B32)), at(1, Fixed(B32))]),
        // PTX ISA 9.7.14.5.15/16: each matrix (or half of an m16n16 .b8 one) is one 32-bit
        // register (ptxas 13.0 refuses 16- and 64-bit ones: "Arguments mismatch").
        (&[Ldmatrix, LdmatrixB8], &[at(0, Fixed(B32))]),
        (&[Stmatrix, StmatrixB8], &[at(1, Fixed(B32))]),
        // PTX ISA 9.7.9.12/9.7.13.7: the value has the instruction's type.
        (&[StAsync, StAsyncGlobal, RedAsync], &[at(1, T0)]),
        // PTX ISA 9.7.16.10.10: ctaMask is a 16-bit register (ptxas 13.0 refuses an immediate
        // or a 32-bit register: "Arguments mismatch for instruction 'tcgen05.commit'").
        (
            &[Tcgen05Commit],
            &[Slot {
                fit: Fit::Register,
                ..at(1, Fixed(ScalarType::B16))
            }],
        ),
        // PTX ISA 9.7.9, tensormap.replace: `new_val` has the instruction's type.
        (
            &[
                TensormapReplace,
                TensormapReplaceMode,
                TensormapReplaceAtomicity,
            ],
            &[at(1, T0)],
        ),
        (&[TensormapReplaceOrd], &[at(1, Fixed(B32)), at(2, T0)]),
        // PTX ISA 9.7.9.18: the policy is a 64-bit register.
        (&[CreatepolicyFractional], &[at(0, Fixed(B64))]),
        (&[Cvta, CvtaCluster], &[at(0, T0), at(1, T0)]),
        // ---- the rows added for coverage ----
        // PTX ISA 9.7.9.22: two or four .s32 values packed into one 32-bit register.
        (
            &[CvtPack16],
            &[at(0, Fixed(B32)), at(1, Fixed(S32)), at(2, Fixed(S32))],
        ),
        (
            &[CvtPackSub],
            &[
                at(0, Fixed(B32)),
                at(1, Fixed(S32)),
                at(2, Fixed(S32)),
                wider(3, Fixed(B32)),
            ],
        ),
        // PTX ISA 9.7.9.13: the size is 64-bit.
        (&[StBulk], &[at(1, Fixed(B64))]),
        // PTX ISA 9.7.9.14: the data has the instruction's type.
        (&[MultimemLdReduce], &[at(0, T0)]),
        (&[MultimemSt, MultimemRed], &[at(1, T0)]),
        // PTX ISA 9.7.10.3/9.7.10.4: d of dtype, coordinates of ctype (an array's index first,
        // .s32), the level of detail and the gradients .f32, the offset vector .s32, the depth
        // compare value .f32.
        (
            &[Tex, Tld4],
            &[
                at(0, T0),
                COORDS,
                ARRAY_COORDS,
                Slot {
                    fit: Fit::ScalarOr(F32),
                    ..at(2, Fixed(S32))
                },
                scalar(3, Fixed(F32)),
            ],
        ),
        (
            &[TexLevel],
            &[
                at(0, T0),
                COORDS,
                ARRAY_COORDS,
                scalar(2, Fixed(F32)),
                at(3, Fixed(S32)),
                scalar(4, Fixed(F32)),
            ],
        ),
        (
            &[TexGrad],
            &[
                at(0, T0),
                COORDS,
                ARRAY_COORDS,
                at(2, Fixed(F32)),
                at(3, Fixed(F32)),
                at(4, Fixed(S32)),
                scalar(5, Fixed(F32)),
            ],
        ),
        (&[Txq, Suq], &[at(0, Fixed(B32))]),
        (&[TxqLevel], &[at(0, Fixed(B32)), at(2, Fixed(S32))]),
        (&[Istypep], &[at(0, Fixed(Pred)), at(1, Fixed(U64))]),
        // PTX ISA 9.7.11: surface coordinates are .s32.
        (&[Suld], &[wider(0, T0), at(1, Fixed(S32))]),
        (&[Sust], &[at(0, Fixed(S32)), wider(1, T0)]),
        // ptxas 13.0 takes a wider register for the data and for cvt.pack's `c`, as for ld/st.
        (&[SuredB, SuredP], &[at(0, Fixed(S32)), wider(1, T0)]),
        // PTX ISA 9.7.13.18: the response is a .b128.
        (
            &[ClcQueryCanceled],
            &[at(0, Fixed(Pred)), at(1, Fixed(B128))],
        ),
        (
            &[ClcQueryCtaid, ClcQueryCtaidV4],
            &[at(0, Fixed(B32)), at(1, Fixed(B128))],
        ),
        // PTX ISA 9.7.14.6: A and B fragments and the metadata are .b32; .f32 and .s32
        // accumulators are registers of that type, .f16 ones packed .f16x2 in .b32.
        (
            &[MmaSpF16],
            &[
                when(at(0, Fixed(F32)), When::TypeIn(0, &[F32])),
                when(at(0, Fixed(B32)), When::TypeIn(0, &[ScalarType::F16])),
                at(1, Fixed(B32)),
                at(2, Fixed(B32)),
                when(at(3, Fixed(F32)), When::TypeIn(3, &[F32])),
                when(at(3, Fixed(B32)), When::TypeIn(3, &[ScalarType::F16])),
                at(4, Fixed(B32)),
            ],
        ),
        (
            &[MmaSpTf32, MmaSpI8, MmaSpF8],
            &[
                at(0, T0),
                at(1, Fixed(B32)),
                at(2, Fixed(B32)),
                at(3, T0),
                at(4, Fixed(B32)),
            ],
        ),
        // PTX ISA 9.7.15.6: descriptors are .b64, the metadata .b32, the accumulators as for
        // the dense wgmma (.f16 ones packed in .b32).
        (
            &[WgmmaSpF16, WgmmaSpF8],
            &[
                when(at(0, Fixed(F32)), When::TypeIn(0, &[F32])),
                when(at(0, Fixed(B32)), When::TypeIn(0, &[ScalarType::F16])),
                at(2, Fixed(B64)),
                at(3, Fixed(B32)),
            ],
        ),
        (
            &[WgmmaSpTf32, WgmmaSpI8],
            &[at(0, T0), at(2, Fixed(B64)), at(3, Fixed(B32))],
        ),
        // PTX ISA 9.7.16.10.9: the descriptors are .b64.
        (&[Tcgen05MmaSp, Tcgen05MmaWsSp], &[at(2, Fixed(B64))]),
        // PTX ISA 9.7.12.4: the index is a .u32 register (ptxas 13.0 takes an immediate too).
        (&[BrxIdx], &[at(0, Fixed(U32))]),
        // PTX ISA 9.7.17: stack pointers and sizes of the instruction's type.
        (&[Stacksave, Stackrestore], &[at(0, T0)]),
        (&[Alloca], &[at(0, T0), at(1, T0)]),
        // PTX ISA 9.7.18: `vop.dtype.atype.btype d, a, b, c` (c of dtype); vset compares atype
        // with btype into a .u32.
        (
            &[
                Vadd, Vsub, Vabsdiff, Vmin, Vmax, Vshl, Vshr, Vmad, Vadd2, Vsub2, Vavrg2,
                Vabsdiff2, Vmin2, Vmax2, Vadd4, Vsub4, Vavrg4, Vabsdiff4, Vmin4, Vmax4,
            ],
            &[at(0, T0), at(1, T1), at(2, T2), at(3, T0)],
        ),
        (
            &[Vset, Vset2, Vset4],
            &[at(0, Fixed(U32)), at(1, T0), at(2, T1), at(3, Fixed(U32))],
        ),
    ]
};

/// The operand types of `form`'s row (empty where the row names none).
pub fn of(form: Form) -> &'static [Slot] {
    // Indexed by row once (the first entry naming a row is its), not searched per operand
    // (issue 33).
    static BY_FORM: std::sync::LazyLock<Vec<&'static [Slot]>> = std::sync::LazyLock::new(|| {
        let mut by_form: Vec<Option<&'static [Slot]>> = vec![None; Form::all().len()];
        for (forms, slots) in OPERAND_TYPES {
            for f in *forms {
                by_form[*f as usize].get_or_insert(slots);
            }
        }
        by_form.into_iter().map(|s| s.unwrap_or(&[])).collect()
    });
    BY_FORM.get(form as usize).copied().unwrap_or(&[])
}

/// True when the slot applies to an instruction with these modifiers and types.
pub fn applies<S: AsRef<str>>(when: When, modifiers: &[S], types: &[ScalarType]) -> bool {
    let has = |m: &str| {
        modifiers
            .iter()
            .any(|x| crate::instr::same_word(x.as_ref(), m))
    };
    match when {
        When::Always => true,
        When::With(m) => has(m),
        When::Without(m) => !has(m),
        When::WithAny(ms) => ms.iter().any(|m| has(m)),
        When::WithoutAny(ms) => !ms.iter().any(|m| has(m)),
        When::TypeIn(k, set) => types.get(k).is_some_and(|t| set.contains(t)),
    }
}

/// The type a slot wants, given the instruction's types; `None` where there is none (`.wide` on
/// a 64-bit type, which a rule of the row refuses).
pub fn wanted(want: Want, types: &[ScalarType]) -> Option<ScalarType> {
    match want {
        Want::Type(k) => types.get(k).copied(),
        Want::Wide(k) => types.get(k).copied().and_then(ScalarType::wide),
        Want::Fixed(t) => Some(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_listed_once_and_slots_fit_the_pattern() {
        let mut seen = std::collections::HashSet::new();
        for (forms, slots) in OPERAND_TYPES {
            for f in *forms {
                assert!(seen.insert(*f), "{f:?} is listed twice");
                let (_, most) = f.pattern().operand_range();
                for s in *slots {
                    assert!(
                        s.operand == ALL || s.operand < most,
                        "{f:?}: operand {} of {most}",
                        s.operand
                    );
                }
            }
        }
    }
}
