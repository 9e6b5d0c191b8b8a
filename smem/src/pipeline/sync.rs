//! The barrier operations a kernel emits through the library, recorded into a
//! [`super::protocol::Protocol`] as they are written: waits, arrivals, `expect_tx`,
//! and the copies that complete on a barrier. [`BarrierSync::finish`] checks the protocol, so a
//! kernel whose byte counts or arrivals cannot work fails to build, naming the barrier.
//!
//! In a debug build ([`WaitMode::Bounded`]) every wait is a bounded loop: `mbarrier.try_wait`
//! with a suspend hint until the phase completes or `%globaltimer` says the bound has passed;
//! then the lowest lane of each warp that gives up writes a [`super::hang`] record (barrier,
//! phase, CTA and cluster coordinates, warp and lane, when it began and how long it waited, the
//! trips its thread completed where the kernel counts them ([`BarrierSync::count_trips`]), the
//! phase the barrier is observed in) into
//! a slot of the buffer the runtime provides, and every thread that gives up executes `trap`
//! after a grace period (so the warps stuck beside it write theirs too). The fast path is the release build's: one
//! `try_wait`, taken when the phase is already complete.
//!
//! ```
//! use ptx_isa::{Module, Target};
//! use smem::pipeline::protocol::BarrierAt;
//! use smem::pipeline::sync::{Arrival, BarrierSync, NamedBarrier, ArriveSite, WaitMode};
//! let mut m = Module::new(Target::Sm90a);
//! let mut sync = BarrierSync::new("k", WaitMode::Bounded);
//! sync.declare_globals(&mut m)?;
//! let full = sync.declare("full", &[1])?;
//! let mut k = m.entry("k");
//! let bar = k.reg::<ptx_isa::ty::U32>();
//! k.mov(bar, 0u32)?; // the barrier's shared address
//! let named = NamedBarrier { at: BarrierAt::One(full, 0), addr: bar };
//! sync.arrive(&mut k, named, Arrival::ExpectTx(4096), ArriveSite::Loop)?;
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
    HANG_SYMBOL, HangSite, HangSites, OBSERVED_PARITY0_DONE, OBSERVED_PARITY1_DONE, OBSERVED_VALID,
    PROGRESS_UNCOUNTED, RECORD_MAGIC, RECORD_SHIFT, RECORDS, SLOT_BOUND_NS, SLOT_BUFFER,
    SLOT_CLAIM, Word, initial_slots,
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

/// One wait written so far: which barrier, and what the waiting thread does after it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Site {
    at: BarrierAt,
    /// The arrays arrived on, armed or copied onto after this wait and before the next one
    /// (whether bytes were announced), in order, each once.
    then: Vec<(ArrayId, bool)>,
}

/// A named barrier: its place in a [`BarrierSync`]'s protocol (array and index, hence its
/// name, its init count and the bytes announced on it) and its shared address. The tile ops
/// that complete on an mbarrier (TMA and bulk loads) take one, so the bytes they deliver are
/// recorded against its name, and waits and arrivals on it go through [`BarrierSync`] like the
/// pipeline's (bounded in a debug build).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NamedBarrier {
    /// Which barrier of which declared array.
    pub at: BarrierAt,
    /// Its shared address (`.shared::cta`, or a peer's through `mapa` for a copy that completes
    /// on the peer's barrier of the same name).
    pub addr: Reg<ty::U32>,
}

/// What one `mbarrier.arrive` of [`BarrierSync::arrive`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// `mbarrier.arrive` (state discarded) standing for this many arrivals per phase: the
    /// threads that execute it (a guard set on `k` first applies).
    Count(u32),
    /// One thread's `mbarrier.arrive.expect_tx` of this many bytes: one arrival, the bytes
    /// announced for the copies it is followed by.
    ExpectTx(u32),
}

/// Where an arrival of [`BarrierSync::arrive`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArriveSite {
    /// In the loop (or straight-line code) whose phases it arrives in.
    Loop,
    /// Peeled out of a loop: the same arrival as a loop's site in the phases of its first or
    /// last iteration ([`Protocol::arrive_peeled`]).
    Peeled,
}

/// Emits barrier operations and records them into a [`Protocol`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierSync {
    kernel: String,
    mode: WaitMode,
    protocol: Protocol,
    sites: Vec<Site>,
    /// Where a debug build's records read the thread's trip, between `count_trips` (or
    /// `count_laps`) and `end_trips`.
    progress: Option<Trips>,
}

