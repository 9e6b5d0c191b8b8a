//! Every builder method writes exactly what its row allows (issue 14, "derived, not copied"): for
//! each method, each register type and every choice of its modifiers, the builder accepts the
//! choice if and only if the validator (which reads only the form table) accepts the instruction
//! the choice spells, and when it accepts, it writes that instruction. A refusal of the builder's
//! own that the rows do not make, or a row the builder cannot reach, fails here.
//!
//! Each case builds a kernel twice: once with the method's plain modifiers (the base, whose text
//! supplies the registers and the declarations) and once with the choice. The validator judges the
//! base text with its opcode rewritten to the choice's.

use ptx_isa::builder::*;
use ptx_isa::validate::{Options, Severity, check};

mod support;
use ptx_isa::{Addr, FunctionBuilder, Module, RegClass, ScalarType, Target, spaces, ty};
use support::errors;

const TARGET: Target = Target::Sm90a;

/// The targets the choice-by-choice tests run on: one before Hopper, Hopper, Blackwell and
/// consumer Blackwell.
const TARGETS: [Target; 4] = [Target::Sm80, Target::Sm90a, Target::Sm100a, Target::Sm120a];

/// The scopes and their spellings (PTX ISA 8.5 "Scope").
const SCOPES: [(Scope, &str); 4] = [
    (Scope::Cta, "cta"),
    (Scope::Cluster, "cluster"),
    (Scope::Gpu, "gpu"),
    (Scope::Sys, "sys"),
];

/// The module text `f` builds, or the builder's error message.
fn build(f: &dyn Fn(&mut FunctionBuilder) -> ptx_isa::Result<()>) -> Result<String, String> {
    build_on(TARGET, f)
}

/// The module text `f` builds for `target`, or the builder's error message.
fn build_on(
    target: Target,
    f: &dyn Fn(&mut FunctionBuilder) -> ptx_isa::Result<()>,
) -> Result<String, String> {
    let mut m = Module::new(target);
    let mut k = m.entry("t");
    let r = f(&mut k).map_err(|e| format!("{:?}: {}", e.kind, e.message));
    r?;
    k.ret().map_err(|e| e.message)?;
    m.add(k.finish().map_err(|e| e.message)?)
        .map_err(|e| e.message)?;
    m.to_ptx().map_err(|e| e.message)
}

