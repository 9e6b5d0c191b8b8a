//! Per-family unit tests: the exact text each builder method writes, and the errors bad input gets.

use ptx_isa::builder::*;
use ptx_isa::{
    Addr, Dim, Directive, ErrorKind, Module, PtxVersion, SpecialReg, StateSpace, Target, spaces, ty,
};

mod support;

fn body(
    target: Target,
    f: impl FnOnce(&mut ptx_isa::FunctionBuilder) -> ptx_isa::Result<()>,
) -> ptx_isa::Result<Vec<String>> {
    support::body(target, |_, k| f(k))
}

fn assemble(text: &str) {
    support::assemble(text, Target::Sm90a)
}

fn lines(f: impl FnOnce(&mut ptx_isa::FunctionBuilder) -> ptx_isa::Result<()>) -> Vec<String> {
    body(Target::Sm90a, f).unwrap()
}

fn error(
    target: Target,
    f: impl FnOnce(&mut ptx_isa::FunctionBuilder) -> ptx_isa::Result<()>,
) -> ptx_isa::Error {
    body(target, f).unwrap_err()
}

#[test]
fn arithmetic_text() {
    let l = lines(|k| {
        let (a, b) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
        k.add_mods(FloatMods::RN.ftz(), a, a, b)?;
        k.fma(a, a, b, 1.0f32)?;
        let (i, j) = (k.reg::<ty::S32>(), k.reg::<ty::S64>());
        k.add_mods(FloatMods::NONE.sat(), i, i, -3i32)?;
        k.mul_wide(j, i, i)?;
        k.div_mode(DivMode::Approx, true, a, a, b)?;
        let h = k.reg::<ty::Bf16x2>();
        k.fma(h, h, h, h)?;
        k.ex2(a, a)
    });
    assert_eq!(
        l,
        [
            "add.rn.ftz.f32 %f0, %f0, %f1;",
            "fma.rn.f32 %f0, %f0, %f1, 0f3F800000;",
            "add.sat.s32 %r0, %r0, -3;",
            "mul.wide.s32 %rd0, %r0, %r0;",
            "div.approx.ftz.f32 %f0, %f0, %f1;",
            "fma.rn.bf16x2 %hh0, %hh0, %hh0, %hh0;",
            "ex2.approx.ftz.f32 %f0, %f0;",
        ]
    );
}

