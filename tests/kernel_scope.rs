//! Scope ids: their extents make the grid, block and cluster; launch bounds follow the thread
//! extent; extents that disagree are errors; every kernel that builds assembles.

mod support;

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{Expr, KernelBuilder, KernelError};

fn scope_err(e: KernelError, want: &str) {
    assert!(matches!(e, KernelError::Scope { .. }), "{e}");
    assert!(e.to_string().contains(want), "`{e}` lacks `{want}`");
}

#[test]
fn extents_make_the_launch_and_launch_bounds() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let [_bx, _by] = k.cta_id([8, 4]).unwrap();
    let [_tx, _ty] = k.thread_id([32, 4]).unwrap();
    let w = k.warp_id([4]).unwrap();
    let l = k.lane_id([32]).unwrap();
    k.min_blocks_per_sm(2).unwrap();
    let i = k.eval(w * 32 + l).unwrap();
    let _ = i;
    let b = k.finish().unwrap();
    let s = b.launch_spec();
    assert_eq!(s.block, [32, 4, 1]);
    assert_eq!(
        s.grid.each_ref().map(|e| e.as_const()),
        [Some(8), Some(4), Some(1)]
    );
    assert!(b.ptx().contains(".maxntid 32, 4, 1"), "{}", b.ptx());
    assert!(b.ptx().contains(".minnctapersm 2"), "{}", b.ptx());
    // the flat thread id of a 2-D block: tid.x + tid.y * 32, then / 32 as a shift.
    assert!(b.ptx().contains("%tid.y"));
    assert!(b.ptx().contains("%laneid"));
    assert!(b.ptx().contains("shr.u32"));
    support::assemble(b.ptx(), Target::Sm90a);
}

#[test]
fn warps_alone_make_the_block() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let wg = k.warpgroup_id([2]).unwrap();
    let w = k.warp_id_in_wg([4]).unwrap();
    let warp = k.warp_id([8]).unwrap();
    let _ = k.eval(wg * 4 + w + warp).unwrap();
    let b = k.finish().unwrap();
    assert_eq!(b.launch_spec().block, [256, 1, 1]);
    support::assemble(b.ptx(), Target::Sm90a);
}

#[test]
fn inconsistent_extents_are_errors() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.thread_id([128]).unwrap();
    scope_err(k.thread_id([64]).unwrap_err(), "disagree");
    scope_err(
        k.warp_id([8]).unwrap_err(),
        "thread_id said [128, 1, 1] = 128",
    );
    scope_err(k.lane_id([16]).unwrap_err(), "32 lanes");
    scope_err(k.warp_id_in_wg([2]).unwrap_err(), "4 warps");
    k.cta_id([10]).unwrap();
    scope_err(k.cta_id([11]).unwrap_err(), "disagree");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.warp_id([2]).unwrap();
    scope_err(k.warpgroup_id([1]).unwrap_err(), "warp_id said 64");
    scope_err(k.thread_id([32, 2]).unwrap_err(), "state thread_id first");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    scope_err(k.thread_id([2048]).unwrap_err(), "2048 threads");
    scope_err(k.thread_id([1, 1, 128]).unwrap_err(), "z at most 64");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.warp_id_in_wg([4]).unwrap();
    k.thread_id([96]).unwrap();
    scope_err(k.finish().unwrap_err(), "whole warpgroups");

    let k = KernelBuilder::new("k", Target::Sm90a);
    scope_err(k.finish().unwrap_err(), "no thread extent");
}

#[test]
fn grid_extents_must_be_known_on_the_host() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let [tx] = k.thread_id([32]).unwrap();
    scope_err(k.cta_id([tx]).unwrap_err(), "does not know at launch");
    scope_err(k.cta_id([0]).unwrap_err(), "not positive");
}

#[test]
fn clusters() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    let [_c] = k.cluster_id([6]).unwrap();
    let [_r] = k.cta_id_in_cluster([2], Some([4])).unwrap();
    k.cta_id([12]).unwrap();
    k.thread_id([64]).unwrap();
    let b = k.finish().unwrap();
    let s = b.launch_spec();
    assert_eq!(s.cluster, Some([2, 1, 1]));
    assert_eq!(s.preferred_cluster, Some([4, 1, 1]));
    assert_eq!(s.grid[0], Expr::Const(12));
    let cfg = b.launch_config(&Default::default()).unwrap();
    assert_eq!(cfg.preferred_cluster, Some([4, 1, 1]));
    support::assemble(b.ptx(), Target::Sm90a);

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.cluster_id([6]).unwrap();
    k.cta_id_in_cluster([2], None).unwrap();
    k.cta_id([10]).unwrap();
    k.thread_id([64]).unwrap();
    scope_err(k.finish().unwrap_err(), "cluster_id x cta_id_in_cluster");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.cta_id_in_cluster([4], None).unwrap();
    k.cta_id([6]).unwrap();
    k.thread_id([64]).unwrap();
    scope_err(k.finish().unwrap_err(), "whole number of clusters");

    let mut k = KernelBuilder::new("k", Target::Sm90a);
    scope_err(
        k.cta_id_in_cluster([2], Some([3])).unwrap_err(),
        "not a multiple",
    );
    scope_err(k.cta_id_in_cluster([4, 4, 2], None).unwrap_err(), "32 CTAs");
}

#[test]
fn parameters_only_at_top_level() {
    let mut k = KernelBuilder::new("k", Target::Sm90a);
    k.thread_id([32]).unwrap();
    let e = k
        .for_range(0, 4, |k, _| {
            k.scalar::<ty::F32>("s")?;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(e, KernelError::Param { .. }), "{e}");
}
