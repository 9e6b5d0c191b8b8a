//! Warp-level instructions: shfl.sync (PTX ISA 9.7.9.6), vote.sync (9.7.13.8), match.sync
//! (9.7.13.9), activemask (9.7.13.10), redux.sync (9.7.13.11), elect.sync (9.7.13.14).

use super::FunctionBuilder;
use super::cmp::PredSrc;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Operand, Src};
use crate::reg::{Pred, Reg, Sinkable, ty};
use crate::types::ScalarType;

/// The lane-selection mode of `shfl.sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShflMode {
    /// `.up`: from lane `id - b`.
    Up,
    /// `.down`: from lane `id + b`.
    Down,
    /// `.bfly`: from lane `id ^ b`.
    Bfly,
    /// `.idx`: from lane `b`.
    Idx,
}

/// The mode of `vote.sync` with a predicate result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteMode {
    /// `.all`
    All,
    /// `.any`
    Any,
    /// `.uni`: all active threads agree.
    Uni,
}

/// The operation of `redux.sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl FunctionBuilder {
    /// `shfl.sync.mode.b32 d{|p}, a, b, c, membermask`: `c` packs the clamp value and segment mask
    /// (PTX ISA 9.7.9.6); `p`, if given, says whether the source lane was in range.
    #[allow(clippy::too_many_arguments)] // one parameter per PTX operand
    pub fn shfl_sync<T: ty::RegType>(
        &mut self,
        mode: ShflMode,
        d: Reg<T>,
        p: Option<Pred>,
        a: impl Into<Src<T>>,
        b: impl Into<Src<ty::U32>>,
        c: impl Into<Src<ty::U32>>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        if T::TYPE.bits() != 32 {
            return Err(self.err(
                ErrorKind::OperandType,
                "shfl.sync",
                format!("shfl.sync moves 32-bit values, not {}", T::TYPE),
            ));
        }
        let m = match mode {
            ShflMode::Up => "up",
            ShflMode::Down => "down",
            ShflMode::Bfly => "bfly",
            ShflMode::Idx => "idx",
        };
        let dst = match p {
            Some(p) => Operand::Pair(d.as_ref(), p.as_ref()),
            None => Operand::Reg(d.as_ref()),
        };
        let i = Instruction::from_opcode("shfl.sync")
            .modifier(m)
            .ty(ScalarType::B32)
            .operands((dst, a.into(), b.into(), c.into(), membermask.into()));
        self.emit(Form::ShflSync, i)
    }

    /// `vote.sync.mode.pred d, {!}a, membermask`.
    pub fn vote_sync(
        &mut self,
        mode: VoteMode,
        d: Pred,
        a: impl Into<PredSrc>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let m = match mode {
            VoteMode::All => "all",
            VoteMode::Any => "any",
            VoteMode::Uni => "uni",
        };
        let i = Instruction::from_opcode("vote.sync")
            .modifier(m)
            .ty(ScalarType::Pred)
            .operands((d, a.into(), membermask.into()));
        self.emit(Form::VoteSync, i)
    }

    /// `vote.sync.ballot.b32 d, {!}a, membermask`: one bit per lane whose `a` holds.
    pub fn vote_ballot(
        &mut self,
        d: Reg<ty::U32>,
        a: impl Into<PredSrc>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("vote.sync.ballot")
            .ty(ScalarType::B32)
            .operands((d, a.into(), membermask.into()));
        self.emit(Form::VoteBallot, i)
    }

    /// `match.any.sync.bN d, a, membermask`: the lanes holding the same value as this one.
    pub fn match_any<T: ty::Bits32Or64>(
        &mut self,
        d: Reg<ty::U32>,
        a: impl Into<Src<T>>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("match.any.sync")
            .ty(T::TYPE.bits_type())
            .operands((d, a.into(), membermask.into()));
        self.emit(Form::MatchAny, i)
    }

    /// `match.all.sync.bN d{|p}, a, membermask`: the mask if all lanes hold the same value, else 0.
    pub fn match_all<T: ty::Bits32Or64>(
        &mut self,
        d: Reg<ty::U32>,
        p: Option<Pred>,
        a: impl Into<Src<T>>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let dst = match p {
            Some(p) => Operand::Pair(d.as_ref(), p.as_ref()),
            None => Operand::Reg(d.as_ref()),
        };
        let i = Instruction::from_opcode("match.all.sync")
            .ty(T::TYPE.bits_type())
            .operands((dst, a.into(), membermask.into()));
        self.emit(Form::MatchAll, i)
    }

    /// `activemask.b32 d`.
    pub fn activemask(&mut self, d: Reg<ty::U32>) -> Result<()> {
        self.emit(
            Form::Activemask,
            Instruction::new("activemask")
                .ty(ScalarType::B32)
                .operand(d),
        )
    }

    /// `redux.sync.op.T d, a, membermask`: `add/min/max` on `.u32`/`.s32`, `and/or/xor` on `.b32`,
    /// `min/max` on `.f32` (sm_100a: [`FunctionBuilder::redux_sync_f32`]).
    pub fn redux_sync<T: ty::RegType>(
        &mut self,
        op: ReduxOp,
        d: Reg<T>,
        a: Reg<T>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let t = T::TYPE;
        let (name, ty) = match op {
            ReduxOp::Min | ReduxOp::Max if t == ScalarType::F32 => {
                return self.redux_f32(op, (false, false), d, a, membermask.into());
            }
            ReduxOp::Add | ReduxOp::Min | ReduxOp::Max
                if matches!(t, ScalarType::U32 | ScalarType::S32) =>
            {
                (["add", "min", "max"][op as usize], t)
            }
            ReduxOp::And | ReduxOp::Or | ReduxOp::Xor
                if t.bits() == 32 && t.agrees_with(ScalarType::B32) =>
            {
                (["and", "or", "xor"][op as usize - 3], ScalarType::B32)
            }
            _ => {
                return Err(self.no_form("redux.sync", &format!("redux.sync.{op:?}"), t));
            }
        };
        let i = Instruction::from_opcode("redux.sync")
            .modifier(name)
            .ty(ty)
            .operands((d, a, membermask.into()));
        self.emit(Form::ReduxSync, i)
    }

    /// `redux.sync.op{.abs}{.NaN}.f32 d, a, membermask` (PTX ISA 9.7.13.11; PTX 8.6, sm_100a):
    /// the minimum or maximum of `a` over the lanes of `membermask`; `abs` compares absolute
    /// values, `nan` makes any NaN input give the canonical NaN (without it NaNs are skipped).
    /// `op` is [`ReduxOp::Min`] or [`ReduxOp::Max`]; [`FunctionBuilder::redux_sync`] on `.f32`
    /// registers writes this without `.abs` and `.NaN`.
    pub fn redux_sync_f32(
        &mut self,
        op: ReduxOp,
        abs_nan: (bool, bool),
        d: Reg<ty::F32>,
        a: Reg<ty::F32>,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        self.redux_f32(op, abs_nan, d, a, membermask.into())
    }

    /// The `.f32` row of `redux.sync` on registers of `T` (an f32 or a type that agrees with it).
    fn redux_f32<T: ty::RegType>(
        &mut self,
        op: ReduxOp,
        (abs, nan): (bool, bool),
        d: Reg<T>,
        a: Reg<T>,
        membermask: Src<ty::U32>,
    ) -> Result<()> {
        let name = match op {
            ReduxOp::Min => "min",
            ReduxOp::Max => "max",
            _ => {
                return Err(self.no_form(
                    "redux.sync",
                    &format!("redux.sync.{op:?}"),
                    ScalarType::F32,
                ));
            }
        };
        let i = Instruction::from_opcode("redux.sync")
            .modifier(name)
            .modifier_if(abs, "abs")
            .modifier_if(nan, "NaN")
            .ty(ScalarType::F32)
            .operands((d, a, membermask));
        self.emit(Form::ReduxSyncF32, i)
    }

    /// `elect.sync d|p, membermask`: elects one leader lane; `p` is true in it, `d` gets its lane
    /// (or `_`).
    pub fn elect_sync(
        &mut self,
        d: Sinkable<ty::U32>,
        p: Pred,
        membermask: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let dst = match d {
            Sinkable::Reg(r) => Operand::Pair(r.as_ref(), p.as_ref()),
            Sinkable::Sink => Operand::SinkPair(p.as_ref()),
        };
        let i = Instruction::from_opcode("elect.sync").operands((dst, membermask.into()));
        self.emit(Form::ElectSync, i)
    }
}
