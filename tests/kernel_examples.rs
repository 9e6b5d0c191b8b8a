//! The library's small kernels: each carries the signature and launch extents its scope ids
//! state, and holds the instructions it is about (every registered kernel assembles with ptxas:
//! `tests/registry.rs`).

mod support;

use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::{cluster_exchange, scale, tma_copy, vector_add};
use ptxkit::runtime::{ArgDesc, Extent, Param};
use ptxkit::selftest::check_ptx;

#[test]
fn portable_examples_assemble_for_sm_80() {
    for k in [vector_add::build(Target::Sm80), scale::build(Target::Sm80)] {
        support::assemble(k.unwrap().ptx(), Target::Sm80);
    }
}

#[test]
fn hopper_examples_are_refused_for_sm_80() {
    let e = tma_copy::build(Target::Sm80).unwrap_err();
    assert!(e.to_string().contains("sm_80"), "{e}");
    let e = cluster_exchange::build(Target::Sm80).unwrap_err();
    assert!(e.to_string().contains("sm_80"), "{e}");
}

#[test]
fn vector_add_signature_and_launch() {
    let k = vector_add::build(Target::Sm90a).unwrap();
    let sig = k.signature();
    assert_eq!(sig.argument_count(), 3);
    assert_eq!(sig.params[0], Param::extent_u32("n"));
    assert_eq!(
        sig.params[1],
        Param::tensor("a", ptxkit::isa::ScalarType::F32, vec![Extent::sym("n")])
    );
    let spec = k.launch_spec();
    assert_eq!(spec.block, [256, 1, 1]);
    let syms = [("n".to_string(), 1000u64)].into_iter().collect();
    let cfg = k.launch_config(&syms).unwrap();
    assert_eq!(cfg.grid, [4, 1, 1]);
    assert!(k.ptx().contains(".maxntid 256, 1, 1"));
    assert!(k.ptx().contains("shl.b32"), "bx * 256 is a shift");
}

#[test]
fn scale_uses_proven_vector_access_and_a_loop() {
    let k = scale::build(Target::Sm90a).unwrap();
    let ptx = k.ptx();
    assert!(ptx.contains("ld.global.v4.f32"), "{ptx}");
    assert!(ptx.contains("st.global.v4.f32"), "{ptx}");
    assert!(ptx.contains(".param .f32 s"), "{ptx}");
    assert!(ptx.contains("setp.ge.u32"), "the row loop: {ptx}");
    let syms = [("m".to_string(), 333u64)].into_iter().collect();
    assert_eq!(k.launch_config(&syms).unwrap().grid, [84, 1, 1]);
}

#[test]
fn tma_copy_text() {
    let k = tma_copy::build(Target::Sm90a).unwrap();
    let ptx = k.ptx();
    let wants = [
        ".extern .shared .align 1024 .b8 smem[];",
        "mbarrier.init.shared.b64",
        "mbarrier.arrive.expect_tx.shared.b64 _,",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.try_wait.parity.shared.b64",
        "and.b32", // the 128B swizzle: x ^ ((x & 0x380) >> 3)
        "xor.b32",
        "fence.proxy.async.shared::cta;",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
        "cp.async.bulk.wait_group.read 0;",
    ];
    check_ptx(ptx, Target::Sm90a, &wants).unwrap();
    let spec = k.launch_spec();
    assert_eq!(spec.block, [128, 1, 1]);
    assert_eq!(spec.dynamic_smem_bytes, 4096 + 8);
    // The shape is symbolic: the launcher sizes the grid from the tensors (one CTA per box) and
    // refuses a shape that is not whole boxes.
    let t = |shape: &[usize], addr| ArgDesc::tensor(ScalarType::F32, shape, addr, 0);
    let (cfg, _) = k
        .config_for(&[t(&[256, 512], 0x1000), t(&[256, 512], 0x20_0000)], 0)
        .unwrap();
    assert_eq!(cfg.grid, [16, 8, 1]);
    assert!(
        k.config_for(&[t(&[100, 64], 0x1000), t(&[100, 64], 0x20_0000)], 0)
            .is_err()
    );
    // The extents (read from the tensors at launch) and the two TMA tensors, whose maps the
    // launcher builds.
    let names = k.signature().param_names();
    assert_eq!(names, ["rows", "cols", "src", "dst"]);
    assert!(ptx.contains(".param .align 64 .b8 src[128],"), "{ptx}");
}

#[test]
fn tma_reference_adds_the_box_index() {
    let src = vec![0.5f32; 64 * 64];
    let r = tma_copy::reference(&src, 64);
    assert_eq!(r[0], 0.5);
    assert_eq!(r[33], 0.5 + 1.0); // row 0, column 33: box column 1
    assert_eq!(r[64 * 33 + 2], 0.5 + 34.0); // row 33 (box row 1), column 2
}

#[test]
fn cluster_exchange_text_and_launch() {
    let k = cluster_exchange::build(Target::Sm90a).unwrap();
    let wants = [
        "%clusterid.x;",
        "%cluster_ctaid.x",
        "barrier.cluster.arrive.release.aligned;",
        "barrier.cluster.wait.acquire.aligned;",
        "mapa.shared::cluster.u32",
        "ld.shared::cluster.f32",
        "and.b32", // (rank + 1) % 4
    ];
    check_ptx(k.ptx(), Target::Sm90a, &wants).unwrap();
    let spec = k.launch_spec();
    assert_eq!(spec.cluster, Some([4, 1, 1]));
    let n = (cluster_exchange::CLUSTERS * cluster_exchange::SPAN) as usize;
    let t = |addr| ArgDesc::tensor(ScalarType::F32, &[n], addr, 0);
    let (cfg, _) = k.config_for(&[t(0x1000), t(0x10_0000)], 0).unwrap();
    assert_eq!(cfg.grid, [cluster_exchange::CLUSTERS * 4, 1, 1]);
    assert_eq!(cfg.cluster, Some([4, 1, 1]));
    let x: Vec<f32> = (0..2 * 4 * 256).map(|i| i as f32).collect();
    let r = cluster_exchange::reference(&x);
    assert_eq!(r[5], 5.0 + 261.0);
    assert_eq!(r[3 * 256 + 5], (3 * 256 + 5) as f32 + 5.0);
}
