//! The rows of the form table. Sections are those of the PTX ISA 9.0 manual (chapter 9.7,
//! "Instructions"); minimum versions and targets are each section's "PTX ISA Notes" and "Target
//! ISA Notes", and are held against ptxas 13.0 from both sides by `tests/gating.rs`.

use super::FormSpec;
use crate::target::{TargetSet, v};

/// Forms that some targets gained in a later PTX version than the form itself: (form, targets,
/// version). The fp8 conversions came to sm_90 in PTX 7.8 and to sm_89 only in PTX 8.1 (ptxas
/// 13.0: "Feature 'cvt with .e4m3x2/.e5m2x2 on sm_89' requires PTX ISA .version 8.1").
pub(super) const LATER_ON: &[(Form, TargetSet, crate::target::PtxVersion)] = &[
    (Form::CvtF8x2F32, TargetSet::Sm89, v(8, 1)),
    (Form::CvtF16x2F8x2, TargetSet::Sm89, v(8, 1)),
    (Form::CvtF8x2F16x2, TargetSet::Sm89, v(8, 1)),
];

const ALL: TargetSet = TargetSet::all();
const SM86: TargetSet = TargetSet::sm_at_least(86);
const SM89: TargetSet = TargetSet::sm_at_least(89);
const SM90: TargetSet = TargetSet::sm_at_least(90);
const SM90A: TargetSet = TargetSet::Sm90a;
const SM100: TargetSet = TargetSet::sm_at_least(100);
const SM100A: TargetSet = TargetSet::Sm100a;
const ARCH_A: TargetSet = TargetSet::Sm90a
    .union(TargetSet::Sm100a)
    .union(TargetSet::Sm120a);
const SM100A_120A: TargetSet = TargetSet::Sm100a.union(TargetSet::Sm120a);

macro_rules! forms {
    ($($id:ident: $name:literal, $syntax:literal, ptx ($maj:literal, $min:literal), $targets:expr, $section:literal $(, $feature:ident)?;)*) => {
        /// A row of the form table. [`Form::spec`] gives its data.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Form {
            $(
                #[doc = concat!("`", $syntax, "` (PTX ISA ", $section, ")")]
                $id,
            )*
        }

        pub(super) static FORMS: &[FormSpec] = &[
            $(FormSpec {
                form: Form::$id,
                name: $name,
                syntax: $syntax,
                min_ptx: v($maj, $min),
                targets: $targets,
                section: $section,
                feature: forms!(@feature $($feature)?),
            },)*
        ];
    };
    (@feature feature) => { true };
    (@feature) => { false };
}

