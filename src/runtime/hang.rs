//! Hang diagnosis, host side: the record buffer a debug build writes into, the decoding of a
//! record into a [`HangReport`], and the `PTXKIT_DEBUG_HANG` environment variable.
//!
//! The record's layout and the wait-site table are `smem::pipeline::hang`'s (one place); a
//! debug kernel is built with `smem::pipeline::sync::WaitMode::Bounded`. Before a launch,
//! [`HangBuffer::arm`] writes the buffer's device address and the bound into the module's
//! `ptxkit_hang` block; after a failed or timed-out launch, [`HangBuffer::report`] reads the
//! record (host memory: readable although the trap has left the context unusable) and names
//! the barrier, the phase and the thread of every warp that gave up (up to
//! `smem::pipeline::hang::RECORDS`), the wait that caused the hang leading
//! ([`super::diagnosis`]).
//!
//! ```
//! use ptxkit::runtime::{HangReport, decode_record};
//! use smem::pipeline::hang::{
//!     HangSite, HangSites, OBSERVED_PARITY0_DONE, OBSERVED_VALID, RECORD_BYTES, RECORD_MAGIC, Word,
//! };
//! let sites = HangSites {
//!     kernel: "gemm_bf16".into(),
//!     sites: vec![HangSite { array: "full".into(), indexed: true, stages: 4, expect_tx: 32768,
//!                            copied: 32768, arrivals: 1, arrive_ops: 1,
//!                            then: vec!["empty".into()], then_tx: false, ptx_line: Some(812) }],
//! };
//! let mut rec = [0u8; RECORD_BYTES];
//! let mut put = |w: Word, v: u32| rec[w.offset() as usize..][..4].copy_from_slice(&v.to_le_bytes());
//! put(Word::Magic, RECORD_MAGIC);
//! put(Word::Index, 2);
//! put(Word::Parity, 1);
//! put(Word::CtaX, 3);
//! put(Word::Warp, 4);
//! put(Word::Progress, 6);
//! put(Word::Observed, OBSERVED_VALID | OBSERVED_PARITY0_DONE);
//! let r = decode_record(&rec, &sites, 2_000_000_000)?.unwrap();
//! assert_eq!(r.to_string(), "hang in `gemm_bf16`: CTA (3,0,0) warp 4 lane 0 waited > 2 s on \
//!     `full[2]` phase 1 (expects 32768 tx bytes, 1 arrival; trip 6; observed in phase 1; \
//!     cluster (0,0,0) rank 0; PTX line 812)");
//! # Ok::<(), ptxkit::runtime::RuntimeError>(())
//! ```

use std::time::Duration;

use cudarc::driver::sys;
use smem::pipeline::hang::{
    BUFFER_BYTES, DEFAULT_BOUND_NS, HANG_SYMBOL, HangSite, HangSites, OBSERVED_PARITY0_DONE,
    OBSERVED_PARITY1_DONE, OBSERVED_VALID, PROGRESS_UNCOUNTED, RECORD_BYTES, RECORD_MAGIC,
    SLOT_BOUND_NS, SLOT_BUFFER, SLOT_CLAIM, SLOTS_BYTES, Word,
};
use smem::pipeline::protocol::BarrierName;
use smem::pipeline::sync::WaitMode;

use super::diagnosis::HangDiagnosis;
use super::error::{Result, RuntimeError};
use super::module::Module;

/// The environment variable that turns on debug waits: unset, empty or `0` is off; `1` is on
/// with the default bound (2 s); any other number is the bound in milliseconds.
pub const DEBUG_HANG_ENV: &str = "PTXKIT_DEBUG_HANG";

/// Reads a [`DEBUG_HANG_ENV`] value: the bound when debug waits are on.
pub fn parse_debug_hang(value: Option<&str>) -> Result<Option<Duration>> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match v.parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(1) => Ok(Some(Duration::from_nanos(DEFAULT_BOUND_NS))),
        Ok(ms) => Ok(Some(Duration::from_millis(ms))),
        Err(_) => Err(RuntimeError::HangConfig {
            reason: format!(
                "{DEBUG_HANG_ENV}={v:?}: expected 0 (off), 1 (on, 2 s) or a bound in milliseconds"
            ),
        }),
    }
}

