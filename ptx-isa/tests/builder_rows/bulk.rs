//! The bulk-copy methods choice by choice: `cp.async.bulk` (PTX ISA 9.7.9.25.4.1) in each direction
//! over multicast, `.cta_group`, cache hint, source window and size, its `.wait_group` over counts
//! and `.read`, `.prefetch` over sizes; the tensor copies (9.7.9.27.1 `cp.async.bulk.tensor`,
//! 9.7.9.27.3 `cp.reduce.async.bulk.tensor`, 9.7.9.27.2 `cp.async.bulk.prefetch.tensor`) over every
//! dimension count (and one too many), tile/im2col, destination and source window, multicast,
//! `.cta_group`, cache hint and reduction; `prefetch.tensormap` (9.7.9.15) through a generic
//! address. Each on sm_80 (refused: no row before sm_90), sm_90a, sm_100a and sm_120a.

use super::*;
use ptx_isa::Src;

/// One choice of load options: multicast (its mask), `.cta_group`, cache hint; the modifiers they
/// spell and the operands they add.
type LoadOpts = (Option<u16>, Option<CtaGroup>, bool, String, String);

/// `.multicast::cluster`, `.cta_group::N` and `.L2::cache_hint` options (each present or not) with
/// their spelling and the operands they add (after the others: `ctaMask`, then `cache-policy`).
fn load_opts() -> Vec<LoadOpts> {
    let mut v = Vec::new();
    for mc in [None, Some(3u16)] {
        for g in [None, Some(CtaGroup::One), Some(CtaGroup::Two)] {
            for hint in [false, true] {
                let mut m = String::new();
                let mut ops = String::new();
                if mc.is_some() {
                    m.push_str(".multicast::cluster");
                    ops.push_str(", %rs1");
                }
                match g {
                    Some(CtaGroup::One) => m.push_str(".cta_group::1"),
                    Some(CtaGroup::Two) => m.push_str(".cta_group::2"),
                    None => {}
                }
                if hint {
                    m.push_str(".L2::cache_hint");
                    ops.push_str(", %rd7");
                }
                v.push((mc, g, hint, m, ops));
            }
        }
    }
    v
}

/// The `TmaLoadOpts` of a choice, on registers of `k`.
fn opts(
    k: &mut FunctionBuilder,
    mc: Option<u16>,
    g: Option<CtaGroup>,
    hint: bool,
) -> TmaLoadOpts<'static> {
    let (m, h) = (k.reg::<ty::U16>(), k.reg::<ty::B64>());
    TmaLoadOpts {
        multicast: mc.map(|_| Src::from(m)),
        cta_group: g,
        cache_hint: hint.then_some(h),
        im2col: None,
    }
}

