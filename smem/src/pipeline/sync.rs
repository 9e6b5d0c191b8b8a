//! The barrier operations a kernel emits through the library, recorded into a
//! [`super::protocol::Protocol`] as they are written: waits, arrivals, `expect_tx`,
//! and the copies that complete on a barrier. [`BarrierSync::finish`] checks the protocol, so a
//! kernel whose byte counts or arrivals cannot work fails to build, naming the barrier.
//!
//! In a debug build ([`WaitMode::Bounded`]) every wait is a bounded loop: `mbarrier.try_wait`
//! with a suspend hint until the phase completes or `%globaltimer` says the bound has passed;
//! then the lowest lane of each warp that gives up writes a [`super::hang`] record (barrier,
//! phase, CTA and cluster coordinates, warp and lane, when it began and how long it waited) into
//! a slot of the buffer the runtime provides, and every thread that gives up executes `trap`
//! after a grace period (so the warps stuck beside it write theirs too). The fast path is the release build's: one
//! `try_wait`, taken when the phase is already complete.
//!
//! ```
//! use ptx_isa::{Module, Target};
//! use smem::pipeline::protocol::BarrierAt;
//! use smem::pipeline::sync::{BarrierSync, WaitMode};
//! let mut m = Module::new(Target::Sm90a);
//! let mut sync = BarrierSync::new("k", WaitMode::Bounded);
//! sync.declare_globals(&mut m)?;
//! let full = sync.declare("full", &[1])?;
//! let mut k = m.entry("k");
//! let bar = k.reg::<ptx_isa::ty::U32>();
//! k.mov(bar, 0u32)?; // the barrier's shared address
//! sync.arrive_expect_tx(&mut k, BarrierAt::One(full, 0), bar, 4096)?;
//! sync.copy(BarrierAt::One(full, 0), 2048); // the copy moves half of what was announced
//! sync.wait(&mut k, BarrierAt::One(full, 0), None, bar, 0u32)?;
//! let e = sync.finish().unwrap_err();
//! assert!(e.to_string().contains("barrier `full`: expect_tx announces 4096 bytes"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ptx_isa::builder::{ArriveOpts, AtomOp, BarrierLevel, CmpOp, WaitOn};
use ptx_isa::{
    Addr, Dim, ErrorKind, FunctionBuilder, Module, Reg, Sinkable, SpecialReg, Src, spaces, ty,
};

use super::hang::{
    HANG_SYMBOL, HangSite, HangSites, RECORD_MAGIC, RECORD_SHIFT, RECORDS, SLOT_BOUND_NS,
    SLOT_BUFFER, SLOT_CLAIM, Word, initial_slots,
};
use super::protocol::{ArrayId, BarrierAt, Protocol, ProtocolError};

/// How the library's waits are emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitMode {
    /// `try_wait` until the phase completes, for ever (release builds).
    Spin,
    /// `try_wait` with a `%globaltimer` bound; on expiry a hang record and `trap` (debug builds).
    Bounded,
}

/// The suspend-time hint of the bounded loop's `try_wait`, in nanoseconds: 10 ms, as CUTLASS's
/// `ClusterBarrier::wait` passes (`0x989680`; PTX ISA 9.7.13.15.16: the thread may be suspended
/// up to this long before `try_wait` returns false).
const SUSPEND_HINT_NS: u32 = 10_000_000;

/// How long a thread that gave up waits before `trap`: 5 suspend hints, so every warp whose
/// wait expires about when this one's did has written its record.
const GRACE_NS: u64 = 5 * SUSPEND_HINT_NS as u64;

/// One wait written so far: where, and which barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Site {
    at: BarrierAt,
}

/// Emits barrier operations and records them into a [`Protocol`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierSync {
    kernel: String,
    mode: WaitMode,
    protocol: Protocol,
    sites: Vec<Site>,
}

impl BarrierSync {
    /// For the kernel `kernel`, with its waits emitted as `mode` says.
    pub fn new(kernel: &str, mode: WaitMode) -> BarrierSync {
        BarrierSync {
            kernel: kernel.to_string(),
            mode,
            protocol: Protocol::new(),
            sites: Vec::new(),
        }
    }

    /// How waits are emitted.
    pub fn mode(&self) -> WaitMode {
        self.mode
    }

