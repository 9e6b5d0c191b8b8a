//! The index arithmetic as emitted: random expression trees over variables (some with known
//! divisibility from `let`), simplified and lowered to PTX, then executed by a small interpreter
//! of the emitted `u32` instructions; the result must equal the expression's value on the host.
//! The same kernels assemble with ptxas.

mod support;

use std::collections::HashMap;

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{Expr, TensorOpts, Var};

struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A random tree of depth at most `d` over `vars`: `+`, `*`, `/` and `%` by constants (powers of
/// two and others), and `+`/`*` of subtrees.
fn tree(r: &mut Lcg, vars: &[Var], d: u32) -> Expr {
    if d == 0 || r.next(4) == 0 {
        return if r.next(3) == 0 {
            Expr::from(r.next(20) as u32)
        } else {
            Expr::from(vars[r.next(vars.len() as u64) as usize])
        };
    }
    let c = [1u32, 2, 3, 4, 6, 8, 16, 32, 5][r.next(9) as usize];
    let a = tree(r, vars, d - 1);
    match r.next(6) {
        0 => a + tree(r, vars, d - 1),
        1 => a * tree(r, vars, d - 1),
        2 => a * c,
        3 => a / c,
        4 => a % c,
        _ => a + c,
    }
}

/// Runs the `u32` instructions of `ptx` from the first `mov` of a variable on, with registers
/// starting at zero; returns the registers.
fn interpret(ptx: &str) -> HashMap<String, u32> {
    let mut regs: HashMap<String, u32> = HashMap::new();
    for line in ptx.lines().map(str::trim) {
        let Some((op, rest)) = line.split_once(' ') else {
            continue;
        };
        let args: Vec<&str> = rest.trim_end_matches(';').split(", ").collect();
        let val = |regs: &HashMap<String, u32>, a: &str| -> u32 {
            if a.starts_with('%') {
                regs.get(a).copied().unwrap_or(0)
            } else {
                a.parse().unwrap()
            }
        };
        let bin = |f: fn(u32, u32) -> u32| f(val(&regs, args[1]), val(&regs, args[2]));
        let v = match op {
            "mov.u32" => val(&regs, args[1]),
            "add.u32" => bin(u32::wrapping_add),
            "sub.u32" => bin(u32::wrapping_sub),
            "mul.lo.u32" => bin(u32::wrapping_mul),
            "shl.b32" => bin(|a, b| a << b),
            "shr.u32" => bin(|a, b| a >> b),
            "and.b32" => bin(|a, b| a & b),
            "div.u32" => bin(|a, b| a / b),
            "rem.u32" => bin(|a, b| a % b),
            _ => continue,
        };
        regs.insert(args[0].to_string(), v);
    }
    regs
}

#[test]
fn lowered_index_arithmetic_computes_the_expression() {
    let mut r = Lcg(0x5eed);
    for case in 0..300 {
        let values = [
            1 + r.next(50) as i64,
            1 + r.next(50) as i64,
            1 + r.next(9) as i64,
        ];
        let (mut k, out) = support::kernel_with::<ty::U32>("t", "out", [1], TensorOpts::default());
        k.thread_id([1]).unwrap();
        let x = k.index_var("x", values[0] as u32).unwrap();
        let y = k.index_var("y", values[1] as u32).unwrap();
        let z = k.index_var("z", values[2] as u32).unwrap();
        // Variables with known divisibility: q = 4x, w = 6y (their value: 4 * x, 6 * y).
        let q = k.let_("q", x * 4).unwrap();
        let w = k.let_("w", y * 6).unwrap();
        let vars = [x, y, z, q, w];
        let value = |v: Var| {
            let i = vars.iter().position(|u| *u == v)?;
            Some(
                [
                    values[0],
                    values[1],
                    values[2],
                    4 * values[0],
                    6 * values[1],
                ][i],
            )
        };
        let e = tree(&mut r, &vars, 4);
        let want = ptxkit::kernel::expr::eval(&e, &value).unwrap();
        let got_reg = k.eval(e.clone()).unwrap();
        k.store(&out, [0], got_reg).unwrap();
        let built = k.finish().unwrap();
        let regs = interpret(built.ptx());
        let got = regs[&got_reg.to_string()];
        assert_eq!(
            i64::from(got),
            want & 0xffff_ffff,
            "case {case}: {e} with {values:?}\n{}",
            built.ptx()
        );
        if case % 50 == 0 {
            support::assemble(built.ptx(), Target::Sm90a);
        }
    }
}
