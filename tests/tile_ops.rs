//! The tile-op layer: which variant each operand combination dispatches to, the rejection table
//! of impossible ops, forced variants, and for every variant its golden PTX (re-blessed with
//! `BLESS=1`) assembled with ptxas (sm_90a for Hopper variants, sm_100a for tcgen05).

mod support;

use std::path::PathBuf;

use layouts::fragment::{ldmatrix, mma, tcgen05, wgmma};
use ptxkit::isa::builder::{TensorMapRef, TmaReduceOp};
use ptxkit::isa::{
    FunctionBuilder, Imm, Module, RegRef, ScalarType, StateSpace, Target, ptxas, ty,
};
use ptxkit::tile::{
    Accumulate, Elementwise, ExecScope, OpCtx, RunCount, Storage, TileOp, TileRef, dispatch,
    dispatch_on,
};
use smem::SwizzleMode;
use smem::pipeline::protocol::ProtocolError;
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier, WaitMode};

/// A kernel with a global pointer `g`, a 16 KB shared buffer `s` (1024-aligned), a tensor map
/// `tmap` and an mbarrier slot at `s + 16384`.
struct Env {
    m: Module,
    k: FunctionBuilder,
    g: ptxkit::isa::Reg<ty::U64>,
    s: ptxkit::isa::Reg<ty::U32>,
    bar: NamedBarrier,
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
    let addr = k.reg::<ty::U32>();
    k.add(addr, s, 16384u32).unwrap();
    let bar = BarrierSync::new("tile_op", WaitMode::Spin)
        .declare_one("bar", 1, addr)
        .unwrap();
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
    let rel = format!("tile/{name}.{}.ptx", m.target());
    support::golden(&rel, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
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

/// `dst = src` asynchronously, completing on no barrier and written to no other CTA.
fn copy_async(dst: &'static TileRef, src: &'static TileRef) -> TileOp<'static> {
    TileOp::CopyAsync {
        dst,
        src,
        mbar: None,
        multicast: None,
    }
}

/// `d = a·bᵀ (+ d)` asynchronously.
fn gemm_async(
    d: &'static TileRef,
    a: &'static TileRef,
    b: &'static TileRef,
    accumulate: Accumulate,
) -> TileOp<'static> {
    TileOp::GemmAsync {
        d,
        a,
        b,
        accumulate,
        k_extent: None,
    }
}

/// The m16n8k16 C fragment (a warp's accumulator) of `dtype` held in `regs`.
fn c_fragment(dtype: ScalarType, regs: Vec<RegRef>) -> &'static TileRef {
    leak(TileRef::registers(
        dtype,
        mma::m16n8k16(layouts::fragment::Operand::C).unwrap(),
        regs,
    ))
}

/// An sm_90a kernel and the [`c_fragment`] of `count` f32 registers of it.
fn f32_fragment(count: usize) -> (Env, &'static TileRef) {
    let mut e = env(Target::Sm90a);
    let values = regs::<ty::F32>(&mut e.k, count);
    (e, c_fragment(ScalarType::F32, values))
}

/// A `rows x cols` row-major shared tile at `base` (1024-byte aligned).
fn shared(
    dtype: ScalarType,
    rows: u32,
    cols: u32,
    base: ptxkit::isa::Reg<ty::U32>,
) -> &'static TileRef {
    leak(TileRef::shared_row_major(dtype, rows, cols, base, 1024))
}

/// The 64 x 64 bf16 box of `e`'s tensor map at the coordinates `[0, second]`.
fn bf16_box(e: &Env, second: i32) -> &'static TileRef {
    leak(TileRef::tensor_map(
        ScalarType::Bf16,
        64,
        64,
        e.map.clone(),
        vec![0i32.into(), second.into()],
    ))
}

/// A `rows x cols` row-major shared tile at `base` (1024-byte aligned) with `swizzle`.
fn swizzled(
    dtype: ScalarType,
    rows: u32,
    cols: u32,
    base: ptxkit::isa::Reg<ty::U32>,
    swizzle: SwizzleMode,
) -> &'static TileRef {
    leak(TileRef::shared_row_major(dtype, rows, cols, base, 1024).with_swizzle(swizzle))
}

#[test]
fn copy_vector_global_to_shared() {
    check("copy_vector", "copy.vector", env(Target::Sm90a), |e| {
        let src = leak(TileRef::global_row_major(ScalarType::F32, 32, 32, e.g, 16));
        let dst = shared(ScalarType::F32, 32, 32, e.s);
        (TileOp::Copy { dst, src }, ExecScope::Cta { threads: 128 })
    });
}

#[test]
fn copy_scalar_into_a_swizzled_tile() {
    check("copy_scalar", "copy.scalar", env(Target::Sm90a), |e| {
        let src = leak(TileRef::global_row_major(ScalarType::Bf16, 8, 64, e.g, 16));
        let dst = swizzled(ScalarType::Bf16, 8, 64, e.s, SwizzleMode::B128);
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    });
}