    /// The protocol recorded so far.
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// Declares a barrier array (see [`Protocol::declare`]).
    pub fn declare(&mut self, name: &str, counts: &[u32]) -> Result<ArrayId, ProtocolError> {
        self.protocol.declare(name, counts)
    }

    /// In a debug build, declares the module's [`HANG_SYMBOL`] block (no buffer, the default
    /// bound, unclaimed); nothing in a release build.
    pub fn declare_globals(&self, m: &mut Module) -> ptx_isa::Result<()> {
        if self.mode == WaitMode::Bounded {
            // `.visible`: the runtime looks it up by name (`cuModuleGetGlobal`).
            m.global_bytes(
                HANG_SYMBOL,
                8,
                &initial_slots(),
                Some(ptx_isa::module::Linkage::Visible),
            )?;
        }
        Ok(())
    }

    /// `mbarrier.arrive` on the barrier at `addr` (state discarded), standing for `arrivals`
    /// arrivals per phase: the threads that execute it (a guard set on `k` first applies).
    pub fn arrive(
        &mut self,
        k: &mut FunctionBuilder,
        at: BarrierAt,
        addr: Reg<ty::U32>,
        arrivals: u32,
    ) -> ptx_isa::Result<()> {
        k.mbarrier_arrive(Sinkable::Sink, Addr::<spaces::Shared>::reg32(addr))?;
        self.protocol.arrive(at, arrivals);
        Ok(())
    }

    /// One thread's `mbarrier.arrive.expect_tx` of `bytes` on the barrier at `addr`.
    pub fn arrive_expect_tx(
        &mut self,
        k: &mut FunctionBuilder,
        at: BarrierAt,
        addr: Reg<ty::U32>,
        bytes: u32,
    ) -> ptx_isa::Result<()> {
        k.mbarrier_arrive_with(
            &ArriveOpts {
                expect_tx: Some(bytes.into()),
                ..ArriveOpts::default()
            },
            Sinkable::Sink,
            Addr::<spaces::Shared>::reg32(addr),
        )?;
        self.protocol.arrive_expect_tx(at, bytes);
        Ok(())
    }

    /// `mbarrier.expect_tx` of `bytes` on the barrier at `addr`: announces bytes without
    /// arriving (PTX ISA 9.7.13.15.11).
    pub fn expect_tx(
        &mut self,
        k: &mut FunctionBuilder,
        at: BarrierAt,
        addr: Reg<ty::U32>,
        bytes: u32,
    ) -> ptx_isa::Result<()> {
        k.mbarrier_expect_tx(None, Addr::<spaces::Shared>::reg32(addr), bytes)?;
        self.protocol.expect_tx(at, bytes);
        Ok(())
    }

    /// Records a copy (TMA, bulk) completing `bytes` on `at` per phase; the copy itself is
    /// emitted by its tile op.
    pub fn copy(&mut self, at: BarrierAt, bytes: u32) {
        self.protocol.copy(at, bytes);
    }

    /// Records an arrival made by other means (a remote arrive from a peer CTA of the cluster, a
    /// `cp.async.mbarrier.arrive`): `arrivals` per phase.
    pub fn remote_arrive(&mut self, at: BarrierAt, arrivals: u32) {
        self.protocol.arrive(at, arrivals);
    }

    /// Waits until the phase with parity `parity` of the barrier at `addr` completes. `stage`
    /// is the register holding the barrier's index for [`BarrierAt::Each`] (what a hang record
    /// reports); [`BarrierAt::One`] knows its index.
    pub fn wait(
        &mut self,
        k: &mut FunctionBuilder,
        at: BarrierAt,
        stage: Option<Reg<ty::U32>>,
        addr: Reg<ty::U32>,
        parity: impl Into<Src<ty::U32>>,
    ) -> ptx_isa::Result<()> {
        let parity = parity.into();
        let index: Src<ty::U32> = match (at, stage) {
            (BarrierAt::One(_, i), _) => i.into(),
            (BarrierAt::Each(_), Some(r)) => r.into(),
            (BarrierAt::Each(a), None) => {
                return Err(ptx_isa::Error::new(
                    ErrorKind::Invalid,
                    format!(
                        "a wait on every barrier of `{}` needs the register holding the index",
                        self.protocol.array_name(a)
                    ),
                )
                .at_instruction("BarrierSync::wait")
                .in_function(k.name()));
            }
        };
        self.protocol.wait(at);
        let bar = Addr::<spaces::Shared>::reg32(addr);
        match self.mode {
            WaitMode::Spin => k.mbarrier_wait_parity(bar, parity),
            WaitMode::Bounded => {
                let site = self.sites.len() as u32;
                self.sites.push(Site { at });
                let name = self.protocol.name(at.array(), 0).array;
                k.comment(&format!("{}: {name}", HangSite::marker(site)));
                bounded_wait(k, bar, parity, site, index)
            }
        }
    }