fn copies(t: &mut Tally, target: Target) {
    for (mc, g, hint, m, ops) in load_opts() {
        for size in [16u32, 24, 0, 4096] {
            let write = |k: &mut FunctionBuilder| {
                let (d, s, b) = (k.reg::<ty::U32>(), k.reg::<ty::U64>(), k.reg::<ty::U32>());
                let o = opts(k, mc, g, hint);
                let (d, b) = (
                    Addr::<spaces::SharedCluster>::reg32(d),
                    Addr::<spaces::SharedCluster>::reg32(b),
                );
                k.cp_async_bulk_load(&o, d, Addr::<spaces::Global>::reg(s), size, b)
            };
            let line = format!(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{m} \
                 [%r1], [%rd1], {size}, [%r2]{ops};"
            );
            t.judge_spelled(target, &write, &line);
        }
    }
    for window in ["shared::cta", "shared::cluster"] {
        for hint in [false, true] {
            let cluster = window == "shared::cluster";
            let write = |k: &mut FunctionBuilder| {
                let (d, s, h) = (k.reg::<ty::U64>(), k.reg::<ty::U32>(), k.reg::<ty::B64>());
                let d = Addr::<spaces::Global>::reg(d);
                if cluster {
                    let s = Addr::<spaces::SharedCluster>::reg32(s);
                    k.cp_async_bulk_store(d, s, 64u32, hint.then_some(h))
                } else {
                    let s = Addr::<spaces::SharedCta>::reg32(s);
                    k.cp_async_bulk_store(d, s, 64u32, hint.then_some(h))
                }
            };
            let (hm, ho) = if hint {
                (".L2::cache_hint", ", %rd7")
            } else {
                ("", "")
            };
            let line =
                format!("cp.async.bulk.global.{window}.bulk_group{hm} [%rd1], [%r1], 64{ho};");
            t.judge_spelled(target, &write, &line);
        }
        for size in [32u32, 8] {
            let cluster = window == "shared::cluster";
            let write = |k: &mut FunctionBuilder| {
                let (d, s, b) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
                let d = Addr::<spaces::SharedCluster>::reg32(d);
                let b = Addr::<spaces::SharedCluster>::reg32(b);
                if cluster {
                    let s = Addr::<spaces::SharedCluster>::reg32(s);
                    k.cp_async_bulk_shared_to_cluster(d, s, size, b)
                } else {
                    let s = Addr::<spaces::Shared>::reg32(s);
                    k.cp_async_bulk_shared_to_cluster(d, s, size, b)
                }
            };
            let line = format!(
                "cp.async.bulk.shared::cluster.{window}.mbarrier::complete_tx::bytes \
                 [%r1], [%r2], {size}, [%r3];"
            );
            t.judge_spelled(target, &write, &line);
        }
    }
    let write = |k: &mut FunctionBuilder| k.cp_async_bulk_commit_group();
    t.judge_spelled(target, &write, "cp.async.bulk.commit_group;");
    for n in [0u32, 1, 7] {
        for read in [false, true] {
            let write = |k: &mut FunctionBuilder| k.cp_async_bulk_wait_group(n, read);
            let r = if read { ".read" } else { "" };
            t.judge_spelled(target, &write, &format!("cp.async.bulk.wait_group{r} {n};"));
        }
    }
    for size in [16u32, 20] {
        let write = |k: &mut FunctionBuilder| {
            let s = Addr::<spaces::Global>::reg(k.reg::<ty::U64>());
            k.cp_async_bulk_prefetch(s, size)
        };
        let line = format!("cp.async.bulk.prefetch.L2.global [%rd1], {size};");
        t.judge_spelled(target, &write, &line);
    }
}

/// `[%rd1, {%r<from>, ...}]`: the tensor operand with `n` coordinates.
fn tensor(n: usize) -> String {
    format!("[%rd1, {}]", regs("r", 10, n))
}

/// `n` coordinate registers of `k`.
fn coords(k: &mut FunctionBuilder, n: usize) -> Vec<Src<ty::S32>> {
    (0..n).map(|_| Src::from(k.reg::<ty::S32>())).collect()
}

fn tensor_loads(t: &mut Tally, target: Target) {
    for (mc, g, hint, m, ops) in load_opts() {
        for dims in 1..=6usize {
            for cta in [false, true] {
                let write = |k: &mut FunctionBuilder| {
                    let map = TensorMapRef::Generic(k.reg::<ty::U64>());
                    let (d, b) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                    let c = coords(k, dims);
                    let o = opts(k, mc, g, hint);
                    if cta {
                        let (d, b) = (
                            Addr::<spaces::SharedCta>::reg32(d),
                            Addr::<spaces::SharedCta>::reg32(b),
                        );
                        k.tma_load(&o, d, &map, &c, b)
                    } else {
                        let (d, b) = (
                            Addr::<spaces::SharedCluster>::reg32(d),
                            Addr::<spaces::SharedCluster>::reg32(b),
                        );
                        k.tma_load(&o, d, &map, &c, b)
                    }
                };
                let w = if cta {
                    "shared::cta"
                } else {
                    "shared::cluster"
                };
                let line = format!(
                    "cp.async.bulk.tensor.{dims}d.{w}.global.tile.mbarrier::complete_tx::bytes{m} \
                     [%r1], {}, [%r2]{ops};",
                    tensor(dims)
                );
                t.judge_spelled(target, &write, &line);
            }
            for offsets in [dims.saturating_sub(2), dims.saturating_sub(1)] {
                let write = |k: &mut FunctionBuilder| {
                    let map = TensorMapRef::Generic(k.reg::<ty::U64>());
                    let (d, b) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                    let c = coords(k, dims);
                    let off: Vec<Src<ty::U16>> = (0..offsets)
                        .map(|_| Src::from(k.reg::<ty::U16>()))
                        .collect();
                    let o = TmaLoadOpts {
                        im2col: Some(&off),
                        ..opts(k, mc, g, hint)
                    };
                    let (d, b) = (
                        Addr::<spaces::SharedCluster>::reg32(d),
                        Addr::<spaces::SharedCluster>::reg32(b),
                    );
                    k.tma_load(&o, d, &map, &c, b)
                };
                let off: Vec<String> = (0..offsets).map(|_| "%rs2".to_string()).collect();
                let line = format!(
                    "cp.async.bulk.tensor.{dims}d.shared::cluster.global.im2col.\
                     mbarrier::complete_tx::bytes{m} [%r1], {}, [%r2], {{{}}}{ops};",
                    tensor(dims),
                    off.join(", ")
                );
                t.judge_spelled(target, &write, &line);
            }
        }
    }
}