#[test]
fn copy_ldmatrix_and_stmatrix() {
    for (name, fragment, load) in [
        ("ldmatrix", ldmatrix::ldmatrix(4, false).unwrap(), true),
        ("stmatrix", ldmatrix::stmatrix(4, false).unwrap(), false),
    ] {
        let mut e = env(Target::Sm90a);
        let r = regs::<ty::B32>(&mut e.k, 4);
        let variant = format!("copy.{name}");
        check(&format!("copy_{name}"), &variant, e, move |e| {
            let tile = shared(ScalarType::Bf16, 32, 8, e.s);
            let registers = leak(TileRef::registers(ScalarType::Bf16, fragment, r));
            let (dst, src) = if load {
                (registers, tile)
            } else {
                (tile, registers)
            };
            (TileOp::Copy { dst, src }, ExecScope::Warp)
        });
    }
}

#[test]
fn copy_fragment_stores_an_accumulator() {
    let (e, src) = f32_fragment(4);
    check("copy_fragment", "copy.fragment", e, move |e| {
        let dst = leak(TileRef::global_row_major(ScalarType::F32, 16, 8, e.g, 4));
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    });
}

/// On a swizzled tile the fragment copy computes one address per distinct swizzle pattern: a
/// warp's m16n8 f32 C fragment into a 16 x 8 shared tile with the 128-byte swizzle, each
/// thread's column pair one address and one `st.shared.v2.f32` (the second value 4 bytes on,
/// the first 8-byte aligned), its rows `r` and `r + 8` two (256 bytes apart, which the swizzle
/// moves by an amount that depends on the thread).
#[test]
fn copy_fragment_to_a_swizzled_tile_computes_each_pattern_once() {
    let (e, src) = f32_fragment(4);
    let (op, scope) = {
        let dst = leak(
            TileRef::shared_row_major(ScalarType::F32, 16, 8, e.s, 1024)
                .with_swizzle(SwizzleMode::B128),
        );
        (TileOp::Copy { dst, src }, ExecScope::Warp)
    };
    let (v, m) = run(e, op, scope, None).unwrap();
    assert_eq!(v, "copy.fragment");
    let text = m.to_ptx().unwrap();
    assert_eq!(text.matches("xor.b32").count(), 2, "{text}");
    assert_eq!(text.matches("st.shared.v2.f32").count(), 2, "{text}");
    assert_eq!(text.matches("st.shared.f32").count(), 0, "{text}");
    golden_and_ptxas("copy_fragment_swizzled", &m);
}

/// A run-time count for pitches and bounds (`%tid.x` stands in for a kernel parameter).
fn runtime(k: &mut FunctionBuilder) -> ptxkit::isa::Reg<ty::U32> {
    let r = k.reg::<ty::U32>();
    k.mov_sreg(r, ptxkit::isa::SpecialReg::Tid(ptxkit::isa::Dim::X))
        .unwrap();
    r
}

/// A bounded fragment-view copy on sm_90a between a warp's m16n8k16 C fragment (`count`
/// registers of `T`, elements of `dtype`) and a 16 x 8 block of a global matrix aligned to
/// `align` bytes, whose pitch (a multiple of `pitch_of`) and column bound (a multiple of
/// `cols_of`) are known at run time: a store into the block when `store`, else a load from it.
/// The variant is asserted to be `copy.fragment_view`; returns the module and its text.
fn fragment_view<T: ty::RegType>(
    count: usize,
    dtype: ScalarType,
    align: u32,
    pitch_of: u32,
    cols_of: u32,
    store: bool,
) -> (Module, String) {
    let mut e = env(Target::Sm90a);
    let values = regs::<T>(&mut e.k, count);
    let (n, rows, cols) = (runtime(&mut e.k), runtime(&mut e.k), runtime(&mut e.k));
    let fragment = c_fragment(dtype, values);
    let block = leak(
        TileRef::global_pitched(dtype, 16, 8, e.g, align, RunCount::new(n, pitch_of))
            .with_bounds(RunCount::new(rows, 1), RunCount::new(cols, cols_of)),
    );
    let (dst, src) = if store {
        (block, fragment)
    } else {
        (fragment, block)
    };
    let op = TileOp::Copy { dst, src };
    let (v, m) = run(e, op, ExecScope::Warp, None).unwrap();
    assert_eq!(v, "copy.fragment_view");
    let text = m.to_ptx().unwrap();
    (m, text)
}

