//! Hang diagnosis: which of the waits that gave up is the cause, and which are stuck behind it.
//!
//! Every warp of a hung pipeline gives up within one bound of the others, so the order in time
//! says nothing. The protocol does: each wait site knows what its thread does after it (the
//! barrier arrays it arrives on, announces bytes on or copies onto before its next wait), and
//! a record knows its thread's trip round the ring: the producer counts its trips on the device;
//! a consumer's trip is inferred from its producer's. A producer stuck on trip `P` has seen the
//! release of trip `P - stages - 1`, so every consumer got past trip `P - stages - 1`, and none
//! got past `P`: the consumer is on the one trip of `P - stages ..= P` with its stage and the
//! parity it waits on (`trip % stages`, `trip / stages % 2`); when there is none, the consumer
//! waits on the wrong phase.
//!
//! For a stuck wait on barrier `B`, the records whose sites act on `B` afterwards are its
//! arrivers; if one of them is itself stuck on a trip that has not yet made the arrival this
//! wait needs (or on a trip not known), the wait is downstream of that one. A wait none of whose
//! arrivers is stuck short of its part is a cause, and the build-time facts of its barrier say
//! which kind:
//!
//! - **wrong phase**: a ring wait whose parity is not the one its role uses on that trip. The
//!   consumer of a barrier that carries bytes waits on parity `(trip / stages) % 2`; the producer
//!   (the thread that announces bytes after its wait) waits on the release of the stage's
//!   previous use, the other parity, which a fresh barrier passes at once (PTX ISA
//!   9.7.13.15.16: `test_wait.parity` "indicates whether the phase ... of the given parity has
//!   completed"; a fresh barrier is in phase 0, so parity 1 reads as complete).
//! - **wrong expect_tx**: its arrivers got past their part, and the bytes announced with
//!   `expect_tx` differ from what the copies completing on it deliver: the tx-count never returns
//!   to zero (PTX ISA 9.7.13.15.1, phase completion needs a pending count and a tx-count of 0).
//! - **missing arrive**: its arrivers got past their part, and they arrive fewer times per phase
//!   than the barrier's init count.
//! - **stalled**: its arrivers got past their part and the build-time counts agree: something the
//!   protocol does not see (a faulting copy, an arrival skipped at run time).
//!
//! ```
//! use ptxkit::runtime::{Cause, HangDiagnosis, HangReport, Trip};
//! use smem::pipeline::hang::HangSite;
//! use smem::pipeline::protocol::BarrierName;
//! let site = |array: &str, expect_tx, then: &str, then_tx| HangSite {
//!     array: array.into(), indexed: true, stages: 2, expect_tx, copied: expect_tx.min(4096),
//!     arrivals: if then_tx { 2 } else { 1 }, arrive_ops: if then_tx { 2 } else { 1 },
//!     then: vec![then.into()], then_tx, ptx_line: None,
//! };
//! let wait = |warp, array: &str, progress, site: HangSite| HangReport {
//!     kernel: "ring".into(), barrier: BarrierName { array: array.into(), index: Some(0) },
//!     parity: 0, cta: [0; 3], cluster: [0; 3], cluster_rank: 0, warp, lane: 0,
//!     bound_ns: 500_000_000, waited_ns: 500_000_000, started_ns: 0, trip: progress,
//!     observed: None, site,
//! };
//! // The producer (warp 0) has armed full[0] for 5120 bytes and moved on to its third trip; the
//! // consumer (warp 1) still waits on full[0]: the consumer's wait is the cause.
//! let d = HangDiagnosis::new(vec![
//!     wait(0, "empty", Some(Trip::Counted(2)), site("empty", 0, "full", true)),
//!     wait(1, "full", None, site("full", 5120, "empty", false)),
//! ]);
//! let root = d.root.as_ref().unwrap();
//! assert_eq!(root.cause, Cause::TxMismatch { expect_tx: 5120, copied: 4096 });
//! assert_eq!(d.waits[root.wait].warp, 1);
//! assert_eq!(d.waits[root.wait].trip, Some(Trip::Inferred(0)));
//! assert!(d.to_string().starts_with("hang in `ring`: wrong expect_tx: `full[0]` phase 0"));
//! ```

use std::fmt;

use super::hang::{HangReport, Trip, seconds};