/// Where a debug build's hang records read the waiting thread's trip round the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trips {
    /// A counter of [`BarrierSync`]'s own, one more after each completed wait.
    Counter(Reg<ty::U32>),
    /// The kernel's count of laps round the ring: trip = laps * stages + stage.
    Laps(Reg<ty::U32>),
}

impl BarrierSync {
    /// For the kernel `kernel`, with its waits emitted as `mode` says.
    pub fn new(kernel: &str, mode: WaitMode) -> BarrierSync {
        BarrierSync {
            kernel: kernel.to_string(),
            mode,
            protocol: Protocol::new(),
            sites: Vec::new(),
            progress: None,
        }
    }

    /// Counts the trips of the role whose code follows, in a debug build: zeroes a counter
    /// here, and each wait emitted until [`BarrierSync::end_trips`] adds one to it when it
    /// completes; their hang records carry it. Call it where the role's loop begins, in the
    /// threads that run it. The diagnosis needs the producer's trips (the thread that announces
    /// bytes); a consumer's follow from them and from its stage and parity, so a
    /// register-bound consumer need not pay for a counter. Nothing in a release build.
    pub fn count_trips(&mut self, k: &mut FunctionBuilder) -> ptx_isa::Result<()> {
        if self.mode == WaitMode::Bounded {
            let r = k.reg::<ty::U32>();
            k.mov(r, 0u32)?;
            self.progress = Some(Trips::Counter(r));
        }
        Ok(())
    }

    /// Like [`BarrierSync::count_trips`], for a role that keeps its laps round the ring in a
    /// register (`laps`, its parity bit being `laps & 1`) and waits on `BarrierAt::Each` with the
    /// stage in a register: a record's trip is `laps * stages + stage`, computed only when a wait
    /// gives up, so counting costs no register (the GEMM's producer runs in 24).
    pub fn count_laps(&mut self, laps: Reg<ty::U32>) {
        if self.mode == WaitMode::Bounded {
            self.progress = Some(Trips::Laps(laps));
        }
    }

    /// Ends [`BarrierSync::count_trips`] or [`BarrierSync::count_laps`]: the waits emitted after
    /// it are not counted.
    pub fn end_trips(&mut self) {
        self.progress = None;
    }

