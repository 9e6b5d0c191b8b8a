//! `complement`: contract over the domain, and the CuTe documentation's worked examples.

mod common;

use common::*;
use layouts::{Layout, LayoutError, complement};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Complementable layouts: the complement exists for every cotarget and meets the contract.
    #[test]
    fn complements_meet_the_contract(layout in complementable_layout(), extra in 1i64..=64) {
        let cotarget = layout.cosize() + extra - 1;
        let c = complement(&layout, cotarget).unwrap();
        check_complement(&layout, cotarget, &c);
    }

    /// Any layout: either the contract holds or the violated condition is named; a layout that
    /// repeats an offset (not injective once broadcast modes are dropped) is always refused.
    #[test]
    fn complements_meet_the_contract_or_name_the_condition(layout in any_layout(), n in 1i64..=200) {
        let img = image(&layouts::filter(&layout));
        let injective = img.windows(2).all(|w| w[0] != w[1]);
        match complement(&layout, n) {
            Ok(c) => {
                prop_assert!(injective, "complement accepted the non-injective {}", layout);
                check_complement(&layout, n, &c);
            }
            Err(LayoutError::ComplementOverlap { .. } | LayoutError::ComplementDivisibility { .. }) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    /// A layout and its complement tile the cotarget exactly when the complement rounds nothing up.
    #[test]
    fn layout_and_complement_are_a_bijection(layout in complementable_layout(), k in 1i64..=4) {
        let cotarget = layout.cosize() * k;
        let c = complement(&layout, cotarget).unwrap();
        let f = layouts::filter(&layout);
        let both = Layout::from_modes(vec![f, c]);
        if both.size() == cotarget {
            prop_assert_eq!(image(&both), (0..cotarget).collect::<Vec<_>>());
        }
    }
}

/// CuTe "02_layout_algebra", "Complement Examples".
#[test]
fn cute_doc_examples() {
    let cases = [
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ];
    for (a, n, want) in cases {
        let c = complement(&l(a), n).unwrap();
        assert_eq!(c.to_string(), want, "complement({a}, {n})");
        check_complement(&l(a), n, &c);
    }
}

#[test]
fn non_injective_layouts_are_refused_by_name() {
    let e = complement(&l("(2,2):(1,1)"), 8).unwrap_err();
    assert!(matches!(
        e,
        LayoutError::ComplementOverlap { stride: 1, span: 2 }
    ));
    assert!(e.to_string().contains("injectivity condition"));
    let e = complement(&l("(2,2):(1,3)"), 8).unwrap_err();
    assert!(matches!(
        e,
        LayoutError::ComplementDivisibility { stride: 3, span: 2 }
    ));
    assert!(matches!(
        complement(&l("4:-1"), 8),
        Err(LayoutError::NegativeStride { .. })
    ));
    assert!(matches!(
        complement(&l("4:1"), 0),
        Err(LayoutError::BadCotarget(0))
    ));
}
