//! `copy_async.cp_async`: global → shared in 16-byte `cp.async.cg` chunks spread over the scope's
//! threads (PTX ISA 9.7.9.25.3). Completion (`cp.async.commit_group` / `wait_group`) is the caller's.

use ptx_isa::builder::CpAsyncCache;
use ptx_isa::{Addr, FunctionBuilder, Reg, Result, TargetSet, ty};

use super::common::{
    CONTIGUOUS, ELEMENTS, global_addr, pair, shared_addr, sixteen_byte_chunks, storage,
    strided_loop, thread_index,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::ExecScope;
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::Rejection;

/// `chunks` 16-byte `cp.async.cg` copies from `src` to `dst`, spread over the scope's threads.
struct CpAsync {
    dst: Reg<ty::U32>,
    src: Reg<ty::U64>,
    chunks: u32,
    scope: ExecScope,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let bytes = sixteen_byte_chunks(d, s, "cp.async.cg")?;
    Ok(Box::new(CpAsync {
        dst: shared_addr(d, "destination")?,
        src: global_addr(s, "source")?,
        chunks: bytes / 16,
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
                None,
            )
        })
    }
}
