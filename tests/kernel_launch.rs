//! Bad launches of built kernels are errors, without a GPU: the built kernel's signature checks
//! shapes and dtypes, the tensor-map rules check a misaligned map, the launch checks shared
//! memory and cluster size against an H200's limits; and the kernel builder itself refuses a
//! cluster over 16 and a static shared memory over the pool's limit. (`ptxkit selftest` makes the
//! same bad launches on a real device.)

mod support;

use ptxkit::isa::ScalarType;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError, TensorOpts};
use ptxkit::library::{cluster_exchange, scale, tma_copy, vector_add};
use ptxkit::runtime::{
    ArgDesc, LaunchLimits, Residency, RuntimeError, Scalar, TensorMapDType, TensorMapDesc,
    TensorMapRule, TmaBox, check_launch, check_tensor_map,
};
use smem::SwizzleMode;

fn t(dtype: ScalarType, shape: &[usize], addr: u64) -> ArgDesc {
    ArgDesc::tensor(dtype, shape, addr, 0)
}

/// vector_add's tensors of lengths `n` at 0x1000, 0x2000 and 0x3000.
fn vadd_args([a, b, c]: [usize; 3]) -> [ArgDesc; 3] {
    [(a, 0x1000), (b, 0x2000), (c, 0x3000)].map(|(n, addr)| t(ScalarType::F32, &[n], addr))
}

/// scale's arguments: `x` (its dtype, shape and address), an f32 `[8, 64]` `y` at 0x2000, `s`.
fn scale_args((dtype, shape, addr): (ScalarType, [usize; 2], u64), s: Scalar) -> [ArgDesc; 3] {
    [
        t(dtype, &shape, addr),
        t(ScalarType::F32, &[8, 64], 0x2000),
        ArgDesc::Scalar(s),
    ]
}

#[test]
fn good_arguments_give_the_launch() {
    let k = vector_add::build(Target::Sm90a).unwrap();
    let args = vadd_args([1000, 1000, 1000]);
    let (cfg, syms) = k.config_for(&args, 0).unwrap();
    assert_eq!(syms["n"], 1000);
    assert_eq!((cfg.grid, cfg.block), ([4, 1, 1], [256, 1, 1]));
    check_launch(&cfg, &LaunchLimits::SM90).unwrap();
}

#[test]
fn wrong_shape() {
    let k = vector_add::build(Target::Sm90a).unwrap();
    let args = vadd_args([1000, 999, 1000]);
    let e = support::assert_err!(k.config_for(&args, 0), RuntimeError::SymbolMismatch { .. });
    assert!(e.to_string().contains("b.shape[0] = 999"), "{e}");
}

/// scale refuses an `x` of 32 columns (its rows are 64), an f64 `s`, a bf16 `x`, and an `x` off
/// the 16-byte alignment its tensors are declared with (for its vector loads).
#[test]
fn wrong_shape_dtype_or_alignment() {
    let k = scale::build(Target::Sm90a).unwrap();
    let shape: fn(&RuntimeError) -> bool = |e| matches!(e, RuntimeError::ArgShape { .. });
    let dtype: fn(&RuntimeError) -> bool = |e| matches!(e, RuntimeError::ArgDtype { .. });
    let align: fn(&RuntimeError) -> bool =
        |e| matches!(e, RuntimeError::Misaligned { align: 16, .. });
    for (x, s, refusal) in [
        ((ScalarType::F32, [8, 32], 0x1000), Scalar::F32(2.0), shape),
        ((ScalarType::F32, [8, 64], 0x1000), Scalar::F64(2.0), dtype),
        ((ScalarType::Bf16, [8, 64], 0x1000), Scalar::F32(2.0), dtype),
        ((ScalarType::F32, [8, 64], 0x1004), Scalar::F32(2.0), align),
    ] {
        let e = k.config_for(&scale_args(x, s), 0).unwrap_err();
        assert!(refusal(&e), "{e}");
    }
}

