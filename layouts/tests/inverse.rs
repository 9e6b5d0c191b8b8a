//! `right_inverse` and `left_inverse`: `L(R(i)) == i` and `R(L(i)) == i`.

mod common;

use common::*;
use layouts::{Layout, LayoutError, left_inverse, right_inverse};
use proptest::prelude::*;

/// `outer(inner(i)) == i` for every `i < n`: `inner` is a right inverse of `outer` there.
fn check_inverse(outer: &Layout, inner: &Layout, n: i64) {
    for i in 0..n {
        assert_eq!(outer.call(inner.call(i)), i, "{outer} after {inner}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn right_inverse_meets_the_contract(layout in any_layout()) {
        let r = right_inverse(&layout).unwrap();
        check_inverse(&layout, &r, r.size());
    }

    /// For a compact bijection the right inverse is a full inverse.
    #[test]
    fn right_inverse_of_a_bijection_is_total(layout in complementable_layout()) {
        let compact = image(&layout) == (0..layout.size()).collect::<Vec<_>>();
        let r = right_inverse(&layout).unwrap();
        if compact {
            prop_assert_eq!(r.size(), layout.size());
        }
    }

    #[test]
    fn left_inverse_meets_the_contract(layout in complementable_layout()) {
        let r = left_inverse(&layout).unwrap();
        check_inverse(&r, &layout, layout.size());
    }
}

#[test]
fn worked_examples() {
    assert_eq!(
        right_inverse(&l("(4,2):(2,1)")).unwrap().to_string(),
        "(2,4):(4,1)"
    );
    assert_eq!(
        right_inverse(&l("(2,3):(3,1)")).unwrap().to_string(),
        "(3,2):(2,1)"
    );
    assert_eq!(right_inverse(&l("4:2")).unwrap().to_string(), "1:0");
    // CuTe: the TV layout of the SM80 16x8 accumulator is inverted to find each (m, n)'s owner.
    let tv = l("((4,8),(2,2)):((32,1),(16,8))");
    let inv = right_inverse(&tv).unwrap();
    assert!((0..128).all(|i| tv.call(inv.call(i)) == i));
    assert_eq!(left_inverse(&l("4:2")).unwrap().call(6), 3);
    assert!(matches!(
        left_inverse(&l("(2,2):(1,1)")),
        Err(LayoutError::ComplementOverlap { .. })
    ));
    assert!(matches!(
        right_inverse(&l("4:-1")),
        Err(LayoutError::NegativeStride { .. })
    ));
}
