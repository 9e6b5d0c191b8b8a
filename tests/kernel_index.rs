//! The seed's four layouts of `B[i, j] = A[i, j] + 1` over a 4x8 region: the same access lowers to
//! `i*8 + j`, `j*4 + i`, `i*8 + j + 64` and `i*16 + j` address arithmetic depending only on B's
//! metadata (exact emitted text), and every kernel assembles with ptxas.

mod support;

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{BuiltKernel, KernelBuilder, Layout, TensorOpts};

fn b_eq_a_plus_1(b_opts: TensorOpts) -> BuiltKernel {
    let (mut k, a) = support::kernel_with::<ty::F32>("add_one", "A", [4, 8], TensorOpts::default());
    let b = k.tensor::<ty::F32>("B", [4, 8], b_opts).unwrap();
    let [i, j] = k.thread_id([4, 8]).unwrap();
    let x = k.load(&a, [i, j]).unwrap();
    k.add(x, x, 1.0f32).unwrap();
    k.store(&b, [i, j], x).unwrap();
    k.finish().unwrap()
}

/// The body after the parameter loads: from the first `mov.u32 .., %tid.x`.
fn body(built: &BuiltKernel) -> String {
    let ptx = built.ptx();
    let start = ptx.find("mov.u32 %r0, %tid.x;").expect("tid read");
    let end = ptx.rfind("ret;").expect("ret");
    ptx[start..end]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The common part: A[i, j] = A_ptr + (i*8 + j)*4, loaded and incremented.
const A_ACCESS: &str = "mov.u32 %r0, %tid.x;
mov.u32 %r1, %tid.y;
shl.b32 %r2, %r0, 3;
add.u32 %r3, %r2, %r1;
mul.wide.u32 %rd4, %r3, 4;
add.u64 %rd5, %rd1, %rd4;
ld.global.f32 %f0, [%rd5];
add.f32 %f0, %f0, 0f3F800000;";

fn expect(built: &BuiltKernel, b_index: &str) {
    let last = b_index.lines().count() + 3;
    expect_store(
        built,
        &format!(
            "{b_index}\nmul.wide.u32 %rd6, %r{last}, 4;\nadd.u64 %rd7, %rd3, %rd6;\nst.global.f32 [%rd7], %f0;"
        ),
    );
}

/// B's access after A's, exactly.
fn expect_store(built: &BuiltKernel, b_access: &str) {
    let want = format!("{A_ACCESS}\n{b_access}");
    assert_eq!(body(built), want, "{}", built.ptx());
    support::assemble(built.ptx(), Target::Sm90a);
}

/// Row-major B has A's index `i*8 + j`: computed once (and its byte offset too), reused.
#[test]
fn row_major_is_i_times_8_plus_j() {
    let k = b_eq_a_plus_1(TensorOpts::default());
    expect_store(&k, "add.u64 %rd6, %rd3, %rd4;\nst.global.f32 [%rd6], %f0;");
}

#[test]
fn column_major_is_j_times_4_plus_i() {
    let k = b_eq_a_plus_1(TensorOpts::default().layout(Layout::ColMajor));
    expect(&k, "shl.b32 %r4, %r1, 2;\nadd.u32 %r5, %r4, %r0;");
}

/// `i*8 + j + 64`: the reused `i*8 + j` plus 64 elements folded into the store's address as
/// `+256` bytes (PTX ISA 6.4.1 "Addresses as Operands").
#[test]
fn elem_offset_64_is_i_times_8_plus_j_plus_64() {
    let k = b_eq_a_plus_1(TensorOpts::default().elem_offset(64));
    expect_store(
        &k,
        "add.u64 %rd6, %rd3, %rd4;\nst.global.f32 [%rd6+256], %f0;",
    );
}

/// The same layouts written as the seed writes them, CuTe-style `(4,8):(1,4)` and `(4,8):(16,1)`.
#[test]
fn cute_layouts_give_the_same_arithmetic() {
    let cute = |s: &str| Layout::cute(&s.parse::<ptxkit::layouts::Layout>().unwrap()).unwrap();
    let k = b_eq_a_plus_1(TensorOpts::default().layout(cute("(4,8):(1,4)")));
    expect(&k, "shl.b32 %r4, %r1, 2;\nadd.u32 %r5, %r4, %r0;");
    let k = b_eq_a_plus_1(TensorOpts::default().layout(cute("(4,8):(16,1)")));
    expect(&k, "shl.b32 %r4, %r0, 4;\nadd.u32 %r5, %r4, %r1;");
    // Extents that are not B's shape, and nested modes, are refused.
    let mut kb = KernelBuilder::new("k", Target::Sm90a);
    let e = kb
        .tensor::<ty::F32>(
            "B",
            [4, 8],
            TensorOpts::default().layout(cute("(8,4):(4,1)")),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("do not match the shape [4, 8]"),
        "{e}"
    );
    let nested: ptxkit::layouts::Layout = "((2,2),8):((1,2),4)".parse().unwrap();
    assert!(Layout::cute(&nested).is_err());
}

#[test]
fn row_stride_16_is_i_times_16_plus_j() {
    let k = b_eq_a_plus_1(TensorOpts::default().layout(Layout::strided([16, 1])));
    expect(&k, "shl.b32 %r4, %r0, 4;\nadd.u32 %r5, %r4, %r1;");
}