forms! {
    // ---- 9.7.1 Integer Arithmetic Instructions -------------------------------------------------
    AddInt: "add.int", "add{.sat}.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.1 Integer Arithmetic Instructions: add";
    SubInt: "sub.int", "sub{.sat}.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.2 Integer Arithmetic Instructions: sub";
    MulInt: "mul.int", "mul.{hi|lo|wide}.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.3 Integer Arithmetic Instructions: mul";
    MadInt: "mad.int", "mad.{hi|lo|wide}{.sat}.{u16|u32|u64|s16|s32|s64} d, a, b, c", ptx (1, 0), ALL, "9.7.1.4 Integer Arithmetic Instructions: mad";
    DivInt: "div.int", "div.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.8 Integer Arithmetic Instructions: div";
    RemInt: "rem.int", "rem.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.9 Integer Arithmetic Instructions: rem";
    AbsInt: "abs.int", "abs.{s16|s32|s64} d, a", ptx (1, 0), ALL, "9.7.1.10 Integer Arithmetic Instructions: abs";
    NegInt: "neg.int", "neg.{s16|s32|s64} d, a", ptx (1, 0), ALL, "9.7.1.11 Integer Arithmetic Instructions: neg";
    MinInt: "min.int", "min.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.12 Integer Arithmetic Instructions: min";
    // PTX ISA 9.7.1.12/9.7.1.13: `.relu` on .s32 is PTX 8.0, sm_90 (ptxas: "Illegal modifier
    // '.relu' for instruction 'min' with type '.u32'"). The packed .u16x2/.s16x2 forms are not
    // rows yet (their operands must be .b32 registers, which the operand types cannot say).
    MinIntRelu: "min.int.relu", "min.relu.s32 d, a, b", ptx (8, 0), SM90, "9.7.1.12 Integer Arithmetic Instructions: min (.relu)";
    MaxInt: "max.int", "max.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.13 Integer Arithmetic Instructions: max";
    MaxIntRelu: "max.int.relu", "max.relu.s32 d, a, b", ptx (8, 0), SM90, "9.7.1.13 Integer Arithmetic Instructions: max (.relu)";
    Mul24: "mul24", "mul24.{hi|lo}.{u32|s32} d, a, b", ptx (1, 0), ALL, "9.7.1.5 Integer Arithmetic Instructions: mul24";
    Mad24: "mad24", "mad24.{hi|lo}{.sat}.{u32|s32} d, a, b, c", ptx (1, 0), ALL, "9.7.1.6 Integer Arithmetic Instructions: mad24";
    Sad: "sad", "sad.{u16|u32|u64|s16|s32|s64} d, a, b, c", ptx (1, 0), ALL, "9.7.1.7 Integer Arithmetic Instructions: sad";
    Popc: "popc", "popc.{b32|b64} d, a", ptx (2, 0), ALL, "9.7.1.14 Integer Arithmetic Instructions: popc";
    Clz: "clz", "clz.{b32|b64} d, a", ptx (2, 0), ALL, "9.7.1.15 Integer Arithmetic Instructions: clz";
    Bfind: "bfind", "bfind{.shiftamt}.{u32|u64|s32|s64} d, a", ptx (2, 0), ALL, "9.7.1.16 Integer Arithmetic Instructions: bfind";
    Fns: "fns", "fns.b32 d, mask, base, offset", ptx (6, 0), ALL, "9.7.1.17 Integer Arithmetic Instructions: fns";
    Brev: "brev", "brev.{b32|b64} d, a", ptx (2, 0), ALL, "9.7.1.18 Integer Arithmetic Instructions: brev";
    Bfe: "bfe", "bfe.{u32|u64|s32|s64} d, a, b, c", ptx (2, 0), ALL, "9.7.1.19 Integer Arithmetic Instructions: bfe";
    Bfi: "bfi", "bfi.{b32|b64} f, a, b, c, d", ptx (2, 0), ALL, "9.7.1.20 Integer Arithmetic Instructions: bfi";
    Szext: "szext", "szext.{wrap|clamp}.{u32|s32} d, a, b", ptx (7, 6), ALL, "9.7.1.21 Integer Arithmetic Instructions: szext";
    Bmsk: "bmsk", "bmsk.{wrap|clamp}.b32 d, a, b", ptx (7, 6), ALL, "9.7.1.22 Integer Arithmetic Instructions: bmsk";
    Dp4a: "dp4a", "dp4a.{u32|s32}.{u32|s32} d, a, b, c", ptx (5, 0), ALL, "9.7.1.23 Integer Arithmetic Instructions: dp4a";
    Dp2a: "dp2a", "dp2a.{lo|hi}.{u32|s32}.{u32|s32} d, a, b, c", ptx (5, 0), ALL, "9.7.1.24 Integer Arithmetic Instructions: dp2a";

    // ---- 9.7.2 Extended-Precision Integer Arithmetic Instructions (the carry flag) --------------
    AddCc: "add.cc", "add.cc.{u32|s32|u64|s64} d, a, b", ptx (4, 3), ALL, "9.7.2.1 Extended-Precision Arithmetic Instructions: add.cc";
    Addc: "addc", "addc{.cc}.{u32|s32|u64|s64} d, a, b", ptx (4, 3), ALL, "9.7.2.2 Extended-Precision Arithmetic Instructions: addc";
    SubCc: "sub.cc", "sub.cc.{u32|s32|u64|s64} d, a, b", ptx (4, 3), ALL, "9.7.2.3 Extended-Precision Arithmetic Instructions: sub.cc";
    Subc: "subc", "subc{.cc}.{u32|s32|u64|s64} d, a, b", ptx (4, 3), ALL, "9.7.2.4 Extended-Precision Arithmetic Instructions: subc";

    // ---- 9.7.3 Floating-Point Instructions ---------------------------------------------------------
    Testp: "testp", "testp.{finite|infinite|number|notanumber|normal|subnormal}.{f32|f64} p, a", ptx (2, 0), ALL, "9.7.3.1 Floating Point Instructions: testp";
    Copysign: "copysign", "copysign.{f32|f64} d, a, b", ptx (2, 0), ALL, "9.7.3.2 Floating Point Instructions: copysign";
    AddF32: "add.f32", "add{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.3 Floating Point Instructions: add";
    AddF64: "add.f64", "add{.rn|.rz|.rm|.rp}.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.3 Floating Point Instructions: add";
    SubF32: "sub.f32", "sub{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.4 Floating Point Instructions: sub";
    SubF64: "sub.f64", "sub{.rn|.rz|.rm|.rp}.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.4 Floating Point Instructions: sub";
    MulF32: "mul.f32", "mul{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.5 Floating Point Instructions: mul";
    MulF64: "mul.f64", "mul{.rn|.rz|.rm|.rp}.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.5 Floating Point Instructions: mul";
    // PTX ISA 9.7.3.3-9.7.3.6: packed `.f32x2` arithmetic on `.b64` registers, PTX 8.6, sm_100
    // and later (ptxas 13.0: "Feature 'add.f32x2' requires .target sm_100 or higher"; no `.sat`:
    // "Illegal modifier '.sat' for instruction 'add'"; `fma` names its rounding).
    AddF32x2: "add.f32x2", "add{.rn|.rz|.rm|.rp}{.ftz}.f32x2 d, a, b", ptx (8, 6), SM100, "9.7.3.3 Floating Point Instructions: add (.f32x2)";
    SubF32x2: "sub.f32x2", "sub{.rn|.rz|.rm|.rp}{.ftz}.f32x2 d, a, b", ptx (8, 6), SM100, "9.7.3.4 Floating Point Instructions: sub (.f32x2)";
    MulF32x2: "mul.f32x2", "mul{.rn|.rz|.rm|.rp}{.ftz}.f32x2 d, a, b", ptx (8, 6), SM100, "9.7.3.5 Floating Point Instructions: mul (.f32x2)";
    FmaF32x2: "fma.f32x2", "fma.{rn|rz|rm|rp}{.ftz}.f32x2 d, a, b, c", ptx (8, 6), SM100, "9.7.3.6 Floating Point Instructions: fma (.f32x2)";
    // PTX ISA 9.7.3.3, 9.7.3.4, 9.7.3.6: mixed precision, an `.f16`/`.bf16` source with `.f32`
    // ones into an `.f32`, PTX 8.6, sm_100 and later (ptxas 13.0: "Feature 'sub.f32.f16' requires
    // .target sm_100 or higher"; no `.ftz`: "Illegal modifier '.ftz' for instruction 'add'").
    AddF32Mixed: "add.f32.mixed", "add{.rn|.rz|.rm|.rp}{.sat}.f32.{f16|bf16} d, a, c", ptx (8, 6), SM100, "9.7.3.3 Floating Point Instructions: add (mixed precision)";
    SubF32Mixed: "sub.f32.mixed", "sub{.rn|.rz|.rm|.rp}{.sat}.f32.{f16|bf16} d, a, c", ptx (8, 6), SM100, "9.7.3.4 Floating Point Instructions: sub (mixed precision)";
    FmaF32Mixed: "fma.f32.mixed", "fma.{rn|rz|rm|rp}{.sat}.f32.{f16|bf16} d, a, b, c", ptx (8, 6), SM100, "9.7.3.6 Floating Point Instructions: fma (mixed precision)";
    // PTX ISA 9.7.3.7: `mad` on floats names its rounding (ptxas: "Rounding modifier required for
    // instruction 'mad'"); .f64 takes no .sat.
    MadF32: "mad.f32", "mad.{rn|rz|rm|rp}{.ftz}{.sat}.f32 d, a, b, c", ptx (1, 4), ALL, "9.7.3.7 Floating Point Instructions: mad";
    MadF64: "mad.f64", "mad.{rn|rz|rm|rp}.f64 d, a, b, c", ptx (1, 4), ALL, "9.7.3.7 Floating Point Instructions: mad";
    FmaF32: "fma.f32", "fma.{rn|rz|rm|rp}{.ftz}{.sat}.f32 d, a, b, c", ptx (2, 0), ALL, "9.7.3.6 Floating Point Instructions: fma";
    FmaF64: "fma.f64", "fma.{rn|rz|rm|rp}.f64 d, a, b, c", ptx (1, 4), ALL, "9.7.3.6 Floating Point Instructions: fma";
    DivF32: "div.f32", "div.{approx|full|rn|rz|rm|rp}{.ftz}.f32 d, a, b", ptx (1, 4), ALL, "9.7.3.8 Floating Point Instructions: div";
    DivF64: "div.f64", "div.{rn|rz|rm|rp}.f64 d, a, b", ptx (1, 4), ALL, "9.7.3.8 Floating Point Instructions: div";
    AbsF32: "abs.f32", "abs{.ftz}.f32 d, a", ptx (1, 0), ALL, "9.7.3.9 Floating Point Instructions: abs";
    AbsF64: "abs.f64", "abs.f64 d, a", ptx (1, 0), ALL, "9.7.3.9 Floating Point Instructions: abs";
    NegF32: "neg.f32", "neg{.ftz}.f32 d, a", ptx (1, 0), ALL, "9.7.3.10 Floating Point Instructions: neg";
    NegF64: "neg.f64", "neg.f64 d, a", ptx (1, 0), ALL, "9.7.3.10 Floating Point Instructions: neg";
    MinF32: "min.f32", "min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.11 Floating Point Instructions: min";
    MinF64: "min.f64", "min.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.11 Floating Point Instructions: min";
    MaxF32: "max.f32", "max{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.12 Floating Point Instructions: max";
    MaxF64: "max.f64", "max.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.12 Floating Point Instructions: max";
    // PTX ISA 9.7.3.11/9.7.3.12: three inputs, PTX 8.8, sm_100 and later (ptxas 13.0: "Feature
    // 'max.f32 with 3 input operands' requires PTX ISA .version 8.8"); `.abs` without `.xorsign`.
    Min3F32: "min.f32.3", "min{.ftz}{.NaN}{.abs}.f32 d, a, b, c", ptx (8, 8), SM100, "9.7.3.11 Floating Point Instructions: min (three inputs)";
    Max3F32: "max.f32.3", "max{.ftz}{.NaN}{.abs}.f32 d, a, b, c", ptx (8, 8), SM100, "9.7.3.12 Floating Point Instructions: max (three inputs)";
    RcpF32: "rcp.f32", "rcp.{approx|rn|rz|rm|rp}{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.13 Floating Point Instructions: rcp";
    RcpF64: "rcp.f64", "rcp.{rn|rz|rm|rp}{.ftz}.f64 d, a", ptx (1, 4), ALL, "9.7.3.13 Floating Point Instructions: rcp";
    RcpApproxF64: "rcp.approx.f64", "rcp.approx.ftz.f64 d, a", ptx (2, 1), ALL, "9.7.3.14 Floating Point Instructions: rcp.approx.ftz.f64";
    SqrtF32: "sqrt.f32", "sqrt.{approx|rn|rz|rm|rp}{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.15 Floating Point Instructions: sqrt";
    SqrtF64: "sqrt.f64", "sqrt.{rn|rz|rm|rp}.f64 d, a", ptx (1, 4), ALL, "9.7.3.15 Floating Point Instructions: sqrt";
    RsqrtF32: "rsqrt.f32", "rsqrt.approx{.ftz}.f32 d, a", ptx (1, 0), ALL, "9.7.3.16 Floating Point Instructions: rsqrt";
    RsqrtF64: "rsqrt.f64", "rsqrt.approx{.ftz}.f64 d, a", ptx (1, 4), ALL, "9.7.3.16 Floating Point Instructions: rsqrt";
    SinF32: "sin.f32", "sin.approx{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.18 Floating Point Instructions: sin";
    CosF32: "cos.f32", "cos.approx{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.19 Floating Point Instructions: cos";
    Lg2F32: "lg2.f32", "lg2.approx{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.20 Floating Point Instructions: lg2";
    Ex2F32: "ex2.f32", "ex2.approx{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.21 Floating Point Instructions: ex2";
    TanhF32: "tanh.f32", "tanh.approx.f32 d, a", ptx (7, 0), ALL, "9.7.3.22 Floating Point Instructions: tanh";

    // ---- 9.7.4 Half Precision Floating-Point Instructions -----------------------------------------
    AddF16: "add.f16", "add{.rn}{.ftz}{.sat}.{f16|f16x2} d, a, b", ptx (4, 2), ALL, "9.7.4.1 Half Precision Floating Point Instructions: add";
    AddBf16: "add.bf16", "add{.rn}.{bf16|bf16x2} d, a, b", ptx (7, 8), SM90, "9.7.4.1 Half Precision Floating Point Instructions: add";
    SubF16: "sub.f16", "sub{.rn}{.ftz}{.sat}.{f16|f16x2} d, a, b", ptx (4, 2), ALL, "9.7.4.2 Half Precision Floating Point Instructions: sub";
    SubBf16: "sub.bf16", "sub{.rn}.{bf16|bf16x2} d, a, b", ptx (7, 8), SM90, "9.7.4.2 Half Precision Floating Point Instructions: sub";
    MulF16: "mul.f16", "mul{.rn}{.ftz}{.sat}.{f16|f16x2} d, a, b", ptx (4, 2), ALL, "9.7.4.3 Half Precision Floating Point Instructions: mul";
    MulBf16: "mul.bf16", "mul{.rn}.{bf16|bf16x2} d, a, b", ptx (7, 8), SM90, "9.7.4.3 Half Precision Floating Point Instructions: mul";
    FmaF16: "fma.f16", "fma.rn{.ftz}{.sat}.{f16|f16x2} d, a, b, c", ptx (4, 2), ALL, "9.7.4.4 Half Precision Floating Point Instructions: fma";
    FmaBf16: "fma.bf16", "fma.{rn|rz|rm|rp}{.relu}.{bf16|bf16x2} d, a, b, c", ptx (7, 0), ALL, "9.7.4.4 Half Precision Floating Point Instructions: fma";
    // PTX ISA 9.7.4.4: `.relu` on .f16/.f16x2 (PTX 7.0, sm_80; ptxas: "Modifier '.relu' cannot be
    // combined with modifier '.sat'"), and `.oob` (PTX 8.1, sm_90; ptxas: "Modifier '.ftz' cannot
    // be combined with modifier '.oob'").
    FmaF16Relu: "fma.f16.relu", "fma.rn{.ftz}.relu.{f16|f16x2} d, a, b, c", ptx (7, 0), ALL, "9.7.4.4 Half Precision Floating Point Instructions: fma (.relu)";
    FmaOob: "fma.oob", "fma.rn.oob{.relu|.sat}.{f16|f16x2} d, a, b, c", ptx (8, 1), SM90, "9.7.4.4 Half Precision Floating Point Instructions: fma (.oob; ptxas 13.0 also takes .sat with it on .f16)";
    FmaOobBf16: "fma.oob.bf16", "fma.{rn|rz|rm|rp}.oob{.relu}.{bf16|bf16x2} d, a, b, c", ptx (8, 1), SM90, "9.7.4.4 Half Precision Floating Point Instructions: fma (.oob; ptxas 13.0 takes every rounding on .bf16, .rn only on .f16)";
    NegF16: "neg.f16", "neg{.ftz}.{f16|f16x2} d, a", ptx (6, 0), ALL, "9.7.4.5 Half Precision Floating Point Instructions: neg";
    NegBf16: "neg.bf16", "neg.{bf16|bf16x2} d, a", ptx (7, 0), ALL, "9.7.4.5 Half Precision Floating Point Instructions: neg";
    AbsF16: "abs.f16", "abs{.ftz}.{f16|f16x2} d, a", ptx (6, 5), ALL, "9.7.4.6 Half Precision Floating Point Instructions: abs";
    AbsBf16: "abs.bf16", "abs.{bf16|bf16x2} d, a", ptx (7, 0), ALL, "9.7.4.6 Half Precision Floating Point Instructions: abs";
    MinF16: "min.f16", "min{.ftz}{.NaN}{.xorsign.abs}.{f16|f16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.7 Half Precision Floating Point Instructions: min";
    MinBf16: "min.bf16", "min{.NaN}{.xorsign.abs}.{bf16|bf16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.7 Half Precision Floating Point Instructions: min";
    MaxF16: "max.f16", "max{.ftz}{.NaN}{.xorsign.abs}.{f16|f16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.8 Half Precision Floating Point Instructions: max";
    MaxBf16: "max.bf16", "max{.NaN}{.xorsign.abs}.{bf16|bf16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.8 Half Precision Floating Point Instructions: max";
    TanhF16: "tanh.f16", "tanh.approx.{f16|f16x2} d, a", ptx (7, 0), ALL, "9.7.4.9 Half Precision Floating Point Instructions: tanh";
    TanhBf16: "tanh.bf16", "tanh.approx.{bf16|bf16x2} d, a", ptx (7, 8), SM90, "9.7.4.9 Half Precision Floating Point Instructions: tanh";
    Ex2F16: "ex2.f16", "ex2.approx.{f16|f16x2} d, a", ptx (7, 0), ALL, "9.7.4.10 Half Precision Floating Point Instructions: ex2";
    Ex2Bf16: "ex2.bf16", "ex2.approx.ftz.{bf16|bf16x2} d, a", ptx (7, 8), SM90, "9.7.4.10 Half Precision Floating Point Instructions: ex2";

    // ---- 9.7.5/9.7.6 Comparison and Selection Instructions --------------------------------------------
    SetpInt: "setp.int", "setp.{eq|ne|lt|le|gt|ge|lo|ls|hi|hs}{.and|.or|.xor}.{b16|b32|b64|u16|u32|u64|s16|s32|s64} p{|q}, a, b{, {!}c}", ptx (1, 0), ALL, "9.7.5.2 Comparison and Selection Instructions: setp";
    SetpF32: "setp.f32", "setp.{eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan}{.and|.or|.xor}{.ftz}.f32 p{|q}, a, b{, {!}c}", ptx (1, 0), ALL, "9.7.5.2 Comparison and Selection Instructions: setp";
    SetpF64: "setp.f64", "setp.{eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan}{.and|.or|.xor}.f64 p{|q}, a, b{, {!}c}", ptx (1, 0), ALL, "9.7.5.2 Comparison and Selection Instructions: setp";
    SetpF16: "setp.f16", "setp.{eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan}{.and|.or|.xor}{.ftz}.{f16|f16x2} p{|q}, a, b{, {!}c}", ptx (4, 2), ALL, "9.7.6.2 Half Precision Comparison Instructions: setp";
    SetpBf16: "setp.bf16", "setp.{eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan}{.and|.or|.xor}.{bf16|bf16x2} p{|q}, a, b{, {!}c}", ptx (7, 8), SM90, "9.7.6.2 Half Precision Comparison Instructions: setp";
    Selp: "selp", "selp.{b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64} d, a, b, c", ptx (1, 0), ALL, "9.7.5.3 Comparison and Selection Instructions: selp";
    Slct: "slct", "slct.{b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64}.{s32|f32} d, a, b, c", ptx (1, 0), ALL, "9.7.5.4 Comparison and Selection Instructions: slct";
    Set: "set", "set.{eq|ne|lt|le|gt|ge|lo|ls|hi|hs|equ|neu|ltu|leu|gtu|geu|num|nan}{.and|.or|.xor}{.ftz}.{u32|s32|f32}.{b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64} d, a, b{, {!}c}", ptx (1, 0), ALL, "9.7.5.1 Comparison and Selection Instructions: set";

    // ---- 9.7.7 Logic and Shift Instructions ---------------------------------------------------------
    And: "and", "and.{pred|b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.1 Logic and Shift Instructions: and";
    Or: "or", "or.{pred|b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.2 Logic and Shift Instructions: or";
    Xor: "xor", "xor.{pred|b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.3 Logic and Shift Instructions: xor";
    Not: "not", "not.{pred|b16|b32|b64} d, a", ptx (1, 0), ALL, "9.7.7.4 Logic and Shift Instructions: not";
    Cnot: "cnot", "cnot.{b16|b32|b64} d, a", ptx (1, 0), ALL, "9.7.7.5 Logic and Shift Instructions: cnot";
    Lop3: "lop3", "lop3.b32 d, a, b, c, immLut", ptx (4, 3), ALL, "9.7.7.6 Logic and Shift Instructions: lop3";
    Shf: "shf", "shf.{l|r}.{clamp|wrap}.b32 d, a, b, c", ptx (3, 1), ALL, "9.7.7.7 Logic and Shift Instructions: shf";
    Shl: "shl", "shl.{b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.8 Logic and Shift Instructions: shl";
    Shr: "shr", "shr.{b16|b32|b64|u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.7.9 Logic and Shift Instructions: shr";

    // ---- 9.7.9 Data Movement and Conversion Instructions -------------------------------------------
    Mov: "mov", "mov.{pred|b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64} d, a", ptx (1, 0), ALL, "9.7.9.1 Data Movement and Conversion Instructions: mov";
    MovB128: "mov.b128", "mov.b128 d, a", ptx (8, 3), ALL, "9.7.9.1 Data Movement and Conversion Instructions: mov";
    MovSreg: "mov.sreg", "mov.{u32|u64} d, sreg", ptx (1, 0), ALL, "10 Special Registers (read with mov)";
    MovSregCluster: "mov.sreg.cluster", "mov.{u32|pred} d, sreg", ptx (7, 8), SM90, "10.11-10.17 Special Registers: %is_explicit_cluster ... %cluster_nctarank";
    // ptxas 13.0 takes `%total_smem_size` at .version 6.5 on sm_80 (PTX ISA 10.30 redefined it in
    // 8.1; it is older): the row is gated by the target's first version.
    MovSregTotalSmem: "mov.sreg.total_smem_size", "mov.u32 d, sreg", ptx (7, 0), ALL, "10.30 Special Registers: %total_smem_size";
    Prmt: "prmt", "prmt.b32{.f4e|.b4e|.rc8|.ecl|.ecr|.rc16} d, a, b, c", ptx (2, 0), ALL, "9.7.9.7 Data Movement and Conversion Instructions: prmt";
    ShflSync: "shfl.sync", "shfl.sync.{up|down|bfly|idx}.b32 d{|p}, a, b, c, membermask", ptx (6, 0), ALL, "9.7.9.6 Data Movement and Conversion Instructions: shfl.sync";
    Ld: "ld", "ld{.weak|.volatile}{.const|.global|.local|.param|.shared|.shared::cta|.shared::cluster}{.ca|.cg|.cs|.lu|.cv}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]{, policy}", ptx (1, 0), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld";
    LdOrdered: "ld.ordered", "ld.{relaxed|acquire}.{cta|cluster|gpu|sys}{.global|.shared|.shared::cta|.shared::cluster}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]{, policy}", ptx (6, 0), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld";
    LdGlobalNc: "ld.global.nc", "ld.global{.ca|.cg|.cs}.nc{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]{, policy}", ptx (3, 1), ALL, "9.7.9.9 Data Movement and Conversion Instructions: ld.global.nc";
    Ldu: "ldu", "ldu{.global}{.v2|.v4}.{b8|b16|b32|b64|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]", ptx (2, 0), ALL, "9.7.9.10 Data Movement and Conversion Instructions: ldu";
    St: "st", "st{.weak|.volatile}{.global|.local|.param|.shared|.shared::cta|.shared::cluster}{.wb|.cg|.cs|.wt}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} [a], b{, policy}", ptx (1, 0), ALL, "9.7.9.11 Data Movement and Conversion Instructions: st";
    StOrdered: "st.ordered", "st.{relaxed|release}.{cta|cluster|gpu|sys}{.global|.shared|.shared::cta|.shared::cluster}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} [a], b{, policy}", ptx (6, 0), ALL, "9.7.9.11 Data Movement and Conversion Instructions: st";
    // PTX ISA 9.7.9.12 writes `{.sem}{.scope}` (.weak, .cluster); ptxas 13.0 refuses the two
    // together ("Modifier '.weak' cannot be combined with modifier '.cluster'") and takes the
    // .cluster scope from PTX 8.1 and sm_90 on.
    StAsync: "st.async", "st.async{.weak|.cluster}{.shared::cluster}.mbarrier::complete_tx::bytes{.v2|.v4}.{b32|b64|u32|u64|s32|s64|f32|f64} [a], b, [mbar]", ptx (8, 1), SM90, "9.7.9.12 Data Movement and Conversion Instructions: st.async";
    // PTX ISA 9.7.9.12: `st.async{.mmio}.sem.scope{.ss}.type [a], b` (.release; .gpu, .sys;
    // .global), PTX 8.7, sm_100 and later (ptxas 13.0: "Feature 'st.async/red.async with .global
    // state space' requires .target sm_100 or higher"). ptxas 13.0 accepts .release and the scope
    // left out (`st.async.global.u32`, `st.async.sys.global.u32`) and refuses the 8-bit types
    // with every register ("Arguments mismatch"); `.mmio` needs `.release` and a scope, `.release`
    // a scope (the row's rules).
    StAsyncGlobal: "st.async.global", "st.async{.mmio}{.release}{.gpu|.sys}{.global}.{b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64} [a], b", ptx (8, 7), SM100, "9.7.9.12 Data Movement and Conversion Instructions: st.async (.global)";
    Prefetch: "prefetch", "prefetch{.global|.local}.{L1|L2} [a]", ptx (2, 0), ALL, "9.7.9.15 Data Movement and Conversion Instructions: prefetch, prefetchu";
    PrefetchEvict: "prefetch.L2::evict", "prefetch{.global}.{L2::evict_last|L2::evict_normal} [a]", ptx (7, 4), ALL, "9.7.9.15 Data Movement and Conversion Instructions: prefetch, prefetchu (.level::eviction_priority)";
    Prefetchu: "prefetchu", "prefetchu.L1 [a]", ptx (2, 0), ALL, "9.7.9.15 Data Movement and Conversion Instructions: prefetch, prefetchu";
    Applypriority: "applypriority", "applypriority{.global}.L2::evict_normal [a], size", ptx (7, 4), ALL, "9.7.9.16 Data Movement and Conversion Instructions: applypriority";
    Discard: "discard", "discard{.global}.L2 [a], size", ptx (7, 4), ALL, "9.7.9.17 Data Movement and Conversion Instructions: discard";
    Isspacep: "isspacep", "isspacep.{const|global|local|shared|shared::cta|shared::cluster|param|param::entry} p, a", ptx (2, 0), ALL, "9.7.9.19 Data Movement and Conversion Instructions: isspacep";
    MemEvictionPriority: "mem.L1::evict", "ld.global.L1::evict_last.u32 d, [a]", ptx (7, 4), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.level::eviction_priority)", feature;
    MemCacheHint: "mem.L2::cache_hint", "ld.global.L2::cache_hint.u32 d, [a], policy", ptx (7, 4), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.level::cache_hint)", feature;
    MemPrefetchSize: "mem.L2::prefetch_size", "ld.global.L2::128B.u32 d, [a]", ptx (7, 4), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.level::prefetch_size)", feature;
    MemScopeCluster: "mem.scope.cluster", "ld.relaxed.cluster.global.u32 d, [a]", ptx (7, 8), SM90, "8.5 Memory Consistency Model: Scope (.cluster)", feature;
    MemSharedCluster: "mem.shared::cluster", "ld.shared::cluster.u32 d, [a]", ptx (7, 8), SM90, "5.1.5 State Spaces: Shared State Space (.shared::cluster)", feature;
    MbarrierTestWaitParity: "mbarrier.test_wait.parity", "mbarrier.test_wait.parity.shared.b64 done, [addr], phase", ptx (7, 1), ALL, "9.7.13.15.16 Parallel Synchronization and Communication Instructions: mbarrier.test_wait (.parity)", feature;
    MemSharedCta: "mem.shared::cta", "ld.shared::cta.u32 d, [a]", ptx (7, 8), ALL, "5.1.5 State Spaces: Shared State Space (.shared::cta; ptxas: \"Feature '::cta' requires PTX ISA .version 7.8\")", feature;
    // PTX ISA 9.7.9.19: isspacep (and cvta) on `.param` is PTX 7.7, on `.param::entry` 8.3.
    SpaceParam: "space.param", "isspacep.param p, a", ptx (7, 7), ALL, "9.7.9.19 Data Movement and Conversion Instructions: isspacep (.param; ptxas: \"Feature 'cvta/isspacep with .param state space' requires PTX ISA .version 7.7\")", feature;
    SpaceParamEntry: "space.param::entry", "isspacep.param::entry p, a", ptx (8, 3), ALL, "9.7.9.19 Data Movement and Conversion Instructions: isspacep (.param::entry; ptxas: \"Feature '::entry' requires PTX ISA .version 8.3\")", feature;
    MinMaxNaN: "minmax.NaN", "min.NaN.f32 d, a, b", ptx (7, 0), ALL, "9.7.3.11 Floating Point Instructions: min, max (.NaN; also 9.7.4.7/9.7.4.8 for .f16 and .bf16; ptxas: \"Feature '.NaN' requires PTX ISA .version 7.0\")", feature;
    MinMaxXorsignAbs: "minmax.xorsign.abs", "min.xorsign.abs.f32 d, a, b", ptx (7, 2), SM86, "9.7.3.11 Floating Point Instructions: min, max (.xorsign.abs; also 9.7.4.7/9.7.4.8 for .f16 and .bf16; ptxas: \"Feature '.abs' requires .target sm_86 or higher\", \"PTX ISA .version 7.2\")", feature;
    MemB128: "mem.b128", "ld.global.b128 d, [a]", ptx (8, 3), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.b128)", feature;
    Cvt: "cvt", "cvt{.rni|.rzi|.rmi|.rpi|.rn|.rz|.rm|.rp}{.ftz}{.sat}.{u8|u16|u32|u64|s8|s16|s32|s64|f16|f32|f64}.{u8|u16|u32|u64|s8|s16|s32|s64|f16|f32|f64} d, a", ptx (1, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtBf16F32: "cvt.bf16.f32", "cvt.{rn|rz|rm|rp}{.relu}{.satfinite}.bf16.f32 d, a", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtF32Bf16: "cvt.f32.bf16", "cvt.f32.bf16 d, a", ptx (7, 1), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    // PTX ISA 9.7.9.21: `cvt.frnd2{.relu}{.satfinite}.f16.f32` (.frnd2 = .rn, .rz): `.relu` is
    // PTX 7.0, `.satfinite` PTX 8.1 (the feature row `cvt.satfinite`); plain conversions are `cvt`'s.
    CvtF16F32Relu: "cvt.f16.f32.relu", "cvt.{rn|rz}.relu{.satfinite}.f16.f32 d, a", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.relu to .f16)";
    CvtF16F32Satfinite: "cvt.f16.f32.satfinite", "cvt.{rn|rz}.satfinite.f16.f32 d, a", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.satfinite to .f16)";
    CvtBf16x2F32: "cvt.bf16x2.f32", "cvt.{rn|rz}{.relu}{.satfinite}.bf16x2.f32 d, a, b", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtF16x2F32: "cvt.f16x2.f32", "cvt.{rn|rz}{.relu}{.satfinite}.f16x2.f32 d, a, b", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtTf32F32: "cvt.tf32.f32", "cvt.{rna|rn|rz}{.relu}.tf32.f32 d, a", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtSatfinite: "cvt.satfinite", "cvt.rn.satfinite.f16x2.f32 d, a, b", ptx (8, 1), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.satfinite to .f16x2, .bf16, .bf16x2; ptxas: \"Modifier '.satfinite' on 'cvt.f16x2.f32' requires PTX ISA .version 8.1\")", feature;
    CvtTf32Round: "cvt.tf32.rn", "cvt.rn.tf32.f32 d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.rn/.rz to .tf32; ptxas: \"Feature 'cvt with .tf32.f32.rn' requires .target sm_90\", \"PTX ISA .version 7.8\")", feature;
    CvtF8x2F32: "cvt.f8x2.f32", "cvt.rn.satfinite{.relu}.{e4m3x2|e5m2x2}.f32 d, a, b", ptx (7, 8), SM89, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    // PTX ISA 9.7.9.21: .f16x2 to FP8 pairs (PTX 7.8 on sm_90; sm_89 at 8.1, `LATER_ON`).
    CvtF8x2F16x2: "cvt.f8x2.f16x2", "cvt.rn.satfinite{.relu}.{e4m3x2|e5m2x2}.f16x2 d, a", ptx (7, 8), SM89, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.f16x2 to .e4m3x2/.e5m2x2)";
    // PTX ISA 9.7.9.21: .bf16 to and from the integers, .f16 and .f64 are PTX 7.8 on sm_90
    // (ptxas: "Feature 'cvt with .bf16.s32' requires .target sm_90"); to .bf16 from an integer or
    // .f64 names a rounding ("Rounding modifier required"), to an integer an integer rounding.
    CvtBf16Int: "cvt.bf16.int", "cvt.{rn|rz|rm|rp}.bf16.{u16|u32|u64|s16|s32|s64} d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (integer to .bf16)";
    CvtIntBf16: "cvt.int.bf16", "cvt.{rni|rzi|rmi|rpi}.{u16|u32|u64|s16|s32|s64}.bf16 d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.bf16 to integer)";
    CvtBf16F64: "cvt.bf16.f64", "cvt.{rn|rz|rm|rp}.bf16.f64 d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.f64 to .bf16)";
    CvtF64Bf16: "cvt.f64.bf16", "cvt.f64.bf16 d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.bf16 to .f64)";
    CvtBf16F16: "cvt.bf16.f16", "cvt{.rn|.rz|.rm|.rp}.bf16.f16 d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.f16 to .bf16)";
    CvtF16Bf16: "cvt.f16.bf16", "cvt{.rn|.rz|.rm|.rp}.f16.bf16 d, a", ptx (7, 8), SM90, "9.7.9.21 Data Movement and Conversion Instructions: cvt (.bf16 to .f16)";
    CvtF16x2F8x2: "cvt.f16x2.f8x2", "cvt.rn{.relu}.f16x2.{e4m3x2|e5m2x2} d, a", ptx (7, 8), SM89, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    Cvta: "cvta", "cvta{.to}.{global|local|shared|const|param}.u64 d, a", ptx (2, 0), ALL, "9.7.9.20 Data Movement and Conversion Instructions: cvta";
    CvtaParam: "cvta.param", "cvta.param.u64 d, a", ptx (7, 7), ALL, "9.7.9.20 Data Movement and Conversion Instructions: cvta (.param)", feature;
    CvtaCluster: "cvta.shared::cluster", "cvta{.to}.shared::cluster.u64 d, a", ptx (7, 8), SM90, "9.7.9.20 Data Movement and Conversion Instructions: cvta";

    // ---- 9.7.13 Parallel Synchronization and Communication Instructions ----------------------------
    BarSync: "bar.sync", "bar{.cta}.sync a{, b}", ptx (1, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarArrive: "bar.arrive", "bar{.cta}.arrive a, b", ptx (2, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarRedPopc: "bar.red.popc", "bar{.cta}.red.popc.u32 d, a{, b}, {!}c", ptx (2, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarRedPred: "bar.red.pred", "bar{.cta}.red.{and|or}.pred p, a{, b}, {!}c", ptx (2, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarrierSync: "barrier.sync", "barrier{.cta}.sync{.aligned} a{, b}", ptx (6, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: barrier";
    BarrierArrive: "barrier.arrive", "barrier{.cta}.arrive{.aligned} a, b", ptx (6, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: barrier";
    BarCta: "bar.cta", "bar.cta.sync a{, b}", ptx (7, 8), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar, barrier (.cta; ptxas: \"Feature 'bar.cta' requires PTX ISA .version 7.8\")", feature;
    BarWarpSync: "bar.warp.sync", "bar.warp.sync membermask", ptx (6, 0), ALL, "9.7.13.2 Parallel Synchronization and Communication Instructions: bar.warp.sync";
    Membar: "membar", "membar.{cta|gl|sys}", ptx (1, 4), ALL, "9.7.13.4 Parallel Synchronization and Communication Instructions: membar";
    MembarProxy: "membar.proxy", "membar.proxy.alias", ptx (7, 5), ALL, "9.7.13.4 Parallel Synchronization and Communication Instructions: membar (.proxy.alias; ptxas: \"Feature 'membar.proxy' requires PTX ISA .version 7.5\")";
    Fence: "fence", "fence{.sc|.acq_rel|.acquire|.release}.{cta|gpu|sys}", ptx (6, 0), ALL, "9.7.13.4 Parallel Synchronization and Communication Instructions: fence";
    FenceCluster: "fence.cluster", "fence{.sc|.acq_rel|.acquire|.release}.cluster", ptx (7, 8), SM90, "9.7.13.4 Parallel Synchronization and Communication Instructions: fence";
    AtomInt: "atom.int", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.{and|or|xor|cas|exch|add|inc|dec|min|max}.{b32|b64|u32|u64|s32|s64} d, [a], b{, c}", ptx (1, 1), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomF32: "atom.f32", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f32 d, [a], b", ptx (2, 0), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomF64: "atom.f64", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f64 d, [a], b", ptx (5, 0), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    // PTX ISA 9.7.13.5: `atom.cas.b16` (PTX 6.3, sm_70; ptxas: "Arguments mismatch" for other
    // 16-bit operations).
    AtomCas16: "atom.cas.b16", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.cas.b16 d, [a], b, c", ptx (6, 3), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom (.cas.b16)";
    AtomF16: "atom.f16", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{f16|f16x2} d, [a], b", ptx (6, 3), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomBf16: "atom.bf16", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{bf16|bf16x2} d, [a], b", ptx (7, 8), SM90, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomOrdered: "atom.ordered", "atom.acq_rel.gpu.global.add.u32 d, [a], b", ptx (6, 0), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom (.sem, .scope)", feature;
    RedInt: "red.int", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.{and|or|xor|add|inc|dec|min|max}.{b32|b64|u32|u64|s32|s64} [a], b", ptx (1, 2), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedF32: "red.f32", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f32 [a], b", ptx (2, 0), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedF64: "red.f64", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f64 [a], b", ptx (5, 0), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedF16: "red.f16", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{f16|f16x2} [a], b", ptx (6, 3), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedBf16: "red.bf16", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{bf16|bf16x2} [a], b", ptx (7, 8), SM90, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedAsync: "red.async", "red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.{inc|dec|min|max|add|and|or|xor}.{u32|s32|b32|u64} [a], b, [mbar]", ptx (8, 1), SM90, "9.7.13.7 Parallel Synchronization and Communication Instructions: red.async";
    VoteSync: "vote.sync", "vote.sync.{all|any|uni}.pred d, {!}a, membermask", ptx (6, 0), ALL, "9.7.13.8 Parallel Synchronization and Communication Instructions: vote.sync";
    VoteBallot: "vote.sync.ballot", "vote.sync.ballot.b32 d, {!}a, membermask", ptx (6, 0), ALL, "9.7.13.8 Parallel Synchronization and Communication Instructions: vote.sync";
    MatchAny: "match.any.sync", "match.any.sync.{b32|b64} d, a, membermask", ptx (6, 0), ALL, "9.7.13.9 Parallel Synchronization and Communication Instructions: match.sync";
    MatchAll: "match.all.sync", "match.all.sync.{b32|b64} d{|p}, a, membermask", ptx (6, 0), ALL, "9.7.13.9 Parallel Synchronization and Communication Instructions: match.sync";
    Activemask: "activemask", "activemask.b32 d", ptx (6, 2), ALL, "9.7.13.10 Parallel Synchronization and Communication Instructions: activemask";
    ReduxSync: "redux.sync", "redux.sync.{add|min|max|and|or|xor}.{u32|s32|b32} d, a, membermask", ptx (7, 0), ALL, "9.7.13.11 Parallel Synchronization and Communication Instructions: redux.sync";
    // PTX ISA 9.7.13.11: the floating-point form, `.min`/`.max` only, PTX 8.6 on sm_100a (ptxas
    // 13.0: "Instruction 'redux.f32' not supported on .target 'sm_90a'", "Feature 'redux.f32'
    // requires PTX ISA .version 8.6").
    ReduxSyncF32: "redux.sync.f32", "redux.sync.{min|max}{.abs}{.NaN}.f32 d, a, membermask", ptx (8, 6), SM100A, "9.7.13.11 Parallel Synchronization and Communication Instructions: redux.sync (.f32)";
    ElectSync: "elect.sync", "elect.sync d|p, membermask", ptx (8, 0), SM90, "9.7.13.14 Parallel Synchronization and Communication Instructions: elect.sync";

    // ---- 9.7.12 Control Flow Instructions --------------------------------------------------------
    Bra: "bra", "bra{.uni} tgt", ptx (1, 0), ALL, "9.7.12.3 Control Flow Instructions: bra";
    // PTX ISA 9.7.12.4: `tlist` names a `.branchtargets` list of the function, defined before
    // the branch (11.3.1); `index` is a .u32 register (ptxas 13.0 takes an immediate too).
    BrxIdx: "brx.idx", "brx.idx{.uni} index, tlist", ptx (6, 0), ALL, "9.7.12.4 Control Flow Instructions: brx.idx";
    Call: "call", "call{.uni} func{, ret}{, params}{, proto}", ptx (1, 0), ALL, "9.7.12.5 Control Flow Instructions: call";
    Ret: "ret", "ret{.uni}", ptx (1, 0), ALL, "9.7.12.6 Control Flow Instructions: ret";
    Exit: "exit", "exit", ptx (1, 0), ALL, "9.7.12.7 Control Flow Instructions: exit";
    Trap: "trap", "trap", ptx (1, 0), ALL, "9.7.19 Miscellaneous Instructions: trap";
    Brkpt: "brkpt", "brkpt", ptx (1, 0), ALL, "9.7.19.1 Miscellaneous Instructions: brkpt";
    Nanosleep: "nanosleep", "nanosleep.u32 t", ptx (6, 3), ALL, "9.7.19 Miscellaneous Instructions: nanosleep";

    // ---- 9.7.13.15 mbarrier ----------------------------------------------------------------------
    MbarrierInit: "mbarrier.init", "mbarrier.init{.shared|.shared::cta}.b64 [addr], count", ptx (7, 0), ALL, "9.7.13.15.9 Parallel Synchronization and Communication Instructions: mbarrier.init";
    MbarrierInval: "mbarrier.inval", "mbarrier.inval{.shared|.shared::cta}.b64 [addr]", ptx (7, 0), ALL, "9.7.13.15.10 Parallel Synchronization and Communication Instructions: mbarrier.inval";
    MbarrierArrive: "mbarrier.arrive", "mbarrier.arrive{.release}{.cta|.cluster}{.shared|.shared::cta|.shared::cluster}.b64 state, [addr]{, count}", ptx (7, 0), ALL, "9.7.13.15.13 Parallel Synchronization and Communication Instructions: mbarrier.arrive";
    MbarrierArriveDrop: "mbarrier.arrive_drop", "mbarrier.arrive_drop{.expect_tx|.noComplete}{.release}{.cta|.cluster}{.shared|.shared::cta|.shared::cluster}.b64 state, [addr]{, count}", ptx (7, 0), ALL, "9.7.13.15.14 Parallel Synchronization and Communication Instructions: mbarrier.arrive_drop";
    // PTX ISA 9.7.13.15.13: `mbarrier.arrive.noComplete{.release}{.cta}`; ptxas 13.0 takes the
    // two together only ("'.release' requires scope", "'.cta' requires order") and no .cluster
    // ("Modifier '.cluster' cannot be combined with modifier '.noComplete'").
    MbarrierArriveNoComplete: "mbarrier.arrive.noComplete", "mbarrier.arrive.noComplete{.release.cta}{.shared|.shared::cta}.b64 state, [addr], count", ptx (7, 0), ALL, "9.7.13.15.13 Parallel Synchronization and Communication Instructions: mbarrier.arrive";
    MbarrierArriveCount: "mbarrier.arrive.count", "mbarrier.arrive.shared.b64 state, [addr], count", ptx (7, 8), SM90, "9.7.13.15.13 Parallel Synchronization and Communication Instructions: mbarrier.arrive (count operand)", feature;
    // PTX ISA 9.7.13.15.13: the sink `_` as the state destination is PTX 7.1 (ptxas 13.0 at 7.0:
    // "Result discard mode is not allowed for instruction 'mbarrier.arrive'"; arrive_drop takes
    // it at 7.0).
    MbarrierArriveSink: "mbarrier.arrive.sink", "mbarrier.arrive.shared.b64 _, [addr]", ptx (7, 1), ALL, "9.7.13.15.13 Parallel Synchronization and Communication Instructions: mbarrier.arrive (sink destination)", feature;
    MbarrierSem: "mbarrier.sem_scope", "mbarrier.arrive.release.cta.shared.b64 state, [addr]", ptx (8, 0), ALL, "9.7.13.15.13 Parallel Synchronization and Communication Instructions: mbarrier (.sem and .scope)", feature;
    MbarrierArriveExpectTx: "mbarrier.arrive.expect_tx", "mbarrier.arrive.expect_tx{.release}{.cta|.cluster}{.shared|.shared::cta|.shared::cluster}.b64 state, [addr], tx", ptx (8, 0), SM90, "9.7.13.15.13 Parallel Synchronization and Communication Instructions: mbarrier.arrive";
    MbarrierExpectTx: "mbarrier.expect_tx", "mbarrier.expect_tx{.relaxed}{.cta|.cluster}{.shared|.shared::cta|.shared::cluster}.b64 [addr], tx", ptx (8, 0), SM90, "9.7.13.15.11 Parallel Synchronization and Communication Instructions: mbarrier.expect_tx";
    MbarrierCompleteTx: "mbarrier.complete_tx", "mbarrier.complete_tx{.relaxed}{.cta|.cluster}{.shared|.shared::cta|.shared::cluster}.b64 [addr], tx", ptx (8, 0), SM90, "9.7.13.15.12 Parallel Synchronization and Communication Instructions: mbarrier.complete_tx";
    CpAsyncMbarrierArrive: "cp.async.mbarrier.arrive", "cp.async.mbarrier.arrive{.noinc}{.shared|.shared::cta}.b64 [addr]", ptx (7, 0), ALL, "9.7.13.15.15 Parallel Synchronization and Communication Instructions: cp.async.mbarrier.arrive";
    // PTX ISA 9.7.13.15.16: mbarrier.test_wait is PTX 7.0, its `.parity` form 7.1 (the feature row
    // `mbarrier.test_wait.parity`; ptxas 13.0 takes the state form at 7.0 on sm_80).
    MbarrierTestWait: "mbarrier.test_wait", "mbarrier.test_wait{.parity}{.acquire}{.cta|.cluster}{.shared|.shared::cta}.b64 done, [addr], state", ptx (7, 0), ALL, "9.7.13.15.16 Parallel Synchronization and Communication Instructions: mbarrier.test_wait";
    MbarrierTryWait: "mbarrier.try_wait", "mbarrier.try_wait{.parity}{.acquire}{.cta|.cluster}{.shared|.shared::cta}.b64 done, [addr], state{, suspend_hint}", ptx (7, 8), SM90, "9.7.13.15.16 Parallel Synchronization and Communication Instructions: mbarrier.try_wait";
    MbarrierPendingCount: "mbarrier.pending_count", "mbarrier.pending_count.b64 count, state", ptx (7, 0), ALL, "9.7.13.15.17 Parallel Synchronization and Communication Instructions: mbarrier.pending_count";
    FenceMbarrierInit: "fence.mbarrier_init", "fence.mbarrier_init.release.cluster", ptx (8, 0), SM90, "9.7.13.4 Parallel Synchronization and Communication Instructions: membar/fence (fence.mbarrier_init)";

    // ---- proxy fences, clusters, grid dependencies, register reallocation ---------------------------
    FenceProxyAsync: "fence.proxy.async", "fence.proxy.async{.global|.shared::cta|.shared::cluster}", ptx (8, 0), SM90, "9.7.13.4 Parallel Synchronization and Communication Instructions: membar/fence (fence.proxy.async)";
    FenceProxyTensormap: "fence.proxy.tensormap", "fence.proxy.tensormap::generic.{release|acquire}.{cta|cluster|gpu|sys} {, [addr]}{, size}", ptx (8, 3), SM90, "9.7.13.4 Parallel Synchronization and Communication Instructions: membar/fence (fence.proxy.tensormap)";
    // PTX ISA 9.7.13.3: barrier.cluster is PTX 7.8 (sm_90); its `.release`, `.relaxed` and
    // `.acquire` qualifiers PTX 8.0 (the feature row `barrier.cluster.sem`; ptxas 13.0:
    // "Modifier '.relaxed' on 'barrier.cluster.arrive' requires PTX ISA .version 8.0").
    BarrierClusterArrive: "barrier.cluster.arrive", "barrier.cluster.arrive{.release|.relaxed}{.aligned}", ptx (7, 8), SM90, "9.7.13.3 Parallel Synchronization and Communication Instructions: barrier.cluster";
    BarrierClusterWait: "barrier.cluster.wait", "barrier.cluster.wait{.acquire}{.aligned}", ptx (7, 8), SM90, "9.7.13.3 Parallel Synchronization and Communication Instructions: barrier.cluster";
    BarrierClusterSem: "barrier.cluster.sem", "barrier.cluster.arrive.release", ptx (8, 0), SM90, "9.7.13.3 Parallel Synchronization and Communication Instructions: barrier.cluster (.release, .relaxed, .acquire; ptxas: \"Modifier '.relaxed' on 'barrier.cluster.arrive' requires PTX ISA .version 8.0\")", feature;
    Mapa: "mapa", "mapa{.shared::cluster}.{u32|u64} d, a, rank", ptx (7, 8), SM90, "9.7.9.24 Data Movement and Conversion Instructions: mapa";
    Getctarank: "getctarank", "getctarank{.shared::cluster}.{u32|u64} d, a", ptx (7, 8), SM90, "9.7.9.23 Data Movement and Conversion Instructions: getctarank";
    GriddepcontrolWait: "griddepcontrol.wait", "griddepcontrol.wait", ptx (7, 8), SM90, "9.7.13.13 Parallel Synchronization and Communication Instructions: griddepcontrol";
    GriddepcontrolLaunch: "griddepcontrol.launch_dependents", "griddepcontrol.launch_dependents", ptx (7, 8), SM90, "9.7.13.13 Parallel Synchronization and Communication Instructions: griddepcontrol";
    Setmaxnreg: "setmaxnreg", "setmaxnreg.{inc|dec}.sync.aligned.u32 n", ptx (8, 0), ARCH_A, "9.7.19.5 Miscellaneous Instructions: setmaxnreg";

    // ---- Ampere asynchronous copies and warp-level matrices -------------------------------------------
    CpAsync: "cp.async", "cp.async.{ca|cg}.{shared|shared::cta}.global{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B} [dst], [src], size{, src_size}{, policy}", ptx (7, 0), ALL, "9.7.9.25.3.1 Data Movement and Conversion Instructions: cp.async";
    CpAsyncCommit: "cp.async.commit_group", "cp.async.commit_group", ptx (7, 0), ALL, "9.7.9.25.3.2 Data Movement and Conversion Instructions: cp.async.commit_group";
    CpAsyncWaitGroup: "cp.async.wait_group", "cp.async.wait_group n", ptx (7, 0), ALL, "9.7.9.25.3.3 Data Movement and Conversion Instructions: cp.async.wait_group";
    CpAsyncWaitAll: "cp.async.wait_all", "cp.async.wait_all", ptx (7, 0), ALL, "9.7.9.25.3.3 Data Movement and Conversion Instructions: cp.async.wait_all";
    WmmaLoad: "wmma.load", "wmma.load.{a|b|c}.sync.aligned.{row|col}.{m16n16k16|m8n32k16|m32n8k16}{.global|.shared|.shared::cta}.{f16|bf16|f32|s8|u8|s32} r, [p]{, stride}", ptx (6, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.load";
    WmmaStore: "wmma.store", "wmma.store.d.sync.aligned.{row|col}.{m16n16k16|m8n32k16|m32n8k16}{.global|.shared|.shared::cta}.{f16|f32|s32} [p], r{, stride}", ptx (6, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.store";
    WmmaMma: "wmma.mma", "wmma.mma.sync.aligned.{row|col}.{row|col}.{m16n16k16|m8n32k16|m32n8k16}.{f16|f32}.{f16|f32} d, a, b, c", ptx (6, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.mma";
    // PTX ISA 9.7.14.4: the integer (PTX 6.3), .bf16, .tf32 and .f64 (PTX 7.0, sm_80) forms;
    // ptxas 13.0 refuses mixed .s8/.u8 ("Unexpected instruction types specified for 'wmma.mma'")
    // and calls the .f64 ones "WMMA with fp64 types" (nvcc writes their rounding last, which the
    // validator reads as written with a warning).
    WmmaMmaInt: "wmma.mma.int", "wmma.mma.sync.aligned.{row|col}.{row|col}.{m16n16k16|m8n32k16|m32n8k16}.s32.{s8.s8|u8.u8}.s32{.satfinite} d, a, b, c", ptx (6, 3), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.mma (integer)";
    WmmaMmaBf16: "wmma.mma.bf16", "wmma.mma.sync.aligned.{row|col}.{row|col}.{m16n16k16|m8n32k16|m32n8k16}.f32.bf16.bf16.f32 d, a, b, c", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.mma (.bf16)";
    WmmaMmaTf32: "wmma.mma.tf32", "wmma.mma.sync.aligned.{row|col}.{row|col}.m16n16k8.f32.tf32.tf32.f32 d, a, b, c", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.mma (.tf32)";
    WmmaMmaF64: "wmma.mma.f64", "wmma.mma.sync.aligned.{row|col}.{row|col}.m8n8k4{.rn|.rz|.rm|.rp}.f64.f64.f64.f64 d, a, b, c", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.mma (.f64)";
    WmmaLoadTf32: "wmma.load.tf32", "wmma.load.{a|b|c}.sync.aligned.{row|col}.m16n16k8{.global|.shared|.shared::cta}.{tf32|f32} r, [p]{, stride}", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.load (.m16n16k8)";
    WmmaLoadF64: "wmma.load.f64", "wmma.load.{a|b|c}.sync.aligned.{row|col}.m8n8k4{.global|.shared|.shared::cta}.f64 r, [p]{, stride}", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.load (.m8n8k4)";
    WmmaStoreTf32: "wmma.store.tf32", "wmma.store.d.sync.aligned.{row|col}.m16n16k8{.global|.shared|.shared::cta}.f32 [p], r{, stride}", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.store (.m16n16k8)";
    WmmaStoreF64: "wmma.store.f64", "wmma.store.d.sync.aligned.{row|col}.m8n8k4{.global|.shared|.shared::cta}.f64 [p], r{, stride}", ptx (7, 0), ALL, "9.7.14.4 Warp Level Matrix Multiply-Accumulate Instructions: wmma.store (.m8n8k4)";
    Ldmatrix: "ldmatrix", "ldmatrix.sync.aligned.m8n8.{x1|x2|x4}{.trans}{.shared|.shared::cta}.b16 d, [p]", ptx (6, 5), ALL, "9.7.14.5.15 Warp Level Matrix Multiply-Accumulate Instructions: ldmatrix";
    LdmatrixB8: "ldmatrix.b8", "ldmatrix.sync.aligned.m16n16.{x1|x2}.trans{.shared|.shared::cta}.b8 d, [p]", ptx (8, 6), SM100A_120A, "9.7.14.5.15 Warp Level Matrix Multiply-Accumulate Instructions: ldmatrix";
    Movmatrix: "movmatrix", "movmatrix.sync.aligned.m8n8.trans.b16 d, a", ptx (7, 8), ALL, "9.7.14.5.17 Warp Level Matrix Multiply-Accumulate Instructions: movmatrix";
    Stmatrix: "stmatrix", "stmatrix.sync.aligned.m8n8.{x1|x2|x4}{.trans}{.shared|.shared::cta}.b16 [p], r", ptx (7, 8), SM90, "9.7.14.5.16 Warp Level Matrix Multiply-Accumulate Instructions: stmatrix";
    StmatrixB8: "stmatrix.b8", "stmatrix.sync.aligned.m16n8.{x1|x2|x4}.trans{.shared|.shared::cta}.b8 [p], r", ptx (8, 6), SM100A_120A, "9.7.14.5.16 Warp Level Matrix Multiply-Accumulate Instructions: stmatrix";
    MmaF16: "mma.m16n8k16.f16", "mma.sync.aligned.m16n8k16.row.col.{f32|f16}.{f16|bf16}.{f16|bf16}.{f32|f16} d, a, b, c", ptx (7, 0), ALL, "9.7.14.5.14 Warp Level Matrix Multiply-Accumulate Instructions: mma";
    // PTX ISA 9.7.14.5.14: m16n8k8 with .f16 (PTX 6.5, sm_75; ptxas 13.0: "Feature '.m16n8k8'
    // requires PTX ISA .version 6.5") and .bf16 (PTX 7.0, sm_80) inputs.
    MmaM16n8k8: "mma.m16n8k8.f16", "mma.sync.aligned.m16n8k8.row.col.{f32|f16}.{f16|bf16}.{f16|bf16}.{f32|f16} d, a, b, c", ptx (6, 5), ALL, "9.7.14.5.14 Warp Level Matrix Multiply-Accumulate Instructions: mma (.m16n8k8)";
    MmaTf32: "mma.m16n8k8.tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, c", ptx (7, 0), ALL, "9.7.14.5.14 Warp Level Matrix Multiply-Accumulate Instructions: mma";
    MmaF8: "mma.m16n8k32.f8", "mma.sync.aligned.m16n8k32.row.col.f32.{e4m3|e5m2}.{e4m3|e5m2}.f32 d, a, b, c", ptx (8, 4), SM89, "9.7.14.5.14 Warp Level Matrix Multiply-Accumulate Instructions: mma";
    MmaI8: "mma.m16n8k32.i8", "mma.sync.aligned.m16n8k32.row.col{.satfinite}.s32.{s8|u8}.{s8|u8}.s32 d, a, b, c", ptx (7, 0), ALL, "9.7.14.5.14 Warp Level Matrix Multiply-Accumulate Instructions: mma";

    // ---- 9.7.9.25 bulk copies and 9.7.9.27 tensor copies (TMA) -----------------------------------------
    CpAsyncBulkG2S: "cp.async.bulk.global_to_shared", "cp.async.bulk.{shared::cluster|shared::cta}.global.mbarrier::complete_tx::bytes{.multicast::cluster}{.L2::cache_hint} [dst], [src], size, [mbar]{, mask}{, policy}", ptx (8, 0), SM90, "9.7.9.25.4.1 Data Movement and Conversion Instructions: cp.async.bulk";
    CpAsyncBulkS2G: "cp.async.bulk.shared_to_global", "cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint} [dst], [src], size{, policy}", ptx (8, 0), SM90, "9.7.9.25.4.1 Data Movement and Conversion Instructions: cp.async.bulk";
    CpAsyncBulkS2S: "cp.async.bulk.shared_to_cluster", "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]", ptx (8, 0), SM90, "9.7.9.25.4.1 Data Movement and Conversion Instructions: cp.async.bulk";
    CpReduceBulk: "cp.reduce.async.bulk.global", "cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.{and|or|xor|add|inc|dec|min|max}.{b32|b64|u32|s32|u64|s64|f32|f64} [dst], [src], size{, policy}", ptx (8, 0), SM90, "9.7.9.25.4.2 Data Movement and Conversion Instructions: cp.reduce.async.bulk";
    CpReduceBulkCluster: "cp.reduce.async.bulk.shared::cluster", "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{and|or|xor|add|inc|dec|min|max}.{b32|b64|u32|s32|u64|s64} [dst], [src], size, [mbar]", ptx (8, 0), SM90, "9.7.9.25.4.2 Data Movement and Conversion Instructions: cp.reduce.async.bulk";
    CpAsyncBulkCommit: "cp.async.bulk.commit_group", "cp.async.bulk.commit_group", ptx (8, 0), SM90, "9.7.9.25.4.4 Data Movement and Conversion Instructions: cp.async.bulk.commit_group";
    CpAsyncBulkWait: "cp.async.bulk.wait_group", "cp.async.bulk.wait_group{.read} n", ptx (8, 0), SM90, "9.7.9.25.4.5 Data Movement and Conversion Instructions: cp.async.bulk.wait_group";
    CpAsyncBulkPrefetch: "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy}", ptx (8, 0), SM90, "9.7.9.25.4.3 Data Movement and Conversion Instructions: cp.async.bulk.prefetch";
    BulkMulticast: "cp.async.bulk.multicast", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [dst], [src], size, [mbar], mask", ptx (8, 0), SM90, "9.7.9.25.4.1 Data Movement and Conversion Instructions: cp.async.bulk (.multicast::cluster)", feature;
    // PTX ISA 9.7.9.27.1.2 writes the destination `[dstMem]`; ptxas 13.0 also takes a bare register
    // there (sm_90a to sm_120a), so the slot of both tensor-load rows takes either kind: `[dst]/dst`.
    TmaLoad: "cp.async.bulk.tensor.tile", "cp.async.bulk.tensor.{1d|2d|3d|4d|5d}.{shared::cluster|shared::cta}.global{.tile}.mbarrier::complete_tx::bytes{.multicast::cluster}{.cta_group::1|.cta_group::2}{.L2::cache_hint} [dst]/dst, [tmap, coords], [mbar]{, mask}{, policy}", ptx (8, 0), SM90, "9.7.9.27.1.2 Data Movement and Conversion Instructions: cp.async.bulk.tensor";
    TmaLoadIm2col: "cp.async.bulk.tensor.im2col", "cp.async.bulk.tensor.{3d|4d|5d}.{shared::cluster|shared::cta}.global.im2col.mbarrier::complete_tx::bytes{.multicast::cluster}{.cta_group::1|.cta_group::2}{.L2::cache_hint} [dst]/dst, [tmap, coords], [mbar], offsets{, mask}{, policy}", ptx (8, 0), SM90, "9.7.9.27.1.2 Data Movement and Conversion Instructions: cp.async.bulk.tensor";
    TmaStore: "cp.async.bulk.tensor.store", "cp.async.bulk.tensor.{1d|2d|3d|4d|5d}.global.shared::cta{.tile|.im2col_no_offs}.bulk_group{.L2::cache_hint} [tmap, coords], [src]{, policy}", ptx (8, 0), SM90, "9.7.9.27.1.2 Data Movement and Conversion Instructions: cp.async.bulk.tensor";
    TmaReduce: "cp.reduce.async.bulk.tensor", "cp.reduce.async.bulk.tensor.{1d|2d|3d|4d|5d}.global.shared::cta.{add|min|max|inc|dec|and|or|xor}{.tile|.im2col_no_offs}.bulk_group{.L2::cache_hint} [tmap, coords], [src]{, policy}", ptx (8, 0), SM90, "9.7.9.27.1.3 Data Movement and Conversion Instructions: cp.reduce.async.bulk.tensor";
    TmaPrefetch: "cp.async.bulk.prefetch.tensor", "cp.async.bulk.prefetch.tensor.{1d|2d|3d|4d|5d}.L2.global{.tile|.im2col}{.L2::cache_hint} [tmap, coords]{, offsets}{, policy}", ptx (8, 0), SM90, "9.7.9.27.1.4 Data Movement and Conversion Instructions: cp.async.bulk.prefetch.tensor";
    TmaCtaGroup: "cp.async.bulk.tensor.cta_group", "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [dst], [tmap, coords], [mbar]", ptx (8, 6), SM100A, "9.7.9.27.1.2 Data Movement and Conversion Instructions: cp.async.bulk.tensor (.cta_group)", feature;
    TmaSharedCta: "cp.async.bulk.shared::cta", "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [dst], [tmap, coords], [mbar]", ptx (8, 6), SM90, "9.7.9.27.1.2 Data Movement and Conversion Instructions: cp.async.bulk.tensor (.shared::cta destination)", feature;
    // PTX ISA 9.7.16.10.9: a block-scaled tcgen05.mma without `.scale_vec` is `.block32` (PTX 8.8;
    // ptxas 13.0: "Feature '.block32' requires PTX ISA .version 8.8 or later").
    Tcgen05BlockScaleDefault: "tcgen05.mma.block_scale.default", "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [d], a/[a], b, idesc, [scale_a], [scale_b], enable_input_d", ptx (8, 8), SM100A, "9.7.16.10.9 TensorCore 5th Generation Family Instructions: tcgen05.mma (block scaling, no .scale_vec)", feature;
    PrefetchTensormap: "prefetch.tensormap", "prefetch{.const|.param}.tensormap [a]", ptx (8, 0), SM90, "9.7.9.15 Data Movement and Conversion Instructions: prefetch, prefetchu (.tensormap)";

    // ---- tensor-map updates in memory (sm_90a and later arch-specific targets) ------------------------
    TensormapReplace: "tensormap.replace", "tensormap.replace.tile.{global_address|rank}{.global|.shared::cta}.b1024.{b32|b64} [addr], new_val", ptx (8, 3), ARCH_A, "9.7.9 Data Movement and Conversion Instructions: tensormap.replace (.field1)";
    TensormapReplaceOrd: "tensormap.replace.ord", "tensormap.replace.tile.{box_dim|global_dim|global_stride|element_stride}{.global|.shared::cta}.b1024.{b32|b64} [addr], ord, new_val", ptx (8, 3), ARCH_A, "9.7.9 Data Movement and Conversion Instructions: tensormap.replace (.field2)";
    TensormapReplaceMode: "tensormap.replace.mode", "tensormap.replace.tile.{elemtype|interleave_layout|swizzle_mode|fill_mode}{.global|.shared::cta}.b1024.b32 [addr], new_val", ptx (8, 3), ARCH_A, "9.7.9 Data Movement and Conversion Instructions: tensormap.replace (.field3)";
    TensormapReplaceAtomicity: "tensormap.replace.swizzle_atomicity", "tensormap.replace.tile.swizzle_atomicity{.global|.shared::cta}.b1024.b32 [addr], new_val", ptx (8, 6), SM100A_120A, "9.7.9 Data Movement and Conversion Instructions: tensormap.replace (.swizzle_atomicity)";
    TensormapCpFenceproxy: "tensormap.cp_fenceproxy", "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.{cta|cluster|gpu|sys}.sync.aligned [dst], [src], size", ptx (8, 3), SM90, "9.7.13 Parallel Synchronization and Communication Instructions: tensormap.cp_fenceproxy";
    // PTX ISA 9.7.9.18: the conversion of an access property (PTX 7.4). The range form is not a
    // row yet: its primary and secondary priorities share names, and only their order tells
    // them apart, which the rows' modifier sets do not keep.
    CreatepolicyCvt: "createpolicy.cvt", "createpolicy.cvt.L2.b64 policy, a", ptx (7, 4), ALL, "9.7.9.18 Data Movement and Conversion Instructions: createpolicy (.cvt)";
    CreatepolicyFractional: "createpolicy.fractional", "createpolicy.fractional.{L2::evict_last|L2::evict_normal|L2::evict_first|L2::evict_unchanged}{.L2::evict_first|.L2::evict_unchanged}.b64 policy{, fraction}", ptx (7, 4), ALL, "9.7.9.18 Data Movement and Conversion Instructions: createpolicy";

    // ---- 9.7.15 wgmma (sm_90a) ------------------------------------------------------------------------
    WgmmaFence: "wgmma.fence", "wgmma.fence.sync.aligned", ptx (8, 0), SM90A, "9.7.15.6.1 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.fence";
    WgmmaCommit: "wgmma.commit_group", "wgmma.commit_group.sync.aligned", ptx (8, 0), SM90A, "9.7.15.6.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.commit_group";
    WgmmaWait: "wgmma.wait_group", "wgmma.wait_group.sync.aligned n", ptx (8, 0), SM90A, "9.7.15.6.3 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.wait_group";
    WgmmaF16: "wgmma.mma_async.f16", "wgmma.mma_async.sync.aligned.m64n*k16.{f32|f16}.{f16|bf16}.{f16|bf16} d, a, b, scale_d, imm_scale_a, imm_scale_b{, imm_trans_a}{, imm_trans_b}", ptx (8, 0), SM90A, "9.7.15.5.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async";
    WgmmaTf32: "wgmma.mma_async.tf32", "wgmma.mma_async.sync.aligned.m64n*k8.f32.tf32.tf32 d, a, b, scale_d, imm_scale_a, imm_scale_b", ptx (8, 0), SM90A, "9.7.15.5.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async";
    WgmmaF8: "wgmma.mma_async.f8", "wgmma.mma_async.sync.aligned.m64n*k32.{f32|f16}.{e4m3|e5m2}.{e4m3|e5m2} d, a, b, scale_d, imm_scale_a, imm_scale_b", ptx (8, 0), SM90A, "9.7.15.5.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async";
    WgmmaMixedInt: "wgmma.mma_async.i8.mixed", "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8 d, a, b, scale_d", ptx (8, 4), SM90A, "9.7.15.5.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async (mixed .s8/.u8)", feature;
    WgmmaI8: "wgmma.mma_async.i8", "wgmma.mma_async.sync.aligned.m64n*k32{.satfinite}.s32.{s8|u8}.{s8|u8} d, a, b, scale_d", ptx (8, 0), SM90A, "9.7.15.5.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async";

    // ---- 9.7.16 tcgen05 (sm_100a) ---------------------------------------------------------------------
    // PTX ISA 9.7.16.7.1: "If no state space is specified then Generic Addressing is used".
    Tcgen05Alloc: "tcgen05.alloc", "tcgen05.alloc.{cta_group::1|cta_group::2}.sync.aligned{.shared::cta}.b32 [dst], ncols", ptx (8, 6), SM100A, "9.7.16.7.1 TensorCore 5th Generation Family Instructions: tcgen05.alloc";
    Tcgen05Dealloc: "tcgen05.dealloc", "tcgen05.dealloc.{cta_group::1|cta_group::2}.sync.aligned.b32 taddr, ncols", ptx (8, 6), SM100A, "9.7.16.7.1 TensorCore 5th Generation Family Instructions: tcgen05.dealloc";
    Tcgen05Relinquish: "tcgen05.relinquish_alloc_permit", "tcgen05.relinquish_alloc_permit.{cta_group::1|cta_group::2}.sync.aligned", ptx (8, 6), SM100A, "9.7.16.7.1 TensorCore 5th Generation Family Instructions: tcgen05.relinquish_alloc_permit";
    Tcgen05Ld: "tcgen05.ld", "tcgen05.ld.sync.aligned.{16x64b|16x128b|16x256b|32x32b}.x*{.pack::16b}.b32 r, [taddr]", ptx (8, 6), SM100A, "9.7.16.8.3 TensorCore 5th Generation Family Instructions: tcgen05.ld";
    Tcgen05Ld16x32bx2: "tcgen05.ld.16x32bx2", "tcgen05.ld.sync.aligned.16x32bx2.x*{.pack::16b}.b32 r, [taddr], offset", ptx (8, 6), SM100A, "9.7.16.8.3 TensorCore 5th Generation Family Instructions: tcgen05.ld";
    Tcgen05St: "tcgen05.st", "tcgen05.st.sync.aligned.{16x64b|16x128b|16x256b|32x32b}.x*{.unpack::16b}.b32 [taddr], r", ptx (8, 6), SM100A, "9.7.16.8.4 TensorCore 5th Generation Family Instructions: tcgen05.st";
    Tcgen05St16x32bx2: "tcgen05.st.16x32bx2", "tcgen05.st.sync.aligned.16x32bx2.x*{.unpack::16b}.b32 [taddr], offset, r", ptx (8, 6), SM100A, "9.7.16.8.4 TensorCore 5th Generation Family Instructions: tcgen05.st";
    Tcgen05WaitLd: "tcgen05.wait::ld", "tcgen05.wait::ld.sync.aligned", ptx (8, 6), SM100A, "9.7.16.8.5 TensorCore 5th Generation Family Instructions: tcgen05.wait";
    Tcgen05WaitSt: "tcgen05.wait::st", "tcgen05.wait::st.sync.aligned", ptx (8, 6), SM100A, "9.7.16.8.5 TensorCore 5th Generation Family Instructions: tcgen05.wait";
    Tcgen05Cp: "tcgen05.cp", "tcgen05.cp.{cta_group::1|cta_group::2}.{128x256b|4x256b|128x128b|64x128b.warpx2::02_13|64x128b.warpx2::01_23|32x128b.warpx4}{.b8x16.b6x16_p32|.b8x16.b4x16_p64} [taddr], s_desc", ptx (8, 6), SM100A, "9.7.16.8.1 TensorCore 5th Generation Family Instructions: tcgen05.cp";
    Tcgen05Shift: "tcgen05.shift", "tcgen05.shift.{cta_group::1|cta_group::2}.down [taddr]", ptx (8, 6), SM100A, "9.7.16.8.2 TensorCore 5th Generation Family Instructions: tcgen05.shift";
    // PTX ISA 9.7.16.10.9: tcgen05.mma's `a` is a matrix descriptor or a tensor-memory address
    // `[a-tmem]`: the slot takes either kind (`a/[a]`), in every tcgen05.mma row.
    Tcgen05Mma: "tcgen05.mma", "tcgen05.mma.{cta_group::1|cta_group::2}.{kind::f16|kind::tf32|kind::f8f6f4|kind::i8} [d], a/[a], b, idesc{, disable_output_lane}, enable_input_d", ptx (8, 6), SM100A, "9.7.16.10.9 TensorCore 5th Generation Family Instructions: tcgen05.mma";
    Tcgen05MmaWs: "tcgen05.mma.ws", "tcgen05.mma.ws.cta_group::1.{kind::f16|kind::tf32|kind::f8f6f4|kind::i8} [d], a/[a], b, idesc, enable_input_d", ptx (8, 6), SM100A, "9.7.16.10.9 TensorCore 5th Generation Family Instructions: tcgen05.mma.ws";
    Tcgen05MmaBlockScale: "tcgen05.mma.block_scale", "tcgen05.mma.{cta_group::1|cta_group::2}.{kind::mxf8f6f4|kind::mxf4|kind::mxf4nvf4}.block_scale{.scale_vec::1X|.scale_vec::2X|.scale_vec::4X} [d], a/[a], b, idesc, [scale_a], [scale_b], enable_input_d", ptx (8, 6), SM100A, "9.7.16.10.9 TensorCore 5th Generation Family Instructions: tcgen05.mma (block scaling)";
    Tcgen05Commit: "tcgen05.commit", "tcgen05.commit.{cta_group::1|cta_group::2}.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64 [mbar]{, ctaMask}", ptx (8, 6), SM100A, "9.7.16.10.10 TensorCore 5th Generation Family Instructions: tcgen05.commit";
    Tcgen05FenceBefore: "tcgen05.fence::before_thread_sync", "tcgen05.fence::before_thread_sync", ptx (8, 6), SM100A, "9.7.16.9.1 TensorCore 5th Generation Family Instructions: tcgen05.fence";
    Tcgen05FenceAfter: "tcgen05.fence::after_thread_sync", "tcgen05.fence::after_thread_sync", ptx (8, 6), SM100A, "9.7.16.9.1 TensorCore 5th Generation Family Instructions: tcgen05.fence";

    // ---- families added for coverage (issue 14, part 4) ----------------------------------------------
    // PTX ISA 9.7.2.5/9.7.2.6: `mad{.hi,.lo}.cc`, `madc{.hi,.lo}{.cc}` (ptxas 13.0 takes neither
    // without .hi or .lo; 64-bit types from PTX 4.3).
    MadCc: "mad.cc", "mad.{hi|lo}.cc.{u32|s32|u64|s64} d, a, b, c", ptx (4, 3), ALL, "9.7.2.5 Extended-Precision Arithmetic Instructions: mad.cc";
    Madc: "madc", "madc.{hi|lo}{.cc}.{u32|s32|u64|s64} d, a, b, c", ptx (4, 3), ALL, "9.7.2.6 Extended-Precision Arithmetic Instructions: madc";
    // PTX ISA 9.7.9.22: saturating packs of two or four .s32 values.
    CvtPack16: "cvt.pack.16", "cvt.pack.sat.{u16|s16}.s32 d, a, b", ptx (6, 5), ALL, "9.7.9.22 Data Movement and Conversion Instructions: cvt.pack";
    CvtPackSub: "cvt.pack.sub-byte", "cvt.pack.sat.{u8|s8|u4|s4|u2|s2}.s32.b32 d, a, b, c", ptx (6, 5), ALL, "9.7.9.22 Data Movement and Conversion Instructions: cvt.pack";
    // PTX ISA 9.7.9.13: `st.bulk{.weak}{.shared::cta} [a], size, initval` (initval 0), sm_100+.
    StBulk: "st.bulk", "st.bulk{.weak}{.shared::cta} [a], size, initval", ptx (8, 6), SM100, "9.7.9.13 Data Movement and Conversion Instructions: st.bulk";
    // PTX ISA 9.7.9.14: multimem.ld_reduce/st/red on multimem addresses (sm_90+). The integer and
    // floating-point forms share a row each; the rules pair operations, types and vectors.
    MultimemLdReduce: "multimem.ld_reduce", "multimem.ld_reduce{.weak|.relaxed|.acquire}{.cta|.cluster|.gpu|.sys}{.global}.{min|max|add|and|or|xor}{.acc::f32}{.v2|.v4|.v8}.{b32|b64|u32|u64|s32|s64|f16|f16x2|bf16|bf16x2|f32|f64} d, [a]", ptx (8, 1), SM90, "9.7.9.14 Data Movement and Conversion Instructions: multimem.ld_reduce";
    // ptxas 13.0 also takes `.acc::f32` on multimem.st and multimem.red, with every type, where
    // the PTX ISA 9.0 grammar has none.
    MultimemSt: "multimem.st", "multimem.st{.weak|.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global}{.acc::f32}{.v2|.v4|.v8}.{b32|b64|u32|u64|s32|s64|f16|f16x2|bf16|bf16x2|f32|f64} [a], b", ptx (8, 1), SM90, "9.7.9.14 Data Movement and Conversion Instructions: multimem.st";
    MultimemRed: "multimem.red", "multimem.red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global}.{min|max|add|and|or|xor}{.acc::f32}{.v2|.v4|.v8}.{b32|b64|u32|u64|s32|s64|f16|f16x2|bf16|bf16x2|f32|f64} [a], b", ptx (8, 1), SM90, "9.7.9.14 Data Movement and Conversion Instructions: multimem.red";
    // PTX ISA 9.7.10.3-9.7.10.6 (unified texture mode: `a` a .texref or a 64-bit handle).
    Tex: "tex", "tex{.base}.{1d|2d|3d|a1d|a2d|cube|acube|2dms|a2dms}.{v4|v2}.{u32|s32|f16|f32|f16x2}.{s32|f32} d, [a, c]{, e}{, f}", ptx (1, 0), ALL, "9.7.10.3 Texture Instructions: tex";
    TexLevel: "tex.level", "tex.level.{1d|2d|3d|a1d|a2d|cube|acube|2dms|a2dms}.{v4|v2}.{u32|s32|f16|f32|f16x2}.{s32|f32} d, [a, c], lod{, e}{, f}", ptx (2, 3), ALL, "9.7.10.3 Texture Instructions: tex (.level)";
    TexGrad: "tex.grad", "tex.grad.{1d|2d|3d|a1d|a2d|cube|acube|2dms|a2dms}.{v4|v2}.{u32|s32|f16|f32|f16x2}.{s32|f32} d, [a, c], dpdx, dpdy{, e}{, f}", ptx (2, 3), ALL, "9.7.10.3 Texture Instructions: tex (.grad)";
    Tld4: "tld4", "tld4.{r|g|b|a}.{2d|a2d|cube|acube}.v4.{u32|s32|f32}.f32 d, [a, c]{, e}{, f}", ptx (2, 2), ALL, "9.7.10.4 Texture Instructions: tld4";
    Txq: "txq", "txq.{width|height|depth|channel_data_type|channel_order|normalized_coords|filter_mode|addr_mode_0|addr_mode_1|addr_mode_2|array_size|num_mipmap_levels|num_samples|force_unnormalized_coords}.b32 d, [a]", ptx (1, 5), ALL, "9.7.10.5 Texture Instructions: txq";
    TxqLevel: "txq.level", "txq.level.{width|height|depth}.b32 d, [a], lod", ptx (4, 3), ALL, "9.7.10.5 Texture Instructions: txq (.level)";
    Istypep: "istypep", "istypep.{texref|samplerref|surfref} p, a", ptx (4, 0), ALL, "9.7.10.6 Texture Instructions: istypep";
    // PTX ISA 9.7.11.1-9.7.11.4 (a .surfref or a 64-bit handle).
    Suld: "suld", "suld.b.{1d|2d|3d|a1d|a2d}{.ca|.cg|.cs|.cv}{.v2|.v4}.{b8|b16|b32|b64}.{trap|clamp|zero} d, [a, b]", ptx (1, 5), ALL, "9.7.11.1 Surface Instructions: suld";
    Sust: "sust", "sust.{b|p}.{1d|2d|3d|a1d|a2d}{.wb|.cg|.cs|.wt}{.v2|.v4}.{b8|b16|b32|b64}.{trap|clamp|zero} [a, b], c", ptx (1, 5), ALL, "9.7.11.2 Surface Instructions: sust";
    SuredB: "sured.b", "sured.b.{add|min|max|and|or}.{1d|2d|3d}.{u32|u64|s32|b32|s64}.{trap|clamp|zero} [a, b], c", ptx (2, 0), ALL, "9.7.11.3 Surface Instructions: sured";
    SuredP: "sured.p", "sured.p.{add|min|max|and|or}.{1d|2d|3d}.{b32|b64}.{trap|clamp|zero} [a, b], c", ptx (2, 0), ALL, "9.7.11.3 Surface Instructions: sured";
    Suq: "suq", "suq.{width|height|depth|channel_data_type|channel_order|array_size|memory_layout}.b32 d, [a]", ptx (1, 5), ALL, "9.7.11.4 Surface Instructions: suq";
    // PTX ISA 9.7.13.17/9.7.13.18: cluster launch control, sm_100+ (.multicast::cluster::all on
    // the arch-specific targets only: ptxas 13.0 "not supported on .target 'sm_100'").
    ClcTryCancel: "clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes.b128 [addr], [mbar]", ptx (8, 6), SM100, "9.7.13.17 Parallel Synchronization and Communication Instructions: clusterlaunchcontrol.try_cancel";
    ClcTryCancelMulticast: "clusterlaunchcontrol.try_cancel.multicast", "clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 [addr], [mbar]", ptx (8, 6), SM100A_120A, "9.7.13.17 Parallel Synchronization and Communication Instructions: clusterlaunchcontrol.try_cancel (.multicast::cluster::all)";
    ClcQueryCanceled: "clusterlaunchcontrol.query_cancel.is_canceled", "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, response", ptx (8, 6), SM100, "9.7.13.18 Parallel Synchronization and Communication Instructions: clusterlaunchcontrol.query_cancel";
    ClcQueryCtaid: "clusterlaunchcontrol.query_cancel.get_first_ctaid", "clusterlaunchcontrol.query_cancel.{get_first_ctaid::x|get_first_ctaid::y|get_first_ctaid::z}.b32.b128 d, response", ptx (8, 6), SM100, "9.7.13.18 Parallel Synchronization and Communication Instructions: clusterlaunchcontrol.query_cancel";
    ClcQueryCtaidV4: "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4", "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 d, response", ptx (8, 6), SM100, "9.7.13.18 Parallel Synchronization and Communication Instructions: clusterlaunchcontrol.query_cancel";
    // PTX ISA 9.7.17: the stack of the thread's local memory.
    Stacksave: "stacksave", "stacksave.{u32|u64} d", ptx (7, 3), ALL, "9.7.17.1 Stack Manipulation Instructions: stacksave";
    Stackrestore: "stackrestore", "stackrestore.{u32|u64} a", ptx (7, 3), ALL, "9.7.17.2 Stack Manipulation Instructions: stackrestore";
    Alloca: "alloca", "alloca.{u32|u64} ptr, size{, align}", ptx (7, 3), ALL, "9.7.17.3 Stack Manipulation Instructions: alloca";
    // PTX ISA 9.7.18.1: scalar video instructions (operand byte/half selectors not modelled).
    Vadd: "vadd", "vadd.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.1 Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax";
    Vsub: "vsub", "vsub.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.1 Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax";
    Vabsdiff: "vabsdiff", "vabsdiff.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.1 Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax";
    Vmin: "vmin", "vmin.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.1 Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax";
    Vmax: "vmax", "vmax.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.1 Scalar Video Instructions: vadd, vsub, vabsdiff, vmin, vmax";
    Vshl: "vshl", "vshl.{u32|s32}.{u32|s32}.u32{.sat}.{clamp|wrap}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.2 Scalar Video Instructions: vshl, vshr";
    Vshr: "vshr", "vshr.{u32|s32}.{u32|s32}.u32{.sat}.{clamp|wrap}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.2 Scalar Video Instructions: vshl, vshr";
    Vmad: "vmad", "vmad.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.shr7|.shr15} d, a, b, c", ptx (2, 0), ALL, "9.7.18.1.3 Scalar Video Instructions: vmad";
    Vset: "vset", "vset.{u32|s32}.{u32|s32}.{eq|ne|lt|le|gt|ge}{.add|.min|.max} d, a, b{, c}", ptx (2, 0), ALL, "9.7.18.1.4 Scalar Video Instructions: vset";
    // PTX ISA 9.7.18.2: SIMD video instructions on half-words and bytes (the `c` operand always).
    Vadd2: "vadd2", "vadd2.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.1 SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2";
    Vsub2: "vsub2", "vsub2.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.1 SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2";
    Vavrg2: "vavrg2", "vavrg2.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.1 SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2";
    Vabsdiff2: "vabsdiff2", "vabsdiff2.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.1 SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2";
    Vmin2: "vmin2", "vmin2.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.1 SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2";
    Vmax2: "vmax2", "vmax2.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.1 SIMD Video Instructions: vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2";
    Vset2: "vset2", "vset2.{u32|s32}.{u32|s32}.{eq|ne|lt|le|gt|ge}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.2 SIMD Video Instructions: vset2";
    Vadd4: "vadd4", "vadd4.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.3 SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4";
    Vsub4: "vsub4", "vsub4.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.3 SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4";
    Vavrg4: "vavrg4", "vavrg4.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.3 SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4";
    Vabsdiff4: "vabsdiff4", "vabsdiff4.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.3 SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4";
    Vmin4: "vmin4", "vmin4.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.3 SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4";
    Vmax4: "vmax4", "vmax4.{u32|s32}.{u32|s32}.{u32|s32}{.sat}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.3 SIMD Video Instructions: vadd4, vsub4, vavrg4, vabsdiff4, vmin4, vmax4";
    Vset4: "vset4", "vset4.{u32|s32}.{u32|s32}.{eq|ne|lt|le|gt|ge}{.add} d, a, b, c", ptx (3, 0), ALL, "9.7.18.2.4 SIMD Video Instructions: vset4";
    // PTX ISA 9.7.14.6: mma on a 2:4-sparse A, with its metadata `e` and sparsity selector `f`;
    // `.sp::ordered_metadata` is PTX 8.5 (the feature row).
    MmaSpF16: "mma.sp.f16", "mma.{sp|sp::ordered_metadata}.sync.aligned.{m16n8k16|m16n8k32}.row.col.{f32|f16}.{f16|bf16}.{f16|bf16}.{f32|f16} d, a, b, c, e, f", ptx (7, 1), ALL, "9.7.14.6.3 Warp Level Matrix Multiply-Accumulate Instructions: mma.sp";
    MmaSpTf32: "mma.sp.tf32", "mma.{sp|sp::ordered_metadata}.sync.aligned.{m16n8k8|m16n8k16}.row.col.f32.tf32.tf32.f32 d, a, b, c, e, f", ptx (7, 1), ALL, "9.7.14.6.3 Warp Level Matrix Multiply-Accumulate Instructions: mma.sp";
    MmaSpI8: "mma.sp.i8", "mma.{sp|sp::ordered_metadata}.sync.aligned.{m16n8k32|m16n8k64}.row.col{.satfinite}.s32.{s8|u8}.{s8|u8}.s32 d, a, b, c, e, f", ptx (7, 1), ALL, "9.7.14.6.3 Warp Level Matrix Multiply-Accumulate Instructions: mma.sp";
    MmaSpF8: "mma.sp.f8", "mma.{sp|sp::ordered_metadata}.sync.aligned.m16n8k64.row.col.f32.{e4m3|e5m2}.{e4m3|e5m2}.f32 d, a, b, c, e, f", ptx (8, 4), SM89, "9.7.14.6.3 Warp Level Matrix Multiply-Accumulate Instructions: mma.sp";
    MmaSpOrdered: "mma.sp::ordered_metadata", "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 d, a, b, c, e, f", ptx (8, 5), ALL, "9.7.14.6.3 Warp Level Matrix Multiply-Accumulate Instructions: mma.sp (.sp::ordered_metadata)", feature;
    // PTX ISA 9.7.15.6: wgmma on a sparse A: the metadata and the selector follow b.
    WgmmaSpF16: "wgmma.mma_async.sp.f16", "wgmma.mma_async.sp.sync.aligned.m64n*k32.{f32|f16}.{f16|bf16}.{f16|bf16} d, a, b, meta, sel, scale_d, imm_scale_a, imm_scale_b{, imm_trans_a}{, imm_trans_b}", ptx (8, 2), SM90A, "9.7.15.6.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async.sp";
    WgmmaSpTf32: "wgmma.mma_async.sp.tf32", "wgmma.mma_async.sp.sync.aligned.m64n*k16.f32.tf32.tf32 d, a, b, meta, sel, scale_d, imm_scale_a, imm_scale_b", ptx (8, 2), SM90A, "9.7.15.6.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async.sp";
    WgmmaSpF8: "wgmma.mma_async.sp.f8", "wgmma.mma_async.sp.sync.aligned.m64n*k64.{f32|f16}.{e4m3|e5m2}.{e4m3|e5m2} d, a, b, meta, sel, scale_d, imm_scale_a, imm_scale_b", ptx (8, 2), SM90A, "9.7.15.6.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async.sp";
    WgmmaSpI8: "wgmma.mma_async.sp.i8", "wgmma.mma_async.sp.sync.aligned.m64n*k64{.satfinite}.s32.{s8|u8}.{s8|u8} d, a, b, meta, sel, scale_d", ptx (8, 2), SM90A, "9.7.15.6.2 Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions: wgmma.mma_async.sp";
    // PTX ISA 9.7.16.10.9: tcgen05.mma on a sparse A, its metadata in tensor memory.
    Tcgen05MmaSp: "tcgen05.mma.sp", "tcgen05.mma.sp.{cta_group::1|cta_group::2}.{kind::f16|kind::tf32|kind::f8f6f4|kind::i8} [d], a/[a], b, [meta], idesc{, disable_output_lane}, enable_input_d", ptx (8, 6), SM100A, "9.7.16.10.9 TensorCore 5th Generation Family Instructions: tcgen05.mma.sp";
    Tcgen05MmaWsSp: "tcgen05.mma.ws.sp", "tcgen05.mma.ws.sp.cta_group::1.{kind::f16|kind::tf32|kind::f8f6f4|kind::i8} [d], a/[a], b, [meta], idesc, enable_input_d", ptx (8, 6), SM100A, "9.7.16.10.9 TensorCore 5th Generation Family Instructions: tcgen05.mma.ws.sp";
    // PTX ISA 9.7.19.3: a performance-monitor event (0..=15) or a 16-bit mask of them.
    Pmevent: "pmevent", "pmevent a", ptx (1, 4), ALL, "9.7.19.3 Miscellaneous Instructions: pmevent";
    PmeventMask: "pmevent.mask", "pmevent.mask a", ptx (3, 0), ALL, "9.7.19.3 Miscellaneous Instructions: pmevent (.mask)";

    // ---- 11 Directives (rows for gating; the syntax shows a use) -----------------------------------
    DirReqNctaPerCluster: "directive.reqnctapercluster", "reqnctapercluster x, y, z", ptx (7, 8), SM90, "11.7.2 Cluster Dimension Directives: .reqnctapercluster", feature;
    DirExplicitCluster: "directive.explicitcluster", "explicitcluster", ptx (7, 8), SM90, "11.7.1 Cluster Dimension Directives: .explicitcluster", feature;
    DirMaxClusterRank: "directive.maxclusterrank", "maxclusterrank n", ptx (7, 8), SM90, "11.7.3 Cluster Dimension Directives: .maxclusterrank", feature;
    DirBranchTargets: "directive.branchtargets", "branchtargets L0, L1", ptx (6, 0), ALL, "11.3.1 Control Flow Directives: .branchtargets", feature;
}
