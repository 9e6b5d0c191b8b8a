//! Named barriers and the build-time protocol check: what a kernel does to each of its mbarriers
//! in one phase, recorded while the kernel is built, and checked before anything runs.
//!
//! A phase of an mbarrier completes when its pending arrival count reaches zero and its
//! transaction count is zero (PTX ISA 9.7.13.15.1 "mbarrier: phase completion"). So, per phase:
//!
//! - the arrivals must add up to the count the barrier was initialised with (fewer and the phase
//!   never completes; more and arrivals spill into the next phase);
//! - the bytes announced with `expect_tx` (or `arrive.expect_tx`) must equal the bytes the TMA or
//!   bulk copies completing on the barrier deliver (`complete_tx`, PTX ISA 9.7.13.15.2
//!   "tx-count"): announce more and the phase never completes, fewer and it completes before
//!   the data is there;
//! - a barrier someone waits on needs someone to arrive on it.
//!
//! The contract of the recording methods: each call stands for one thing that happens **once per
//! phase** of the barrier it names ([`BarrierAt::Each`] for every barrier of an array, as a loop
//! over a ring of stages does with the stage in a register).
//!
//! ```
//! use smem::pipeline::protocol::{BarrierAt, Protocol, ProtocolError};
//! let mut p = Protocol::new();
//! let full = p.declare("full", &[1, 1])?;
//! p.arrive_expect_tx(BarrierAt::Each(full), 32768);
//! p.copy(BarrierAt::Each(full), 16384); // A
//! p.copy(BarrierAt::Each(full), 8192); // B: a quarter short
//! p.wait(BarrierAt::Each(full));
//! let e = p.check().unwrap_err();
//! assert_eq!(e.to_string(), "barrier `full[0]`: expect_tx announces 32768 bytes per phase, \
//!     the copies completing on it deliver 24576");
//! # Ok::<(), ProtocolError>(())
//! ```

use std::fmt;

use crate::mbarrier::{MbarrierArray, MbarrierError};

/// A barrier array declared to a [`Protocol`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayId(usize);

/// Which barriers of an array an event touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierAt {
    /// Barrier `i` of the array.
    One(ArrayId, u32),
    /// Every barrier of the array alike (the index is in a register: a stage of a ring).
    Each(ArrayId),
}

impl BarrierAt {
    /// The array.
    pub fn array(self) -> ArrayId {
        match self {
            BarrierAt::One(a, _) | BarrierAt::Each(a) => a,
        }
    }
}

/// A barrier's name as users read it: `full[2]`, or `tmem_ready` for a single barrier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BarrierName {
    /// The array's name.
    pub array: String,
    /// The index, for arrays of more than one barrier.
    pub index: Option<u32>,
}

impl fmt::Display for BarrierName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.array),
            None => f.write_str(&self.array),
        }
    }
}

/// A protocol that cannot work, found before the kernel runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The bytes announced with `expect_tx` differ from the bytes the copies deliver.
    #[error(
        "barrier `{barrier}`: expect_tx announces {expect_tx} bytes per phase, the copies \
         completing on it deliver {copied}"
    )]
    TxMismatch {
        /// The barrier.
        barrier: BarrierName,
        /// Bytes announced per phase.
        expect_tx: u64,
        /// Bytes delivered per phase.
        copied: u64,
    },
    /// Fewer arrivals per phase than the barrier's count: the phase never completes.
    #[error(
        "barrier `{barrier}`: initialised for {count} arrivals, but only {arrivals} arrive per \
         phase, so no phase ever completes"
    )]
    ArrivalsShort {
        /// The barrier.
        barrier: BarrierName,
        /// The count `mbarrier.init` set.
        count: u32,
        /// Arrivals per phase.
        arrivals: u64,
    },
    /// More arrivals per phase than the barrier's count: a phase completes early and the rest
    /// count towards the next one.
    #[error(
        "barrier `{barrier}`: initialised for {count} arrivals, but {arrivals} arrive per phase, \
         so phases complete early"
    )]
    ArrivalsOver {
        /// The barrier.
        barrier: BarrierName,
        /// The count `mbarrier.init` set.
        count: u32,
        /// Arrivals per phase.
        arrivals: u64,
    },
    /// A peeled site (a loop's first or last iteration written out of the loop) arrives with
    /// another count than the loop's own arrivals, or with none in the loop: it stands for the
    /// same arrival in other phases, so the counts must agree.
    #[error(
        "barrier `{barrier}`: a peeled site arrives {peeled} times per phase, the loop's sites \
         {arrivals}"
    )]
    PeeledArrivals {
        /// The barrier.
        barrier: BarrierName,
        /// Arrivals per phase of the loop's sites.
        arrivals: u64,
        /// Arrivals per phase of a peeled site.
        peeled: u64,
    },
    /// A wait on a barrier no one arrives at and no copy completes on.
    #[error("barrier `{barrier}` is waited on, but nothing arrives at it")]
    WaitWithoutArrive {
        /// The barrier.
        barrier: BarrierName,
    },
    /// An array with no barriers, a count out of range, or an index past the end.
    #[error(transparent)]
    Mbarrier(#[from] MbarrierError),
    /// Two arrays of one name.
    #[error("barrier array `{name}` is declared twice")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// An event named an array this protocol did not declare, or a barrier past its end.
    #[error("an event names barrier {index} of array #{array}, which this protocol does not have")]
    Undeclared {
        /// The array's number.
        array: usize,
        /// The barrier.
        index: u32,
    },
}

