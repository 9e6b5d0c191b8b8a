//! The tile-op layer: which variant each operand combination dispatches to, the rejection table
//! of impossible ops, forced variants, and for every variant its golden PTX (re-blessed with
//! `BLESS=1`) assembled with ptxas (sm_90a for Hopper variants, sm_100a for tcgen05).

use std::path::PathBuf;

use layouts::fragment::{ldmatrix, mma, tcgen05, wgmma};
use ptxkit::isa::builder::TensorMapRef;
use ptxkit::isa::{
    FunctionBuilder, Imm, Module, RegRef, ScalarType, StateSpace, Target, ptxas, ty,
};
use ptxkit::tile::{Accumulate, ExecScope, OpCtx, Storage, TileOp, TileRef, dispatch};
use smem::SwizzleMode;

/// A kernel with a global pointer `g`, a 16 KB shared buffer `s` (1024-aligned), a tensor map
/// `tmap` and an mbarrier slot at `s + 16384`.
struct Env {
    m: Module,
    k: FunctionBuilder,
    g: ptxkit::isa::Reg<ty::U64>,
    s: ptxkit::isa::Reg<ty::U32>,
    bar: ptxkit::isa::Reg<ty::U32>,
    map: TensorMapRef,
}

fn env(target: Target) -> Env {
    let mut m = Module::new(target);
    m.shared("s", 1024, 16384 + 64).unwrap();
    let mut k = m.entry("tile_op");
    let p = k.param_ptr("g", StateSpace::Global, Some(16)).unwrap();
    let tm = k.param_bytes("tmap", 64, 128).unwrap();
    let pg = k.load_param(&p).unwrap();
    let g = k.reg::<ty::U64>();
    k.cvta_to(StateSpace::Global, g, pg).unwrap();
    let s = k.reg::<ty::U32>();
    k.mov_shared_addr(s, "s").unwrap();
    let bar = k.reg::<ty::U32>();
    k.add(bar, s, 16384u32).unwrap();
    Env {
        m,
        k,
        g,
        s,
        bar,
        map: (&tm).into(),
    }
}

fn regs<T: ty::RegType>(k: &mut FunctionBuilder, n: usize) -> Vec<RegRef> {
    k.regs::<T>(n).into_iter().map(|r| r.as_ref()).collect()
}

/// Dispatches `op` at `scope` and returns the chosen variant and the finished module.
fn run(
    mut e: Env,
    op: TileOp<'_>,
    scope: ExecScope,
    force: Option<&str>,
) -> Result<(&'static str, Module), String> {
    let target = e.m.target();
    let ctx = OpCtx { op, scope, target };
    let v = dispatch(&mut e.k, &ctx, force).map_err(|d| d.to_string())?;
    e.k.ret().unwrap();
    e.m.add(e.k.finish().map_err(|x| x.to_string())?).unwrap();
    Ok((v, e.m))
}

fn golden_and_ptxas(name: &str, m: &Module) {
    let text = m.to_ptx().unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/tile")
        .join(format!("{name}.{}.ptx", m.target()));
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    } else {
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (BLESS=1 writes it)", path.display()));
        assert_eq!(
            want,
            text,
            "{name}: differs from {} (BLESS=1 re-blesses)",
            path.display()
        );
    }
    if let Some(p) = ptxas::for_tests().unwrap() {
        let out = p.assemble(&text, m.target(), &[]).unwrap();
        assert!(out.ok, "{name}: ptxas rejected it:\n{}\n{text}", out.log);
    }
}

fn check(name: &str, expect: &str, e: Env, op: impl FnOnce(&Env) -> (TileOp<'static>, ExecScope)) {
    let (op, scope) = op(&e);
    let (v, m) = run(e, op, scope, None).unwrap_or_else(|err| panic!("{name}: {err}"));
    assert_eq!(v, expect, "{name}");
    golden_and_ptxas(name, &m);
}

fn leak<T>(x: T) -> &'static T {
    Box::leak(Box::new(x))
}

#[test]
fn copy_vector_global_to_shared() {
    check("copy_vector", "copy.vector", env(Target::Sm90a), |e| {
        let src = leak(TileRef::global_row_major(ScalarType::F32, 32, 32, e.g, 16));
        let dst = leak(TileRef::shared_row_major(
            ScalarType::F32,
            32,
            32,
            e.s,
            1024,
        ));
        (TileOp::Copy { dst, src }, ExecScope::Cta { threads: 128 })
    });
}