/// The map of an f32 tensor of `tma_copy`'s shape at `addr`, in boxes of 32 rows and `box_cols`
/// columns with the 128-byte swizzle (`tma_copy`'s with 32).
fn tma_copy_map(addr: u64, box_cols: u32) -> TensorMapDesc {
    let (rows, cols) = (tma_copy::SHAPE.0 as usize, tma_copy::SHAPE.1 as usize);
    let tma = TmaBox::new([32, box_cols]).swizzle(SwizzleMode::B128);
    TensorMapDesc::row_major(TensorMapDType::F32, addr, &[rows, cols], &tma)
}

#[test]
fn misaligned_map() {
    check_tensor_map(&tma_copy_map(0x10_0000, 32)).unwrap();
    let e = check_tensor_map(&tma_copy_map(0x10_0004, 32)).unwrap_err();
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
    assert!(check_tensor_map(&tma_copy_map(0x10_0000, 64)).is_err());
}

#[test]
fn too_much_shared_memory() {
    let k = tma_copy::build(Target::Sm90a).unwrap();
    let syms = [("rows".to_string(), 256u64), ("cols".to_string(), 512)]
        .into_iter()
        .collect();
    let cfg = k.launch_config(&syms).unwrap();
    assert_eq!(cfg.dynamic_smem_bytes, 4096 + 8);
    check_launch(&cfg, &LaunchLimits::SM90).unwrap();
    let e = check_launch(&cfg.with_dynamic_smem(232_448 + 1), &LaunchLimits::SM90).unwrap_err();
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
    let n = u64::from(cluster_exchange::CLUSTERS * cluster_exchange::SPAN);
    let cfg = k
        .launch_config(&[("n".to_string(), n)].into_iter().collect())
        .unwrap();
    check_launch(&cfg, &LaunchLimits::SM90).unwrap();
    let mut big = cfg.with_cluster([32, 1, 1]);
    big.grid = [64, 1, 1];
    support::assert_err!(
        check_launch(&big, &LaunchLimits::SM90),
        RuntimeError::ClusterTooLarge { .. }
    );

    // At build time: a cluster extent over 16.
    let mut b = KernelBuilder::new("c", Target::Sm90a);
    let e = support::assert_err!(b.cta_id_in_cluster([32], None), KernelError::Scope { .. });
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
    support::assert_err!(
        k.launch_config(&Default::default()),
        RuntimeError::InvalidLaunch { .. }
    );
    let syms = [("n".to_string(), 10u64)].into_iter().collect();
    assert_eq!(k.launch_config(&syms).unwrap().grid, [5, 1, 1]);
}

