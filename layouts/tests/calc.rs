//! The calculator: CuTe notation round trips, calls agree with the library functions, and no
//! text makes it panic.

mod common;

use common::*;
use layouts::calc::{CalcError, evaluate};
use layouts::{Layout, Tiler, complement, composition, logical_divide};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// What `Display` prints, the calculator reads back.
    #[test]
    fn notation_round_trips(l in any_layout()) {
        prop_assert_eq!(evaluate(&l.to_string()).unwrap(), l);
    }

    /// A call evaluates to the library function's result, or to its error.
    #[test]
    fn calls_agree_with_the_library(a in any_layout(), b in any_layout(), n in 1i64..100) {
        let via = |s: String| evaluate(&s).map_err(|e| e.to_string());
        prop_assert_eq!(
            via(format!("composition({a}, {b})")),
            composition(&a, &b).map_err(|e| e.to_string())
        );
        prop_assert_eq!(
            via(format!("complement({a}, {n})")).ok(),
            complement(&a, n).ok()
        );
        prop_assert_eq!(
            via(format!("logical_divide({a}, {b})")).ok(),
            logical_divide(&a, &Tiler::Layout(b.clone())).ok()
        );
    }

    /// Arbitrary text is an error or a layout, never a panic.
    #[test]
    fn arbitrary_text_never_panics(s in "[-(),:<>0-9a-z_ ]{0,40}") {
        let _ = evaluate(&s);
    }

    /// Arbitrary text in the alphabet of calls, never a panic.
    #[test]
    fn arbitrary_calls_never_panic(
        f in prop::sample::select(vec!["coalesce", "complement", "composition", "logical_divide",
            "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "blocked_product",
            "raked_product", "zipped_product", "tiled_product", "right_inverse", "left_inverse",
            "filter", "make_layout", "make_ordered_layout"]),
        args in "[-(),:<>0-9 ]{0,30}",
    ) {
        let _ = evaluate(&format!("{f}({args})"));
    }
}

#[test]
fn errors_name_the_place_or_the_condition() {
    assert!(matches!(
        evaluate("(4,2"),
        Err(CalcError::Syntax { column: 5, .. })
    ));
    assert!(matches!(
        evaluate("frob(4:1)"),
        Err(CalcError::UnknownFunction(_))
    ));
    assert!(matches!(
        evaluate("complement(4:1, 8, 9)"),
        Err(CalcError::BadArgument { .. })
    ));
    assert!(matches!(
        evaluate("right_inverse(<4:1>)"),
        Err(CalcError::BadArgument { .. })
    ));
    let e = evaluate("composition((4,8):(8,1), 6:1)").unwrap_err();
    assert!(
        e.to_string().starts_with("composition: shape divisibility"),
        "{e}"
    );
    assert_eq!(
        evaluate("(4,8)").unwrap(),
        "(4,8):(1,4)".parse::<Layout>().unwrap()
    );
    assert_eq!(
        evaluate("make_ordered_layout((2,3,4), (1,2,0))")
            .unwrap()
            .to_string(),
        "(2,3,4):(4,8,1)"
    );
    assert_eq!(
        evaluate("coalesce((2,(1,6)):(1,(6,2)), (1,1))")
            .unwrap()
            .to_string(),
        "(2,6):(1,2)"
    );
    assert_eq!(
        evaluate("filter((4,(2,3)):(1,(0,4)))").unwrap().to_string(),
        "12:1"
    );
}