#[test]
fn copy_fragment_view_at_the_edges_of_a_matrix() {
    // f32 accumulators into a pitched, bounded block: pairs of columns become st.v2 when the
    // pitch is even, each guarded by its row and column.
    let (m, text) = fragment_view::<ty::F32>(4, ScalarType::F32, 8, 2, 2, true);
    assert_eq!(text.matches("st.global.v2.f32").count(), 2, "{text}");
    assert_eq!(text.matches("@%p").count(), 2, "{text}");
    golden_and_ptxas("copy_fragment_view_f32", &m);

    // bf16 pairs into a matrix with an odd pitch: a pair's word may be misaligned, so each
    // half is stored on its own, guarded by its own column.
    let (m, text) = fragment_view::<ty::Bf16x2>(2, ScalarType::Bf16, 2, 1, 1, true);
    assert_eq!(text.matches("st.global.b16").count(), 4, "{text}");
    golden_and_ptxas("copy_fragment_view_bf16_odd", &m);

    // A bounded load of bf16 pairs with an even pitch: one 32-bit load per pair, zeroed first.
    let (m, text) = fragment_view::<ty::Bf16x2>(2, ScalarType::Bf16, 4, 2, 2, false);
    assert_eq!(text.matches("ld.global.b32").count(), 2, "{text}");
    assert_eq!(text.matches("mov.b32 %hh").count(), 2, "{text}");
    golden_and_ptxas("copy_fragment_view_load", &m);

    // A bounded tile is a view: the variants that take static tiles say so.
    let mut e = env(Target::Sm90a);
    let (n, rows) = (runtime(&mut e.k), runtime(&mut e.k));
    let src = leak(
        TileRef::global_row_major(ScalarType::F32, 16, 16, e.g, 16)
            .with_bounds(RunCount::new(rows, 1), RunCount::new(n, 1)),
    );
    let dst = shared(ScalarType::F32, 16, 16, e.s);
    let err = run(e, TileOp::Copy { dst, src }, ExecScope::Warp, None).unwrap_err();
    let row = err
        .lines()
        .find(|l| l.trim_start().starts_with("copy.vector"))
        .unwrap_or_default();
    assert!(
        row.contains("| views     | takes no run-time pitch or bounds"),
        "{err}"
    );
}

#[test]
fn elementwise_and_casts_for_an_epilogue() {
    // alpha * acc + beta * C with C arriving as bf16 pairs: cast to f32, axpby, cast back.
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 4);
    let c_pairs = regs::<ty::Bf16x2>(&mut e.k, 2);
    let c_f32 = regs::<ty::F32>(&mut e.k, 4);
    let out = regs::<ty::F32>(&mut e.k, 4);
    let alpha = e.k.reg::<ty::F32>();
    e.k.mov(alpha, 1.5f32).unwrap();
    let tv = mma::m16n8k16(layouts::fragment::Operand::C).unwrap();
    let pairs = leak(TileRef::registers(ScalarType::Bf16, tv.clone(), c_pairs));
    let wide = leak(TileRef::registers(ScalarType::F32, tv.clone(), c_f32));
    let a = leak(TileRef::registers(ScalarType::F32, tv.clone(), acc));
    let d = leak(TileRef::registers(ScalarType::F32, tv, out));
    let ctx = |op| OpCtx {
        op,
        scope: ExecScope::Warp,
        target: Target::Sm90a,
    };
    let v = dispatch(
        &mut e.k,
        &ctx(TileOp::Cast {
            dst: wide,
            src: pairs,
        }),
        None,
    )
    .unwrap();
    assert_eq!(v, "cast.registers");
    let f = Elementwise::Axpby {
        alpha: alpha.into(),
        beta: 0.25f32.into(),
    };
    let op = TileOp::Elementwise {
        dst: d,
        a,
        b: Some(wide),
        f,
    };
    let v = dispatch(&mut e.k, &ctx(op), None).unwrap();
    assert_eq!(v, "elementwise.registers");
    // `d = f(d)` in place.
    let unary = |f| {
        ctx(TileOp::Elementwise {
            dst: d,
            a: d,
            b: None,
            f,
        })
    };
    let v = dispatch(&mut e.k, &unary(Elementwise::Relu), None).unwrap();
    assert_eq!(v, "elementwise.registers");
    // A binary function without b is declined with its reason.
    let err = dispatch(&mut e.k, &unary(Elementwise::Add), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("| registers | a + b needs b"), "{err}");
    e.k.ret().unwrap();
    let mut m = e.m;
    m.add(e.k.finish().unwrap()).unwrap();
    let text = m.to_ptx().unwrap();
    assert_eq!(text.matches("cvt.f32.bf16").count(), 4, "{text}");
    assert_eq!(text.matches("fma.rn.f32").count(), 4, "{text}");
    assert_eq!(text.matches("max.f32").count(), 4, "{text}");
    golden_and_ptxas("elementwise_axpby", &m);
}

