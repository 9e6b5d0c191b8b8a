//! The authoring model's conveniences, held to exact behaviour and assembled by ptxas: facts on
//! symbolic extents (checked by the launcher, used by the lowering), masked row accesses with the
//! widest provable vectors, `reduce` at every scope and type, register math, errors that name the
//! kernel's own symbols and the Rust call, and index arithmetic computed once.

mod support;

use support::lines_with;

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{
    BuiltKernel, Expr, KernelBuilder, KernelError, ReduceOp, ReduceScope, Reducible, TensorOpts,
    Var,
};
use ptxkit::runtime::{ArgDesc, ExtentFacts, Fact, RuntimeError, check_and_pack};

/// `y[r, c..c+4] = x[r, c..c+4]` for each thread's four columns of row `r`.
fn row_copy(cols_facts: ExtentFacts, align: u32) -> BuiltKernel {
    let mut k = KernelBuilder::new("row_copy", Target::Sm90a);
    let rows = k.symbol("rows").unwrap();
    let cols = k.symbol_with("cols", cols_facts).unwrap();
    let opts = TensorOpts::default().align(align);
    let x = k
        .tensor::<ty::F32>("x", [rows, cols], opts.clone())
        .unwrap();
    let y = k.tensor::<ty::F32>("y", [rows, cols], opts).unwrap();
    let [r] = k.cta_id([rows]).unwrap();
    let [t] = k.thread_id([128]).unwrap();
    let v = k.load_n(&x, [r.into(), t * 4], 4, 0.0f32).unwrap();
    k.store_n(&y, [r.into(), t * 4], &v).unwrap();
    let built = k.finish().unwrap();
    support::assemble(built.ptx(), Target::Sm90a);
    built
}

fn tensor(shape: &[usize], addr: u64) -> ArgDesc {
    ArgDesc::tensor(ptxkit::isa::ScalarType::F32, shape, addr, 0)
}

#[test]
fn facts_pick_vectors_and_one_guard_per_vector() {
    let k = row_copy(ExtentFacts::NONE.multiple_of(4), 16);
    let ptx = k.ptx();
    assert_eq!(lines_with(ptx, "ld.global.v4.f32").len(), 1, "{ptx}");
    assert_eq!(lines_with(ptx, "st.global.v4.f32").len(), 1, "{ptx}");
    // One bounds check, shared by the load and the store, and on the accesses themselves.
    assert_eq!(lines_with(ptx, "setp.lt.u32").len(), 1, "{ptx}");
    for l in lines_with(ptx, ".global.v4") {
        assert!(l.starts_with("@%p"), "unguarded access: {l}");
    }
}

#[test]
fn without_facts_accesses_are_scalar_and_each_guarded() {
    let k = row_copy(ExtentFacts::NONE, 16);
    let ptx = k.ptx();
    assert!(
        lines_with(ptx, ".v4").is_empty() && lines_with(ptx, ".v2").is_empty(),
        "{ptx}"
    );
    let loads = lines_with(ptx, "ld.global.f32");
    assert_eq!(loads.len(), 4, "{ptx}");
    assert_eq!(lines_with(ptx, "st.global.f32").len(), 4, "{ptx}");
    for l in loads.iter().chain(&lines_with(ptx, "st.global.f32")) {
        assert!(l.starts_with("@%p"), "unguarded access: {l}");
    }
    // The four columns share one address register: offsets +4, +8, +12 ride on the instruction.
    assert!(ptx.contains("+12]"), "{ptx}");
}

#[test]
fn a_multiple_of_two_gives_guarded_pairs() {
    let k = row_copy(ExtentFacts::NONE.multiple_of(2), 16);
    assert_eq!(
        lines_with(k.ptx(), "ld.global.v2.f32").len(),
        2,
        "{}",
        k.ptx()
    );
}