/// What one barrier sees per phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct PerPhase {
    arrivals: u64,
    /// The arrivals of peeled sites (each the same event as `arrivals` in other phases): the
    /// largest, and the smallest nonzero.
    peeled_max: u64,
    peeled_min: u64,
    expect_tx: u64,
    copied: u64,
    waits: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ArrayRecord {
    name: String,
    counts: Vec<u32>,
    phases: Vec<PerPhase>,
}

/// The barriers of a kernel and what happens to each per phase.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Protocol {
    arrays: Vec<ArrayRecord>,
    /// The first event on a barrier this protocol does not have (reported by `check`).
    stray: Option<(usize, u32)>,
}

/// What the getters read for an array this protocol does not have.
static UNDECLARED: ArrayRecord = ArrayRecord {
    name: String::new(),
    counts: Vec::new(),
    phases: Vec::new(),
};

impl Protocol {
    /// No barriers yet.
    pub fn new() -> Protocol {
        Protocol::default()
    }

    /// Declares an array `name` of `counts.len()` barriers with these init counts (a single
    /// barrier is named without an index).
    pub fn declare(&mut self, name: &str, counts: &[u32]) -> Result<ArrayId, ProtocolError> {
        MbarrierArray::check_counts(name, counts)?;
        if self.arrays.iter().any(|a| a.name == name) {
            return Err(ProtocolError::Duplicate {
                name: name.to_string(),
            });
        }
        self.arrays.push(ArrayRecord {
            name: name.to_string(),
            counts: counts.to_vec(),
            phases: vec![PerPhase::default(); counts.len()],
        });
        Ok(ArrayId(self.arrays.len() - 1))
    }

    /// Declares a pool's barrier array under the short name `name` (`full` for the pool's
    /// `main.full`), with its init counts.
    pub fn declare_pool_array(
        &mut self,
        name: &str,
        barriers: &MbarrierArray,
    ) -> Result<ArrayId, ProtocolError> {
        let counts: Vec<u32> = barriers.inits().map(|(_, c)| c).collect();
        self.declare(name, &counts)
    }

    /// Barrier `i` of `array`, checked against its length.
    pub fn at(&self, array: ArrayId, i: u32) -> Result<BarrierAt, ProtocolError> {
        let a = self.record(array);
        if (i as usize) < a.counts.len() {
            Ok(BarrierAt::One(array, i))
        } else {
            Err(MbarrierError::Index {
                name: a.name.clone(),
                index: i,
                len: a.counts.len() as u32,
            }
            .into())
        }
    }

    /// The array, or an empty stand-in for an id of another protocol.
    fn record(&self, array: ArrayId) -> &ArrayRecord {
        self.arrays.get(array.0).unwrap_or(&UNDECLARED)
    }

    /// The name of barrier `index` of `array` (`full[2]`; a single barrier has no index).
    pub fn name(&self, array: ArrayId, index: u32) -> BarrierName {
        let a = self.record(array);
        BarrierName {
            array: a.name.clone(),
            index: (a.counts.len() > 1).then_some(index),
        }
    }

    /// The array's name.
    pub fn array_name(&self, array: ArrayId) -> &str {
        &self.record(array).name
    }