#[test]
fn copy_async_variants() {
    check("cp_async", "copy_async.cp_async", env(Target::Sm90a), |e| {
        let src = leak(TileRef::global_row_major(ScalarType::Bf16, 64, 64, e.g, 16));
        let dst = shared(ScalarType::Bf16, 64, 64, e.s);
        (copy_async(dst, src), ExecScope::Cta { threads: 256 })
    });
    for (name, multicast) in [("tma_load", None), ("tma_multicast", Some(3u16.into()))] {
        let variant = format!("copy_async.{name}");
        check(name, &variant, env(Target::Sm90a), move |e| {
            let src = bf16_box(e, 64);
            let dst = swizzled(ScalarType::Bf16, 64, 64, e.s, SwizzleMode::B128);
            let op = TileOp::CopyAsync {
                dst,
                src,
                mbar: Some(e.bar),
                multicast,
            };
            (op, ExecScope::Thread)
        });
    }
    // A TMA store, and the same sides reduced into the tensor in L2 (C accumulated in place).
    for (name, variant, reduce) in [
        ("tma_store", "copy_async.tma_store", None),
        (
            "tma_reduce",
            "reduce_async.tma_reduce",
            Some(TmaReduceOp::Add),
        ),
    ] {
        check(name, variant, env(Target::Sm90a), move |e| {
            let src = swizzled(ScalarType::Bf16, 64, 64, e.s, SwizzleMode::B128);
            let dst = bf16_box(e, 0);
            let op = match reduce {
                None => copy_async(dst, src),
                Some(op) => TileOp::ReduceAsync { dst, src, op },
            };
            (op, ExecScope::Thread)
        });
    }
    check(
        "bulk_cluster",
        "copy_async.bulk_cluster",
        env(Target::Sm90a),
        |e| {
            let src = shared(ScalarType::F32, 16, 16, e.s);
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

/// On `target`: a `tcgen05.ld` (`load`) or `.st` between 8 f32 registers a thread and a
/// 128 x 8 f32 tensor-memory tile, through the warpgroup atom `shape` repeated `repeat` times.
fn tcgen05_ldst(
    target: Target,
    shape: tcgen05::LdShape,
    repeat: i64,
    load: bool,
) -> (Env, TileOp<'static>) {
    let mut e = env(target);
    let t = e.k.reg::<ty::U32>();
    let r = regs::<ty::F32>(&mut e.k, 8);
    let tv = tcgen05::warpgroup_atom(shape, repeat).unwrap();
    let registers = leak(TileRef::registers(ScalarType::F32, tv, r));
    let tmem = leak(TileRef::tmem(ScalarType::F32, 128, 8, t));
    let op = if load {
        copy_async(registers, tmem)
    } else {
        copy_async(tmem, registers)
    };
    (e, op)
}

#[test]
fn tcgen05_variants() {
    for (name, shape, repeat, load) in [
        ("tcgen05_ld_32x32b", tcgen05::LdShape::B32x32, 8, true),
        ("tcgen05_st_16x256b", tcgen05::LdShape::B16x256, 1, false),
    ] {
        let (e, op) = tcgen05_ldst(Target::Sm100a, shape, repeat, load);
        check(name, "copy_async.tcgen05_ldst", e, move |_| {
            (op, ExecScope::Warpgroup)
        });
    }
    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    check("tcgen05_cp", "copy_async.tcgen05_cp", e, move |e| {
        let mut src = TileRef::shared_row_major(ScalarType::F32, 128, 8, e.s, 1024);
        src.layout = Some(ptxkit::tile::variants::tcgen05_cp_layout(8).unwrap());
        let dst = leak(TileRef::tmem(ScalarType::F32, 128, 8, t));
        (copy_async(dst, leak(src)), ExecScope::Thread)
    });
    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    let s2 = e.k.reg::<ty::U32>();
    e.k.add(s2, e.s, 8192u32).unwrap();
    check("tcgen05_mma", "gemm_async.tcgen05_mma", e, move |e| {
        let a = swizzled(ScalarType::Bf16, 128, 64, e.s, SwizzleMode::B128);
        let b = swizzled(ScalarType::Bf16, 64, 64, s2, SwizzleMode::B128);
        let d = leak(TileRef::tmem(ScalarType::F32, 128, 64, t));
        (gemm_async(d, a, b, Accumulate::No), ExecScope::Thread)
    });
}

#[test]
fn wgmma_from_shared_and_from_registers() {
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 64);
    let s2 = e.k.reg::<ty::U32>();
    e.k.add(s2, e.s, 8192u32).unwrap();
    check("wgmma_ss", "gemm_async.wgmma", e, move |e| {
        let a = swizzled(ScalarType::Bf16, 64, 64, e.s, SwizzleMode::B128);
        let b = swizzled(ScalarType::Bf16, 128, 64, s2, SwizzleMode::B128);
        let d = leak(TileRef::registers(
            ScalarType::F32,
            wgmma::accumulator(128, ScalarType::Bf16).unwrap(),
            acc,
        ));
        (gemm_async(d, a, b, Accumulate::Yes), ExecScope::Warpgroup)
    });
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 32);
    let ar = regs::<ty::B32>(&mut e.k, 4);
    check("wgmma_rs", "gemm_async.wgmma", e, move |e| {
        let a = leak(TileRef::registers(
            ScalarType::F16,
            wgmma::register_a(ScalarType::F16).unwrap(),
            ar,
        ));
        let b = swizzled(ScalarType::F16, 64, 16, e.s, SwizzleMode::B32);
        let d = leak(TileRef::registers(
            ScalarType::F32,
            wgmma::accumulator(64, ScalarType::F16).unwrap(),
            acc,
        ));
        (gemm_async(d, a, b, Accumulate::No), ExecScope::Warpgroup)
    });
}

#[test]
fn fill_and_cast() {
    let (e, dst) = f32_fragment(8);
    check("fill_registers", "fill.registers", e, move |_| {
        (
            TileOp::Fill {
                dst,
                value: Imm::f32(0.0),
            },
            ExecScope::Warp,
        )
    });
    check("fill_memory", "fill.memory", env(Target::Sm90a), |e| {
        let dst = shared(ScalarType::F32, 16, 16, e.s);
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
    let src = shared(ScalarType::Bf16, 16, 16, e.s);
    let dst = leak(TileRef::registers(
        ScalarType::Bf16,
        ldmatrix::ldmatrix(4, false).unwrap(),
        r,
    ));
    let err = run(e, TileOp::Copy { dst, src }, ExecScope::Warp, None).unwrap_err();
    assert!(
        err.contains("the memory tile is [16, 16]; the register tile covers [32, 8]"),
        "{err}"
    );
    assert!(
        err.contains(
            "copy.fragment          |        5 | fragment  | 4 registers for 8 values per thread"
        ),
        "{err}"
    );
}

/// A GEMM epilogue's staging block at `base`: two 64-column slabs of 64 rows, 128B-swizzled,
/// offset(r, c) = c % 64 + 64 r + 4096 (c / 64).
fn staging_slabs(base: ptxkit::isa::Reg<ty::U32>) -> TileRef {
    use layouts::IntTuple as T;
    let mut slabs = TileRef::shared_row_major(ScalarType::Bf16, 64, 128, base, 1024)
        .with_swizzle(SwizzleMode::B128);
    slabs.layout = Some(
        layouts::Layout::new(
            T::tuple([T::tuple([T::Int(64), T::Int(2)]), T::Int(64)]),
            T::tuple([T::tuple([T::Int(1), T::Int(4096)]), T::Int(64)]),
        )
        .unwrap(),
    );
    slabs
}

/// A wgmma accumulator's 16-bit pairs into the swizzled slabs of a GEMM epilogue's staging
/// block (`stmatrix.x4`), and the same plan the other way (`ldmatrix.x4`: a tile a TMA load
/// staged, read back in the accumulator's layout): the same addresses either way.
#[test]
fn wgmma_accumulator_to_and_from_swizzled_slabs() {
    for (name, variant, store) in [
        ("copy_stmatrix_fragment", "copy.stmatrix_fragment", true),
        ("copy_ldmatrix_fragment", "copy.ldmatrix_fragment", false),
    ] {
        let mut e = env(Target::Sm90a);
        let pairs = regs::<ty::Bf16x2>(&mut e.k, 32);
        check(name, variant, e, move |e| {
            let frag = wgmma::accumulator(128, ScalarType::Bf16).unwrap();
            let regs = leak(TileRef::registers(ScalarType::Bf16, frag, pairs));
            let slabs = leak(staging_slabs(e.s));
            let (dst, src) = if store { (slabs, regs) } else { (regs, slabs) };
            (TileOp::Copy { dst, src }, ExecScope::Warpgroup)
        });
    }
}

#[test]
fn forcing_a_variant() {
    let e = env(Target::Sm90a);
    let src = leak(TileRef::global_row_major(ScalarType::F32, 4, 4, e.g, 16));
    let dst = shared(ScalarType::F32, 4, 4, e.s);
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
    let src = shared(ScalarType::F32, 8, 8, e.s);
    let dst = shared(ScalarType::Bf16, 8, 8, e.s);
    let err = run(e, TileOp::Copy { dst, src }, ExecScope::Warp, None).unwrap_err();
    assert_eq!(
        err,
        "no variant lowers copy at warp scope on sm_90a
  dst: shared.bf16 [8x8] 64:1 align 1024
  src: shared.f32 [8x8] 64:1 align 1024
  variant                | priority | predicate | reason
  copy.ldmatrix          |       30 | storage   | shared->shared is not shared->local
  copy.stmatrix          |       30 | storage   | shared->shared is not local->shared
  copy.ldmatrix_fragment |       25 | storage   | shared->shared is not shared->local
  copy.stmatrix_fragment |       25 | storage   | shared->shared is not local->shared
  copy.vector            |       20 | elements  | element types differ: .f32 and .bf16
  copy.fragment_view     |        6 | storage   | shared->shared is not global->local or local->global
  copy.fragment          |        5 | storage   | shared->shared is not global->local or shared->local or local->global or local->shared
  copy.scalar            |        0 | elements  | element types differ: .f32 and .bf16
"
    );
    // A tcgen05 op on Hopper: the target column says why.
    let (e, op) = tcgen05_ldst(Target::Sm90a, tcgen05::LdShape::B32x32, 8, true);
    let err = run(e, op, ExecScope::Warpgroup, None).unwrap_err();
    let row = err
        .lines()
        .find(|l| l.trim_start().starts_with("copy_async.tcgen05_ldst"))
        .unwrap_or_default();
    assert!(row.contains("|       10 | target"), "{err}");
    assert!(err.contains("sm_90a lacks it (targets: sm_100a)"), "{err}");
}

#[test]
fn planning_writes_nothing_and_rejections_are_typed() {
    use ptxkit::tile::{DispatchError, Rejection, ScopeKind, StoragePair, plan};
    let e = env(Target::Sm90a);
    let src = leak(TileRef::global_row_major(ScalarType::F32, 32, 32, e.g, 16));
    let dst = shared(ScalarType::F32, 32, 32, e.s);
    let ctx = leak(OpCtx {
        op: TileOp::Copy { dst, src },
        scope: ExecScope::Cta { threads: 128 },
        target: Target::Sm90a,
    });
    // The choice is made without a builder: nothing can be half-written.
    let (v, _plan) = plan(ctx, None).unwrap();
    assert_eq!(v.name, "copy.vector");
    // A miss carries typed rows: the storage pair and the scopes a variant takes.
    let regs_dst = shared(ScalarType::Bf16, 8, 8, e.s);
    let bad = leak(OpCtx {
        op: TileOp::Copy { dst: regs_dst, src },
        scope: ExecScope::Thread,
        target: Target::Sm90a,
    });
    let Err(DispatchError::NoVariant { declined, .. }) = plan(bad, None) else {
        panic!("expected a miss");
    };
    let reason = |variant| {
        &declined
            .iter()
            .find(|d| d.variant == variant)
            .unwrap()
            .reason
    };
    assert_eq!(
        *reason("copy.ldmatrix"),
        Rejection::Storage {
            got: StoragePair {
                dst: Storage::Shared,
                src: Storage::Global
            },
            allowed: &[StoragePair {
                dst: Storage::Local,
                src: Storage::Shared
            }],
        }
    );
    assert_eq!(
        *reason("copy.vector"),
        Rejection::ElementTypes {
            src: ScalarType::F32,
            dst: ScalarType::Bf16
        }
    );
    // A scope a variant does not take names the scopes it does.
    let mut e = env(Target::Sm90a);
    let r = regs::<ty::B32>(&mut e.k, 4);
    let tv = ldmatrix::ldmatrix(4, false).unwrap();
    let frag = leak(TileRef::registers(ScalarType::Bf16, tv, r));
    let sh = shared(ScalarType::Bf16, 32, 8, e.s);
    let cta = leak(OpCtx {
        op: TileOp::Copy { dst: frag, src: sh },
        scope: ExecScope::Cta { threads: 32 },
        target: Target::Sm90a,
    });
    let Err(DispatchError::NoVariant { declined, .. }) = plan(cta, Some("copy.ldmatrix")) else {
        panic!("expected a miss");
    };
    assert_eq!(
        declined[0].reason,
        Rejection::Scope {
            got: ExecScope::Cta { threads: 32 },
            allowed: &[ScopeKind::Warp]
        }
    );
    assert_eq!(declined[0].reason.to_string(), "scope cta(32) is not warp");
}

#[test]
fn a_tma_load_records_its_bytes_against_its_named_barrier() {
    // The TMA tile op's barrier is a named one: dispatched through `dispatch_on`, the bytes it
    // delivers (a 64 x 64 bf16 tile) are recorded against `tma_bar`, so an `expect_tx` that
    // announces another count is a build error naming the barrier, and a debug build's wait on
    // it is bounded and knows its bytes.
    for (announced, ok) in [(8192, true), (8192 + 1024, false)] {
        let mut e = env(Target::Sm90a);
        let mut sync = BarrierSync::new("tile_op", WaitMode::Bounded);
        sync.declare_globals(&mut e.m).unwrap();
        let bar = sync.declare_one("tma_bar", 1, e.bar.addr).unwrap();
        sync.init(&mut e.k, bar).unwrap();
        let arrival = Arrival::ExpectTx(announced);
        sync.arrive(&mut e.k, bar, arrival, ArriveSite::Loop)
            .unwrap();
        let src = bf16_box(&e, 0);
        let dst = swizzled(ScalarType::Bf16, 64, 64, e.s, SwizzleMode::B128);
        let ctx = OpCtx {
            op: TileOp::CopyAsync {
                dst,
                src,
                mbar: Some(bar),
                multicast: None,
            },
            scope: ExecScope::Thread,
            target: Target::Sm90a,
        };
        assert_eq!(
            dispatch_on(&mut e.k, &mut sync, &ctx, None).unwrap(),
            "copy_async.tma_load"
        );
        assert_eq!(sync.protocol().copied_bytes(bar.at), 8192);
        sync.wait(&mut e.k, bar.at, None, bar.addr, 0u32).unwrap();
        e.m.add(e.k.finish().unwrap()).unwrap();
        let ptx = e.m.to_ptx().unwrap();
        assert!(ptx.contains("%globaltimer"), "the wait is bounded");
        match sync.finish() {
            Ok(sites) => {
                assert!(ok);
                let site = &sites.sites[0];
                assert_eq!(
                    (
                        site.array.as_str(),
                        site.expect_tx,
                        site.copied,
                        site.arrivals
                    ),
                    ("tma_bar", 8192, 8192, 1)
                );
                if let Some(ptxas) = ptxas::for_tests().unwrap() {
                    let out = ptxas.assemble(&ptx, Target::Sm90a, &[]).unwrap();
                    assert!(out.ok, "{}", out.log);
                }
            }
            Err(err) => {
                assert!(!ok);
                assert!(
                    matches!(&err, ProtocolError::TxMismatch { barrier, expect_tx: 9216, copied: 8192 }
                        if barrier.to_string() == "tma_bar"),
                    "{err}"
                );
            }
        }
    }
}

/// A warpgroup's `gemm_async` into an m64n`n` f32 accumulator: checked as `check` does (the
/// wgmma variant, golden file, ptxas), and the golden text returned.
fn wgmma_case(
    name: &str,
    mut e: Env,
    n: usize,
    a: impl FnOnce(&mut Env) -> TileRef,
    b: impl FnOnce(&Env) -> TileRef,
    accumulate: Accumulate,
    k_extent: bool,
) -> String {
    let acc = regs::<ty::F32>(&mut e.k, n / 2);
    let a = leak(a(&mut e));
    let k_extent = k_extent.then(|| e.k.reg::<ty::U32>());
    check(name, "gemm_async.wgmma", e, move |e| {
        let d = leak(TileRef::registers(
            ScalarType::F32,
            wgmma::accumulator(n as i64, ScalarType::Bf16).unwrap(),
            acc,
        ));
        let b = leak(b(e));
        (
            TileOp::GemmAsync {
                d,
                a,
                b,
                accumulate,
                k_extent,
            },
            ExecScope::Warpgroup,
        )
    });
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/golden/tile/{name}.sm_90a.ptx")),
    )
    .unwrap()
}

/// `O += P·V` over a run-time K extent (an attention's last key tile): one complete group per
/// path (fence, the path's k-steps, commit; quarters of the steps, the last all of them), the
/// path picked by a uniform branch on the extent; and tcgen05.mma, which has no such form,
/// refuses an extent.
#[test]
fn wgmma_skips_the_k_steps_past_a_run_time_extent() {
    let text = p_v_case("wgmma_rs_k_extent", true);
    // Paths of 1, 2, 3 and 4 k-steps: 10 wgmmas in 4 groups, 3 branches on the extent.
    assert_eq!(text.matches("wgmma.mma_async").count(), 10);
    assert_eq!(text.matches("wgmma.fence").count(), 4);
    assert_eq!(text.matches("wgmma.commit_group").count(), 4);
    for end in [16, 32, 48] {
        assert!(text.contains(&format!(", {end};")), "{text}");
    }
    assert_eq!(text.matches("bra.uni").count(), 6, "{text}");

    let mut e = env(Target::Sm100a);
    let t = e.k.reg::<ty::U32>();
    let extent = e.k.reg::<ty::U32>();
    let a = swizzled(ScalarType::Bf16, 128, 64, e.s, SwizzleMode::B128);
    let b = swizzled(ScalarType::Bf16, 64, 64, e.s, SwizzleMode::B128);
    let d = TileRef::tmem(ScalarType::F32, 128, 64, t);
    let op = TileOp::GemmAsync {
        d: &d,
        a,
        b,
        accumulate: Accumulate::No,
        k_extent: Some(extent),
    };
    let err = run(e, op, ExecScope::Thread, None).unwrap_err();
    assert!(err.contains("run-time K extent"), "{err}");
}

/// `O += P·V` as an attention kernel issues it ([`wgmma_case`] named `name`, over a run-time K
/// extent when `k_extent`): A the registers of [`p_regs`], B the transpose of a `[64, 128]`
/// slabbed shared tile ([`slabs`]).
fn p_v_case(name: &str, k_extent: bool) -> String {
    wgmma_case(
        name,
        env(Target::Sm90a),
        128,
        p_regs,
        |e| slabs(e, 64, 128).transposed().unwrap(),
        Accumulate::Yes,
        k_extent,
    )
}

/// An attention's `P` for `P·V` over four k16 steps: sixteen bf16x2 registers in the m64n64
/// accumulator's order (`register_a_k`).
fn p_regs(e: &mut Env) -> TileRef {
    let ar = regs::<ty::Bf16x2>(&mut e.k, 16);
    let frag = wgmma::register_a_k(ScalarType::Bf16, 64).unwrap();
    TileRef::registers(ScalarType::Bf16, frag, ar)
}

/// `[rows, cols]` bf16 in 128-byte slabs at the shared buffer.
fn slabs(e: &Env, rows: u32, cols: u32) -> TileRef {
    TileRef::shared_slabs(
        ScalarType::Bf16,
        [rows, cols],
        rows,
        e.s,
        1024,
        SwizzleMode::B128,
    )
}

/// `dQ = dS·K` as the attention backward issues it at head dim 128: A the transpose of a
/// `[128, 64]` slabbed buffer (`dSᵀ`, keys by queries: MN-major, `imm-trans-a` = 1), B the
/// transpose of a `[128, 64]` slab of K (MN-major, `imm-trans-b` = 1), K = 128 keys in eight
/// k16 steps.
#[test]
fn wgmma_with_mn_major_a_from_shared_memory() {
    let text = wgmma_case(
        "wgmma_ss_mn_major_a",
        env(Target::Sm90a),
        64,
        |e| slabs(e, 128, 64).transposed().unwrap(),
        |e| slabs(e, 128, 64).transposed().unwrap(),
        Accumulate::Yes,
        false,
    );
    let mmas = support::lines_with(&text, "wgmma.mma_async");
    assert_eq!(mmas.len(), 8);
    // scale-d, imm-scale-a, imm-scale-b, imm-trans-a = 1, imm-trans-b = 1.
    assert!(
        mmas.iter()
            .all(|l| l.trim_end().ends_with("1, 1, 1, 1, 1;")),
        "{mmas:?}"
    );
}

/// `O += P·V` as an attention kernel issues it: A from registers over four k16 steps (the
/// m64n64 accumulator's order, `register_a_k`), B the transpose of a `[64, 128]` d-contiguous
/// shared tile stored as two 128-byte slabs (MN-major: `imm-trans-b` = 1, LBO the slab stride);
/// and `S = Q·Kᵀ` with K = 128 from slabbed K-major tiles (the second slab's k-steps start one
/// slab on). A B whose layout is neither is refused.
#[test]
fn wgmma_with_mn_major_b_and_a_over_several_k_steps() {
    let text = p_v_case("wgmma_rs_mn_major", false);
    let mmas = support::lines_with(&text, "wgmma.mma_async");
    assert_eq!(mmas.len(), 4);
    // scale-d, imm-scale-a, imm-scale-b, imm-trans-b = 1.
    assert!(
        mmas.iter().all(|l| l.trim_end().ends_with("1, 1, 1, 1;")),
        "{mmas:?}"
    );
    // LBO = the slab stride (64 rows x 128 bytes), SBO = 8 rows of 128 bytes.
    assert!(text.contains("LBO 8192, SBO 1024"), "{text}");

    let text = wgmma_case(
        "wgmma_ss_k_slabs",
        env(Target::Sm90a),
        64,
        |e| slabs(e, 64, 128),
        |e| slabs(e, 64, 128),
        Accumulate::No,
        false,
    );
    assert_eq!(text.matches("wgmma.mma_async").count(), 8);
    // k-step 4 starts in the second slab: 64 rows x 128 bytes on, 8192 >> 4 = 512 added to
    // the descriptor's start-address field.
    assert!(text.contains(", 512;"), "{text}");

    // A dense [64, 128] tile transposed is MN-major but its N (128) is not in 128-byte slabs.
    let mut e = env(Target::Sm90a);
    let acc = regs::<ty::F32>(&mut e.k, 64);
    let a = p_regs(&mut e);
    let dense = TileRef::shared_row_major(ScalarType::Bf16, 64, 128, e.s, 1024)
        .with_swizzle(SwizzleMode::B128);
    let b = dense.transposed().unwrap();
    let d = TileRef::registers(
        ScalarType::F32,
        wgmma::accumulator(128, ScalarType::Bf16).unwrap(),
        acc,
    );
    let op = TileOp::GemmAsync {
        d: &d,
        a: &a,
        b: &b,
        accumulate: Accumulate::Yes,
        k_extent: None,
    };
    let err = run(e, op, ExecScope::Warpgroup, None).unwrap_err();
    assert!(err.contains("MN-major slabs"), "{err}");
}