fn tensor_stores(t: &mut Tally, target: Target) {
    let ops: [(Option<TmaReduceOp>, &str); 9] = [
        (None, ""),
        (Some(TmaReduceOp::Add), "add"),
        (Some(TmaReduceOp::Min), "min"),
        (Some(TmaReduceOp::Max), "max"),
        (Some(TmaReduceOp::Inc), "inc"),
        (Some(TmaReduceOp::Dec), "dec"),
        (Some(TmaReduceOp::And), "and"),
        (Some(TmaReduceOp::Or), "or"),
        (Some(TmaReduceOp::Xor), "xor"),
    ];
    for (op, os) in ops {
        for dims in 1..=6usize {
            for window in ["shared::cta", "shared::cluster"] {
                for hint in [false, true] {
                    let cluster = window == "shared::cluster";
                    let write = |k: &mut FunctionBuilder| {
                        let map = TensorMapRef::Generic(k.reg::<ty::U64>());
                        let (s, h) = (k.reg::<ty::U32>(), k.reg::<ty::B64>());
                        let c = coords(k, dims);
                        let h = hint.then_some(h);
                        match (op, cluster) {
                            (None, false) => {
                                k.tma_store(&map, &c, Addr::<spaces::SharedCta>::reg32(s), h)
                            }
                            (None, true) => {
                                k.tma_store(&map, &c, Addr::<spaces::SharedCluster>::reg32(s), h)
                            }
                            (Some(op), false) => {
                                k.tma_reduce(op, &map, &c, Addr::<spaces::SharedCta>::reg32(s), h)
                            }
                            (Some(op), true) => k.tma_reduce(
                                op,
                                &map,
                                &c,
                                Addr::<spaces::SharedCluster>::reg32(s),
                                h,
                            ),
                        }
                    };
                    let (hm, ho) = if hint {
                        (".L2::cache_hint", ", %rd7")
                    } else {
                        ("", "")
                    };
                    let (cp, red) = match op {
                        None => ("cp", String::new()),
                        Some(_) => ("cp.reduce", format!(".{os}")),
                    };
                    let line = format!(
                        "{cp}.async.bulk.tensor.{dims}d.global.{window}{red}.tile.bulk_group{hm} \
                         {}, [%r1]{ho};",
                        tensor(dims)
                    );
                    t.judge_spelled(target, &write, &line);
                }
            }
        }
    }
    for dims in 1..=6usize {
        let write = |k: &mut FunctionBuilder| {
            let map = TensorMapRef::Generic(k.reg::<ty::U64>());
            let c = coords(k, dims);
            k.tma_prefetch(&map, &c)
        };
        let line = format!(
            "cp.async.bulk.prefetch.tensor.{dims}d.L2.global.tile {};",
            tensor(dims)
        );
        t.judge_spelled(target, &write, &line);
    }
    let write = |k: &mut FunctionBuilder| {
        let map = TensorMapRef::Generic(k.reg::<ty::U64>());
        k.prefetch_tensormap(&map)
    };
    t.judge_spelled(target, &write, "prefetch.tensormap [%rd1];");
}

#[test]
fn bulk_copies_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    for target in TARGETS {
        copies(&mut t, target);
    }
    t.finish("cp.async.bulk x direction x multicast x cta_group x hint x window x size, wait_group, prefetch");
}

#[test]
fn tensor_copies_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    for target in TARGETS {
        tensor_loads(&mut t, target);
        tensor_stores(&mut t, target);
    }
    t.finish("cp{.reduce}.async.bulk.tensor x dims x tile/im2col x window x multicast x cta_group x hint x op");
}
