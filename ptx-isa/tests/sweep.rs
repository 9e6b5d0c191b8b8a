//! Whatever the builder accepts, ptxas accepts: every arithmetic, logic, comparison, conversion and
//! memory method is tried on every register type (and every special register is read); the
//! combinations the builder accepts go into one kernel per target, which must assemble. The
//! combinations it refuses must be refused with an error, never a panic.

use ptx_isa::builder::*;
use ptx_isa::{Addr, FunctionBuilder, Module, SpecialReg, Target, spaces, ty};

/// Tries `f`; on error, drops nothing the builder kept (each method checks before writing).
fn attempt(
    k: &mut FunctionBuilder,
    accepted: &mut usize,
    refused: &mut usize,
    f: impl FnOnce(&mut FunctionBuilder) -> ptx_isa::Result<()>,
) {
    match f(k) {
        Ok(()) => *accepted += 1,
        Err(_) => *refused += 1,
    }
}

macro_rules! per_type {
    ($k:ident, $acc:ident, $ref:ident, $addr:ident, $($t:ident),*) => {$(
        {
            let (d, a) = ($k.reg::<ty::$t>(), $k.reg::<ty::$t>());
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.add(d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.sub(d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.min(d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.max(d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.abs(d, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.neg(d, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.div(d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.add_mods(FloatMods::NONE.sat(), d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.add_mods(FloatMods::RN.ftz(), d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.and(d, a, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.not(d, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.mov(d, a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| { let p = k.pred(); k.selp(d, a, a, p) });
            for op in [CmpOp::Eq, CmpOp::Lt, CmpOp::Hi, CmpOp::Nan] {
                attempt(&mut $k, &mut $acc, &mut $ref, |k| { let p = k.pred(); k.setp(op, p, a, a) });
            }
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.ld(d, $addr.clone()));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.st($addr.clone(), a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| { let v = k.regs::<ty::$t>(2); k.ld_v(&v, $addr.clone()) });
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.atom(AtomOp::Add, d, $addr.clone(), a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.atom(AtomOp::Exch, d, $addr.clone(), a));
            attempt(&mut $k, &mut $acc, &mut $ref, |k| k.red(AtomOp::Min, $addr.clone(), a));
            per_type!(@cvt $k, $acc, $ref, d, F32, F64, F16, Bf16, U8Wide, S32, U64, S16);
        }
    )*};
    (@cvt $k:ident, $acc:ident, $ref:ident, $d:ident, $($s:ident),*) => {$(
        attempt(&mut $k, &mut $acc, &mut $ref, |k| { let s = k.reg::<per_type!(@ty $s)>(); k.cvt($d, s) });
    )*};
    (@ty U8Wide) => { ty::U16 };
    (@ty $s:ident) => { ty::$s };
}

#[test]
fn builder_acceptance_implies_ptxas_acceptance() {
    let ptxas = ptx_isa::ptxas::for_tests().unwrap();
    for target in [Target::Sm80, Target::Sm90a, Target::Sm100a] {
        let mut m = Module::new(target);
        let mut k = m.entry("sweep");
        let (mut acc, mut refused) = (0usize, 0usize);
        let base = k.reg::<ty::U64>();
        let g = Addr::<spaces::Global>::reg(base);
        per_type!(
            k, acc, refused, g, U16, S16, B16, F16, Bf16, U32, S32, B32, F32, F16x2, Bf16x2, U64,
            S64, B64, F64
        );
        for s in SpecialReg::all() {
            attempt(&mut k, &mut acc, &mut refused, |k| {
                if s.ty() == ptx_isa::ScalarType::U64 {
                    let d = k.reg::<ty::U64>();
                    k.mov_sreg(d, s)
                } else if s.ty() == ptx_isa::ScalarType::Pred {
                    let d = k.pred();
                    k.mov_sreg(d, s)
                } else {
                    k.sreg_u32(s).map(|_| ())
                }
            });
        }
        k.ret().unwrap();
        m.add(k.finish().unwrap()).unwrap();
        let text = m.to_ptx().unwrap();
        eprintln!("{target}: builder accepted {acc} and refused {refused} combinations");
        assert!(acc > 200 && refused > 100, "{acc} {refused}");
        if let Some(p) = &ptxas {
            let out = p.assemble(&text, target, &[]).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let culprits: Vec<String> = out
                .log
                .lines()
                .filter_map(|l| {
                    l.split(", line ")
                        .nth(1)?
                        .split(';')
                        .next()?
                        .parse::<usize>()
                        .ok()
                })
                .map(|n| format!("line {n}: {}", lines.get(n - 1).unwrap_or(&"?").trim()))
                .collect();
            assert!(
                out.ok,
                "ptxas rejected what the builder accepted on {target}:\n{}\n{}",
                out.log,
                culprits.join("\n")
            );
        }
    }
}
