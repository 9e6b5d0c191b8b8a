//! Zero-padding the K dimension to a multiple of 8: a tensor map's row pitch must be a multiple of
//! 16 bytes (CUDA Driver API `cuTensorMapEncodeTiled`: "globalStrides ... must be a multiple of
//! 16"), so for other K the launcher copies A and B into `[rows, round_up(k, 8)]` buffers whose
//! extra columns are zero (they add nothing to the dot products).

use ptx_isa::ScalarType;
use ptx_isa::builder::CmpOp;
use ptx_isa::{Addr, Dim, Directive, Module, SpecialReg, StateSpace, Target, spaces, ty};

use crate::runtime::{KernelSignature, Param};

/// Threads per block of the pad kernel.
pub const BLOCK: u32 = 256;

/// `dst[r, c] = c < k ? src[r, c] : 0` for 16-bit elements, one thread per element of `dst`
/// (`rows * kp` threads, `BLOCK` per block).
pub fn pad_module(target: Target) -> ptx_isa::Result<Module> {
    let mut m = Module::new(target);
    let mut k = m.entry("pad_k_16b");
    let src = k.param_ptr("src", StateSpace::Global, Some(2))?;
    let dst = k.param_ptr("dst", StateSpace::Global, Some(2))?;
    let prows = k.param::<ty::U32>("rows")?;
    let pk = k.param::<ty::U32>("k")?;
    let pkp = k.param::<ty::U32>("kp")?;
    k.directive(Directive::MaxNtid([BLOCK, 1, 1]))?;
    let (cta, tid) = (
        k.sreg_u32(SpecialReg::CtaId(Dim::X))?,
        k.sreg_u32(SpecialReg::Tid(Dim::X))?,
    );
    let i = k.reg::<ty::U32>();
    k.mad_lo(i, cta, BLOCK, tid)?;
    let (rows, kk, kp) = (
        k.load_param(&prows)?,
        k.load_param(&pk)?,
        k.load_param(&pkp)?,
    );
    let total = k.reg::<ty::U32>();
    k.mul_lo(total, rows, kp)?;
    let (done, out) = (k.label(), k.pred());
    k.setp(CmpOp::Ge, out, i, total)?;
    k.when(out).bra(done)?;
    let (r, c) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.div(r, i, kp)?;
    k.rem(c, i, kp)?;
    let v = k.reg::<ty::B16>();
    k.mov(v, 0u16)?;
    let inside = k.pred();
    k.setp(CmpOp::Lt, inside, c, kk)?;
    let s_idx = k.reg::<ty::U32>();
    k.mad_lo(s_idx, r, kk, c)?;
    let (sg, so) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
    let sp = k.load_param(&src)?;
    k.cvta_to(StateSpace::Global, sg, sp)?;
    k.mul_wide(so, s_idx, 2u32)?;
    k.add(sg, sg, so)?;
    k.when(inside).ld(v, Addr::<spaces::Global>::reg(sg))?;
    let (dg, dofs) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
    let dp = k.load_param(&dst)?;
    k.cvta_to(StateSpace::Global, dg, dp)?;
    k.mul_wide(dofs, i, 2u32)?;
    k.add(dg, dg, dofs)?;
    k.st(Addr::<spaces::Global>::reg(dg), v)?;
    k.place(done)?;
    k.ret()?;
    m.add(k.finish()?)?;
    Ok(m)
}

/// The pad kernel's signature for `dtype` elements.
pub fn pad_signature(dtype: ScalarType) -> KernelSignature {
    KernelSignature::new(
        "pad_k_16b",
        vec![
            Param::tensor("src", dtype, vec!["rows".into(), "k".into()]),
            Param::tensor("dst", dtype, vec!["rows".into(), "kp".into()]),
            Param::extent_u32("rows"),
            Param::extent_u32("k"),
            Param::extent_u32("kp"),
        ],
    )
}
