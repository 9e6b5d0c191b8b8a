//! Tile layouts with named axes: notation round trips, apply, storage, span, slicing, tiling,
//! canonicalisation, CuTe conversion, and the tcgen05 data paths.

use layouts::fragment::tcgen05::{Datapath, datapath};
use layouts::tile::{Axis, Iter, TileError, TileLayout, tile};
use layouts::{Layout, coalesce};
use proptest::prelude::*;

fn t(s: &str) -> TileLayout {
    s.parse().unwrap()
}

/// All coordinates of a tile, row-major.
fn coords(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &e in shape {
        out = out
            .into_iter()
            .flat_map(|c| (0..e).map(move |i| [c.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

#[test]
fn notation_round_trips() {
    for s in [
        "S[(4, 8):(1, 4)]",
        "S[(128, 8):(1@tid_in_wg, 1)]",
        "S[8:1]",
        "S[((4, 16)):((32@TLane, 1@TLane))]",
        "S[((4, 16), 32):((32@TLane, 1@TLane), 1@TCol)]",
        "S[(32, 4):(1@laneid, 1)] + R[4:1@wid_in_wg] + 8 + 16@TCol",
    ] {
        assert_eq!(t(s).to_string(), s);
    }
    assert!(matches!(
        "S[(4, 8):(1)]".parse::<TileLayout>(),
        Err(TileError::Syntax { .. })
    ));
    assert!(matches!(
        "S[4:1@nowhere]".parse::<TileLayout>(),
        Err(TileError::UnknownAxis(_))
    ));
    assert!(matches!(
        "S[0:1]".parse::<TileLayout>(),
        Err(TileError::Malformed(_))
    ));
}

/// Seed 000: `B[i, j]` over a (4, 8) buffer lowers to these offsets.
#[test]
fn seed_buffer_layouts() {
    let col = t("S[(4, 8):(1, 4)]");
    let stride16 = t("S[(4, 8):(16, 1)]");
    for i in 0..4 {
        for j in 0..8 {
            assert_eq!(col.apply(&[i, j]).unwrap()[0].get(Axis::M), j * 4 + i);
            assert_eq!(stride16.apply(&[i, j]).unwrap()[0].get(Axis::M), i * 16 + j);
        }
    }
    assert!(col.apply(&[4, 0]).is_err());
}

#[test]
fn replicas_give_a_set() {
    let l = t("S[(32, 4):(1@laneid, 1)] + R[4:1@wid_in_wg]");
    let points = l.apply(&[3, 2]).unwrap();
    assert_eq!(points.len(), 4);
    let warps: Vec<i64> = points.iter().map(|p| p.get(Axis::WidInWg)).collect();
    assert_eq!(warps, [0, 1, 2, 3]);
    assert!(
        points
            .iter()
            .all(|p| p.get(Axis::LaneId) == 3 && p.get(Axis::M) == 2)
    );
    assert_eq!(l.storage().to_string(), "S[4:1]");
    assert_eq!(l.span(Axis::LaneId), 32);
    assert_eq!(l.span(Axis::WidInWg), 4);
}

#[test]
fn slicing_and_tiling() {
    let l = t("S[((2, 4), 8):((1, 16), 2)]");
    let s = l.slice(0, 4, 8).unwrap();
    assert_eq!(s.shape(), [4, 8]);
    for c in coords(&s.shape()) {
        assert_eq!(s.apply(&c).unwrap(), l.apply(&[c[0] + 4, c[1]]).unwrap());
    }
    assert!(matches!(l.slice(0, 3, 6), Err(TileError::BadSlice { .. })));
    // Rows 1..3 lie inside the inner iterator: a valid slice.
    assert_eq!(l.slice(0, 1, 3).unwrap().shape(), [2, 8]);
    let inner = t("S[(2, 2):(2, 1)]");
    let outer = t("S[(2, 3):(3, 1)]");
    let r = tile(&inner, &outer).unwrap();
    assert_eq!(r.shape(), [4, 6]);
    for x in coords(&[2, 3]) {
        for y in coords(&[2, 2]) {
            let at = [x[0] * 2 + y[0], x[1] * 2 + y[1]];
            let want = outer.apply(&x).unwrap()[0].get(Axis::M) * 4
                + inner.apply(&y).unwrap()[0].get(Axis::M);
            assert_eq!(r.apply(&at).unwrap()[0].get(Axis::M), want);
        }
    }
}

#[test]
fn canonical_form() {
    let l = t("S[((1, 4, 8), 2):((7, 8, 1), 1@laneid)]");
    assert_eq!(l.canonicalize().to_string(), "S[(32, 2):(1, 1@laneid)]");
    for c in coords(&l.shape()) {
        assert_eq!(l.apply(&c).unwrap(), l.canonicalize().apply(&c).unwrap());
    }
}

/// PTX ISA 9.7.16.10.5: data paths D (M=128) and F (M=64), and cta_group::2 layouts A and B.
#[test]
fn tcgen05_datapaths() {
    let d = datapath(Datapath::D, 128, 16).unwrap();
    let f = datapath(Datapath::F, 64, 16).unwrap();
    let b = datapath(Datapath::B, 64, 16).unwrap();
    let a = datapath(Datapath::A, 128, 16).unwrap();
    for i in 0..128 {
        for j in 0..16 {
            let p = &d.apply(&[i, j]).unwrap()[0];
            assert_eq!((p.get(Axis::TLane), p.get(Axis::TCol)), (i, j));
            assert_eq!(a.apply(&[i, j]).unwrap(), d.apply(&[i, j]).unwrap());
            if i < 64 {
                let p = &f.apply(&[i, j]).unwrap()[0];
                assert_eq!(
                    (p.get(Axis::TLane), p.get(Axis::TCol)),
                    (32 * (i / 16) + i % 16, j)
                );
                let p = &b.apply(&[i, j]).unwrap()[0];
                assert_eq!(
                    (p.get(Axis::TLane), p.get(Axis::TCol)),
                    (i + 64 * (j / 8), j % 8)
                );
            }
        }
    }
    assert!(datapath(Datapath::F, 128, 16).is_err());
    assert!(datapath(Datapath::B, 64, 15).is_err());
}

/// Memory tile layouts of `dims` dimensions, each of one or two iterators (extent 1-4, stride
/// 0-9).
fn tile_of(dims: impl Into<proptest::collection::SizeRange>) -> impl Strategy<Value = TileLayout> {
    let dim = proptest::collection::vec((1i64..=4, 0i64..=9), 1..=2);
    proptest::collection::vec(dim, dims).prop_map(|dims| {
        TileLayout::new(
            dims.into_iter()
                .map(|d| d.into_iter().map(|(e, s)| Iter::m(e, s)).collect())
                .collect(),
            vec![],
            [],
        )
        .unwrap()
    })
}

fn memory_tile() -> impl Strategy<Value = TileLayout> {
    tile_of(1..=3)
}

proptest! {
    /// Tile layout -> CuTe layout -> tile layout keeps the function; CuTe evaluates the same
    /// coordinates (the dimension's coordinate split row-major is CuTe's colexicographic split
    /// of the reversed iterators).
    #[test]
    fn cute_conversion_keeps_the_function(l in memory_tile()) {
        let c = l.to_cute().unwrap();
        let shape = l.shape();
        let back = TileLayout::from_cute(&c, Axis::M).unwrap();
        for x in coords(&shape) {
            let m = l.apply(&x).unwrap()[0].get(Axis::M);
            let coord = layouts::IntTuple::flat(&x).unwrap_single();
            prop_assert_eq!(c.eval(&coord).unwrap(), m);
            prop_assert_eq!(back.apply(&x).unwrap()[0].get(Axis::M), m);
        }
    }

    /// Canonicalisation keeps the function and never grows.
    #[test]
    fn canonical_form_keeps_the_function(l in memory_tile()) {
        let c = l.canonicalize();
        for x in coords(&l.shape()) {
            prop_assert_eq!(c.apply(&x).unwrap(), l.apply(&x).unwrap());
        }
        prop_assert!(c.dims().iter().flatten().count() <= l.dims().iter().flatten().count());
        let _ = coalesce(&Layout::int(1, 0).unwrap());
    }

    /// The notation reads back what it prints.
    #[test]
    fn notation_round_trips_over_the_domain(l in memory_tile()) {
        prop_assert_eq!(t(&l.to_string()), l);
    }
}

#[test]
fn huge_layouts_are_refused_not_overflowed() {
    for s in [
        "S[(9999999999, 9999999999):(1, 1)]",
        "S[4:9223372036854775807]",
        "S[4:1] + 9223372036854775807",
        "S[(65536, 65536):(1, 65536)]",
    ] {
        assert!(
            matches!(s.parse::<TileLayout>(), Err(TileError::Malformed(_))),
            "{s}"
        );
    }
    assert!(matches!(
        "S[4:99999999999999999999]".parse::<TileLayout>(),
        Err(TileError::Syntax { .. })
    ));
}

fn two_dim_tile() -> impl Strategy<Value = TileLayout> {
    tile_of(2)
}

proptest! {
    /// A slice that is accepted is the shifted view; one that is refused names the condition.
    #[test]
    fn slices_are_shifted_views(l in memory_tile(), dim in 0usize..3, start in 0i64..16, len in 1i64..16) {
        let dim = dim % l.shape().len();
        match l.slice(dim, start, start + len) {
            Ok(s) => {
                prop_assert_eq!(s.shape()[dim], len);
                for x in coords(&s.shape()) {
                    let mut y = x.clone();
                    y[dim] += start;
                    prop_assert_eq!(s.apply(&x).unwrap(), l.apply(&y).unwrap());
                }
            }
            Err(TileError::BadSlice { .. }) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }

    /// Tiling places copies of the inner layout at the outer layout's positions, scaled by the
    /// inner span.
    #[test]
    fn tiling_meets_the_contract(inner in two_dim_tile(), outer in two_dim_tile()) {
        let r = tile(&inner, &outer).unwrap();
        let (ishape, oshape) = (inner.shape(), outer.shape());
        prop_assert_eq!(r.shape(), vec![oshape[0] * ishape[0], oshape[1] * ishape[1]]);
        let span = inner.span(Axis::M);
        for x in coords(&oshape) {
            for y in coords(&ishape) {
                let at = [x[0] * ishape[0] + y[0], x[1] * ishape[1] + y[1]];
                let want = outer.apply(&x).unwrap()[0].get(Axis::M) * span + inner.apply(&y).unwrap()[0].get(Axis::M);
                prop_assert_eq!(r.apply(&at).unwrap()[0].get(Axis::M), want);
            }
        }
    }
}

#[test]
fn grouping_by_a_buffer_shape() {
    let l = t("S[(2, 64, 8):(64@tid_in_wg, 1@tid_in_wg, 1)]");
    let g = l.group_by(&[128, 8]).unwrap();
    assert_eq!(g.shape(), [128, 8]);
    let flat = l.group_by(&[1024]).unwrap();
    for r in 0..128 {
        for c in 0..8 {
            assert_eq!(g.apply(&[r, c]).unwrap(), flat.apply(&[r * 8 + c]).unwrap());
        }
    }
    assert!(matches!(
        l.group_by(&[64, 16]),
        Err(TileError::Malformed(_))
    ));
    assert!(matches!(
        l.group_by(&[128, 4]),
        Err(TileError::Malformed(_))
    ));
}

proptest! {
    /// Arbitrary text is a tile layout or an error, never a panic.
    #[test]
    fn arbitrary_notation_never_panics(s in "S\\[[-()0-9@a-zA-Z_, :]{0,30}\\]( \\+ [-0-9@a-zA-Z_R\\[\\]():, ]{0,12})?") {
        let _ = s.parse::<TileLayout>();
    }
}

#[test]
fn extreme_indices_do_not_panic() {
    let l: Layout = "(4,2):(2,1000)".parse().unwrap();
    let _ = l.call(i64::MAX);
    let _ = l.call(i64::MIN);
}