/// `tma_copy` declares its tensors as TMA tensors: the caller passes the device tensors, and the
/// launcher checks them like any tensor, then builds each tensor map from the tensor's address
/// and shape with the kernel's box and swizzle, refusing what the driver would refuse with an
/// error naming the parameter.
#[test]
fn tma_tensors_are_passed_as_tensors_and_their_maps_built_from_them() {
    let k = tma_copy::build(Target::Sm90a).unwrap();
    let (rows, cols) = (tma_copy::SHAPE.0 as usize, tma_copy::SHAPE.1 as usize);
    let good = [
        t(ScalarType::F32, &[rows, cols], 0x10_0000),
        t(ScalarType::F32, &[rows, cols], 0x20_0000),
    ];
    let (buf, _) = ptxkit::runtime::check_and_pack(k.signature(), &good, 0).unwrap();
    // The extents rows and cols (read from the tensors), then the two 64-byte-aligned maps.
    assert_eq!(buf.offsets(), &[0, 4, 64, 192]);
    let maps = buf.tensor_maps();
    assert_eq!(maps.len(), 2);
    assert_eq!(maps[0], (2, tma_copy_map(0x10_0000, 32)));
    assert_eq!(maps[1], (3, tma_copy_map(0x20_0000, 32)));
    // Until the launcher encodes them, the maps' bytes are zero: no address is passed instead.
    assert!(buf.bytes()[64..].iter().all(|&b| b == 0));

    // Tensors that disagree on a symbolic extent.
    let wider = t(ScalarType::F32, &[rows, cols + 32], 0x20_0000);
    support::assert_err!(
        k.config_for(&[good[0].clone(), wider], 0),
        RuntimeError::SymbolMismatch { symbol, .. } if symbol == "cols"
    );
    // The wrong element type.
    let ints = t(ScalarType::U32, &[rows, cols], 0x10_0000);
    support::assert_err!(
        k.config_for(&[ints, good[1].clone()], 0),
        RuntimeError::ArgDtype { param, .. } if param == "src"
    );
    // An address the driver's tensor maps refuse: the rule and the parameter are named.
    let misaligned = t(ScalarType::F32, &[rows, cols], 0x20_0004);
    let e = k.config_for(&[good[0].clone(), misaligned], 0).unwrap_err();
    assert!(
        matches!(
            &e,
            RuntimeError::TmaTensor {
                param,
                rule: Some(TensorMapRule::GlobalAddressAlign),
                ..
            } if param == "dst"
        ),
        "{e}"
    );
    assert!(e.to_string().starts_with("TMA tensor `dst`: "), "{e}");
    // A pre-encoded map is not what a TMA tensor parameter takes.
    let map = ptxkit::runtime::TensorMap::zeroed();
    let e = k
        .config_for(&[ArgDesc::TensorMap(map), good[1].clone()], 0)
        .unwrap_err();
    assert!(
        matches!(&e, RuntimeError::ArgKind { param, .. } if param == "src"),
        "{e}"
    );
}

/// A TMA tensor over symbolic extents: the launcher reads the extents from the tensor, checks
/// their facts, and builds the map; a row pitch the driver cannot take (not a multiple of 16
/// bytes) and an element type with no tensor-map encoding are refused, naming the parameter.
#[test]
fn symbolic_tma_tensors_read_their_extents_and_meet_the_drivers_rules() {
    use ptxkit::runtime::{ExtentFacts, check_and_pack};
    let mut k = KernelBuilder::new("sym_tma", Target::Sm90a);
    let rows = k.symbol("rows").unwrap();
    let cols = k
        .symbol_with("cols", ExtentFacts::NONE.at_most(1024))
        .unwrap();
    k.tma_tensor::<ty::U16>("x", [rows, cols], TmaBox::new([8, 8]))
        .unwrap();
    k.thread_id([32]).unwrap();
    let built = k.finish().unwrap();
    let sig = built.signature();
    assert_eq!(sig.argument_count(), 1);

    let (buf, symbols) = check_and_pack(sig, &[t(ScalarType::U16, &[40, 64], 0x1000)], 0).unwrap();
    assert_eq!((symbols["rows"], symbols["cols"]), (40, 64));
    let (index, map) = &buf.tensor_maps()[0];
    assert_eq!(sig.params[*index].name(), "x");
    assert_eq!(map.dtype, TensorMapDType::U16);
    assert_eq!(map.global_dims, [64, 40]);
    assert_eq!(map.global_strides, [128]);
    assert_eq!(map.box_dims, [8, 8]);
    assert_eq!(map.swizzle, SwizzleMode::None);

    // 60 u16 columns: rows 120 bytes apart, not a multiple of 16.
    let e = check_and_pack(sig, &[t(ScalarType::U16, &[40, 60], 0x1000)], 0).unwrap_err();
    assert!(
        matches!(
            &e,
            RuntimeError::TmaTensor {
                param,
                rule: Some(TensorMapRule::GlobalStride),
                ..
            } if param == "x"
        ),
        "{e}"
    );
    // The symbol's facts are checked as for any tensor.
    support::assert_err!(
        check_and_pack(sig, &[t(ScalarType::U16, &[40, 2048], 0x1000)], 0),
        RuntimeError::ExtentFact { .. }
    );

    // .s16 has no tensor-map encoding: refused at launch, naming the parameter.
    let mut k = KernelBuilder::new("s16_tma", Target::Sm90a);
    k.thread_id([32]).unwrap();
    k.tma_tensor::<ty::S16>("y", [64u32, 64u32], TmaBox::new([8, 8]))
        .unwrap();
    let built = k.finish().unwrap();
    let e = check_and_pack(
        built.signature(),
        &[t(ScalarType::S16, &[64, 64], 0x1000)],
        0,
    )
    .unwrap_err();
    assert!(
        matches!(&e, RuntimeError::TmaTensor { param, rule: None, .. } if param == "y"),
        "{e}"
    );
    assert!(e.to_string().contains("s16"), "{e}");
}

