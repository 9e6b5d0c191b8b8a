//! Buffers and bindings: views, permutes, regions, reinterpretation, views over a pointer,
//! registers, mutable scalars, `let` bindings whose known values and divisibility simplify the
//! index arithmetic, vector accesses proven aligned (or refused), swizzled shared tiles. Every
//! kernel that builds assembles with ptxas.

mod support;

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{
    Buffer, BuiltKernel, KernelBuilder, KernelError, Layout, Ptr, TensorOpts, Var,
};
use ptxkit::smem::SwizzleMode;

fn kernel() -> KernelBuilder {
    KernelBuilder::new("k", Target::Sm90a)
}

fn a256(k: &mut KernelBuilder) -> Buffer<ty::F32> {
    k.tensor::<ty::F32>("A", [256], TensorOpts::default().align(16))
        .unwrap()
}

/// A kernel of `threads` threads in x with the tensor `A` ([`a256`]): the kernel, `A` and the
/// thread index.
fn with_a256(threads: u32) -> (KernelBuilder, Buffer<ty::F32>, Var) {
    let mut k = kernel();
    let a = a256(&mut k);
    let [tx] = k.thread_id([threads]).unwrap();
    (k, a, tx)
}

fn done(k: KernelBuilder) -> BuiltKernel {
    support::finish_sm90a(k)
}

fn buffer_err(e: KernelError, want: &str) {
    assert!(matches!(e, KernelError::Buffer { .. }), "{e}");
    assert!(e.to_string().contains(want), "`{e}` lacks `{want}`");
}

#[test]
fn view_and_permute_change_only_the_index() {
    let (mut k, a, tx) = with_a256(64);
    let j = k.let_("j", 3).unwrap();
    // A.view(64, 4)[tx, j] -> tx*4 + 3
    let a2 = a.view([64, 4]).unwrap();
    assert_eq!(
        k.linear_index(&a2, [tx, j]).unwrap().to_string(),
        format!("((v{} * 4) + 3)", tx.index())
    );
    // A.view(64, 4).permute(1, 0)[j, tx] -> tx*4 + j as well
    let at = a2.permute(&[1, 0]).unwrap();
    assert_eq!(at.shape()[0].as_const(), Some(4));
    assert_eq!(
        k.linear_index(&at, [j, tx]).unwrap(),
        k.linear_index(&a2, [tx, j]).unwrap()
    );
    let x = k.load(&at, [j, tx]).unwrap();
    k.store(&a2, [tx, j], x).unwrap();
    done(k);

    let k = kernel();
    let mut k2 = k;
    let a = a256(&mut k2);
    buffer_err(a.view([10, 10]).unwrap_err(), "view of 256 elements as 100");
    buffer_err(
        a.view([64, 4]).unwrap().permute(&[0, 0]).unwrap_err(),
        "not a permutation",
    );
    buffer_err(
        a.view([64, 4])
            .unwrap()
            .permute(&[1, 0])
            .unwrap()
            .view([256])
            .unwrap_err(),
        "compact row-major",
    );
}

#[test]
fn regions_fold_into_the_element_offset() {
    let mut k = kernel();
    let m = k
        .tensor::<ty::F32>("M", [16, 16], TensorOpts::default())
        .unwrap();
    let [i, j] = k.thread_id([4, 4]).unwrap();
    let sub = m.region([4, 8], [4, 4]).unwrap();
    assert_eq!(sub.elem_offset().as_const(), Some(72));
    let e = k.linear_index(&sub, [i, j]).unwrap();
    assert_eq!(
        e.to_string(),
        format!("(((v{} * 16) + v{}) + 72)", i.index(), j.index())
    );
    let x = k.load(&sub, [i, j]).unwrap();
    k.store(&sub, [i, j], x).unwrap();
    done(k);
}