#[test]
fn constant_extents_drop_the_guards_they_decide() {
    // 128 threads x 4 columns = 512 = the extent: every access is in range, no check.
    let (mut k, x, t, v) = support::four_per_thread("fits", 512, 128);
    // Columns 512.. are past the end for every thread: filled, never loaded.
    let w = k.load_n(&x, [t * 0 + 512], 4, 7.0f32).unwrap();
    let s = k.add_of(v[0], w[0]).unwrap();
    k.store(&x, [t * 4], s).unwrap();
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    assert!(lines_with(ptx, "setp").is_empty(), "{ptx}");
    assert_eq!(lines_with(ptx, "ld.global").len(), 1, "{ptx}");
    assert_eq!(lines_with(ptx, "0f40E00000").len(), 4, "{ptx}"); // 7.0 four times
    support::assemble(ptx, Target::Sm90a);
}

#[test]
fn the_launcher_checks_the_facts() {
    let facts = ExtentFacts::NONE.multiple_of(4).at_least(1).at_most(8192);
    let k = row_copy(facts, 16);
    let sig = k.signature();
    let ok = check_and_pack(
        sig,
        &[tensor(&[3, 4096], 0x1000), tensor(&[3, 4096], 0x9000)],
        0,
    );
    assert!(ok.is_ok(), "{ok:?}");
    let broke = |cols: usize| {
        check_and_pack(
            sig,
            &[tensor(&[3, cols], 0x1000), tensor(&[3, cols], 0x9000)],
            0,
        )
        .unwrap_err()
    };
    match broke(4098) {
        RuntimeError::ExtentFact {
            symbol,
            value,
            fact,
            ..
        } => {
            assert_eq!(
                (symbol.as_str(), value, fact),
                ("cols", 4098, Fact::MultipleOf(4))
            );
        }
        e => panic!("{e}"),
    }
    let e = broke(8196);
    assert!(
        matches!(
            e,
            RuntimeError::ExtentFact {
                fact: Fact::AtMost(8192),
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "kernel `row_copy`: symbolic extent `cols` = 8196, but the kernel was built for at most 8192"
    );
    // Facts no value keeps are refused when the kernel is built.
    let mut kb = KernelBuilder::new("k", Target::Sm90a);
    let e = kb
        .symbol_with(
            "n",
            ExtentFacts::NONE.multiple_of(64).at_least(1).at_most(63),
        )
        .unwrap_err();
    assert!(matches!(e, KernelError::Param { .. }), "{e}");
}

#[test]
fn errors_name_the_symbols_and_the_rust_call() {
    let mut k = KernelBuilder::new("named", Target::Sm90a);
    let cols = k.symbol("cols").unwrap();
    let x = k
        .tensor::<ty::F32>("x", [cols], TensorOpts::default().align(16))
        .unwrap();
    let [t] = k.thread_id([32]).unwrap();
    let i = k.let_("i", t + cols).unwrap();
    let line = line!() + 1;
    let e = k.vload(&x, [i], 4).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("index i a multiple of 1"), "{text}");
    assert!(
        text.contains(&format!("kernel_authoring.rs:{line}:")),
        "{text}"
    );
}

/// A kernel reducing `T` values at `scope`, assembled for sm_90a.
fn reduce_kernel<T: Reducible>(op: ReduceOp, scope: ReduceScope, in_loop: bool) -> String {
    let mut k = KernelBuilder::new("red", Target::Sm90a);
    let [_t] = k.thread_id([256]).unwrap();
    let vals = k.regs::<T>(3);
    let one = match T::TYPE {
        ptxkit::isa::ScalarType::F32 => ptxkit::isa::Imm::f32(1.0),
        _ => ptxkit::isa::Imm::UInt(0x3c00_3c00),
    };
    for r in &vals {
        k.mov(*r, ptxkit::isa::Src::Imm(one)).unwrap();
    }
    let out = k.reg::<T>();
    if in_loop {
        k.for_range(0, 2, |k, _| {
            let s = k.reduce(op, &vals, scope)?;
            k.mov(out, s)?;
            Ok(())
        })
        .unwrap();
    } else {
        let s = k.reduce(op, &vals, scope).unwrap();
        k.mov(out, s).unwrap();
    }
    let built = k.finish().unwrap();
    support::assemble(built.ptx(), Target::Sm90a);
    built.ptx().to_string()
}

#[test]
fn reduce_at_every_scope_and_type_assembles() {
    use ReduceScope::*;
    for scope in [Thread, Warp, Warpgroup, Cta] {
        for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min] {
            reduce_kernel::<ty::F32>(op, scope, false);
            reduce_kernel::<ty::U32>(op, scope, false);
            reduce_kernel::<ty::S32>(op, scope, false);
            reduce_kernel::<ty::F16x2>(op, scope, false);
            reduce_kernel::<ty::Bf16x2>(op, scope, false);
        }
    }
}