/// What a persistent kernel's grid steps over.
enum Unit {
    /// Single CTAs, at most this many resident on an SM when stated.
    Cta(Option<u32>),
    /// CTA pairs (clusters of 2).
    Pair,
}

/// A persistent kernel over `n` items of `a`, one `unit` of 128-thread CTAs per item.
fn persistent(unit: Unit) -> ptxkit::kernel::BuiltKernel {
    let mut b = KernelBuilder::new("persist", Target::Sm90a);
    let n = b.symbol("n").unwrap();
    let _a = b
        .tensor::<ty::F32>("a", [n], TensorOpts::default())
        .unwrap();
    match unit {
        Unit::Cta(ctas_per_sm) => b.persistent_cta_id(n, ctas_per_sm).map(drop),
        Unit::Pair => b
            .persistent_cluster_id(n)
            .and_then(|_| b.cta_id_in_cluster([2], None).map(drop)),
    }
    .unwrap();
    b.thread_id([128]).unwrap();
    b.finish().unwrap()
}

/// The launcher sizes a persistent grid to the device: `min(work, SMs x CTAs per SM)`, so a large
/// work size gets at most one wave of resident CTAs and a small one a CTA per item; without the
/// device's residency the grid cannot be chosen, which is an error, not a guess.
#[test]
fn persistent_grid_is_sized_to_the_device() {
    let h100 = Residency {
        sm_count: 132,
        ctas_per_sm: 2,
        clusters: None,
    };
    let syms = |n: u64| [("n".to_string(), n)].into_iter().collect();
    let k = persistent(Unit::Cta(None));
    let big = k.launch_config_on(&syms(1 << 24), h100).unwrap();
    assert_eq!(big.grid, [264, 1, 1]);
    assert!(big.grid[0] <= h100.sm_count * h100.ctas_per_sm);
    assert_eq!(
        k.launch_config_on(&syms(100), h100).unwrap().grid,
        [100, 1, 1]
    );
    assert_eq!(
        k.launch_config_on(&syms(264), h100).unwrap().grid,
        [264, 1, 1]
    );
    assert_eq!(k.launch_config_on(&syms(0), h100).unwrap().grid, [1, 1, 1]);
    // The kernel's own cap on CTAs per SM (the GEMM's one CTA per SM).
    let one = persistent(Unit::Cta(Some(1)));
    assert_eq!(
        one.launch_config_on(&syms(1 << 24), h100).unwrap().grid,
        [132, 1, 1]
    );
    assert_eq!(
        one.launch_config_on(&syms(7), h100).unwrap().grid,
        [7, 1, 1]
    );
    // A kernel that fits no SM still gets one CTA (the launch then says why it cannot run).
    let none = Residency {
        sm_count: 132,
        ctas_per_sm: 0,
        clusters: None,
    };
    assert_eq!(
        k.launch_config_on(&syms(1000), none).unwrap().grid,
        [1, 1, 1]
    );
    // The arguments' check and the sizing together, as `LoadedKernel::launch` does.
    let (cfg, _) = k
        .config_on(&[t(ScalarType::F32, &[1 << 20], 0x1000)], 0, Some(h100))
        .unwrap();
    assert_eq!(cfg.grid, [264, 1, 1]);
    // Without a residency: refused.
    let e = support::assert_err!(
        k.launch_config(&syms(100)),
        RuntimeError::InvalidLaunch { .. }
    );
    assert!(e.to_string().contains("launch_config_on"), "{e}");
    // A stated grid ignores the residency.
    let fixed = vector_add::build(Target::Sm90a).unwrap();
    let vsyms = [("n".to_string(), 1u64 << 20)].into_iter().collect();
    assert_eq!(
        fixed.launch_config_on(&vsyms, h100).unwrap(),
        fixed.launch_config(&vsyms).unwrap()
    );
}