#[test]
fn reinterpret_and_decl_buffer() {
    let (mut k, a, tx) = with_a256(32);
    let shifted = a.region([4], [252]).unwrap();
    let wide = shifted.reinterpret::<ty::U64>([126]).unwrap();
    assert_eq!(wide.elem_offset().as_const(), Some(2));
    buffer_err(
        a.region([3], [253])
            .unwrap()
            .reinterpret::<ty::U64>([126])
            .unwrap_err(),
        "not a multiple of 8",
    );
    // decl_buffer: a column-major 4x8 view at element 16 of A's storage, via A.ptr_to([16]).
    let p = k.ptr_to(&a, [16]).unwrap();
    assert!(matches!(p, Ptr::Global(_)));
    let v = k
        .decl_buffer::<ty::F32>("V", [4, 8], p, Layout::ColMajor, 0, 4)
        .unwrap();
    let j = k.let_("j", tx % 8).unwrap();
    let x = k
        .load(&v, [1u32.into(), ptxkit::kernel::Expr::from(j)])
        .unwrap();
    let data = a.data().unwrap();
    let alias = k
        .decl_buffer::<ty::F32>("alias", [256], data, Layout::RowMajor, 0, 16)
        .unwrap();
    k.store(&alias, [tx], x).unwrap();
    let y = k.load(&wide, [tx]).unwrap();
    k.store(&wide, [tx], y).unwrap();
    done(k);
}

#[test]
fn registers_and_scalars() {
    let (mut k, a, tx) = with_a256(64);
    let r = k.alloc_local::<ty::F32>("r", &[4]).unwrap();
    k.unroll(0..4, |k, e| {
        let x = k.load(&a, [tx * 4 + e])?;
        k.store(&r, [e], x)
    })
    .unwrap();
    let acc = k.local_scalar::<ty::F32>("acc", 0.0f32).unwrap();
    let acc_reg = acc.regs().unwrap()[0];
    k.unroll(0..4, |k, e| {
        let x = k.load(&r, [e])?;
        k.add(acc_reg, acc_reg, x)?;
        Ok(())
    })
    .unwrap();
    buffer_err(k.load(&r, [tx]).unwrap_err(), "not a constant");
    buffer_err(k.load(&r, [4]).unwrap_err(), "outside 0..4");
    buffer_err(k.ptr_to(&r, [0]).unwrap_err(), "no address");
    let flat = r.local(4).unwrap();
    assert_eq!(flat.regs().unwrap().len(), 4);
    k.store(&a, [tx], acc_reg).unwrap();

    // A mutable index scalar: phase = 0; while phase < 4 { ..; phase += 1 }
    let phase = k.index_var("phase", 0).unwrap();
    k.while_(
        |k| k.cmp(ptxkit::isa::builder::CmpOp::Lt, phase, 4),
        |k| k.assign(phase, phase + 1),
    )
    .unwrap();
    // A let of a mutable scalar is its value now, not an alias of its register.
    let before = k.let_("before", phase).unwrap();
    k.assign(phase, 0).unwrap();
    assert_ne!(k.var_reg(before), k.var_reg(phase));
    let e = k.for_range(0, 2, |k, i| k.assign(i, 5)).unwrap_err();
    assert!(e.to_string().contains("loop counter"), "{e}");
    let n = k.let_("n", 7).unwrap();
    let e = k.assign(n, 8).unwrap_err();
    assert!(e.to_string().contains("immutable"), "{e}");
    let b = done(k);
    assert!(b.ptx().contains("mov.f32 %f8, 0f00000000;"), "{}", b.ptx());
    assert!(b.ptx().contains("add.f32 %f8, %f8, %f3;"), "{}", b.ptx());
}

