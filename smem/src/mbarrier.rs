//! mbarrier arrays and the full/empty pipeline protocol, as host-side bookkeeping and as a pure
//! model that tests can run.
//!
//! An mbarrier is a 64-bit object in shared memory, 8-byte aligned (PTX ISA 9.7.13.15.1
//! "Size and alignment of mbarrier object"). `mbarrier.init` sets its expected arrival count; a
//! phase completes when all expected arrivals (and, with `expect_tx`, all transaction bytes) have
//! happened, and the barrier moves to the next phase. `mbarrier.try_wait.parity P` succeeds once
//! the phase with parity `P` has completed, i.e. while the current phase's parity is not `P`
//! (PTX ISA 9.7.13.15.16 "mbarrier.test_wait / mbarrier.try_wait"); a fresh barrier is in phase
//! 0, so waiting on parity 1 passes at once. That is why a producer starts with phase 1 and a
//! consumer with phase 0 (CUTLASS `make_producer_start_state`).

use crate::pool::Region;

/// The largest expected arrival count `mbarrier.init` takes: `2^20 - 1` (PTX ISA 9.7.13.15.2,
/// "Contents of the mbarrier object": the pending count is 20 bits).
pub const MAX_ARRIVAL_COUNT: u32 = (1 << 20) - 1;

/// Why a barrier array or a pipeline state is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MbarrierError {
    /// An array needs at least one barrier.
    #[error("mbarrier array `{name}` is empty")]
    Empty {
        /// The array.
        name: String,
    },
    /// Arrival counts are `1..=2^20 - 1`.
    #[error("mbarrier `{name}[{index}]`: arrival count {count} is outside 1..={max}", max = MAX_ARRIVAL_COUNT)]
    Count {
        /// The array.
        name: String,
        /// The barrier.
        index: usize,
        /// The count.
        count: u32,
    },
    /// The index is past the end of the array.
    #[error("mbarrier `{name}` has {len} barriers, no index {index}")]
    Index {
        /// The array.
        name: String,
        /// The index.
        index: u32,
        /// The length.
        len: u32,
    },
    /// The region does not hold 8 bytes per barrier at an 8-byte-aligned offset.
    #[error("region `{name}` does not hold {count} aligned 8-byte mbarriers")]
    Region {
        /// The region.
        name: String,
        /// The barrier count.
        count: usize,
    },
    /// A ring needs at least one stage.
    #[error("a pipeline ring needs at least one stage")]
    NoStages,
}

/// The size and alignment of one mbarrier object: a 64-bit value in shared memory (PTX ISA
/// 9.7.13.15.1 "Size and alignment of mbarrier object"). An array holds them back to back.
pub const MBARRIER_BYTES: u32 = 8;

/// N mbarriers allocated in a pool, with their init counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MbarrierArray {
    region: Region,
    counts: Vec<u32>,
}

impl MbarrierArray {
    pub(crate) fn check_counts(name: &str, counts: &[u32]) -> Result<(), MbarrierError> {
        if counts.is_empty() {
            return Err(MbarrierError::Empty {
                name: name.to_string(),
            });
        }
        for (index, &count) in counts.iter().enumerate() {
            if count == 0 || count > MAX_ARRIVAL_COUNT {
                return Err(MbarrierError::Count {
                    name: name.to_string(),
                    index,
                    count,
                });
            }
        }
        Ok(())
    }

    /// Wraps a region of `8 * counts.len()` bytes at an 8-byte-aligned offset.
    pub fn new(region: Region, counts: Vec<u32>) -> Result<MbarrierArray, MbarrierError> {
        MbarrierArray::check_counts(&region.name, &counts)?;
        if region.offset % 8 != 0 || region.bytes as usize != counts.len() * 8 {
            return Err(MbarrierError::Region {
                name: region.name.clone(),
                count: counts.len(),
            });
        }
        Ok(MbarrierArray { region, counts })
    }

    /// The region holding the barriers.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// How many barriers.
    pub fn len(&self) -> u32 {
        self.counts.len() as u32
    }

