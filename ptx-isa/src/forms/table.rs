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
];

const ALL: TargetSet = TargetSet::all();
const SM89: TargetSet = TargetSet::sm_at_least(89);
const SM90: TargetSet = TargetSet::sm_at_least(90);

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
    MaxInt: "max.int", "max.{u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.1.13 Integer Arithmetic Instructions: max";
    Popc: "popc", "popc.{b32|b64} d, a", ptx (2, 0), ALL, "9.7.1.14 Integer Arithmetic Instructions: popc";
    Clz: "clz", "clz.{b32|b64} d, a", ptx (2, 0), ALL, "9.7.1.15 Integer Arithmetic Instructions: clz";
    Brev: "brev", "brev.{b32|b64} d, a", ptx (2, 0), ALL, "9.7.1.18 Integer Arithmetic Instructions: brev";
    Bfe: "bfe", "bfe.{u32|u64|s32|s64} d, a, b, c", ptx (2, 0), ALL, "9.7.1.19 Integer Arithmetic Instructions: bfe";
    Bfi: "bfi", "bfi.{b32|b64} f, a, b, c, d", ptx (2, 0), ALL, "9.7.1.20 Integer Arithmetic Instructions: bfi";

    // ---- 9.7.3 Floating-Point Instructions ---------------------------------------------------------
    AddF32: "add.f32", "add{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.3 Floating Point Instructions: add";
    AddF64: "add.f64", "add{.rn|.rz|.rm|.rp}.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.3 Floating Point Instructions: add";
    SubF32: "sub.f32", "sub{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.4 Floating Point Instructions: sub";
    SubF64: "sub.f64", "sub{.rn|.rz|.rm|.rp}.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.4 Floating Point Instructions: sub";
    MulF32: "mul.f32", "mul{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.5 Floating Point Instructions: mul";
    MulF64: "mul.f64", "mul{.rn|.rz|.rm|.rp}.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.5 Floating Point Instructions: mul";
    FmaF32: "fma.f32", "fma.{rn|rz|rm|rp}{.ftz}{.sat}.f32 d, a, b, c", ptx (2, 0), ALL, "9.7.3.6 Floating Point Instructions: fma";
    FmaF64: "fma.f64", "fma.{rn|rz|rm|rp}.f64 d, a, b, c", ptx (1, 4), ALL, "9.7.3.6 Floating Point Instructions: fma";
    DivF32: "div.f32", "div.{approx|full|rn|rz|rm|rp}{.ftz}.f32 d, a, b", ptx (1, 4), ALL, "9.7.3.8 Floating Point Instructions: div";
    DivF64: "div.f64", "div.{rn|rz|rm|rp}.f64 d, a, b", ptx (1, 4), ALL, "9.7.3.8 Floating Point Instructions: div";
    AbsF32: "abs.f32", "abs{.ftz}.f32 d, a", ptx (1, 0), ALL, "9.7.3.9 Floating Point Instructions: abs";
    AbsF64: "abs.f64", "abs.f64 d, a", ptx (1, 0), ALL, "9.7.3.9 Floating Point Instructions: abs";
    NegF32: "neg.f32", "neg{.ftz}.f32 d, a", ptx (1, 0), ALL, "9.7.3.10 Floating Point Instructions: neg";
    NegF64: "neg.f64", "neg.f64 d, a", ptx (1, 0), ALL, "9.7.3.10 Floating Point Instructions: neg";
    MinF32: "min.f32", "min{.ftz}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.11 Floating Point Instructions: min";
    MinF64: "min.f64", "min.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.11 Floating Point Instructions: min";
    MaxF32: "max.f32", "max{.ftz}.f32 d, a, b", ptx (1, 0), ALL, "9.7.3.12 Floating Point Instructions: max";
    MaxF64: "max.f64", "max.f64 d, a, b", ptx (1, 0), ALL, "9.7.3.12 Floating Point Instructions: max";
    RcpF32: "rcp.f32", "rcp.{approx|rn|rz|rm|rp}{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.13 Floating Point Instructions: rcp";
    RcpF64: "rcp.f64", "rcp.{rn|rz|rm|rp}.f64 d, a", ptx (1, 4), ALL, "9.7.3.13 Floating Point Instructions: rcp";
    SqrtF32: "sqrt.f32", "sqrt.{approx|rn|rz|rm|rp}{.ftz}.f32 d, a", ptx (1, 4), ALL, "9.7.3.15 Floating Point Instructions: sqrt";
    SqrtF64: "sqrt.f64", "sqrt.{rn|rz|rm|rp}.f64 d, a", ptx (1, 4), ALL, "9.7.3.15 Floating Point Instructions: sqrt";
    RsqrtF32: "rsqrt.f32", "rsqrt.approx{.ftz}.f32 d, a", ptx (1, 0), ALL, "9.7.3.16 Floating Point Instructions: rsqrt";
    RsqrtF64: "rsqrt.f64", "rsqrt.approx.f64 d, a", ptx (1, 4), ALL, "9.7.3.16 Floating Point Instructions: rsqrt";
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
    FmaBf16: "fma.bf16", "fma.rn.{bf16|bf16x2} d, a, b, c", ptx (7, 0), ALL, "9.7.4.4 Half Precision Floating Point Instructions: fma";
    NegF16: "neg.f16", "neg{.ftz}.{f16|f16x2} d, a", ptx (6, 0), ALL, "9.7.4.5 Half Precision Floating Point Instructions: neg";
    NegBf16: "neg.bf16", "neg.{bf16|bf16x2} d, a", ptx (7, 0), ALL, "9.7.4.5 Half Precision Floating Point Instructions: neg";
    AbsF16: "abs.f16", "abs{.ftz}.{f16|f16x2} d, a", ptx (6, 5), ALL, "9.7.4.6 Half Precision Floating Point Instructions: abs";
    AbsBf16: "abs.bf16", "abs.{bf16|bf16x2} d, a", ptx (7, 0), ALL, "9.7.4.6 Half Precision Floating Point Instructions: abs";
    MinF16: "min.f16", "min{.ftz}.{f16|f16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.7 Half Precision Floating Point Instructions: min";
    MinBf16: "min.bf16", "min.{bf16|bf16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.7 Half Precision Floating Point Instructions: min";
    MaxF16: "max.f16", "max{.ftz}.{f16|f16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.8 Half Precision Floating Point Instructions: max";
    MaxBf16: "max.bf16", "max.{bf16|bf16x2} d, a, b", ptx (7, 0), ALL, "9.7.4.8 Half Precision Floating Point Instructions: max";
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
    Set: "set", "set.{eq|ne|lt|le|gt|ge|lo|ls|hi|hs|equ|neu|ltu|leu|gtu|geu|num|nan}{.and|.or|.xor}{.ftz}.{u32|s32|f32}.{b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64} d, a, b{, {!}c}", ptx (1, 0), ALL, "9.7.5.1 Comparison and Selection Instructions: set";

    // ---- 9.7.7 Logic and Shift Instructions ---------------------------------------------------------
    And: "and", "and.{pred|b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.1 Logic and Shift Instructions: and";
    Or: "or", "or.{pred|b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.2 Logic and Shift Instructions: or";
    Xor: "xor", "xor.{pred|b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.3 Logic and Shift Instructions: xor";
    Not: "not", "not.{pred|b16|b32|b64} d, a", ptx (1, 0), ALL, "9.7.7.4 Logic and Shift Instructions: not";
    Lop3: "lop3", "lop3.b32 d, a, b, c, immLut", ptx (4, 3), ALL, "9.7.7.6 Logic and Shift Instructions: lop3";
    Shl: "shl", "shl.{b16|b32|b64} d, a, b", ptx (1, 0), ALL, "9.7.7.8 Logic and Shift Instructions: shl";
    Shr: "shr", "shr.{b16|b32|b64|u16|u32|u64|s16|s32|s64} d, a, b", ptx (1, 0), ALL, "9.7.7.9 Logic and Shift Instructions: shr";

    // ---- 9.7.9 Data Movement and Conversion Instructions -------------------------------------------
    Mov: "mov", "mov.{pred|b16|b32|b64|u16|u32|u64|s16|s32|s64|f32|f64} d, a", ptx (1, 0), ALL, "9.7.9.1 Data Movement and Conversion Instructions: mov";
    MovB128: "mov.b128", "mov.b128 d, a", ptx (8, 3), ALL, "9.7.9.1 Data Movement and Conversion Instructions: mov";
    MovSreg: "mov.sreg", "mov.{u32|u64} d, sreg", ptx (1, 0), ALL, "10 Special Registers (read with mov)";
    MovSregCluster: "mov.sreg.cluster", "mov.{u32|pred} d, sreg", ptx (7, 8), SM90, "10.11-10.17 Special Registers: %is_explicit_cluster ... %cluster_nctarank";
    MovSregTotalSmem: "mov.sreg.total_smem_size", "mov.u32 d, sreg", ptx (8, 1), ALL, "10.30 Special Registers: %total_smem_size";
    Prmt: "prmt", "prmt.b32{.f4e|.b4e|.rc8|.ecl|.ecr|.rc16} d, a, b, c", ptx (2, 0), ALL, "9.7.9.7 Data Movement and Conversion Instructions: prmt";
    ShflSync: "shfl.sync", "shfl.sync.{up|down|bfly|idx}.b32 d{|p}, a, b, c, membermask", ptx (6, 0), ALL, "9.7.9.6 Data Movement and Conversion Instructions: shfl.sync";
    Ld: "ld", "ld{.weak|.volatile}{.const|.global|.local|.param|.shared|.shared::cluster}{.ca|.cg|.cs|.lu|.cv}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]{, policy}", ptx (1, 0), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld";
    LdOrdered: "ld.ordered", "ld.{relaxed|acquire}.{cta|cluster|gpu|sys}{.global|.shared|.shared::cluster|.local}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]{, policy}", ptx (6, 0), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld";
    LdGlobalNc: "ld.global.nc", "ld.global{.ca|.cg|.cs}.nc{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} d, [a]{, policy}", ptx (3, 1), ALL, "9.7.9.9 Data Movement and Conversion Instructions: ld.global.nc";
    St: "st", "st{.weak|.volatile}{.global|.local|.param|.shared|.shared::cluster}{.wb|.cg|.cs|.wt}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} [a], b{, policy}", ptx (1, 0), ALL, "9.7.9.11 Data Movement and Conversion Instructions: st";
    StOrdered: "st.ordered", "st.{relaxed|release}.{cta|cluster|gpu|sys}{.global|.shared|.shared::cluster|.local}{.L1::evict_normal|.L1::evict_unchanged|.L1::evict_first|.L1::evict_last|.L1::no_allocate}{.L2::cache_hint}{.v2|.v4}.{b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f32|f64} [a], b{, policy}", ptx (6, 0), ALL, "9.7.9.11 Data Movement and Conversion Instructions: st";
    MemEvictionPriority: "mem.L1::evict", "ld.global.L1::evict_last.u32 d, [a]", ptx (7, 4), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.level::eviction_priority)", feature;
    MemCacheHint: "mem.L2::cache_hint", "ld.global.L2::cache_hint.u32 d, [a], policy", ptx (7, 4), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.level::cache_hint)", feature;
    MemPrefetchSize: "mem.L2::prefetch_size", "ld.global.L2::128B.u32 d, [a]", ptx (7, 4), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.level::prefetch_size)", feature;
    MemScopeCluster: "mem.scope.cluster", "ld.relaxed.cluster.global.u32 d, [a]", ptx (7, 8), SM90, "8.5 Memory Consistency Model: Scope (.cluster)", feature;
    MemSharedCluster: "mem.shared::cluster", "ld.shared::cluster.u32 d, [a]", ptx (7, 8), SM90, "5.1.5 State Spaces: Shared State Space (.shared::cluster)", feature;
    MemB128: "mem.b128", "ld.global.b128 d, [a]", ptx (8, 3), ALL, "9.7.9.8 Data Movement and Conversion Instructions: ld (.b128)", feature;
    Cvt: "cvt", "cvt{.rni|.rzi|.rmi|.rpi|.rn|.rz|.rm|.rp}{.ftz}{.sat}.{u8|u16|u32|u64|s8|s16|s32|s64|f16|f32|f64}.{u8|u16|u32|u64|s8|s16|s32|s64|f16|f32|f64} d, a", ptx (1, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtBf16F32: "cvt.bf16.f32", "cvt.rn{.relu}.bf16.f32 d, a", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtF32Bf16: "cvt.f32.bf16", "cvt.f32.bf16 d, a", ptx (7, 1), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtBf16x2F32: "cvt.bf16x2.f32", "cvt.rn{.relu}.bf16x2.f32 d, a, b", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtF16x2F32: "cvt.f16x2.f32", "cvt.rn{.relu}.f16x2.f32 d, a, b", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtTf32F32: "cvt.tf32.f32", "cvt.rna.tf32.f32 d, a", ptx (7, 0), ALL, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtF8x2F32: "cvt.f8x2.f32", "cvt.rn.satfinite{.relu}.{e4m3x2|e5m2x2}.f32 d, a, b", ptx (7, 8), SM89, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    CvtF16x2F8x2: "cvt.f16x2.f8x2", "cvt.rn{.relu}.f16x2.{e4m3x2|e5m2x2} d, a", ptx (7, 8), SM89, "9.7.9.21 Data Movement and Conversion Instructions: cvt";
    Cvta: "cvta", "cvta{.to}.{global|local|shared|const}.u64 d, a", ptx (2, 0), ALL, "9.7.9.20 Data Movement and Conversion Instructions: cvta";
    CvtaCluster: "cvta.shared::cluster", "cvta{.to}.shared::cluster.u64 d, a", ptx (7, 8), SM90, "9.7.9.20 Data Movement and Conversion Instructions: cvta";

    // ---- 9.7.13 Parallel Synchronization and Communication Instructions ----------------------------
    BarSync: "bar.sync", "bar{.cta}.sync a{, b}", ptx (1, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarArrive: "bar.arrive", "bar{.cta}.arrive a, b", ptx (2, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarRedPopc: "bar.red.popc", "bar{.cta}.red.popc.u32 d, a{, b}, {!}c", ptx (2, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarRedPred: "bar.red.pred", "bar{.cta}.red.{and|or}.pred p, a{, b}, {!}c", ptx (2, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: bar";
    BarrierSync: "barrier.sync", "barrier{.cta}.sync{.aligned} a{, b}", ptx (6, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: barrier";
    BarrierArrive: "barrier.arrive", "barrier{.cta}.arrive{.aligned} a, b", ptx (6, 0), ALL, "9.7.13.1 Parallel Synchronization and Communication Instructions: barrier";
    Membar: "membar", "membar.{cta|gl|sys}", ptx (1, 4), ALL, "9.7.13.4 Parallel Synchronization and Communication Instructions: membar";
    Fence: "fence", "fence{.sc|.acq_rel}.{cta|gpu|sys}", ptx (6, 0), ALL, "9.7.13.4 Parallel Synchronization and Communication Instructions: fence";
    FenceCluster: "fence.cluster", "fence{.sc|.acq_rel}.cluster", ptx (7, 8), SM90, "9.7.13.4 Parallel Synchronization and Communication Instructions: fence";
    AtomInt: "atom.int", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.{and|or|xor|cas|exch|add|inc|dec|min|max}.{b32|b64|u32|u64|s32|s64} d, [a], b{, c}", ptx (1, 1), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomF32: "atom.f32", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f32 d, [a], b", ptx (2, 0), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomF64: "atom.f64", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f64 d, [a], b", ptx (5, 0), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomF16: "atom.f16", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{f16|f16x2} d, [a], b", ptx (6, 3), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomBf16: "atom.bf16", "atom{.relaxed|.acquire|.release|.acq_rel}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{bf16|bf16x2} d, [a], b", ptx (7, 8), SM90, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom";
    AtomOrdered: "atom.ordered", "atom.acq_rel.gpu.global.add.u32 d, [a], b", ptx (6, 0), ALL, "9.7.13.5 Parallel Synchronization and Communication Instructions: atom (.sem, .scope)", feature;
    RedInt: "red.int", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.{and|or|xor|add|inc|dec|min|max}.{b32|b64|u32|u64|s32|s64} [a], b", ptx (1, 2), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedF32: "red.f32", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f32 [a], b", ptx (2, 0), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedF64: "red.f64", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.f64 [a], b", ptx (5, 0), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedF16: "red.f16", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{f16|f16x2} [a], b", ptx (6, 3), ALL, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    RedBf16: "red.bf16", "red{.relaxed|.release}{.cta|.cluster|.gpu|.sys}{.global|.shared|.shared::cluster}.add.noftz.{bf16|bf16x2} [a], b", ptx (7, 8), SM90, "9.7.13.6 Parallel Synchronization and Communication Instructions: red";
    VoteSync: "vote.sync", "vote.sync.{all|any|uni}.pred d, {!}a, membermask", ptx (6, 0), ALL, "9.7.13.8 Parallel Synchronization and Communication Instructions: vote.sync";
    VoteBallot: "vote.sync.ballot", "vote.sync.ballot.b32 d, {!}a, membermask", ptx (6, 0), ALL, "9.7.13.8 Parallel Synchronization and Communication Instructions: vote.sync";
    MatchAny: "match.any.sync", "match.any.sync.{b32|b64} d, a, membermask", ptx (6, 0), ALL, "9.7.13.9 Parallel Synchronization and Communication Instructions: match.sync";
    MatchAll: "match.all.sync", "match.all.sync.{b32|b64} d{|p}, a, membermask", ptx (6, 0), ALL, "9.7.13.9 Parallel Synchronization and Communication Instructions: match.sync";
    Activemask: "activemask", "activemask.b32 d", ptx (6, 2), ALL, "9.7.13.10 Parallel Synchronization and Communication Instructions: activemask";
    ReduxSync: "redux.sync", "redux.sync.{add|min|max|and|or|xor}.{u32|s32|b32} d, a, membermask", ptx (7, 0), ALL, "9.7.13.11 Parallel Synchronization and Communication Instructions: redux.sync";
    ElectSync: "elect.sync", "elect.sync d|p, membermask", ptx (8, 0), SM90, "9.7.13.14 Parallel Synchronization and Communication Instructions: elect.sync";

    // ---- 9.7.12 Control Flow Instructions --------------------------------------------------------
    Bra: "bra", "bra{.uni} tgt", ptx (1, 0), ALL, "9.7.12.3 Control Flow Instructions: bra";
    Call: "call", "call{.uni} func{, ret}{, params}", ptx (1, 0), ALL, "9.7.12.5 Control Flow Instructions: call";
    Ret: "ret", "ret{.uni}", ptx (1, 0), ALL, "9.7.12.6 Control Flow Instructions: ret";
    Exit: "exit", "exit", ptx (1, 0), ALL, "9.7.12.7 Control Flow Instructions: exit";
    Trap: "trap", "trap", ptx (1, 0), ALL, "9.7.19 Miscellaneous Instructions: trap";
    Nanosleep: "nanosleep", "nanosleep.u32 t", ptx (6, 3), ALL, "9.7.19 Miscellaneous Instructions: nanosleep";

    // ---- 11 Directives (rows for gating; the syntax shows a use) -----------------------------------
    DirReqNctaPerCluster: "directive.reqnctapercluster", "reqnctapercluster x, y, z", ptx (7, 8), SM90, "11.7.2 Cluster Dimension Directives: .reqnctapercluster", feature;
    DirExplicitCluster: "directive.explicitcluster", "explicitcluster", ptx (7, 8), SM90, "11.7.1 Cluster Dimension Directives: .explicitcluster", feature;
    DirMaxClusterRank: "directive.maxclusterrank", "maxclusterrank n", ptx (7, 8), SM90, "11.7.3 Cluster Dimension Directives: .maxclusterrank", feature;
}
