//! The full/empty protocol, run on the pure mbarrier model under random interleavings: the
//! consumer only reads filled stages, in order; the producer never refills a stage before it is
//! consumed; and someone can always make progress.

use proptest::prelude::*;
use smem::mbarrier::{MbarrierModel, PipelineState, ring_sequence};

/// One side's attempt to move: the producer's or the consumer's.
type Step = fn(&mut Ring, u32) -> bool;

struct Ring {
    full: Vec<MbarrierModel>,
    empty: Vec<MbarrierModel>,
    data: Vec<Option<u64>>,
    producer: PipelineState,
    consumer: PipelineState,
    produced: u64,
    consumed: u64,
}

impl Ring {
    fn new(stages: u32, consumers: u32) -> Ring {
        Ring {
            full: (0..stages).map(|_| MbarrierModel::new(1)).collect(),
            empty: (0..stages).map(|_| MbarrierModel::new(consumers)).collect(),
            data: vec![None; stages as usize],
            producer: PipelineState::producer(stages).unwrap(),
            consumer: PipelineState::consumer(stages).unwrap(),
            produced: 0,
            consumed: 0,
        }
    }

    /// The producer's step if its wait passes: fill the stage, arm `full` with TMA bytes.
    fn try_produce(&mut self, tx: u32) -> bool {
        let s = self.producer.index() as usize;
        if !self.empty[s].test_wait_parity(self.producer.phase()) {
            return false;
        }
        assert!(
            self.data[s].is_none(),
            "producer overwrote unconsumed stage {s}"
        );
        self.full[s].arrive_expect_tx(tx);
        self.data[s] = Some(self.produced);
        self.full[s].complete_tx(tx);
        self.produced += 1;
        self.producer.advance();
        true
    }

    /// The consumer's step if its wait passes: read the stage, release it with `consumers`
    /// arrivals on `empty`.
    fn try_consume(&mut self, consumers: u32) -> bool {
        let s = self.consumer.index() as usize;
        if !self.full[s].test_wait_parity(self.consumer.phase()) {
            return false;
        }
        let v = self.data[s].take();
        assert_eq!(
            v,
            Some(self.consumed),
            "consumer read stage {s} out of order or unfilled"
        );
        for _ in 0..consumers {
            self.empty[s].arrive();
        }
        self.consumed += 1;
        self.consumer.advance();
        true
    }
}

proptest! {
    #[test]
    fn protocol_is_safe_and_live(stages in 1u32..6, consumers in 1u32..4, schedule in proptest::collection::vec(any::<bool>(), 1..300)) {
        let mut ring = Ring::new(stages, consumers);
        for producer_first in schedule {
            // Try one side first; if it must wait, the other side must be able to move.
            let (first, second): (Step, Step) = if producer_first {
                (|r, _| r.try_produce(4096), |r, c| r.try_consume(c))
            } else {
                (|r, c| r.try_consume(c), |r, _| r.try_produce(4096))
            };
            let progressed = first(&mut ring, consumers) || second(&mut ring, consumers);
            prop_assert!(progressed, "deadlock after {} produced, {} consumed", ring.produced, ring.consumed);
            prop_assert!(ring.produced - ring.consumed <= u64::from(stages));
        }
    }

    #[test]
    fn ring_sequence_matches_the_states(stages in 1u32..9, n in 0u64..200) {
        let seq = ring_sequence(stages, n).unwrap();
        for s in &seq {
            prop_assert_eq!(u64::from(s.stage), s.iteration % u64::from(stages));
            prop_assert_eq!(u64::from(s.full_parity), (s.iteration / u64::from(stages)) & 1);
            prop_assert_eq!(s.empty_parity, s.full_parity ^ 1);
        }
    }
}
