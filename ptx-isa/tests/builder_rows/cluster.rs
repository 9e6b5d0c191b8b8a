//! The cluster and control methods choice by choice: `fence.proxy.async` over every state space
//! and `fence.proxy.tensormap` over every scope (PTX ISA 9.7.13.4), `barrier.cluster` over every
//! semantics and `.aligned` (9.7.13.3), `mapa` (9.7.9.24) and `getctarank` (9.7.9.23) over both
//! windows and rank operands, `griddepcontrol` (9.7.13.13), `setmaxnreg` over both directions and
//! counts in and out of range (9.7.19.5), and the control transfers `bra` (9.7.12.2), `exit`
//! (9.7.12.8), `trap` (9.7.19.1) and `nanosleep` (9.7.19.4), each on every target.

use super::*;
use ptx_isa::space::SharedScope;
use ptx_isa::{Reg, Src, StateSpace};

fn fences(t: &mut Tally, target: Target) {
    let spaces = [
        (None, ""),
        (Some(StateSpace::Global), ".global"),
        (
            Some(StateSpace::Shared(SharedScope::Implicit)),
            ".shared::cta",
        ),
        (Some(StateSpace::Shared(SharedScope::Cta)), ".shared::cta"),
        (
            Some(StateSpace::Shared(SharedScope::Cluster)),
            ".shared::cluster",
        ),
        (Some(StateSpace::Local), ".local"),
        (Some(StateSpace::Const), ".const"),
        (Some(StateSpace::Param), ".param"),
    ];
    for (space, ss) in spaces {
        let write = |k: &mut FunctionBuilder| k.fence_proxy_async(space);
        t.judge_spelled(target, &write, &format!("fence.proxy.async{ss};"));
    }
    for (scope, s) in SCOPES {
        let write = |k: &mut FunctionBuilder| k.fence_proxy_tensormap_release(scope);
        let line = format!("fence.proxy.tensormap::generic.release.{s};");
        t.judge_spelled(target, &write, &line);
        let write = |k: &mut FunctionBuilder| {
            let a = Addr::<spaces::Generic>::reg(k.reg::<ty::U64>());
            k.fence_proxy_tensormap_acquire(scope, a)
        };
        let line = format!("fence.proxy.tensormap::generic.acquire.{s} [%rd1], 128;");
        t.judge_spelled(target, &write, &line);
    }
}

fn barriers(t: &mut Tally, target: Target) {
    let sems = [
        (ClusterArrive::Default, ""),
        (ClusterArrive::Release, ".release"),
        (ClusterArrive::Relaxed, ".relaxed"),
    ];
    for aligned in [false, true] {
        let al = if aligned { ".aligned" } else { "" };
        for (sem, ss) in sems {
            let write = |k: &mut FunctionBuilder| k.barrier_cluster_arrive(sem, aligned);
            t.judge_spelled(target, &write, &format!("barrier.cluster.arrive{ss}{al};"));
        }
        for acquire in [false, true] {
            let write = |k: &mut FunctionBuilder| k.barrier_cluster_wait(acquire, aligned);
            let aq = if acquire { ".acquire" } else { "" };
            t.judge_spelled(target, &write, &format!("barrier.cluster.wait{aq}{al};"));
        }
    }
}

fn addressing(t: &mut Tally, target: Target) {
    for imm in [false, true] {
        // The rank operand of both windows: the immediate 1, or the register `r`.
        let rank_of =
            |r: Reg<ty::U32>| -> Src<ty::U32> { if imm { 1u32.into() } else { r.into() } };
        let rank = if imm { "1" } else { "%r3" };
        let write = |k: &mut FunctionBuilder| {
            let (d, a, r) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
            k.mapa_shared(d, a, rank_of(r))
        };
        let line = format!("mapa.shared::cluster.u32 %r1, %r2, {rank};");
        t.judge_spelled(target, &write, &line);
        let write = |k: &mut FunctionBuilder| {
            let (d, a, r) = (k.reg::<ty::U64>(), k.reg::<ty::U64>(), k.reg::<ty::U32>());
            k.mapa_generic(d, a, rank_of(r))
        };
        t.judge_spelled(target, &write, &format!("mapa.u64 %rd1, %rd2, {rank};"));
    }
    let write = |k: &mut FunctionBuilder| {
        let (d, a) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.getctarank_shared(d, a)
    };
    t.judge_spelled(target, &write, "getctarank.shared::cluster.u32 %r1, %r2;");
    let write = |k: &mut FunctionBuilder| {
        let (d, a) = (k.reg::<ty::U32>(), k.reg::<ty::U64>());
        k.getctarank_generic(d, a)
    };
    t.judge_spelled(target, &write, "getctarank.u64 %r1, %rd1;");
}

fn control(t: &mut Tally, target: Target) {
    let write = |k: &mut FunctionBuilder| k.griddepcontrol_wait();
    t.judge_spelled(target, &write, "griddepcontrol.wait;");
    let write = |k: &mut FunctionBuilder| k.griddepcontrol_launch_dependents();
    t.judge_spelled(target, &write, "griddepcontrol.launch_dependents;");
    for inc in [false, true] {
        for n in [0u32, 16, 24, 100, 232, 240, 248, 256] {
            let write = |k: &mut FunctionBuilder| k.setmaxnreg(inc, n);
            let d = if inc { "inc" } else { "dec" };
            let line = format!("setmaxnreg.{d}.sync.aligned.u32 {n};");
            t.judge_spelled(target, &write, &line);
        }
    }
    for uni in [false, true] {
        let write = |k: &mut FunctionBuilder| {
            let l = k.label();
            if uni { k.bra_uni(l) } else { k.bra(l) }?;
            k.place(l)
        };
        let op = if uni { "bra.uni" } else { "bra" };
        t.judge_spelled(target, &write, &format!("{op} $L__0;\n$L__0:"));
    }
    let write = |k: &mut FunctionBuilder| k.exit();
    t.judge_spelled(target, &write, "exit;");
    let write = |k: &mut FunctionBuilder| k.trap();
    t.judge_spelled(target, &write, "trap;");
    for imm in [false, true] {
        let write = |k: &mut FunctionBuilder| {
            let r = k.reg::<ty::U32>();
            if imm {
                k.nanosleep(1000u32)
            } else {
                k.nanosleep(r)
            }
        };
        let line = if imm {
            "nanosleep.u32 1000;"
        } else {
            "nanosleep.u32 %r1;"
        };
        t.judge_spelled(target, &write, line);
    }
}

#[test]
fn cluster_and_control_methods_write_exactly_what_their_rows_allow() {
    let mut t = Tally::default();
    for &target in Target::ALL {
        fences(&mut t, target);
        barriers(&mut t, target);
        addressing(&mut t, target);
        control(&mut t, target);
    }
    t.finish("fence.proxy/barrier.cluster/mapa/getctarank/griddepcontrol/setmaxnreg/bra/exit/trap/nanosleep x choice x target");
}
