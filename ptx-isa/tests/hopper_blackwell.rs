//! The Hopper and Blackwell families: exact text, operand checks (register counts, immediates,
//! address spaces, shapes) and gating errors. Every kernel that builds is assembled with ptxas.

mod support;

use ptx_isa::builder::*;
use ptx_isa::{Addr, ErrorKind, Module, RegRef, ScalarType, Target, spaces, ty};
use support::{error_on, lines_on};

fn shared(
    m: &mut Module,
    k: &mut ptx_isa::FunctionBuilder,
) -> ptx_isa::Result<ptx_isa::Reg<ty::U32>> {
    m.shared("buf", 1024, 8192)?;
    let r = k.reg::<ty::U32>();
    k.mov_shared_addr(r, "buf")?;
    Ok(r)
}

/// The error building `f` on `target` gives, asserted to be of `kind` (`why`: the rule broken).
fn refused(
    target: Target,
    kind: ErrorKind,
    why: &str,
    f: impl FnOnce(&mut Module, &mut ptx_isa::FunctionBuilder) -> ptx_isa::Result<()>,
) -> ptx_isa::Error {
    let e = error_on(target, f);
    assert_eq!(e.kind, kind, "{why}: {e}");
    e
}

/// `wgmma.mma_async` of `shape` from two shared-memory descriptors into `d`, accumulating.
fn wgmma_from_descs(
    k: &mut ptx_isa::FunctionBuilder,
    shape: Wgmma,
    d: &[RegRef],
    imm: WgmmaImm,
) -> ptx_isa::Result<()> {
    let (a, b) = (k.reg::<ty::B64>(), k.reg::<ty::B64>());
    k.wgmma_mma_async(shape, d, WgmmaA::Desc(a), b, ScaleD::Const(true), imm)
}

/// [`shared`]'s buffer and a 128-byte, 64-byte aligned tensor-map parameter `tmap`.
fn shared_and_map(
    m: &mut Module,
    k: &mut ptx_isa::FunctionBuilder,
) -> ptx_isa::Result<(ptx_isa::Reg<ty::U32>, TensorMapRef)> {
    let b = shared(m, k)?;
    let map = (&k.param_bytes("tmap", 64, 128)?).into();
    Ok((b, map))
}

/// [`refused`] for an instruction on [`shared_and_map`]'s buffer and tensor map.
fn refused_tma(
    target: Target,
    kind: ErrorKind,
    why: &str,
    f: impl FnOnce(
        &mut ptx_isa::FunctionBuilder,
        ptx_isa::Reg<ty::U32>,
        TensorMapRef,
    ) -> ptx_isa::Result<()>,
) -> ptx_isa::Error {
    refused(target, kind, why, |m, k| {
        let (b, map) = shared_and_map(m, k)?;
        f(k, b, map)
    })
}

/// [`shared`]'s buffer and a register for a global address.
fn shared_and_global(
    m: &mut Module,
    k: &mut ptx_isa::FunctionBuilder,
) -> ptx_isa::Result<(ptx_isa::Reg<ty::U32>, ptx_isa::Reg<ty::U64>)> {
    Ok((shared(m, k)?, k.reg::<ty::U64>()))
}

/// `cp.async.cg` of `bytes` from a global address into [`shared`]'s buffer, whose address it
/// returns.
fn cp_async_cg(
    m: &mut Module,
    k: &mut ptx_isa::FunctionBuilder,
    bytes: u32,
) -> ptx_isa::Result<ptx_isa::Reg<ty::U32>> {
    let (b, p) = shared_and_global(m, k)?;
    k.cp_async(
        CpAsyncCache::Cg,
        Addr::<spaces::Shared>::reg32(b),
        Addr::<spaces::Global>::reg(p),
        bytes,
        None,
        None,
    )?;
    Ok(b)
}

fn refs<T: ty::RegType>(v: Vec<ptx_isa::Reg<T>>) -> Vec<RegRef> {
    v.into_iter().map(|r| r.as_ref()).collect()
}