/// `text` with `.version 9.0` (what a choice needs is gated by its row, not by the base's version)
/// and the instruction whose opcode is `from` rewritten to `to`.
fn rewrite(text: &str, from: &str, to: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with(".version ") {
                ".version 9.0".to_string()
            } else if let Some(rest) = l.strip_prefix(&format!("\t{from} ")) {
                format!("\t{to} {rest}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Counts and the disagreements found.
#[derive(Default)]
struct Tally {
    both_accept: usize,
    both_refuse: usize,
    wrong: Vec<String>,
}

impl Tally {
    /// Judges one choice: `write` writes it, spelling `opcode`; `base`/`base_opcode` are the plain
    /// form of the same method on the same registers.
    fn judge(
        &mut self,
        base: &dyn Fn(&mut FunctionBuilder) -> ptx_isa::Result<()>,
        base_opcode: &str,
        write: &dyn Fn(&mut FunctionBuilder) -> ptx_isa::Result<()>,
        opcode: &str,
    ) {
        let Ok(base_text) = build(base) else {
            return; // no row for this type at all: nothing to compare against
        };
        let spelled = rewrite(&base_text, base_opcode, opcode);
        assert!(
            base_text.contains(&format!("\t{base_opcode} ")),
            "the base of `{opcode}` does not write `{base_opcode}`:\n{base_text}"
        );
        let row = errors(&spelled);
        let wrote = |text: &str| {
            (rewrite(text, "", "") != spelled)
                .then(|| format!("builder asked for `{opcode}` writes something else:\n{text}"))
        };
        self.record(opcode, &row, build(write), &wrote);
    }

    /// Counts one choice: `row` holds the validator's errors on its spelling, `built` the
    /// builder's text or refusal, `wrote` what is wrong with the builder's text (if anything).
    fn record(
        &mut self,
        spelled: &str,
        row: &[String],
        built: Result<String, String>,
        wrote: &dyn Fn(&str) -> Option<String>,
    ) {
        match (built, row.is_empty()) {
            (Ok(text), rows_ok) => match wrote(&text) {
                Some(w) => self.wrong.push(w),
                None if !rows_ok => self.wrong.push(format!(
                    "builder writes `{spelled}`, the rows refuse it: {row:?}"
                )),
                None => self.both_accept += 1,
            },
            (Err(e), true) => self.wrong.push(format!(
                "the rows allow `{spelled}`, the builder refuses it: {e}"
            )),
            (Err(_), false) => self.both_refuse += 1,
        }
    }

    /// Judges one choice whose operands vary with it (tcgen05, wgmma, mbarrier): the test spells
    /// the instruction `line` itself, on registers a kernel for `target` declares (`%r`, `%rd`,
    /// `%f`, `%p`, `%rs`). The builder accepts the choice iff the validator accepts `line`; when
    /// it accepts, it writes `line`'s opcode, and its text draws no diagnostic at all (it matches
    /// a row as the manual writes it).
    fn judge_spelled(
        &mut self,
        target: Target,
        write: &dyn Fn(&mut FunctionBuilder) -> ptx_isa::Result<()>,
        line: &str,
    ) {
        let opcode = line.split([' ', ';']).next().unwrap_or_default();
        let text = format!(
            ".version 9.0\n.target {target}\n.address_size 64\n\n.visible .entry t()\n{{\n\
             \t.reg .pred %p<4>;\n\t.reg .b16 %rs<4>;\n\t.reg .b32 %r<1100>;\n\
             \t.reg .b64 %rd<8>;\n\t.reg .f32 %f<300>;\n\t{line}\n\tret;\n}}\n"
        );
        let row = errors(&text);
        let wrote = |built: &str| {
            let diags: Vec<String> = check(built, &Options::default())
                .into_iter()
                .map(|d| d.to_string())
                .collect();
            if !diags.is_empty() {
                Some(format!(
                    "the builder's `{opcode}` draws {diags:?}:\n{built}"
                ))
            } else if !built.contains(&format!("\t{opcode} "))
                && !built.contains(&format!("\t{opcode};"))
            {
                Some(format!(
                    "builder asked for `{opcode}` writes something else:\n{built}"
                ))
            } else {
                None
            }
        };
        self.record(line, &row, build_on(target, write), &wrote);
    }

    fn finish(self, what: &str) {
        eprintln!(
            "{what}: {} choices both accept, {} both refuse, {} disagree",
            self.both_accept,
            self.both_refuse,
            self.wrong.len()
        );
        assert!(
            self.wrong.is_empty(),
            "{what}: builder and rows disagree:\n{}",
            self.wrong.join("\n")
        );
        assert!(self.both_accept > 0 && self.both_refuse > 0, "{what}");
    }
}

const ROUNDINGS: [(Option<Rounding>, &str); 5] = [
    (None, ""),
    (Some(Rounding::Rn), ".rn"),
    (Some(Rounding::Rz), ".rz"),
    (Some(Rounding::Rm), ".rm"),
    (Some(Rounding::Rp), ".rp"),
];

/// Every `FloatMods` (5 roundings x .ftz x .sat) with its spelling.
fn float_mods() -> Vec<(FloatMods, String)> {
    let mut v = Vec::new();
    for (r, rs) in ROUNDINGS {
        for ftz in [false, true] {
            for sat in [false, true] {
                let m = FloatMods {
                    rounding: r,
                    ftz,
                    sat,
                };
                let s = format!(
                    "{rs}{}{}",
                    if ftz { ".ftz" } else { "" },
                    if sat { ".sat" } else { "" }
                );
                v.push((m, s));
            }
        }
    }
    v
}

/// add/sub (any register type) and mul/fma (floats) over every `FloatMods`.
fn arith<T: ty::RegType>(t: &mut Tally) {
    let ty = T::TYPE;
    type Bin<T> = fn(
        &mut FunctionBuilder,
        FloatMods,
        ptx_isa::Reg<T>,
        ptx_isa::Reg<T>,
    ) -> ptx_isa::Result<()>;
    let methods: [(&str, Bin<T>); 2] = [
        ("add", |k, m, d, a| k.add_mods(m, d, a, a)),
        ("sub", |k, m, d, a| k.sub_mods(m, d, a, a)),
    ];
    for (mn, f) in methods {
        let base = move |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<T>(), k.reg::<T>());
            f(k, FloatMods::NONE, d, a)
        };
        for (m, s) in float_mods() {
            let write = move |k: &mut FunctionBuilder| {
                let (d, a) = (k.reg::<T>(), k.reg::<T>());
                f(k, m, d, a)
            };
            t.judge(&base, &format!("{mn}{ty}"), &write, &format!("{mn}{s}{ty}"));
        }
    }
}

fn float_arith<T: ty::Float>(t: &mut Tally) {
    let ty = T::TYPE;
    for (m, s) in float_mods() {
        let base = |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<T>(), k.reg::<T>());
            k.mul_mods(FloatMods::NONE, d, a, a)
        };
        let write = |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<T>(), k.reg::<T>());
            k.mul_mods(m, d, a, a)
        };
        t.judge(&base, &format!("mul{ty}"), &write, &format!("mul{s}{ty}"));
        let base = |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<T>(), k.reg::<T>());
            k.fma_mods(FloatMods::RN, d, a, a, a)
        };
        let write = |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<T>(), k.reg::<T>());
            k.fma_mods(m, d, a, a, a)
        };
        t.judge(
            &base,
            &format!("fma.rn{ty}"),
            &write,
            &format!("fma{s}{ty}"),
        );
    }
}

/// div with every mode and .ftz, on f32 and f64 (the types `div_mode` takes).
fn div<T: ty::RegType>(t: &mut Tally) {
    let ty = T::TYPE;
    let modes = [
        (DivMode::Approx, ".approx"),
        (DivMode::Full, ".full"),
        (DivMode::Ieee(Rounding::Rn), ".rn"),
        (DivMode::Ieee(Rounding::Rz), ".rz"),
        (DivMode::Ieee(Rounding::Rm), ".rm"),
        (DivMode::Ieee(Rounding::Rp), ".rp"),
    ];
    for (mode, ms) in modes {
        for ftz in [false, true] {
            let base = |k: &mut FunctionBuilder| {
                let (d, a) = (k.reg::<T>(), k.reg::<T>());
                k.div_mode(DivMode::Ieee(Rounding::Rn), false, d, a, a)
            };
            let write = |k: &mut FunctionBuilder| {
                let (d, a) = (k.reg::<T>(), k.reg::<T>());
                k.div_mode(mode, ftz, d, a, a)
            };
            let f = if ftz { ".ftz" } else { "" };
            t.judge(
                &base,
                &format!("div.rn{ty}"),
                &write,
                &format!("div{ms}{f}{ty}"),
            );
        }
    }
}

const CMP: [(CmpOp, &str); 18] = [
    (CmpOp::Eq, "eq"),
    (CmpOp::Ne, "ne"),
    (CmpOp::Lt, "lt"),
    (CmpOp::Le, "le"),
    (CmpOp::Gt, "gt"),
    (CmpOp::Ge, "ge"),
    (CmpOp::Lo, "lo"),
    (CmpOp::Ls, "ls"),
    (CmpOp::Hi, "hi"),
    (CmpOp::Hs, "hs"),
    (CmpOp::Equ, "equ"),
    (CmpOp::Neu, "neu"),
    (CmpOp::Ltu, "ltu"),
    (CmpOp::Leu, "leu"),
    (CmpOp::Gtu, "gtu"),
    (CmpOp::Geu, "geu"),
    (CmpOp::Num, "num"),
    (CmpOp::Nan, "nan"),
];

