//! TMA variants (PTX ISA 9.7.9.27): `copy_async.tma_load` (tensor → shared, completing on an
//! mbarrier), `copy_async.tma_multicast` (the same into every CTA of a mask), and
//! `copy_async.tma_store` (shared → tensor, completing with the bulk async-group). One thread
//! issues each (the caller elects it); the tensor map describes the global tensor, its box must
//! be the tile's shape, and its swizzle the shared tile's. Completion (`mbarrier` wait,
//! `cp.async.bulk.commit_group`/`wait_group`) is the caller's.

use ptx_isa::builder::TmaLoadOpts;
use ptx_isa::{Addr, FunctionBuilder, Result, TargetSet, spaces};

use super::common::{expect_copy, pair, scope_in, storages};
use crate::tile::op::{OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, Storage};
use crate::tile::registry::{Predicate, Variant};

fn mbar(ctx: &OpCtx<'_>, multicast: bool) -> std::result::Result<(), String> {
    match &ctx.op {
        TileOp::CopyAsync {
            mbar: Some(_),
            multicast: m,
            ..
        } => {
            if m.is_some() == multicast {
                Ok(())
            } else if multicast {
                Err("no multicast mask".into())
            } else {
                Err("a multicast mask (tma_multicast lowers it)".into())
            }
        }
        _ => Err("a TMA load completes on an mbarrier; none given".into()),
    }
}

fn tensor_src(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    if !matches!(s.base, Base::TensorMap { .. }) {
        return Err("the source is not described by a tensor map".into());
    }
    if !matches!(d.base, Base::Shared(_)) || d.align % 128 != 0 {
        return Err(format!(
            "the destination needs a shared address aligned to 128 bytes (is {})",
            d.align
        ));
    }
    Ok(())
}

fn tensor_dst(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    if !matches!(d.base, Base::TensorMap { .. }) {
        return Err("the destination is not described by a tensor map".into());
    }
    if !matches!(s.base, Base::Shared(_)) || s.align % 128 != 0 {
        return Err(format!(
            "the source needs a shared address aligned to 128 bytes (is {})",
            s.align
        ));
    }
    Ok(())
}

fn load(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let TileOp::CopyAsync {
        mbar: Some(bar),
        multicast,
        ..
    } = &ctx.op
    else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "TMA load without an mbarrier",
        ));
    };
    let (Base::TensorMap { map, coords }, Base::Shared(dst)) = (&s.base, &d.base) else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "TMA load: tensor map to shared",
        ));
    };
    let opts = TmaLoadOpts {
        multicast: *multicast,
        ..TmaLoadOpts::default()
    };
    k.tma_load(
        &opts,
        Addr::<spaces::SharedCluster>::reg32(*dst),
        map,
        coords,
        Addr::reg32(*bar),
    )
}

fn store(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let (Base::TensorMap { map, coords }, Base::Shared(src)) = (&d.base, &s.base) else {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            "TMA store: shared to tensor map",
        ));
    };
    k.tma_store(map, coords, Addr::<spaces::Shared>::reg32(*src), None)
}

/// `copy_async.tma_load`.
pub const LOAD: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.tma_load",
    targets: TargetSet::sm_at_least(90),
    priority: 30,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::Shared, Storage::Global)]),
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread"]),
        },
        Predicate {
            name: "tensor_map",
            check: tensor_src,
        },
        Predicate {
            name: "mbarrier",
            check: |c| mbar(c, false),
        },
    ],
    lower: load,
};

/// `copy_async.tma_multicast`.
pub const MULTICAST: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.tma_multicast",
    targets: TargetSet::sm_at_least(90),
    priority: 31,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::Shared, Storage::Global)]),
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread"]),
        },
        Predicate {
            name: "tensor_map",
            check: tensor_src,
        },
        Predicate {
            name: "mbarrier",
            check: |c| mbar(c, true),
        },
    ],
    lower: load,
};

/// `copy_async.tma_store`.
pub const STORE: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.tma_store",
    targets: TargetSet::sm_at_least(90),
    priority: 30,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::Global, Storage::Shared)]),
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread"]),
        },
        Predicate {
            name: "tensor_map",
            check: tensor_dst,
        },
    ],
    lower: store,
};
