//! The hang record: what a debug build's bounded wait writes when it gives up, where, and the
//! table of wait sites the host reads it with. The device side ([`super::sync`]) writes it; the
//! runtime (`ptxkit::runtime::hang`) decodes it. This module is the one place its layout lives.
//!
//! A debug module holds one `.global` block, [`HANG_SYMBOL`], that the runtime fills before a
//! launch: the address of a host-mapped record buffer (page-locked host memory, so the host can
//! read it after the trap has left the context unusable: CUDA Driver API, `cuMemHostAlloc` with
//! `CU_MEMHOSTALLOC_DEVICEMAP`), the bound in nanoseconds (initialised to
//! [`DEFAULT_BOUND_NS`], so a module loaded without the runtime still waits a bounded time),
//! and a claim counter handing out the buffer's [`RECORDS`] slots.
//!
//! A hang rarely stops one thread: when a consumer waits for bytes that never come, the producer
//! soon waits for the consumer to release a stage. So every warp that gives up (its lowest lane
//! giving up at that moment) writes a record while slots last. Time cannot tell cause from
//! symptom (every warp gives up within a bound of the others), so a record also holds how far
//! its thread got (the trips round the ring it completed, where the kernel counts them: the
//! producer's, see `BarrierSync::count_trips`) and the phase the barrier was observed in; with the wait sites' protocol facts (who arrives on
//! the barrier after which wait, the bytes announced and copied, the arrivals made) the host
//! tells the wait that is the cause from the waits stuck behind it (`ptxkit::runtime::hang`).

use super::protocol::BarrierName;

/// The `.global` block of a debug module.
pub const HANG_SYMBOL: &str = "ptxkit_hang";
/// Byte offset in [`HANG_SYMBOL`] of the record buffer's device address (`.u64`; 0 = none).
pub const SLOT_BUFFER: u32 = 0;
/// Byte offset of the bound in nanoseconds (`.u64`).
pub const SLOT_BOUND_NS: u32 = 8;
/// Byte offset of the claim counter (`.u32`: the slots handed out so far).
pub const SLOT_CLAIM: u32 = 16;
/// Bytes of [`HANG_SYMBOL`].
pub const SLOTS_BYTES: u32 = 24;
/// The bound a debug module starts with: 2 s.
pub const DEFAULT_BOUND_NS: u64 = 2_000_000_000;

/// The initial contents of [`HANG_SYMBOL`]: no buffer, the default bound, unclaimed.
pub fn initial_slots() -> [u8; SLOTS_BYTES as usize] {
    let mut b = [0u8; SLOTS_BYTES as usize];
    let at = SLOT_BOUND_NS as usize;
    b[at..at + 8].copy_from_slice(&DEFAULT_BOUND_NS.to_le_bytes());
    b
}

/// `"HANG"` read as a little-endian `u32`: written last, after a system-scope fence, so a record
/// with this word is complete.
pub const RECORD_MAGIC: u32 = u32::from_le_bytes(*b"HANG");

/// The 32-bit words of a record, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Word {
    /// [`RECORD_MAGIC`].
    Magic = 0,
    /// The wait site (an index into [`HangSites`]).
    Site,
    /// The barrier's index in its array (the stage register for a ring).
    Index,
    /// The parity waited for.
    Parity,
    /// `%ctaid.x`, `.y`, `.z`.
    CtaX,
    /// `%ctaid.y`.
    CtaY,
    /// `%ctaid.z`.
    CtaZ,
    /// `%clusterid.x` (0 on targets without clusters).
    ClusterX,
    /// `%clusterid.y`.
    ClusterY,
    /// `%clusterid.z`.
    ClusterZ,
    /// `%cluster_ctarank`.
    ClusterRank,
    /// The warp in the CTA: the linear thread index / 32.
    Warp,
    /// `%laneid`.
    Lane,
    /// Nanoseconds waited, low word (`%globaltimer` difference).
    WaitedLo,
    /// Nanoseconds waited, high word.
    WaitedHi,
    /// `%globaltimer` when the wait began, low word.
    StartLo,
    /// `%globaltimer` when the wait began, high word.
    StartHi,
    /// The waits this thread completed since `BarrierSync::count_trips` (for a pipeline role
    /// that waits once per trip round the ring, its trip), or [`PROGRESS_UNCOUNTED`].
    Progress,
    /// The barrier's phase as observed when the thread gave up, with `mbarrier.test_wait.parity`
    /// on both parities: [`OBSERVED_PARITY0_DONE`], [`OBSERVED_PARITY1_DONE`],
    /// [`OBSERVED_VALID`].
    Observed,
}

/// [`Word::Progress`] of a wait outside `count_trips` (the thread's trips are not counted).
pub const PROGRESS_UNCOUNTED: u32 = u32::MAX;
/// [`Word::Observed`]: the phase of parity 0 tested complete.
pub const OBSERVED_PARITY0_DONE: u32 = 1;
/// [`Word::Observed`]: the phase of parity 1 tested complete.
pub const OBSERVED_PARITY1_DONE: u32 = 2;
/// [`Word::Observed`]: the word was written (records of older builds leave it 0).
pub const OBSERVED_VALID: u32 = 1 << 31;

