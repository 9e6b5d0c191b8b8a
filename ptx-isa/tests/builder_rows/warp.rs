//! The warp methods choice by choice: `shfl.sync` (PTX ISA 9.7.9.6) over every mode, register
//! type and optional predicate; `vote.sync` (9.7.13.8) over every mode and the ballot;
//! `match.sync` (9.7.13.9) over every type; `redux.sync` (9.7.13.11) over every operation and
//! type; `elect.sync` (9.7.13.14) with and without a destination; `activemask` (9.7.13.10).

use super::*;

/// `judge_spelled`'s register of type `T` numbered `n`, or `None` where its kernel declares no
/// register of `T`'s class.
pub(crate) fn spelled_reg<T: ty::RegType>(n: usize) -> Option<String> {
    match T::CLASS {
        RegClass::B16 => Some(format!("%rs{n}")),
        RegClass::B32 => Some(format!("%r{n}")),
        RegClass::B64 => Some(format!("%rd{n}")),
        RegClass::F32 => Some(format!("%f{n}")),
        _ => None,
    }
}

/// Every warp method asked for registers of type `T` on `target`.
fn warp<T: ty::RegType>(t: &mut Tally, target: Target) {
    let (Some(d), Some(a)) = (spelled_reg::<T>(1), spelled_reg::<T>(2)) else {
        return;
    };
    let bits = format!("b{}", T::TYPE.bits());
    let modes = [
        (ShflMode::Up, "up"),
        (ShflMode::Down, "down"),
        (ShflMode::Bfly, "bfly"),
        (ShflMode::Idx, "idx"),
    ];
    for (mode, ms) in modes {
        for pred in [false, true] {
            let write = |k: &mut FunctionBuilder| {
                let (d, a, p) = (k.reg::<T>(), k.reg::<T>(), k.pred());
                k.shfl_sync(mode, d, pred.then_some(p), a, 1u32, 31u32, u32::MAX)
            };
            let dst = if pred { format!("{d}|%p1") } else { d.clone() };
            let line = format!("shfl.sync.{ms}.{bits} {dst}, {a}, 1, 31, 0xffffffff;");
            t.judge_spelled(target, &write, &line);
        }
    }
    let ops = [
        (ReduxOp::Add, "add"),
        (ReduxOp::Min, "min"),
        (ReduxOp::Max, "max"),
        (ReduxOp::And, "and"),
        (ReduxOp::Or, "or"),
        (ReduxOp::Xor, "xor"),
    ];
    for (op, os) in ops {
        let write = |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<T>(), k.reg::<T>());
            k.redux_sync(op, d, a, u32::MAX)
        };
        // The bitwise operations name the register's bits (`.b32`), the others its type.
        let bitwise = matches!(op, ReduxOp::And | ReduxOp::Or | ReduxOp::Xor);
        let ty = if bitwise {
            bits.clone()
        } else {
            T::TYPE.name().to_string()
        };
        let line = format!("redux.sync.{os}.{ty} {d}, {a}, 0xffffffff;");
        t.judge_spelled(target, &write, &line);
    }
}

/// `match.sync` over both modes and the optional predicate, for `T`.
fn matches<T: ty::Bits32Or64>(t: &mut Tally, target: Target) {
    let Some(a) = spelled_reg::<T>(2) else {
        return;
    };
    let bits = format!("b{}", T::TYPE.bits());
    let write = |k: &mut FunctionBuilder| {
        let (d, a) = (k.reg::<ty::U32>(), k.reg::<T>());
        k.match_any(d, a, u32::MAX)
    };
    let line = format!("match.any.sync.{bits} %r1, {a}, 0xffffffff;");
    t.judge_spelled(target, &write, &line);
    for pred in [false, true] {
        let write = |k: &mut FunctionBuilder| {
            let (d, a, p) = (k.reg::<ty::U32>(), k.reg::<T>(), k.pred());
            k.match_all(d, pred.then_some(p), a, u32::MAX)
        };
        let dst = if pred { "%r1|%p1" } else { "%r1" };
        let line = format!("match.all.sync.{bits} {dst}, {a}, 0xffffffff;");
        t.judge_spelled(target, &write, &line);
    }
}

#[test]
fn warp_methods_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    for target in [Target::Sm80, Target::Sm90a, Target::Sm100a] {
        each_type!(warp, t; target);
        // `match.sync` takes 32- and 64-bit registers only (`Bits32Or64`: the rest do not compile).
        matches::<ty::B32>(&mut t, target);
        matches::<ty::U32>(&mut t, target);
        matches::<ty::S32>(&mut t, target);
        matches::<ty::B64>(&mut t, target);
        matches::<ty::U64>(&mut t, target);
        matches::<ty::S64>(&mut t, target);
        let modes = [
            (VoteMode::All, "all"),
            (VoteMode::Any, "any"),
            (VoteMode::Uni, "uni"),
        ];
        for (mode, ms) in modes {
            let write = |k: &mut FunctionBuilder| {
                let (d, a) = (k.pred(), k.pred());
                k.vote_sync(mode, d, a, u32::MAX)
            };
            let line = format!("vote.sync.{ms}.pred %p1, %p2, 0xffffffff;");
            t.judge_spelled(target, &write, &line);
        }
        let write = |k: &mut FunctionBuilder| {
            let (d, a) = (k.reg::<ty::U32>(), k.pred());
            k.vote_ballot(d, a, u32::MAX)
        };
        t.judge_spelled(target, &write, "vote.sync.ballot.b32 %r1, %p1, 0xffffffff;");
        for sink in [false, true] {
            let write = |k: &mut FunctionBuilder| {
                let (d, p) = (k.reg::<ty::U32>(), k.pred());
                let d = if sink {
                    ptx_isa::Sinkable::Sink
                } else {
                    d.into()
                };
                k.elect_sync(d, p, u32::MAX)
            };
            let dst = if sink { "_|%p1" } else { "%r1|%p1" };
            t.judge_spelled(target, &write, &format!("elect.sync {dst}, 0xffffffff;"));
        }
        let write = |k: &mut FunctionBuilder| {
            let d = k.reg::<ty::U32>();
            k.activemask(d)
        };
        t.judge_spelled(target, &write, "activemask.b32 %r1;");
    }
    t.finish("shfl/vote/match/redux/elect/activemask x mode x type x target");
}

/// `redux.sync` on `.f32` (PTX ISA 9.7.13.11, sm_100a) with each of `.abs` and `.NaN`, and asked
/// for operations the row does not have: the builder writes what the row allows, on every target.
#[test]
fn redux_f32_writes_exactly_what_its_row_allows() {
    let mut t = Tally::default();
    let ops = [
        (ReduxOp::Min, "min"),
        (ReduxOp::Max, "max"),
        (ReduxOp::Add, "add"),
        (ReduxOp::Xor, "xor"),
    ];
    for target in TARGETS {
        for (op, os) in ops {
            for (abs, nan) in [(false, false), (true, false), (false, true), (true, true)] {
                let write = |k: &mut FunctionBuilder| {
                    let (d, a) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
                    k.redux_sync_f32(op, (abs, nan), d, a, u32::MAX)
                };
                let mods = format!(
                    "{}{}",
                    if abs { ".abs" } else { "" },
                    if nan { ".NaN" } else { "" }
                );
                let line = format!("redux.sync.{os}{mods}.f32 %f1, %f2, 0xffffffff;");
                t.judge_spelled(target, &write, &line);
            }
        }
    }
    t.finish("redux.sync .f32 x operation x .abs x .NaN x target");
}
