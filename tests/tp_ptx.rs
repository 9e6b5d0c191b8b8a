//! The tensor-parallel kernels assemble with ptxas for sm_90a (the CI has no GPU: this is its
//! check), with no spills: the all-gather + GEMM's gated GEMM and the reduce-scatter's slot sum.
//! Their single-process logic (chunks, flags, orders) is tested in `library::tp::plan`; a device
//! group without a driver is an error, not a panic.

mod support;

use ptxkit::isa::Target;
use ptxkit::isa::ty;
use ptxkit::kernel::KernelBuilder;
use ptxkit::library::gemm::{GemmConfig, HopperGemm, StagedLoadAt};
use ptxkit::library::tp::{AllGatherPlan, GatePolls, kernels};
use ptxkit::runtime::{DeviceGroup, RuntimeError, driver_available, nccl_available};
use ptxkit::smem::pipeline::sync::WaitMode;

/// An owner's GEMM gated on its peer's flag, polled before every tile's staged load.
const GATED: Option<GatePolls> = Some(GatePolls::EveryTile);

/// The configurations of the benchmark's layers (Llama-70B-like, tensor parallelism of 2 and
/// 4) on a 132-SM H200, each with its chunks: the layers' own (1024 rows), the sweep's at 4096
/// tokens (256 and 512 rows, a whole shard), the stress's (256) and the sanitizer's small run's
/// (128); with four ranks at 4096 tokens, the bands of 8 row tiles `AllGatherGemm` cuts a
/// 1024-row shard's walk to (`AllGatherPlan::band`).
fn gated() -> Vec<(GemmConfig, u32)> {
    let tiles = |rows: usize| AllGatherPlan::new(2, 2048, rows).unwrap().chunk_tiles();
    let four = AllGatherPlan::new(4, 1024, 1024).unwrap();
    let banded = |m: usize, n: usize| GemmConfig {
        group_m: four.band(16),
        ..GemmConfig::for_problem(m, n, 132)
    };
    support::unique(
        [
            (16384, 14336, 1024),
            (8192, 5120, 1024),
            (16384, 4096, 1024),
            (4096, 28672, 1024),
            (4096, 5120, 256),
            (4096, 5120, 512),
            (4096, 14336, 2048),
            (1024, 512, 128),
        ]
        .into_iter()
        .map(|(m, n, rows)| (GemmConfig::for_problem(m, n, 132), tiles(rows)))
        .chain([
            (banded(4096, 2560), four.chunk_tiles()),
            (banded(4096, 7168), four.chunk_tiles()),
        ]),
    )
}

#[test]
fn the_gated_gemm_waits_on_its_chunk_before_its_loads() {
    for (cfg, chunk_tiles) in gated() {
        let gemm = kernels::all_gather_gemm(&cfg, chunk_tiles).unwrap();
        let ptx = gemm.built.ptx();
        let names = gemm.signature().param_names();
        let want = [
            "m", "n", "k", "a", "b", "c", "chunks", "flags", "epoch", "shift",
        ];
        assert_eq!(names, want, "{names:?}");
        // The producer polls the chunk's flag (.sys: a copy engine wrote it), fences the async
        // proxy, and only then issues the tile's TMA loads.
        let poll = ptx
            .find("ld.acquire.sys.global.u32")
            .expect("no acquire poll");
        let fence = ptx
            .find("fence.proxy.async.global;")
            .expect("no proxy fence");
        let load = ptx.find("cp.async.bulk.tensor").expect("no TMA load");
        assert!(poll < fence && fence < load, "{}", cfg.name());
        assert!(!ptx.contains("multimem"), "no NVLink multicast");
        if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
            let name = format!("{}_ag{chunk_tiles}", cfg.name());
            support::assemble_clean(&ptxas, &name, ptx, Target::Sm90a);
        }
    }
}

#[test]
fn the_slot_sum_assembles_for_any_world() {
    for world in [1, 2, 4, 8] {
        for owner in [0, world - 1] {
            let sum = kernels::slot_sum(world, owner).unwrap();
            let ptx = sum.ptx();
            // One 16-byte load per slot and thread, added in f32, the owner's slot first.
            assert_eq!(ptx.matches("ld.global.v4").count(), world as usize, "{ptx}");
            assert!(ptx.contains("cvt.rn.bf16.f32"));
            support::assemble(ptx, Target::Sm90a);
        }
    }
    let e = kernels::slot_sum(2, 2).unwrap_err();
    assert!(e.to_string().contains("owner 2 of 2"), "{e}");
}