    /// The init count of barrier `index` of `array` (0 past the end).
    pub fn init_count(&self, array: ArrayId, index: u32) -> u32 {
        self.record(array)
            .counts
            .get(index as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Whether the array has more than one barrier (its names carry an index).
    pub fn is_indexed(&self, array: ArrayId) -> bool {
        self.record(array).counts.len() > 1
    }

    /// The barriers in `array` (0 for an array of another protocol).
    pub fn len(&self, array: ArrayId) -> u32 {
        self.record(array).counts.len() as u32
    }

    /// Whether the protocol has no arrays.
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }

    /// `field` per phase on `b` (the largest over the barriers it names), as recorded so far.
    fn largest(&self, b: BarrierAt, field: impl Fn(&PerPhase) -> u64) -> u64 {
        let a = self.record(b.array());
        match b {
            BarrierAt::One(_, i) => a.phases.get(i as usize).map_or(0, field),
            BarrierAt::Each(_) => a.phases.iter().map(field).max().unwrap_or(0),
        }
    }

    /// The transaction bytes announced per phase on `b` (the largest over the barriers it
    /// names), as recorded so far.
    pub fn expect_tx_bytes(&self, b: BarrierAt) -> u64 {
        self.largest(b, |p| p.expect_tx)
    }

    /// The bytes the copies completing on `b` deliver per phase (the largest over the barriers
    /// it names), as recorded so far.
    pub fn copied_bytes(&self, b: BarrierAt) -> u64 {
        self.largest(b, |p| p.copied)
    }

    /// The arrivals made on `b` per phase (the largest over the barriers it names), as recorded
    /// so far.
    pub fn arrivals(&self, b: BarrierAt) -> u64 {
        self.largest(b, |p| p.arrivals)
    }

    fn touch(&mut self, b: BarrierAt, f: impl Fn(&mut PerPhase)) {
        let id = b.array().0;
        let index = match b {
            BarrierAt::One(_, i) => i,
            BarrierAt::Each(_) => 0,
        };
        let phases = self.arrays.get_mut(id).map(|a| &mut a.phases);
        match (phases, b) {
            (Some(p), BarrierAt::Each(_)) => p.iter_mut().for_each(f),
            (Some(p), BarrierAt::One(_, i)) if (i as usize) < p.len() => f(&mut p[i as usize]),
            _ => {
                self.stray.get_or_insert((id, index));
            }
        }
    }

    /// `arrivals` arrive on `b` per phase (an `mbarrier.arrive` executed by `arrivals` threads,
    /// or one thread arriving with a count).
    pub fn arrive(&mut self, b: BarrierAt, arrivals: u32) {
        self.touch(b, |p| p.arrivals += u64::from(arrivals));
    }

    /// `arrivals` arrive on `b` at a peeled site: the same arrival as a loop's [`Protocol::arrive`]
    /// for the phases of the loop's first or last iteration, written out of the loop (a
    /// software-pipelined loop's prologue or epilogue). It adds nothing to the per-phase count;
    /// [`Protocol::check`] requires it to equal the loop's arrivals.
    ///
    /// ```
    /// use smem::pipeline::protocol::{BarrierAt, Protocol};
    /// let mut p = Protocol::new();
    /// let empty = p.declare("empty", &[2, 2])?;
    /// p.arrive_peeled(BarrierAt::Each(empty), 2); // the prologue's release
    /// p.arrive(BarrierAt::Each(empty), 2); // the loop's
    /// p.wait(BarrierAt::Each(empty));
    /// assert_eq!(p.check(), Ok(()));
    /// p.arrive_peeled(BarrierAt::Each(empty), 1);
    /// assert!(p.check().is_err());
    /// # Ok::<(), smem::pipeline::protocol::ProtocolError>(())
    /// ```
    pub fn arrive_peeled(&mut self, b: BarrierAt, arrivals: u32) {
        let n = u64::from(arrivals);
        self.touch(b, |p| {
            p.peeled_max = p.peeled_max.max(n);
            p.peeled_min = if p.peeled_min == 0 {
                n
            } else {
                p.peeled_min.min(n)
            };
        });
    }

    /// `expect_tx` of `bytes` on `b` per phase, without an arrival.
    pub fn expect_tx(&mut self, b: BarrierAt, bytes: u32) {
        self.touch(b, |p| p.expect_tx += u64::from(bytes));
    }

    /// One thread's `mbarrier.arrive.expect_tx` of `bytes` per phase.
    pub fn arrive_expect_tx(&mut self, b: BarrierAt, bytes: u32) {
        self.expect_tx(b, bytes);
        self.arrive(b, 1);
    }

    /// A TMA or bulk copy completing `bytes` on `b` per phase (a multicast copy counts the
    /// bytes it delivers to this CTA).
    pub fn copy(&mut self, b: BarrierAt, bytes: u32) {
        self.touch(b, |p| p.copied += u64::from(bytes));
    }

    /// Someone waits on `b` each phase.
    pub fn wait(&mut self, b: BarrierAt) {
        self.touch(b, |p| p.waits += 1);
    }

    /// Checks every barrier something happens to: a wait needs an arrival or a copy, the
    /// announced bytes equal the delivered bytes, the arrivals equal the init count. The first
    /// broken rule, in declaration order, is the error.
    pub fn check(&self) -> Result<(), ProtocolError> {
        if let Some((array, index)) = self.stray {
            return Err(ProtocolError::Undeclared { array, index });
        }
        for (ai, a) in self.arrays.iter().enumerate() {
            for (i, (p, &count)) in a.phases.iter().zip(&a.counts).enumerate() {
                let barrier = || self.name(ArrayId(ai), i as u32);
                if *p == PerPhase::default() {
                    continue;
                }
                if p.peeled_max != 0 && (p.peeled_max != p.arrivals || p.peeled_min != p.arrivals) {
                    let peeled = if p.peeled_max != p.arrivals {
                        p.peeled_max
                    } else {
                        p.peeled_min
                    };
                    return Err(ProtocolError::PeeledArrivals {
                        barrier: barrier(),
                        arrivals: p.arrivals,
                        peeled,
                    });
                }
                if p.arrivals == 0 && p.copied == 0 && p.expect_tx == 0 {
                    return Err(ProtocolError::WaitWithoutArrive { barrier: barrier() });
                }
                if p.expect_tx != p.copied {
                    return Err(ProtocolError::TxMismatch {
                        barrier: barrier(),
                        expect_tx: p.expect_tx,
                        copied: p.copied,
                    });
                }
                let want = u64::from(count);
                if p.arrivals < want {
                    return Err(ProtocolError::ArrivalsShort {
                        barrier: barrier(),
                        count,
                        arrivals: p.arrivals,
                    });
                }
                if p.arrivals > want {
                    return Err(ProtocolError::ArrivalsOver {
                        barrier: barrier(),
                        count,
                        arrivals: p.arrivals,
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GEMM's ring: full[s] armed by one producer thread for A + B, empty[s] released by the
    /// leaders of two consumer warpgroups.
    fn ring(stages: u32) -> (Protocol, ArrayId, ArrayId) {
        let mut p = Protocol::new();
        let full = p.declare("full", &vec![1; stages as usize]).unwrap();
        let empty = p.declare("empty", &vec![2; stages as usize]).unwrap();
        (p, full, empty)
    }

    #[test]
    fn a_correct_ring_passes() {
        let (mut p, full, empty) = ring(4);
        p.wait(BarrierAt::Each(empty));
        p.arrive_expect_tx(BarrierAt::Each(full), 16384 + 32768);
        p.copy(BarrierAt::Each(full), 16384);
        p.copy(BarrierAt::Each(full), 32768);
        p.wait(BarrierAt::Each(full));
        p.arrive(BarrierAt::Each(empty), 2);
        assert_eq!(p.check(), Ok(()));
        assert_eq!(p.expect_tx_bytes(BarrierAt::Each(full)), 49152);
        assert_eq!(p.copied_bytes(BarrierAt::Each(full)), 49152);
        assert_eq!(p.arrivals(BarrierAt::One(empty, 3)), 2);
        assert_eq!((p.len(full), p.is_empty()), (4, false));
    }

    #[test]
    fn peeled_sites_count_once_and_must_match_the_loop() {
        let (mut p, full, empty) = ring(2);
        p.wait(BarrierAt::Each(empty));
        p.arrive_expect_tx(BarrierAt::Each(full), 4096);
        p.copy(BarrierAt::Each(full), 4096);
        p.wait(BarrierAt::Each(full));
        // A prologue's and an epilogue's release around the loop's.
        p.arrive_peeled(BarrierAt::Each(empty), 2);
        p.arrive(BarrierAt::Each(empty), 2);
        p.arrive_peeled(BarrierAt::Each(empty), 2);
        assert_eq!(p.check(), Ok(()));
        assert_eq!(p.arrivals(BarrierAt::One(empty, 1)), 2);
        // A peeled site with another count, or with no loop site at all, is refused.
        let mut q = p.clone();
        q.arrive_peeled(BarrierAt::One(empty, 1), 1);
        assert!(matches!(
            q.check(),
            Err(ProtocolError::PeeledArrivals {
                arrivals: 2,
                peeled: 1,
                ..
            })
        ));
        let (mut r, _, empty) = ring(1);
        r.wait(BarrierAt::Each(empty));
        r.arrive_peeled(BarrierAt::Each(empty), 2);
        assert!(matches!(
            r.check(),
            Err(ProtocolError::PeeledArrivals {
                arrivals: 0,
                peeled: 2,
                ..
            })
        ));
    }

    #[test]
    fn tx_mismatch_names_the_barrier() {
        let (mut p, full, empty) = ring(2);
        p.wait(BarrierAt::Each(empty));
        p.arrive(BarrierAt::Each(empty), 2);
        let b1 = p.at(full, 1).unwrap();
        p.arrive_expect_tx(p.at(full, 0).unwrap(), 4096);
        p.copy(p.at(full, 0).unwrap(), 4096);
        p.arrive_expect_tx(b1, 4096 + 1024);
        p.copy(b1, 4096);
        p.wait(BarrierAt::Each(full));
        assert_eq!(
            p.check(),
            Err(ProtocolError::TxMismatch {
                barrier: BarrierName {
                    array: "full".into(),
                    index: Some(1)
                },
                expect_tx: 5120,
                copied: 4096
            })
        );
    }

    #[test]
    fn arrivals_short_and_over() {
        let (mut p, full, empty) = ring(2);
        p.arrive_expect_tx(BarrierAt::Each(full), 64);
        p.copy(BarrierAt::Each(full), 64);
        p.wait(BarrierAt::Each(empty));
        p.arrive(BarrierAt::Each(empty), 1); // one consumer warpgroup forgot to arrive
        let e = p.check().unwrap_err();
        assert!(
            matches!(&e, ProtocolError::ArrivalsShort { barrier, count: 2, arrivals: 1 }
                if barrier.to_string() == "empty[0]"),
            "{e}"
        );
        p.arrive(BarrierAt::Each(empty), 128); // every thread arrives instead of the leaders
        assert!(matches!(
            p.check(),
            Err(ProtocolError::ArrivalsOver {
                count: 2,
                arrivals: 129,
                ..
            })
        ));
    }

    #[test]
    fn wait_without_arrive() {
        let mut p = Protocol::new();
        let t = p.declare("tmem_ready", &[1]).unwrap();
        p.wait(BarrierAt::One(t, 0));
        let e = p.check().unwrap_err();
        assert_eq!(
            e.to_string(),
            "barrier `tmem_ready` is waited on, but nothing arrives at it"
        );
    }

    #[test]
    fn untouched_barriers_and_bad_declarations() {
        let (p, full, _) = ring(2);
        assert_eq!(p.check(), Ok(()));
        assert!(matches!(
            p.at(full, 2),
            Err(ProtocolError::Mbarrier(MbarrierError::Index {
                index: 2,
                len: 2,
                ..
            }))
        ));
        let mut p = p;
        assert!(matches!(
            p.declare("full", &[1]),
            Err(ProtocolError::Duplicate { .. })
        ));
        assert!(matches!(
            p.declare("x", &[0]),
            Err(ProtocolError::Mbarrier(MbarrierError::Count { .. }))
        ));
        assert!(matches!(
            p.declare("y", &[]),
            Err(ProtocolError::Mbarrier(MbarrierError::Empty { .. }))
        ));
    }

    #[test]
    fn events_on_barriers_it_does_not_have_are_errors() {
        let (mut p, full, _) = ring(2);
        let mut q = Protocol::new();
        q.declare("a", &[1]).unwrap();
        q.declare("b", &[1]).unwrap();
        let foreign = q.declare("c", &[1]).unwrap();
        p.arrive(BarrierAt::One(full, 5), 1);
        assert_eq!(
            p.check(),
            Err(ProtocolError::Undeclared { array: 0, index: 5 })
        );
        let (mut p, _, _) = ring(2);
        p.wait(BarrierAt::Each(foreign));
        assert_eq!(p.array_name(foreign), "");
        assert_eq!(p.expect_tx_bytes(BarrierAt::One(foreign, 9)), 0);
        assert!(matches!(
            p.check(),
            Err(ProtocolError::Undeclared { array: 2, .. })
        ));
    }

    #[test]
    fn pool_arrays_keep_their_counts() {
        let mut pool = crate::pool::SmemPool::new(ptx_isa::Target::Sm90a);
        let bars = pool.mbarriers("main.empty", &[2, 2, 2]).unwrap();
        let mut p = Protocol::new();
        let empty = p.declare_pool_array("empty", &bars).unwrap();
        p.wait(BarrierAt::Each(empty));
        p.arrive(BarrierAt::Each(empty), 1);
        assert!(matches!(
            p.check(),
            Err(ProtocolError::ArrivalsShort { count: 2, .. })
        ));
        assert_eq!(p.name(empty, 2).to_string(), "empty[2]");
    }
}
