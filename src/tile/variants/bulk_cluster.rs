//! `copy_async.bulk_cluster`: this CTA's shared memory → another CTA's in the cluster with
//! `cp.async.bulk.shared::cluster.shared::cta` (PTX ISA 9.7.9.25.4.1), completing on an mbarrier
//! in the destination CTA (the caller waits on it there). One thread issues it.

use ptx_isa::{Addr, FunctionBuilder, Reg, Result, TargetSet, spaces, ty};

use super::common::{CONTIGUOUS, ELEMENTS, pair, scope, shared_addr, sixteen_byte_chunks, storage};
use crate::tile::op::{OpCtx, OpKind, TileOp};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// One bulk copy of `bytes` from this CTA's `src` to the peer's `dst`, completing on `mbar`.
struct BulkCopy {
    dst: Reg<ty::U32>,
    src: Reg<ty::U32>,
    bytes: u32,
    mbar: Reg<ty::U32>,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let TileOp::CopyAsync {
        mbar: Some(mbar), ..
    } = &ctx.op
    else {
        return Err(Rejection::operand(
            Aspect::Op,
            "the copy completes on the destination's mbarrier; none given",
        ));
    };
    let bytes = sixteen_byte_chunks(d, s, "a bulk copy")?;
    Ok(Box::new(BulkCopy {
        dst: shared_addr(d, "destination")?,
        src: shared_addr(s, "source")?,
        bytes,
        mbar: mbar.addr,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.bulk_cluster",
    targets: TargetSet::sm_at_least(90),
    priority: 20,
    views: false,
    predicates: &[
        storage!(Shared -> SharedCluster),
        scope!(Thread),
        ELEMENTS,
        CONTIGUOUS,
    ],
    planner: Planner { name: "bulk", plan },
};

impl Plan for BulkCopy {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        k.cp_async_bulk_shared_to_cluster(
            Addr::<spaces::SharedCluster>::reg32(self.dst),
            Addr::<spaces::Shared>::reg32(self.src),
            self.bytes,
            Addr::reg32(self.mbar),
        )
    }
}
