//! `composition`: contract over the domain, and the CuTe documentation's worked examples.

mod common;

use common::*;
use layouts::{IntTuple, Layout, LayoutError, Tiler, composition, composition_tiler};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Among power-of-two layouts the divisibility conditions always hold: composition succeeds
    /// and meets its post-conditions.
    #[test]
    fn pow2_compositions_meet_the_contract(a in pow2_layout(), b in pow2_layout()) {
        match composition(&a, &b) {
            Ok(r) => check_composition(&a, &b, &r),
            Err(LayoutError::CompositionOverlap { .. }) => prop_assert!(overlapping(&b)),
            Err(e) => panic!("unexpected error {e} for {a} o {b}"),
        }
    }

    /// With `B`'s modes disjoint, composition with power-of-two layouts never fails.
    #[test]
    fn pow2_compositions_with_disjoint_modes_succeed(a in pow2_layout(), b in complementable_pow2_layout()) {
        let r = composition(&a, &b).unwrap();
        check_composition(&a, &b, &r);
    }

    /// Any inputs: either the contract holds or a named divisibility condition is reported.
    #[test]
    fn compositions_meet_the_contract_or_name_the_condition(a in any_layout(), b in any_layout()) {
        match composition(&a, &b) {
            Ok(r) => check_composition(&a, &b, &r),
            Err(LayoutError::StrideDivisibility { .. } | LayoutError::ShapeDivisibility { .. }) => {}
            Err(LayoutError::CompositionOverlap { .. }) => prop_assert!(overlapping(&b)),
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    /// A tuple tiler composes mode by mode.
    #[test]
    fn tiler_composition_is_by_mode(a in pow2_layout(), b0 in pow2_layout(), b1 in pow2_layout()) {
        let a = Layout::from_modes(vec![a.clone(), a]);
        let t = Tiler::Modes(vec![Tiler::Layout(b0.clone()), Tiler::Layout(b1.clone())]);
        let Ok(r) = composition_tiler(&a, &t) else {
            prop_assert!(overlapping(&b0) || overlapping(&b1));
            return Ok(());
        };
        check_composition(&a.mode(0).unwrap(), &b0, &r.mode(0).unwrap());
        check_composition(&a.mode(1).unwrap(), &b1, &r.mode(1).unwrap());
    }
}

/// Each `(a, b, want)`: `a ∘ b` is `want` and meets the composition contract.
fn check_cases(cases: &[(&str, &str, &str)]) {
    for &(a, b, want) in cases {
        let r = composition(&l(a), &l(b)).unwrap();
        assert_eq!(r.to_string(), want, "{a} o {b}");
        check_composition(&l(a), &l(b), &r);
    }
}

/// CuTe "02_layout_algebra", "Composition": its worked examples.
#[test]
fn cute_doc_examples() {
    let cases = [
        ("20:2", "(5,4):(4,1)", "(5,4):(8,2)"),
        ("(10,2):(16,4)", "(5,4):(1,5)", "(5,(2,2)):(16,(80,4))"),
        ("(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)"),
    ];
    check_cases(&cases);
}

/// Worked by hand: a compact A is the identity on B; a row-major A reorders a column-major B
/// (mode 8:1 splits over A's (4,8) into (4,2):(8,1), mode 4:8 skips A's first mode: 4:2).
#[test]
fn hand_worked_examples() {
    let cases = [
        ("(4,2):(1,4)", "(2,2):(2,1)", "(2,2):(2,1)"),
        ("(4,8):(8,1)", "(8,4):(1,8)", "((4,2),4):((8,1),2)"),
    ];
    check_cases(&cases);
}

/// CuTe "02_layout_algebra", "By-mode Composition": a tiler `<3:4, 8:2>` and the shape `(3, 8)`.
#[test]
fn cute_doc_tiler_examples() {
    let a = l("(12,(4,8)):(59,(13,1))");
    let t = Tiler::Modes(vec![Tiler::Layout(l("3:4")), Tiler::Layout(l("8:2"))]);
    assert_eq!(
        composition_tiler(&a, &t).unwrap().to_string(),
        "(3,(2,4)):(236,(26,1))"
    );
    let shape = Tiler::from_shape(&IntTuple::flat(&[3, 8]));
    assert_eq!(
        composition_tiler(&a, &shape).unwrap().to_string(),
        "(3,(4,2)):(59,(13,1))"
    );
}

#[test]
fn violated_conditions_are_named() {
    // Each B of A = (4,8):(8,1) that breaks a condition, and the condition's name.
    for (b, condition) in [
        ("2:3", "stride divisibility"),
        ("6:1", "shape divisibility"),
    ] {
        let e = composition(&l("(4,8):(8,1)"), &l(b)).unwrap_err();
        let named = match e {
            LayoutError::StrideDivisibility {
                stride: 3,
                extent: 4,
                ..
            } => "stride divisibility",
            LayoutError::ShapeDivisibility {
                shape: 6,
                available: 4,
                ..
            } => "shape divisibility",
            _ => "",
        };
        assert_eq!(named, condition, "{b}: {e}");
        assert!(e.to_string().contains(condition), "{b}: {e}");
    }
    let e = composition_tiler(&l("8:1"), &Tiler::from_shape(&IntTuple::flat(&[2, 2]))).unwrap_err();
    assert!(matches!(
        e,
        LayoutError::RankMismatch {
            tiler: 2,
            layout: 1,
            ..
        }
    ));
}

/// Results that outgrow the bounds are errors, not overflows.
#[test]
fn huge_inputs_are_refused() {
    assert!(matches!(
        Layout::int(4, i64::MIN),
        Err(LayoutError::TooLarge { .. })
    ));
    // B reaches far past A: the last mode of A extends to a stride of 2^29 * 2^20.
    let a = l("(2,4):(1,1048576)");
    let b = l("2:1073741824");
    assert!(matches!(
        composition(&a, &b),
        Err(LayoutError::TooLarge { what: "stride", .. })
    ));
    let e = layouts::calc::evaluate("complement(4:1, (99999999999,99999999999))").unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}
