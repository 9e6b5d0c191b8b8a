//! Bad input to the emitters is an error value with a kind and a place, never a panic; and the
//! test interpreter itself follows PTX semantics (clamped shifts, wrapping, typed registers).

mod support;

use ptx_isa::{ErrorKind, Module, Target, ty};
use smem::SwizzleMode;
use smem::alu::{AluProgram, Width};
use smem::desc::sm90::WgmmaDesc;
use smem::emit::{self, AluReg, DynamicSmem};
use smem::pool::SmemPool;
use support::{Interp, kernel, run};

fn with_kernel<T>(f: impl FnOnce(&mut Module, &mut ptx_isa::FunctionBuilder) -> T) -> T {
    let mut m = Module::new(Target::Sm90a);
    let mut k = m.entry("bad");
    f(&mut m, &mut k)
}

#[test]
fn host_errors_name_the_helper() {
    with_kernel(|_, k| {
        let (row, col) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        let e = emit::emit_offset_2d(k, SwizzleMode::B128, 2, 40, row, col).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid);
        assert_eq!(e.place.instruction.as_deref(), Some("emit_offset_2d"));
        assert_eq!(e.place.function.as_deref(), Some("bad"));
        assert!(e.message.contains("not a multiple of 16"), "{e}");
        let e = emit::emit_offset_2d(k, SwizzleMode::None, 32, 16, row, col).unwrap_err();
        assert!(e.message.contains("does not fit in a row"), "{e}");
        let e = emit::emit_offset_2d(k, SwizzleMode::None, 0, 16, row, col).unwrap_err();
        assert!(e.message.contains("at least one byte"), "{e}");

        let d = WgmmaDesc {
            start_addr: 0,
            lbo: 16,
            sbo: 1000,
            base_offset: 0,
            swizzle: SwizzleMode::B128,
        };
        let e = emit::emit_desc(k, &d, row).unwrap_err();
        assert_eq!(e.place.instruction.as_deref(), Some("emit_desc"));
        assert!(e.message.contains("StrideByteOffset"), "{e}");
    });
}

#[test]
fn lowering_checks_inputs() {
    with_kernel(|_, k| {
        let p = SwizzleMode::B64
            .offset_2d_program(2, 64, Width::U32)
            .unwrap();
        let r = k.reg::<ty::U32>();
        let e = emit::lower(k, &p, &[AluReg::U32(r)]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OperandCount);
        let w = k.reg::<ty::U64>();
        let e = emit::lower(k, &p, &[AluReg::U32(r), AluReg::U64(w)]).unwrap_err();
        assert_eq!((e.kind, e.place.operand), (ErrorKind::OperandType, Some(1)));
        // A descriptor program's output is 64 bits: not a 32-bit result.
        let d = smem::desc::address_program(0).unwrap();
        assert_eq!(
            emit::lower_u32(k, &d, &[r]).unwrap_err().kind,
            ErrorKind::OperandType
        );
        // PTX shifts by a .u32 amount: a 64-bit register amount is refused.
        let mut q = AluProgram::with_inputs(&[Width::U64, Width::U64]).unwrap();
        let (x, y) = (q.input(), q.input_at(1).unwrap());
        q.bin(smem::alu::BinOp::Shl, x, smem::alu::Operand::Value(y))
            .unwrap();
        let e = emit::lower(k, &q, &[AluReg::U64(w), AluReg::U64(w)]).unwrap_err();
        assert_eq!(e.place.instruction.as_deref(), Some("shl.b64"));
    });
}

/// Two barriers at the end of a pool larger than the one the test declares.
fn pool_bars() -> smem::mbarrier::MbarrierArray {
    let mut p = SmemPool::new(Target::Sm90a);
    p.alloc_bytes("pad", 256, 16).unwrap();
    p.mbarriers("bars", &[1, 1]).unwrap()
}

