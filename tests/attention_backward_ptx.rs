//! The attention backward's kernels assemble with ptxas for sm_90a (the CI has no GPU; this is
//! its check): the preprocess, main and convert kernels of every configuration, with no
//! register spills, no serialized wgmma (C7515, C7520) and no ignored `setmaxnreg` (C7508),
//! within the shared memory the configuration states; and what the main kernel's PTX must hold.

mod support;

use ptxkit::isa::{Target, ptxas};
use ptxkit::library::attention::backward::{
    BackwardConfig, build_convert, build_main, build_preprocess,
};

#[test]
fn backward_kernels_assemble_without_spills() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for cfg in BackwardConfig::all() {
        let main =
            build_main(Target::Sm90a, &cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        support::assemble_clean_within(&ptxas, &cfg.name(), &main, cfg.smem_bytes());
        for (what, built) in [
            ("preprocess", build_preprocess(Target::Sm90a, &cfg)),
            ("convert", build_convert(Target::Sm90a, &cfg)),
        ] {
            let built = built.unwrap_or_else(|e| panic!("{} {what}: {e}", cfg.name()));
            support::assemble_clean(
                &ptxas,
                &format!("{} {what}", cfg.name()),
                built.ptx(),
                Target::Sm90a,
            );
        }
    }
}

/// Per query block, the main kernel's consumer issues its five GEMMs (`Sᵀ`, `dPᵀ`, `dV`, `dK`,
/// `dQ`, the last with A MN-major from shared memory; at d128 by default the next block's `Sᵀ`
/// at the end of a trip, the first block's before the loop), reduces dQ into the accumulator
/// with one bulk reduction (or, `_red`, 32 `red.global.add.f32` a thread), and the producer
/// loads Q, dO (two slabs each at d128), LSE and D per stage and K, V once.
#[test]
fn the_main_kernel_issues_five_gemms_and_reduces_dq() {
    let cfg = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, 128, true);
    let ptx = build_main(Target::Sm90a, &cfg).unwrap().ptx().to_string();
    // The scores ahead: Sᵀ issued before the loop and at each trip's end.
    assert!(cfg.queues_scores_ahead() && cfg.queues_dv_after_ds());
    assert_eq!(
        ptx.matches("wgmma.commit_group").count(),
        1 + 5,
        "the first Sᵀ and five GEMM groups a trip"
    );
    // K-steps: Sᵀ and dPᵀ over d (8 each), dV and dK over 64 queries (4 each), dQ over 128
    // keys (8).
    assert_eq!(
        ptx.matches("wgmma.mma_async").count(),
        8 + 8 + 8 + 4 + 4 + 8
    );
    let in_trip = build_main(Target::Sm90a, &cfg.with_scores_in_trip()).unwrap();
    let in_trip = in_trip.ptx();
    assert_eq!(in_trip.matches("wgmma.commit_group").count(), 5);
    assert_eq!(
        in_trip.matches("wgmma.mma_async").count(),
        8 + 8 + 4 + 4 + 8
    );
    assert_eq!(ptx.matches("red.global.add.f32").count(), 0);
    let bulk = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32";
    assert_eq!(ptx.matches(bulk).count(), 1);
    let red = build_main(Target::Sm90a, &cfg.with_red_dq()).unwrap();
    let red = red.ptx();
    assert_eq!(
        red.matches("red.global.add.f32").count(),
        32,
        "dQ's 32 values a thread"
    );
    assert!(!red.contains("cp.reduce.async.bulk"));
    // K and V: 2 slabs each; a stage: Q and dO 2 slabs each, LSE, D.
    assert_eq!(ptx.matches("cp.async.bulk.tensor.4d").count(), 4 + 4);
    assert_eq!(ptx.matches("cp.async.bulk.tensor.3d").count(), 2);
    assert!(ptx.contains("setmaxnreg.inc.sync.aligned.u32 240;"));
}

