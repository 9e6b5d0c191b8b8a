//! epi22 (session 21): writes the PTX of the bench's fused 4096³ kernels (bias + GELU/ReLU + staged residual
//! on three epilogue warps) and of the plain GEMM into a folder; run as an example (copy it into
//! examples/, `cargo run --release --example NAME DIR`), then `ptxas -arch=sm_90a`, `nvdisasm -c` and
//! notes/session21-epi22-sass-count.py SASS VALUES FIRST-LAST... (line ranges of the listing).
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, TensorOpts};
use ptxkit::library::gemm::{GemmConfig, HopperGemm};
use ptxkit::parts::{Activation, Combine, Epilogue};
use ptxkit::smem::pipeline::sync::WaitMode;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or("/tmp/epi22".into());
    let cfg = GemmConfig::for_problem(4096, 4096, 132);
    eprintln!("{cfg:?}");
    let plain = ptxkit::library::gemm::build_with(&cfg, WaitMode::Spin).unwrap();
    std::fs::write(format!("{dir}/plain.ptx"), plain.built.ptx()).unwrap();
    for (name, act) in [("gelu", Activation::GeluTanh), ("relu", Activation::Relu)] {
        let mut k = KernelBuilder::new(&format!("gemm_epi_{name}"), Target::Sm90a);
        let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(
            &mut k,
            cfg.with_epilogue_warps(),
            WaitMode::Spin,
        )
        .unwrap();
        let n = gemm.n();
        let bias = k
            .tensor::<ty::Bf16>("bias", [n], TensorOpts::default())
            .unwrap();
        let res = gemm.staged_input(&mut k, "residual").unwrap();
        let epi = Epilogue::new()
            .cols(&bias, Combine::Add)
            .activation(act)
            .residual(&res);
        let g = gemm.with_epilogue(epi).build(k).unwrap();
        std::fs::write(format!("{dir}/{name}.ptx"), g.built.ptx()).unwrap();
    }
}
