//! The divides: `logical_divide` is composition with `(B, complement(B, size(A)))`, and the
//! zipped / tiled / flat forms are rearrangements of it.

mod common;

use common::*;
use layouts::{
    IntTuple, Layout, LayoutError, Tiler, complement, composition, flat_divide, logical_divide,
    tiled_divide, zipped_divide,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// `logical_divide(A, B) == composition(A, (B, complement(B, size(A))))`, whose first mode is
    /// `A ∘ B`, and the composition contract holds for the whole result.
    #[test]
    fn divide_is_composition_with_the_complement(a in pow2_layout(), b in complementable_pow2_layout()) {
        let r = logical_divide(&a, &Tiler::Layout(b.clone())).unwrap();
        let bstar = Layout::from_modes(vec![b.clone(), complement(&b, a.size()).unwrap()]);
        prop_assert_eq!(&r, &composition(&a, &bstar).unwrap());
        check_composition(&a, &bstar, &r);
        check_composition(&a, &b, &r.mode(0).unwrap());
        prop_assert!(r.size() >= a.size());
    }

    /// Any inputs: the result is the composition above, or a named precondition is reported.
    #[test]
    fn divide_meets_the_contract_or_names_the_condition(a in any_layout(), b in any_layout()) {
        match logical_divide(&a, &Tiler::Layout(b.clone())) {
            Ok(r) => {
                let bstar = Layout::from_modes(vec![b.clone(), complement(&b, a.size()).unwrap()]);
                check_composition(&a, &bstar, &r);
            }
            Err(
                LayoutError::ComplementOverlap { .. }
                | LayoutError::ComplementDivisibility { .. }
                | LayoutError::StrideDivisibility { .. }
                | LayoutError::ShapeDivisibility { .. }
                | LayoutError::CompositionOverlap { .. },
            ) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    /// By-mode tilers: zipped, tiled and flat divides hold the same values in the same order;
    /// logical divide holds the same values with the tile and rest modes interleaved.
    #[test]
    fn divide_forms_are_rearrangements(
        a0 in small_pow2_layout(), a1 in small_pow2_layout(),
        b0 in small_complementable_pow2_layout(), b1 in small_complementable_pow2_layout(),
    ) {
        let a = Layout::from_modes(vec![a0, a1]);
        let t = Tiler::Modes(vec![Tiler::Layout(b0.clone()), Tiler::Layout(b1.clone())]);
        let logical = logical_divide(&a, &t).unwrap();
        let zipped = zipped_divide(&a, &t).unwrap();
        let tiled = tiled_divide(&a, &t).unwrap();
        let flat = flat_divide(&a, &t).unwrap();
        prop_assert_eq!(zipped.values(), tiled.values());
        prop_assert_eq!(zipped.values(), flat.values());
        prop_assert_eq!(image(&zipped), image(&logical));
        prop_assert_eq!(zipped.mode(0).unwrap().size(), b0.size() * b1.size());
        prop_assert_eq!(tiled.rank(), 3);
        prop_assert_eq!(flat.rank(), 4);
        // Mode i of the logical divide is the divide of mode i.
        for (i, b) in [b0, b1].into_iter().enumerate() {
            let m = logical_divide(&a.mode(i).unwrap(), &Tiler::Layout(b)).unwrap();
            prop_assert_eq!(logical.mode(i).unwrap(), m);
        }
    }
}

/// CuTe "02_layout_algebra", "Logical Divide 1-D Example" and "Logical Divide 2-D Example",
/// "Zipped, Tiled, Flat Divides".
#[test]
fn cute_doc_examples() {
    let r = logical_divide(&l("(4,2,3):(2,1,8)"), &Tiler::Layout(l("4:2"))).unwrap();
    assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");

    let a = l("(9,(4,8)):(59,(13,1))");
    let t = Tiler::Modes(vec![
        Tiler::Layout(l("3:3")),
        Tiler::Layout(l("(2,4):(1,8)")),
    ]);
    type Divide = fn(&Layout, &Tiler) -> Result<Layout, LayoutError>;
    let cases: [(Divide, &str); 4] = [
        (
            logical_divide,
            "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))",
        ),
        (
            zipped_divide,
            "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))",
        ),
        (tiled_divide, "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"),
        (flat_divide, "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"),
    ];
    for (divide, want) in cases {
        assert_eq!(divide(&a, &t).unwrap().to_string(), want);
    }
}

/// A shape as a tiler divides each mode by `n:1`.
#[test]
fn shape_tiler() {
    let r = zipped_divide(
        &l("(8,6):(1,8)"),
        &Tiler::from_shape(&IntTuple::flat(&[2, 3])),
    )
    .unwrap();
    assert_eq!(r.to_string(), "((2,3),(4,2)):((1,8),(2,24))");
}