/// Why a wait is the cause of a hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A ring wait on the parity its role does not use on that trip.
    WrongPhase {
        /// The parity its role waits on, on that trip.
        expected: u32,
    },
    /// The bytes announced per phase differ from the bytes the copies deliver.
    TxMismatch {
        /// Bytes announced with `expect_tx` per phase.
        expect_tx: u64,
        /// Bytes the copies completing on the barrier deliver per phase.
        copied: u64,
    },
    /// Fewer arrivals per phase than the barrier's init count.
    ArrivalsShort {
        /// The init count.
        expected: u32,
        /// The arrivals the kernel makes per phase.
        made: u64,
    },
    /// The arrivers got past their part, and the build-time counts agree.
    Stalled,
}

impl Cause {
    /// The order causes are preferred in when several waits are causes: a wrong phase explains
    /// the waits stuck on the other barriers of its ring, and a mismatch found at build time is
    /// surer than a stall.
    fn rank(self) -> u8 {
        match self {
            Cause::WrongPhase { .. } => 0,
            Cause::TxMismatch { .. } => 1,
            Cause::ArrivalsShort { .. } => 2,
            Cause::Stalled => 3,
        }
    }
}

/// The wait that caused a hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Root {
    /// Its index in [`HangDiagnosis::waits`].
    pub wait: usize,
    /// Why.
    pub cause: Cause,
}

/// Every wait of a launch that gave up, ordered by CTA and warp, and the one that caused the
/// hang (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HangDiagnosis {
    /// The records, by cluster, CTA and warp.
    pub waits: Vec<HangReport>,
    /// The cause, when the protocol names one.
    pub root: Option<Root>,
}

impl HangDiagnosis {
    /// Orders the records and finds the cause.
    pub fn new(mut waits: Vec<HangReport>) -> HangDiagnosis {
        waits.sort_by_key(|r| (r.cluster, r.cta, r.warp, r.lane, r.started_ns));
        for i in 0..waits.len() {
            if waits[i].trip.is_none() {
                waits[i].trip = inferred_trip(&waits, i).map(Trip::Inferred);
            }
        }
        let root = (0..waits.len())
            .filter_map(|i| cause(&waits, i).map(|cause| Root { wait: i, cause }))
            .min_by_key(|r| (r.cause.rank(), r.wait));
        HangDiagnosis { waits, root }
    }

    /// The wait that caused the hang, or else the first record.
    pub fn first(&self) -> Option<&HangReport> {
        self.root
            .and_then(|r| self.waits.get(r.wait))
            .or(self.waits.first())
    }
}

/// Whether `o` arrives on the barrier `w` waits on after its own wait, in the same CTA.
fn arrives_for(o: &HangReport, w: &HangReport) -> bool {
    o.cta == w.cta && o.cluster == w.cluster && o.site.then.contains(&w.site.array)
}

/// The counted trip of the producer that arms the ring barrier wait `i` is on (a consumer's
/// wait), if its record is there.
fn producer_trip(waits: &[HangReport], i: usize) -> Option<u32> {
    let w = &waits[i];
    if !(w.site.indexed && carries_bytes(w)) {
        return None;
    }
    waits.iter().enumerate().find_map(|(j, o)| match o.trip {
        Some(Trip::Counted(t)) if j != i && o.site.then_tx && arrives_for(o, w) => Some(t),
        _ => None,
    })
}

/// A consumer's trip (module docs): the one trip of `P - stages ..= P` with its stage and
/// parity, `P` its producer's trip.
fn inferred_trip(waits: &[HangReport], i: usize) -> Option<u32> {
    let w = &waits[i];
    let p = producer_trip(waits, i)?;
    let stages = w.site.stages.max(1);
    let stage = w.barrier.index.unwrap_or(0);
    (p.saturating_sub(stages)..=p).find(|t| t % stages == stage && (t / stages) & 1 == w.parity)
}

/// The trip whose arrivals wait `w` needs (on a ring), or `None` when it is not a ring wait
/// or its trip is not known (then any stuck arriver holds it up).
fn needed_trip(w: &HangReport) -> Option<i64> {
    let trip = i64::from(w.trip?.value());
    let stages = i64::from(w.site.stages.max(1));
    if !w.site.indexed {
        None
    } else if carries_bytes(w) {
        // A consumer needs the producer's part of its own trip.
        Some(trip)
    } else if w.site.then_tx {
        // A producer needs the consumers' release of the stage's previous use.
        Some(trip - stages)
    } else {
        None
    }
}

