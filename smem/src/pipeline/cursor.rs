//! A side's position in a pipeline's ring at run time: the register form of
//! [`crate::mbarrier::PipelineState`] (the stage index and the phase each wait uses), for a
//! kernel whose loop trip counts are only known when it runs.
//!
//! ```
//! use ptx_isa::{Module, Target};
//! use smem::pipeline::cursor::{Phase, RingCursor};
//! let mut m = Module::new(Target::Sm90a);
//! let mut k = m.entry("k");
//! let ring = RingCursor::new(&mut k, 3, Phase::Parity)?; // mov stage, 0; mov phase, 0
//! ring.advance(&mut k)?; // stage + 1, wrapping to 0 with the parity flipped
//! k.ret()?;
//! m.add(k.finish()?)?;
//! let text = m.to_ptx()?;
//! assert!(text.contains("setp.eq.u32 %p0, %r0, 3;\n\t@%p0 mov.u32 %r0, 0;\n\t@%p0 xor.b32 %r1, %r1, 1;"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ptx_isa::builder::CmpOp;
use ptx_isa::{ErrorKind, FunctionBuilder, Reg, ty};

/// What a [`RingCursor`]'s phase register holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The parity to wait on (0 or 1), flipped each time the ring wraps: a consumer's wait on
    /// "full".
    Parity,
    /// The laps completed round the ring (its parity is bit 0): a debug build's hang records
    /// read the trip from it ([`super::sync::BarrierSync::count_laps`]) at no register's cost.
    Laps,
}

/// The stage and phase registers of one side of a ring of `stages` buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingCursor {
    stages: u32,
    stage: Reg<ty::U32>,
    phase: Reg<ty::U32>,
    kind: Phase,
}

impl RingCursor {
    /// Stage 0, phase 0: `mov` of both registers. A ring of no stages is an error.
    pub fn new(k: &mut FunctionBuilder, stages: u32, kind: Phase) -> ptx_isa::Result<RingCursor> {
        if stages == 0 {
            return Err(ptx_isa::Error::new(
                ErrorKind::Invalid,
                "a pipeline ring needs at least one stage",
            )
            .in_function(k.name()));
        }
        let (stage, phase) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.mov(stage, 0u32)?;
        k.mov(phase, 0u32)?;
        Ok(RingCursor {
            stages,
            stage,
            phase,
            kind,
        })
    }

    /// The register holding the current stage.
    pub fn stage(&self) -> Reg<ty::U32> {
        self.stage
    }

    /// The register holding the phase ([`Phase`] says what it counts).
    pub fn phase(&self) -> Reg<ty::U32> {
        self.phase
    }

    /// The parity a producer waits on "empty" with, `(phase + 1) & 1`: a fresh barrier counts as
    /// having completed the phase before its first (parity 1), so every buffer starts empty (PTX
    /// ISA 9.7.13.15.16 "mbarrier.test_wait/try_wait"), as [`crate::mbarrier::PipelineState`]'s
    /// producer starts.
    pub fn producer_parity(&self, k: &mut FunctionBuilder) -> ptx_isa::Result<Reg<ty::U32>> {
        let want = k.reg::<ty::U32>();
        k.xor(want, self.phase, 1u32)?;
        k.and(want, want, 1u32)?;
        Ok(want)
    }

    /// The next stage: `stage + 1`, wrapping to 0 after the last, when the phase flips its
    /// parity ([`Phase::Parity`]) or counts the lap ([`Phase::Laps`]).
    pub fn advance(&self, k: &mut FunctionBuilder) -> ptx_isa::Result<()> {
        k.add(self.stage, self.stage, 1u32)?;
        let wrap = k.pred();
        k.setp(CmpOp::Eq, wrap, self.stage, self.stages)?;
        k.when(wrap).mov(self.stage, 0u32)?;
        match self.kind {
            Phase::Laps => k.when(wrap).add(self.phase, self.phase, 1u32),
            Phase::Parity => k.when(wrap).xor(self.phase, self.phase, 1u32),
        }
    }

    /// Moves one whole lap on: the same stage, the phase flipped ([`Phase::Parity`]) or the lap
    /// counted ([`Phase::Laps`]). For a side that always uses one stage of the ring, the one in
    /// its `stage` register (a GEMM consumer warpgroup and its own C staging block): each use is
    /// the next phase of that stage's barriers.
    pub fn lap(&self, k: &mut FunctionBuilder) -> ptx_isa::Result<()> {
        match self.kind {
            Phase::Laps => k.add(self.phase, self.phase, 1u32),
            Phase::Parity => k.xor(self.phase, self.phase, 1u32),
        }
    }

    /// Moves `steps` stages on at once (the stages another side consumes, as consumers that
    /// take turns at a ring's tiles pass each other's): the stage becomes `(stage + steps) %
    /// stages`, and the phase flips once per wrap ([`Phase::Parity`]: by the parity of the
    /// wraps) or counts them ([`Phase::Laps`]).
    pub fn skip(&self, k: &mut FunctionBuilder, steps: Reg<ty::U32>) -> ptx_isa::Result<()> {
        let (at, wraps) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.add(at, self.stage, steps)?;
        k.div(wraps, at, self.stages)?;
        k.rem(self.stage, at, self.stages)?;
        match self.kind {
            Phase::Laps => k.add(self.phase, self.phase, wraps),
            Phase::Parity => {
                k.and(wraps, wraps, 1u32)?;
                k.xor(self.phase, self.phase, wraps)
            }
        }
    }
}