/// dQ is staged with 64-bit stores (16 `st.shared.v2.f32` a thread, no scalar f32 store); at
/// head dim 64 the second warpgroup hands its partial dQ to the first (`bar.arrive` and
/// `bar.sync` at barrier 5 over both warpgroups, 16 `ld.shared.v2.f32`) and one bulk reduction
/// a query block remains, or with the partials reduced on their own, no hand-over.
#[test]
fn dq_is_staged_in_pairs_and_summed_at_d64() {
    let d128 = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, 128, false);
    let ptx = build_main(Target::Sm90a, &d128).unwrap().ptx().to_string();
    assert_eq!(ptx.matches("st.shared.v2.f32").count(), 16);
    assert_eq!(ptx.matches("st.shared.f32").count(), 0);
    let d64 = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, 64, true)
        .with_block_m(BackwardConfig::BLOCK_M);
    let summed = build_main(Target::Sm90a, &d64).unwrap().ptx().to_string();
    assert!(summed.contains("bar.arrive 5, 256;") && summed.contains("bar.sync 5, 256;"));
    assert_eq!(summed.matches("ld.shared.v2.f32").count(), 16);
    let bulk = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32";
    assert_eq!(summed.matches(bulk).count(), 1);
    let partials = build_main(Target::Sm90a, &d64.with_partial_dq()).unwrap();
    assert!(!partials.ptx().contains("bar.arrive 5"));
    assert_eq!(partials.ptx().matches("ld.shared.v2.f32").count(), 0);
}

/// At head dim 256 the warpgroups split the head's columns: per query block the consumer
/// issues the same five GEMM groups (`Sᵀ` and `dPᵀ` over 256 columns for its 32 queries, 16
/// k-steps each; `dV`, `dK` over 64 queries and `dQ` over the 64 keys, 4 each), shares `Pᵀ`
/// and `dSᵀ` through shared memory (64-byte swizzled slabs: each warpgroup's 64 keys x 32
/// queries stored, 32-bit a thread, 8 each), meets its peer twice at barrier 1, and adds its
/// 128 of dQ's columns with one stage by one bulk reduction of both its tiles (32 KB, the
/// default), or with two by `red.global.add.f32` (64 a thread); ptxas assembles both with no
/// spills and no serialized wgmma, the shared memory within 227 KB.
#[test]
fn the_d256_kernel_splits_the_head_dim() {
    let bulk_cfg = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, 256, true);
    let cfg = bulk_cfg.with_red_dq();
    let red = build_main(Target::Sm90a, &cfg).unwrap();
    let ptx = red.ptx();
    assert_eq!(ptx.matches("wgmma.commit_group").count(), 5);
    assert_eq!(ptx.matches("wgmma.mma_async").count(), 16 + 16 + 4 + 4 + 4);
    assert_eq!(ptx.matches("red.global.add.f32").count(), 64);
    assert_eq!(ptx.matches("bar.sync 1, 256;").count(), 2);
    // K and V: 4 slabs each; a stage: Q and dO 4 slabs each, LSE, D.
    assert_eq!(ptx.matches("cp.async.bulk.tensor.4d").count(), 8 + 8);
    assert_eq!(ptx.matches("cp.async.bulk.tensor.3d").count(), 2);
    let bulk = build_main(Target::Sm90a, &bulk_cfg).unwrap();
    let reduce = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%";
    let reductions = support::lines_with(bulk.ptx(), reduce);
    assert_eq!(reductions.len(), 1);
    assert!(reductions[0].ends_with(", 32768;"), "{}", reductions[0]);
    assert_eq!(bulk.ptx().matches("st.shared.v2.f32").count(), 32);
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for (c, built) in [(cfg, &red), (bulk_cfg, &bulk)] {
        support::assemble_clean_within(&ptxas, &c.name(), built, c.smem_bytes());
    }
}