#[test]
fn mbarrier_pipeline_text() {
    let l = lines_on(Target::Sm90a, |m, k| {
        let b = shared(m, k)?;
        let bar = Addr::<spaces::Shared>::reg32(b);
        k.mbarrier_init(bar.clone(), 1u32)?;
        k.fence_mbarrier_init()?;
        let s = k.reg::<ty::B64>();
        k.mbarrier_arrive_with(
            &ArriveOpts {
                expect_tx: Some(16384u32.into()),
                ..ArriveOpts::default()
            },
            s.into(),
            bar.clone(),
        )?;
        k.mbarrier_wait_parity(bar.clone(), 0u32)?;
        let remote = k.reg::<ty::U32>();
        k.mapa_shared(remote, b, 1u32)?;
        k.mbarrier_arrive_with(
            &ArriveOpts {
                release: Some(Scope::Cluster),
                ..ArriveOpts::default()
            },
            ptx_isa::Sinkable::Sink,
            Addr::<spaces::SharedCluster>::reg32(remote),
        )
    });
    assert_eq!(
        l,
        [
            "mov.u32 %r0, buf;",
            "mbarrier.init.shared.b64 [%r0], 1;",
            "fence.mbarrier_init.release.cluster;",
            "mbarrier.arrive.expect_tx.shared.b64 %rd0, [%r0], 16384;",
            "mbarrier.try_wait.parity.shared.b64 %p0, [%r0], 0;",
            "@!%p0 bra $L__0;",
            "mapa.shared::cluster.u32 %r1, %r0, 1;",
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1];",
        ]
    );
}

#[test]
fn mbarrier_operand_checks() {
    refused(Target::Sm90a, ErrorKind::ImmediateRange, "", |m, k| {
        let b = shared(m, k)?;
        k.mbarrier_init(Addr::<spaces::Shared>::reg32(b), 0u32)
    });
    refused(
        Target::Sm90a,
        ErrorKind::OperandKind,
        "a remote arrive returns no state",
        |m, k| {
            let b = shared(m, k)?;
            let s = k.reg::<ty::B64>();
            k.mbarrier_arrive_with(
                &ArriveOpts {
                    release: Some(Scope::Cluster),
                    ..ArriveOpts::default()
                },
                s.into(),
                Addr::<spaces::SharedCluster>::reg32(b),
            )
        },
    );
    refused(
        Target::Sm90a,
        ErrorKind::OperandKind,
        "init is for the CTA's own barriers",
        |m, k| {
            let b = shared(m, k)?;
            k.mbarrier_init(Addr::<spaces::SharedCluster>::reg32(b), 1u32)
        },
    );
    let e = refused(Target::Sm80, ErrorKind::UnsupportedTarget, "", |m, k| {
        let (b, p) = (shared(m, k)?, k.pred());
        k.mbarrier_try_wait(
            None,
            p,
            Addr::<spaces::Shared>::reg32(b),
            WaitOn::Parity(0u32.into()),
            None,
        )
    });
    assert!(e.message.contains("mbarrier.try_wait"), "{e}");
}

