//! The kernel parts (`ptxkit::parts`) as a user meets them through the GEMM: epilogues whose
//! tensors do not fit the output, or that a grouped GEMM cannot take, are refused with the
//! tensor and the op named; a composed epilogue's kernel assembles.

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts};
use ptxkit::library::gemm::{GemmConfig, GemmKernel, Grouping, HopperGemm};
use ptxkit::parts::{Activation, Combine, Epilogue};
use ptxkit::smem::pipeline::sync::WaitMode;

/// The bf16 GEMM of `cfg` with the epilogue `epi` makes from its `m` and `n`.
fn gemm_with(
    cfg: GemmConfig,
    epi: impl FnOnce(&mut KernelBuilder, [ptxkit::kernel::Var; 2]) -> Epilogue,
) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new("gemm_parts_test", Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    let e = epi(&mut k, [gemm.m(), gemm.n()]);
    gemm.with_epilogue(e).build(k)
}

#[test]
fn a_vector_of_the_wrong_extent_is_refused_with_its_shape() {
    let e = gemm_with(GemmConfig::large(), |k, [m, _n]| {
        let wrong = k
            .tensor::<ty::Bf16>("bias", [m], TensorOpts::default())
            .unwrap();
        Epilogue::new().cols(&wrong, Combine::Add)
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("`bias` has shape [m]"), "{e}");
    assert!(e.contains("columns is [n]"), "{e}");
}

#[test]
fn a_residual_of_the_wrong_shape_is_refused() {
    let e = gemm_with(GemmConfig::large(), |k, [m, n]| {
        let wrong = k
            .tensor::<ty::Bf16>("res", [n, m], TensorOpts::default())
            .unwrap();
        Epilogue::new().residual(&wrong)
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("`res` has shape [n, m]"), "{e}");
}

#[test]
fn a_grouped_gemm_refuses_ops_that_need_its_rows() {
    let cfg = GemmConfig {
        grouping: Grouping::Contiguous,
        ..GemmConfig::large()
    };
    let e = gemm_with(cfg, |k, [m, _n]| {
        let v = k
            .tensor::<ty::F32>("row_scale", [m], TensorOpts::default())
            .unwrap();
        Epilogue::new().rows(&v, Combine::Mul)
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("grouped GEMM"), "{e}");
    // Ops that need no row are taken.
    gemm_with(cfg, |_k, _| {
        Epilogue::new().activation(Activation::Silu).scale(0.5f32)
    })
    .unwrap();
}

#[test]
fn every_activation_builds_and_assembles() {
    for a in [
        Activation::Relu,
        Activation::GeluTanh,
        Activation::GeluErf,
        Activation::Silu,
    ] {
        let g = gemm_with(GemmConfig::large(), |_k, _| Epilogue::new().activation(a)).unwrap();
        ptxkit::selftest::check_ptx(g.built.ptx(), Target::Sm90a, &[])
            .unwrap_or_else(|e| panic!("{a:?}: {e}"));
    }
}
