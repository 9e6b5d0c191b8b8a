//! Bad launches of built kernels are errors, without a GPU: the built kernel's signature checks
//! shapes and dtypes, the tensor-map rules check a misaligned map, the launch checks shared
//! memory and cluster size against an H200's limits; and the kernel builder itself refuses a
//! cluster over 16 and a static shared memory over the pool's limit. (`ptxkit selftest` makes the
//! same bad launches on a real device.)

use ptxkit::isa::ScalarType;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts};
use ptxkit::kernels::{cluster_exchange, scale, tma_copy, vector_add};
use ptxkit::runtime::{
    ArgDesc, LaunchLimits, RuntimeError, Scalar, TensorDesc, TensorMapDType, TensorMapDesc,
    TensorMapRule, check_launch, check_tensor_map,
};
use smem::SwizzleMode;

fn t(dtype: ScalarType, shape: &[usize], addr: u64) -> ArgDesc {
    ArgDesc::Tensor(TensorDesc {
        dtype,
        shape: shape.to_vec(),
        addr,
        device: 0,
    })
}

/// An H200's limits for a function with no static shared memory.
fn h200() -> LaunchLimits {
    LaunchLimits {
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        max_grid_dims: [i32::MAX as u32, 65535, 65535],
        static_smem_bytes: 0,
        smem_optin_bytes: 232_448,
        dynamic_smem_limit: 48 * 1024,
        cluster_launch: true,
    }
}

#[test]
fn good_arguments_give_the_launch() {
    let k = vector_add::build(Target::Sm90a).unwrap();
    let args = [
        t(ScalarType::F32, &[1000], 0x1000),
        t(ScalarType::F32, &[1000], 0x2000),
        t(ScalarType::F32, &[1000], 0x3000),
    ];
    let (cfg, syms) = k.config_for(&args, 0).unwrap();
    assert_eq!(syms["n"], 1000);
    assert_eq!((cfg.grid, cfg.block), ([4, 1, 1], [256, 1, 1]));
    check_launch(&cfg, &h200()).unwrap();
}

#[test]
fn wrong_shape() {
    let k = vector_add::build(Target::Sm90a).unwrap();
    let args = [
        t(ScalarType::F32, &[1000], 0x1000),
        t(ScalarType::F32, &[999], 0x2000),
        t(ScalarType::F32, &[1000], 0x3000),
    ];
    let e = k.config_for(&args, 0).unwrap_err();
    assert!(matches!(e, RuntimeError::SymbolMismatch { .. }), "{e}");
    assert!(e.to_string().contains("b.shape[0] = 999"), "{e}");

    let k = scale::build(Target::Sm90a).unwrap();
    let args = [
        t(ScalarType::F32, &[8, 32], 0x1000),
        t(ScalarType::F32, &[8, 64], 0x2000),
        ArgDesc::Scalar(Scalar::F32(2.0)),
    ];
    let e = k.config_for(&args, 0).unwrap_err();
    assert!(matches!(e, RuntimeError::ArgShape { .. }), "{e}");
}

#[test]
fn wrong_dtype() {
    let k = scale::build(Target::Sm90a).unwrap();
    let args = [
        t(ScalarType::F32, &[8, 64], 0x1000),
        t(ScalarType::F32, &[8, 64], 0x2000),
        ArgDesc::Scalar(Scalar::F64(2.0)),
    ];
    let e = k.config_for(&args, 0).unwrap_err();
    assert!(matches!(e, RuntimeError::ArgDtype { .. }), "{e}");
    let args = [
        t(ScalarType::Bf16, &[8, 64], 0x1000),
        t(ScalarType::F32, &[8, 64], 0x2000),
        ArgDesc::Scalar(Scalar::F32(2.0)),
    ];
    let e = k.config_for(&args, 0).unwrap_err();
    assert!(matches!(e, RuntimeError::ArgDtype { .. }), "{e}");
}

