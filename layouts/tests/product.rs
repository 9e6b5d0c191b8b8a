//! The products: `logical_product(A, B) == (A, complement(A, size(A)*cosize(B)) ∘ B)`, and the
//! blocked / raked / zipped / tiled rearrangements.

mod common;

use common::*;
use layouts::{
    IntTuple, Layout, LayoutError, Tiler, blocked_product, complement, composition,
    logical_product, raked_product, tiled_product, zipped_product,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Mode 0 is `A`; mode 1 is the complement of `A` composed with `B`; an injective `A` and
    /// injective `B` give an injective product.
    #[test]
    fn logical_product_meets_the_contract(a in small_complementable_pow2_layout(), b in complementable_pow2_layout()) {
        let r = logical_product(&a, &Tiler::Layout(b.clone())).unwrap();
        prop_assert_eq!(r.mode(0).unwrap(), a.clone());
        prop_assert_eq!(r.size(), a.size() * b.size());
        let c = complement(&a, a.size() * b.cosize()).unwrap();
        check_composition(&c, &b, &r.mode(1).unwrap());
        let img = image(&r);
        prop_assert!(img.windows(2).all(|w| w[0] != w[1]), "{} not injective", r);
    }

    /// Blocked and raked products hold the same offsets as the logical product of the padded
    /// layouts, with max(rank(A), rank(B)) modes `(A_i, C_i)` (swapped for raked).
    #[test]
    fn blocked_and_raked_are_rearrangements(a in small_complementable_pow2_layout(), b in small_complementable_pow2_layout()) {
        let r = a.rank().max(b.rank());
        let logical = logical_product(&a.append_to_rank(r), &Tiler::Layout(b.append_to_rank(r))).unwrap();
        let blocked = blocked_product(&a, &b).unwrap();
        let raked = raked_product(&a, &b).unwrap();
        prop_assert_eq!(image(&blocked), image(&logical));
        prop_assert_eq!(image(&raked), image(&logical));
        // Rank 1: the result is the single mode (A, C) itself.
        let modes = |x: &Layout| if r == 1 { vec![x.clone()] } else { x.modes() };
        prop_assert_eq!(modes(&blocked).len(), r);
        for (bm, rm) in modes(&blocked).into_iter().zip(modes(&raked)) {
            prop_assert_eq!(bm.mode(0).unwrap(), rm.mode(1).unwrap());
            prop_assert_eq!(bm.mode(1).unwrap(), rm.mode(0).unwrap());
        }
    }

    /// By-mode tilers: zipped and tiled products hold the same values in the same order.
    #[test]
    fn zipped_and_tiled_agree(
        a0 in small_complementable_pow2_layout(), a1 in small_complementable_pow2_layout(),
        b0 in small_complementable_pow2_layout(), b1 in small_complementable_pow2_layout(),
    ) {
        let a = Layout::from_modes(vec![a0, a1]);
        let t = Tiler::Modes(vec![Tiler::Layout(b0), Tiler::Layout(b1)]);
        let logical = logical_product(&a, &t).unwrap();
        let zipped = zipped_product(&a, &t).unwrap();
        let tiled = tiled_product(&a, &t).unwrap();
        prop_assert_eq!(zipped.values(), tiled.values());
        prop_assert_eq!(image(&zipped), image(&logical));
    }
}

/// CuTe "02_layout_algebra", "Logical Product" and "Blocked and Raked Products" examples.
#[test]
fn cute_doc_examples() {
    let r = logical_product(&l("(2,2):(4,1)"), &Tiler::Layout(l("6:1"))).unwrap();
    assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
    let tile = l("(2,2):(1,2)");
    let grid = l("(3,4):(4,1)");
    type Product = fn(&Layout, &Layout) -> Result<Layout, LayoutError>;
    let blocked: [(Product, &str); 2] = [
        (blocked_product, "((2,3),(2,4)):((1,16),(2,4))"),
        (raked_product, "((3,2),(4,2)):((16,1),(4,2))"),
    ];
    for (product, want) in blocked {
        assert_eq!(product(&tile, &grid).unwrap().to_string(), want);
    }
    // By-mode product with a shape: mode i of A times `n_i:1`, worked by hand:
    // 2:1 x 3:1 = (2,3):(1,2); 2:2 x 4:1 = (2,(2,2)):(2,(1,4)) as complement(2:2, 8) = (2,2):(1,4).
    let t = Tiler::from_shape(&IntTuple::flat(&[3, 4]));
    assert_eq!(
        zipped_product(&tile, &t).unwrap().to_string(),
        "((2,2),(3,(2,2))):((1,2),(2,(1,4)))"
    );
    assert_eq!(
        tiled_product(&tile, &t).unwrap().to_string(),
        "((2,2),3,(2,2)):((1,2),2,(1,4))"
    );
    // The rest mode is complement(A) ∘ B.
    let c = complement(&l("(2,2):(4,1)"), 24).unwrap();
    assert_eq!(
        composition(&c, &l("6:1")).unwrap().to_string(),
        "(2,3):(2,8)"
    );
}