#[test]
fn copy_scalar_into_a_swizzled_tile() {
    check("copy_scalar", "copy.scalar", env(Target::Sm90a), |e| {
        let src = leak(TileRef::global_row_major(ScalarType::Bf16, 8, 64, e.g, 16));
        let dst = leak(
            TileRef::shared_row_major(ScalarType::Bf16, 8, 64, e.s, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    });
}

#[test]
fn copy_ldmatrix_and_stmatrix() {
    let mut e = env(Target::Sm90a);
    let r = regs::<ty::B32>(&mut e.k, 4);
    check("copy_ldmatrix", "copy.ldmatrix", e, move |e| {
        let src = leak(TileRef::shared_row_major(
            ScalarType::Bf16,
            32,
            8,
            e.s,
            1024,
        ));
        let dst = leak(TileRef::registers(
            ScalarType::Bf16,
            ldmatrix::ldmatrix(4, false).unwrap(),
            r,
        ));
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    });
    let mut e = env(Target::Sm90a);
    let r = regs::<ty::B32>(&mut e.k, 4);
    check("copy_stmatrix", "copy.stmatrix", e, move |e| {
        let src = leak(TileRef::registers(
            ScalarType::Bf16,
            ldmatrix::stmatrix(4, false).unwrap(),
            r,
        ));
        let dst = leak(TileRef::shared_row_major(
            ScalarType::Bf16,
            32,
            8,
            e.s,
            1024,
        ));
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    });
}

#[test]
fn copy_fragment_stores_an_accumulator() {
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 4);
    check("copy_fragment", "copy.fragment", e, move |e| {
        let src = leak(TileRef::registers(
            ScalarType::F32,
            mma::m16n8k16(layouts::fragment::Operand::C).unwrap(),
            acc,
        ));
        let dst = leak(TileRef::global_row_major(ScalarType::F32, 16, 8, e.g, 4));
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    });
}

#[test]
fn copy_async_variants() {
    check("cp_async", "copy_async.cp_async", env(Target::Sm90a), |e| {
        let src = leak(TileRef::global_row_major(ScalarType::Bf16, 64, 64, e.g, 16));
        let dst = leak(TileRef::shared_row_major(
            ScalarType::Bf16,
            64,
            64,
            e.s,
            1024,
        ));
        (
            TileOp::CopyAsync {
                dst,
                src,
                mbar: None,
                multicast: None,
            },
            ExecScope::Cta { threads: 256 },
        )
    });
    check("tma_load", "copy_async.tma_load", env(Target::Sm90a), |e| {
        let src = leak(TileRef::tensor_map(
            ScalarType::Bf16,
            64,
            64,
            e.map.clone(),
            vec![0i32.into(), 64i32.into()],
        ));
        let dst = leak(
            TileRef::shared_row_major(ScalarType::Bf16, 64, 64, e.s, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        (
            TileOp::CopyAsync {
                dst,
                src,
                mbar: Some(e.bar),
                multicast: None,
            },
            ExecScope::Thread,
        )
    });
    check(
        "tma_multicast",
        "copy_async.tma_multicast",
        env(Target::Sm90a),
        |e| {
            let src = leak(TileRef::tensor_map(
                ScalarType::Bf16,
                64,
                64,
                e.map.clone(),
                vec![0i32.into(), 64i32.into()],
            ));
            let dst = leak(
                TileRef::shared_row_major(ScalarType::Bf16, 64, 64, e.s, 1024)
                    .with_swizzle(SwizzleMode::B128),
            );
            (
                TileOp::CopyAsync {
                    dst,
                    src,
                    mbar: Some(e.bar),
                    multicast: Some(3u16.into()),
                },
                ExecScope::Thread,
            )
        },
    );
    check(
        "tma_store",
        "copy_async.tma_store",
        env(Target::Sm90a),
        |e| {
            let src = leak(
                TileRef::shared_row_major(ScalarType::Bf16, 64, 64, e.s, 1024)
                    .with_swizzle(SwizzleMode::B128),
            );
            let dst = leak(TileRef::tensor_map(
                ScalarType::Bf16,
                64,
                64,
                e.map.clone(),
                vec![0i32.into(), 0i32.into()],
            ));
            (
                TileOp::CopyAsync {
                    dst,
                    src,
                    mbar: None,
                    multicast: None,
                },
                ExecScope::Thread,
            )
        },
    );
    check(
        "bulk_cluster",
        "copy_async.bulk_cluster",
        env(Target::Sm90a),
        |e| {
            let src = leak(TileRef::shared_row_major(
                ScalarType::F32,
                16,
                16,
                e.s,
                1024,
            ));
            let mut dst = TileRef::shared_row_major(ScalarType::F32, 16, 16, e.s, 1024);
            dst.storage = Storage::SharedCluster;
            (
                TileOp::CopyAsync {
                    dst: leak(dst),
                    src,
                    mbar: Some(e.bar),
                    multicast: None,
                },
                ExecScope::Thread,
            )
        },
    );
}

#[test]
fn tcgen05_variants() {
    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    let r = regs::<ty::F32>(&mut e.k, 8);
    check(
        "tcgen05_ld_32x32b",
        "copy_async.tcgen05_ldst",
        e,
        move |_| {
            let tv = tcgen05::warpgroup_atom(tcgen05::LdShape::B32x32, 8).unwrap();
            let dst = leak(TileRef::registers(ScalarType::F32, tv, r));
            let src = leak(TileRef::tmem(ScalarType::F32, 128, 8, t));
            (
                TileOp::CopyAsync {
                    dst,
                    src,
                    mbar: None,
                    multicast: None,
                },
                ExecScope::Warpgroup,
            )
        },
    );
    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    let r = regs::<ty::F32>(&mut e.k, 8);
    check(
        "tcgen05_st_16x256b",
        "copy_async.tcgen05_ldst",
        e,
        move |_| {
            let tv = tcgen05::warpgroup_atom(tcgen05::LdShape::B16x256, 1).unwrap();
            let src = leak(TileRef::registers(ScalarType::F32, tv, r));
            let dst = leak(TileRef::tmem(ScalarType::F32, 128, 8, t));
            (
                TileOp::CopyAsync {
                    dst,
                    src,
                    mbar: None,
                    multicast: None,
                },
                ExecScope::Warpgroup,
            )
        },
    );
    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    check("tcgen05_cp", "copy_async.tcgen05_cp", e, move |e| {
        let mut src = TileRef::shared_row_major(ScalarType::F32, 128, 8, e.s, 1024);
        src.layout = Some(ptxkit::tile::variants::tcgen05_cp_layout(8).unwrap());
        let dst = leak(TileRef::tmem(ScalarType::F32, 128, 8, t));
        (
            TileOp::CopyAsync {
                dst,
                src: leak(src),
                mbar: None,
                multicast: None,
            },
            ExecScope::Thread,
        )
    });
    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    let s2 = e.k.reg::<ty::U32>();
    e.k.add(s2, e.s, 8192u32).unwrap();
    check("tcgen05_mma", "gemm_async.tcgen05_mma", e, move |e| {
        let a = leak(
            TileRef::shared_row_major(ScalarType::Bf16, 128, 64, e.s, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        let b = leak(
            TileRef::shared_row_major(ScalarType::Bf16, 64, 64, s2, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        let d = leak(TileRef::tmem(ScalarType::F32, 128, 64, t));
        (
            TileOp::GemmAsync {
                d,
                a,
                b,
                accumulate: Accumulate::No,
            },
            ExecScope::Thread,
        )
    });
}

#[test]
fn wgmma_from_shared_and_from_registers() {
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 64);
    let s2 = e.k.reg::<ty::U32>();
    e.k.add(s2, e.s, 8192u32).unwrap();
    check("wgmma_ss", "gemm_async.wgmma", e, move |e| {
        let a = leak(
            TileRef::shared_row_major(ScalarType::Bf16, 64, 64, e.s, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        let b = leak(
            TileRef::shared_row_major(ScalarType::Bf16, 128, 64, s2, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        let d = leak(TileRef::registers(
            ScalarType::F32,
            wgmma::accumulator(128, wgmma::Dtype::Bf16).unwrap(),
            acc,
        ));
        (
            TileOp::GemmAsync {
                d,
                a,
                b,
                accumulate: Accumulate::Yes,
            },
            ExecScope::Warpgroup,
        )
    });
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 32);
    let ar = regs::<ty::B32>(&mut e.k, 4);
    check("wgmma_rs", "gemm_async.wgmma", e, move |e| {
        let a = leak(TileRef::registers(
            ScalarType::F16,
            wgmma::register_a(wgmma::Dtype::F16).unwrap(),
            ar,
        ));
        let b = leak(
            TileRef::shared_row_major(ScalarType::F16, 64, 16, e.s, 1024)
                .with_swizzle(SwizzleMode::B32),
        );
        let d = leak(TileRef::registers(
            ScalarType::F32,
            wgmma::accumulator(64, wgmma::Dtype::F16).unwrap(),
            acc,
        ));
        (
            TileOp::GemmAsync {
                d,
                a,
                b,
                accumulate: Accumulate::No,
            },
            ExecScope::Warpgroup,
        )
    });
}

#[test]
fn fill_and_cast() {
    let mut e = env(Target::Sm90a);
    let r = regs::<ty::F32>(&mut e.k, 8);
    check("fill_registers", "fill.registers", e, move |_| {
        let dst = leak(TileRef::registers(
            ScalarType::F32,
            mma::m16n8k16(layouts::fragment::Operand::C).unwrap(),
            r,
        ));
        (
            TileOp::Fill {
                dst,
                value: Imm::f32(0.0),
            },
            ExecScope::Warp,
        )
    });
    check("fill_memory", "fill.memory", env(Target::Sm90a), |e| {
        let dst = leak(TileRef::shared_row_major(
            ScalarType::F32,
            16,
            16,
            e.s,
            1024,
        ));
        (
            TileOp::Fill {
                dst,
                value: Imm::f32(1.0),
            },
            ExecScope::Cta { threads: 64 },
        )
    });
    let mut e = env(Target::Sm90a);
    let src = regs::<ty::F32>(&mut e.k, 4);
    let dst = regs::<ty::Bf16x2>(&mut e.k, 2);
    check("cast_registers", "cast.registers", e, move |_| {
        let tv = mma::m16n8k16(layouts::fragment::Operand::C).unwrap();
        let s = leak(TileRef::registers(ScalarType::F32, tv.clone(), src));
        let d = leak(TileRef::registers(ScalarType::Bf16, tv, dst));
        (TileOp::Cast { dst: d, src: s }, ExecScope::Warp)
    });
}

#[test]
fn ldmatrix_refuses_a_tile_the_fragment_does_not_cover() {
    let mut e = env(Target::Sm90a);
    let r = regs::<ty::B32>(&mut e.k, 4);
    let src = leak(TileRef::shared_row_major(
        ScalarType::Bf16,
        16,
        16,
        e.s,
        1024,
    ));
    let dst = leak(TileRef::registers(
        ScalarType::Bf16,
        ldmatrix::ldmatrix(4, false).unwrap(),
        r,
    ));
    let err = run(e, TileOp::Copy { dst, src }, ExecScope::Warp, None).unwrap_err();
    assert!(
        err.contains("the shared tile is [16, 16]; the fragment covers [32, 8]"),
        "{err}"
    );
    assert!(
        err.contains("copy.fragment |        5 | fragment  | 4 registers for 8 values per thread"),
        "{err}"
    );
}

#[test]
fn forcing_a_variant() {
    let e = env(Target::Sm90a);
    let src = leak(TileRef::global_row_major(ScalarType::F32, 4, 4, e.g, 16));
    let dst = leak(TileRef::shared_row_major(ScalarType::F32, 4, 4, e.s, 1024));
    let (v, _) = run(
        e,
        TileOp::Copy { dst, src },
        ExecScope::Warp,
        Some("copy.scalar"),
    )
    .unwrap();
    assert_eq!(v, "copy.scalar");
    let e = env(Target::Sm90a);
    let err = run(
        e,
        TileOp::Copy { dst, src },
        ExecScope::Warp,
        Some("copy.magic"),
    )
    .unwrap_err();
    assert!(
        err.contains("no copy variant is called `copy.magic`"),
        "{err}"
    );
}

#[test]
fn the_rejection_table() {
    let e = env(Target::Sm90a);
    let src = leak(TileRef::shared_row_major(ScalarType::F32, 8, 8, e.s, 1024));
    let dst = leak(TileRef::shared_row_major(ScalarType::Bf16, 8, 8, e.s, 1024));
    let err = run(e, TileOp::Copy { dst, src }, ExecScope::Warp, None).unwrap_err();
    assert_eq!(
        err,
        "no variant lowers copy at warp scope on sm_90a
  dst: shared.bf16 [8x8] 64:1 align 1024
  src: shared.f32 [8x8] 64:1 align 1024
  variant       | priority | predicate | reason
  copy.ldmatrix |       30 | storage   | shared->shared is not shared->local
  copy.stmatrix |       30 | storage   | shared->shared is not local->shared
  copy.vector   |       20 | elements  | element types differ: .f32 and .bf16
  copy.fragment |        5 | storage   | shared->shared is not global->local or shared->local or local->global or local->shared
  copy.scalar   |        0 | elements  | element types differ: .f32 and .bf16
"
    );
    // A tcgen05 op on Hopper: the target column says why.
    let mut e = env(Target::Sm90a);
    let t = e.k.reg::<ty::U32>();
    let r = regs::<ty::F32>(&mut e.k, 8);
    let tv = tcgen05::warpgroup_atom(tcgen05::LdShape::B32x32, 8).unwrap();
    let dst = leak(TileRef::registers(ScalarType::F32, tv, r));
    let src = leak(TileRef::tmem(ScalarType::F32, 128, 8, t));
    let err = run(
        e,
        TileOp::CopyAsync {
            dst,
            src,
            mbar: None,
            multicast: None,
        },
        ExecScope::Warpgroup,
        None,
    )
    .unwrap_err();
    let row = err
        .lines()
        .find(|l| l.trim_start().starts_with("copy_async.tcgen05_ldst"))
        .unwrap_or_default();
    assert!(row.contains("|       10 | target"), "{err}");
    assert!(err.contains("sm_90a lacks it (targets: sm_100a)"), "{err}");
}
