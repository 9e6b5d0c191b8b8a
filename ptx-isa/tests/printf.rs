//! Device printf through `vprintf`: the argument buffer's layout (C varargs promotion, natural
//! alignment), the prototype and the format string, each kernel assembled by ptxas.

mod support;

use ptx_isa::builder::{CmpOp, PrintfArg};
use ptx_isa::{ErrorKind, Module, SpecialReg, Target, ty};

#[test]
fn every_argument_type_packs_and_assembles() {
    for target in [Target::Sm80, Target::Sm90a] {
        let lines = support::body(target, |m, k| {
            let fmt = m.printf_format("h=%hd u=%u i=%d f=%f d=%g l=%lld p=%p\n")?;
            let h = k.reg::<ty::S16>();
            k.mov(h, -3i16)?;
            let u = k.sreg_u32(SpecialReg::Tid(ptx_isa::Dim::X))?;
            let i = k.reg::<ty::S32>();
            k.mov(i, -7i32)?;
            let (f, d) = (k.reg::<ty::F32>(), k.reg::<ty::F64>());
            k.mov(f, 1.5f32)?;
            k.mov(d, 2.25f64)?;
            let l = k.reg::<ty::S64>();
            k.mov(l, -1i64)?;
            let p = k.reg::<ty::U64>();
            k.mov(p, 0x1000u64)?;
            // Only thread 0 prints.
            let (first, skip) = (k.pred(), k.label());
            k.setp(CmpOp::Eq, first, u, 0u32)?;
            k.unless(first).bra(skip)?;
            let args: [PrintfArg; 7] = [
                h.into(),
                u.into(),
                i.into(),
                f.into(),
                d.into(),
                l.into(),
                PrintfArg::Ptr(p),
            ];
            k.printf(&fmt, &args)?;
            k.place(skip)?;
            k.ret()
        })
        .unwrap();
        let text = lines.join("\n");
        // h: 0 (int), u: 4, i: 8, f: 16 (double, 8-aligned), d: 24, l: 32, p: 40; 48 bytes.
        for want in [
            ".local .align 8 .b8 printf_fmt_0_param0[48];",
            "cvt.s32.s16",
            "st.local.s32 [printf_fmt_0_param0], ",
            "st.local.u32 [printf_fmt_0_param0+4], ",
            "st.local.s32 [printf_fmt_0_param0+8], ",
            "cvt.f64.f32",
            "st.local.f64 [printf_fmt_0_param0+16], ",
            "st.local.f64 [printf_fmt_0_param0+24], ",
            "st.local.s64 [printf_fmt_0_param0+32], ",
            "st.local.u64 [printf_fmt_0_param0+40], ",
            "cvta.local.u64",
            "mov.u64 %rd3, printf_fmt_0;",
            "cvta.global.u64",
            "call.uni (param3), vprintf, (param1, param2);",
        ] {
            assert!(text.contains(want), "{want} not in\n{text}");
        }
    }
}

#[test]
fn the_module_declares_the_prototype_once_and_each_string() {
    let mut m = Module::new(Target::Sm90a);
    let a = m.printf_format("a=%d\n").unwrap();
    let b = m.printf_format("no arguments\n").unwrap();
    let mut k = m.entry("two");
    let r = k.reg::<ty::S32>();
    k.mov(r, 1i32).unwrap();
    k.printf(&a, &[r.into()]).unwrap();
    k.printf(&b, &[]).unwrap();
    k.ret().unwrap();
    m.add(k.finish().unwrap()).unwrap();
    let ptx = m.to_ptx().unwrap();
    assert_eq!(ptx.matches(".extern .func").count(), 1, "{ptx}");
    assert!(
        ptx.contains(".global .align 1 .b8 printf_fmt_0[6] = {97, 61, 37, 100, 10, 0};"),
        "{ptx}"
    );
    assert!(ptx.contains("printf_fmt_1[14]"), "{ptx}");
    // No arguments: a null buffer, as nvcc passes.
    assert!(ptx.contains("mov.u64 %rd"), "{ptx}");
    support::assemble(&ptx, Target::Sm90a);
}

#[test]
fn arguments_are_checked_against_the_format() {
    let mut m = Module::new(Target::Sm80);
    let fmt = m.printf_format("%d %f\n").unwrap();
    let mut k = m.entry("bad");
    let (i, x, l) = (k.reg::<ty::S32>(), k.reg::<ty::F32>(), k.reg::<ty::U64>());
    let e = k.printf(&fmt, &[i.into()]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OperandCount);
    let e = k.printf(&fmt, &[x.into(), x.into()]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OperandType);
    assert!(e.to_string().contains("conversion 0"), "{e}");
    let e = k.printf(&fmt, &[l.into(), x.into()]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OperandType);
    assert!(m.printf_format("%s\n").is_err());
    assert!(m.printf_format("%*d\n").is_err());
}

#[test]
fn a_function_already_called_vprintf_is_an_error() {
    let mut m = Module::new(Target::Sm80);
    let mut k = m.func("vprintf");
    k.ret().unwrap();
    m.add(k.finish().unwrap()).unwrap();
    let e = m.printf_format("x\n").unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadName);
}