#[test]
fn tma_text_and_checks() {
    let l = lines_on(Target::Sm90a, |m, k| {
        let (b, map) = shared_and_map(m, k)?;
        k.prefetch_tensormap(&map)?;
        let (x, y) = (k.reg::<ty::S32>(), k.reg::<ty::S32>());
        k.tma_load(
            &TmaLoadOpts {
                multicast: Some(3u16.into()),
                ..TmaLoadOpts::default()
            },
            Addr::<spaces::SharedCluster>::reg32(b),
            &map,
            &[x.into(), y.into()],
            Addr::reg32(b).offset(4096),
        )?;
        k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
            ptx_isa::space::SharedScope::Cta,
        )))?;
        k.tma_store(
            &map,
            &[x.into(), y.into()],
            Addr::<spaces::Shared>::reg32(b),
            None,
        )?;
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)
    });
    assert_eq!(
        l,
        [
            "mov.u32 %r0, buf;",
            "prefetch.param.tensormap [tmap];",
            "mov.u64 %rd0, tmap;",
            "cvta.param.u64 %rd1, %rd0;",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r0], [%rd1, {%r1, %r2}], [%r0+4096], 3;",
            "fence.proxy.async.shared::cta;",
            "mov.u64 %rd2, tmap;",
            "cvta.param.u64 %rd3, %rd2;",
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd3, {%r1, %r2}], [%r0];",
            "cp.async.bulk.commit_group;",
            "cp.async.bulk.wait_group.read 0;",
        ]
    );
    // Six coordinates; an im2col load with one offset too many; `.cta_group` on sm_90a.
    let six: Vec<ptx_isa::Src<ty::S32>> = (0..6).map(|i| i.into()).collect();
    let offsets = [0u16.into(), 0u16.into()];
    let refusals = [
        (
            ErrorKind::OperandCount,
            "",
            TmaLoadOpts::default(),
            &six[..],
        ),
        (
            ErrorKind::OperandCount,
            "3-D im2col takes one offset",
            TmaLoadOpts {
                im2col: Some(&offsets),
                ..TmaLoadOpts::default()
            },
            &six[..3],
        ),
        (
            ErrorKind::UnsupportedTarget,
            ".cta_group is sm_100a",
            TmaLoadOpts {
                cta_group: Some(CtaGroup::Two),
                ..TmaLoadOpts::default()
            },
            &six[..1],
        ),
    ];
    for (kind, why, o, c) in refusals {
        refused_tma(Target::Sm90a, kind, why, |k, b, map| {
            let at = Addr::<spaces::SharedCluster>::reg32(b);
            k.tma_load(&o, at.clone(), &map, c, at)
        });
    }
    refused(
        Target::Sm90a,
        ErrorKind::ImmediateRange,
        "bulk sizes are multiples of 16",
        |m, k| {
            let (b, p) = shared_and_global(m, k)?;
            k.cp_async_bulk_load(
                &TmaLoadOpts::default(),
                Addr::reg32(b),
                Addr::<spaces::Global>::reg(p),
                20u32,
                Addr::reg32(b),
            )
        },
    );
    refused_tma(
        Target::Sm89,
        ErrorKind::UnsupportedTarget,
        "",
        |k, b, map| k.tma_store(&map, &[0.into()], Addr::<spaces::Shared>::reg32(b), None),
    );
}

#[test]
fn wgmma_text_and_checks() {
    let bf16 = Wgmma {
        n: 256,
        types: WgmmaTypes::Half {
            d: ScalarType::F32,
            ab: ScalarType::Bf16,
        },
    };
    assert_eq!(bf16.accumulator_registers(), 128);
    let l = lines_on(Target::Sm90a, |_, k| {
        let d = refs(k.regs::<ty::F32>(128));
        let (a, b, p) = (k.reg::<ty::B64>(), k.reg::<ty::B64>(), k.pred());
        k.wgmma_fence()?;
        k.wgmma_mma_async(
            bf16,
            &d,
            WgmmaA::Desc(a),
            b,
            ScaleD::Pred(p),
            WgmmaImm::default(),
        )?;
        k.wgmma_commit_group()?;
        k.wgmma_wait_group(1)
    });
    assert_eq!(l.len(), 4);
    assert!(
        l[1].starts_with("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%f0, %f1,"),
        "{}",
        l[1]
    );
    assert!(
        l[1].ends_with("%f127}, %rd0, %rd1, %p0, 1, 1, 0, 0;"),
        "{}",
        l[1]
    );
    // Every N of every type builds (and the sm_90a catalog assembles a sample of them).
    for n in (8..=256).step_by(8) {
        for types in [
            WgmmaTypes::Half {
                d: ScalarType::F16,
                ab: ScalarType::F16,
            },
            WgmmaTypes::Tf32,
            WgmmaTypes::F8 {
                d: ScalarType::F32,
                a: ScalarType::E5m2,
                b: ScalarType::E4m3,
            },
            WgmmaTypes::I8 {
                a: ScalarType::U8,
                b: ScalarType::U8,
                satfinite: false,
            },
        ] {
            let w = Wgmma { n, types };
            let r = support::body(Target::Sm90a, |_, k| {
                let d = if w.d_type() == ScalarType::F32 {
                    refs(k.regs::<ty::F32>(w.accumulator_registers()))
                } else {
                    refs(k.regs::<ty::B32>(w.accumulator_registers()))
                };
                wgmma_from_descs(k, w, &d, WgmmaImm::default())
            });
            assert_eq!(r.is_ok(), w.n_is_valid(), "{w:?}: {r:?}");
        }
    }
    let e = refused(Target::Sm90a, ErrorKind::OperandCount, "", |_, k| {
        let d = refs(k.regs::<ty::F32>(64));
        wgmma_from_descs(k, bf16, &d, WgmmaImm::default())
    });
    assert!(
        e.message
            .contains("needs 128 accumulator registers, not 64"),
        "{e}"
    );
    refused(
        Target::Sm90a,
        ErrorKind::InvalidModifier,
        "tf32 has no transpose",
        |_, k| {
            let d = refs(k.regs::<ty::F32>(4));
            wgmma_from_descs(
                k,
                Wgmma {
                    n: 8,
                    types: WgmmaTypes::Tf32,
                },
                &d,
                WgmmaImm {
                    transpose_b: true,
                    ..WgmmaImm::default()
                },
            )
        },
    );
    refused(
        Target::Sm90a,
        ErrorKind::OperandType,
        "bf16 accumulates in f32",
        |_, k| {
            let d = refs(k.regs::<ty::B32>(2));
            wgmma_from_descs(
                k,
                Wgmma {
                    n: 8,
                    types: WgmmaTypes::Half {
                        d: ScalarType::F16,
                        ab: ScalarType::Bf16,
                    },
                },
                &d,
                WgmmaImm::default(),
            )
        },
    );
    let e = refused(Target::Sm90, ErrorKind::UnsupportedTarget, "", |_, k| {
        k.wgmma_fence()
    });
    assert!(e.message.contains("targets that have it: sm_90a"), "{e}");
    refused(Target::Sm90a, ErrorKind::ImmediateRange, "", |_, k| {
        k.setmaxnreg(false, 250)
    });
    refused(Target::Sm90, ErrorKind::UnsupportedTarget, "", |_, k| {
        k.setmaxnreg(false, 40)
    });
}