/// setp with every comparison.
fn setp<T: ty::RegType>(t: &mut Tally) {
    let ty = T::TYPE;
    for (op, s) in CMP {
        let base = |k: &mut FunctionBuilder| {
            let (p, a) = (k.pred(), k.reg::<T>());
            k.setp(CmpOp::Eq, p, a, a)
        };
        let write = |k: &mut FunctionBuilder| {
            let (p, a) = (k.pred(), k.reg::<T>());
            k.setp(op, p, a, a)
        };
        t.judge(
            &base,
            &format!("setp.eq{ty}"),
            &write,
            &format!("setp.{s}{ty}"),
        );
    }
}

/// cvt with every explicit rounding, .ftz and .sat, from every register type `S`.
fn cvt<D: ty::RegType, S: ty::RegType>(t: &mut Tally) {
    let (dt, st) = (D::TYPE, S::TYPE);
    let roundings = [
        (CvtRounding::Rn, "rn"),
        (CvtRounding::Rz, "rz"),
        (CvtRounding::Rm, "rm"),
        (CvtRounding::Rp, "rp"),
        (CvtRounding::Rni, "rni"),
        (CvtRounding::Rzi, "rzi"),
        (CvtRounding::Rmi, "rmi"),
        (CvtRounding::Rpi, "rpi"),
    ];
    // The base: the conversion as `cvt` writes it, its opcode read back from its text.
    let base = |k: &mut FunctionBuilder| {
        let (d, a) = (k.reg::<D>(), k.reg::<S>());
        k.cvt(d, a)
    };
    let Ok(text) = build(&base) else { return };
    let Some(base_opcode) = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("\tcvt")
                .map(|r| r.split(' ').next().unwrap_or(""))
        })
        .map(|r| format!("cvt{r}"))
    else {
        panic!("no cvt in\n{text}");
    };
    for (r, rs) in roundings {
        for ftz in [false, true] {
            for sat in [false, true] {
                let m = CvtMods {
                    rounding: Some(r),
                    ftz,
                    sat,
                };
                let write = |k: &mut FunctionBuilder| {
                    let (d, a) = (k.reg::<D>(), k.reg::<S>());
                    k.cvt_mods(m, d, a)
                };
                let opcode = format!(
                    "cvt.{rs}{}{}{dt}{st}",
                    if ftz { ".ftz" } else { "" },
                    if sat { ".sat" } else { "" }
                );
                t.judge(&base, &base_opcode, &write, &opcode);
            }
        }
    }
}

/// `$f::<T>(&mut $t, args...)` for every register type `T` (after a fixed type `$d` where
/// given): a check generic over the register type, run on each.
macro_rules! each_type {
    ($f:ident, $t:ident $(, $d:ident)? $(; $($arg:expr),+)?) => {
        $f::<$($d,)? ty::U16>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::U32>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::U64>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::S16>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::S32>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::S64>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::B16>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::B32>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::B64>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::F32>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::F64>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::F16>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::F16x2>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::Bf16>(&mut $t $($(, $arg)+)?);
        $f::<$($d,)? ty::Bf16x2>(&mut $t $($(, $arg)+)?);
    };
}

/// A [`Tally`] of `$f::<T>(&mut t, target)` for every register type `T` on every target of
/// `$targets`, finished with `$what`.
macro_rules! tally_types_on {
    ($f:ident, $targets:expr, $what:expr) => {{
        let mut t = Tally::default();
        for target in $targets {
            each_type!($f, t; target);
        }
        t.finish($what);
    }};
}

#[test]
fn add_and_sub_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    each_type!(arith, t);
    t.finish("add/sub x FloatMods");
}

#[test]
fn mul_and_fma_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    float_arith::<ty::F32>(&mut t);
    float_arith::<ty::F64>(&mut t);
    float_arith::<ty::F16>(&mut t);
    float_arith::<ty::F16x2>(&mut t);
    float_arith::<ty::Bf16>(&mut t);
    float_arith::<ty::Bf16x2>(&mut t);
    t.finish("mul/fma x FloatMods");
}

#[test]
fn div_writes_exactly_what_its_rows_allow() {
    let mut t = Tally::default();
    div::<ty::F32>(&mut t);
    div::<ty::F64>(&mut t);
    t.finish("div x mode x .ftz");
}

/// `set.eq.D.T d, a, b` for a pair of register types: the builder writes it iff the row allows it.
fn set<D: ty::RegType, T: ty::RegType>(t: &mut Tally) {
    let (dt, st) = (D::TYPE, T::TYPE);
    let opcode = format!("set.eq{dt}{st}");
    let text = format!(
        ".version 9.0\n.target {TARGET}\n.address_size 64\n\n.visible .entry t()\n{{\n\
         \t.reg {dt} d;\n\t.reg {st} a;\n\t{opcode} d, a, a;\n\tret;\n}}\n"
    );
    let row = errors(&text);
    let wrote = |built: &str| {
        (!built.contains(&format!("\t{opcode} ")))
            .then(|| format!("builder asked for `{opcode}` writes something else:\n{built}"))
    };
    let write = |k: &mut FunctionBuilder| {
        let (d, a) = (k.reg::<D>(), k.reg::<T>());
        k.set(CmpOp::Eq, d, a, a)
    };
    t.record(&opcode, &row, build(&write), &wrote);
}

#[test]
fn set_writes_exactly_what_its_row_allows() {
    let mut t = Tally::default();
    each_type!(set_for, t);
    t.finish("set x destination and source types");
}

/// [`set`] with destination type `D` and every source type.
fn set_for<D: ty::RegType>(t: &mut Tally) {
    let mut all = std::mem::take(t);
    each_type!(set, all, D);
    *t = all;
}

#[test]
fn setp_writes_exactly_what_its_rows_allow() {
    let mut t = Tally::default();
    each_type!(setp, t);
    t.finish("setp x comparison");
}