    /// Checks the protocol and returns the wait sites (empty in a release build).
    pub fn finish(self) -> Result<HangSites, ProtocolError> {
        self.protocol.check()?;
        Ok(self.finish_unchecked())
    }

    /// The wait sites without the protocol check: for kernels built with a planted bug.
    pub fn finish_unchecked(self) -> HangSites {
        let p = &self.protocol;
        let sites = self
            .sites
            .iter()
            .map(|s| {
                let a = s.at.array();
                let count = match s.at {
                    BarrierAt::One(_, i) => p.init_count(a, i),
                    BarrierAt::Each(_) => p.init_count(a, 0),
                };
                HangSite {
                    array: p.array_name(a).to_string(),
                    indexed: p.is_indexed(a),
                    expect_tx: p.expect_tx_bytes(s.at),
                    arrivals: count,
                    ptx_line: None,
                }
            })
            .collect();
        HangSites {
            kernel: self.kernel,
            sites,
        }
    }
}

/// The bounded wait of a debug build (module docs), for wait site `site`.
fn bounded_wait(
    k: &mut FunctionBuilder,
    bar: Addr<spaces::Shared>,
    parity: Src<ty::U32>,
    site: u32,
    index: Src<ty::U32>,
) -> ptx_isa::Result<()> {
    let (done, give_up, ok) = (k.pred(), k.label(), k.label());
    // Fast path: the phase is already complete.
    k.mbarrier_try_wait(None, done, bar.clone(), WaitOn::Parity(parity), None)?;
    k.when(done).bra(ok)?;
    let (start, now, bound) = (k.reg::<ty::U64>(), k.reg::<ty::U64>(), k.reg::<ty::U64>());
    // %globaltimer: a 64-bit nanosecond timer (PTX ISA 10.28 "Special Registers: %globaltimer").
    k.mov_sreg(start, SpecialReg::GlobalTimer)?;
    k.ld(
        bound,
        Addr::<spaces::Global>::symbol(HANG_SYMBOL).offset(i64::from(SLOT_BOUND_NS)),
    )?;
    let again = k.label();
    k.place(again)?;
    k.mbarrier_try_wait(
        None,
        done,
        bar,
        WaitOn::Parity(parity),
        Some(SUSPEND_HINT_NS.into()),
    )?;
    k.when(done).bra(ok)?;
    k.mov_sreg(now, SpecialReg::GlobalTimer)?;
    k.sub(now, now, start)?;
    let more = k.pred();
    k.setp(CmpOp::Lt, more, now, bound)?;
    k.when(more).bra(again)?;
    write_record(k, site, index, parity, [start, now], give_up)?;
    k.place(give_up)?;
    // A trap ends every thread of the grid at once, so a thread that gave up waits a grace
    // period first: the warps stuck beside it (their waits expire within the suspend hint of
    // each other) get to write their records too. `nanosleep` sleeps at most 1 ms (PTX ISA
    // 9.7.19 "nanosleep").
    let (since, slept) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
    k.mov_sreg(since, SpecialReg::GlobalTimer)?;
    let sleep = k.label();
    k.place(sleep)?;
    k.nanosleep(1_000_000u32)?;
    k.mov_sreg(slept, SpecialReg::GlobalTimer)?;
    k.sub(slept, slept, since)?;
    let sleeping = k.pred();
    k.setp(CmpOp::Lt, sleeping, slept, GRACE_NS)?;
    k.when(sleeping).bra(sleep)?;
    k.trap()?;
    k.place(ok)
}