/// [`parse_debug_hang`] of the process's environment.
pub fn debug_hang_from_env() -> Result<Option<Duration>> {
    parse_debug_hang(std::env::var(DEBUG_HANG_ENV).ok().as_deref())
}

/// The phase a barrier was seen in when its waiter gave up (`mbarrier.test_wait.parity` on
/// both parities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObservedPhase {
    /// Its current phase has this parity: the phase waited for is still pending.
    InPhase(u32),
    /// The phase waited for completed as the thread gave up: slow, not stuck.
    CompletedLate,
}

impl ObservedPhase {
    /// Reads a record's [`Word::Observed`] for a wait on `parity`; `None` when not written.
    pub fn decode(word: u32, parity: u32) -> Option<ObservedPhase> {
        if word & OBSERVED_VALID == 0 {
            return None;
        }
        let bit = if parity & 1 == 0 {
            OBSERVED_PARITY0_DONE
        } else {
            OBSERVED_PARITY1_DONE
        };
        Some(if word & bit != 0 {
            ObservedPhase::CompletedLate
        } else {
            ObservedPhase::InPhase(parity & 1)
        })
    }
}

impl std::fmt::Display for ObservedPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObservedPhase::InPhase(p) => write!(f, "observed in phase {p}"),
            ObservedPhase::CompletedLate => f.write_str("observed complete as it gave up"),
        }
    }
}

/// How far round the ring a waiting thread got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trip {
    /// Counted on the device (`BarrierSync::count_trips`).
    Counted(u32),
    /// Inferred by the diagnosis from the producer's count and the wait's stage and parity.
    Inferred(u32),
}

impl Trip {
    /// The trip.
    pub fn value(self) -> u32 {
        match self {
            Trip::Counted(t) | Trip::Inferred(t) => t,
        }
    }
}

impl std::fmt::Display for Trip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trip::Counted(t) => write!(f, "trip {t}"),
            Trip::Inferred(t) => write!(f, "trip {t} (inferred)"),
        }
    }
}

/// A decoded hang record: who waited on what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HangReport {
    /// The kernel.
    pub kernel: String,
    /// The barrier (`full[2]`).
    pub barrier: BarrierName,
    /// The parity waited for.
    pub parity: u32,
    /// `%ctaid`.
    pub cta: [u32; 3],
    /// `%clusterid`.
    pub cluster: [u32; 3],
    /// `%cluster_ctarank`.
    pub cluster_rank: u32,
    /// The warp in the CTA.
    pub warp: u32,
    /// `%laneid`.
    pub lane: u32,
    /// The bound the wait gave up after, in nanoseconds.
    pub bound_ns: u64,
    /// How long it waited, in nanoseconds.
    pub waited_ns: u64,
    /// `%globaltimer` when the wait began.
    pub started_ns: u64,
    /// The thread's trip round the ring, where counted or inferred.
    pub trip: Option<Trip>,
    /// The barrier's phase when the thread gave up.
    pub observed: Option<ObservedPhase>,
    /// The wait site: the barrier's build-time facts (bytes, arrivals, who arrives after it)
    /// and the wait's PTX line.
    pub site: HangSite,
}

impl HangReport {
    /// `expects 32768 tx bytes, 1 arrival`.
    pub fn expects(&self) -> String {
        let mut s = String::from("expects ");
        if self.site.expect_tx > 0 {
            s += &format!("{} tx bytes, ", self.site.expect_tx);
        }
        let plural = if self.site.arrivals == 1 { "" } else { "s" };
        s + &format!("{} arrival{plural}", self.site.arrivals)
    }

    /// What the record says besides the thread and the barrier: `expects …; trip 6; observed in
    /// phase 1; cluster (0,0,0) rank 0; PTX line 812`.
    pub fn facts(&self) -> String {
        let mut s = self.expects();
        if let Some(t) = self.trip {
            s += &format!("; {t}");
        }
        if let Some(o) = self.observed {
            s += &format!("; {o}");
        }
        let [cx, cy, cz] = self.cluster;
        s += &format!("; cluster ({cx},{cy},{cz}) rank {}", self.cluster_rank);
        if let Some(l) = self.site.ptx_line {
            s += &format!("; PTX line {l}");
        }
        s
    }
}