#[test]
fn reduce_lowers_as_documented() {
    let f = reduce_kernel::<ty::F32>(ReduceOp::Max, ReduceScope::Warp, false);
    assert_eq!(lines_with(&f, "shfl.sync.bfly.b32").len(), 5, "{f}");
    assert_eq!(lines_with(&f, "max.f32").len(), 2 + 5, "{f}"); // 3 registers, then 5 butterflies
    let u = reduce_kernel::<ty::U32>(ReduceOp::Sum, ReduceScope::Warp, false);
    assert_eq!(lines_with(&u, "redux.sync.add.u32").len(), 1, "{u}");
    assert!(lines_with(&u, "shfl").is_empty(), "{u}");
    let cta = reduce_kernel::<ty::F32>(ReduceOp::Sum, ReduceScope::Cta, false);
    assert_eq!(lines_with(&cta, "bar.sync 0").len(), 1, "{cta}");
    assert_eq!(lines_with(&cta, "ld.shared.v4.f32").len(), 2, "{cta}"); // 8 warps' words
    // In a loop a second barrier keeps the next trip's writes behind this trip's reads.
    let looped = reduce_kernel::<ty::F32>(ReduceOp::Sum, ReduceScope::Cta, true);
    assert_eq!(lines_with(&looped, "bar.sync 0").len(), 2, "{looped}");
    let wg = reduce_kernel::<ty::F32>(ReduceOp::Sum, ReduceScope::Warpgroup, false);
    assert_eq!(lines_with(&wg, "bar.sync %r").len(), 1, "{wg}"); // named barrier 1 + warpgroup
    assert_eq!(lines_with(&wg, "ld.shared.v4.f32").len(), 1, "{wg}"); // its 4 warps' words
}

#[test]
fn reduce_needs_a_block_size() {
    let mut k = KernelBuilder::new("red", Target::Sm90a);
    let v = k.reg::<ty::F32>();
    let e = k.reduce(ReduceOp::Sum, &[v], ReduceScope::Cta).unwrap_err();
    assert!(e.to_string().contains("needs the block size"), "{e}");
    assert!(
        k.reduce::<ty::F32>(ReduceOp::Sum, &[], ReduceScope::Warp)
            .is_err()
    );
}

#[test]
fn register_math_assembles() {
    let (mut k, x) = support::kernel_with::<ty::F32>("math", "x", [8], TensorOpts::default());
    let [t] = k.thread_id([8]).unwrap();
    let a = k.load(&x, [t]).unwrap();
    let e = k.exp(a).unwrap();
    let l = k.log(e).unwrap();
    let s = k.sqrt_of(l).unwrap();
    let r = k.rsqrt_of(s).unwrap();
    let q = k.rcp_of(r).unwrap();
    let f = k.exp2_fma(q, 2.0f32, -1.0f32).unwrap();
    let m = k.max_of(f, 0.5f32).unwrap();
    let n = k.min_of(m, 4.0f32).unwrap();
    let g = k.silu(n).unwrap();
    let p = k.cmp(CmpOp::Lt, t, 4).unwrap();
    let out = k.select(p, g, a).unwrap();
    k.sync_threads().unwrap();
    k.store(&x, [t], out).unwrap();
    assert!(k.sync_named(0u32, 128).is_err() && k.sync_named(1u32, 100).is_err());
    assert!(k.arrive_named(16u32, 64).is_err() && k.arrive_named(2u32, 48).is_err());
    k.sync_named(1u32, 32).unwrap();
    // A barrier id held in a register (a warpgroup's own barrier): `bar.arrive %r, 64`.
    let id = k.eval(Expr::from(t) % 2u32 + 2u32).unwrap();
    k.arrive_named(id, 64).unwrap();
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    assert!(
        ptx.contains("mul.f32") && ptx.contains("0f3FB8AA3B"),
        "{ptx}"
    ); // x * log2(e)
    assert!(
        ptx.contains("selp.f32")
            && ptx.contains("bar.sync 1, 32;")
            && ptx.contains("bar.arrive %r"),
        "{ptx}"
    );
    support::assemble(ptx, Target::Sm90a);
}