/// Whether the barrier `w` waits on carries transaction bytes (a `full` barrier).
fn carries_bytes(w: &HangReport) -> bool {
    w.site.expect_tx > 0 || w.site.copied > 0
}

/// Why wait `i` is a cause, or `None` when it is stuck behind another wait.
fn cause(waits: &[HangReport], i: usize) -> Option<Cause> {
    let w = &waits[i];
    match w.trip {
        Some(trip) if w.site.indexed => {
            let lap = (trip.value() / w.site.stages.max(1)) & 1;
            let expected = if carries_bytes(w) {
                Some(lap)
            } else if w.site.then_tx {
                Some(lap ^ 1)
            } else {
                None
            };
            if let Some(expected) = expected.filter(|&e| e != w.parity) {
                return Some(Cause::WrongPhase { expected });
            }
        }
        // A consumer on no trip its producer's allows: the other parity is the one.
        None if producer_trip(waits, i).is_some() => {
            return Some(Cause::WrongPhase {
                expected: w.parity ^ 1,
            });
        }
        _ => {}
    }
    let need = needed_trip(w);
    let behind = waits.iter().enumerate().any(|(j, o)| {
        j != i
            && arrives_for(o, w)
            && match (need, o.trip) {
                (Some(n), Some(t)) => i64::from(t.value()) <= n,
                _ => true,
            }
    });
    if behind {
        None
    } else if w.site.expect_tx != w.site.copied {
        Some(Cause::TxMismatch {
            expect_tx: w.site.expect_tx,
            copied: w.site.copied,
        })
    } else if w.site.arrive_ops < u64::from(w.site.arrivals) {
        Some(Cause::ArrivalsShort {
            expected: w.site.arrivals,
            made: w.site.arrive_ops,
        })
    } else {
        Some(Cause::Stalled)
    }
}

/// `1 arrival`, `2 arrivals`.
fn arrivals(n: u64) -> String {
    format!("{n} arrival{}", if n == 1 { "" } else { "s" })
}

/// The headline of a cause: what is wrong, on which barrier.
fn headline(f: &mut fmt::Formatter<'_>, w: &HangReport, cause: Cause) -> fmt::Result {
    let [x, y, z] = w.cta;
    let who = format!("CTA ({x},{y},{z}) warp {} lane {}", w.warp, w.lane);
    let (b, p) = (&w.barrier, w.parity);
    match cause {
        Cause::WrongPhase { expected } => {
            write!(f, "wrong phase: a wait on `{b}` phase {p}")?;
            if let Some(t) = w.trip {
                write!(f, " on {t} round the ring")?;
            }
            write!(f, ", where its role waits on phase {expected}; {who} ")?
        }
        Cause::TxMismatch { expect_tx, copied } => write!(
            f,
            "wrong expect_tx: `{b}` phase {p} expects {expect_tx} tx bytes per phase but the \
             copies completing on it deliver {copied}, so it never completes; its arrivers got \
             past their part, and {who} "
        )?,
        Cause::ArrivalsShort { expected, made } => write!(
            f,
            "missing arrive: `{b}` phase {p} expects {} per phase but the kernel makes {made}, \
             so it never completes; its arrivers got past their part, and {who} ",
            arrivals(u64::from(expected))
        )?,
        Cause::Stalled => write!(
            f,
            "`{b}` phase {p} never completed although its arrivers got past their part and the \
             build-time counts agree (a faulting copy or an arrival skipped at run time?); {who} "
        )?,
    }
    write!(f, "waited > {}", seconds(w.bound_ns))
}

