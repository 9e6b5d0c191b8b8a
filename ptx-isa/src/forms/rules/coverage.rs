//! Rules of the rows added to cover every family of chapter 9.7 (issue 14, part 4): value ranges,
//! modifier pairs and register counts, each with the PTX ISA section behind it and held against
//! ptxas 13.0 by `tests/forms_agreement.rs`. Rules of one shape over several rows are built from
//! the small tables below.

use std::sync::LazyLock;

use super::{
    Check, Count, Form, Rule, Values, VideoShape, excludes, frag, imm, needs, number,
    operands_with, range, regs, ty,
};

/// A shape modifier as a one-element `when` list.
fn shape(s: &'static str) -> &'static [&'static str] {
    match s {
        "m16n8k8" => &["m16n8k8"],
        "m16n8k16" => &["m16n8k16"],
        "m16n8k32" => &["m16n8k32"],
        _ => &["m16n8k64"],
    }
}

const S_ST_BULK: &str = "9.7.9.13 st.bulk: initval must be zero";
const S_ALLOCA: &str = "9.7.17.3 alloca: immAlign a power of two";
const S_PMEVENT: &str = "9.7.19.3 pmevent: an event 0..=15, or a 16-bit mask of events";
const S_MM_SEM: &str = "9.7.9.14 multimem: .weak takes no scope; .relaxed, .acquire and .release take one (ptxas: \"requires scope\", \"requires order\")";
const S_MM_OP: &str = "9.7.9.14 multimem: the types each operation takes";
const S_MM_VEC: &str = "9.7.9.14 multimem: .vec with a floating-point type, the vector 32, 64 or 128 bits wide; no .vec on integers or .f64";
const S_MM_REGS: &str = "9.7.9.14 multimem: .vec names as many registers";
const S_TEX_COORDS: &str = "9.7.10.3 tex / 9.7.10.4 tld4: the coordinate vector by geometry (1d: one; 2d, a1d: two; 3d, a2d, cube, acube, 2dms, a2dms: four)";
const S_TEX_TYPES: &str = "9.7.10.3 tex: .cube and .acube take .f32 coordinates, .2dms and .a2dms .s32; .v2 goes with .f16x2";
const S_VEC_REGS: &str =
    "9.7.10.3 tex / 9.7.11.1 suld / 9.7.11.2 sust: .v2 and .v4 name as many registers";
const S_TEX_GRAD: &str =
    "9.7.10.3 tex.grad: dPdx and dPdy hold one value per dimension of the geometry";
const S_SU_COORDS: &str = "9.7.11 suld/sust/sured: the coordinate vector by geometry (1d: one; 2d, a1d: two; 3d, a2d: four)";
const S_VIDEO_OP2: &str =
    "9.7.18.1 scalar video instructions: the secondary operation takes the operand c";
const S_SURED: &str = "9.7.11.3 sured: the types each operation takes (.b: .u32, .s32, .u64, .s64, .b32; .p: .b32, .b64)";
const S_SU_VEC: &str =
    "9.7.11.1 suld / 9.7.11.2 sust: a vector of at most 128 bits; sust.p writes .b32";
const S_SIMD_SAT: &str =
    "9.7.18.2 SIMD video instructions: .sat or the secondary .add (ptxas 13.0 refuses both)";
const S_MMA_SP: &str = "9.7.14.6.1 mma.sp: fragments of the sparse shapes (A and B two .b32 at the smaller K, four at the larger; C/D four .f32/.s32 or two .f16x2); .bf16 accumulates in .f32";
const S_WGMMA_SP: &str = "9.7.15.6.1 wgmma.mma_async.sp: matrix shapes and accumulator fragments as for wgmma.mma_async; .bf16 accumulates in .f32";
const S_TC_SP_LANES: &str = "9.7.16.10.9 tcgen05.mma.sp: disable-output-lane is 4 registers (cta_group::1) or 8 (cta_group::2)";
const S_CLC_V4: &str =
    "9.7.13.18 clusterlaunchcontrol.query_cancel: .get_first_ctaid.v4 writes four registers";

/// The multimem rows, the position of their data operand and their `.sem` choices besides .weak.
const MULTIMEM: [(Form, usize, &[&str]); 3] = [
    (Form::MultimemLdReduce, 0, &["relaxed", "acquire"]),
    (Form::MultimemSt, 1, &["relaxed", "release"]),
    (Form::MultimemRed, 1, &["relaxed", "release"]),
];

/// The memory scopes (PTX ISA 8.5).
const SCOPES: &[&str] = &["cta", "cluster", "gpu", "sys"];

/// The coordinates each texture and surface geometry takes (PTX ISA 9.7.10.3, 9.7.11.1).
const GEOMETRY: [(&[&str], usize); 9] = [
    (&["1d"], 1),
    (&["2d"], 2),
    (&["3d"], 4),
    (&["a1d"], 2),
    (&["a2d"], 4),
    (&["cube"], 4),
    (&["acube"], 4),
    (&["2dms"], 4),
    (&["a2dms"], 4),
];

/// The values of a gradient by geometry (PTX ISA 9.7.10.3: "dPdx and dPdy ... vectors of size
/// one, two or four" by dimension).
const GRADIENTS: [(&[&str], usize); 7] = [
    (&["1d"], 1),
    (&["2d"], 2),
    (&["3d"], 4),
    (&["a1d"], 1),
    (&["a2d"], 2),
    (&["cube"], 4),
    (&["acube"], 4),
];

/// The disable-output-lane registers of each CTA group (PTX ISA 9.7.16.10.9).
const CTA_GROUP_LANES: [(&[&str], usize); 2] = [(&["cta_group::1"], 4), (&["cta_group::2"], 8)];

/// The vector modifiers and their lengths.
const VECTOR_LENGTHS: [(&[&str], usize); 3] = [(&["v2"], 2), (&["v4"], 4), (&["v8"], 8)];

/// Rows whose `[a, c]` operand (at the position given) holds coordinates by geometry.
const COORDS: [(Form, usize); 8] = [
    (Form::Tex, 1),
    (Form::TexLevel, 1),
    (Form::TexGrad, 1),
    (Form::Tld4, 1),
    (Form::Suld, 1),
    (Form::Sust, 0),
    (Form::SuredB, 0),
    (Form::SuredP, 0),
];

/// Rows with a `.v2`/`.v4` data vector and its position.
const VECTORS: [(Form, usize); 5] = [
    (Form::Tex, 0),
    (Form::Tld4, 0),
    (Form::TexLevel, 0),
    (Form::TexGrad, 0),
    (Form::Suld, 0),
];

/// The video rows whose secondary operation (`.add`, `.min`, `.max`) brings `c`.
const VIDEO_OP2: [Form; 8] = [
    Form::Vadd,
    Form::Vsub,
    Form::Vabsdiff,
    Form::Vmin,
    Form::Vmax,
    Form::Vshl,
    Form::Vshr,
    Form::Vset,
];

/// The video rows by how their operands take selectors and negation (PTX ISA 9.7.18).
const VIDEO_SHAPES: [(&[Form], VideoShape, &str); 4] = [
    (
        &VIDEO_OP2,
        VideoShape::Scalar,
        "9.7.18.1 scalar video instructions: a{.asel}, b{.bsel}, d.dsel in the merge form",
    ),
    (
        &[Form::Vmad],
        VideoShape::Mad,
        "9.7.18.1.3 vmad: {-}a{.asel}, {-}b{.bsel}, {-}c; (a*b) or c negated",
    ),
    (
        &[
            Form::Vadd2,
            Form::Vsub2,
            Form::Vavrg2,
            Form::Vabsdiff2,
            Form::Vmin2,
            Form::Vmax2,
            Form::Vset2,
        ],
        VideoShape::Simd2,
        "9.7.18.2.1/9.7.18.2.2 SIMD video on half-words: d{.mask}, a{.asel}, b{.bsel}",
    ),
    (
        &[
            Form::Vadd4,
            Form::Vsub4,
            Form::Vavrg4,
            Form::Vabsdiff4,
            Form::Vmin4,
            Form::Vmax4,
            Form::Vset4,
        ],
        VideoShape::Simd4,
        "9.7.18.2.3/9.7.18.2.4 SIMD video on bytes: d{.mask}, a{.asel}, b{.bsel}",
    ),
];

/// True when the row's pattern has the modifier `m`.
fn row_has(form: Form, m: &str) -> bool {
    form.pattern()
        .elements()
        .iter()
        .flat_map(|e| e.alternatives().iter().flatten())
        .any(|x| x == m)
}

/// Every rule of the added rows.
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut out = vec![
        imm(Form::StBulk, 2, "initval", &[], range(0, 0), S_ST_BULK),
        imm(
            Form::Alloca,
            2,
            "alignment",
            &[],
            Values::Pow2 { lo: 1, hi: 1 << 30 },
            S_ALLOCA,
        ),
        imm(Form::Pmevent, 0, "event", &[], range(0, 15), S_PMEVENT),
        imm(
            Form::PmeventMask,
            0,
            "event mask",
            &[],
            range(0, 0xFFFF),
            S_PMEVENT,
        ),
        frag(Form::ClcQueryCtaidV4, 0, "d", None, 4, S_CLC_V4),
        // tex: coordinate types by geometry, .v2 with .f16x2 only.
        needs(Form::Tex, "cube", &["f32"], S_TEX_TYPES),
    ];
    for (form, data, sems) in MULTIMEM {
        // .weak takes no scope; a .sem needs a scope and a scope a .sem.
        if row_has(form, "weak") {
            out.push(excludes(form, &["weak"], SCOPES, S_MM_SEM));
        }
        for s in sems {
            out.push(needs(form, s, SCOPES, S_MM_SEM));
        }
        for s in SCOPES {
            out.push(needs(form, s, sems, S_MM_SEM));
        }
        for (v, n) in VECTOR_LENGTHS {
            out.push(regs(
                form,
                data,
                "the data",
                v,
                None,
                Count::Fixed(n),
                S_MM_REGS,
            ));
        }
    }
    // Which types each operation and vector takes (ptxas 13.0: "Incorrect type '.f32' for
    // operation '.min'", "Inconsistent type '.f64' with vector .v2", "Vector qualifier is not
    // allowed"); .f16/.bf16 travel in vectors only ("Unexpected instruction types").
    const LOGIC: &[&str] = &["b32", "b64"];
    const HALVES: &[&str] = &["f16", "f16x2", "bf16", "bf16x2"];
    const VEC4: &[&str] = &["f16", "f16x2", "bf16", "bf16x2", "f32"];
    for form in [Form::MultimemLdReduce, Form::MultimemRed] {
        for op in ["and", "or", "xor"] {
            out.push(needs(form, op, LOGIC, S_MM_OP));
        }
        out.push(needs(
            form,
            "add",
            &[
                "u32", "s32", "u64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64",
            ],
            S_MM_OP,
        ));
        let minmax: &'static [&'static str] = if form == Form::MultimemLdReduce {
            &["u32", "s32", "u64", "s64", "f16", "f16x2", "bf16", "bf16x2"]
        } else {
            &["u32", "s32", "u64", "s64"]
        };
        out.push(needs(form, "min", minmax, S_MM_OP));
        out.push(needs(form, "max", minmax, S_MM_OP));
    }
    out.push(needs(Form::MultimemLdReduce, "acc::f32", HALVES, S_MM_OP));
    for (form, _, _) in MULTIMEM {
        out.push(needs(form, "v8", &["f16", "bf16"], S_MM_VEC));
        out.push(needs(form, "v4", VEC4, S_MM_VEC));
        out.push(needs(form, "v2", VEC4, S_MM_VEC));
        out.push(needs(form, "f16", &["v2", "v4", "v8"], S_MM_VEC));
        out.push(needs(form, "bf16", &["v2", "v4", "v8"], S_MM_VEC));
    }
    // sured (PTX ISA 9.7.11.3; ptxas 13.0 "Incorrect type '.b64' for operation '.and'").
    out.push(needs(Form::SuredB, "and", &["b32"], S_SURED));
    out.push(needs(Form::SuredB, "or", &["b32"], S_SURED));
    out.push(needs(Form::SuredB, "add", &["u32", "s32", "u64"], S_SURED));
    out.push(needs(
        Form::SuredB,
        "min",
        &["u32", "s32", "u64", "s64"],
        S_SURED,
    ));
    out.push(needs(
        Form::SuredB,
        "max",
        &["u32", "s32", "u64", "s64"],
        S_SURED,
    ));
    for op in ["add", "and", "or"] {
        out.push(needs(Form::SuredP, op, &["b32"], S_SURED));
    }
    // suld/sust: a vector is at most 128 bits; sust.p writes .b32 (PTX ISA 9.7.11.2).
    out.push(excludes(Form::Suld, &["v4"], &["b64"], S_SU_VEC));
    out.push(excludes(Form::Sust, &["v4"], &["b64"], S_SU_VEC));
    out.push(needs(Form::Sust, "p", &["b32"], S_SU_VEC));
    // mma.sp (PTX ISA 9.7.14.6.1, fragments for sparse matrices): A and B in .b32 registers by
    // shape, accumulators of four .f32/.s32 or two packed .f16x2.
    out.push(excludes(Form::MmaSpF16, &["bf16"], &["f16"], S_MMA_SP));
    for (form, small, large) in [
        (Form::MmaSpF16, "m16n8k16", "m16n8k32"),
        (Form::MmaSpTf32, "m16n8k8", "m16n8k16"),
        (Form::MmaSpI8, "m16n8k32", "m16n8k64"),
    ] {
        for operand in [1, 2] {
            out.push(regs(
                form,
                operand,
                "the fragment",
                shape(small),
                None,
                Count::Fixed(2),
                S_MMA_SP,
            ));
            out.push(regs(
                form,
                operand,
                "the fragment",
                shape(large),
                None,
                Count::Fixed(4),
                S_MMA_SP,
            ));
        }
    }
    for operand in [1, 2] {
        out.push(frag(
            Form::MmaSpF8,
            operand,
            "the fragment",
            None,
            4,
            S_MMA_SP,
        ));
    }
    for (operand, position) in [(0, 0), (3, 3)] {
        out.push(regs(
            Form::MmaSpF16,
            operand,
            "the accumulator",
            &[],
            ty(position, &["f32"]),
            Count::Fixed(4),
            S_MMA_SP,
        ));
        out.push(regs(
            Form::MmaSpF16,
            operand,
            "the accumulator",
            &[],
            ty(position, &["f16"]),
            Count::Fixed(2),
            S_MMA_SP,
        ));
        for form in [Form::MmaSpTf32, Form::MmaSpI8, Form::MmaSpF8] {
            out.push(frag(form, operand, "the accumulator", None, 4, S_MMA_SP));
        }
    }
    // wgmma.mma_async.sp (PTX ISA 9.7.15.6.1): N as for the dense shapes; N/2 .f32/.s32 or N/4
    // packed .f16x2 accumulator registers per thread.
    out.push(excludes(Form::WgmmaSpF16, &["bf16"], &["f16"], S_WGMMA_SP));
    for (form, token, values) in [
        (Form::WgmmaSpF16, "m64n*k32", super::WGMMA_N),
        (Form::WgmmaSpTf32, "m64n*k16", super::WGMMA_N),
        (Form::WgmmaSpF8, "m64n*k64", super::WGMMA_N),
        (Form::WgmmaSpI8, "m64n*k64", super::WGMMA_N_I8),
    ] {
        out.push(number(form, token, &[], values, S_WGMMA_SP));
        let halves = matches!(form, Form::WgmmaSpF16 | Form::WgmmaSpF8);
        let wide = if halves { ty(0, &["f32"]) } else { None };
        out.push(regs(
            form,
            0,
            "d",
            &[],
            wide,
            Count::Scaled {
                token,
                mul: 1,
                div: 2,
            },
            S_WGMMA_SP,
        ));
        if halves {
            out.push(regs(
                form,
                0,
                "d",
                &[],
                ty(0, &["f16"]),
                Count::Scaled {
                    token,
                    mul: 1,
                    div: 4,
                },
                S_WGMMA_SP,
            ));
        }
    }
    // tcgen05.mma.sp: disable-output-lane as for the dense form (PTX ISA 9.7.16.10.9).
    for (when, n) in CTA_GROUP_LANES {
        out.push(regs(
            Form::Tcgen05MmaSp,
            5,
            "disable-output-lane",
            when,
            None,
            Count::Fixed(n),
            S_TC_SP_LANES,
        ));
    }
    // The SIMD video instructions take .sat or .add, not both (ptxas 13.0; vset2/vset4 have
    // no .sat).
    for (forms, shape, _) in VIDEO_SHAPES {
        if matches!(shape, VideoShape::Simd2 | VideoShape::Simd4) {
            for &form in forms.iter().filter(|f| row_has(**f, "sat")) {
                out.push(excludes(form, &["sat"], &["add"], S_SIMD_SAT));
            }
        }
    }
    for (form, operand) in COORDS {
        for (when, n) in GEOMETRY {
            if !row_has(form, when[0]) {
                continue;
            }
            let section = if matches!(form, Form::Suld | Form::Sust | Form::SuredB | Form::SuredP) {
                S_SU_COORDS
            } else {
                S_TEX_COORDS
            };
            out.push(regs(
                form,
                operand,
                "the coordinates",
                when,
                None,
                Count::AtLeast(n),
                section,
            ));
        }
    }
    // tex.grad: each gradient holds one value per dimension of the geometry (ptxas 13.0 refuses
    // `{dx, dy}` for a .1d access).
    for (when, n) in GRADIENTS {
        for operand in [2, 3] {
            out.push(regs(
                Form::TexGrad,
                operand,
                "the gradient",
                when,
                None,
                Count::Fixed(n),
                S_TEX_GRAD,
            ));
        }
    }
    for (form, operand) in VECTORS {
        for (when, n) in VECTOR_LENGTHS {
            if row_has(form, when[0]) {
                out.push(regs(
                    form,
                    operand,
                    "the data",
                    when,
                    None,
                    Count::Fixed(n),
                    S_VEC_REGS,
                ));
            }
        }
    }
    for form in VIDEO_OP2 {
        for op in ["add", "min", "max"] {
            out.push(operands_with(form, op, 4, S_VIDEO_OP2));
        }
    }
    for (forms, shape, section) in VIDEO_SHAPES {
        for form in forms {
            out.push(Rule {
                form: *form,
                check: Check::Video(shape),
                section,
            });
        }
    }
    out
});