#[test]
fn cvt_writes_exactly_what_its_row_allows() {
    let mut t = Tally::default();
    macro_rules! from {
        ($($d:ident),*) => {$( each_type!(cvt, t, $d); )*};
    }
    type U16 = ty::U16;
    type U32 = ty::U32;
    type U64 = ty::U64;
    type S16 = ty::S16;
    type S32 = ty::S32;
    type S64 = ty::S64;
    type F16 = ty::F16;
    type F32 = ty::F32;
    type F64 = ty::F64;
    type Bf16 = ty::Bf16;
    from!(U16, U32, U64, S16, S32, S64, F16, F32, F64, Bf16);
    t.finish("cvt x rounding x .ftz x .sat");
}

/// PTX ISA 9.7.1.1: `add.sat` is `.s32` only. The builder, the validator and ptxas agree, and the
/// builder's refusal cites the section.
#[test]
fn add_sat_u32_is_refused_everywhere() {
    let e = build(&|k: &mut FunctionBuilder| {
        let d = k.reg::<ty::U32>();
        k.add_mods(FloatMods::NONE.sat(), d, d, d)
    })
    .unwrap_err();
    assert!(e.contains("InvalidModifier"), "{e}");
    assert!(e.contains("9.7.1.1"), "{e}");
    let base = build(&|k: &mut FunctionBuilder| {
        let d = k.reg::<ty::U32>();
        k.add(d, d, d)
    })
    .unwrap();
    let text = rewrite(&base, "add.u32", "add.sat.u32");
    let row = errors(&text);
    assert!(row.iter().any(|e| e.contains("9.7.1.1")), "{row:?}");
    if let Some(p) = ptx_isa::ptxas::for_tests().unwrap() {
        assert!(
            !p.assemble(&text, TARGET, &[]).unwrap().ok,
            "ptxas took\n{text}"
        );
        let ok = rewrite(&base, "add.u32", "add.s32");
        let s32 = ok.replace("add.s32", "add.sat.s32");
        assert!(errors(&s32).is_empty());
        assert!(
            p.assemble(&s32, TARGET, &[]).unwrap().ok,
            "ptxas refused\n{s32}"
        );
    }
}

/// ld/st over every order, state space and cache operator, on every register type.
fn ldst<T: ty::RegType>(t: &mut Tally) {
    let ty = T::TYPE;
    let mem = if [
        ScalarType::F16,
        ScalarType::F16x2,
        ScalarType::Bf16,
        ScalarType::Bf16x2,
    ]
    .contains(&ty)
    {
        ty.bits_type()
    } else {
        ty
    };
    let orders = [
        (MemOrder::Weak, ""),
        (MemOrder::Volatile, ".volatile"),
        (MemOrder::Relaxed(Scope::Gpu), ".relaxed.gpu"),
        (MemOrder::Acquire(Scope::Cta), ".acquire.cta"),
        (MemOrder::Release(Scope::Sys), ".release.sys"),
    ];
    let caches = [
        (None, ""),
        (Some(CacheOp::Ca), ".ca"),
        (Some(CacheOp::Cg), ".cg"),
        (Some(CacheOp::Cs), ".cs"),
        (Some(CacheOp::Lu), ".lu"),
        (Some(CacheOp::Cv), ".cv"),
        (Some(CacheOp::Wb), ".wb"),
        (Some(CacheOp::Wt), ".wt"),
    ];
    macro_rules! space {
        ($s:ty, $name:expr) => {
            for (order, os) in orders {
                for (cache, cs) in caches {
                    for nc in [false, true] {
                        let n = if nc { ".nc" } else { "" };
                        let base = |k: &mut FunctionBuilder| {
                            let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                            k.ld(d, Addr::<$s>::reg(a))
                        };
                        let write = |k: &mut FunctionBuilder| {
                            let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                            let o = LdOpts {
                                order,
                                cache,
                                nc,
                                ..LdOpts::default()
                            };
                            k.ld_with(&o, &[d], Addr::<$s>::reg(a))
                        };
                        t.judge(
                            &base,
                            &format!("ld{}{mem}", $name),
                            &write,
                            &format!("ld{os}{}{cs}{n}{mem}", $name),
                        );
                    }
                    let base = |k: &mut FunctionBuilder| {
                        let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                        k.st(Addr::<$s>::reg(a), d)
                    };
                    let write = |k: &mut FunctionBuilder| {
                        let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                        let o = StOpts {
                            order,
                            cache,
                            ..StOpts::default()
                        };
                        k.st_with(&o, Addr::<$s>::reg(a), &[d.into()])
                    };
                    t.judge(
                        &base,
                        &format!("st{}{mem}", $name),
                        &write,
                        &format!("st{os}{}{cs}{mem}", $name),
                    );
                }
            }
        };
    }
    space!(spaces::Global, ".global");
    space!(spaces::Shared, ".shared");
    space!(spaces::Generic, "");
}

#[test]
fn ld_and_st_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    each_type!(ldst, t);
    t.finish("ld/st x order x space x cache x .nc");
}

