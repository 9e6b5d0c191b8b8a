//! `c[i] = a[i] + b[i]` for `i < n`, one thread per element.

use ptx_isa::builder::CmpOp;
use ptx_isa::{Addr, Dim, Directive, Module, SpecialReg, StateSpace, Target, spaces::Global, ty};

/// Threads per block the kernel is written for (its `.maxntid`).
pub const BLOCK: u32 = 256;

/// The vector-add module: kernel `vector_add(a, b, c, n)` with f32 pointers and a `.u32` length,
/// launched with blocks of [`BLOCK`] threads and `ceil(n / BLOCK)` blocks.
pub fn vector_add(target: Target) -> ptx_isa::Result<Module> {
    let mut m = Module::new(target);
    let mut k = m.entry("vector_add");
    let pa = k.param_ptr("a", StateSpace::Global, Some(4))?;
    let pb = k.param_ptr("b", StateSpace::Global, Some(4))?;
    let pc = k.param_ptr("c", StateSpace::Global, Some(4))?;
    let pn = k.param::<ty::U32>("n")?;
    k.directive(Directive::MaxNtid([BLOCK, 1, 1]))?;

    // i = ctaid.x * ntid.x + tid.x
    let cta = k.sreg_u32(SpecialReg::CtaId(Dim::X))?;
    let ntid = k.sreg_u32(SpecialReg::Ntid(Dim::X))?;
    let tid = k.sreg_u32(SpecialReg::Tid(Dim::X))?;
    let i = k.reg::<ty::U32>();
    k.mad_lo(i, cta, ntid, tid)?;
    let n = k.load_param(&pn)?;
    let out_of_range = k.pred();
    k.setp(CmpOp::Ge, out_of_range, i, n)?;
    let done = k.label();
    k.when(out_of_range).bra(done)?;

    // Byte offset of element i, then the three addresses.
    let off = k.reg::<ty::U64>();
    k.mul_wide(off, i, 4u32)?;
    let element = |k: &mut ptx_isa::FunctionBuilder, p| -> ptx_isa::Result<Addr<Global>> {
        let generic = k.load_param(p)?;
        let global = k.reg::<ty::U64>();
        k.cvta_to(StateSpace::Global, global, generic)?;
        let at = k.reg::<ty::U64>();
        k.add(at, global, off)?;
        Ok(Addr::reg(at))
    };
    let (a, b, c) = (element(&mut k, &pa)?, element(&mut k, &pb)?, element(&mut k, &pc)?);
    let (x, y) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
    k.ld(x, a)?;
    k.ld(y, b)?;
    k.add(x, x, y)?;
    k.st(c, x)?;
    k.place(done)?;
    k.ret()?;
    m.add(k.finish()?)?;
    Ok(m)
}