/// `2 s`, `1.5 s`, `300 ms`.
pub(crate) fn seconds(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        let s = ns as f64 / 1e9;
        if ns % 1_000_000_000 == 0 {
            format!("{s:.0} s")
        } else {
            format!("{s:.1} s")
        }
    } else {
        format!("{} ms", ns / 1_000_000)
    }
}

impl std::fmt::Display for HangReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.cta;
        write!(
            f,
            "hang in `{}`: CTA ({x},{y},{z}) warp {} lane {} waited > {} on `{}` phase {} ({})",
            self.kernel,
            self.warp,
            self.lane,
            seconds(self.bound_ns),
            self.barrier,
            self.parity,
            self.facts()
        )
    }
}

/// Decodes a record written with `sites`' kernel and a bound of `bound_ns`: `None` when no
/// thread wrote one (no magic word), an error when it names a site the table lacks.
pub fn decode_record(
    record: &[u8; RECORD_BYTES],
    sites: &HangSites,
    bound_ns: u64,
) -> Result<Option<HangReport>> {
    let w = |w: Word| {
        let at = w.offset() as usize;
        u32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
    };
    if w(Word::Magic) != RECORD_MAGIC {
        return Ok(None);
    }
    let site_no = w(Word::Site);
    let site = sites.get(site_no).ok_or_else(|| RuntimeError::HangConfig {
        reason: format!(
            "the hang record of `{}` names wait site {site_no}; the kernel has {}",
            sites.kernel,
            sites.sites.len()
        ),
    })?;
    let parity = w(Word::Parity);
    Ok(Some(HangReport {
        kernel: sites.kernel.clone(),
        barrier: site.barrier(w(Word::Index)),
        parity,
        cta: [w(Word::CtaX), w(Word::CtaY), w(Word::CtaZ)],
        cluster: [w(Word::ClusterX), w(Word::ClusterY), w(Word::ClusterZ)],
        cluster_rank: w(Word::ClusterRank),
        warp: w(Word::Warp),
        lane: w(Word::Lane),
        bound_ns,
        waited_ns: u64::from(w(Word::WaitedLo)) | (u64::from(w(Word::WaitedHi)) << 32),
        started_ns: u64::from(w(Word::StartLo)) | (u64::from(w(Word::StartHi)) << 32),
        trip: match w(Word::Progress) {
            PROGRESS_UNCOUNTED => None,
            t => Some(Trip::Counted(t)),
        },
        observed: ObservedPhase::decode(w(Word::Observed), parity),
        site: site.clone(),
    }))
}

/// Decodes every record of a buffer (slots without the magic word are empty) and diagnoses them
/// ([`HangDiagnosis::new`]); `None` when no thread wrote one.
pub fn decode_records(
    buffer: &[u8],
    sites: &HangSites,
    bound_ns: u64,
) -> Result<Option<HangDiagnosis>> {
    let mut waits = Vec::new();
    for chunk in buffer.chunks_exact(RECORD_BYTES) {
        let mut rec = [0u8; RECORD_BYTES];
        rec.copy_from_slice(chunk);
        if let Some(r) = decode_record(&rec, sites, bound_ns)? {
            waits.push(r);
        }
    }
    Ok((!waits.is_empty()).then(|| HangDiagnosis::new(waits)))
}

/// Page-locked host memory mapped into the device, holding the hang records.
pub struct HangBuffer {
    host: *mut u8,
    device: sys::CUdeviceptr,
    bound_ns: u64,
    sites: HangSites,
}

// SAFETY: the host pointer is owned by the buffer and only read through `&self` with volatile
// reads of plain bytes; the device writes it through its own mapping.
unsafe impl Send for HangBuffer {}
// SAFETY: as above.
unsafe impl Sync for HangBuffer {}