#[test]
fn tcgen05_text_and_checks() {
    let l = lines_on(Target::Sm100a, |m, k| {
        let b = shared(m, k)?;
        k.tcgen05_alloc(CtaGroup::One, Addr::<spaces::Shared>::reg32(b), 256u32)?;
        let t = k.reg::<ty::U32>();
        let r = refs(k.regs::<ty::F32>(16));
        k.tcgen05_ld(TmemShape::S32x32b, 16, false, &r, t, None)?;
        k.tcgen05_wait_ld()?;
        let (a, bd, p) = (k.reg::<ty::B64>(), k.reg::<ty::B64>(), k.pred());
        k.tcgen05_mma(
            CtaGroup::One,
            MmaKindTc::F16,
            false,
            t,
            TcA::Desc(a),
            bd,
            0x0810_0490u32,
            None,
            p,
        )?;
        k.tcgen05_commit(CtaGroup::One, Addr::<spaces::Shared>::reg32(b), None)?;
        k.tcgen05_fence_before_thread_sync()
    });
    assert_eq!(
        l[1],
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r0], 256;"
    );
    assert!(
        l[2].starts_with("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%f0, "),
        "{}",
        l[2]
    );
    assert_eq!(
        l[4],
        "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd0, %rd1, 0x8100490, %p0;"
    );
    assert_eq!(
        l[5],
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%r0];"
    );
    // Register counts per shape and .num (PTX ISA 9.7.16.8.3).
    for shape in TmemShape::ALL {
        for num in [1u32, 2, 4, 8, 16, 32, 64, 128] {
            let want = shape.registers(num);
            let half = (shape == TmemShape::S16x32bx2).then_some(16);
            let r = support::body(Target::Sm100a, |_, k| {
                let t = k.reg::<ty::U32>();
                let regs = refs(k.regs::<ty::B32>(want));
                k.tcgen05_ld(shape, num, false, &regs, t, half)?;
                k.tcgen05_st(shape, num, false, t, half, &regs)
            });
            assert_eq!(r.is_ok(), num <= shape.max_num(), "{shape:?} x{num}: {r:?}");
        }
    }
    refused(Target::Sm100a, ErrorKind::OperandCount, "", |_, k| {
        let t = k.reg::<ty::U32>();
        let r = refs(k.regs::<ty::B32>(3));
        k.tcgen05_ld(TmemShape::S16x128b, 1, false, &r, t, None)
    });
    refused(
        Target::Sm100a,
        ErrorKind::OperandCount,
        "only .16x32bx2 has a half-split offset",
        |_, k| {
            let t = k.reg::<ty::U32>();
            let r = refs(k.regs::<ty::B32>(1));
            k.tcgen05_ld(TmemShape::S32x32b, 1, false, &r, t, Some(8))
        },
    );
    refused(Target::Sm100a, ErrorKind::ImmediateRange, "", |m, k| {
        let b = shared(m, k)?;
        k.tcgen05_alloc(CtaGroup::One, Addr::<spaces::Shared>::reg32(b), 48u32)
    });
    refused(
        Target::Sm100a,
        ErrorKind::OperandCount,
        "cta_group::2 masks are 8 registers",
        |_, k| {
            let (t, a, b, p) = (
                k.reg::<ty::U32>(),
                k.reg::<ty::B64>(),
                k.reg::<ty::B64>(),
                k.pred(),
            );
            let mask = refs(k.regs::<ty::B32>(4));
            k.tcgen05_mma(
                CtaGroup::Two,
                MmaKindTc::F16,
                false,
                t,
                TcA::Desc(a),
                b,
                0u32,
                Some(&mask),
                p,
            )
        },
    );
    refused(Target::Sm100a, ErrorKind::InvalidModifier, "", |_, k| {
        let (t, a, b, p) = (
            k.reg::<ty::U32>(),
            k.reg::<ty::B64>(),
            k.reg::<ty::B64>(),
            k.pred(),
        );
        k.tcgen05_mma(
            CtaGroup::Two,
            MmaKindTc::F16,
            true,
            t,
            TcA::Desc(a),
            b,
            0u32,
            None,
            p,
        )
    });
    refused(
        Target::Sm100a,
        ErrorKind::InvalidModifier,
        "one function, one CTA group",
        |_, k| {
            k.tcgen05_relinquish_alloc_permit(CtaGroup::One)?;
            k.tcgen05_relinquish_alloc_permit(CtaGroup::Two)
        },
    );
    let e = refused(Target::Sm90a, ErrorKind::UnsupportedTarget, "", |_, k| {
        k.tcgen05_fence_after_thread_sync()
    });
    assert!(e.message.contains("targets that have it: sm_100a"), "{e}");
}