impl fmt::Display for HangDiagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.first() else {
            return f.write_str("hang: no record");
        };
        match self.root {
            Some(root) => {
                write!(f, "hang in `{}`: ", first.kernel)?;
                headline(f, first, root.cause)?;
                write!(f, " ({})", first.facts())?;
            }
            None => write!(f, "{first} (the protocol names no cause)")?,
        }
        // The rest, by barrier and phase: which CTAs and warps wait there.
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for (i, r) in self.waits.iter().enumerate() {
            if self.root.is_some_and(|root| root.wait == i) {
                continue;
            }
            let key = format!("`{}` phase {} ({})", r.barrier, r.parity, r.expects());
            let [x, y, z] = r.cta;
            let mut who = format!("CTA ({x},{y},{z}) warp {}", r.warp);
            if let Some(t) = r.trip {
                who += &format!(" {t}");
            }
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(who),
                None => groups.push((key, vec![who])),
            }
        }
        // The cause's own barrier first: the others stuck on it, then the waits behind it.
        let own = format!("`{}` phase {} (", first.barrier, first.parity);
        groups.sort_by_key(|(key, _)| !key.starts_with(&own));
        if !groups.is_empty() {
            write!(
                f,
                "\n  {} more warp(s) gave up, stuck behind it:",
                self.waits.len() - 1
            )?;
            for (key, who) in groups {
                write!(f, "\n    on {key}: {}", who.join(", "))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::hang::fixtures;
    use smem::pipeline::hang::HangSite;
    use smem::pipeline::protocol::BarrierName;

    /// The planted-bug ring's sites (2 stages; the producer waits on `empty` and arms `full`,
    /// the consumers wait on `full` and release `empty`), with `full`'s build-time facts.
    fn sites(expect_tx: u64, full_arrive_ops: u64) -> (HangSite, HangSite) {
        (
            fixtures::producer(40),
            fixtures::consumer(expect_tx, full_arrive_ops, 90),
        )
    }

    fn wait(cta: u32, warp: u32, parity: u32, trip: Option<Trip>, site: &HangSite) -> HangReport {
        HangReport {
            kernel: "ring".into(),
            barrier: BarrierName {
                array: site.array.clone(),
                index: Some(0),
            },
            parity,
            cta: [cta, 0, 0],
            cluster: [cta, 0, 0],
            cluster_rank: 0,
            warp,
            lane: 0,
            bound_ns: 500_000_000,
            waited_ns: 500_000_000,
            // All give up together; the producer's record even claims the earliest start.
            started_ns: if warp == 0 { 0 } else { 1000 },
            trip,
            observed: Some(crate::runtime::ObservedPhase::InPhase(parity)),
            site: site.clone(),
        }
    }

    /// The records of both CTAs as the GPU writes them: the producer (warp 0, its trips
    /// counted) stuck on `empty[0]` with `parity` on trip `producer_trip`, the consumers (warps
    /// 1, 2, not counted) on `full[0]` phase 0.
    fn ring(sites: &(HangSite, HangSite), parity: u32, producer_trip: u32) -> Vec<HangReport> {
        let counted = Some(Trip::Counted(producer_trip));
        (0..2)
            .flat_map(|cta| {
                [
                    wait(cta, 2, 0, None, &sites.1),
                    wait(cta, 0, parity, counted, &sites.0),
                    wait(cta, 1, 0, None, &sites.1),
                ]
            })
            .collect()
    }

    #[test]
    fn wrong_expect_tx_names_full_and_its_bytes() {
        let d = HangDiagnosis::new(ring(&sites(5120, 1), 0, 2));
        let root = d.root.unwrap();
        assert_eq!(root.cause, fixtures::tx_mismatch(5120));
        let w = &d.waits[root.wait];
        assert_eq!(
            (w.cta, w.warp, w.barrier.to_string(), w.trip),
            ([0, 0, 0], 1, "full[0]".into(), Some(Trip::Inferred(0)))
        );
        let text = d.to_string();
        assert!(
            text.starts_with(
                "hang in `ring`: wrong expect_tx: `full[0]` phase 0 expects 5120 tx bytes per \
                 phase but the copies completing on it deliver 4096, so it never completes; its \
                 arrivers got past their part, and CTA (0,0,0) warp 1 lane 0 waited > 500 ms \
                 (expects 5120 tx bytes, 1 arrival; trip 0 (inferred); observed in phase 0; \
                 cluster (0,0,0) rank 0; PTX line 90)"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "5 more warp(s) gave up, stuck behind it:\n    on `full[0]` phase 0 (expects \
                 5120 tx bytes, 1 arrival): CTA (0,0,0) warp 2 trip 0 (inferred), CTA (1,0,0) \
                 warp 1 trip 0 (inferred), CTA (1,0,0) warp 2 trip 0 (inferred)\n    on \
                 `empty[0]` phase 0 (expects 2 arrivals): CTA (0,0,0) warp 0 trip 2, CTA (1,0,0) \
                 warp 0 trip 2"
            ),
            "{text}"
        );
    }

    #[test]
    fn missing_arrive_names_full_and_its_arrivals() {
        let d = HangDiagnosis::new(ring(&sites(4096, 0), 0, 2));
        let root = d.root.unwrap();
        assert_eq!(
            root.cause,
            Cause::ArrivalsShort {
                expected: 1,
                made: 0
            }
        );
        assert_eq!(d.waits[root.wait].barrier.to_string(), "full[0]");
        assert!(
            d.to_string().starts_with(
                "hang in `ring`: missing arrive: `full[0]` phase 0 expects 1 arrival per phase \
                 but the kernel makes 0"
            ),
            "{d}"
        );
    }

    #[test]
    fn wrong_phase_names_the_waiter() {
        // The producer waits on parity 0 on its first trip: the phase its own loads feed.
        let d = HangDiagnosis::new(ring(&sites(4096, 1), 0, 0));
        let root = d.root.unwrap();
        assert_eq!(root.cause, Cause::WrongPhase { expected: 1 });
        let w = &d.waits[root.wait];
        assert_eq!((w.warp, w.barrier.to_string()), (0, "empty[0]".into()));
        assert!(
            d.to_string().starts_with(
                "hang in `ring`: wrong phase: a wait on `empty[0]` phase 0 on trip 0 round the \
                 ring, where its role waits on phase 1; CTA (0,0,0) warp 0 lane 0 waited > 500 \
                 ms (expects 2 arrivals; trip 0;"
            ),
            "{d}"
        );
        // A consumer on a parity no trip its producer allows: the producer (trip 0, parity 1,
        // right) has not filled stage 0 twice, so warp 2's parity 1 is the wrong one.
        let mut waits = ring(&sites(4096, 1), 1, 0);
        for w in &mut waits {
            if w.warp == 2 {
                w.parity = 1;
            }
        }
        let d = HangDiagnosis::new(waits);
        let root = d.root.unwrap();
        assert_eq!(root.cause, Cause::WrongPhase { expected: 0 });
        assert_eq!(
            (d.waits[root.wait].warp, d.waits[root.wait].trip),
            (2, None)
        );
        assert!(
            d.to_string()
                .contains("a wait on `full[0]` phase 1, where its role waits on phase 0; CTA"),
            "{d}"
        );
    }

    #[test]
    fn waits_no_stuck_thread_feeds_are_causes() {
        let s = sites(4096, 1);
        // The producer waits for the release of trip 0 (parity 0 on trip 2); a thread that
        // arrives on `empty` after a wait of its own is stuck there: the producer is behind it,
        // and that wait, which nothing stuck arrives on, is the cause (its counts agree: a stall).
        let other = HangSite {
            array: "other".into(),
            then: vec!["empty".into()],
            ..HangSite::default()
        };
        let d = HangDiagnosis::new(vec![
            wait(0, 0, 0, Some(Trip::Counted(2)), &s.0),
            wait(0, 1, 0, None, &other),
        ]);
        assert_eq!(
            d.root,
            Some(Root {
                wait: 1,
                cause: Cause::Stalled
            })
        );
        // A lone producer whose consumers all got past the release it needs: a stall of
        // `empty`, named as such.
        let d = HangDiagnosis::new(vec![wait(0, 0, 0, Some(Trip::Counted(2)), &s.0)]);
        assert_eq!(d.root.map(|r| r.cause), Some(Cause::Stalled));
        assert!(
            d.to_string()
                .contains("`empty[0]` phase 0 never completed although"),
            "{d}"
        );
        assert_eq!(
            HangDiagnosis::new(Vec::new()).to_string(),
            "hang: no record"
        );
    }

    #[test]
    fn consumers_trips_follow_from_the_producers() {
        // 4 stages, the producer stuck on trip 9: every consumer is on a trip of 5..=9, the one
        // with its stage (trip % 4) and parity (trip / 4 % 2), if any.
        let mut s = sites(4096, 1);
        s.0.stages = 4;
        s.1.stages = 4;
        let on = |stage: u32, parity: u32| {
            let mut w = wait(0, 1, parity, None, &s.1);
            w.barrier.index = Some(stage);
            w
        };
        let producer = || {
            let mut w = wait(0, 0, 1, Some(Trip::Counted(9)), &s.0);
            w.barrier.index = Some(1);
            w
        };
        for (stage, parity, trip) in [
            (1, 0, Some(9)),
            (2, 1, Some(6)),
            (0, 0, Some(8)),
            (0, 1, None),
        ] {
            let d = HangDiagnosis::new(vec![producer(), on(stage, parity)]);
            assert_eq!(
                d.waits[1].trip,
                trip.map(Trip::Inferred),
                "{stage} {parity}"
            );
        }
    }
}
