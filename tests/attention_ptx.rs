//! The attention kernels assemble with ptxas for sm_90a (the CI has no GPU; this is its check):
//! every configuration (and every variant the benchmark times), with no register spills, no "wgmma serialized" warning (C7515) and no
//! ignored `setmaxnreg` (C7508); two configurations' exact PTX against their golden files.

mod support;

use ptxkit::isa::{ScalarType, Target, ptxas};
use ptxkit::library::attention::{
    AttentionConfig, AttentionShape, Schedule, TileOrder, build, build_with_waits,
};

#[test]
fn attention_kernels_assemble_without_spills() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    let timed = [64, 128, 256]
        .into_iter()
        .flat_map(|d| [false, true].map(|c| AttentionConfig::variants(d, c)))
        .flatten()
        .map(|(_, c)| c);
    for cfg in AttentionConfig::all().into_iter().chain(timed) {
        let built = build(Target::Sm90a, &cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        support::assemble_clean_within(&ptxas, &cfg.name(), &built, cfg.smem_bytes());
    }
}

/// The exact PTX of the bf16, head dim 128, causal kernel (the default schedule) and of the bf16,
/// head dim 128, non-causal kernel with the ping-pong and overlap schedule against
/// `tests/golden/attention/<name>.ptx`. `BLESS=1` rewrites them.
#[test]
fn attention_ptx_matches_the_golden_file() {
    let base = AttentionConfig::new(ScalarType::Bf16, 128, true);
    let overlap =
        AttentionConfig::new(ScalarType::Bf16, 128, false).with_schedule(Schedule::PingPongOverlap);
    for cfg in [base, overlap] {
        let text = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
        let rel = format!("attention/{}.ptx", cfg.name());
        support::golden(&rel, &text).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The ping-pong schedules' PTX: each consumer warpgroup waits at its own named barrier and
/// arrives at the other's (256 threads: both warpgroups), and only the overlap schedule waits
/// for one wgmma group while another is in flight.
#[test]
fn schedules_take_turns_and_only_the_overlap_leaves_a_wgmma_group_in_flight() {
    let base = AttentionConfig::new(ScalarType::Bf16, 128, false);
    let ptx = |s: Schedule| {
        build(Target::Sm90a, &base.with_schedule(s))
            .unwrap()
            .ptx()
            .to_string()
    };
    let (serial, pingpong, overlap) = (
        ptx(Schedule::Serial),
        ptx(Schedule::PingPong),
        ptx(Schedule::PingPongOverlap),
    );
    assert!(!serial.contains("bar.arrive") && !serial.contains("wgmma.wait_group.sync.aligned 1;"));
    for text in [&pingpong, &overlap] {
        // The first warpgroup's first turn, the turns, the first warpgroup's last wait.
        assert!(text.contains("bar.arrive 1, 256;"), "{text}");
        assert!(text.contains("bar.sync 1, 256;"), "{text}");
        assert!(text.matches("bar.sync %r").count() >= 3, "a wait per turn");
        assert!(
            text.matches("bar.arrive %r").count() >= 3,
            "an arrival per turn"
        );
    }
    assert!(!pingpong.contains("wgmma.wait_group.sync.aligned 1;"));
    assert_eq!(
        overlap.matches("wgmma.wait_group.sync.aligned 1;").count(),
        1
    );
}

#[test]
fn bad_configurations_are_refused_when_built() {
    for bad in [
        AttentionConfig::new(ScalarType::F32, 128, false),
        AttentionConfig::new(ScalarType::Bf16, 80, false),
        AttentionConfig {
            stages: 0,
            ..AttentionConfig::new(ScalarType::Bf16, 128, false)
        },
        // 192-row query tiles: head dim 64 with the serial schedule only.
        AttentionConfig::new(ScalarType::Bf16, 128, false).with_block_m(192),
        AttentionConfig::new(ScalarType::Bf16, 64, false)
            .with_block_m(192)
            .with_schedule(Schedule::PingPong),
        AttentionConfig::new(ScalarType::Bf16, 64, false).with_block_m(256),
    ] {
        assert!(
            build(Target::Sm90a, &bad).is_err(),
            "{bad:?} should be refused"
        );
    }
}

/// The 192-row query tile at head dim 64: three consumer warpgroups (512 threads, budgets of
/// 24 and 160 registers), each stage of K and V released by three arrivals, Q loaded in 192-row
/// boxes.
#[test]
fn three_consumers_take_the_192_row_query_tile() {
    let cfg = AttentionConfig::new(ScalarType::Bf16, 64, false).with_block_m(192);
    assert_eq!(cfg.name(), "attention_fwd_bf16_d64_m192");
    assert_eq!(cfg.consumers(), 3);
    assert_eq!(cfg.q_bytes(), 192 * 128);
    let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
    assert!(ptx.contains(".maxntid 512, 1, 1"), "512 threads");
    assert!(ptx.contains("setmaxnreg.inc.sync.aligned.u32 160;"));
    assert!(ptx.contains("setmaxnreg.dec.sync.aligned.u32 24;"));
    // Each of the two rings' two stages: an empty barrier of three arrivals.
    let inits = |n: &str| {
        ptx.lines()
            .filter(|l| l.contains("mbarrier.init.shared.b64") && l.ends_with(n))
            .count()
    };
    assert_eq!(inits(", 3;"), 4);
}

/// O by TMA: the warpgroup's rows staged by `stmatrix`, made visible to the async proxy, one
/// 4-D TMA store per 64 columns, and the stores' reads waited for before the buffer is reused;
/// the register store has none of it. A persistent grid loops over tiles and releases Q.
#[test]
fn the_tma_store_stages_o_and_waits_for_its_reads() {
    let base = AttentionConfig::new(ScalarType::Bf16, 128, false);
    let ptx = |c: AttentionConfig| build(Target::Sm90a, &c).unwrap().ptx().to_string();
    let (regs, tma) = (ptx(base), ptx(base.with_tma_store()));
    let store = "cp.async.bulk.tensor.4d.global.shared::cta";
    assert!(!regs.contains(store) && !regs.contains("stmatrix"));
    assert_eq!(
        tma.matches(store).count(),
        2,
        "two 64-column boxes at d 128"
    );
    assert!(tma.contains("stmatrix"), "{tma}");
    assert!(tma.contains("fence.proxy.async.shared::cta;"));
    assert!(tma.contains("cp.async.bulk.wait_group.read 0;"));
    assert!(tma.contains("bar.sync %r"), "the warpgroup's store barrier");
    let persistent = ptx(base.with_persistent());
    assert!(
        persistent.contains("%nctaid.x"),
        "a grid-stride loop over the tiles"
    );
    assert!(!regs.contains("%nctaid.x"));
    // Refused where TMA cannot clip: packed sequences.
    assert!(build(Target::Sm90a, &base.with_varlen().with_tma_store()).is_err());
}

/// The debug builds (every mbarrier wait bounded, writing a hang record) of the default,
/// persistent, TMA-store and packed kernels assemble too (ptxas accepts them), and list their
/// wait sites; the release build lists none.
#[test]
fn debug_builds_assemble_and_list_their_wait_sites() {
    use smem::pipeline::sync::WaitMode;
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    // Persistent: the serial schedule (head dim 64) and the ping-pong (128), causal or not,
    // batched or packed.
    let base = AttentionConfig::new(ScalarType::Bf16, 128, true);
    let d64 = AttentionConfig::new(ScalarType::Bf16, 64, false);
    let d128 = AttentionConfig::new(ScalarType::Bf16, 128, false);
    for cfg in [
        base,
        base.with_tma_store(),
        base.with_varlen(),
        base.with_persistent(),
        base.with_varlen().with_persistent(),
        d128.with_persistent(),
        d64.with_persistent(),
        d64.with_persistent().with_tma_store(),
    ] {
        let (built, sites) = build_with_waits(Target::Sm90a, &cfg, WaitMode::Bounded)
            .unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        // Accepted; a debug build may spill (its records take registers the producer lacks).
        let out = ptxas.assemble(built.ptx(), Target::Sm90a, &[]).unwrap();
        assert!(out.ok, "{}: ptxas rejected it:\n{}", cfg.name(), out.log);
        assert!(!sites.sites.is_empty(), "{}", cfg.name());
        let (_, none) = build_with_waits(Target::Sm90a, &cfg, WaitMode::Spin).unwrap();
        assert!(none.sites.is_empty());
    }
}

/// `AttentionConfig::for_problem` picks, for every problem, a configuration that is valid and
/// among `AttentionConfig::all` (so the self-test checks it and the test above assembles it),
/// batched and packed (`with_varlen`, O from registers); at head dim 128 the H200's winners
/// (notes/session5-call3-h200.log), all with TMA store on one CTA per query tile: the overlap
/// schedule with 176-row key tiles below 16k keys (with the mask 128-row ones up to 4k) and
/// 192-row tiles with the ping-pong from 16k, causal or not.
#[test]
fn the_library_picks_a_checked_configuration_for_every_problem() {
    let all = AttentionConfig::all();
    let shape = |head_dim: usize, seqlen: usize| AttentionShape {
        batch: 2,
        seqlen_q: seqlen,
        seqlen_k: seqlen,
        heads: 2048 / head_dim,
        kv_heads: 2048 / head_dim,
        head_dim,
    };
    for dtype in [ScalarType::Bf16, ScalarType::F16] {
        for d in [64, 128, 256] {
            for causal in [false, true] {
                for seqlen in [100, 4096, 4097, 8192, 16383, 16384] {
                    let pick = AttentionConfig::for_problem(dtype, &shape(d, seqlen), causal);
                    for cfg in [pick, pick.with_varlen()] {
                        assert_eq!(cfg.validate(), Ok(()), "{}", cfg.name());
                        assert!(all.contains(&cfg), "{} is not checked", cfg.name());
                    }
                    assert!(!pick.with_varlen().tma_store);
                }
            }
        }
    }
    let pick = |causal, seqlen| {
        AttentionConfig::for_problem(ScalarType::Bf16, &shape(128, seqlen), causal)
    };
    let tiles = |cfg: AttentionConfig| {
        (
            cfg.block_n,
            cfg.schedule,
            cfg.persistent,
            cfg.order,
            cfg.tma_store,
        )
    };
    let head_major = TileOrder::HeadMajor;
    let overlap = Schedule::PingPongOverlap;
    for seqlen in [4096, 8192, 16383] {
        assert_eq!(
            tiles(pick(false, seqlen)),
            (176, overlap, false, head_major, true)
        );
    }
    assert_eq!(
        tiles(pick(true, 4096)),
        (128, overlap, false, head_major, true)
    );
    assert_eq!(
        tiles(pick(true, 8192)),
        (176, overlap, false, head_major, true)
    );
    for causal in [false, true] {
        assert_eq!(
            tiles(pick(causal, 16384)),
            (192, Schedule::PingPong, false, head_major, true)
        );
    }
}

/// CTA pairs (`AttentionConfig::pair`): a cluster of two (`.reqnctapercluster 2, 1, 1`), each
/// producer loading half of every K and V tile (boxes of `block_n / 2` rows) multicast into both
/// CTAs, the whole tile's bytes announced on `full`, each stage's `empty` waiting for both
/// CTAs' consumer warpgroups (4 arrivals), a release also arriving on the peer's barrier
/// (`mapa`), the barriers' inits seen cluster-wide and a cluster barrier before the CTAs leave;
/// refused with the causal mask and over packed sequences.
#[test]
fn cta_pairs_share_each_kv_tile() {
    let cfg = AttentionConfig::new(ScalarType::Bf16, 256, false)
        .with_schedule(Schedule::PingPongOverlap)
        .with_tile(80, 2)
        .with_tma_store()
        .with_pair();
    assert_eq!(
        cfg.name(),
        "attention_fwd_bf16_d256_overlap_n80s2_tmastore_pair"
    );
    let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
    assert!(ptx.contains(".reqnctapercluster 2, 1, 1"), "{ptx}");
    // Four 64-column slabs of K's half and four of V's, each multicast to both CTAs.
    assert_eq!(ptx.matches(".multicast::cluster").count(), 8);
    // The whole 80 x 256 tile's bytes, half from each producer.
    assert!(
        ptx.lines()
            .any(|l| l.contains("mbarrier.arrive.expect_tx") && l.ends_with(", 40960;")),
        "{ptx}"
    );
    let inits = |n: &str| {
        ptx.lines()
            .filter(|l| l.contains("mbarrier.init.shared.b64") && l.ends_with(n))
            .count()
    };
    assert_eq!(
        inits(", 4;"),
        4,
        "two rings' two stages: both CTAs' two consumers"
    );
    assert!(ptx.contains("mapa.shared::cluster.u32"));
    assert!(ptx.contains("fence.mbarrier_init.release.cluster;"));
    assert!(ptx.contains("barrier.cluster.wait"));
    let persistent = build(Target::Sm90a, &cfg.with_order(TileOrder::L2Sections))
        .unwrap()
        .ptx()
        .to_string();
    assert!(persistent.contains("%nclusterid.x"), "a stride over pairs");
    for bad in [
        AttentionConfig::new(ScalarType::Bf16, 256, true).with_pair(),
        AttentionConfig::new(ScalarType::Bf16, 128, false)
            .with_pair()
            .with_varlen(),
    ] {
        assert_eq!(
            bad.validate(),
            Err(ptxkit::library::attention::AttentionConfigError::PairedTiles)
        );
        assert!(build(Target::Sm90a, &bad).is_err());
    }
}
