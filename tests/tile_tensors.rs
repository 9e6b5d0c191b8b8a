//! Kernel tensors as tile-op operands: a `Buffer` lowers to the `TileRef` a variant reads (type,
//! shape, layout, swizzle, alignment, base), a block of a tensor with run-time extents carries a
//! pitch and bounds whose multiples come from the symbols' facts, and tile ops take the tensors
//! directly. Every kernel assembles with ptxas.

mod support;

use ptxkit::isa::{ScalarType, Target, ty};
use ptxkit::kernel::{Expr, KernelBuilder, KernelError, TensorOpts};
use ptxkit::layouts::fragment::wgmma;
use ptxkit::runtime::ExtentFacts;
use ptxkit::smem::SwizzleMode;
use ptxkit::smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, WaitMode};
use ptxkit::tile::{Base, ExecScope, Storage};

#[test]
fn a_tensor_lowers_without_restating_anything() {
    let (mut k, x) =
        support::kernel_with::<ty::F32>("t", "x", [64, 32], TensorOpts::default().align(16));
    let [_t] = k.thread_id([128]).unwrap();
    let s = k
        .pool_alloc::<ty::F32>("s", &[64, 32], 1024)
        .unwrap()
        .swizzled(SwizzleMode::B128)
        .unwrap();
    let gx = k.tile_ref(&x).unwrap();
    assert_eq!(
        (gx.storage, gx.dtype, gx.shape.clone()),
        (Storage::Global, ScalarType::F32, vec![64, 32])
    );
    assert!(gx.is_contiguous() && gx.align == 16, "{gx}");
    assert!(matches!(gx.base, Base::Global(_)));
    let ts = k.tile_ref(&s).unwrap();
    assert_eq!(
        (ts.storage, ts.swizzle, ts.align),
        (Storage::Shared, SwizzleMode::B128, 1024)
    );
    // A transposed view is a strided layout, not a contiguous one.
    let xt = k.tile_ref(&x.permute(&[1, 0]).unwrap()).unwrap();
    assert_eq!(xt.shape, vec![32, 64]);
    assert!(!xt.is_contiguous(), "{xt}");
    // A region's origin folds into the base; its alignment is what the offset keeps.
    let r = k.tile_ref(&x.region([1, 0], [8, 32]).unwrap()).unwrap();
    assert_eq!(r.align, 16, "{r}"); // one row of 32 f32 = 128 bytes
    let r = k.tile_ref(&x.region([0, 1], [8, 8]).unwrap()).unwrap();
    assert_eq!(r.align, 4, "{r}");
}

#[test]
fn a_register_buffer_needs_its_fragment() {
    let mut k = KernelBuilder::new("t", Target::Sm90a);
    let plain = k.alloc_local::<ty::F32>("acc", &[32]).unwrap();
    let e = k.tile_ref(&plain).unwrap_err();
    assert!(
        matches!(e, KernelError::Buffer { ref buffer, .. } if buffer == "acc"),
        "{e}"
    );
    let frag = wgmma::accumulator(64, ptxkit::isa::ScalarType::Bf16).unwrap();
    let acc = k.alloc_fragment::<ty::F32>("acc", frag.clone()).unwrap();
    assert_eq!(acc.regs().unwrap().len(), frag.values() as usize);
    let t = k.tile_ref(&acc).unwrap();
    assert_eq!((t.storage, t.shape.clone()), (Storage::Local, vec![64, 64]));
}

#[test]
fn tile_ops_take_tensors_and_blocks() {
    let mut k = KernelBuilder::new("edge", Target::Sm90a);
    let m = k.symbol("m").unwrap();
    let n = k
        .symbol_with("n", ExtentFacts::NONE.multiple_of(8))
        .unwrap();
    let c = k
        .tensor::<ty::F32>("c", [m, n], TensorOpts::default().align(16))
        .unwrap();
    let [bi, bj] = k
        .cta_id([Expr::ceil_div(m, 64), Expr::ceil_div(n, 64)])
        .unwrap();
    let [_t] = k.thread_id([128]).unwrap();
    let frag = wgmma::accumulator(64, ptxkit::isa::ScalarType::Bf16).unwrap();
    let acc = k.alloc_fragment::<ty::F32>("acc", frag).unwrap();
    let wg = ExecScope::Warpgroup;
    k.fill(&acc, ptxkit::isa::Imm::f32(1.5), wg).unwrap();
    let block = k.tile_at(&c, [bi.into(), bj.into()], [64, 64]).unwrap();
    // The pitch is n, a multiple of 8 by its facts; the bounds are what is left of m and n.
    assert_eq!(block.pitch.as_ref().unwrap().multiple_of, 8);
    assert_eq!(block.bounds.as_ref().unwrap()[1].multiple_of, 8);
    assert_eq!(k.copy(&block, &acc, wg).unwrap(), "copy.fragment_view");
    let built = k.finish().unwrap();
    // Pairs of f32 go out as v2 stores: the pitch's multiple of 8 keeps each row 8-byte aligned.
    assert!(built.ptx().contains("st.global.v2.f32"), "{}", built.ptx());
    support::assemble(built.ptx(), Target::Sm90a);
}

