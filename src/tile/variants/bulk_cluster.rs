//! `copy_async.bulk_cluster`: this CTA's shared memory → another CTA's in the cluster with
//! `cp.async.bulk.shared::cluster.shared::cta` (PTX ISA 9.7.9.25.4.1), completing on an mbarrier
//! in the destination CTA (the caller waits on it there). One thread issues it.

use ptx_isa::{Addr, FunctionBuilder, Result, TargetSet, spaces};

use super::common::{both_contiguous, expect_copy, pair, same_elements, scope_in, storages};
use crate::tile::op::{OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, Storage};
use crate::tile::registry::{Predicate, Variant};

fn bulk(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    if s.bytes() % 16 != 0 || s.align % 16 != 0 || d.align % 16 != 0 {
        return Err(format!(
            "{} bytes: bulk copies move multiples of 16 bytes, 16-byte aligned",
            s.bytes()
        ));
    }
    if !matches!(ctx.op, TileOp::CopyAsync { mbar: Some(_), .. }) {
        return Err("the copy completes on the destination's mbarrier; none given".into());
    }
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.bulk_cluster",
    targets: TargetSet::sm_at_least(90),
    priority: 20,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::SharedCluster, Storage::Shared)]),
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread"]),
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
            name: "bulk",
            check: bulk,
        },
    ],
    lower,
};

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let TileOp::CopyAsync {
        mbar: Some(bar), ..
    } = &ctx.op
    else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "no mbarrier",
        ));
    };
    let (Base::Shared(dst), Base::Shared(src)) = (&d.base, &s.base) else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "shared addresses expected",
        ));
    };
    k.cp_async_bulk_shared_to_cluster(
        Addr::<spaces::SharedCluster>::reg32(*dst),
        Addr::<spaces::Shared>::reg32(*src),
        s.bytes() as u32,
        Addr::reg32(*bar),
    )
}
