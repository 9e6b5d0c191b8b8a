//! `BarrierSync`: a producer/consumer ring written through it checks its protocol at build time,
//! and its debug build (bounded waits writing a hang record) assembles with ptxas for sm_90a.

mod support;

use ptx_isa::builder::CmpOp;
use ptx_isa::{Module, SpecialReg, Target, ty};
use smem::pipeline::hang::{HANG_SYMBOL, HangSites};
use smem::pipeline::protocol::{BarrierAt, ProtocolError};
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier, WaitMode};
use support::assemble;

/// What to get wrong.
#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// The producer announces 1 KB more than the copy moves.
    ExpectTx,
    /// Only one of the two consumer warps releases the stage.
    MissingArrive,
}

/// A 2-stage ring: warp 0 lane 0 produces (waits `empty[s]`, arms `full[s]` for 4 KB, a copy of
/// 4 KB completes on it), warps 1 and 2 consume (wait `full[s]`, lane 0 of each arrives on
/// `empty[s]`). The copy is recorded, not emitted: what matters here is the barrier traffic.
fn ring(mode: WaitMode, bug: Bug) -> (Module, Result<HangSites, ProtocolError>) {
    let mut m = Module::new(Target::Sm90a);
    let mut sync = BarrierSync::new("ring", mode);
    sync.declare_globals(&mut m).unwrap();
    m.shared("bars", 8, 32).unwrap();
    let full = sync.declare("full", &[1, 1]).unwrap();
    let empty = sync.declare("empty", &[2, 2]).unwrap();
    let mut k = m.entry("ring");
    let tid = k.sreg_u32(SpecialReg::Tid(ptx_isa::Dim::X)).unwrap();
    let base = k.reg::<ty::U32>();
    k.mov_shared_addr(base, "bars").unwrap();
    let (stage, phase) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.mov(stage, 0u32).unwrap();
    k.mov(phase, 0u32).unwrap();
    let (full_at, empty_at) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.mad_lo(full_at, stage, 8u32, base).unwrap();
    k.add(empty_at, full_at, 16u32).unwrap();
    let warp = k.reg::<ty::U32>();
    k.shr(warp, tid, 5u32).unwrap();
    let producer = k.pred();
    k.setp(CmpOp::Eq, producer, warp, 0u32).unwrap();
    let (consumer, end) = (k.label(), k.label());
    k.unless(producer).bra(consumer).unwrap();
    let want = k.reg::<ty::U32>();
    k.xor(want, phase, 1u32).unwrap();
    sync.wait(&mut k, BarrierAt::Each(empty), Some(stage), empty_at, want)
        .unwrap();
    let tx = if bug == Bug::ExpectTx { 5120 } else { 4096 };
    let full_bar = NamedBarrier {
        at: BarrierAt::Each(full),
        addr: full_at,
    };
    sync.arrive(&mut k, full_bar, Arrival::ExpectTx(tx), ArriveSite::Loop)
        .unwrap();
    sync.copy(BarrierAt::Each(full), 4096);
    k.bra(end).unwrap();
    k.place(consumer).unwrap();
    sync.wait(&mut k, BarrierAt::Each(full), Some(stage), full_at, phase)
        .unwrap();
    let lane0 = k.pred();
    let lane = k.sreg_u32(SpecialReg::LaneId).unwrap();
    k.setp(CmpOp::Eq, lane0, lane, 0u32).unwrap();
    let arrivals = if bug == Bug::MissingArrive { 1 } else { 2 };
    let empty_bar = NamedBarrier {
        at: BarrierAt::Each(empty),
        addr: empty_at,
    };
    let arrival = Arrival::Count(arrivals);
    sync.arrive(k.when(lane0), empty_bar, arrival, ArriveSite::Loop)
        .unwrap();
    k.place(end).unwrap();
    k.ret().unwrap();
    m.add(k.finish().unwrap()).unwrap();
    (m, sync.finish())
}

#[test]
fn a_correct_ring_builds_in_both_modes() {
    let (m, sites) = ring(WaitMode::Spin, Bug::None);
    assert!(sites.unwrap().sites.is_empty());
    let text = m.to_ptx().unwrap();
    assert!(
        !text.contains(HANG_SYMBOL) && !text.contains("globaltimer"),
        "{text}"
    );
    assemble(&m);

    let (m, sites) = ring(WaitMode::Bounded, Bug::None);
    let mut sites = sites.unwrap();
    let text = m.to_ptx().unwrap();
    sites.locate(&text);
    assert_eq!(sites.sites.len(), 2);
    assert_eq!(
        (
            sites.sites[0].array.as_str(),
            sites.sites[0].expect_tx,
            sites.sites[0].arrivals
        ),
        ("empty", 0, 2)
    );
    assert_eq!(
        (
            sites.sites[1].array.as_str(),
            sites.sites[1].expect_tx,
            sites.sites[1].arrivals
        ),
        ("full", 4096, 1)
    );
    let lines: Vec<&str> = text.lines().collect();
    for s in &sites.sites {
        let line = s.ptx_line.unwrap();
        assert!(
            lines[line - 1].contains("mbarrier.try_wait.parity"),
            "{}",
            lines[line - 1]
        );
    }
    for want in [
        ".visible .global .align 8 .b8 ptxkit_hang[24] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 148, 53, 119,",
        "mov.u64 %rd0, %globaltimer;",
        "ld.global.u64 %rd2, [ptxkit_hang+8];",
        ", 0x989680;",
        "activemask.b32",
        "atom.global.add.u32 %r11, [ptxkit_hang+16], 1;",
        "setp.ge.u32 %p4, %r11, 16;",
        "shl.b64 %rd4, %rd4, 7;",
        "%clusterid.x;",
        "membar.sys;",
        "st.global.u32 [%rd3], 0x474E4148;",
        "trap;",
    ] {
        assert!(text.contains(want), "{want} not in\n{text}");
    }
    assemble(&m);
}

#[test]
fn protocol_errors_name_the_barrier() {
    for mode in [WaitMode::Spin, WaitMode::Bounded] {
        let (m, e) = ring(mode, Bug::ExpectTx);
        assert_eq!(
            e.unwrap_err().to_string(),
            "barrier `full[0]`: expect_tx announces 5120 bytes per phase, the copies completing \
             on it deliver 4096"
        );
        assemble(&m); // the PTX is fine; the protocol is not
        let (_, e) = ring(mode, Bug::MissingArrive);
        assert!(matches!(
            e,
            Err(ProtocolError::ArrivalsShort { ref barrier, count: 2, arrivals: 1 })
                if barrier.to_string() == "empty[0]"
        ));
    }
}