    /// Always false: arrays are never empty.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    fn index(&self, i: u32) -> Result<usize, MbarrierError> {
        if i < self.len() {
            Ok(i as usize)
        } else {
            Err(MbarrierError::Index {
                name: self.region.name.clone(),
                index: i,
                len: self.len(),
            })
        }
    }

    /// The byte offset of barrier `i` in its storage.
    pub fn offset(&self, i: u32) -> Result<u32, MbarrierError> {
        Ok(self.region.offset + MBARRIER_BYTES * self.index(i)? as u32)
    }

    /// The expected arrival count barrier `i` is initialised with.
    pub fn init_count(&self, i: u32) -> Result<u32, MbarrierError> {
        Ok(self.counts[self.index(i)?])
    }

    /// The array's name (its region's).
    pub fn name(&self) -> &str {
        &self.region.name
    }

    /// The name of barrier `i` as diagnostics write it: `main.full[2]` (a single barrier has no
    /// index).
    pub fn barrier_name(
        &self,
        i: u32,
    ) -> Result<crate::pipeline::protocol::BarrierName, MbarrierError> {
        self.index(i)?;
        Ok(crate::pipeline::protocol::BarrierName {
            array: self.region.name.clone(),
            index: (self.len() > 1).then_some(i),
        })
    }

    /// `(offset, init count)` of every barrier, for emitting the `mbarrier.init`s.
    pub fn inits(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, &c)| (self.region.offset + MBARRIER_BYTES * i as u32, c))
    }
}

/// A position in a ring of `stages` buffers: the stage index and the parity to wait on.
///
/// ```
/// use smem::mbarrier::PipelineState;
/// let mut s = PipelineState::consumer(2).unwrap();
/// let seen: Vec<_> = (0..5).map(|_| { let p = (s.index(), s.phase()); s.advance(); p }).collect();
/// assert_eq!(seen, [(0, 0), (1, 0), (0, 1), (1, 1), (0, 0)]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PipelineState {
    stages: u32,
    index: u32,
    phase: u32,
}

impl PipelineState {
    /// The consumer's start: stage 0, waiting on the full barrier with parity 0.
    pub fn consumer(stages: u32) -> Result<PipelineState, MbarrierError> {
        PipelineState::start(stages, 0)
    }

    /// The producer's start: stage 0, waiting on the empty barrier with parity 1, which a fresh
    /// barrier passes at once (every buffer starts empty).
    pub fn producer(stages: u32) -> Result<PipelineState, MbarrierError> {
        PipelineState::start(stages, 1)
    }

    fn start(stages: u32, phase: u32) -> Result<PipelineState, MbarrierError> {
        if stages == 0 {
            return Err(MbarrierError::NoStages);
        }
        Ok(PipelineState {
            stages,
            index: 0,
            phase,
        })
    }

    /// The number of stages in the ring.
    pub fn stages(&self) -> u32 {
        self.stages
    }

    /// The current stage.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The parity to pass to `mbarrier.try_wait.parity` for the current stage (0 or 1).
    pub fn phase(&self) -> u32 {
        self.phase
    }

    /// Moves to the next stage; the parity flips each time the ring wraps.
    pub fn advance(&mut self) {
        self.index += 1;
        if self.index == self.stages {
            self.index = 0;
            self.phase ^= 1;
        }
    }
}

/// A pure model of one mbarrier's phase logic: arrivals, transaction bytes and parity waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MbarrierModel {
    expected: u32,
    pending: u32,
    tx: i64,
    phase: u64,
}

impl MbarrierModel {
    /// `mbarrier.init` with `count` expected arrivals.
    pub fn new(count: u32) -> MbarrierModel {
        MbarrierModel {
            expected: count,
            pending: count,
            tx: 0,
            phase: 0,
        }
    }

    /// How many phases have completed.
    pub fn completed_phases(&self) -> u64 {
        self.phase
    }

    /// `mbarrier.expect_tx`: the current phase also waits for `bytes` transaction bytes.
    pub fn expect_tx(&mut self, bytes: u32) {
        self.tx += i64::from(bytes);
    }