/// atom/red over every semantics, scope and operation, on every register type (global).
fn atomics<T: ty::RegType>(t: &mut Tally) {
    let sems = [
        (AtomSem::Default, ""),
        (AtomSem::Relaxed, ".relaxed"),
        (AtomSem::Acquire, ".acquire"),
        (AtomSem::Release, ".release"),
        (AtomSem::AcqRel, ".acq_rel"),
    ];
    let scopes = [
        (None, ""),
        (Some(Scope::Cta), ".cta"),
        (Some(Scope::Cluster), ".cluster"),
        (Some(Scope::Gpu), ".gpu"),
        (Some(Scope::Sys), ".sys"),
    ];
    let ops = [
        (AtomOp::And, "and"),
        (AtomOp::Or, "or"),
        (AtomOp::Xor, "xor"),
        (AtomOp::Exch, "exch"),
        (AtomOp::Add, "add"),
        (AtomOp::Inc, "inc"),
        (AtomOp::Dec, "dec"),
        (AtomOp::Min, "min"),
        (AtomOp::Max, "max"),
    ];
    for (op, os) in ops {
        // Bitwise operations and exch are written with the bit type.
        let ty = if matches!(op, AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch) {
            T::TYPE.bits_type()
        } else {
            T::TYPE
        };
        // PTX ISA 9.7.13.5: the half-precision adds are written `.add.noftz`.
        let half = [
            ScalarType::F16,
            ScalarType::F16x2,
            ScalarType::Bf16,
            ScalarType::Bf16x2,
        ];
        let os = if op == AtomOp::Add && half.contains(&ty) {
            "add.noftz"
        } else {
            os
        };
        for (sem, ss) in sems {
            for (scope, cs) in scopes {
                let base = |k: &mut FunctionBuilder| {
                    let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                    k.atom(op, d, Addr::<spaces::Global>::reg(a), d)
                };
                let write = |k: &mut FunctionBuilder| {
                    let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                    k.atom_with(sem, scope, op, d, Addr::<spaces::Global>::reg(a), d)
                };
                t.judge(
                    &base,
                    &format!("atom.global.{os}{ty}"),
                    &write,
                    &format!("atom{ss}{cs}.global.{os}{ty}"),
                );
                let base = |k: &mut FunctionBuilder| {
                    let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                    k.atom(op, d, Addr::<spaces::Global>::reg(a), d)?;
                    k.red(op, Addr::<spaces::Global>::reg(a), d)
                };
                let write = |k: &mut FunctionBuilder| {
                    let (d, a) = (k.reg::<T>(), k.reg::<ty::U64>());
                    k.atom(op, d, Addr::<spaces::Global>::reg(a), d)?;
                    k.red_with(sem, scope, op, Addr::<spaces::Global>::reg(a), d)
                };
                t.judge(
                    &base,
                    &format!("red.global.{os}{ty}"),
                    &write,
                    &format!("red{ss}{cs}.global.{os}{ty}"),
                );
            }
        }
    }
}

#[test]
fn atom_and_red_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    each_type!(atomics, t);
    t.finish("atom/red x semantics x scope x operation");
}

/// mbarrier.expect_tx/complete_tx over every scope (PTX ISA 9.7.13.15.11/12: `.cta` or
/// `.cluster` with `.relaxed`).
#[test]
fn mbarrier_tx_writes_exactly_what_its_rows_allow() {
    let mut t = Tally::default();
    for complete in [false, true] {
        let mn = if complete { "complete_tx" } else { "expect_tx" };
        type Tx = fn(
            &mut FunctionBuilder,
            Option<Scope>,
            Addr<spaces::Shared>,
            ptx_isa::Reg<ty::U32>,
        ) -> ptx_isa::Result<()>;
        let f: Tx = if complete {
            |k, s, a, n| k.mbarrier_complete_tx(s, a, n)
        } else {
            |k, s, a, n| k.mbarrier_expect_tx(s, a, n)
        };
        for (scope, s) in SCOPES {
            let base = |k: &mut FunctionBuilder| {
                let (a, n) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                f(k, None, Addr::reg32(a), n)
            };
            let write = |k: &mut FunctionBuilder| {
                let (a, n) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                f(k, Some(scope), Addr::reg32(a), n)
            };
            t.judge(
                &base,
                &format!("mbarrier.{mn}.shared.b64"),
                &write,
                &format!("mbarrier.{mn}.relaxed.{s}.shared.b64"),
            );
        }
    }
    t.finish("mbarrier.expect_tx/complete_tx x scope");
}

/// The feature rows an instruction implies are one decision (`forms::features::implied`), read by
/// the builder and the validator: what the builder refuses on sm_80 for a feature (a `.cluster`
/// scope, a `.shared::cluster` window, `.L2::cache_hint`), the validator refuses in the sm_90a
/// text checked as sm_80, and neither refuses it on sm_90a.
#[test]
fn builder_and_validator_gate_the_same_feature_rows() {
    type Write = fn(&mut FunctionBuilder) -> ptx_isa::Result<()>;
    let cases: [(&str, Write); 4] = [
        ("ld.relaxed.cluster", |k| {
            let (d, a) = (k.reg::<ty::U32>(), k.reg::<ty::U64>());
            let o = LdOpts {
                order: MemOrder::Relaxed(Scope::Cluster),
                ..LdOpts::default()
            };
            k.ld_with(&o, &[d], Addr::<spaces::Global>::reg(a))
        }),
        ("ld.shared::cluster", |k| {
            let (d, a) = (k.reg::<ty::U32>(), k.reg::<ty::U64>());
            k.ld(d, Addr::<spaces::SharedCluster>::reg(a))
        }),
        ("atom.relaxed.cluster", |k| {
            let (d, a) = (k.reg::<ty::U32>(), k.reg::<ty::U64>());
            let g = Addr::<spaces::Global>::reg(a);
            k.atom_with(AtomSem::Relaxed, Some(Scope::Cluster), AtomOp::Add, d, g, d)
        }),
        ("mbarrier.expect_tx.relaxed.cluster", |k| {
            let (a, n) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
            k.mbarrier_expect_tx(Some(Scope::Cluster), Addr::<spaces::Shared>::reg32(a), n)
        }),
    ];
    for (what, f) in cases {
        let text = build(&f).unwrap_or_else(|e| panic!("{what} on sm_90a: {e}"));
        assert!(errors(&text).is_empty(), "{what}: {:?}", errors(&text));
        let m = Module::new(Target::Sm80);
        let mut k = m.entry("t");
        let e = f(&mut k).expect_err(what);
        assert_eq!(
            e.kind,
            ptx_isa::ErrorKind::UnsupportedTarget,
            "{what}: {e:?}"
        );
        let opts = Options {
            target: Some(Target::Sm80),
        };
        let on_80: Vec<_> = check(&text, &opts)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(
            on_80
                .iter()
                .any(|d| d.kind == ptx_isa::ErrorKind::UnsupportedTarget),
            "{what}: the validator on sm_80 says {on_80:?}"
        );
    }
}