impl std::fmt::Debug for HangBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HangBuffer")
            .field("kernel", &self.sites.kernel)
            .field("bound_ns", &self.bound_ns)
            .finish()
    }
}

impl HangBuffer {
    /// A record buffer for a debug kernel with wait sites `sites`, giving up after `bound`, in
    /// `module`'s context.
    pub fn new(module: &Module, sites: HangSites, bound: Duration) -> Result<HangBuffer> {
        module.context().bind_to_thread()?;
        let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: allocates BUFFER_BYTES of page-locked, device-mapped host memory (CUDA Driver
        // API, cuMemHostAlloc); freed in Drop.
        unsafe {
            sys::cuMemHostAlloc(
                &mut host,
                BUFFER_BYTES,
                sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
            )
        }
        .result()?;
        let mut device: sys::CUdeviceptr = 0;
        // SAFETY: `host` is a live mapped allocation.
        let mapped = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }.result();
        let buffer = HangBuffer {
            host: host.cast(),
            device,
            bound_ns: u64::try_from(bound.as_nanos()).unwrap_or(u64::MAX),
            sites,
        };
        mapped?;
        buffer.clear();
        Ok(buffer)
    }

    /// The wait mode of a build for the hang bound `bound`: [`WaitMode::Bounded`] (the debug
    /// build) with one, [`WaitMode::Spin`] without.
    pub(crate) fn wait_mode(bound: Option<Duration>) -> WaitMode {
        match bound {
            Some(_) => WaitMode::Bounded,
            None => WaitMode::Spin,
        }
    }

    /// The record buffer of a kernel built in [`HangBuffer::wait_mode`]`(bound)`: a
    /// [`HangBuffer::new`] giving up after `bound` for the debug build, none for a release one.
    pub(crate) fn for_bound(
        module: &Module,
        sites: HangSites,
        bound: Option<Duration>,
    ) -> Result<Option<HangBuffer>> {
        bound.map(|b| HangBuffer::new(module, sites, b)).transpose()
    }

    /// The wait sites.
    pub fn sites(&self) -> &HangSites {
        &self.sites
    }

    fn clear(&self) {
        for i in 0..BUFFER_BYTES {
            // SAFETY: `i` is inside the BUFFER_BYTES allocation.
            unsafe { self.host.add(i).write_volatile(0) };
        }
    }

    /// Clears the record and writes the buffer's address, the bound and an unclaimed word into
    /// `module`'s `ptxkit_hang` block: call before each launch.
    pub fn arm(&self, module: &Module) -> Result<()> {
        self.clear();
        let (at, bytes) = module.global(HANG_SYMBOL)?;
        if bytes < SLOTS_BYTES as usize {
            return Err(RuntimeError::HangConfig {
                reason: format!(
                    "`{HANG_SYMBOL}` holds {bytes} bytes, not {SLOTS_BYTES}: not a debug module"
                ),
            });
        }
        let mut slots = [0u8; SLOTS_BYTES as usize];
        let put =
            |s: &mut [u8], off: u32, v: &[u8]| s[off as usize..][..v.len()].copy_from_slice(v);
        put(&mut slots, SLOT_BUFFER, &self.device.to_le_bytes());
        put(&mut slots, SLOT_BOUND_NS, &self.bound_ns.to_le_bytes());
        put(&mut slots, SLOT_CLAIM, &0u32.to_le_bytes());
        module.context().bind_to_thread()?;
        // SAFETY: `at` is the module global of at least SLOTS_BYTES bytes; `slots` lives across
        // the synchronous copy.
        unsafe { sys::cuMemcpyHtoD_v2(at, slots.as_ptr().cast(), slots.len()) }.result()?;
        Ok(())
    }

    /// The records the threads that gave up wrote, if any.
    pub fn report(&self) -> Result<Option<HangDiagnosis>> {
        let mut buffer = vec![0u8; BUFFER_BYTES];
        for (i, b) in buffer.iter_mut().enumerate() {
            // SAFETY: `i` is inside the allocation; volatile because the device writes it.
            *b = unsafe { self.host.add(i).read_volatile() };
        }
        decode_records(&buffer, &self.sites, self.bound_ns)
    }
}

