//! Swizzles: a bijection on their span, an involution, and a layout stage that keeps a compact
//! layout a bijection; the TMA byte modes checked against the descriptor formula.

use layouts::{IntTuple, Layout, LayoutError, Swizzle, SwizzleUnit, SwizzledLayout};
use proptest::prelude::*;

fn swizzle() -> impl Strategy<Value = Swizzle> {
    (0u32..=3, 0u32..=4, 0u32..=4)
        .prop_filter_map("valid", |(b, m, s)| Swizzle::new(b, m, s.max(b)).ok())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A bijection on [0, span) that leaves the block structure of the span alone.
    #[test]
    fn swizzle_is_a_bijection_on_its_span(sw in swizzle(), block in 0u64..4) {
        let span = sw.span();
        let base = block * span;
        let mut image: Vec<u64> = (base..base + span).map(|x| sw.apply(x)).collect();
        image.sort_unstable();
        prop_assert_eq!(image, (base..base + span).collect::<Vec<_>>());
    }

    /// `S >= B`: the source bits are untouched, so applying twice is the identity.
    #[test]
    fn swizzle_is_an_involution(sw in swizzle(), x in 0u64..1 << 16) {
        prop_assert_eq!(sw.apply(sw.apply(x)), x);
    }

    /// A compact layout covering whole spans stays a bijection after the swizzle stage.
    #[test]
    fn swizzled_compact_layouts_are_bijections(sw in swizzle(), rows in 0u32..3) {
        let n = (sw.span() << rows) as i64;
        let l = Layout::int(n, 1).unwrap();
        let s = SwizzledLayout::new(sw, SwizzleUnit::Elements, l).unwrap();
        let mut v = s.values();
        v.sort_unstable();
        prop_assert_eq!(v, (0..n).collect::<Vec<_>>());
    }
}

/// PTX ISA 9.7.9.27.1.2 (swizzling modes) / the TMA formula: byte offset `x` lands at
/// `x ^ ((x & (((1 << B) - 1) << 7)) >> 3)`; as a stage after a row-major 8 x (128/esize) tile.
#[test]
fn byte_swizzle_stage_matches_the_tma_formula() {
    for (sw, b) in [(Swizzle::B32, 1u64), (Swizzle::B64, 2), (Swizzle::B128, 3)] {
        for esize in [1u32, 2, 4, 8, 16] {
            let per_row = 128 / i64::from(esize);
            let l =
                Layout::new(IntTuple::flat(&[8, per_row]), IntTuple::flat(&[per_row, 1])).unwrap();
            let s = SwizzledLayout::new(sw, SwizzleUnit::Bytes(esize), l.clone()).unwrap();
            for i in 0..l.size() {
                let x = (l.call(i) as u64) * u64::from(esize);
                let want = x ^ ((x & (((1 << b) - 1) << 7)) >> 3);
                assert_eq!(s.call(i) as u64 * u64::from(esize), want, "{s} at {i}");
            }
        }
    }
}

#[test]
fn stage_preconditions_are_named() {
    let l = Layout::int(64, 1).unwrap();
    let e = SwizzledLayout::new(Swizzle::B128, SwizzleUnit::Bytes(32), l.clone()).unwrap_err();
    assert!(matches!(
        e,
        LayoutError::SwizzleSplitsElement {
            bytes: 32,
            chunk: 16
        }
    ));
    assert!(SwizzledLayout::new(Swizzle::B128, SwizzleUnit::Bytes(3), l).is_err());
    let neg = Layout::int(4, -1).unwrap();
    assert!(matches!(
        SwizzledLayout::new(Swizzle::B32, SwizzleUnit::Elements, neg),
        Err(LayoutError::NegativeStride { .. })
    ));
    let s = SwizzledLayout::new(
        Swizzle::B64,
        SwizzleUnit::Bytes(2),
        Layout::int(8, 1).unwrap(),
    )
    .unwrap();
    assert_eq!(s.to_string(), "Sw<2,4,3> o 8:1 (bytes of 2)");
}