/// A block whose origin may lie past the tensor's edge (the second 64-row half of a 128-row tile
/// of an `m` of 60) is bounded by `max(m, origin) - origin`: 0 rows left, not a count wrapped round
/// 2^32 that would let its stores through. A block the bounds keep inside needs no clamp.
#[test]
fn a_block_past_the_edge_has_no_rows_left() {
    let mut k = KernelBuilder::new("past", Target::Sm90a);
    let m = k.symbol("m").unwrap();
    let n = k.symbol("n").unwrap();
    let c = k
        .tensor::<ty::F32>("c", [m, n], TensorOpts::default())
        .unwrap();
    let [bi] = k.cta_id([Expr::ceil_div(m, 128)]).unwrap();
    let [_t] = k.thread_id([128]).unwrap();
    let block = k
        .tile_at(&c, [bi * 2 + 1, Expr::from(0u32)], [64, 64])
        .unwrap();
    let [rows, _] = block.bounds.clone().unwrap();
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    // rows = max(m, origin) - origin: a register written by max then sub.
    let ptxkit::isa::Src::Reg(r) = rows.value else {
        panic!("rows left is {:?}", rows.value)
    };
    let name = r.to_string();
    assert!(ptx.contains(&format!("max.u32 {name}, ")), "{ptx}");
    assert!(ptx.contains(&format!("sub.u32 {name}, {name}, ")), "{ptx}");

    // A constant origin inside every m the facts allow: a plain difference.
    let mut k = KernelBuilder::new("inside", Target::Sm90a);
    let m = k.symbol_with("m", ExtentFacts::NONE.at_least(64)).unwrap();
    let c = k
        .tensor::<ty::F32>(
            "c",
            [Expr::from(m), Expr::from(64u32)],
            TensorOpts::default(),
        )
        .unwrap();
    let [_t] = k.thread_id([128]).unwrap();
    k.tile_at(&c, [Expr::from(0u32), Expr::from(0u32)], [64, 64])
        .unwrap();
    let built = k.finish().unwrap();
    assert!(!built.ptx().contains("max.u32"), "{}", built.ptx());
}

#[test]
fn a_miss_is_a_typed_table_at_the_call() {
    let (mut k, x) = support::kernel_with::<ty::F32>("miss", "x", [16, 16], TensorOpts::default());
    let y = k
        .tensor::<ty::F32>("y", [16, 16], TensorOpts::default())
        .unwrap();
    let [_t] = k.thread_id([32]).unwrap();
    let line = line!() + 1;
    let e = k.cast(&y, &x, ExecScope::Warp).unwrap_err();
    let KernelError::TileOp { ref error, .. } = e else {
        panic!("{e}")
    };
    let text = e.to_string();
    assert!(text.contains("no variant lowers cast"), "{text}");
    assert!(text.contains(&format!("tile_tensors.rs:{line}:")), "{text}");
    assert!(matches!(
        **error,
        ptxkit::tile::DispatchError::NoVariant { .. }
    ));
}

