//! The kernel element types: the alternate formats PTX names (PTX ISA 5.2.3, 5.2.5) with their
//! widths, and the register marker types agreeing with the class each type lives in.

use ptx_isa::reg::ty::RegType;
use ptx_isa::{PtxVersion, RegClass, ScalarType, ty};

#[test]
fn sub_byte_formats_are_types_with_their_widths() {
    use ScalarType::*;
    for (t, name, bits, whole) in [
        (E2m1, "e2m1", 4, None),
        (E2m3, "e2m3", 6, None),
        (E3m2, "e3m2", 6, None),
        (E2m1x2, "e2m1x2", 8, Some(1)),
        (E2m3x2, "e2m3x2", 16, Some(2)),
        (E3m2x2, "e3m2x2", 16, Some(2)),
        (E4m3, "e4m3", 8, Some(1)),
        (Bf16, "bf16", 16, Some(2)),
        (Tf32, "tf32", 32, Some(4)),
        (Pred, "pred", 1, None),
    ] {
        assert_eq!(t.name(), name);
        assert_eq!(format!(".{name}").parse::<ScalarType>().unwrap(), t);
        assert_eq!((t.bits(), t.whole_bytes()), (bits, whole), "{t}");
    }
    assert!(E2m1.is_float() && E2m3x2.is_float());
    assert_eq!(E2m1x2.min_ptx(), "8.6".parse::<PtxVersion>().unwrap());
}

fn class_agrees<T: RegType>() {
    assert_eq!(RegClass::for_type(T::TYPE), Some(T::CLASS), "{}", T::TYPE);
}

#[test]
fn marker_types_live_in_their_types_class() {
    class_agrees::<ty::F16>();
    class_agrees::<ty::Bf16>();
    class_agrees::<ty::F16x2>();
    class_agrees::<ty::Bf16x2>();
    class_agrees::<ty::E4m3x2>();
    class_agrees::<ty::E5m2x2>();
    class_agrees::<ty::E2m3x2>();
    class_agrees::<ty::E3m2x2>();
    class_agrees::<ty::Tf32>();
    class_agrees::<ty::F32>();
    // Single FP8/FP6/FP4 values and FP4 pairs have no register of their own; the FP8 markers
    // (the element type of FP8 data in memory) read one value as the low byte of a `%rs`.
    assert_eq!(<ty::E4m3 as RegType>::CLASS, RegClass::B16);
    assert_eq!(<ty::E5m2 as RegType>::TYPE, ScalarType::E5m2);
    for t in [
        ScalarType::E4m3,
        ScalarType::E5m2,
        ScalarType::E2m1,
        ScalarType::E2m1x2,
    ] {
        assert_eq!(RegClass::for_type(t), None, "{t}");
    }
}