#[test]
fn a_gated_gemm_with_no_chunk_tiles_is_refused() {
    let e = kernels::all_gather_gemm(&GemmConfig::large(), 0).unwrap_err();
    assert!(e.to_string().contains("at least one row tile"), "{e}");
}

#[test]
fn a_device_group_without_a_gpu_is_an_error() {
    let r = std::panic::catch_unwind(DeviceGroup::all).expect("DeviceGroup::all panicked");
    if !driver_available() {
        assert!(matches!(r, Err(RuntimeError::NoDriver)), "{r:?}");
    }
    // Asking whether NCCL is there never panics either.
    let _ = nccl_available();
    assert!(matches!(
        DeviceGroup::new(&[]),
        Err(RuntimeError::Group { .. })
    ));
    assert!(matches!(
        DeviceGroup::new(&[0, 0]),
        Err(RuntimeError::Group { .. })
    ));
}

/// The owner's GEMM with the slot sum fused: its peers' slots are parameters in rank order
/// (its own left out), the first staged by TMA (a TMA load in the consumers, beside the
/// producer's), its accumulator is rounded to bf16 before they are added, and with two ranks it
/// assembles clean for the benchmark's reduce-scatter shapes (two and four ranks), the
/// stress's and the small run's.
#[test]
fn the_fused_owner_gemm_adds_its_peers_slots() {
    let configs = support::unique(
        [
            (1024, 8192),
            (2048, 8192),
            (4096, 8192),
            (8192, 8192),
            (256, 512),
        ]
        .into_iter()
        .map(|(rows, n)| GemmConfig::for_problem(rows, n, 132)),
    );
    for cfg in configs {
        for (world, rank, slots) in [
            (2, 0, vec!["slot1"]),
            (2, 1, vec!["slot0"]),
            (4, 2, vec!["slot0", "slot1", "slot3"]),
        ] {
            let gemm = kernels::reduce_scatter_gemm(&cfg, world, rank, None, StagedLoadAt::Middle)
                .unwrap();
            let names = gemm.signature().param_names();
            let mut want = vec!["m", "n", "k", "a", "b", "c"];
            want.extend(&slots);
            assert_eq!(names, want, "{}", cfg.name());
            let ptx = gemm.built.ptx();
            assert!(ptx.contains("cvt.rn.bf16.f32"), "{}", cfg.name());
            assert!(!ptx.contains("multimem"), "no NVLink multicast");
            // Two ranks (one residual) assemble clean; with four, three residuals spill at
            // the widest tiles, so those are only assembled.
            match ptxkit::isa::ptxas::for_tests().unwrap() {
                Some(ptxas) if world == 2 => {
                    let name = format!("{}_rs{rank}of{world}", cfg.name());
                    support::assemble_clean(&ptxas, &name, ptx, Target::Sm90a);
                }
                _ => support::assemble(ptx, Target::Sm90a),
            }
        }
    }
    let e = kernels::reduce_scatter_gemm(&GemmConfig::large(), 2, 2, None, StagedLoadAt::Middle)
        .unwrap_err();
    assert!(e.to_string().contains("rank 2 of 2"), "{e}");
}

/// The gated owner GEMM `name`'s `polls` poll sites (`ld.acquire.sys` of its peer's flag); the
/// first followed by the proxy fence (PTX ISA 9.7.13.4), then the staged TMA load: where the
/// poll and the fence are.
fn staged_poll(ptx: &str, name: &str, polls: usize) -> (usize, usize) {
    let poll_op = "ld.acquire.sys.global.u32";
    assert_eq!(ptx.matches(poll_op).count(), polls, "{name}");
    let poll = ptx.find(poll_op).unwrap();
    let fence = poll + ptx[poll..].find("fence.proxy.async.global;").unwrap();
    let load = poll + ptx[poll..].find("cp.async.bulk.tensor").unwrap();
    assert!(
        fence < load,
        "{name}: the proxy fence comes before the staged TMA load"
    );
    (poll, fence)
}