#[test]
fn fragment_math_as_tile_ops() {
    use ptxkit::tile::Elementwise as F;
    let mut k = KernelBuilder::new("math", Target::Sm90a);
    let [_t] = k.thread_id([128]).unwrap();
    let frag = wgmma::accumulator(64, ptxkit::isa::ScalarType::Bf16).unwrap();
    let s = k.alloc_fragment::<ty::F32>("s", frag.clone()).unwrap();
    let o = k.alloc_fragment::<ty::F32>("o", frag).unwrap();
    let wg = ExecScope::Warpgroup;
    k.fill(&s, ptxkit::isa::Imm::f32(0.5), wg).unwrap();
    k.fill(&o, ptxkit::isa::Imm::f32(2.0), wg).unwrap();
    let scale = ptxkit::isa::Src::Imm(ptxkit::isa::Imm::f32(0.125 * std::f32::consts::LOG2_E));
    let bias = ptxkit::isa::Src::Imm(ptxkit::isa::Imm::f32(-1.0));
    let ops: Vec<(F, bool)> = vec![
        (F::Exp2 { scale, bias }, false),
        (F::Max, true),
        (F::Min, true),
        (F::Sub, true),
        (F::Fma { scale }, true),
        (F::Rcp, false),
        (F::Rsqrt, false),
    ];
    for (f, binary) in ops {
        let b: Option<&dyn ptxkit::tile::TileOperandDyn> = if binary { Some(&o) } else { None };
        assert_eq!(
            k.elementwise(&s, &s, b, f, wg).unwrap(),
            "elementwise.registers"
        );
    }
    // A binary function without its second operand is declined, with the reason.
    let e = k.elementwise(&s, &s, None, F::Max, wg).unwrap_err();
    assert!(e.to_string().contains("max(a, b) needs b"), "{e}");
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    for want in [
        "ex2.approx.ftz.f32",
        "rcp.approx.ftz.f32",
        "rsqrt.approx.ftz.f32",
        "min.f32",
        "sub.f32",
    ] {
        assert_eq!(ptx.matches(want).count(), 32, "{want}\n{ptx}");
    }
    support::assemble(ptx, Target::Sm90a);
}

/// A TMA tensor's box at block coordinates is a tensor-map tile with the box's shape and swizzle;
/// `copy_async` takes it to and from the box buffer with one TMA instruction each way.
#[test]
fn a_tma_tensors_box_is_a_tile() {
    use ptxkit::isa::Src;
    use ptxkit::runtime::TmaBox;
    let mut k = KernelBuilder::new("tma_tiles", Target::Sm90a);
    let rows = k
        .symbol_with("rows", ExtentFacts::NONE.multiple_of(64))
        .unwrap();
    let tma = TmaBox::new([64, 64]).swizzle(SwizzleMode::B128);
    let a = k
        .tma_tensor::<ty::Bf16>("a", [rows.into(), Expr::from(64u32)], tma.clone())
        .unwrap();
    let b = k
        .tma_tensor::<ty::Bf16>("b", [rows.into(), Expr::from(64u32)], tma)
        .unwrap();
    let [bi] = k.cta_id([Expr::from(rows) / 64]).unwrap();
    let [_t] = k.thread_id([128]).unwrap();
    let s = k.tma_box_buffer("s", &a).unwrap();
    let addr = k.pool_bytes("bar", 8, 8).unwrap();
    let mut sync = BarrierSync::new("tma_tiles", WaitMode::Spin);
    let bar = sync.declare_one("bar", 1, addr).unwrap();
    sync.init(k.isa(), bar).unwrap();
    let bytes = u32::try_from(a.box_bytes()).unwrap();
    sync.arrive(k.isa(), bar, Arrival::ExpectTx(bytes), ArriveSite::Loop)
        .unwrap();

    let at_origin = k.tma_tile_at(&a, [0u32.into(), 0u32.into()]).unwrap();
    assert_eq!(
        (at_origin.dtype, at_origin.shape.clone(), at_origin.swizzle),
        (ScalarType::Bf16, vec![64, 64], SwizzleMode::B128)
    );
    let Base::TensorMap { coords, .. } = &at_origin.base else {
        panic!("{at_origin}");
    };
    assert_eq!(coords, &[Src::from(0i32), Src::from(0i32)]);

    let src = k.tma_tile_at(&a, [bi.into(), 0u32.into()]).unwrap();
    let dst = k.tma_tile_at(&b, [bi.into(), 0u32.into()]).unwrap();
    let one = ExecScope::Thread;
    assert_eq!(
        k.copy_async(&s, &src, Some((&mut sync, bar)), None, one)
            .unwrap(),
        "copy_async.tma_load"
    );
    // The load records the box's bytes against the barrier: the protocol holds them to the
    // `expect_tx` announced from `box_bytes`.
    assert_eq!(sync.protocol().copied_bytes(bar.at), a.box_bytes());
    sync.wait(k.isa(), bar.at, None, bar.addr, 0u32).unwrap();
    assert_eq!(
        k.copy_async(&dst, &s, None, None, one).unwrap(),
        "copy_async.tma_store"
    );
    // A store of a tile carrying an L2 policy carries it too (`.L2::cache_hint`, PTX ISA
    // 9.7.9.27), as loads do.
    let policy = k.l2_policy(ptxkit::isa::builder::L2Evict::First).unwrap();
    let hinted = dst.clone().with_l2_hint(policy);
    k.copy_async(&hinted, &s, None, None, one).unwrap();
    sync.finish().unwrap();
    let built = k.finish().unwrap();
    let stores: Vec<&str> = built
        .ptx()
        .lines()
        .filter(|l| l.contains("cp.async.bulk.tensor.2d.global.shared"))
        .collect();
    assert_eq!(stores.len(), 2, "{stores:?}");
    assert!(!stores[0].contains("cache_hint"), "{}", stores[0]);
    assert!(
        stores[1].contains(".L2::cache_hint") && stores[1].contains(", %rd"),
        "{}",
        stores[1]
    );
    support::assemble(built.ptx(), Target::Sm90a);

    // Only rank 2 has a tile.
    let mut k = KernelBuilder::new("rank3", Target::Sm90a);
    let c = k
        .tma_tensor::<ty::F32>("c", [4u32, 8, 32], TmaBox::new([1, 8, 32]))
        .unwrap();
    let e = k.tma_tile_at(&c, [0u32.into(), 0u32.into()]).unwrap_err();
    assert!(
        matches!(&e, KernelError::Buffer { buffer, .. } if buffer == "c"),
        "{e}"
    );

    // A constant coordinate past what `cp.async.bulk.tensor` takes (.s32) is refused, naming the
    // tensor.
    let mut k = KernelBuilder::new("far", Target::Sm90a);
    let d = k
        .tma_tensor::<ty::F32>("d", [64u32, 64], TmaBox::new([32, 32]))
        .unwrap();
    let e = support::assert_err!(
        k.tma_tile_at(&d, [Expr::from(1u32 << 26), 0u32.into()]),
        KernelError::Buffer { buffer, .. } if buffer == "d"
    );
    let text = e.to_string();
    support::assert_contains(&text, "coordinate 2147483648");
    assert!(
        text.contains("tests/tile_tensors.rs"),
        "the call site is the author's: {e}"
    );
}