/// Words in a record (room to grow: 19 are used).
pub const RECORD_WORDS: usize = 32;
/// Bytes of a record: `1 << RECORD_SHIFT`.
pub const RECORD_BYTES: usize = RECORD_WORDS * 4;
/// `log2(RECORD_BYTES)`, for the slot's address.
pub const RECORD_SHIFT: u32 = 7;
/// Record slots in a buffer.
pub const RECORDS: u32 = 16;
/// Bytes of a record buffer.
pub const BUFFER_BYTES: usize = RECORDS as usize * RECORD_BYTES;

impl Word {
    /// The byte offset in the record.
    pub const fn offset(self) -> u32 {
        self as u32 * 4
    }
}

/// One bounded wait of a debug build: the barrier it waits on, what it expects, and what the
/// kernel does to it (the protocol facts, recorded at build time, that tell a cause from a
/// symptom).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct HangSite {
    /// The barrier array's name.
    pub array: String,
    /// Whether the barrier's name carries an index (`full[2]` rather than `tmem_ready`).
    pub indexed: bool,
    /// The barriers in the array (the stages of a ring).
    pub stages: u32,
    /// The transaction bytes announced per phase on it (0 for a plain arrival barrier).
    pub expect_tx: u64,
    /// The bytes the copies completing on it deliver per phase.
    pub copied: u64,
    /// The arrivals the barrier expects per phase (its init count).
    pub arrivals: u32,
    /// The arrivals the kernel makes on it per phase.
    pub arrive_ops: u64,
    /// The barrier arrays the waiting thread arrives on, announces bytes on or copies onto after
    /// this wait and before its next one, in order: what the threads waiting on those owe to
    /// this wait's completion.
    pub then: Vec<String>,
    /// Whether the waiting thread announces transaction bytes after this wait (a producer).
    pub then_tx: bool,
    /// The 1-based line of the wait in the kernel's PTX, once [`HangSites::locate`] has read it.
    pub ptx_line: Option<usize>,
}

impl HangSite {
    /// The barrier's name with the index a record holds.
    pub fn barrier(&self, index: u32) -> BarrierName {
        BarrierName {
            array: self.array.clone(),
            index: self.indexed.then_some(index),
        }
    }

    /// The comment the wait is emitted under, which [`HangSites::locate`] finds.
    pub fn marker(site: u32) -> String {
        format!("ptxkit hang site {site}")
    }
}

/// The wait sites of one debug kernel, by site number.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct HangSites {
    /// The kernel.
    pub kernel: String,
    /// The sites; a record's [`Word::Site`] indexes this.
    pub sites: Vec<HangSite>,
}

impl HangSites {
    /// Sets each site's PTX line from the kernel's text: the line after its marker comment.
    pub fn locate(&mut self, ptx: &str) {
        let lines: Vec<&str> = ptx.lines().collect();
        for (n, site) in self.sites.iter_mut().enumerate() {
            let marker = format!("// {}:", HangSite::marker(n as u32));
            site.ptx_line = lines
                .iter()
                .position(|l| l.trim_start().starts_with(&marker))
                .map(|i| i + 2);
        }
    }

    /// The site a record names.
    pub fn get(&self, site: u32) -> Option<&HangSite> {
        self.sites.get(site as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_fixed() {
        assert_eq!(RECORD_MAGIC, 0x474E_4148);
        assert_eq!(Word::Site.offset(), 4);
        assert_eq!(Word::WaitedHi.offset(), 56);
        assert_eq!(Word::Progress.offset(), 68);
        assert!(Word::Observed.offset() as usize + 4 <= RECORD_BYTES);
        assert_eq!(1 << RECORD_SHIFT, RECORD_BYTES);
        let s = initial_slots();
        assert_eq!(
            u64::from_le_bytes(s[8..16].try_into().unwrap()),
            2_000_000_000
        );
        assert!(s[..8].iter().chain(&s[16..]).all(|&b| b == 0));
    }

    #[test]
    fn sites_find_their_lines() {
        let mut sites = HangSites {
            kernel: "k".into(),
            sites: vec![
                HangSite {
                    array: "full".into(),
                    indexed: true,
                    expect_tx: 4096,
                    arrivals: 1,
                    ..HangSite::default()
                },
                HangSite {
                    array: "done".into(),
                    arrivals: 2,
                    ..HangSite::default()
                },
            ],
        };
        let ptx = "a\n\t// ptxkit hang site 1: done\n\tmbarrier.try_wait\n\t// ptxkit hang site 0: full\n\tx\n";
        sites.locate(ptx);
        assert_eq!(sites.sites[0].ptx_line, Some(5));
        assert_eq!(sites.sites[1].ptx_line, Some(3));
        assert_eq!(sites.sites[0].barrier(2).to_string(), "full[2]");
        assert_eq!(sites.sites[1].barrier(2).to_string(), "done");
    }
}