/// At head dim 64 with 128-query blocks (`BackwardConfig::block_m`, FlashAttention-3's query
/// block there, the default) the consumer issues the same five GEMM groups per query block (`Sᵀ` and `dPᵀ`
/// over d = 64, 4 k-steps each; `dV` and `dK` over the 128 queries, 8 each; `dQ` of its 64
/// queries over the 128 keys, 8), each warpgroup reduces its own dQ tile (one bulk reduction of
/// 16 KB, no hand-over at barrier 5), and the producer loads 128-row boxes of Q and dO and 128
/// LSE and D values per stage; ptxas assembles it with no spills and no serialized wgmma.
#[test]
fn the_d64_kernel_takes_128_query_blocks() {
    let cfg = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, 64, true);
    assert_eq!(
        cfg.block_m,
        BackwardConfig::WIDE_BLOCK_M,
        "the default at d64"
    );
    assert_eq!(cfg.name(), "attention_bwd_bf16_d64_causal_m128");
    let built = build_main(Target::Sm90a, &cfg).unwrap();
    let ptx = built.ptx();
    assert_eq!(ptx.matches("wgmma.commit_group").count(), 5);
    assert_eq!(ptx.matches("wgmma.mma_async").count(), 4 + 4 + 8 + 8 + 8);
    assert_eq!(
        ptx.matches("wgmma.mma_async.sync.aligned.m64n128k16")
            .count(),
        8
    );
    let reduce = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%";
    let reductions = support::lines_with(ptx, reduce);
    assert_eq!(reductions.len(), 1);
    assert!(reductions[0].ends_with(", 16384;"), "{}", reductions[0]);
    assert!(!ptx.contains("bar.arrive 5"));
    assert_eq!(ptx.matches("bar.sync 1, 256;").count(), 1);
    // K and V one slab each, a stage's Q and dO one each, LSE and D.
    assert_eq!(ptx.matches("cp.async.bulk.tensor.4d").count(), 2 + 2);
    assert_eq!(ptx.matches("cp.async.bulk.tensor.3d").count(), 2);
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    support::assemble_clean_within(&ptxas, &cfg.name(), &built, cfg.smem_bytes());
}

/// At head dim 128 with 80-query blocks (`BackwardConfig::TRANSPOSED_BLOCK_M`,
/// FlashAttention-3's tile there without the causal mask) the consumer issues the same five GEMM
/// groups per query block: `Sᵀ` and `dPᵀ` (64 keys x 80 queries) over d = 128, 8 k-steps each;
/// `dV` and `dK` (64 keys x 128 columns) over the 80 queries, 5 each; and `dQᵀ = Kᵀ·dSᵀ` (its 64
/// columns x 80 queries) over the 128 keys, 8; it stages dQᵀ transposed (40 f32 stores a
/// thread) into its 80-row tile and reduces it with one bulk reduction of 20 KB, and the
/// producer loads 80-row boxes of Q and dO; ptxas assembles it with no spills and no serialized
/// wgmma, the shared memory within 227 KB, causal or not, batched or packed.
#[test]
fn the_d128_kernel_takes_80_query_blocks_with_dq_transposed() {
    let base = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, 128, false);
    let cfg = base.with_block_m(BackwardConfig::TRANSPOSED_BLOCK_M);
    assert!(cfg.transposes_dq() && cfg.queues_dv_after_ds());
    assert_eq!(cfg.name(), "attention_bwd_bf16_d128_m80");
    let built = build_main(Target::Sm90a, &cfg).unwrap();
    let ptx = built.ptx();
    assert_eq!(ptx.matches("wgmma.commit_group").count(), 5);
    let shape = |s: &str| {
        ptx.matches(&format!("wgmma.mma_async.sync.aligned.{s}.f32.bf16.bf16"))
            .count()
    };
    assert_eq!(shape("m64n80k16"), 8 + 8 + 8);
    assert_eq!(shape("m64n128k16"), 5 + 5);
    let reduce = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%";
    let reductions = support::lines_with(ptx, reduce);
    assert_eq!(reductions.len(), 1);
    assert!(reductions[0].ends_with(", 20480;"), "{}", reductions[0]);
    assert_eq!(ptx.matches("st.shared.f32").count(), 40);
    assert_eq!(ptx.matches("bar.sync 1, 256;").count(), 1);
    // K and V two slabs each, a stage's Q and dO two each, LSE and D.
    assert_eq!(ptx.matches("cp.async.bulk.tensor.4d").count(), 4 + 4);
    assert_eq!(ptx.matches("cp.async.bulk.tensor.3d").count(), 2);
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for c in [
        cfg,
        cfg.with_varlen(),
        BackwardConfig {
            causal: true,
            ..cfg
        },
    ] {
        let built = build_main(Target::Sm90a, &c).unwrap();
        support::assemble_clean_within(&ptxas, &c.name(), &built, c.smem_bytes());
    }
}

