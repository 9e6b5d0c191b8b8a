//! Test support: the PTX interpreter and a harness that wraps emitted code in a kernel, runs it
//! through the interpreter and assembles it with ptxas.

#![allow(dead_code)]

pub mod interp;

use ptx_isa::{Addr, FunctionBuilder, Module, Reg, StateSpace, Target, spaces::Global, ty};
use smem::emit::AluReg;

pub use interp::Interp;

/// The address the harness gives the `out` pointer.
pub const OUT: u64 = 0x1000;

/// A kernel `k(u32 inputs..., u64 out)`: loads each input parameter into a `.u32` register,
/// lets `body` emit code on them, and stores the register `body` returns to `*out`.
pub fn kernel(
    target: Target,
    inputs: &[&str],
    body: impl FnOnce(&mut Module, &mut FunctionBuilder, &[Reg<ty::U32>]) -> ptx_isa::Result<AluReg>,
) -> ptx_isa::Result<Module> {
    let mut m = Module::new(target);
    let mut k = m.entry("k");
    let params = inputs
        .iter()
        .map(|name| k.param::<ty::U32>(name))
        .collect::<ptx_isa::Result<Vec<_>>>()?;
    let out = k.param_ptr("out", StateSpace::Global, Some(8))?;
    let regs = params
        .iter()
        .map(|p| k.load_param(p))
        .collect::<ptx_isa::Result<Vec<_>>>()?;
    let result = body(&mut m, &mut k, &regs)?;
    let pout = k.load_param(&out)?;
    let g = k.reg::<ty::U64>();
    k.cvta_to(StateSpace::Global, g, pout)?;
    match result {
        AluReg::U32(r) => k.st(Addr::<Global>::reg(g), r)?,
        AluReg::U64(r) => k.st(Addr::<Global>::reg(g), r)?,
    }
    k.ret()?;
    m.add(k.finish()?)?;
    Ok(m)
}

/// Runs kernel `k` of `m` with `inputs` bound to its parameters (in order) and the shared
/// symbols at the given addresses; returns what it stored to `*out`.
pub fn run(m: &Module, inputs: &[(&str, u64)], symbols: &[(&str, u64)]) -> Result<u64, String> {
    let f = m.function("k").ok_or("no kernel k")?;
    let mut it = Interp::new().param("out", OUT);
    for &(name, v) in inputs {
        it = it.param(name, v);
    }
    for &(name, a) in symbols {
        it = it.symbol(name, a);
    }
    it.run(f)?;
    it.memory
        .get(&OUT)
        .copied()
        .ok_or("nothing stored to out".into())
}

/// Assembles `m` with ptxas for its target, when ptxas is there (a failure under `CI=true` when
/// it is not); panics with the log and the text when ptxas rejects it.
pub fn assemble(m: &Module) {
    let text = m.to_ptx().unwrap();
    if let Some(ptxas) = ptx_isa::ptxas::for_tests().unwrap() {
        let out = ptxas.assemble(&text, m.target(), &[]).unwrap();
        assert!(
            out.ok,
            "ptxas rejected it for {}:\n{}\n{text}",
            m.target(),
            out.log
        );
    }
}

/// The instruction and comment lines of the body of the PTX of `m` (declarations left out).
pub fn body_lines(m: &Module) -> Vec<String> {
    let text = m.to_ptx().unwrap();
    text.lines()
        .skip_while(|l| !l.starts_with('{'))
        .filter(|l| l.starts_with('\t') && !l.trim_start().starts_with(".reg"))
        .map(|l| l.trim().to_string())
        .collect()
}
