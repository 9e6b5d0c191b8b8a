//! Barriers and fences (PTX ISA 9.7.13.1 "bar, barrier", 9.7.13.4 "membar/fence").

use super::FunctionBuilder;
use super::cmp::PredSrc;
use super::mem::Scope;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Operand, Src};
use crate::reg::{Pred, Reg, ty};
use crate::types::ScalarType;

/// The level of `membar` (PTX ISA 9.7.13.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierLevel {
    /// `.cta`
    Cta,
    /// `.gl`
    Gl,
    /// `.sys`
    Sys,
}

/// The semantics of `fence` (PTX ISA 9.7.13.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenceSem {
    /// `.sc`: sequentially consistent.
    Sc,
    /// `.acq_rel` (the default when none is written).
    AcqRel,
}

/// Hardware barriers are numbered 0..=15 (PTX ISA 9.7.13.1).
const MAX_BARRIER: u64 = 15;

impl FunctionBuilder {
    fn barrier_id(
        &mut self,
        mn: &str,
        id: Src<ty::U32>,
        count: Option<Src<ty::U32>>,
    ) -> Result<()> {
        if let Src::Imm(Imm::UInt(n)) = id {
            if n > MAX_BARRIER {
                return Err(self
                    .err(
                        ErrorKind::ImmediateRange,
                        mn,
                        format!("barrier {n} is outside 0..=15"),
                    )
                    .at_operand(0));
            }
        }
        if let Some(Src::Imm(Imm::UInt(n))) = count {
            if n == 0 || n % 32 != 0 {
                return Err(self
                    .err(
                        ErrorKind::ImmediateRange,
                        mn,
                        format!("thread count {n} is not a positive multiple of 32"),
                    )
                    .at_operand(1));
            }
        }
        Ok(())
    }

    /// Writes `opcode {d, }id{, count}{, c}` as `form` once the barrier number and the thread count
    /// are in range (PTX ISA 9.7.13.1): the operand shape of every `bar` and `barrier` form but
    /// `bar.warp.sync`.
    fn write_barrier(
        &mut self,
        form: Form,
        opcode: Instruction,
        d: Option<Operand>,
        (id, count): (Src<ty::U32>, Option<Src<ty::U32>>),
        c: Option<PredSrc>,
    ) -> Result<()> {
        self.barrier_id(&opcode.opcode(), id, count)?;
        let mut i = opcode;
        i.operands.extend(d);
        i.operands.push(id.into());
        i.operands.extend(count.map(Operand::from));
        i.operands.extend(c.map(Operand::from));
        self.emit(form, i)
    }

    /// `bar.sync id{, count}`: wait at barrier `id` (0 is `__syncthreads`) for `count` threads
    /// (a multiple of 32; all threads of the CTA when omitted).
    pub fn bar_sync(
        &mut self,
        id: impl Into<Src<ty::U32>>,
        count: Option<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("bar.sync");
        self.write_barrier(Form::BarSync, i, None, (id.into(), count), None)
    }

    /// `bar.warp.sync membermask`: the lanes in `membermask` wait for each other and their
    /// memory accesses before it are ordered before those after it (PTX ISA 9.7.13.2; `__syncwarp`).
    /// The executing lane must be in the mask.
    pub fn bar_warp_sync(&mut self, membermask: impl Into<Src<ty::U32>>) -> Result<()> {
        let i = Instruction::from_opcode("bar.warp.sync").operand(membermask.into());
        self.emit(Form::BarWarpSync, i)
    }

    /// `bar.arrive id, count`: arrive at barrier `id` without waiting.
    pub fn bar_arrive(
        &mut self,
        id: impl Into<Src<ty::U32>>,
        count: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("bar.arrive");
        let place = (id.into(), Some(count.into()));
        self.write_barrier(Form::BarArrive, i, None, place, None)
    }

    /// `bar.red.popc.u32 d, id{, count}, {!}c`: barrier and count of threads whose `c` holds.
    pub fn bar_red_popc(
        &mut self,
        d: Reg<ty::U32>,
        id: impl Into<Src<ty::U32>>,
        count: Option<Src<ty::U32>>,
        c: impl Into<PredSrc>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("bar.red.popc").ty(ScalarType::U32);
        let (d, c) = (Some(d.into()), Some(c.into()));
        self.write_barrier(Form::BarRedPopc, i, d, (id.into(), count), c)
    }

    /// `bar.red.and.pred` / `bar.red.or.pred p, id{, count}, {!}c`: barrier and reduction of `c`.
    pub fn bar_red_pred(
        &mut self,
        or: bool,
        p: Pred,
        id: impl Into<Src<ty::U32>>,
        count: Option<Src<ty::U32>>,
        c: impl Into<PredSrc>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("bar.red")
            .modifier(if or { "or" } else { "and" })
            .ty(ScalarType::Pred);
        let (p, c) = (Some(p.into()), Some(c.into()));
        self.write_barrier(Form::BarRedPred, i, p, (id.into(), count), c)
    }

    /// `barrier.sync{.aligned} id{, count}`: like `bar.sync` (which is `barrier.sync.aligned`), but
    /// without `.aligned` divergent threads may take part.
    pub fn barrier_sync(
        &mut self,
        aligned: bool,
        id: impl Into<Src<ty::U32>>,
        count: Option<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("barrier.sync").modifier_if(aligned, "aligned");
        self.write_barrier(Form::BarrierSync, i, None, (id.into(), count), None)
    }

    /// `barrier.arrive{.aligned} id, count`.
    pub fn barrier_arrive(
        &mut self,
        aligned: bool,
        id: impl Into<Src<ty::U32>>,
        count: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("barrier.arrive").modifier_if(aligned, "aligned");
        let place = (id.into(), Some(count.into()));
        self.write_barrier(Form::BarrierArrive, i, None, place, None)
    }

    /// `membar.level`.
    pub fn membar(&mut self, level: BarrierLevel) -> Result<()> {
        let l = match level {
            BarrierLevel::Cta => "cta",
            BarrierLevel::Gl => "gl",
            BarrierLevel::Sys => "sys",
        };
        self.emit(Form::Membar, Instruction::new("membar").modifier(l))
    }

    /// `fence{.sem}.scope`.
    pub fn fence(&mut self, sem: Option<FenceSem>, scope: Scope) -> Result<()> {
        let mut i = Instruction::new("fence");
        if let Some(s) = sem {
            i = i.modifier(match s {
                FenceSem::Sc => "sc",
                FenceSem::AcqRel => "acq_rel",
            });
        }
        let form = if scope == Scope::Cluster {
            Form::FenceCluster
        } else {
            Form::Fence
        };
        self.emit(form, i.modifier(scope.name()))
    }
}