/// In the lowest active lane of the warp, claims a record slot (none left, or no buffer: skip),
/// writes the record into the runtime's buffer, fences at system scope so the host sees the
/// words before the magic, and branches to `give_up`.
fn write_record(
    k: &mut FunctionBuilder,
    site: u32,
    index: Src<ty::U32>,
    parity: Src<ty::U32>,
    [start, waited]: [Reg<ty::U64>; 2],
    give_up: ptx_isa::Label,
) -> ptx_isa::Result<()> {
    let slots = |off: u32| Addr::<spaces::Global>::symbol(HANG_SYMBOL).offset(i64::from(off));
    // One record per warp: a lane skips it when an active lane below it gives up too (PTX ISA
    // 9.7.13.10 "activemask"; %laneid, 10.3). The CTA and cluster coordinates: 10.6, 10.12.
    let (active, below) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.activemask(active)?;
    let lane = k.sreg_u32(SpecialReg::LaneId)?;
    k.mov(below, 1u32)?;
    k.shl(below, below, lane)?;
    k.sub(below, below, 1u32)?;
    k.and(below, below, active)?;
    let not_lowest = k.pred();
    k.setp(CmpOp::Ne, not_lowest, below, 0u32)?;
    k.when(not_lowest).bra(give_up)?;
    let slot = k.reg::<ty::U32>();
    k.atom(AtomOp::Add, slot, slots(SLOT_CLAIM), 1u32)?;
    let full = k.pred();
    k.setp(CmpOp::Ge, full, slot, RECORDS)?;
    k.when(full).bra(give_up)?;
    let buf = k.reg::<ty::U64>();
    k.ld(buf, slots(SLOT_BUFFER))?;
    let none = k.pred();
    k.setp(CmpOp::Eq, none, buf, 0u64)?;
    k.when(none).bra(give_up)?;
    let offset = k.reg::<ty::U64>();
    k.cvt(offset, slot)?;
    k.shl(offset, offset, RECORD_SHIFT)?;
    k.add(buf, buf, offset)?;
    let at = |w: Word| Addr::<spaces::Global>::reg(buf).offset(i64::from(w.offset()));
    k.st::<_, ty::U32>(at(Word::Site), site)?;
    k.st(at(Word::Index), index)?;
    k.st(at(Word::Parity), parity)?;
    let sregs = [
        (Word::CtaX, SpecialReg::CtaId(Dim::X)),
        (Word::CtaY, SpecialReg::CtaId(Dim::Y)),
        (Word::CtaZ, SpecialReg::CtaId(Dim::Z)),
        (Word::ClusterX, SpecialReg::ClusterId(Dim::X)),
        (Word::ClusterY, SpecialReg::ClusterId(Dim::Y)),
        (Word::ClusterZ, SpecialReg::ClusterId(Dim::Z)),
        (Word::ClusterRank, SpecialReg::ClusterCtaRank),
    ];
    for (w, s) in sregs {
        let r = k.sreg_u32(s)?;
        k.st(at(w), r)?;
    }
    k.st(at(Word::Lane), lane)?;
    // The warp in the CTA: ((tid.z * ntid.y + tid.y) * ntid.x + tid.x) / 32.
    let linear = k.sreg_u32(SpecialReg::Tid(Dim::Z))?;
    let ny = k.sreg_u32(SpecialReg::Ntid(Dim::Y))?;
    let ty_ = k.sreg_u32(SpecialReg::Tid(Dim::Y))?;
    k.mad_lo(linear, linear, ny, ty_)?;
    let nx = k.sreg_u32(SpecialReg::Ntid(Dim::X))?;
    let tx = k.sreg_u32(SpecialReg::Tid(Dim::X))?;
    k.mad_lo(linear, linear, nx, tx)?;
    k.shr(linear, linear, 5u32)?;
    k.st(at(Word::Warp), linear)?;
    for (value, [low_word, high_word]) in [
        (waited, [Word::WaitedLo, Word::WaitedHi]),
        (start, [Word::StartLo, Word::StartHi]),
    ] {
        let (lo, hi, high) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U64>());
        k.cvt(lo, value)?;
        k.shr(high, value, 32u32)?;
        k.cvt(hi, high)?;
        k.st(at(low_word), lo)?;
        k.st(at(high_word), hi)?;
    }
    // The words before the magic, as the host sees them (PTX ISA 9.7.13.4 "membar": .sys orders
    // this thread's writes for every observer, the host included); then the trap (9.7.19).
    k.membar(BarrierLevel::Sys)?;
    k.st::<_, ty::U32>(at(Word::Magic), RECORD_MAGIC)?;
    k.membar(BarrierLevel::Sys)?;
    k.bra(give_up)
}