#[test]
fn arithmetic_is_reused_while_its_region_is_open() {
    let mut k = KernelBuilder::new("reuse", Target::Sm90a);
    let n = k.symbol("n").unwrap();
    let x = k
        .tensor::<ty::F32>("x", [n, n], TensorOpts::default())
        .unwrap();
    let [r] = k.cta_id([n]).unwrap();
    let [t] = k.thread_id([32]).unwrap();
    let a = k.load(&x, [r, t]).unwrap();
    let p = k.cmp(CmpOp::Lt, t, 16).unwrap();
    k.if_(p, |k| {
        // Reuses the address computed before the branch.
        let b = k.load(&x, [r.into(), t + 1])?;
        k.add(b, b, a)?;
        // A new address inside the branch...
        k.store(&x, [r.into(), t * 2], b)
    })
    .end()
    .unwrap();
    // ...is not reused after it (it was not computed on the other path).
    k.store(&x, [r.into(), t * 2], a).unwrap();
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    assert_eq!(lines_with(ptx, "mul.wide.u32").len(), 3, "{ptx}");
    assert!(ptx.contains("[%rd3+4]"), "{ptx}");
    support::assemble(ptx, Target::Sm90a);
}

#[test]
fn reduce_over_a_fragment_axis() {
    use ptxkit::kernel::Axis;
    use ptxkit::layouts::fragment::wgmma;
    let (mut k, x) =
        support::kernel_with::<ty::F32>("rowmax", "x", [128, 2], TensorOpts::default());
    let [t] = k.thread_id([128]).unwrap();
    let frag = wgmma::accumulator(64, ptxkit::isa::ScalarType::Bf16).unwrap();
    let s = k.alloc_fragment::<ty::F32>("s", frag).unwrap();
    k.fill(
        &s,
        ptxkit::isa::Imm::f32(2.0),
        ptxkit::tile::ExecScope::Warpgroup,
    )
    .unwrap();
    let m = k.reduce_fragment(ReduceOp::Max, &s, Axis::Rows).unwrap();
    assert_eq!(m.values.len(), 2);
    // Values 0, 1 are row r, 2, 3 row r + 8, and so on (PTX ISA 9.7.15.5.1, the D fragment).
    assert_eq!(&m.group[..6], &[0, 0, 1, 1, 0, 0]);
    // Broadcast back: s -= rowmax, value by value.
    for (v, r) in s.regs().unwrap().iter().enumerate() {
        k.sub(*r, *r, m.of_value(v).unwrap()).unwrap();
    }
    k.store(&x, [t.into(), Expr::from(0)], m.values[0]).unwrap();
    k.store(&x, [t.into(), Expr::from(1)], m.values[1]).unwrap();
    let built = k.finish().unwrap();
    let ptx = built.ptx();
    assert_eq!(lines_with(ptx, "shfl.sync.bfly.b32").len(), 4, "{ptx}");
    assert!(
        ptx.contains(", 1, 31, 0xFFFFFFFF") && ptx.contains(", 2, 31, 0xFFFFFFFF"),
        "{ptx}"
    );
    support::assemble(ptx, Target::Sm90a);

    // Columns of the accumulator spread over the warpgroup's four warps: refused, with the reason.
    let mut k = KernelBuilder::new("colmax", Target::Sm90a);
    let [_t] = k.thread_id([128]).unwrap();
    let frag = wgmma::accumulator(64, ptxkit::isa::ScalarType::Bf16).unwrap();
    let s = k.alloc_fragment::<ty::F32>("s", frag).unwrap();
    let e = k
        .reduce_fragment(ReduceOp::Sum, &s, Axis::Cols)
        .unwrap_err();
    assert!(e.to_string().contains("span warps"), "{e}");
    // A plain register buffer has no fragment to reduce over.
    let plain = k.alloc_local::<ty::F32>("p", &[4]).unwrap();
    assert!(
        k.reduce_fragment(ReduceOp::Sum, &plain, Axis::Rows)
            .is_err()
    );
}

