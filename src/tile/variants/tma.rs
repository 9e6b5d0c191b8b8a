//! TMA variants (PTX ISA 9.7.9.27): `copy_async.tma_load` (tensor → shared, completing on an
//! mbarrier), `copy_async.tma_multicast` (the same into every CTA of a mask), and
//! `copy_async.tma_store` (shared → tensor, completing with the bulk async-group), and
//! `reduce_async.tma_reduce` (shared reduced into the tensor in L2, 9.7.9.27
//! `cp.reduce.async.bulk.tensor`, completing as a store does). One thread
//! issues each (the caller elects it); the tensor map describes the global tensor, its box must
//! be the tile's shape, and its swizzle the shared tile's. Completion (`mbarrier` wait,
//! `cp.async.bulk.commit_group`/`wait_group`) is the caller's.

use ptx_isa::builder::{TensorMapRef, TmaLoadOpts, TmaReduceOp};
use ptx_isa::{Addr, FunctionBuilder, Reg, Result, Src, TargetSet, spaces, ty};

use super::common::{PlanFn, pair, scope, storage};
use crate::tile::op::{OpCtx, OpKind, TileOp};
use crate::tile::operand::Base;
use crate::tile::registry::{Plan, Planned, Planner, Predicate, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The two sides of a TMA copy.
struct Sides<'a> {
    /// The tensor map.
    map: &'a TensorMapRef,
    /// The tile's origin in the tensor.
    coords: &'a [Src<ty::S32>],
    /// The L2 cache policy the access carries (`.L2::cache_hint`).
    l2_hint: Option<Reg<ty::B64>>,
    /// The shared tile's address.
    shared: Reg<ty::U32>,
}

/// The sides of a TMA copy: the destination is the tensor for a `store`, the source otherwise.
fn tensor_and_shared<'a>(
    ctx: &'a OpCtx<'a>,
    store: bool,
) -> std::result::Result<Sides<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let (tensor, shared, side, other) = if store {
        (d, s, "destination", "source")
    } else {
        (s, d, "source", "destination")
    };
    let Base::TensorMap {
        map,
        coords,
        l2_hint,
    } = &tensor.base
    else {
        return Err(Rejection::operand(
            Aspect::Base,
            format!("the {side} is not described by a tensor map"),
        ));
    };
    match shared.base {
        Base::Shared(a) if shared.align % 128 == 0 => Ok(Sides {
            map,
            coords,
            l2_hint: *l2_hint,
            shared: a,
        }),
        _ => Err(Rejection::operand(
            Aspect::Base,
            format!(
                "the {other} needs a shared address aligned to 128 bytes (is {})",
                shared.align
            ),
        )),
    }
}

/// The `tensor_map` predicate of the loads: the source is a tensor-map tile, the destination
/// shared memory.
const TENSOR_MAP: Predicate = Predicate {
    name: "tensor_map",
    check: |c| tensor_and_shared(c, false).map(|_| ()),
};

/// A TMA load (with a multicast mask or not) into `sides.shared`, completing on `mbar`.
struct TmaLoad<'a> {
    sides: Sides<'a>,
    mbar: Reg<ty::U32>,
    multicast: Option<Src<ty::U16>>,
}

fn plan_load<'a>(
    ctx: &'a OpCtx<'a>,
    multicast: bool,
) -> std::result::Result<Planned<'a>, Rejection> {
    let TileOp::CopyAsync {
        mbar: Some(bar),
        multicast: m,
        ..
    } = &ctx.op
    else {
        return Err(Rejection::operand(
            Aspect::Op,
            "a TMA load completes on an mbarrier; none given",
        ));
    };
    if m.is_some() != multicast {
        return Err(Rejection::operand(
            Aspect::Op,
            if multicast {
                "no multicast mask"
            } else {
                "a multicast mask (tma_multicast lowers it)"
            },
        ));
    }
    Ok(Box::new(TmaLoad {
        sides: tensor_and_shared(ctx, false)?,
        mbar: bar.addr,
        multicast: *m,
    }))
}

impl Plan for TmaLoad<'_> {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let s = &self.sides;
        let opts = TmaLoadOpts {
            multicast: self.multicast,
            cache_hint: s.l2_hint,
            ..TmaLoadOpts::default()
        };
        k.tma_load(
            &opts,
            Addr::<spaces::SharedCluster>::reg32(s.shared),
            s.map,
            s.coords,
            Addr::reg32(self.mbar),
        )
    }
}

/// A TMA store from shared memory (`Sides::shared`), or with a reduction the same sides
/// reduced into the tensor.
struct TmaStore<'a>(Sides<'a>, Option<TmaReduceOp>);

fn plan_store<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let reduce = match &ctx.op {
        TileOp::ReduceAsync { op, .. } => Some(*op),
        _ => None,
    };
    Ok(Box::new(TmaStore(tensor_and_shared(ctx, true)?, reduce)))
}

impl Plan for TmaStore<'_> {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let s = &self.0;
        let shared = Addr::<spaces::Shared>::reg32(s.shared);
        match self.1 {
            None => k.tma_store(s.map, s.coords, shared, s.l2_hint),
            // PTX ISA 9.7.9.27 `cp.reduce.async.bulk.tensor`: the element type is the tensor
            // map's (`.add` takes .u32, .s32, .u64, .f32, .f16 and .bf16 there).
            Some(op) => k.tma_reduce(op, s.map, s.coords, shared, s.l2_hint),
        }
    }
}

/// A TMA load's registration: the plain load and the multicast differ only in name, priority
/// and planner.
const fn load_variant(name: &'static str, priority: i32, plan: PlanFn) -> Variant {
    Variant {
        op: OpKind::CopyAsync,
        name,
        targets: TargetSet::sm_at_least(90),
        priority,
        views: false,
        predicates: &[storage!(Global -> Shared), scope!(Thread), TENSOR_MAP],
        planner: Planner {
            name: "mbarrier",
            plan,
        },
    }
}

/// `copy_async.tma_load`.
pub const LOAD: Variant = load_variant("copy_async.tma_load", 30, |c| plan_load(c, false));

/// `copy_async.tma_multicast`.
pub const MULTICAST: Variant = load_variant("copy_async.tma_multicast", 31, |c| plan_load(c, true));

/// A TMA store's registration: the plain store and the reduction differ only in op and name.
const fn store_variant(op: OpKind, name: &'static str) -> Variant {
    Variant {
        op,
        name,
        targets: TargetSet::sm_at_least(90),
        priority: 30,
        views: false,
        predicates: &[storage!(Shared -> Global), scope!(Thread)],
        planner: Planner {
            name: "tensor_map",
            plan: plan_store,
        },
    }
}

/// `copy_async.tma_store`.
pub const STORE: Variant = store_variant(OpKind::CopyAsync, "copy_async.tma_store");

/// `reduce_async.tma_reduce`.
pub const REDUCE: Variant = store_variant(OpKind::ReduceAsync, "reduce_async.tma_reduce");
