//! `copy_async.cp_async`: global → shared in 16-byte `cp.async.cg` chunks spread over the scope's
//! threads (PTX ISA 9.7.9.25.3). Completion (`cp.async.commit_group` / `wait_group`) is the caller's.

use ptx_isa::builder::CpAsyncCache;
use ptx_isa::{Addr, FunctionBuilder, Result, TargetSet, ty};

use super::common::{
    both_contiguous, expect_copy, pair, same_elements, storages, strided_loop, thread_index,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, Storage};
use crate::tile::registry::{Predicate, Variant};

fn chunks(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    if s.bytes() % 16 != 0 || s.align % 16 != 0 || d.align % 16 != 0 {
        return Err(format!(
            "{} bytes at alignments {}/{}: cp.async.cg moves aligned 16-byte chunks",
            s.bytes(),
            s.align,
            d.align
        ));
    }
    if !matches!(s.base, Base::Global(_)) || !matches!(d.base, Base::Shared(_)) {
        return Err("needs a global address and a shared address".into());
    }
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.cp_async",
    targets: TargetSet::all(),
    priority: 10,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::Shared, Storage::Global)]),
        },
        Predicate {
            name: "elements",
            check: same_elements,
        },
        Predicate {
            name: "contiguous",
            check: both_contiguous,
        },
        Predicate {
            name: "chunks",
            check: chunks,
        },
    ],
    lower,
};

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let (Base::Global(g), Base::Shared(sh)) = (&s.base, &d.base) else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "cp.async: global to shared",
        ));
    };
    let (g, sh) = (*g, *sh);
    let n = (s.bytes() / 16) as u32;
    let t = thread_index(k, ctx.scope)?;
    strided_loop(k, t, n, ctx.scope.threads(), |k, c| {
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
