//! Structured control flow: the exact branch structure of loops, `if`/`else` and `while`, labels
//! always placed (nested bodies included), an error inside a dropped `if_` returned by `finish`.

mod support;

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts};
use ptxkit::runtime::ExtentFacts;

/// Finishes `k` (ptxas assembles it) and returns its body's lines, trimmed: after the `{`, without
/// the `.reg` declarations and the closing brace.
fn body(k: KernelBuilder) -> Vec<String> {
    support::finish_sm90a(k)
        .ptx()
        .lines()
        .skip_while(|l| !l.starts_with('{'))
        .filter(|l| !l.trim_start().starts_with(".reg") && l.len() > 1)
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn for_range_if_else_exact_text() {
    let (mut k, out) = support::kernel_with::<ty::U32>("k", "out", [64], TensorOpts::default());
    let [tx] = k.thread_id([64]).unwrap();
    let acc = k.index_var("acc", 0).unwrap();
    k.for_range(0, 8, |k, i| {
        let even = k.cmp(CmpOp::Eq, i % 2, 0)?;
        k.if_(even, |k| k.assign(acc, acc + i))
            .else_(|k| k.assign(acc, acc + 1))
    })
    .unwrap();
    let r = k.eval(acc).unwrap();
    k.store(&out, [tx], r).unwrap();
    let want = [
        "ld.param.u64 %rd0, [out];",
        "cvta.to.global.u64 %rd1, %rd0;",
        "mov.u32 %r0, %tid.x;",
        "mov.u32 %r1, 0;",
        "mov.u32 %r2, 0;",
        "$L__0:",
        "setp.ge.u32 %p0, %r2, 8;",
        "@%p0 bra $L__1;",
        "and.b32 %r3, %r2, 1;",
        "setp.eq.u32 %p1, %r3, 0;",
        "@!%p1 bra $L__2;",
        "add.u32 %r4, %r1, %r2;",
        "mov.u32 %r1, %r4;",
        "bra $L__3;",
        "$L__2:",
        "add.u32 %r5, %r1, 1;",
        "mov.u32 %r1, %r5;",
        "$L__3:",
        "add.u32 %r2, %r2, 1;",
        "bra $L__0;",
        "$L__1:",
        "mul.wide.u32 %rd2, %r0, 4;",
        "add.u64 %rd3, %rd1, %rd2;",
        "st.global.u32 [%rd3], %r1;",
        "ret;",
    ];
    assert_eq!(body(k), want);
}

#[test]
fn step_loops_know_their_divisibility_and_nest() {
    let (mut k, a) =
        support::kernel_with::<ty::F32>("k", "a", [1024], TensorOpts::default().align(16));
    k.thread_id([32]).unwrap();
    k.for_range_step(0, 1024, 128, |k, i| {
        assert_eq!(k.divisibility(&i.into()), 128);
        k.for_range_step(0, 128, 4, |k, j| {
            // i + j is a multiple of 4: a proven 16-byte vector.
            let v = k.vload(&a, [i + j], 4)?;
            k.vstore(&a, [i + j], &v)
        })
    })
    .unwrap();
    let b = support::finish_sm90a(k);
    assert_eq!(b.ptx().matches("bra $L__").count(), 4);
}

#[test]
fn while_loops() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.thread_id([32]).unwrap();
    let x = k.index_var("x", 100).unwrap();
    k.while_(|k| k.cmp(CmpOp::Gt, x, 1), |k| k.assign(x, x / 2))
        .unwrap();
    let text = body(k).join("\n");
    support::assert_contains(
        &text,
        "$L__0:\nsetp.gt.u32 %p0, %r1, 1;\n@!%p0 bra $L__1;\nshr.u32 %r2, %r1, 1;\nmov.u32 %r1, %r2;\nbra $L__0;\n$L__1:",
    );
}

#[test]
fn errors_in_bodies_propagate() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let [tx] = k.thread_id([32]).unwrap();
    let p = k.cmp(CmpOp::Eq, tx, 0).unwrap();
    let r = k.alloc_local::<ty::F32>("r", &[2]).unwrap();
    // Dropped without `end`: the error surfaces at `finish`.
    let _ = k.if_(p, |k| k.load(&r, [tx]).map(|_| ()));
    let e = k.finish().unwrap_err();
    assert!(matches!(e, KernelError::Buffer { .. }), "{e}");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.thread_id([32]).unwrap();
    let e = k
        .for_range(0, 4, |k, _| k.for_range_step(0, 4, 0, |_, _| Ok(())))
        .unwrap_err();
    assert!(e.to_string().contains("step of 0"), "{e}");
    // The failed loops placed their labels: the kernel still finishes and assembles.
    support::finish_sm90a(k);
}