/// Gated at two ranks, the owner's GEMM takes its peer's flag and the epoch after its slot, and
/// only the staged partial's load waits on it: the consumer thread that issues that TMA load
/// polls the flag with `ld.acquire.sys` and fences the async proxy first (PTX ISA 8.5, 8.6,
/// 9.7.13.4), the producer's loads of A and B never wait. With epilogue warps (two or three)
/// their slab loads wait too. It assembles clean; four ranks and the register epilogue are refused.
#[test]
fn the_gated_owner_gemm_waits_only_before_the_staged_partial() {
    let mut configs: Vec<GemmConfig> = support::unique(
        [(2048, 8192), (4096, 8192), (8192, 8192), (256, 512)]
            .into_iter()
            .map(|(rows, n)| GemmConfig::for_problem(rows, n, 132)),
    );
    let ew = GemmConfig {
        epilogue_warps: true,
        ..GemmConfig::for_problem(2048, 8192, 132)
    };
    configs.extend([ew, ew.with_epilogue_warp_count(2)]);
    for cfg in configs {
        for rank in 0..2u32 {
            let gemm =
                kernels::reduce_scatter_gemm(&cfg, 2, rank, GATED, StagedLoadAt::Middle).unwrap();
            let names = gemm.signature().param_names();
            let slot = format!("slot{}", 1 - rank);
            let want = [
                "m", "n", "k", "a", "b", "c", &slot, "chunks", "flags", "epoch",
            ];
            assert_eq!(names, want, "{}", cfg.name());
            let ptx = gemm.built.ptx();
            let name = format!("{}_rs{rank}of2_gated", cfg.name());
            assert!(ptx.contains(&format!(".entry {name}")), "{name}");
            // One poll site a staged load: the consumers' (and the epilogue warps': on three
            // warps a tile's first slab's and the loop's next one's).
            let want_polls = match (cfg.epilogue_warps, cfg.epilogue_warp_count) {
                (false, _) => 1,
                (true, 2) => 2,
                (true, _) => 3,
            };
            staged_poll(ptx, &name, want_polls);
            assert!(!ptx.contains("multimem"), "no NVLink multicast");
            match ptxkit::isa::ptxas::for_tests().unwrap() {
                Some(ptxas) => support::assemble_clean(&ptxas, &name, ptx, Target::Sm90a),
                None => support::assemble(ptx, Target::Sm90a),
            }
        }
    }
    let plain = GemmConfig {
        tma_store: false,
        ..GemmConfig::for_problem(2048, 8192, 132)
    };
    for (cfg, world) in [(GemmConfig::large(), 4), (plain, 2)] {
        let e =
            kernels::reduce_scatter_gemm(&cfg, world, 0, GATED, StagedLoadAt::Middle).unwrap_err();
        assert!(
            e.to_string().contains("the gate is on the staged input"),
            "{e}"
        );
    }
}

#[test]
fn the_owner_gemm_loads_the_peer_partial_under_the_chosen_k_tile() {
    let cfg = GemmConfig::for_problem(2048, 8192, 132);
    let middle = kernels::reduce_scatter_gemm(&cfg, 2, 0, GATED, StagedLoadAt::Middle).unwrap();
    let early = kernels::reduce_scatter_gemm(&cfg, 2, 0, GATED, StagedLoadAt::KTile(2)).unwrap();
    let name = format!("{}_rs0of2_gated_kt2", cfg.name());
    let ptx = early.built.ptx();
    assert!(ptx.contains(&format!(".entry {name}")), "{name}");
    assert_ne!(ptx, middle.built.ptx(), "the load moved");
    // Still one poll site, before the proxy fence and the staged TMA load.
    staged_poll(ptx, &name, 1);
    match ptxkit::isa::ptxas::for_tests().unwrap() {
        Some(ptxas) => support::assemble_clean(&ptxas, &name, ptx, Target::Sm90a),
        None => support::assemble(ptx, Target::Sm90a),
    }
    // Ungated and without a staged input (the register epilogue) it builds too.
    kernels::reduce_scatter_gemm(&cfg, 2, 1, None, StagedLoadAt::KTile(2)).unwrap();
    let plain = GemmConfig {
        tma_store: false,
        ..cfg
    };
    kernels::reduce_scatter_gemm(&plain, 2, 0, None, StagedLoadAt::KTile(2)).unwrap();
    // A GEMM without a staged input has nowhere to load one.
    let mut k = KernelBuilder::new("no_staged", Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin).unwrap();
    let e = gemm
        .with_staged_load_at(&k, StagedLoadAt::KTile(2))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("where to load the staged input of a GEMM without one"),
        "{e}"
    );
}