    /// The async proxy (TMA) delivered `bytes`; may complete the phase.
    pub fn complete_tx(&mut self, bytes: u32) {
        self.tx -= i64::from(bytes);
        self.try_complete();
    }

    /// `mbarrier.arrive`; returns whether this arrival completed the phase.
    pub fn arrive(&mut self) -> bool {
        self.pending = self.pending.saturating_sub(1);
        self.try_complete()
    }

    /// `mbarrier.arrive.expect_tx`: announce `bytes`, then arrive.
    pub fn arrive_expect_tx(&mut self, bytes: u32) -> bool {
        self.expect_tx(bytes);
        self.arrive()
    }

    fn try_complete(&mut self) -> bool {
        if self.pending == 0 && self.tx == 0 {
            self.phase += 1;
            self.pending = self.expected;
            true
        } else {
            false
        }
    }

    /// `mbarrier.test_wait.parity parity`: true once the phase with that parity has completed,
    /// i.e. while the current phase's parity differs.
    pub fn test_wait_parity(&self, parity: u32) -> bool {
        (self.phase & 1) as u32 != (parity & 1)
    }
}

/// One step of the full/empty protocol on a ring of stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RingStep {
    /// The iteration (k-block) number.
    pub iteration: u64,
    /// The stage it uses.
    pub stage: u32,
    /// The parity the producer waits on the stage's empty barrier with.
    pub empty_parity: u32,
    /// The parity the consumer waits on the stage's full barrier with.
    pub full_parity: u32,
}

/// The first `iterations` steps of the protocol on `stages` stages: stage `i % stages`, full
/// parity `(i / stages) & 1`, empty parity its complement.
pub fn ring_sequence(stages: u32, iterations: u64) -> Result<Vec<RingStep>, MbarrierError> {
    let mut producer = PipelineState::producer(stages)?;
    let mut consumer = PipelineState::consumer(stages)?;
    let mut out = Vec::new();
    for iteration in 0..iterations {
        out.push(RingStep {
            iteration,
            stage: consumer.index(),
            empty_parity: producer.phase(),
            full_parity: consumer.phase(),
        });
        producer.advance();
        consumer.advance();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_barrier_parities() {
        let mut b = MbarrierModel::new(2);
        assert!(b.test_wait_parity(1) && !b.test_wait_parity(0));
        assert!(!b.arrive());
        assert!(b.arrive());
        assert!(b.test_wait_parity(0) && !b.test_wait_parity(1));
        assert_eq!(b.completed_phases(), 1);
    }

    #[test]
    fn tx_bytes_hold_the_phase() {
        let mut b = MbarrierModel::new(1);
        assert!(!b.arrive_expect_tx(4096));
        b.complete_tx(2048);
        assert!(!b.test_wait_parity(0));
        b.complete_tx(2048);
        assert!(b.test_wait_parity(0));
    }

    /// The documented rule, for rings of 1 to 6 stages over 4 trips round: stage `i % stages`,
    /// full parity `(i / stages) & 1`, empty parity its complement. On 3 stages the fourth step
    /// is stage 0 again, in phase 1: `(0, 0, 1)`.
    #[test]
    fn ring_sequence_values() {
        for stages in 1..=6u32 {
            let seq = ring_sequence(stages, u64::from(4 * stages)).unwrap();
            for (i, s) in (0u32..).zip(&seq) {
                let phase = (i / stages) & 1;
                let got = (s.stage, s.empty_parity, s.full_parity);
                assert_eq!(
                    got,
                    (i % stages, phase ^ 1, phase),
                    "{stages} stages, step {i}"
                );
            }
        }
        let fourth = ring_sequence(3, 7).unwrap()[3];
        assert_eq!(
            (fourth.stage, fourth.empty_parity, fourth.full_parity),
            (0, 0, 1)
        );
        assert_eq!(ring_sequence(0, 1), Err(MbarrierError::NoStages));
    }
}
