//! `coalesce`, `coalesce_by_mode` and `filter`: contracts over the domain and CuTe examples.

mod common;

use common::*;
use layouts::{IntTuple, Layout, coalesce, coalesce_by_mode, filter};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn coalesce_keeps_function_and_size(layout in any_layout()) {
        check_coalesce(&layout, &coalesce(&layout));
    }

    #[test]
    fn coalesce_is_idempotent(layout in any_layout()) {
        let once = coalesce(&layout);
        prop_assert_eq!(coalesce(&once), once);
    }

    /// By mode: each top-level mode keeps its function and size, and the rank is kept.
    #[test]
    fn coalesce_by_mode_keeps_each_mode(a in any_layout(), b in any_layout()) {
        let layout = Layout::from_modes(vec![a, b]);
        let r = coalesce_by_mode(&layout, &IntTuple::flat(&[1, 1])).unwrap();
        prop_assert_eq!(r.rank(), 2);
        for i in 0..2 {
            check_coalesce(&layout.mode(i).unwrap(), &r.mode(i).unwrap());
        }
    }

    /// Filter keeps the image and drops every broadcast mode.
    #[test]
    fn filter_keeps_the_image(layout in any_layout()) {
        let f = filter(&layout);
        let mut img = image(&layout);
        img.dedup();
        let mut fimg = image(&f);
        fimg.dedup();
        prop_assert_eq!(img, fimg);
        prop_assert!(f.size() == 1 || f.flat_modes().iter().all(|&(_, d)| d != 0));
    }
}

/// CuTe "02_layout_algebra", "Coalesce" and "By-mode Coalesce".
#[test]
fn cute_doc_examples() {
    assert_eq!(coalesce(&l("(2,(1,6)):(1,(6,2))")).to_string(), "12:1");
    let by_mode = coalesce_by_mode(&l("(2,(1,6)):(1,(6,2))"), &IntTuple::flat(&[1, 1])).unwrap();
    assert_eq!(by_mode.to_string(), "(2,6):(1,2)");
    assert_eq!(coalesce(&l("(4,(1,1)):(1,(3,7))")).to_string(), "4:1");
    assert_eq!(coalesce(&l("(1,1):(5,7)")).to_string(), "1:0");
    assert_eq!(coalesce(&l("(2,4):(4,1)")).to_string(), "(2,4):(4,1)");
}

#[test]
fn by_mode_profile_longer_than_the_layout_is_refused() {
    let e = coalesce_by_mode(&l("(2,3):(1,2)"), &IntTuple::flat(&[1, 1, 1])).unwrap_err();
    assert!(matches!(
        e,
        layouts::LayoutError::RankMismatch {
            tiler: 3,
            layout: 2,
            ..
        }
    ));
}