impl Drop for HangBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once. Page-locked host memory
        // stays freeable after a context error.
        let _ = unsafe { sys::cuMemFreeHost(self.host.cast()) };
    }
}

/// The sites of a 2-stage ring, shared by this module's tests and the diagnosis tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::runtime::Cause;
    use smem::pipeline::hang::HangSite;

    /// The producer's site at PTX line `ptx_line`: waits on `empty` (2 arrivals, 2 arrive
    /// instructions), then arms `full` with its transaction bytes.
    pub(crate) fn producer(ptx_line: usize) -> HangSite {
        HangSite {
            array: "empty".into(),
            indexed: true,
            stages: 2,
            arrivals: 2,
            arrive_ops: 2,
            then: vec!["full".into()],
            then_tx: true,
            ptx_line: Some(ptx_line),
            ..HangSite::default()
        }
    }

    /// The bytes the copies deliver to `full` each phase.
    pub(crate) const COPIED: u64 = 4096;

    /// The cause a consumer site announcing `expect_tx` bytes is stuck on.
    pub(crate) fn tx_mismatch(expect_tx: u64) -> Cause {
        Cause::TxMismatch {
            expect_tx,
            copied: COPIED,
        }
    }

    /// The consumers' site at PTX line `ptx_line`: waits on `full` for [`COPIED`] bytes
    /// announced as `expect_tx` (1 arrival, `arrive_ops` arrive instructions), then releases
    /// `empty`.
    pub(crate) fn consumer(expect_tx: u64, arrive_ops: u64, ptx_line: usize) -> HangSite {
        HangSite {
            array: "full".into(),
            indexed: true,
            stages: 2,
            expect_tx,
            copied: COPIED,
            arrivals: 1,
            arrive_ops,
            then: vec!["empty".into()],
            ptx_line: Some(ptx_line),
            ..HangSite::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring's producer site (waits on `empty`, then arms `full`), a lone barrier, and the
    /// consumer site (waits on `full` for 4096 bytes announced as 5120, then releases `empty`).
    fn sites() -> HangSites {
        HangSites {
            kernel: "ring".into(),
            sites: vec![
                fixtures::producer(30),
                HangSite {
                    array: "tmem_ready".into(),
                    stages: 1,
                    arrivals: 1,
                    ..HangSite::default()
                },
                fixtures::consumer(5120, 1, 60),
            ],
        }
    }

    fn record(words: &[(Word, u32)]) -> [u8; RECORD_BYTES] {
        let mut rec = [0u8; RECORD_BYTES];
        for &(w, v) in words {
            rec[w.offset() as usize..][..4].copy_from_slice(&v.to_le_bytes());
        }
        rec
    }

    #[test]
    fn a_synthetic_record_decodes() {
        let rec = record(&[
            (Word::Magic, RECORD_MAGIC),
            (Word::Site, 0),
            (Word::Index, 1),
            (Word::Parity, 0),
            (Word::CtaX, 5),
            (Word::CtaY, 2),
            (Word::CtaZ, 1),
            (Word::ClusterX, 2),
            (Word::ClusterRank, 1),
            (Word::Warp, 8),
            (Word::Lane, 31),
            (Word::WaitedLo, 0x2A05_F200),
            (Word::WaitedHi, 1),
        ]);
        let r = decode_record(&rec, &sites(), 300_000_000).unwrap().unwrap();
        assert_eq!(r.waited_ns, 0x1_2A05_F200); // 5 s
        assert_eq!(
            (r.cta, r.cluster, r.cluster_rank, r.warp, r.lane),
            ([5, 2, 1], [2, 0, 0], 1, 8, 31)
        );
        assert_eq!(
            r.to_string(),
            "hang in `ring`: CTA (5,2,1) warp 8 lane 31 waited > 300 ms on `empty[1]` phase 0 \
             (expects 2 arrivals; trip 0; cluster (2,0,0) rank 1; PTX line 30)"
        );
        let rec = record(&[
            (Word::Magic, RECORD_MAGIC),
            (Word::Site, 1),
            (Word::Index, 7),
            (Word::Progress, 3),
            (Word::Observed, OBSERVED_VALID | OBSERVED_PARITY0_DONE),
        ]);
        let r = decode_record(&rec, &sites(), 1_500_000_000)
            .unwrap()
            .unwrap();
        assert!(
            r.to_string().contains(
                "waited > 1.5 s on `tmem_ready` phase 0 (expects 1 arrival; trip 3; \
                           observed complete as it gave up;"
            ),
            "{r}"
        );
    }

    #[test]
    fn no_magic_is_no_record_and_a_bad_site_is_an_error() {
        assert_eq!(
            decode_record(&[0; RECORD_BYTES], &sites(), 1).unwrap(),
            None
        );
        let rec = record(&[(Word::Magic, RECORD_MAGIC), (Word::Site, 9)]);
        let e = decode_record(&rec, &sites(), 1).unwrap_err();
        assert!(
            matches!(&e, RuntimeError::HangConfig { reason } if reason.contains("wait site 9")),
            "{e}"
        );
    }

    #[test]
    fn the_cause_leads_whatever_the_start_times() {
        // The planted wrong expect_tx, as the GPU writes it: the producer (warp 0, trip 2) on
        // empty[0] claims a slot first and an earlier start; the consumers (warps 1, 2, trip 0)
        // on full[0] come later. The diagnosis names full[0] and its bytes.
        let at = |slot: usize, rec: [u8; RECORD_BYTES], buffer: &mut [u8]| {
            buffer[slot * RECORD_BYTES..][..RECORD_BYTES].copy_from_slice(&rec)
        };
        let mut buffer = vec![0u8; 4 * RECORD_BYTES];
        let observed = OBSERVED_VALID | OBSERVED_PARITY1_DONE; // in phase 0
        at(
            0,
            record(&[
                (Word::Magic, RECORD_MAGIC),
                (Word::Site, 0),
                (Word::Progress, 2),
                (Word::StartLo, 1000),
                (Word::Observed, observed),
            ]),
            &mut buffer,
        );
        for (slot, warp) in [(1, 2), (3, 1)] {
            at(
                slot,
                record(&[
                    (Word::Magic, RECORD_MAGIC),
                    (Word::Site, 2),
                    (Word::Warp, warp),
                    (Word::Progress, PROGRESS_UNCOUNTED),
                    (Word::StartLo, 5000),
                    (Word::Observed, observed),
                ]),
                &mut buffer,
            );
        }
        let d = decode_records(&buffer, &sites(), 500_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(d.waits.len(), 3);
        let root = d.root.unwrap();
        assert_eq!(root.cause, fixtures::tx_mismatch(5120));
        let first = d.first().unwrap();
        assert_eq!(
            (first.barrier.to_string(), first.warp),
            ("full[0]".into(), 1)
        );
        assert_eq!(first.observed, Some(ObservedPhase::InPhase(0)));
        let text = d.to_string();
        assert!(
            text.starts_with("hang in `ring`: wrong expect_tx: `full[0]` phase 0 expects 5120"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "2 more warp(s) gave up, stuck behind it:\n    on `full[0]` phase 0 (expects 5120 \
                 tx bytes, 1 arrival): CTA (0,0,0) warp 2 trip 0 (inferred)\n    on `empty[0]` \
                 phase 0 \
                 (expects 2 arrivals): CTA (0,0,0) warp 0 trip 2"
            ),
            "{text}"
        );
        assert_eq!(
            decode_records(&[0; RECORD_BYTES], &sites(), 1).unwrap(),
            None
        );
    }

    #[test]
    fn the_environment_variable() {
        assert_eq!(parse_debug_hang(None).unwrap(), None);
        assert_eq!(parse_debug_hang(Some("")).unwrap(), None);
        assert_eq!(parse_debug_hang(Some("0")).unwrap(), None);
        assert_eq!(
            parse_debug_hang(Some("1")).unwrap(),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            parse_debug_hang(Some(" 250 ")).unwrap(),
            Some(Duration::from_millis(250))
        );
        assert!(matches!(
            parse_debug_hang(Some("yes")),
            Err(RuntimeError::HangConfig { .. })
        ));
    }
}