/// A persistent grid-stride loop: the counter starts at `%ctaid.x`, is compared with the work
/// extent and steps by `%nctaid.x`, read once before the loop; the stride divides nothing, so the
/// counter knows no multiple, only its bound below the work extent.
#[test]
fn grid_stride_loop_exact_text() {
    let (mut k, n, out) = support::kernel_n_out();
    k.thread_id([32]).unwrap();
    k.persistent_for(n, None, |k, item| {
        assert_eq!(k.divisibility(&item.into()), 1);
        k.store(&out, [item], 7u32)
    })
    .unwrap();
    let want = [
        "ld.param.u32 %r0, [n];",
        "ld.param.u64 %rd0, [out];",
        "cvta.to.global.u64 %rd1, %rd0;",
        "mov.u32 %r1, %tid.x;",
        "mov.u32 %r2, %ctaid.x;",
        "mov.u32 %r3, %nctaid.x;",
        "mov.u32 %r4, %r2;",
        "$L__0:",
        "setp.ge.u32 %p0, %r4, %r0;",
        "@%p0 bra $L__1;",
        "mul.wide.u32 %rd2, %r4, 4;",
        "add.u64 %rd3, %rd1, %rd2;",
        "st.global.u32 [%rd3], 7;",
        "add.u32 %r4, %r4, %r3;",
        "bra $L__0;",
        "$L__1:",
        "ret;",
    ];
    assert_eq!(body(k), want);
}

/// A run-time step: computed once before the loop, its divisibility and the start's make the
/// counter's, and a step that may be 0 is refused (the loop could spin forever).
#[test]
fn run_time_steps() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let n = k.symbol("n").unwrap();
    let s = k
        .symbol_with("s", ExtentFacts::NONE.multiple_of(8).at_least(8))
        .unwrap();
    let a = k
        .tensor::<ty::F32>("a", [n], TensorOpts::default().align(16))
        .unwrap();
    let _b = k
        .tensor::<ty::F32>("b", [s], TensorOpts::default())
        .unwrap();
    let [tx] = k.thread_id([32]).unwrap();
    let ctas = k.grid_size().unwrap();
    k.for_stride(tx * 4, n, s * ctas, |k, i| {
        // 4 divides tx * 4 and 8 divides the step: i is a multiple of 4.
        assert_eq!(k.divisibility(&i.into()), 4);
        let v = k.load(&a, [i])?;
        k.store(&a, [i], v)
    })
    .unwrap();
    let text = body(k).join("\n");
    // The step, s * nctaid.x, is multiplied once, before the loop's head.
    let (before, after) = text.split_once("$L__0:").unwrap();
    assert!(before.contains("mov.u32 %r3, %nctaid.x;"), "{text}");
    assert_eq!(before.matches("mul.lo.u32").count(), 1, "{text}");
    assert!(!after.contains("mul.lo.u32"), "{text}");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let [tx] = k.thread_id([32]).unwrap();
    let e = k.for_stride(0, 64, tx, |_, _| Ok(())).unwrap_err();
    assert!(matches!(e, KernelError::Scope { .. }), "{e}");
    assert!(e.to_string().contains("may be 0"), "{e}");
    let e = k.for_stride(0, 64, 0, |_, _| Ok(())).unwrap_err();
    assert!(e.to_string().contains("step of 0"), "{e}");
    // tx + 1 is at least 1: accepted.
    k.for_stride(0, 64, tx + 1, |_, _| Ok(())).unwrap();
    support::finish_sm90a(k);
}

/// A persistent loop over clusters (the GEMM's CTA pairs): starts at `%clusterid.x`, steps by
/// `%nclusterid.x`; ptxas assembles it.
#[test]
fn cluster_stride_loop() {
    let (mut k, n, out) = support::kernel_n_out();
    k.thread_id([128]).unwrap();
    k.cta_id_in_cluster([2], None).unwrap();
    let pair = k.persistent_cluster_id(n).unwrap();
    let pairs = k.cluster_grid_size().unwrap();
    k.for_stride(pair, n, pairs, |k, item| k.store(&out, [item], 1u32))
        .unwrap();
    let text = body(k).join("\n");
    support::assert_contains(
        &text,
        "mov.u32 %r3, %clusterid.x;\nmov.u32 %r4, %nclusterid.x;\nmov.u32 %r5, %r3;\n$L__0:\nsetp.ge.u32 %p0, %r5, %r0;",
    );
    support::assert_contains(&text, "add.u32 %r5, %r5, %r4;\nbra $L__0;");
}
