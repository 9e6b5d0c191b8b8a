//! Pool allocations never overlap, respect their alignment and the limit, and a failed
//! allocation leaves the pool unchanged.

use proptest::prelude::*;
use smem::pool::{PoolError, SmemPool, Storage};

#[derive(Debug, Clone)]
enum Op {
    Dynamic(u32, u32),
    Static(u32, u32),
    Barriers(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u32..40_000, 0u32..11).prop_map(|(b, a)| Op::Dynamic(b, 1 << a)),
        1 => (1u32..4_000, 0u32..8).prop_map(|(b, a)| Op::Static(b, 1 << a)),
        1 => (1u8..9).prop_map(Op::Barriers),
    ]
}

proptest! {
    #[test]
    fn allocations_are_disjoint_aligned_and_bounded(ops in proptest::collection::vec(op(), 1..40), limit in 1_000u32..240_000) {
        let mut pool = SmemPool::with_limit(limit);
        for (i, op) in ops.iter().enumerate() {
            let before = pool.clone();
            let name = format!("r{i}");
            let r = match *op {
                Op::Dynamic(b, a) => pool.alloc_bytes(&name, b, a).map(|_| ()),
                Op::Static(b, a) => pool.alloc_static(&name, b, a).map(|_| ()),
                Op::Barriers(n) => pool.mbarriers(&name, &vec![1; n as usize]).map(|_| ()),
            };
            match r {
                Ok(()) => {}
                Err(PoolError::OutOfMemory { total, limit: l, .. }) => {
                    prop_assert!(total > u64::from(l));
                    prop_assert_eq!(&pool, &before);
                }
                Err(e) => prop_assert!(false, "unexpected {e}"),
            }
            prop_assert!(pool.total_bytes() <= u64::from(limit));
        }
        let regions = pool.regions();
        for r in regions {
            prop_assert_eq!(r.offset % r.align, 0);
            prop_assert!(r.align.is_power_of_two());
            if r.storage == Storage::Dynamic {
                prop_assert!(r.end() <= pool.dynamic_bytes());
                prop_assert_eq!(pool.base_align() % r.align, 0);
            } else {
                prop_assert!(r.end() <= pool.static_bytes());
            }
        }
        for (i, a) in regions.iter().enumerate() {
            for b in &regions[i + 1..] {
                if a.storage == b.storage {
                    prop_assert!(a.end() <= b.offset || b.end() <= a.offset, "{:?} overlaps {:?}", a, b);
                }
            }
        }
    }
}