/// `{%r<from>, ...}`: `n` registers of the class `prefix`, numbered from `from`.
fn regs(prefix: &str, from: usize, n: usize) -> String {
    let v: Vec<String> = (from..from + n).map(|k| format!("%{prefix}{k}")).collect();
    format!("{{{}}}", v.join(", "))
}

/// mbarrier.arrive over every option (PTX ISA 9.7.13.15.13) and try_wait/test_wait over every
/// scope, wait operand and hint (9.7.13.15.16), on both windows.
#[test]
fn mbarrier_arrive_and_wait_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    let scopes = [
        (None, ""),
        (Some(Scope::Cta), "cta"),
        (Some(Scope::Cluster), "cluster"),
        (Some(Scope::Gpu), "gpu"),
        (Some(Scope::Sys), "sys"),
    ];
    for (release, rs) in scopes {
        for count in [None, Some(1u32)] {
            for no_complete in [false, true] {
                for tx in [None, Some(64u32)] {
                    for cluster in [false, true] {
                        let o = ArriveOpts {
                            release,
                            count: count.map(Into::into),
                            no_complete,
                            expect_tx: tx.map(Into::into),
                        };
                        let write = |k: &mut FunctionBuilder| {
                            let (a, st) = (k.reg::<ty::U32>(), k.reg::<ty::B64>());
                            if cluster {
                                let a = Addr::<spaces::SharedCluster>::reg32(a);
                                k.mbarrier_arrive_with(&o, ptx_isa::Sinkable::Sink, a)
                            } else {
                                k.mbarrier_arrive_with(
                                    &o,
                                    st.into(),
                                    Addr::<spaces::Shared>::reg32(a),
                                )
                            }
                        };
                        let mut op = String::from("mbarrier.arrive");
                        if no_complete {
                            op.push_str(".noComplete");
                        }
                        if tx.is_some() {
                            op.push_str(".expect_tx");
                        }
                        if release.is_some() {
                            op.push_str(&format!(".release.{rs}"));
                        }
                        let (space, state) = if cluster {
                            ("shared::cluster", "_")
                        } else {
                            ("shared", "%rd1")
                        };
                        let mut line = format!("{op}.{space}.b64 {state}, [%r1]");
                        if let Some(c) = count {
                            line.push_str(&format!(", {c}"));
                        }
                        if let Some(x) = tx {
                            line.push_str(&format!(", {x}"));
                        }
                        line.push(';');
                        t.judge_spelled(TARGET, &write, &line);
                    }
                }
            }
        }
    }
    for try_wait in [false, true] {
        for (acquire, s) in scopes {
            for parity in [false, true] {
                for hint in [None, Some(1000u32)] {
                    for cluster in [false, true] {
                        let write = |k: &mut FunctionBuilder| {
                            let (a, st, p) = (k.reg::<ty::U32>(), k.reg::<ty::B64>(), k.pred());
                            let on = if parity {
                                WaitOn::Parity(0u32.into())
                            } else {
                                WaitOn::State(st)
                            };
                            let h = hint.map(Into::into);
                            macro_rules! wait {
                                ($a:expr) => {
                                    if try_wait {
                                        k.mbarrier_try_wait(acquire, p, $a, on, h)
                                    } else if h.is_some() {
                                        // test_wait takes no hint: nothing for the builder to write.
                                        Err(ptx_isa::Error::new(ptx_isa::ErrorKind::OperandCount, "no hint"))
                                    } else {
                                        k.mbarrier_test_wait(acquire, p, $a, on)
                                    }
                                };
                            }
                            if cluster {
                                wait!(Addr::<spaces::SharedCluster>::reg32(a))
                            } else {
                                wait!(Addr::<spaces::Shared>::reg32(a))
                            }
                        };
                        let mut op = String::from(if try_wait {
                            "mbarrier.try_wait"
                        } else {
                            "mbarrier.test_wait"
                        });
                        if parity {
                            op.push_str(".parity");
                        }
                        if acquire.is_some() {
                            op.push_str(&format!(".acquire.{s}"));
                        }
                        let space = if cluster { "shared::cluster" } else { "shared" };
                        let on = if parity { "0" } else { "%rd1" };
                        let mut line = format!("{op}.{space}.b64 %p1, [%r1], {on}");
                        if let Some(h) = hint {
                            line.push_str(&format!(", {h}"));
                        }
                        line.push(';');
                        t.judge_spelled(TARGET, &write, &line);
                    }
                }
            }
        }
    }
    t.finish("mbarrier.arrive x options x window, try_wait/test_wait x scope x operand x hint");
}

const TC: Target = Target::Sm100a;