#[test]
fn ampere_async_and_matrix_checks() {
    let l = lines_on(Target::Sm80, |m, k| {
        let b = cp_async_cg(m, k, 16)?;
        k.cp_async_commit_group()?;
        k.cp_async_wait_group(0)?;
        let r = k.regs::<ty::B32>(4);
        k.ldmatrix(MatrixCount::X4, false, &r, Addr::<spaces::Shared>::reg32(b))?;
        let (d, bb) = (refs(k.regs::<ty::F32>(4)), refs(k.regs::<ty::B32>(2)));
        k.mma_sync(
            MmaKind::F16F32 {
                ab: ScalarType::F16,
            },
            &d,
            &refs(r),
            &bb,
            &d,
        )
    });
    assert_eq!(l[1], "cp.async.cg.shared.global [%r0], [%rd0], 16;");
    assert_eq!(
        l[4],
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r0];"
    );
    assert_eq!(
        l[5],
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f0, %f1, %f2, %f3};"
    );
    refused(Target::Sm80, ErrorKind::ImmediateRange, "", |m, k| {
        cp_async_cg(m, k, 8).map(drop)
    });
    refused(Target::Sm80, ErrorKind::OperandCount, "", |m, k| {
        let b = shared(m, k)?;
        let r = k.regs::<ty::B32>(2);
        k.ldmatrix(MatrixCount::X4, false, &r, Addr::<spaces::Shared>::reg32(b))
    });
    refused(
        Target::Sm80,
        ErrorKind::UnsupportedTarget,
        "stmatrix is sm_90",
        |m, k| {
            let b = shared(m, k)?;
            let r = k.regs::<ty::B32>(1);
            k.stmatrix(MatrixCount::X1, false, Addr::<spaces::Shared>::reg32(b), &r)
        },
    );
    refused(Target::Sm80, ErrorKind::OperandCount, "", |_, k| {
        let (d, a, b) = (
            refs(k.regs::<ty::F32>(2)),
            refs(k.regs::<ty::B32>(4)),
            refs(k.regs::<ty::B32>(2)),
        );
        k.mma_sync(MmaKind::Tf32, &d, &a, &b, &d)
    });
}