/// The main kernel is a programmatic dependent of the preprocess and the convert kernel of the
/// main one: the preprocess lets it be scheduled (`launch_dependents`), the main kernel's
/// producer and consumers wait for the preprocess (`griddepcontrol.wait`, one each) and the
/// producer lets the convert kernel be scheduled after its last loads, the convert kernel waits.
/// With the causal mask the CTAs are numbered longest first (the kernel differs from the grid's
/// order); without it there is one order.
#[test]
fn the_kernels_are_dependents_and_causal_ctas_start_longest_first() {
    let bf16 = ptxkit::isa::ScalarType::Bf16;
    for causal in [false, true] {
        let cfg = BackwardConfig::new(bf16, 128, causal);
        let main = build_main(Target::Sm90a, &cfg).unwrap().ptx().to_string();
        assert_eq!(main.matches("griddepcontrol.wait").count(), 2);
        assert_eq!(main.matches("griddepcontrol.launch_dependents").count(), 1);
        let pre = build_preprocess(Target::Sm90a, &cfg).unwrap();
        assert_eq!(
            pre.ptx()
                .matches("griddepcontrol.launch_dependents")
                .count(),
            1
        );
        assert!(!pre.ptx().contains("griddepcontrol.wait"));
        let conv = build_convert(Target::Sm90a, &cfg).unwrap();
        assert_eq!(conv.ptx().matches("griddepcontrol.wait").count(), 1);
        assert!(cfg.dependent && !cfg.with_serial_launches().dependent);
        let grid_order = build_main(Target::Sm90a, &cfg.with_in_order()).unwrap();
        assert_eq!(cfg.longest_first(), causal);
        // The same kernel but for its name without the causal mask; with it, its CTA numbering.
        let unnamed = grid_order.ptx().replace("_inorder", "");
        assert_eq!(unnamed == main, !causal);
    }
}

/// The preprocess zeroes and the convert kernel reads `dQ`'s f32 accumulator in 16-byte vectors
/// (8-byte at d64) with no bounds check, a warp's access 512 contiguous bytes (`row_runs`): with
/// the swizzled column's alignment unknown, each run of 4 columns was 4 scalar accesses, 3 of
/// them predicated, and at d256 each sector was written by 8 requests (BENCHMARKS.md, session
/// 19, bwd20). The only scalar f32 stores left are the row statistics, `D` and `LSE · log2 e`
/// (a live and a padding row's, each of a warp's 4 rows).
#[test]
fn the_row_kernels_reach_the_dq_accumulator_in_vectors() {
    let rows = BackwardConfig::ROWS_PER_WARP as usize;
    for d in [64u32, 128, 256] {
        let cfg = BackwardConfig::new(ptxkit::isa::ScalarType::Bf16, d, true);
        let (vector, runs) = match d {
            64 => ("v2.f32", 1),
            _ => ("v4.f32", d as usize / 128),
        };
        let pre = build_preprocess(Target::Sm90a, &cfg).unwrap();
        let conv = build_convert(Target::Sm90a, &cfg).unwrap();
        let count = |ptx: &str, op: &str| ptx.matches(&format!("{op} ")).count();
        // One store (preprocess) and one load (convert) a run.
        let (pre, conv) = (pre.ptx(), conv.ptx());
        let vector_st = count(pre, &format!("st.global.{vector}"));
        let vector_ld = count(conv, &format!("ld.global.{vector}"));
        assert_eq!((vector_st, vector_ld), (rows * runs, rows * runs), "d{d}");
        assert_eq!(count(pre, "st.global.f32"), rows * 4, "d{d}");
        assert_eq!(count(conv, "ld.global.f32"), 0, "d{d}");
    }
}