/// The tcgen05 methods over every group, shape, count, packing, format and kind (PTX ISA 9.7.16).
#[test]
fn tcgen05_writes_exactly_what_its_rows_allow() {
    use ptx_isa::RegRef;
    let mut t = Tally::default();
    let groups = [
        (CtaGroup::One, "cta_group::1"),
        (CtaGroup::Two, "cta_group::2"),
    ];
    for (g, gs) in groups {
        for cluster in [false, true] {
            let write = |k: &mut FunctionBuilder| {
                let a = k.reg::<ty::U32>();
                if cluster {
                    k.tcgen05_alloc(g, Addr::<spaces::SharedCluster>::reg32(a), 32u32)
                } else {
                    k.tcgen05_alloc(g, Addr::<spaces::Shared>::reg32(a), 32u32)
                }
            };
            let space = if cluster {
                "shared::cluster"
            } else {
                "shared::cta"
            };
            t.judge_spelled(
                TC,
                &write,
                &format!("tcgen05.alloc.{gs}.sync.aligned.{space}.b32 [%r1], 32;"),
            );
        }
        let write = |k: &mut FunctionBuilder| {
            let a = k.reg::<ty::U32>();
            k.tcgen05_dealloc(g, a, 32u32)
        };
        t.judge_spelled(
            TC,
            &write,
            &format!("tcgen05.dealloc.{gs}.sync.aligned.b32 %r1, 32;"),
        );
        let write = |k: &mut FunctionBuilder| k.tcgen05_relinquish_alloc_permit(g);
        t.judge_spelled(
            TC,
            &write,
            &format!("tcgen05.relinquish_alloc_permit.{gs}.sync.aligned;"),
        );
        let write = |k: &mut FunctionBuilder| {
            let a = k.reg::<ty::U32>();
            k.tcgen05_shift(g, a)
        };
        t.judge_spelled(TC, &write, &format!("tcgen05.shift.{gs}.down [%r1];"));
        let shapes = [
            (TmemCpShape::S128x256b, "128x256b"),
            (TmemCpShape::S4x256b, "4x256b"),
            (TmemCpShape::S128x128b, "128x128b"),
            (TmemCpShape::S64x128bWarpx2_02_13, "64x128b.warpx2::02_13"),
            (TmemCpShape::S64x128bWarpx2_01_23, "64x128b.warpx2::01_23"),
            (TmemCpShape::S32x128bWarpx4, "32x128b.warpx4"),
        ];
        let formats = [
            (None, ""),
            (Some(TmemCpDecompress::B6x16P32), ".b8x16.b6x16_p32"),
            (Some(TmemCpDecompress::B4x16P64), ".b8x16.b4x16_p64"),
        ];
        for (shape, ss) in shapes {
            for (fmt, fs) in formats {
                let write = |k: &mut FunctionBuilder| {
                    let (a, d) = (k.reg::<ty::U32>(), k.reg::<ty::B64>());
                    k.tcgen05_cp(g, shape, fmt, a, d)
                };
                t.judge_spelled(
                    TC,
                    &write,
                    &format!("tcgen05.cp.{gs}.{ss}{fs} [%r1], %rd1;"),
                );
            }
        }
        for cluster in [false, true] {
            for multicast in [false, true] {
                let write = |k: &mut FunctionBuilder| {
                    let a = k.reg::<ty::U32>();
                    let m = multicast.then(|| k.reg::<ty::U16>());
                    if cluster {
                        k.tcgen05_commit(g, Addr::<spaces::SharedCluster>::reg32(a), m)
                    } else {
                        k.tcgen05_commit(g, Addr::<spaces::Shared>::reg32(a), m)
                    }
                };
                let mut op = format!("tcgen05.commit.{gs}.mbarrier::arrive::one");
                if cluster {
                    op.push_str(".shared::cluster");
                }
                if multicast {
                    op.push_str(".multicast::cluster");
                }
                let mask = if multicast { ", %rs1" } else { "" };
                t.judge_spelled(TC, &write, &format!("{op}.b64 [%r1]{mask};"));
            }
        }
        let kinds = [
            (MmaKindTc::F16, "kind::f16"),
            (MmaKindTc::Tf32, "kind::tf32"),
            (MmaKindTc::F8f6f4, "kind::f8f6f4"),
            (MmaKindTc::I8, "kind::i8"),
        ];
        for (kind, ks) in kinds {
            for ws in [false, true] {
                for tmem_a in [false, true] {
                    for mask in [None, Some(4usize), Some(8)] {
                        let write = |k: &mut FunctionBuilder| {
                            let (d, at, b, p) = (
                                k.reg::<ty::U32>(),
                                k.reg::<ty::U32>(),
                                k.reg::<ty::B64>(),
                                k.pred(),
                            );
                            let ad = k.reg::<ty::B64>();
                            let m: Vec<RegRef> = (0..mask.unwrap_or(0))
                                .map(|_| k.reg::<ty::B32>().as_ref())
                                .collect();
                            let a = if tmem_a { TcA::Tmem(at) } else { TcA::Desc(ad) };
                            k.tcgen05_mma(
                                g,
                                kind,
                                ws,
                                d,
                                a,
                                b,
                                0x0810_0010u32,
                                mask.map(|_| &m[..]),
                                p,
                            )
                        };
                        let ws_s = if ws { ".ws" } else { "" };
                        let a = if tmem_a { "[%r2]" } else { "%rd2" };
                        let m = mask.map_or(String::new(), |n| format!(", {}", regs("r", 10, n)));
                        t.judge_spelled(
                            TC,
                            &write,
                            &format!(
                                "tcgen05.mma{ws_s}.{gs}.{ks} [%r1], {a}, %rd1, 135335952{m}, %p1;"
                            ),
                        );
                    }
                }
            }
        }
        let scaled = [
            (
                BlockScaleKind::Mxf8f6f4,
                "kind::mxf8f6f4.block_scale.scale_vec::1X",
            ),
            (BlockScaleKind::Mxf4, "kind::mxf4.block_scale.scale_vec::2X"),
            (
                BlockScaleKind::Mxf4nvf4X2,
                "kind::mxf4nvf4.block_scale.scale_vec::2X",
            ),
            (
                BlockScaleKind::Mxf4nvf4X4,
                "kind::mxf4nvf4.block_scale.scale_vec::4X",
            ),
        ];
        for (kind, ks) in scaled {
            let write = |k: &mut FunctionBuilder| {
                // Tensor memory: d and the two scale vectors; descriptors: a and b.
                let [d, sa, sb] = [(); 3].map(|_| k.reg::<ty::U32>());
                let [a, b] = [(); 2].map(|_| k.reg::<ty::B64>());
                let p = k.pred();
                k.tcgen05_mma_block_scale(g, kind, d, TcA::Desc(a), b, 0x0810_0010u32, sa, sb, p)
            };
            t.judge_spelled(
                TC,
                &write,
                &format!("tcgen05.mma.{gs}.{ks} [%r1], %rd1, %rd2, 135335952, [%r2], [%r3], %p1;"),
            );
        }
    }
    // ld/st: every shape, count (legal and not) and packing.
    for shape in TmemShape::ALL {
        for num in [1u32, 2, 3, 4, 8, 16, 32, 64, 128, 256] {
            for pack in [false, true] {
                let n = shape.registers(num);
                let half = (shape == TmemShape::S16x32bx2).then_some(16u32);
                let write_ld = |k: &mut FunctionBuilder| {
                    let a = k.reg::<ty::U32>();
                    let r: Vec<RegRef> = (0..n).map(|_| k.reg::<ty::B32>().as_ref()).collect();
                    k.tcgen05_ld(shape, num, pack, &r, a, half)
                };
                let write_st = |k: &mut FunctionBuilder| {
                    let a = k.reg::<ty::U32>();
                    let r: Vec<RegRef> = (0..n).map(|_| k.reg::<ty::B32>().as_ref()).collect();
                    k.tcgen05_st(shape, num, pack, a, half, &r)
                };
                let sh = shape.name();
                let off = half.map_or(String::new(), |h| format!(", {h}"));
                let v = regs("r", 2, n);
                let p = if pack { ".pack::16b" } else { "" };
                let u = if pack { ".unpack::16b" } else { "" };
                t.judge_spelled(
                    TC,
                    &write_ld,
                    &format!("tcgen05.ld.sync.aligned.{sh}.x{num}{p}.b32 {v}, [%r1]{off};"),
                );
                t.judge_spelled(
                    TC,
                    &write_st,
                    &format!("tcgen05.st.sync.aligned.{sh}.x{num}{u}.b32 [%r1]{off}, {v};"),
                );
            }
        }
    }
    t.finish("tcgen05 x group x shape x count x format x kind");
}