#[test]
fn lets_fold_constants_and_use_divisibility() {
    let (mut k, a, tx) = with_a256(32);
    let half = k.let_("half", 64 / 2).unwrap();
    assert_eq!(
        k.simplify(&(tx * half).into_expr()).to_string(),
        format!("(v{} * 32)", tx.index())
    );
    // Multiplying by a constant let is a shift.
    let r = k.eval(tx * half).unwrap();
    let r = k.bind("r", r);
    k.store(&a, [r], 0.0f32).unwrap();
    let q = k.let_("q", tx * 8).unwrap();
    assert_eq!(k.divisibility(&q.into()), 8);
    // (q / 4) * 4 is q, q % 8 is 0: no instructions for them.
    assert_eq!(k.simplify(&((q / 4) * 4)), q.into());
    assert_eq!(k.simplify(&(q % 8)).as_const(), Some(0));
    // q is a multiple of 8, so a 4-wide vector at q is proven 16-byte aligned...
    let v = k.vload(&a, [q], 4).unwrap();
    k.vstore(&a, [q + 4], &v).unwrap();
    // ...but one at tx * 2 is not, nor is any in a 4-byte aligned tensor.
    buffer_err(k.vload(&a, [tx * 2], 4).unwrap_err(), "cannot prove");
    let b4 = k
        .tensor::<ty::F32>("B", [256], TensorOpts::default())
        .unwrap();
    buffer_err(k.vload(&b4, [q], 4).unwrap_err(), "cannot prove");
    buffer_err(k.vload(&a, [q], 3).unwrap_err(), "2 or 4");
    let built = done(k);
    assert!(
        built.ptx().contains("shl.b32 %r1, %r0, 5;"),
        "{}",
        built.ptx()
    );
    assert!(!built.ptx().contains("mul.lo"), "{}", built.ptx());
    assert!(built.ptx().contains("ld.global.v4.f32"));
}

trait IntoExpr {
    fn into_expr(self) -> ptxkit::kernel::Expr;
}
impl IntoExpr for ptxkit::kernel::Expr {
    fn into_expr(self) -> ptxkit::kernel::Expr {
        self
    }
}

#[test]
fn shared_buffers_static_pool_and_swizzled() {
    let mut k = kernel();
    let [tx] = k.thread_id([128]).unwrap();
    let s = k.alloc_shared::<ty::F32>("s", &[128], 16).unwrap();
    let t = k
        .pool_alloc::<ty::F32>("t", &[8, 32], 1024)
        .unwrap()
        .swizzled(SwizzleMode::B128)
        .unwrap();
    let x = k.load(&s, [tx]).unwrap();
    let r = k.let_("r", tx / 32).unwrap();
    let c = k.let_("c", tx % 32).unwrap();
    k.store(&t, [r, c], x).unwrap();
    buffer_err(k.vload(&t, [r * 0, c * 0], 4).unwrap_err(), "swizzled");
    let u = k.pool_alloc::<ty::F32>("u", &[4], 16).unwrap();
    buffer_err(
        u.swizzled(SwizzleMode::B128).unwrap_err(),
        "1024-byte aligned",
    );
    let b = done(k);
    assert!(
        b.ptx().contains(".shared .align 16 .b8 s[512];"),
        "{}",
        b.ptx()
    );
    assert!(b.ptx().contains("x ^ ((x & 0x380) >> 3)"), "{}", b.ptx());
    assert_eq!(b.launch_spec().dynamic_smem_bytes, 1024 + 16);
    assert_eq!(b.launch_spec().static_smem_bytes, 512);
}

#[test]
fn tensor_parameters_are_checked() {
    let mut k = kernel();
    let [tx] = k.thread_id([32]).unwrap();
    let e = k
        .tensor::<ty::F32>("A", [tx], TensorOpts::default())
        .unwrap_err();
    assert!(matches!(e, KernelError::Param { .. }), "{e}");
    let e = k
        .tensor::<ty::F32>("A", [8], TensorOpts::default().align(2))
        .unwrap_err();
    assert!(e.to_string().contains("alignment 2"), "{e}");
    let e = k
        .tensor::<ty::F32>(
            "A",
            [8],
            TensorOpts::default().layout(Layout::strided([1, 2])),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("2 strides for a rank-1 shape"),
        "{e}"
    );
}
