//! Strategies over the layout domain and the contract checks shared by the property tests, in the
//! manner of CuTe's `test/unit/cute/core` helpers: each check asserts an operation's
//! post-conditions for one input.
#![allow(dead_code)]

use layouts::{IntTuple, Layout};
use proptest::prelude::*;

/// The layout written `s` in CuTe notation (a test's own literal: it must parse).
pub fn l(s: &str) -> Layout {
    s.parse().unwrap()
}

/// Groups flat (extent, stride) leaves into a random nesting of depth <= 2.
fn nest(leaves: Vec<(i64, i64)>, cuts: Vec<usize>) -> Layout {
    let mut groups: Vec<Vec<(i64, i64)>> = vec![Vec::new()];
    for (i, leaf) in leaves.into_iter().enumerate() {
        if i > 0 && cuts.contains(&i) {
            groups.push(Vec::new());
        }
        if let Some(g) = groups.last_mut() {
            g.push(leaf);
        }
    }
    let mode = |g: &Vec<(i64, i64)>| -> (IntTuple, IntTuple) {
        if g.len() == 1 {
            (IntTuple::Int(g[0].0), IntTuple::Int(g[0].1))
        } else {
            (
                IntTuple::Tuple(g.iter().map(|x| IntTuple::Int(x.0)).collect()),
                IntTuple::Tuple(g.iter().map(|x| IntTuple::Int(x.1)).collect()),
            )
        }
    };
    let (s, d): (Vec<_>, Vec<_>) = groups.iter().map(mode).unzip();
    let (s, d) = if s.len() == 1 {
        (s.into_iter().next().unwrap(), d.into_iter().next().unwrap())
    } else {
        (IntTuple::Tuple(s), IntTuple::Tuple(d))
    };
    Layout::new(s, d).expect("strategy builds valid layouts")
}

fn nested(leaves: impl Strategy<Value = Vec<(i64, i64)>>) -> impl Strategy<Value = Layout> {
    leaves.prop_flat_map(|l| {
        let n = l.len();
        (Just(l), proptest::collection::vec(0..n.max(1), 0..3)).prop_map(|(l, c)| nest(l, c))
    })
}

/// Any layout with 1..=4 leaves, extents 1..=6 and strides 0..=12.
pub fn any_layout() -> impl Strategy<Value = Layout> {
    nested(proptest::collection::vec((1i64..=6, 0i64..=12), 1..=4))
}

/// Layouts whose extents and strides are powers of two: composition's divisibility conditions
/// always hold among them.
pub fn pow2_layout() -> impl Strategy<Value = Layout> {
    pow2_leaves(4)
}

/// Injective layouts that satisfy complement's preconditions: the leaves, sorted by stride, each
/// start at a multiple of the span of the smaller ones; the leaves come in a random order.
pub fn complementable_layout() -> impl Strategy<Value = Layout> {
    stacked(proptest::collection::vec((1i64..=4, 1i64..=3), 1..=4))
}