/// The tensor-core inputs are kernel element types: a tensor of `ty::E4m3`, `ty::E5m2` or
/// `ty::Tf32` carries its type into the signature (what the launcher checks the host data
/// against), an FP8 element moves as one byte through a `%rs` register (`ld.global.b8`), a tf32
/// one as 32 bits, and a TMA tensor of FP8 has one-byte boxes.
#[test]
fn tensor_core_inputs_are_element_types() {
    use ptxkit::runtime::{Param, TmaBox};
    let mut k = KernelBuilder::new("inputs", Target::Sm90a);
    let opts = TensorOpts::default();
    let a = k.tensor::<ty::E4m3>("a", [64u32], opts.clone()).unwrap();
    let b = k.tensor::<ty::E5m2>("b", [64u32], opts.clone()).unwrap();
    let c = k.tensor::<ty::Tf32>("c", [64u32], opts.clone()).unwrap();
    let d = k.tensor::<ty::Tf32>("d", [64u32], opts).unwrap();
    let t = k
        .tma_tensor::<ty::E4m3>(
            "t",
            [64u32, 128],
            TmaBox::new([64, 128]).swizzle(SwizzleMode::B128),
        )
        .unwrap();
    assert_eq!(t.box_bytes(), 64 * 128);
    let [i] = k.thread_id([64]).unwrap();
    let x = k.load(&a, [Expr::from(i)]).unwrap();
    k.store(&a, [Expr::from(i)], x).unwrap();
    let y = k.load(&b, [Expr::from(i)]).unwrap();
    k.store(&b, [Expr::from(i)], y).unwrap();
    let z = k.load(&c, [Expr::from(i)]).unwrap();
    k.store(&d, [Expr::from(i)], z).unwrap();
    let built = k.finish().unwrap();
    let dtypes: Vec<ScalarType> = built
        .signature()
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Tensor { dtype, .. } | Param::TmaTensor { dtype, .. } => Some(*dtype),
            _ => None,
        })
        .collect();
    use ScalarType::{E4m3, E5m2, Tf32};
    assert_eq!(dtypes, [E4m3, E5m2, Tf32, Tf32, E4m3]);
    assert!(built.ptx().contains("ld.global.b8 %rs"), "{}", built.ptx());
    assert!(built.ptx().contains("st.global.b8 ["), "{}", built.ptx());
    assert!(built.ptx().contains("ld.global.b32 %f"), "{}", built.ptx());
    support::assemble(built.ptx(), Target::Sm90a);
}