#[test]
fn arithmetic_errors() {
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::F64>();
        k.add_mods(FloatMods::NONE.sat(), d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
    assert_eq!(e.place.instruction.as_deref(), Some("add.sat.f64"));
    // PTX ISA 9.7.1.1: `.sat` on integers is `.s32` only; the row's rule says so for the builder
    // and the validator alike (ptxas: "Modifier '.sat' does not apply to '.u32' type").
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::U32>();
        k.add_mods(FloatMods::NONE.sat(), d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
    assert!(e.message.contains(".sat needs .s32"), "{}", e.message);
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::B32>();
        k.add(d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::OperandType);
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::F32>();
        k.fma_mods(FloatMods::NONE, d, d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::F64>();
        k.div_mode(DivMode::Approx, false, d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::U32>();
        k.add_mods(FloatMods::NONE.sat(), d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier, "add.sat is s32 only");
}

#[test]
fn gating_names_the_form_target_and_alternatives() {
    let e = error(Target::Sm80, |k| {
        let d = k.reg::<ty::Bf16>();
        k.add(d, d, d)
    });
    assert_eq!(e.kind, ErrorKind::UnsupportedTarget);
    assert_eq!(e.place.target, Some(Target::Sm80));
    assert_eq!(e.place.instruction.as_deref(), Some("add.bf16"));
    assert!(e.message.contains("sm_80 lacks `add.bf16`"), "{e}");
    assert!(e.message.contains("sm_90, sm_90a"), "{e}");
    let e = error(Target::Sm86, |k| k.directive(Directive::ExplicitCluster));
    assert_eq!(e.kind, ErrorKind::UnsupportedTarget);
}

#[test]
fn version_is_the_lowest_needed_and_overridable() {
    let build = |target, with_b128: bool| {
        let mut m = Module::new(target);
        let mut k = m.entry("v");
        if with_b128 {
            let q = k.reg::<ty::B128>();
            let (lo, hi) = (k.reg::<ty::B64>(), k.reg::<ty::B64>());
            k.mov_pack(q, &[lo, hi]).unwrap();
        }
        let d = k.reg::<ty::Bf16>();
        k.add(d, d, d).unwrap();
        m.add(k.finish().unwrap()).unwrap();
        m
    };
    assert_eq!(
        build(Target::Sm90, false).version().unwrap(),
        PtxVersion { major: 7, minor: 8 }
    );
    assert_eq!(
        build(Target::Sm90a, false).version().unwrap(),
        PtxVersion { major: 8, minor: 0 }
    );
    assert_eq!(
        build(Target::Sm90, true).version().unwrap(),
        PtxVersion { major: 8, minor: 3 }
    );
    let mut m = build(Target::Sm90, true);
    m.set_version(PtxVersion { major: 8, minor: 0 }).unwrap();
    let e = m.to_ptx().unwrap_err();
    assert_eq!(e.kind, ErrorKind::PtxVersionTooLow);
    assert!(e.message.contains("8.3"), "{e}");
    m.set_version(PtxVersion { major: 9, minor: 0 }).unwrap();
    assert!(m.to_ptx().unwrap().contains(".version 9.0\n"));
    assert_eq!(
        m.set_version(PtxVersion { major: 9, minor: 1 })
            .unwrap_err()
            .kind,
        ErrorKind::BadVersion
    );
}

#[test]
fn bits_and_compare_text() {
    let l = lines(|k| {
        let (a, b) = (k.reg::<ty::B32>(), k.reg::<ty::U32>());
        k.lop3(a, a, a, a, 0xE8)?;
        let s = k.reg::<ty::S32>();
        k.shr(s, s, 2u32)?;
        k.shl(b, b, 1u32)?;
        k.popc(b, a)?;
        let (p, q) = (k.pred(), k.pred());
        k.setp(CmpOp::Hs, p, b, 4u32)?;
        k.setp_bool(CmpOp::Eq, BoolOp::Xor, p, Some(q), s, s, PredSrc::not(q))?;
        k.selp(s, 1i32, s, p)?;
        k.and(p, p, q)
    });
    assert_eq!(
        l,
        [
            "lop3.b32 %r0, %r0, %r0, %r0, 232;",
            "shr.s32 %r2, %r2, 2;",
            "shl.b32 %r1, %r1, 1;",
            "popc.b32 %r1, %r0;",
            "setp.hs.u32 %p0, %r1, 4;",
            "setp.eq.xor.s32 %p0|%p1, %r2, %r2, !%p1;",
            "selp.s32 %r2, 1, %r2, %p0;",
            "and.pred %p0, %p0, %p1;",
        ]
    );
}

#[test]
fn compare_errors() {
    let e = error(Target::Sm90a, |k| {
        let (p, a) = (k.pred(), k.reg::<ty::F32>());
        k.setp(CmpOp::Lo, p, a, a)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
    let e = error(Target::Sm90a, |k| {
        let (p, a) = (k.pred(), k.reg::<ty::B32>());
        k.setp(CmpOp::Lt, p, a, a)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
    let e = error(Target::Sm90a, |k| {
        let (p, a) = (k.pred(), k.reg::<ty::U32>());
        k.setp(CmpOp::Nan, p, a, a)
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
}

#[test]
fn conversions_pick_the_required_rounding() {
    let l = lines(|k| {
        let (f, i, d, h) = (
            k.reg::<ty::F32>(),
            k.reg::<ty::S32>(),
            k.reg::<ty::F64>(),
            k.reg::<ty::F16>(),
        );
        k.cvt(i, f)?;
        k.cvt(f, i)?;
        k.cvt(d, f)?;
        k.cvt(f, d)?;
        k.cvt(h, f)?;
        let b = k.reg::<ty::Bf16>();
        k.cvt(b, f)?;
        let w = k.reg::<ty::U64>();
        k.cvt(w, i)?;
        let p = k.reg::<ty::Bf16x2>();
        k.cvt_pack_bf16x2(p, f, f, false)?;
        k.cvt_mods(
            CvtMods {
                rounding: Some(CvtRounding::Rni),
                ftz: false,
                sat: true,
            },
            i,
            f,
        )
    });
    assert_eq!(
        l,
        [
            "cvt.rzi.s32.f32 %r0, %f0;",
            "cvt.rn.f32.s32 %f0, %r0;",
            "cvt.f64.f32 %fd0, %f0;",
            "cvt.rn.f32.f64 %f0, %fd0;",
            "cvt.rn.f16.f32 %h0, %f0;",
            "cvt.rn.bf16.f32 %h1, %f0;",
            "cvt.u64.s32 %rd0, %r0;",
            "cvt.rn.bf16x2.f32 %hh0, %f0, %f0;",
            "cvt.rni.sat.s32.f32 %r0, %f0;",
        ]
    );
    let e = error(Target::Sm90a, |k| {
        let (f, i) = (k.reg::<ty::F32>(), k.reg::<ty::S32>());
        k.cvt_mods(
            CvtMods {
                rounding: Some(CvtRounding::Rzi),
                ..CvtMods::default()
            },
            f,
            i,
        )
    });
    assert_eq!(e.kind, ErrorKind::InvalidModifier);
}

#[test]
fn memory_text() {
    let l = lines(|k| {
        let p = k.reg::<ty::U64>();
        let g = Addr::<spaces::Global>::reg(p);
        let v = k.regs::<ty::F32>(4);
        k.ld_v(&v, g.clone().offset(16))?;
        k.st_v(g.clone(), &v[..2])?;
        let b = k.reg::<ty::U32>();
        // A narrower memory type, an acquire at cluster scope, a non-coherent load with an L1
        // eviction priority.
        let loads = [
            LdOpts {
                mem_type: Some(ptx_isa::ScalarType::U8),
                ..LdOpts::default()
            },
            LdOpts {
                order: MemOrder::Acquire(Scope::Cluster),
                ..LdOpts::default()
            },
            LdOpts {
                nc: true,
                evict: Some(Evict::Last),
                ..LdOpts::default()
            },
        ];
        for opts in &loads {
            k.ld_with(opts, &[b], g.clone())?;
        }
        k.st_with::<_, ty::U32>(
            &StOpts {
                cache: Some(CacheOp::Cs),
                ..StOpts::default()
            },
            g.clone(),
            &[7u32.into()],
        )?;
        let s = k.reg::<ty::U32>();
        k.st(Addr::<spaces::Shared>::reg32(s).offset(8), b)?;
        k.atom(AtomOp::Add, b, g.clone(), 1u32)?;
        k.red_with(
            AtomSem::Release,
            Some(Scope::Gpu),
            AtomOp::Add,
            g.clone(),
            1.0f32,
        )
    });
    assert_eq!(
        l,
        [
            "ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0+16];",
            "st.global.v2.f32 [%rd0], {%f0, %f1};",
            "ld.global.u8 %r0, [%rd0];",
            "ld.acquire.cluster.global.u32 %r0, [%rd0];",
            "ld.global.nc.L1::evict_last.u32 %r0, [%rd0];",
            "st.global.cs.u32 [%rd0], 7;",
            "st.shared.u32 [%r1+8], %r0;",
            "atom.global.add.u32 %r0, [%rd0], 1;",
            "red.release.gpu.global.add.f32 [%rd0], 0f3F800000;",
        ]
    );
}

#[test]
fn memory_errors() {
    let vec_err = |n: usize| {
        error(Target::Sm90a, |k| {
            let p = k.reg::<ty::U64>();
            let v = k.regs::<ty::F32>(n);
            k.ld_v(&v, Addr::<spaces::Global>::reg(p))
        })
    };
    assert_eq!(vec_err(3).kind, ErrorKind::VectorWidth);
    assert_eq!(vec_err(8).kind, ErrorKind::VectorWidth);
    let e = error(Target::Sm90a, |k| {
        let p = k.reg::<ty::U64>();
        let v = k.regs::<ty::F64>(4);
        k.ld_v(&v, Addr::<spaces::Global>::reg(p))
    });
    assert_eq!(e.kind, ErrorKind::VectorWidth, "32 bytes is too wide");
    // Loads of a `.u32` register whose options no `ld` row takes (PTX ISA 9.7.9.8).
    let refused = [
        (
            LdOpts {
                nc: true,
                order: MemOrder::Volatile,
                ..LdOpts::default()
            },
            ErrorKind::InvalidModifier,
            ".nc with .volatile",
        ),
        (
            LdOpts {
                cache: Some(CacheOp::Wb),
                ..LdOpts::default()
            },
            ErrorKind::InvalidModifier,
            ".wb on a load",
        ),
        (
            LdOpts {
                mem_type: Some(ptx_isa::ScalarType::F32),
                ..LdOpts::default()
            },
            ErrorKind::OperandType,
            "an .f32 memory type",
        ),
    ];
    for (opts, kind, why) in refused {
        let e = error(Target::Sm90a, |k| {
            let (p, d) = (k.reg::<ty::U64>(), k.reg::<ty::U32>());
            k.ld_with(&opts, &[d], Addr::<spaces::Global>::reg(p))
        });
        assert_eq!(e.kind, kind, "{why}: {e}");
    }
    let e = error(Target::Sm80, |k| {
        let (p, d) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.ld(d, Addr::<spaces::SharedCluster>::reg32(p))
    });
    assert_eq!(e.kind, ErrorKind::UnsupportedTarget);
}

#[test]
fn special_registers_and_moves() {
    let l = lines(|k| {
        let t = k.sreg_u32(SpecialReg::Tid(Dim::Y))?;
        let c = k.reg::<ty::U64>();
        k.mov_sreg(c, SpecialReg::GlobalTimer)?;
        let r = k.sreg_u32(SpecialReg::ClusterCtaRank)?;
        let w = k.reg::<ty::B64>();
        let (lo, hi) = (k.reg::<ty::B32>(), k.reg::<ty::B32>());
        k.mov_pack(w, &[lo, hi])?;
        k.mov_unpack(&[lo, hi], w)?;
        k.mov(t, r)
    });
    assert_eq!(
        l,
        [
            "mov.u32 %r0, %tid.y;",
            "mov.u64 %rd0, %globaltimer;",
            "mov.u32 %r1, %cluster_ctarank;",
            "mov.b64 %rd1, {%r2, %r3};",
            "mov.b64 {%r2, %r3}, %rd1;",
            "mov.u32 %r0, %r1;",
        ]
    );
    let e = error(Target::Sm90a, |k| {
        let d = k.reg::<ty::U64>();
        k.mov_sreg(d, SpecialReg::Tid(Dim::X))
    });
    assert_eq!(e.kind, ErrorKind::OperandType);
    let e = error(Target::Sm80, |k| {
        k.sreg_u32(SpecialReg::ClusterCtaRank).map(|_| ())
    });
    assert_eq!(e.kind, ErrorKind::UnsupportedTarget);
    let e = error(Target::Sm90a, |k| {
        let w = k.reg::<ty::B64>();
        let parts = k.regs::<ty::B32>(3);
        k.mov_pack(w, &parts)
    });
    assert_eq!(e.kind, ErrorKind::VectorWidth);
}

/// `mov_bits` moves a register's bits into one of another type of the same size (a `.b32` word
/// as `.f32`) and refuses sizes that differ.
#[test]
fn mov_bits_reads_a_word_as_f32() {
    let l = lines(|k| {
        let (w, f) = (k.reg::<ty::B32>(), k.reg::<ty::F32>());
        k.mov_bits(f, w)
    });
    assert_eq!(l, ["mov.b32 %f0, %r0;"]);
    let e = error(Target::Sm90a, |k| {
        let (w, f) = (k.reg::<ty::B64>(), k.reg::<ty::F32>());
        k.mov_bits(f, w)
    });
    assert_eq!(e.kind, ErrorKind::OperandType);
}

#[test]
fn sync_and_warp_text() {
    let l = lines(|k| {
        k.bar_sync(0u32, None)?;
        k.bar_arrive(1u32, 128u32)?;
        k.barrier_sync(true, 2u32, Some(64u32.into()))?;
        k.fence(Some(FenceSem::Sc), Scope::Cluster)?;
        k.membar(BarrierLevel::Cta)?;
        let (d, p) = (k.reg::<ty::U32>(), k.pred());
        k.shfl_sync(ShflMode::Down, d, None, d, 16u32, 0x1fu32, 0xFFFF_FFFFu32)?;
        k.vote_ballot(d, p, 0xFFFF_FFFFu32)?;
        k.elect_sync(ptx_isa::Sinkable::Sink, p, 0xFFFF_FFFFu32)?;
        k.redux_sync(ReduxOp::Add, d, d, 0xFFFF_FFFFu32)
    });
    assert_eq!(
        l,
        [
            "bar.sync 0;",
            "bar.arrive 1, 128;",
            "barrier.sync.aligned 2, 64;",
            "fence.sc.cluster;",
            "membar.cta;",
            "shfl.sync.down.b32 %r0, %r0, 16, 31, 0xFFFFFFFF;",
            "vote.sync.ballot.b32 %r0, %p0, 0xFFFFFFFF;",
            "elect.sync _|%p0, 0xFFFFFFFF;",
            "redux.sync.add.u32 %r0, %r0, 0xFFFFFFFF;",
        ]
    );
    assert_eq!(
        error(Target::Sm90a, |k| k.bar_sync(16u32, None)).kind,
        ErrorKind::ImmediateRange
    );
    assert_eq!(
        error(Target::Sm90a, |k| k.bar_sync(1u32, Some(33u32.into()))).kind,
        ErrorKind::ImmediateRange
    );
    assert_eq!(
        error(Target::Sm80, |k| k.fence(None, Scope::Cluster)).kind,
        ErrorKind::UnsupportedTarget
    );
    let e = error(Target::Sm80, |k| {
        let p = k.pred();
        k.elect_sync(ptx_isa::Sinkable::Sink, p, 1u32)
    });
    assert_eq!(e.kind, ErrorKind::UnsupportedTarget);
}

#[test]
fn control_flow_labels_and_guards() {
    let l = lines(|k| {
        let (top, p) = (k.label(), k.pred());
        k.place(top)?;
        k.unless(p).bra_uni(top)?;
        k.when(p).exit()
    });
    assert_eq!(l, ["@!%p0 bra.uni $L__0;", "@%p0 exit;"]);
    let e = error(Target::Sm90a, |k| {
        let l = k.label();
        k.bra(l)
    });
    assert_eq!(e.kind, ErrorKind::UndefinedLabel);
    let e = error(Target::Sm90a, |k| {
        let l = k.label();
        k.place(l)?;
        k.place(l)
    });
    assert_eq!(e.kind, ErrorKind::UndefinedLabel);
    let e = error(Target::Sm90a, |k| {
        let p = k.pred();
        k.when(p);
        Ok(())
    });
    assert_eq!(e.kind, ErrorKind::DanglingGuard);
}

#[test]
fn device_function_call() {
    let mut m = Module::new(Target::Sm90a);
    let mut f = m.func("twice");
    let r = f.returns::<ty::U32>("r").unwrap();
    let x = f.param::<ty::U32>("x").unwrap();
    let v = f.load_param(&x).unwrap();
    f.add(v, v, v).unwrap();
    f.store_return(&r, v).unwrap();
    f.ret().unwrap();
    let func = f.finish().unwrap();
    let mut k = m.entry("caller");
    let (a, d) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.call(
        &func,
        &[(a.as_ref(), ptx_isa::ScalarType::U32)],
        Some((d.as_ref(), ptx_isa::ScalarType::U32)),
    )
    .unwrap();
    let e = k.call(&func, &[], None).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OperandCount);
    let e = k
        .call(&func, &[(a.as_ref(), ptx_isa::ScalarType::F64)], None)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::OperandType);
    k.ret().unwrap();
    m.add(func).unwrap();
    m.add(k.finish().unwrap()).unwrap();
    let text = m.to_ptx().unwrap();
    assemble(&text);
    assert!(
        text.contains(".visible .func (.param .u32 r) twice(\n\t.param .u32 x\n)"),
        "{text}"
    );
    assert!(text.contains("\t{\n\t\t.param .u32 param0;\n\t\tst.param.u32 [param0], %r0;\n\t\t.param .u32 param1;\n\t\tcall.uni (param1), twice, (param0);\n\t\tld.param.u32 %r1, [param1];\n\t}\n"), "{text}");
}

#[test]
fn names_parameters_and_directives_are_checked() {
    let m = Module::new(Target::Sm90a);
    let k = m.entry("9bad");
    assert_eq!(k.finish().unwrap_err().kind, ErrorKind::BadName);
    let mut k = m.entry("ok");
    k.param::<ty::U32>("n").unwrap();
    assert_eq!(
        k.param::<ty::U32>("n").unwrap_err().kind,
        ErrorKind::BadName
    );
    assert_eq!(
        k.param_ptr("p", StateSpace::Global, Some(3))
            .unwrap_err()
            .kind,
        ErrorKind::Invalid
    );
    k.directive(Directive::MaxNtid([128, 1, 1])).unwrap();
    assert_eq!(
        k.directive(Directive::ReqNtid([256, 1, 1]))
            .unwrap_err()
            .kind,
        ErrorKind::BadDirective
    );
    assert_eq!(
        k.directive(Directive::MaxNtid([64, 1, 1]))
            .unwrap_err()
            .kind,
        ErrorKind::BadDirective
    );
    assert_eq!(
        k.directive(Directive::MaxNreg(300)).unwrap_err().kind,
        ErrorKind::BadDirective
    );
    k.directive(Directive::ReqNctaPerCluster([2, 1, 1]))
        .unwrap();
    let tm = k.param_bytes("tmap", 64, 128).unwrap();
    assert_eq!(tm.name(), "tmap");
    let mut m = Module::new(Target::Sm90a);
    m.add(k.finish().unwrap()).unwrap();
    m.dynamic_shared("smem", 1024).unwrap();
    m.shared("bars", 8, 64).unwrap();
    assert_eq!(
        m.shared("bars", 8, 64).unwrap_err().kind,
        ErrorKind::BadName
    );
    assert_eq!(
        m.dynamic_shared("other", 16).unwrap_err().kind,
        ErrorKind::BadName
    );
    let text = m.to_ptx().unwrap();
    assemble(&text);
    assert!(text.contains(".extern .shared .align 1024 .b8 smem[];"));
    assert!(text.contains(".shared .align 8 .b8 bars[64];"));
    assert!(text.contains("\t.param .align 64 .b8 tmap[128]\n"));
    assert!(text.contains(".maxntid 128, 1, 1\n.reqnctapercluster 2, 1, 1\n"));
    assert!(text.contains(".version 8.0"));
}