/// Leaves `(extent, gap)` stacked without overlap: each stride is `gap` times the span of the
/// leaves before it; the leaves then come in a random order.
fn stacked(leaves: impl Strategy<Value = Vec<(i64, i64)>>) -> impl Strategy<Value = Layout> {
    let leaves = leaves.prop_flat_map(|v| {
        let n = v.len();
        (Just(v), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
    });
    nested(leaves.prop_map(|(v, order)| {
        let mut span = 1;
        let mut out = vec![(1, 0); v.len()];
        for (k, &(s, gap)) in v.iter().enumerate() {
            let d = span * gap;
            out[order[k]] = (s, d);
            span = d * s;
        }
        out
    }))
}

/// Power-of-two layouts whose leaves, sorted by stride, do not overlap.
pub fn complementable_pow2_layout() -> impl Strategy<Value = Layout> {
    complementable_pow2_leaves(4)
}

/// [`complementable_pow2_layout`] with at most 2 leaves, for tests that combine several layouts.
pub fn small_complementable_pow2_layout() -> impl Strategy<Value = Layout> {
    complementable_pow2_leaves(2)
}

/// [`pow2_layout`] with at most 2 leaves, for tests that combine several layouts.
pub fn small_pow2_layout() -> impl Strategy<Value = Layout> {
    pow2_leaves(2)
}

/// Power-of-two layouts of 1..=`max` leaves: extents 1..=8, strides 0 or 1..=32.
fn pow2_leaves(max: usize) -> impl Strategy<Value = Layout> {
    nested(
        proptest::collection::vec(
            (0u32..=3, prop_oneof![Just(None), (0u32..=5).prop_map(Some)]),
            1..=max,
        )
        .prop_map(|v| {
            v.into_iter()
                .map(|(s, d)| (1i64 << s, d.map_or(0, |d| 1i64 << d)))
                .collect()
        }),
    )
}

/// [`stacked`] power-of-two leaves, 1..=`max` of them: extents and gaps 1, 2 or 4.
fn complementable_pow2_leaves(max: usize) -> impl Strategy<Value = Layout> {
    stacked(
        proptest::collection::vec((0u32..=2, 0u32..=2), 1..=max)
            .prop_map(|v| v.into_iter().map(|(s, g)| (1i64 << s, 1i64 << g)).collect()),
    )
}

/// True when the leaves of `b` (extent > 1, stride != 0), sorted by stride, overlap.
pub fn overlapping(b: &Layout) -> bool {
    let mut leaves: Vec<(i64, i64)> = b
        .flat_modes()
        .into_iter()
        .filter(|&(s, d)| s > 1 && d != 0)
        .collect();
    leaves.sort_by_key(|&(s, d)| (d, s));
    leaves.windows(2).any(|w| w[1].1 < w[0].0 * w[0].1)
}

/// The image of a layout over its domain.
pub fn image(l: &Layout) -> Vec<i64> {
    let mut v = l.values();
    v.sort_unstable();
    v
}

/// `composition`: `compatible(shape(B), shape(R))` and `R(i) == A(B(i))` for all `i < size(B)`
/// with `B(i) < size(A)`; past `size(A)`, `A` is extended along the last mode of `coalesce(A)`.
pub fn check_composition(a: &Layout, b: &Layout, r: &Layout) {
    assert!(
        b.shape().compatible(r.shape()),
        "{b} not compatible with result {r}"
    );
    let ca = layouts::coalesce(a);
    for i in 0..b.size() {
        let bi = b.call(i);
        if bi < a.size() {
            assert_eq!(r.call(i), a.call(bi), "A={a} B={b} R={r} at {i}");
        }
        assert_eq!(
            r.call(i),
            ca.call(bi),
            "A={a} (coalesced {ca}) B={b} R={r} at {i}"
        );
    }
}

/// `complement`: ordered, disjoint from the image of `L` (but for 0), and together with `L` it
/// reaches the cotarget.
pub fn check_complement(l: &Layout, cotarget: i64, c: &Layout) {
    let vals = c.values();
    assert!(
        vals.windows(2).all(|w| w[0] < w[1]),
        "complement {c} of {l} not ordered"
    );
    let img = image(l);
    for &v in &vals[1..] {
        assert!(
            img.binary_search(&v).is_err(),
            "complement {c} of {l} hits {v}"
        );
    }
    let both = Layout::new(
        IntTuple::tuple([l.shape().clone(), c.shape().clone()]),
        IntTuple::tuple([l.stride().clone(), c.stride().clone()]),
    )
    .unwrap();
    assert!(
        both.cosize() >= cotarget,
        "cosize((L, C)) = {} < {cotarget}",
        both.cosize()
    );
    assert_eq!(layouts::coalesce(c), *c, "complement {c} is not coalesced");
}

/// `coalesce`: same size, same function, depth <= 1, and nothing left to merge.
pub fn check_coalesce(l: &Layout, r: &Layout) {
    assert_eq!(r.size(), l.size());
    assert!(r.depth() <= 1);
    for i in 0..l.size() {
        assert_eq!(r.call(i), l.call(i), "coalesce({l}) = {r} differs at {i}");
    }
    let modes = r.flat_modes();
    if modes.len() > 1 {
        assert!(
            modes.iter().all(|&(s, _)| s > 1),
            "{r} keeps an extent-1 mode"
        );
        assert!(
            modes.windows(2).all(|w| w[0].0 * w[0].1 != w[1].1),
            "{r} can still merge"
        );
    }
}
