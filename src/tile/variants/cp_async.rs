//! `copy_async.cp_async`: global → shared in 16-byte `cp.async.cg` chunks spread over the scope's
//! threads (PTX ISA 9.7.9.25.3). Completion (`cp.async.commit_group` / `wait_group`) is the caller's.

use ptx_isa::builder::CpAsyncCache;
use ptx_isa::{Addr, FunctionBuilder, Reg, Result, TargetSet, ty};

use super::common::{CONTIGUOUS, ELEMENTS, pair, storage, strided_loop, thread_index};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, ExecScope};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// `chunks` 16-byte `cp.async.cg` copies from `src` to `dst`, spread over the scope's threads.
struct CpAsync {
    dst: Reg<ty::U32>,
    src: Reg<ty::U64>,
    chunks: u32,
    scope: ExecScope,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    if s.bytes() % 16 != 0 || s.align % 16 != 0 || d.align % 16 != 0 {
        return Err(Rejection::operand(
            Aspect::Width,
            format!(
                "{} bytes at alignments {}/{}: cp.async.cg moves aligned 16-byte chunks",
                s.bytes(),
                s.align,
                d.align
            ),
        ));
    }
    let (Base::Global(src), Base::Shared(dst)) = (&s.base, &d.base) else {
        return Err(Rejection::operand(
            Aspect::Base,
            "needs a global address and a shared address",
        ));
    };
    Ok(Box::new(CpAsync {
        dst: *dst,
        src: *src,
        chunks: (s.bytes() / 16) as u32,
        scope: ctx.scope,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.cp_async",
    targets: TargetSet::all(),
    priority: 10,
    views: false,
    predicates: &[storage!(Global -> Shared), ELEMENTS, CONTIGUOUS],
    planner: Planner {
        name: "chunks",
        plan,
    },
};

impl Plan for CpAsync {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let (g, sh) = (self.src, self.dst);
        let t = thread_index(k, self.scope)?;
        strided_loop(k, t, self.chunks, self.scope.threads(), |k, c| {
            let off = k.reg::<ty::U32>();
            k.shl(off, c, 4u32)?;
            let (w, ga) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
            k.cvt(w, off)?;
            k.add(ga, g, w)?;
            let sa = k.reg::<ty::U32>();
            k.add(sa, sh, off)?;
            k.cp_async(
                CpAsyncCache::Cg,
                Addr::<ptx_isa::spaces::Shared>::reg32(sa),
                Addr::reg(ga),
                16,
                None,
            )
        })
    }
}