/// wgmma.mma_async over every type combination, N (legal and not), A in registers or shared
/// memory, and the immediates (PTX ISA 9.7.15.5).
#[test]
fn wgmma_writes_exactly_what_its_rows_allow() {
    use ScalarType::*;
    use ptx_isa::RegRef;
    let mut t = Tally::default();
    let types = [
        (WgmmaTypes::Half { d: F32, ab: F16 }, "f32.f16.f16"),
        (WgmmaTypes::Half { d: F32, ab: Bf16 }, "f32.bf16.bf16"),
        (WgmmaTypes::Half { d: F16, ab: F16 }, "f16.f16.f16"),
        (WgmmaTypes::Half { d: F16, ab: Bf16 }, "f16.bf16.bf16"),
        (WgmmaTypes::Tf32, "f32.tf32.tf32"),
        (
            WgmmaTypes::F8 {
                d: F32,
                a: E4m3,
                b: E5m2,
            },
            "f32.e4m3.e5m2",
        ),
        (
            WgmmaTypes::F8 {
                d: F16,
                a: E5m2,
                b: E5m2,
            },
            "f16.e5m2.e5m2",
        ),
        (
            WgmmaTypes::I8 {
                a: S8,
                b: U8,
                satfinite: false,
            },
            "s32.s8.u8",
        ),
        (
            WgmmaTypes::I8 {
                a: U8,
                b: U8,
                satfinite: true,
            },
            "satfinite.s32.u8.u8",
        ),
    ];
    for (types, ts) in types {
        for n in [8u32, 16, 24, 40, 48, 136, 256, 264] {
            for a_regs in [false, true] {
                let half = matches!(types, WgmmaTypes::Half { .. });
                let int = matches!(types, WgmmaTypes::I8 { .. });
                for (negate, transpose) in [(false, false), (true, false), (false, true)] {
                    // What has no spelling: imm-scale on integers, transposes on other than
                    // f16/bf16 (PTX ISA 9.7.15.5.2), imm-trans-a with A in registers.
                    if negate && int || transpose && !half {
                        continue;
                    }
                    let w = Wgmma { n, types };
                    let acc = w.accumulator_registers();
                    let f32_acc = w.d_type() == F32;
                    let write = |k: &mut FunctionBuilder| {
                        let class = if f32_acc {
                            RegClass::F32
                        } else {
                            RegClass::B32
                        };
                        let d = k.regs_of(class, acc);
                        let ar: Vec<RegRef> = (0..4).map(|_| k.reg::<ty::B32>().as_ref()).collect();
                        let (ad, b) = (k.reg::<ty::B64>(), k.reg::<ty::B64>());
                        let a = if a_regs {
                            WgmmaA::Regs(&ar)
                        } else {
                            WgmmaA::Desc(ad)
                        };
                        let imm = WgmmaImm {
                            negate_a: negate,
                            negate_b: negate,
                            transpose_a: transpose && !a_regs,
                            transpose_b: transpose,
                        };
                        k.wgmma_mma_async(w, &d, a, b, ScaleD::Const(true), imm)
                    };
                    let d = if f32_acc {
                        regs("f", 1, acc)
                    } else {
                        regs("r", 20, acc)
                    };
                    let a = if a_regs {
                        regs("r", 1, 4)
                    } else {
                        "%rd1".to_string()
                    };
                    let sc = if negate { "-1" } else { "1" };
                    let mut rest = String::new();
                    if !int {
                        rest.push_str(&format!(", {sc}, {sc}"));
                    }
                    let tr = i32::from(transpose);
                    if half && !a_regs {
                        rest.push_str(&format!(", {tr}"));
                    }
                    if half {
                        rest.push_str(&format!(", {tr}"));
                    }
                    let (mods, tys) = match ts.strip_prefix("satfinite.") {
                        Some(t) => (".satfinite", t),
                        None => ("", ts),
                    };
                    let line = format!(
                        "wgmma.mma_async.sync.aligned.m64n{n}k{}{mods}.{tys} {d}, {a}, %rd2, 1{rest};",
                        w.k()
                    );
                    t.judge_spelled(TARGET, &write, &line);
                }
            }
        }
    }
    t.finish("wgmma.mma_async x types x N x A x immediates");
}

#[path = "builder_rows/warp.rs"]
mod warp;

#[path = "builder_rows/matrix.rs"]
mod matrix;

#[path = "builder_rows/cluster.rs"]
mod cluster;

#[path = "builder_rows/bulk.rs"]
mod bulk;