/// A persistent grid and a stated one are exclusive; the grid is of single CTAs; the work extent
/// is one the host knows.
#[test]
fn persistent_grid_refusals() {
    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.cta_id([8]).unwrap();
    support::assert_err!(b.persistent_cta_id(8, None), KernelError::Scope { .. });

    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.persistent_cta_id(8, None).unwrap();
    assert!(b.cta_id([8]).is_err());
    assert!(b.persistent_cta_id(9, None).is_err());
    b.persistent_cta_id(8, None).unwrap();
    assert!(b.persistent_cta_id(8, Some(0)).is_err());

    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.persistent_cta_id(8, None).unwrap();
    b.cta_id_in_cluster([2], None).unwrap();
    b.thread_id([32]).unwrap();
    let e = b.finish().unwrap_err();
    assert!(e.to_string().contains("clusters"), "{e}");

    let mut b = KernelBuilder::new("k", Target::Sm90a);
    let [tx] = b.thread_id([32]).unwrap();
    assert!(b.persistent_cta_id(tx, None).is_err());
}

/// A persistent grid of clusters: `min(work, clusters resident)` clusters, times the cluster's
/// CTAs, so always a whole number of clusters; without the clusters resident it is refused.
#[test]
fn persistent_cluster_grid_is_sized_to_the_device() {
    let h100 = Residency {
        sm_count: 132,
        ctas_per_sm: 1,
        clusters: Some(66),
    };
    let syms = |n: u64| [("n".to_string(), n)].into_iter().collect();
    let k = persistent(Unit::Pair);
    assert_eq!(k.launch_spec().cluster, Some([2, 1, 1]));
    let big = k.launch_config_on(&syms(1 << 20), h100).unwrap();
    assert_eq!((big.grid, big.cluster), ([132, 1, 1], Some([2, 1, 1])));
    check_launch(&big, &LaunchLimits::SM90).unwrap();
    assert_eq!(k.launch_config_on(&syms(5), h100).unwrap().grid, [10, 1, 1]);
    assert_eq!(k.launch_config_on(&syms(0), h100).unwrap().grid, [2, 1, 1]);
    let none = Residency {
        clusters: None,
        ..h100
    };
    support::assert_err!(
        k.launch_config_on(&syms(5), none),
        RuntimeError::InvalidLaunch { .. }
    );

    // The cluster's shape is needed, 1-D; a stated cluster grid and a persistent one exclude
    // each other.
    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.persistent_cluster_id(8).unwrap();
    b.thread_id([32]).unwrap();
    assert!(
        b.finish()
            .unwrap_err()
            .to_string()
            .contains("cta_id_in_cluster")
    );
    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.persistent_cluster_id(8).unwrap();
    b.cta_id_in_cluster([2, 2], None).unwrap();
    b.thread_id([32]).unwrap();
    assert!(b.finish().unwrap_err().to_string().contains("1-D"));
    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.persistent_cluster_id(8).unwrap();
    assert!(b.cluster_id([8]).is_err());
    assert!(b.persistent_cta_id(8, None).is_err());
    let mut b = KernelBuilder::new("k", Target::Sm90a);
    b.cluster_id([8]).unwrap();
    assert!(b.persistent_cluster_id(8).is_err());
}