#[test]
fn misaligned_tensor_and_map() {
    // scale's tensors are declared 16-byte aligned (for its vector loads).
    let k = scale::build(Target::Sm90a).unwrap();
    let args = [
        t(ScalarType::F32, &[8, 64], 0x1004),
        t(ScalarType::F32, &[8, 64], 0x2000),
        ArgDesc::Scalar(Scalar::F32(2.0)),
    ];
    let e = k.config_for(&args, 0).unwrap_err();
    assert!(
        matches!(e, RuntimeError::Misaligned { align: 16, .. }),
        "{e}"
    );

    let (rows, cols) = (tma_copy::SHAPE.0 as usize, tma_copy::SHAPE.1 as usize);
    let map = |addr| {
        TensorMapDesc::row_major(TensorMapDType::F32, addr, &[rows, cols], &[32, 32])
            .with_swizzle(SwizzleMode::B128)
    };
    check_tensor_map(&map(0x10_0000)).unwrap();
    let e = check_tensor_map(&map(0x10_0004)).unwrap_err();
    assert!(
        matches!(
            e,
            RuntimeError::TensorMapRule {
                rule: TensorMapRule::GlobalAddressAlign,
                ..
            }
        ),
        "{e}"
    );
    // A 64-element f32 box row is 256 bytes: more than the 128-byte swizzle span.
    let wide = TensorMapDesc::row_major(TensorMapDType::F32, 0x10_0000, &[rows, cols], &[32, 64])
        .with_swizzle(SwizzleMode::B128);
    assert!(check_tensor_map(&wide).is_err());
}

#[test]
fn too_much_shared_memory() {
    let k = tma_copy::build(Target::Sm90a).unwrap();
    let syms = Default::default();
    let cfg = k.launch_config(&syms).unwrap();
    assert_eq!(cfg.dynamic_smem_bytes, 4096 + 8);
    check_launch(&cfg, &h200()).unwrap();
    let e = check_launch(&cfg.with_dynamic_smem(232_448 + 1), &h200()).unwrap_err();
    assert!(
        matches!(e, RuntimeError::SharedMemoryTooLarge { .. }),
        "{e}"
    );

    // At build time: a pool over the architecture's opt-in limit.
    let mut b = KernelBuilder::new("big", Target::Sm90a);
    let e = b
        .pool_alloc::<ty::F32>("huge", &[64 * 1024], 16)
        .unwrap_err();
    assert!(matches!(e, KernelError::SharedMemory { .. }), "{e}");
}

#[test]
fn too_large_a_cluster() {
    let k = cluster_exchange::build(Target::Sm90a).unwrap();
    let cfg = k.launch_config(&Default::default()).unwrap();
    check_launch(&cfg, &h200()).unwrap();
    let mut big = cfg.with_cluster([32, 1, 1]);
    big.grid = [64, 1, 1];
    let e = check_launch(&big, &h200()).unwrap_err();
    assert!(matches!(e, RuntimeError::ClusterTooLarge { .. }), "{e}");

    // At build time: a cluster extent over 16.
    let mut b = KernelBuilder::new("c", Target::Sm90a);
    let e = b.cta_id_in_cluster([32], None).unwrap_err();
    assert!(matches!(e, KernelError::Scope { .. }), "{e}");
    assert!(e.to_string().contains("32 CTAs"), "{e}");
}

#[test]
fn symbolic_grid_needs_its_symbol() {
    let mut b = KernelBuilder::new("k", Target::Sm90a);
    let n = b.symbol("n").unwrap();
    let _a = b
        .tensor::<ty::F32>("a", [n], TensorOpts::default())
        .unwrap();
    b.cta_id([n / 2]).unwrap();
    b.thread_id([32]).unwrap();
    let k = b.finish().unwrap();
    let e = k.launch_config(&Default::default()).unwrap_err();
    assert!(matches!(e, RuntimeError::InvalidLaunch { .. }), "{e}");
    let syms = [("n".to_string(), 10u64)].into_iter().collect();
    assert_eq!(k.launch_config(&syms).unwrap().grid, [5, 1, 1]);
}
