//! Atomics and reductions (PTX ISA 9.7.13.5 "atom", 9.7.13.6 "red").

use super::FunctionBuilder;
use super::mem::Scope;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Operand, Src};
use crate::reg::{Reg, ty};
use crate::space::spaces::Space;
use crate::space::{Addr, SharedScope, StateSpace};
use crate::types::ScalarType;

/// An atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AtomOp {
    And,
    Or,
    Xor,
    Exch,
    Add,
    /// `inc`: `(old >= b) ? 0 : old + 1` (u32)
    Inc,
    /// `dec`: `(old == 0 || old > b) ? b : old - 1` (u32)
    Dec,
    Min,
    Max,
}

impl AtomOp {
    fn name(self) -> &'static str {
        match self {
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Add => "add",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
        }
    }
}

/// The memory semantics of an atomic (PTX ISA 8.4 "Memory Operations"; `.sem` of atom/red).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AtomSem {
    /// No qualifier: relaxed at GPU scope by default.
    #[default]
    Default,
    /// `.relaxed`
    Relaxed,
    /// `.acquire` (atom only)
    Acquire,
    /// `.release`
    Release,
    /// `.acq_rel` (atom only)
    AcqRel,
}

impl AtomSem {
    fn name(self) -> Option<&'static str> {
        match self {
            AtomSem::Default => None,
            AtomSem::Relaxed => Some("relaxed"),
            AtomSem::Acquire => Some("acquire"),
            AtomSem::Release => Some("release"),
            AtomSem::AcqRel => Some("acq_rel"),
        }
    }
}

impl FunctionBuilder {
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        red: bool,
        sem: AtomSem,
        scope: Option<Scope>,
        space: StateSpace,
        op: &'static str,
        t: ScalarType,
        dst: Option<Operand>,
        srcs: Vec<Operand>,
        addr: Operand,
    ) -> Result<()> {
        use ScalarType::*;
        let mn = if red { "red" } else { "atom" };
        // The row by type alone; which operations each type takes is the rows' rule (PTX ISA
        // 9.7.13.5 atom, 9.7.13.6 red), checked by `emit`.
        let form = match t {
            B32 | B64 | U32 | S32 | U64 | S64 => {
                Some(if red { Form::RedInt } else { Form::AtomInt })
            }
            F32 => Some(if red { Form::RedF32 } else { Form::AtomF32 }),
            F64 => Some(if red { Form::RedF64 } else { Form::AtomF64 }),
            F16 | F16x2 => Some(if red { Form::RedF16 } else { Form::AtomF16 }),
            Bf16 | Bf16x2 => Some(if red { Form::RedBf16 } else { Form::AtomBf16 }),
            _ => None,
        };
        let Some(form) = form else {
            return Err(self.no_form(mn, &format!("{mn}.{op}"), t));
        };
        // `red` takes no `.acquire`/`.acq_rel` (PTX ISA 9.7.13.6): the red rows' pattern says so.
        let space_name = match space {
            StateSpace::Generic => None,
            StateSpace::Global => Some("global"),
            StateSpace::Shared(SharedScope::Implicit | SharedScope::Cta) => Some("shared"),
            StateSpace::Shared(SharedScope::Cluster) => Some("shared::cluster"),
            other => {
                return Err(self.err(
                    ErrorKind::OperandKind,
                    mn,
                    format!("{mn} cannot access {other:?}"),
                ));
            }
        };
        let half = matches!(t, F16 | F16x2 | Bf16 | Bf16x2);
        let mut i = Instruction::new(mn);
        if let Some(s) = sem.name() {
            i = i.modifier(s);
        }
        if let Some(s) = scope {
            i = i.modifier(s.name());
        }
        if let Some(s) = space_name {
            i = i.modifier(s);
        }
        i = i.modifier(op).modifier_if(half, "noftz").ty(t);
        if let Some(d) = dst {
            i = i.operand(d);
        }
        i = i.operand(addr);
        for s in srcs {
            i = i.operand(s);
        }
        self.emit(form, i)
    }

    /// `atom.SPACE.op.T d, [a], b`: `d` gets the old value.
    pub fn atom<S: Space, T: ty::RegType>(
        &mut self,
        op: AtomOp,
        d: Reg<T>,
        a: Addr<S>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.atom_with(AtomSem::Default, None, op, d, a, b)
    }

    /// `atom.sem.scope.SPACE.op.T d, [a], b`.
    pub fn atom_with<S: Space, T: ty::RegType>(
        &mut self,
        sem: AtomSem,
        scope: Option<Scope>,
        op: AtomOp,
        d: Reg<T>,
        a: Addr<S>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.atomic_op(sem, scope, op, Some(d.into()), a, b.into())
    }

    /// `atom.SPACE.cas.bN d, [a], cmp, new`: compare and swap.
    pub fn atom_cas<S: Space, T: ty::RegType>(
        &mut self,
        d: Reg<T>,
        a: Addr<S>,
        cmp: impl Into<Src<T>>,
        new: impl Into<Src<T>>,
    ) -> Result<()> {
        let t = T::TYPE.bits_type();
        self.atomic(
            false,
            AtomSem::Default,
            None,
            S::SPACE,
            "cas",
            t,
            Some(d.into()),
            vec![cmp.into().into(), new.into().into()],
            a.into(),
        )
    }

    /// `red.SPACE.op.T [a], b`: an atomic reduction with no result.
    pub fn red<S: Space, T: ty::RegType>(
        &mut self,
        op: AtomOp,
        a: Addr<S>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.red_with(AtomSem::Default, None, op, a, b)
    }

    /// `red.sem.scope.SPACE.op.T [a], b`.
    pub fn red_with<S: Space, T: ty::RegType>(
        &mut self,
        sem: AtomSem,
        scope: Option<Scope>,
        op: AtomOp,
        a: Addr<S>,
        b: impl Into<Src<T>>,
    ) -> Result<()> {
        self.atomic_op(sem, scope, op, None, a, b.into())
    }

    /// `atom.op` into `d`, or `red.op` when there is no `d`, of `[a]` and `b`.
    fn atomic_op<S: Space, T: ty::RegType>(
        &mut self,
        sem: AtomSem,
        scope: Option<Scope>,
        op: AtomOp,
        d: Option<Operand>,
        a: Addr<S>,
        b: Src<T>,
    ) -> Result<()> {
        let t = atom_type(op, T::TYPE);
        let red = d.is_none();
        let srcs = vec![b.into()];
        self.atomic(red, sem, scope, S::SPACE, op.name(), t, d, srcs, a.into())
    }
}

/// Bitwise ops and `exch` are written with bit types (`atom.and.b32`, `atom.exch.b32` for an f32).
fn atom_type(op: AtomOp, t: ScalarType) -> ScalarType {
    if matches!(op, AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch) {
        t.bits_type()
    } else {
        t
    }
}