    /// Notes that the thread of the latest wait site acts on `at` after it.
    fn then(&mut self, at: BarrierAt, tx: bool) {
        if let Some(site) = self.sites.last_mut() {
            let a = at.array();
            match site.then.iter_mut().find(|(b, _)| *b == a) {
                Some((_, t)) => *t |= tx,
                None => site.then.push((a, tx)),
            }
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

    /// Declares a pool's barrier array under the short name `name` (see
    /// [`Protocol::declare_pool_array`]): its init counts are the array's own.
    pub fn declare_pool_array(
        &mut self,
        name: &str,
        barriers: &crate::mbarrier::MbarrierArray,
    ) -> Result<ArrayId, ProtocolError> {
        self.protocol.declare_pool_array(name, barriers)
    }

    /// Declares a single barrier `name` expecting `arrivals` per phase, at `addr`.
    pub fn declare_one(
        &mut self,
        name: &str,
        arrivals: u32,
        addr: Reg<ty::U32>,
    ) -> Result<NamedBarrier, ProtocolError> {
        let array = self.protocol.declare(name, &[arrivals])?;
        Ok(NamedBarrier {
            at: BarrierAt::One(array, 0),
            addr,
        })
    }

    /// `mbarrier.init` of a single barrier with the arrival count it was declared with (PTX
    /// ISA 9.7.13.15.9), so the count lives in one place. A barrier of a ring
    /// ([`BarrierAt::Each`]) is initialised per stage by its owner.
    pub fn init(&mut self, k: &mut FunctionBuilder, bar: NamedBarrier) -> ptx_isa::Result<()> {
        let BarrierAt::One(array, i) = bar.at else {
            return Err(ptx_isa::Error::new(
                ErrorKind::Invalid,
                format!(
                    "BarrierSync::init initialises one barrier; `{}` names every barrier of \
                     its array",
                    self.protocol.array_name(bar.at.array())
                ),
            )
            .at_instruction("BarrierSync::init")
            .in_function(k.name()));
        };
        let count = self.protocol.init_count(array, i);
        k.mbarrier_init(Addr::<spaces::Shared>::reg32(bar.addr), count)
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

    /// `mbarrier.arrive` on `bar` as `arrival` says, recorded as an arrival of a loop's site
    /// or, [`ArriveSite::Peeled`], of a peeled one: the same arrival as a loop's site in the phases of
    /// the loop's first or last iteration, written out of the loop (see
    /// [`Protocol::arrive_peeled`]; the check requires equal counts).
    pub fn arrive(
        &mut self,
        k: &mut FunctionBuilder,
        bar: NamedBarrier,
        arrival: Arrival,
        site: ArriveSite,
    ) -> ptx_isa::Result<()> {
        let at = Addr::<spaces::Shared>::reg32(bar.addr);
        let (arrivals, tx) = match arrival {
            Arrival::Count(arrivals) => {
                k.mbarrier_arrive(Sinkable::Sink, at)?;
                (arrivals, false)
            }
            Arrival::ExpectTx(bytes) => {
                let opts = ArriveOpts {
                    expect_tx: Some(bytes.into()),
                    ..ArriveOpts::default()
                };
                k.mbarrier_arrive_with(&opts, Sinkable::Sink, at)?;
                self.protocol.expect_tx(bar.at, bytes);
                (1, true)
            }
        };
        match site {
            ArriveSite::Loop => self.protocol.arrive(bar.at, arrivals),
            ArriveSite::Peeled => self.protocol.arrive_peeled(bar.at, arrivals),
        }
        self.then(bar.at, tx);
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
        self.then(at, true);
        Ok(())
    }

    /// Records a copy (TMA, bulk) completing `bytes` on `at` per phase; the copy itself is
    /// emitted by its tile op.
    pub fn copy(&mut self, at: BarrierAt, bytes: u32) {
        self.protocol.copy(at, bytes);
        self.then(at, false);
    }

    /// Records an arrival made by other means (a remote arrive from a peer CTA of the cluster, a
    /// `cp.async.mbarrier.arrive`): `arrivals` per phase.
    pub fn remote_arrive(&mut self, at: BarrierAt, arrivals: u32) {
        self.protocol.arrive(at, arrivals);
        self.then(at, false);
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
        let bar = Addr::<spaces::Shared>::reg32(addr);
        self.protocol.wait(at);
        let site = self.sites.len() as u32;
        self.sites.push(Site {
            at,
            then: Vec::new(),
        });
        match self.mode {
            WaitMode::Spin => k.mbarrier_wait_parity(bar, parity),
            WaitMode::Bounded => {
                let (progress, stages) = (self.progress, self.protocol.len(at.array()));
                let name = self.protocol.name(at.array(), 0).array;
                k.comment(&format!("{}: {name}", HangSite::marker(site)));
                bounded_wait(
                    k,
                    bar,
                    parity,
                    Record {
                        site,
                        index,
                        progress,
                        stages,
                    },
                )
            }
        }
    }

    /// Checks the protocol and returns the wait sites (empty in a release build).
    pub fn finish(self) -> Result<HangSites, ProtocolError> {
        self.protocol.check()?;
        Ok(self.finish_unchecked())
    }

    /// The wait sites without the protocol check: for kernels built with a planted bug. A
    /// release build has none (its waits write no records).
    pub fn finish_unchecked(self) -> HangSites {
        let p = &self.protocol;
        let sites = match self.mode {
            WaitMode::Spin => Vec::new(),
            WaitMode::Bounded => self.sites.iter().map(|s| site_facts(p, s)).collect(),
        };
        HangSites {
            kernel: self.kernel,
            sites,
        }
    }
}

/// The protocol facts of one wait site.
fn site_facts(p: &Protocol, s: &Site) -> HangSite {
    let a = s.at.array();
    let count = match s.at {
        BarrierAt::One(_, i) => p.init_count(a, i),
        BarrierAt::Each(_) => p.init_count(a, 0),
    };
    HangSite {
        array: p.array_name(a).to_string(),
        indexed: p.is_indexed(a),
        stages: p.len(a),
        expect_tx: p.expect_tx_bytes(s.at),
        copied: p.copied_bytes(s.at),
        arrivals: count,
        arrive_ops: p.arrivals(s.at),
        then: s
            .then
            .iter()
            .map(|&(b, _)| p.array_name(b).to_string())
            .collect(),
        then_tx: s.then.iter().any(|&(_, tx)| tx),
        ptx_line: None,
    }
}

/// What a bounded wait's record names besides the barrier: the site, the barrier's index, where
/// the thread's trip is read if it is counted, and the barriers in the array.
#[derive(Debug, Clone, Copy)]
struct Record {
    site: u32,
    index: Src<ty::U32>,
    progress: Option<Trips>,
    stages: u32,
}

/// The bounded wait of a debug build (module docs), for the record `rec` names.
fn bounded_wait(
    k: &mut FunctionBuilder,
    bar: Addr<spaces::Shared>,
    parity: Src<ty::U32>,
    rec: Record,
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
        bar.clone(),
        WaitOn::Parity(parity),
        Some(SUSPEND_HINT_NS.into()),
    )?;
    k.when(done).bra(ok)?;
    k.mov_sreg(now, SpecialReg::GlobalTimer)?;
    k.sub(now, now, start)?;
    let more = k.pred();
    k.setp(CmpOp::Lt, more, now, bound)?;
    k.when(more).bra(again)?;
    write_record(k, &bar, rec, parity, [start, now], give_up)?;
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
    k.place(ok)?;
    match rec.progress {
        Some(Trips::Counter(p)) => k.add(p, p, 1u32),
        Some(Trips::Laps(_)) | None => Ok(()),
    }
}

/// In the lowest active lane of the warp, claims a record slot (none left, or no buffer: skip),
/// writes the record into the runtime's buffer, fences at system scope so the host sees the
/// words before the magic, and branches to `give_up`.
fn write_record(
    k: &mut FunctionBuilder,
    bar: &Addr<spaces::Shared>,
    Record {
        site,
        index,
        progress,
        stages,
    }: Record,
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
    match progress {
        Some(Trips::Counter(p)) => k.st(at(Word::Progress), p)?,
        Some(Trips::Laps(laps)) => {
            let trip = k.reg::<ty::U32>();
            k.mad_lo(trip, laps, stages, index)?;
            k.st(at(Word::Progress), trip)?;
        }
        None => k.st::<_, ty::U32>(at(Word::Progress), PROGRESS_UNCOUNTED)?,
    }
    // The barrier's phase now: `test_wait.parity` is true when the phase of that parity has
    // completed, that is when the current phase has the other parity (PTX ISA 9.7.13.15.16
    // "mbarrier.test_wait/try_wait": "phaseParity ... the parity of the current or the
    // immediately preceding phase"). The pending counts are not readable: the object is opaque
    // (9.7.13.15.1) and `mbarrier.pending_count` reads only an arrive's state token (9.7.13.15.17).
    let observed = k.reg::<ty::U32>();
    k.mov(observed, OBSERVED_VALID)?;
    for (p, bit) in [(0u32, OBSERVED_PARITY0_DONE), (1, OBSERVED_PARITY1_DONE)] {
        let done = k.pred();
        k.mbarrier_test_wait(None, done, bar.clone(), WaitOn::Parity(p.into()))?;
        k.when(done).or(observed, observed, bit)?;
    }
    k.st(at(Word::Observed), observed)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_isa::Target;

    /// A two-stage ring's producer and consumer, as the planted-bug kernel writes them.
    fn ring(mode: WaitMode, count: bool) -> ptx_isa::Result<(BarrierSync, String)> {
        let mut m = Module::new(Target::Sm90a);
        let mut sync = BarrierSync::new("k", mode);
        sync.declare_globals(&mut m)?;
        let full = sync.declare("full", &[1, 1]).unwrap();
        let empty = sync.declare("empty", &[2, 2]).unwrap();
        let mut k = m.entry("k");
        let (stage, bar, parity) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.mov(stage, 0u32)?;
        k.mov(bar, 0u32)?;
        k.mov(parity, 1u32)?;
        if count {
            sync.count_trips(&mut k)?;
        }
        sync.wait(&mut k, BarrierAt::Each(empty), Some(stage), bar, parity)?;
        let full_bar = NamedBarrier {
            at: BarrierAt::Each(full),
            addr: bar,
        };
        sync.arrive(&mut k, full_bar, Arrival::ExpectTx(4096), ArriveSite::Loop)?;
        sync.copy(BarrierAt::Each(full), 4096);
        sync.end_trips();
        sync.wait(&mut k, BarrierAt::Each(full), Some(stage), bar, parity)?;
        let empty_bar = NamedBarrier {
            at: BarrierAt::Each(empty),
            addr: bar,
        };
        sync.arrive(&mut k, empty_bar, Arrival::Count(2), ArriveSite::Loop)?;
        m.add(k.finish()?)?;
        let ptx = m.to_ptx()?;
        Ok((sync, ptx))
    }

    #[test]
    fn sites_know_who_arrives_after_them() {
        let (sync, ptx) = ring(WaitMode::Bounded, true).unwrap();
        let sites = sync.finish().unwrap();
        let [producer, consumer] = &sites.sites[..] else {
            panic!("two sites: {sites:?}")
        };
        assert_eq!(
            (producer.array.as_str(), &producer.then, producer.then_tx),
            ("empty", &vec!["full".to_string()], true)
        );
        assert_eq!(
            (producer.stages, producer.arrivals, producer.arrive_ops),
            (2, 2, 2)
        );
        assert_eq!(
            (consumer.array.as_str(), &consumer.then, consumer.then_tx),
            ("full", &vec!["empty".to_string()], false)
        );
        assert_eq!((consumer.expect_tx, consumer.copied), (4096, 4096));
        // The record holds the observed phase (two test_waits per site) and the producer's trips
        // (counted; the consumer's wait stores "uncounted").
        assert_eq!(ptx.matches("mbarrier.test_wait.parity").count(), 4, "{ptx}");
        let adds = |ptx: &str| {
            ptx.lines()
                .filter(|l| l.trim_start().starts_with("add.u32"))
                .count()
        };
        assert_eq!(adds(&ptx), 1, "{ptx}");
        let uncounted = format!("+{}], 0x{PROGRESS_UNCOUNTED:X};", Word::Progress.offset());
        assert_eq!(ptx.matches(&uncounted).count(), 1, "{ptx}");
        let (_, uncounted) = ring(WaitMode::Bounded, false).unwrap();
        assert_eq!(adds(&uncounted), 0, "{uncounted}");
    }

    #[test]
    fn laps_give_the_trip_where_a_wait_gives_up() {
        let mut m = Module::new(Target::Sm90a);
        let mut sync = BarrierSync::new("k", WaitMode::Bounded);
        sync.declare_globals(&mut m).unwrap();
        let empty = sync.declare("empty", &[2, 2, 2]).unwrap();
        let mut k = m.entry("k");
        let (stage, bar, laps) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
        for r in [stage, bar, laps] {
            k.mov(r, 0u32).unwrap();
        }
        sync.count_laps(laps);
        sync.wait(&mut k, BarrierAt::Each(empty), Some(stage), bar, laps)
            .unwrap();
        m.add(k.finish().unwrap()).unwrap();
        let ptx = m.to_ptx().unwrap();
        // trip = laps * 3 + stage, only on the give-up path; no counter is kept.
        let tail = format!(", {}, 3, {};", laps.as_ref(), stage.as_ref());
        assert!(
            ptx.lines()
                .any(|l| l.trim_start().starts_with("mad.lo.u32") && l.ends_with(&tail)),
            "{ptx}"
        );
        assert!(!ptx.lines().any(|l| l.trim_start().starts_with("add.u32")));
    }

    #[test]
    fn a_release_build_has_no_sites() {
        let (sync, ptx) = ring(WaitMode::Spin, true).unwrap();
        assert!(!ptx.contains("test_wait"), "{ptx}");
        assert!(sync.finish().unwrap().sites.is_empty());
    }

    #[test]
    fn a_single_barrier_is_initialised_with_its_declared_count() {
        let mut m = Module::new(Target::Sm90a);
        let mut sync = BarrierSync::new("k", WaitMode::Spin);
        let mut k = m.entry("k");
        let addr = k.reg::<ty::U32>();
        k.mov(addr, 0u32).unwrap();
        let done = sync.declare_one("done", 3, addr).unwrap();
        assert_eq!(done.at, BarrierAt::One(done.at.array(), 0));
        sync.init(&mut k, done).unwrap();
        // A ring's barriers are initialised per stage by their owner, not here.
        let ring = sync.declare("full", &[1, 1]).unwrap();
        let each = NamedBarrier {
            at: BarrierAt::Each(ring),
            addr,
        };
        let e = sync.init(&mut k, each).unwrap_err().to_string();
        assert!(e.contains("`full` names every barrier of its array"), "{e}");
        // A second array of the same name is refused, naming it.
        assert!(sync.declare_one("done", 1, addr).is_err());
        m.add(k.finish().unwrap()).unwrap();
        let ptx = m.to_ptx().unwrap();
        assert_eq!(ptx.matches("mbarrier.init").count(), 1, "{ptx}");
        assert!(
            ptx.lines()
                .any(|l| l.contains("mbarrier.init") && l.ends_with(", 3;")),
            "{ptx}"
        );
    }
}
