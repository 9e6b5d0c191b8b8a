//! The checked register retype (PTX ISA 5.2.1, 6.1): a register is read as another type only
//! within its declaration class and where the declared type agrees.

use ptx_isa::{ErrorKind, FunctionBuilder, Module, RegClass, RegRef, ScalarType, Target, ty};

fn builder() -> FunctionBuilder {
    Module::new(Target::Sm90a).entry("k")
}

#[test]
fn same_class_reads_are_allowed() {
    let mut k = builder();
    let r = k.reg::<ty::U32>();
    let s = r.retype::<ty::S32>().unwrap();
    assert_eq!((s.index(), s.as_ref().class), (r.index(), RegClass::B32));
    assert_eq!(r.retype::<ty::B32>().unwrap().as_ref(), r.as_ref());
    let h = k.reg::<ty::Bf16x2>();
    assert_eq!(h.retype::<ty::F16x2>().unwrap().as_ref(), h.as_ref());
    let half = k.reg::<ty::F16>();
    assert_eq!(half.retype::<ty::Bf16>().unwrap().as_ref(), half.as_ref());
    let d = k.reg::<ty::U64>();
    assert_eq!(d.retype::<ty::B64>().unwrap().as_ref(), d.as_ref());
    let f = k.reg::<ty::F32>();
    assert_eq!(f.retype::<ty::F32>().unwrap(), f);
}

#[test]
fn another_class_is_another_register_and_is_refused() {
    let mut k = builder();
    // %hh0 read as .b32 would name %r0, a different register.
    let h = k.reg::<ty::Bf16x2>();
    let e = h.retype::<ty::B32>().unwrap_err();
    assert_eq!((e.reg, e.to), (h.as_ref(), ScalarType::B32));
    // An .f32 register is not a .b32 one (that is a mov).
    let f = k.reg::<ty::F32>();
    assert!(f.retype::<ty::U32>().is_err());
    // A 16-bit integer register is not a half.
    let s = k.reg::<ty::U16>();
    assert!(s.retype::<ty::F16>().is_err());
    let err: ptx_isa::Error = s.retype::<ty::F16>().unwrap_err().into();
    assert_eq!(err.kind, ErrorKind::OperandType);
    assert!(err.message.contains("%rs0"), "{}", err.message);
}

#[test]
fn untyped_references_take_the_same_rule() {
    let r = RegRef {
        class: RegClass::H32,
        index: 7,
    };
    assert_eq!(r.retype::<ty::Bf16x2>().unwrap().as_ref(), r);
    assert!(r.retype::<ty::F32>().is_err());
    let p = RegRef {
        class: RegClass::Pred,
        index: 0,
    };
    assert!(p.retype::<ty::Pred>().is_ok());
    assert!(p.retype::<ty::B16>().is_err());
}