#[test]
fn reduce_across_a_cluster() {
    let build = |in_loop: bool| {
        let (mut k, x) =
            support::kernel_with::<ty::F32>("cluster_sum", "x", [4, 256], TensorOpts::default());
        let [_c] = k.cta_id_in_cluster([4], None).unwrap();
        let [cta] = k.cta_id([4]).unwrap();
        let [t] = k.thread_id([256]).unwrap();
        let v = k.load(&x, [cta, t]).unwrap();
        let out = k.reg::<ty::F32>();
        let body = |k: &mut KernelBuilder| -> ptxkit::kernel::Result<()> {
            let s = k.reduce(ReduceOp::Sum, &[v], ReduceScope::Cluster)?;
            k.mov(out, s)?;
            Ok(())
        };
        if in_loop {
            k.for_range(0, 2, |k, _| body(k)).unwrap();
        } else {
            body(&mut k).unwrap();
        }
        k.store(&x, [cta, t], out).unwrap();
        let built = k.finish().unwrap();
        support::assemble(built.ptx(), Target::Sm90a);
        built.ptx().to_string()
    };
    let ptx = build(false);
    assert_eq!(lines_with(&ptx, "mapa.shared::cluster").len(), 1, "{ptx}");
    assert_eq!(lines_with(&ptx, "st.shared::cluster.f32").len(), 1, "{ptx}");
    // One barrier shows every CTA has started (before the first remote write), one ends the
    // exchange.
    assert_eq!(lines_with(&ptx, "barrier.cluster.wait").len(), 2, "{ptx}");
    let first_arrive = ptx
        .find("barrier.cluster.arrive.relaxed")
        .expect("a start barrier");
    assert!(
        first_arrive < ptx.find("st.shared::cluster").unwrap(),
        "{ptx}"
    );
    // In a loop the start barrier is in the body, and one more keeps the next iteration's
    // writes from overtaking this one's reads.
    let looped = build(true);
    assert_eq!(
        lines_with(&looped, "barrier.cluster.wait").len(),
        3,
        "{looped}"
    );
    // Without a stated cluster there is nothing to reduce across.
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let [_t] = k.thread_id([64]).unwrap();
    let r = k.reg::<ty::F32>();
    let e = k
        .reduce(ReduceOp::Sum, &[r], ReduceScope::Cluster)
        .unwrap_err();
    assert!(e.to_string().contains("cluster's shape"), "{e}");
}

/// `y[r, c..c+n] = x[r, c..c+n]` over row `r` of `[rows, cols]` tensors of `T` in tiles of 1024
/// columns, thread `t` taking `n` columns: loaded with `fill` past the row's end and the `load`
/// hints, stored with the `store` hints.
fn hinted_row_copy<T: ptxkit::kernel::Elem>(
    k: &mut KernelBuilder,
    [rows, cols]: [Var; 2],
    [r, t]: [Var; 2],
    n: u32,
    fill: ptxkit::isa::Src<T>,
    (load, store): (ptxkit::kernel::Caching, ptxkit::kernel::Caching),
) {
    let opts = TensorOpts::default().align(16);
    let x = k.tensor::<T>("x", [rows, cols], opts.clone()).unwrap();
    let y = k.tensor::<T>("y", [rows, cols], opts).unwrap();
    k.for_range(0, Expr::ceil_div(cols, 1024), |k, i| {
        let c = i * (128 * n) + t * n;
        let v = k.load_n_with(&x, [r.into(), c.clone()], n as usize, fill, load)?;
        k.store_n_with(&y, [r.into(), c], &v, store)
    })
    .unwrap();
}