#[test]
fn mbarrier_index_out_of_range() {
    let mut pool = SmemPool::new(Target::Sm90a);
    let bars = pool.mbarriers("bars", &[1, 1]).unwrap();
    with_kernel(|m, k| {
        let smem = DynamicSmem::declare(m, "smem", &pool).unwrap();
        let base = smem.base_addr(k).unwrap();
        assert!(smem.mbarrier_addr_from(k, base, &bars, 1).is_ok());
        let e = smem.mbarrier_addr_from(k, base, &bars, 2).unwrap_err();
        assert_eq!(
            e.place.instruction.as_deref(),
            Some("DynamicSmem::mbarrier_addr_from")
        );
    });
}

#[test]
fn region_errors() {
    let mut pool = SmemPool::new(Target::Sm90a);
    let small = pool.alloc_bytes("small", 64, 16).unwrap();
    let flag = pool.alloc_static("flag", 4, 4).unwrap();
    let mut other = SmemPool::new(Target::Sm90a);
    other.alloc_bytes("pad", 4096, 16).unwrap();
    let far = other.alloc_bytes("far", 64, 2048).unwrap();
    with_kernel(|m, k| {
        let smem = DynamicSmem::declare(m, "smem", &pool).unwrap();
        assert_eq!(
            (smem.symbol(), smem.align(), smem.bytes()),
            ("smem", 16, 64)
        );
        assert!(smem.region_addr(k, &small).is_ok());
        let e = smem.region_addr(k, &flag).unwrap_err();
        assert!(e.message.contains("static"), "{e}");
        let e = smem.region_addr(k, &far).unwrap_err();
        assert!(e.message.contains("is not in `smem`"), "{e}");
        let bars = pool_bars();
        let base = smem.base_addr(k).unwrap();
        let e = smem.mbarrier_addr_from(k, base, &bars, 0).unwrap_err();
        assert!(e.message.contains("is not in `smem`"), "{e}");
        // One dynamic array per module.
        assert!(DynamicSmem::declare(m, "smem2", &pool).is_err());
    });
}

/// The interpreter's own semantics, on hand-written instructions with known answers (PTX ISA
/// 9.7.8.8-9: shift amounts clamp to the width; 9.7.1.1: add wraps).
#[test]
fn interpreter_follows_ptx() {
    let m = kernel(Target::Sm90a, &["x"], |_, k, r| {
        let x = r[0];
        let big = k.reg::<ty::U32>();
        k.shl(big, x, 40u32)?; // clamped: 0
        let wrap = k.reg::<ty::U32>();
        k.add(wrap, x, 0xFFFF_FFFFu32)?; // x - 1
        let sum = k.reg::<ty::U32>();
        k.add(sum, wrap, big)?;
        let w = k.reg::<ty::U64>();
        k.cvt(w, sum)?;
        let hi = k.reg::<ty::U64>();
        k.shl(hi, w, 32u32)?;
        let lo = k.reg::<ty::U64>();
        k.shr(lo, hi, 64u32)?; // clamped: 0
        let out = k.reg::<ty::U64>();
        k.or(out, hi, lo)?;
        Ok(AluReg::U64(out))
    })
    .unwrap();
    assert_eq!(run(&m, &[("x", 0)], &[]), Ok(0xFFFF_FFFF_0000_0000));
    assert_eq!(run(&m, &[("x", 5)], &[]), Ok(4 << 32));
    let e = Interp::new().run(m.function("k").unwrap()).unwrap_err();
    assert!(e.contains("parameter x is not set"), "{e}");

    // Reading a register nothing wrote is an error, as is a missing parameter.
    let m = kernel(Target::Sm90a, &[], |_, k, _| {
        let (a, d) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.xor(d, a, 1u32)?;
        Ok(AluReg::U32(d))
    })
    .unwrap();
    let e = run(&m, &[], &[]).unwrap_err();
    assert!(e.contains("read before it is written"), "{e}");
}