/// Tensor memory as kernel tensors (sm_100a): regions declared with `tmem_tensor`, allocated by
/// one warp, used by `tcgen05.mma` (gemm_async) and `tcgen05.ld` (copy_async into a fragment),
/// freed; ptxas assembles it. (No sm_100a GPU is lent: this is checked by ptxas only.)
#[test]
fn tensor_memory_regions_are_kernel_tensors() {
    use ptxkit::layouts::fragment::tcgen05;
    use ptxkit::tile::Accumulate;
    let mut k = KernelBuilder::new("tmem_mma", Target::Sm100a);
    let [_t] = k.thread_id([128]).unwrap();
    let acc = k.tmem_tensor::<ty::F32>("acc", [128, 64]).unwrap();
    let half = k.tmem_tensor::<ty::Bf16>("half", [128, 64]).unwrap();
    // Declared tensors are not operands before the allocation.
    let early = k.tile_ref(&acc).unwrap_err();
    assert!(
        matches!(early, KernelError::Buffer { ref buffer, .. } if buffer == "acc"),
        "{early}"
    );
    let a = k
        .pool_alloc::<ty::Bf16>("a", &[128, 64], 1024)
        .unwrap()
        .swizzled(SwizzleMode::B128)
        .unwrap();
    let b = k
        .pool_alloc::<ty::Bf16>("b", &[64, 64], 1024)
        .unwrap()
        .swizzled(SwizzleMode::B128)
        .unwrap();
    k.tmem_alloc(0).unwrap();
    // The second region starts on the first's 64 columns; 16-bit elements pack two per cell.
    let (ta, th) = (k.tile_ref(&acc).unwrap(), k.tile_ref(&half).unwrap());
    assert_eq!(
        (ta.storage, ta.shape.clone(), th.storage),
        (Storage::Tmem, vec![128, 64], Storage::Tmem)
    );
    assert_eq!(
        k.gemm_async(&acc, &a, &b, Accumulate::No, ExecScope::Thread)
            .unwrap(),
        "gemm_async.tcgen05_mma"
    );
    let frag = k
        .alloc_fragment::<ty::F32>(
            "d",
            tcgen05::warpgroup_atom(tcgen05::LdShape::B32x32, 8).unwrap(),
        )
        .unwrap();
    let first8 = k.tmem_tensor::<ty::F32>("late", [128, 8]).unwrap_err();
    assert!(matches!(first8, KernelError::Buffer { .. }), "{first8}");
    // Columns 8..16 of the accumulator: a region of the tensor, its address moved by 8 cells.
    let view = acc.region([0, 8], [128, 8]).unwrap();
    k.copy_async(&frag, &view, None, None, ExecScope::Warpgroup)
        .unwrap();
    k.tmem_free().unwrap();
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    // 64 + 32 columns round up to a 128-column allocation, made and freed by warp 0.
    assert!(
        ptx.contains("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"),
        "{ptx}"
    );
    assert!(ptx.contains(", 128;"), "{ptx}");
    assert!(
        ptx.contains("tcgen05.dealloc.cta_group::1.sync.aligned.b32"),
        "{ptx}"
    );
    assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::f16"), "{ptx}");
    assert!(
        ptx.contains("tcgen05.ld.sync.aligned.32x32b.x8.b32"),
        "{ptx}"
    );
    assert!(ptx.contains(", 8;"), "{ptx}");
    support::assemble(ptx, Target::Sm100a);
}

#[test]
fn tensor_memory_must_be_freed_and_allocated_once() {
    let mut k = KernelBuilder::new("leak", Target::Sm100a);
    let [_t] = k.thread_id([128]).unwrap();
    let _acc = k.tmem_tensor::<ty::F32>("acc", [128, 32]).unwrap();
    k.tmem_alloc(0).unwrap();
    assert!(matches!(k.tmem_alloc(0), Err(KernelError::Invalid { .. })));
    let e = k.finish().unwrap_err();
    assert!(e.to_string().contains("tmem_free"), "{e}");

    let mut k = KernelBuilder::new("lanes", Target::Sm100a);
    let e = k.tmem_tensor::<ty::F32>("acc", [64, 32]).unwrap_err();
    assert!(e.to_string().contains("128 lanes"), "{e}");
    let e = k.tmem_tensor::<ty::F32>("wide", [128, 1024]).unwrap_err();
    assert!(e.to_string().contains("512"), "{e}");
    assert!(matches!(k.tmem_free(), Err(KernelError::Invalid { .. })));
}