/// The owner's GEMM polling its peer's flag once a thread (`GatePolls::Once`,
/// `RowGate::remembered`): still one poll site, now under a branch on the remembered chunk
/// (set to none, `u32::MAX`, before the roles split), still before the proxy fence and the
/// staged TMA load; and loading the staged partial slab by slab (`StagedLoadAt::Spread`): one
/// poll site, the block's bytes announced once, one TMA load site a slab. Each assembles clean
/// (no spills), alone and together.
#[test]
fn the_owner_gemm_polls_once_and_spreads_its_staged_loads() {
    let cfg = GemmConfig::for_problem(2048, 8192, 132);
    let every = GATED;
    let once = Some(GatePolls::Once);
    let spread = StagedLoadAt::Spread { first: 2, every: 8 };
    let base = kernels::reduce_scatter_gemm(&cfg, 2, 0, every, StagedLoadAt::Middle).unwrap();
    let base = base.built.ptx().to_string();
    let expect_tx = |ptx: &str| ptx.matches("mbarrier.arrive.expect_tx").count();
    let loads = |ptx: &str| {
        ptx.matches("cp.async.bulk.tensor.2d.shared::cluster.global")
            .count()
    };
    for (polls, at, suffix) in [
        (once, StagedLoadAt::Middle, "_gated1"),
        (every, spread, "_gated_sp2x8"),
        (once, spread, "_gated1_sp2x8"),
    ] {
        let gemm = kernels::reduce_scatter_gemm(&cfg, 2, 0, polls, at).unwrap();
        let name = format!("{}_rs0of2{suffix}", cfg.name());
        let ptx = gemm.built.ptx();
        assert!(ptx.contains(&format!(".entry {name}")), "{name}");
        assert_ne!(ptx, base, "{name}");
        let (poll, fence) = staged_poll(ptx, &name, 1);
        if polls == once {
            // The remembered chunk: a register set to none (u32::MAX) before the roles split,
            // tested before the poll and set to the chunk (0, the one flag) after the fence.
            let start = ptx
                .find(", 0xFFFFFFFF;")
                .expect("the remembered chunk's start");
            let line = &ptx[ptx[..start].rfind('\n').unwrap()..start];
            let reg = line.rsplit(' ').next().unwrap();
            assert!(
                line.contains("mov.u32") && reg.starts_with("%r"),
                "{name}: {line}"
            );
            let split = ptx.find("setmaxnreg").unwrap();
            assert!(start < split, "{name}: set before the roles split");
            let test = ptx[..poll].rfind(&format!(", 0, {reg};")).unwrap();
            let test_line = &ptx[ptx[..test].rfind('\n').unwrap()..test];
            assert!(test_line.contains("setp.ne.u32"), "{name}: {test_line}");
            let skip = ptx[test..poll].find("bra").is_some();
            assert!(skip, "{name}: the poll is skipped on a remembered chunk");
            let set = poll + ptx[poll..].find(&format!("mov.u32 {reg}, 0;")).unwrap();
            assert!(fence < set, "{name}: remembered after the fence");
        }
        // Spread or not, the block's bytes are announced at one site and each slab has a load.
        assert_eq!(expect_tx(ptx), expect_tx(&base), "{name}");
        assert_eq!(loads(ptx), loads(&base), "{name}");
        assert!(!ptx.contains("multimem"), "no NVLink multicast");
        match ptxkit::isa::ptxas::for_tests().unwrap() {
            Some(ptxas) => support::assemble_clean(&ptxas, &name, ptx, Target::Sm90a),
            None => support::assemble(ptx, Target::Sm90a),
        }
    }
    // Ungated the spread load builds alone; with one rank (no peer, no staged input) a
    // spread load is nothing to place.
    kernels::reduce_scatter_gemm(&cfg, 2, 1, None, spread).unwrap();
    kernels::reduce_scatter_gemm(&cfg, 1, 0, None, spread).unwrap();
}