/// Cache hints on masked row accesses ([`Caching`], PTX ISA 9.7.9.8 / 9.7.9.11 / 9.7.9.18): one
/// `createpolicy` per priority for the whole kernel when made before the loop, the hint on every
/// guarded vector access of f32 and of packed 16-bit data, and nothing asked by default.
#[test]
fn cache_hints_ride_on_row_accesses() {
    use ptxkit::isa::builder::{Evict, L2Evict};
    use ptxkit::kernel::Caching;
    for bf16 in [false, true] {
        let mut k = KernelBuilder::new("hinted", Target::Sm90a);
        let rows = k.symbol("rows").unwrap();
        let cols = k
            .symbol_with("cols", ExtentFacts::NONE.multiple_of(8))
            .unwrap();
        let [r] = k.cta_id([rows]).unwrap();
        let [t] = k.thread_id([128]).unwrap();
        k.l2_policy(L2Evict::Last).unwrap();
        k.l2_policy(L2Evict::First).unwrap();
        if bf16 {
            let zero = ptxkit::isa::Src::Imm(ptxkit::isa::Imm::UInt(0));
            let hints = (Caching::KEEP, Caching::STREAM);
            hinted_row_copy::<ty::Bf16>(&mut k, [rows, cols], [r, t], 8, zero, hints);
        } else {
            let l2_only = Caching {
                l1: None,
                l2: Some(L2Evict::Last),
            };
            let l1_only = Caching {
                l1: Some(Evict::NoAllocate),
                l2: None,
            };
            let hints = (l2_only, l1_only);
            hinted_row_copy::<ty::F32>(&mut k, [rows, cols], [r, t], 4, 0.0f32.into(), hints);
        }
        let built = k.finish().unwrap();
        let ptx = built.ptx();
        assert_eq!(lines_with(ptx, "createpolicy.fractional").len(), 2, "{ptx}");
        assert_eq!(
            lines_with(ptx, "createpolicy.fractional.L2::evict_last.b64").len(),
            1,
            "{ptx}"
        );
        if bf16 {
            let ld = lines_with(ptx, "ld.global.L1::evict_last.L2::cache_hint.v4.b32");
            let st = lines_with(ptx, "st.global.L1::evict_first.L2::cache_hint.v4.b32");
            assert_eq!((ld.len(), st.len()), (1, 1), "{ptx}");
            // Under the row's bounds check, the policy as the last operand.
            assert!(
                ld[0].starts_with("@%p") && ld[0].ends_with(", %rd0;"),
                "{ptx}"
            );
        } else {
            assert_eq!(
                lines_with(ptx, "ld.global.L2::cache_hint.v4.f32").len(),
                1,
                "{ptx}"
            );
            assert_eq!(
                lines_with(ptx, "st.global.L1::no_allocate.v4.f32").len(),
                1,
                "{ptx}"
            );
        }
        support::assemble(ptx, Target::Sm90a);
    }
    // No hint: the accesses as before.
    let plain = row_copy(ExtentFacts::NONE.multiple_of(4), 16);
    assert!(!plain.ptx().contains("cache_hint") && !plain.ptx().contains("evict"));
}

/// Shared memory takes no cache hint (PTX ISA 9.7.9.8): a typed error naming the buffer.
#[test]
fn cache_hints_on_shared_memory_are_refused() {
    use ptxkit::kernel::Caching;
    let mut k = KernelBuilder::new("hinted_shared", Target::Sm90a);
    let s = k.alloc_shared::<ty::F32>("tile", &[512], 16).unwrap();
    let [t] = k.thread_id([128]).unwrap();
    let e = k
        .load_n_with(&s, [t * 4], 4, 0.0f32, Caching::KEEP)
        .unwrap_err();
    assert!(
        e.to_string().contains("tile") && e.to_string().contains("global"),
        "{e}"
    );
    assert!(k.load_n_with(&s, [t * 4], 4, 0.0f32, Caching::NONE).is_ok());
}
