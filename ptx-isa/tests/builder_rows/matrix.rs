//! The matrix methods choice by choice: `ldmatrix` (PTX ISA 9.7.14.5.15) and `stmatrix`
//! (9.7.14.5.16) over every count, `.trans`, shape, register type and register count;
//! `movmatrix` (9.7.14.5.17) over register types; `mma.sync`
//! (9.7.14.5.14) over every kind and type pair the builder can be asked for.

use super::warp::spelled_reg;
use super::*;
use ptx_isa::RegRef;

const COUNTS: [(MatrixCount, usize); 3] = [
    (MatrixCount::X1, 1),
    (MatrixCount::X2, 2),
    (MatrixCount::X4, 4),
];

/// `{%r<from>, ...}` in `T`'s registers (`n` of them).
fn vec_of<T: ty::RegType>(from: usize, n: usize) -> Option<String> {
    let v: Option<Vec<String>> = (from..from + n).map(spelled_reg::<T>).collect();
    Some(format!("{{{}}}", v?.join(", ")))
}

/// ldmatrix/stmatrix for registers of type `T` on `target`: every count and `.trans`, with the
/// count of registers the count needs and with one too many.
fn moves<T: ty::RegType>(t: &mut Tally, target: Target) {
    for (n, k) in COUNTS {
        for extra in [0, 1] {
            let regs = k + extra;
            let Some(v) = vec_of::<T>(1, regs) else {
                return;
            };
            let b8 = 2 * k + extra;
            let Some(v8) = vec_of::<T>(1, b8) else {
                return;
            };
            let ns = format!("x{k}");
            for trans in [false, true] {
                let tr = if trans { ".trans" } else { "" };
                let write = |b: &mut FunctionBuilder| {
                    let d: Vec<_> = (0..regs).map(|_| b.reg::<T>()).collect();
                    let a = Addr::<spaces::Shared>::reg32(b.reg::<ty::U32>());
                    b.ldmatrix(n, trans, &d, a)
                };
                let line = format!("ldmatrix.sync.aligned.m8n8.{ns}{tr}.shared.b16 {v}, [%r900];");
                t.judge_spelled(target, &write, &line);
                let write = |b: &mut FunctionBuilder| {
                    let d: Vec<_> = (0..regs).map(|_| b.reg::<T>()).collect();
                    let a = Addr::<spaces::Shared>::reg32(b.reg::<ty::U32>());
                    b.stmatrix(n, trans, a, &d)
                };
                let line = format!("stmatrix.sync.aligned.m8n8.{ns}{tr}.shared.b16 [%r900], {v};");
                t.judge_spelled(target, &write, &line);
            }
            let write = |b: &mut FunctionBuilder| {
                let d: Vec<_> = (0..b8).map(|_| b.reg::<T>()).collect();
                let a = Addr::<spaces::Shared>::reg32(b.reg::<ty::U32>());
                b.ldmatrix_b8(n, &d, a)
            };
            let line = format!("ldmatrix.sync.aligned.m16n16.{ns}.trans.shared.b8 {v8}, [%r900];");
            t.judge_spelled(target, &write, &line);
            let write = |b: &mut FunctionBuilder| {
                let d: Vec<_> = (0..regs).map(|_| b.reg::<T>()).collect();
                let a = Addr::<spaces::Shared>::reg32(b.reg::<ty::U32>());
                b.stmatrix_b8(n, a, &d)
            };
            let line = format!("stmatrix.sync.aligned.m16n8.{ns}.trans.shared.b8 [%r900], {v};");
            t.judge_spelled(target, &write, &line);
        }
    }
}

#[test]
fn ldmatrix_and_stmatrix_write_exactly_what_their_rows_allow() {
    tally_types_on!(
        moves,
        TARGETS,
        "ldmatrix/stmatrix x shape x count x .trans x register type x register count"
    );
}

/// `movmatrix` (PTX ISA 9.7.14.5.17) on every register type the builder may be handed and on
/// targets from sm_80 to sm_120a: the builder writes what the validator accepts, and refuses
/// what it refuses (registers that are not 32 bits wide).
#[test]
fn movmatrix_writes_exactly_what_its_row_allows() {
    fn one<T: ty::RegType>(t: &mut Tally, target: Target) {
        let (Some(d), Some(a)) = (spelled_reg::<T>(1), spelled_reg::<T>(2)) else {
            return;
        };
        let write = |b: &mut FunctionBuilder| {
            let (d, a) = (b.reg::<T>(), b.reg::<T>());
            b.movmatrix(d, a)
        };
        t.judge_spelled(
            target,
            &write,
            &format!("movmatrix.sync.aligned.m8n8.trans.b16 {d}, {a};"),
        );
    }
    tally_types_on!(one, TARGETS, "movmatrix x register type x target");
}

#[test]
fn mma_sync_writes_exactly_what_its_rows_allow() {
    use ScalarType::*;
    let mut t = Tally::default();
    let mut kinds = vec![MmaKind::F16F16, MmaKind::Tf32];
    for ab in [F16, Bf16, F32, Tf32, E4m3] {
        kinds.push(MmaKind::F16F32 { ab });
    }
    let small = [E4m3, E5m2, S8, U8, F16];
    for a in small {
        for b in small {
            kinds.push(MmaKind::F8 { a, b });
            for satfinite in [false, true] {
                kinds.push(MmaKind::I8 { a, b, satfinite });
            }
        }
    }
    for target in TARGETS {
        for &kind in &kinds {
            let (shape, dt, at, bt, sat) = match kind {
                MmaKind::F16F32 { ab } => ("m16n8k16", F32, ab, ab, false),
                MmaKind::F16F16 => ("m16n8k16", F16, F16, F16, false),
                MmaKind::Tf32 => ("m16n8k8", F32, Tf32, Tf32, false),
                MmaKind::F8 { a, b } => ("m16n8k32", F32, a, b, false),
                MmaKind::I8 { a, b, satfinite } => ("m16n8k32", S32, a, b, satfinite),
            };
            let (acc, acc_f32) = match dt {
                F16 => (2, false),
                F32 => (4, true),
                _ => (4, false),
            };
            let write = |k: &mut FunctionBuilder| {
                let acc_regs = |k: &mut FunctionBuilder| -> Vec<RegRef> {
                    (0..acc)
                        .map(|_| {
                            if acc_f32 {
                                k.reg::<ty::F32>().as_ref()
                            } else {
                                k.reg::<ty::B32>().as_ref()
                            }
                        })
                        .collect()
                };
                let b32 = |k: &mut FunctionBuilder, n: usize| -> Vec<RegRef> {
                    (0..n).map(|_| k.reg::<ty::B32>().as_ref()).collect()
                };
                let (d, c) = (acc_regs(k), acc_regs(k));
                let (a, b) = (b32(k, 4), b32(k, 2));
                k.mma_sync(kind, &d, &a, &b, &c)
            };
            let acc_reg = if acc_f32 { "f" } else { "r" };
            let (d, c) = (regs(acc_reg, 1, acc), regs(acc_reg, 11, acc));
            let (a, b) = (regs("r", 21, 4), regs("r", 31, 2));
            let sat = if sat { ".satfinite" } else { "" };
            let (dt, at, bt) = (dt.name(), at.name(), bt.name());
            let line = format!(
                "mma.sync.aligned.{shape}.row.col{sat}.{dt}.{at}.{bt}.{dt} {d}, {a}, {b}, {c};"
            );
            t.judge_spelled(target, &write, &line);
        }
    }
    t.finish("mma.sync x kind x A/B types x .satfinite x target");
}
