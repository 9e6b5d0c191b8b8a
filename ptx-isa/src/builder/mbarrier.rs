//! mbarrier: shared-memory barriers with phase and transaction counts (PTX ISA 9.7.13.15), and
//! `fence.mbarrier_init`.

use super::FunctionBuilder;
use super::mem::Scope;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Operand, Src};
use crate::reg::{Pred, Reg, Sinkable, ty};
use crate::space::spaces::Window32;
use crate::space::{Addr, SharedScope, StateSpace};
use crate::types::ScalarType;

/// Options of `mbarrier.arrive`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArriveOpts {
    /// `.release.scope` (PTX 8.0, sm_90); `None` writes no qualifier (release at CTA scope).
    pub release: Option<Scope>,
    /// The arrival count (PTX 7.8, sm_90 for `mbarrier.arrive`; required with `no_complete`).
    pub count: Option<Src<ty::U32>>,
    /// `.noComplete`: the arrival must not complete the phase.
    pub no_complete: bool,
    /// `.expect_tx`: first add this many bytes to the expected transaction count.
    pub expect_tx: Option<Src<ty::U32>>,
}

/// What a wait tests: the state returned by an arrive, or a phase parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOn {
    /// The `.b64` state of an earlier arrive.
    State(Reg<ty::B64>),
    /// `.parity`: the parity (0 or 1) of the phase to wait for.
    Parity(Src<ty::U32>),
}

/// Arrival counts are at most 2^20 - 1 (PTX ISA 9.7.13.15.1 "Contents of the mbarrier object").
const MAX_COUNT: u64 = (1 << 20) - 1;

impl FunctionBuilder {
    fn mbar_space(
        &mut self,
        mn: &str,
        space: StateSpace,
        cluster_ok: bool,
    ) -> Result<&'static str> {
        match space {
            StateSpace::Shared(SharedScope::Implicit) => Ok("shared"),
            StateSpace::Shared(SharedScope::Cta) => Ok("shared::cta"),
            StateSpace::Shared(SharedScope::Cluster) if cluster_ok => Ok("shared::cluster"),
            other => Err(self.err(
                ErrorKind::OperandKind,
                mn,
                format!(
                    "{mn} takes a barrier in {}, not {other:?}",
                    if cluster_ok {
                        "shared::cta or shared::cluster"
                    } else {
                        "shared::cta"
                    }
                ),
            )),
        }
    }

    fn check_count(&mut self, mn: &str, n: Src<ty::U32>, what: &str, min: u64) -> Result<()> {
        if let Src::Imm(crate::instr::Imm::UInt(v)) = n {
            if v < min || v > MAX_COUNT {
                return Err(self.err(
                    ErrorKind::ImmediateRange,
                    mn,
                    format!("{what} {v} is outside {min}..=2^20-1"),
                ));
            }
        }
        Ok(())
    }

    /// `mbarrier.init.shared.b64 [addr], count`: a barrier expecting `count` arrivals per phase.
    pub fn mbarrier_init<S: Window32>(
        &mut self,
        addr: Addr<S>,
        count: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let count = count.into();
        self.check_count("mbarrier.init", count, "count", 1)?;
        let sp = self.mbar_space("mbarrier.init", S::SPACE, false)?;
        let i = Instruction::from_opcode("mbarrier.init")
            .modifier(sp)
            .ty(ScalarType::B64)
            .operands((addr, count));
        self.emit(Form::MbarrierInit, i)
    }

    /// `mbarrier.inval.shared.b64 [addr]`.
    pub fn mbarrier_inval<S: Window32>(&mut self, addr: Addr<S>) -> Result<()> {
        let sp = self.mbar_space("mbarrier.inval", S::SPACE, false)?;
        let i = Instruction::from_opcode("mbarrier.inval")
            .modifier(sp)
            .ty(ScalarType::B64)
            .operand(addr);
        self.emit(Form::MbarrierInval, i)
    }

    /// `mbarrier.arrive.shared.b64 state, [addr]`.
    pub fn mbarrier_arrive<S: Window32>(
        &mut self,
        state: Sinkable<ty::B64>,
        addr: Addr<S>,
    ) -> Result<()> {
        self.mbarrier_arrive_with(&ArriveOpts::default(), state, addr)
    }

    /// `mbarrier.arrive` with its options: `.release.scope`, a count, `.noComplete`, `.expect_tx`. A
    /// barrier in another CTA of the cluster (`Addr<SharedCluster>`, from `mapa`) takes the sink
    /// `_` as state (PTX ISA 9.7.13.15.13).
    pub fn mbarrier_arrive_with<S: Window32>(
        &mut self,
        o: &ArriveOpts,
        state: Sinkable<ty::B64>,
        addr: Addr<S>,
    ) -> Result<()> {
        let mn = "mbarrier.arrive";
        let sp = self.mbar_space(mn, S::SPACE, true)?;
        let remote = sp == "shared::cluster";
        if remote && state != Sinkable::Sink {
            return Err(self.err(
                ErrorKind::OperandKind,
                mn,
                "an arrive on a shared::cluster barrier returns no state: pass the sink",
            ));
        }
        // Which `.release` scope `.noComplete` takes is its row's (PTX ISA 9.7.13.15.13).
        if o.no_complete && (o.count.is_none() || o.expect_tx.is_some()) {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                ".noComplete takes a count and no transaction count",
            ));
        }
        if o.expect_tx.is_some() && o.count.is_some() {
            return Err(self.err(
                ErrorKind::OperandCount,
                mn,
                "arrive.expect_tx takes a transaction count and no arrival count",
            ));
        }
        // The scope is .cta or .cluster: the row's pattern (PTX ISA 9.7.13.15), checked by `emit`.
        let mut i = Instruction::from_opcode("mbarrier.arrive");
        let form = if o.no_complete {
            i = i.modifier("noComplete");
            Form::MbarrierArriveNoComplete
        } else if o.expect_tx.is_some() {
            i = i.modifier("expect_tx");
            Form::MbarrierArriveExpectTx
        } else {
            Form::MbarrierArrive
        };
        if let Some(s) = o.release {
            i = i.modifier("release").modifier(s.name());
        }
        i = i.modifier(sp).ty(ScalarType::B64).operands((state, addr));
        if let Some(c) = o.count {
            self.check_count(mn, c, "count", 1)?;
            i = i.operand(c);
        }
        if let Some(tx) = o.expect_tx {
            i = i.operand(tx);
        }
        self.emit(form, i)
    }

    /// `opcode{.sem.scope}.space.b64`: the tail every mbarrier opcode shares (PTX ISA 9.7.13.15),
    /// with the barrier's state space checked (`shared::cluster` only where `cluster_ok`).
    fn mbar_opcode(
        &mut self,
        opcode: Instruction,
        sem: Option<(&'static str, Scope)>,
        space: StateSpace,
        cluster_ok: bool,
    ) -> Result<Instruction> {
        let sp = self.mbar_space(&opcode.opcode(), space, cluster_ok)?;
        let mut i = opcode;
        if let Some((sem, scope)) = sem {
            // The scope is .cta or .cluster: the row's pattern (PTX ISA 9.7.13.15), checked by
            // `emit`.
            i = i.modifier(sem).modifier(scope.name());
        }
        Ok(i.modifier(sp).ty(ScalarType::B64))
    }

    /// `mbarrier.{expect_tx|complete_tx}{.relaxed.scope}.space.b64 [addr], tx` (PTX ISA
    /// 9.7.13.15.11, 9.7.13.15.12), the row and its opcode given.
    fn tx(
        &mut self,
        (form, opcode): (Form, &'static str),
        scope: Option<Scope>,
        space: StateSpace,
        addr: Operand,
        tx: Src<ty::U32>,
    ) -> Result<()> {
        let sem = scope.map(|s| ("relaxed", s));
        let i = self.mbar_opcode(Instruction::from_opcode(opcode), sem, space, true)?;
        self.emit(form, i.operands((addr, tx)))
    }

    /// `mbarrier.{test_wait|try_wait}{.parity}{.acquire.scope}.space.b64 done, [addr],
    /// state|parity{, hint}` (PTX ISA 9.7.13.15.16), the row and its opcode given.
    #[allow(clippy::too_many_arguments)] // one parameter per PTX operand
    fn wait(
        &mut self,
        (form, opcode): (Form, &'static str),
        acquire: Option<Scope>,
        done: Pred,
        space: StateSpace,
        addr: Operand,
        on: WaitOn,
        hint: Option<Src<ty::U32>>,
    ) -> Result<()> {
        let parity = matches!(on, WaitOn::Parity(_));
        let i = Instruction::from_opcode(opcode).modifier_if(parity, "parity");
        let sem = acquire.map(|s| ("acquire", s));
        let mut i = self
            .mbar_opcode(i, sem, space, false)?
            .operands((done, addr));
        i.operands.push(match on {
            WaitOn::State(r) => r.into(),
            WaitOn::Parity(p) => p.into(),
        });
        i.operands.extend(hint.map(Operand::from));
        self.emit(form, i)
    }

    forward_methods! {
        family<S: Window32>(scope: Option<Scope>, addr: Addr<S>, tx: impl Into<Src<ty::U32>>)
            => tx(.., scope, S::SPACE, addr.into(), tx.into())
        {
            /// `mbarrier.expect_tx{.relaxed.scope}.shared.b64 [addr], tx`: expect `tx` more bytes.
            fn mbarrier_expect_tx((Form::MbarrierExpectTx, "mbarrier.expect_tx"));
            /// `mbarrier.complete_tx{.relaxed.scope}.shared.b64 [addr], tx`: `tx` bytes have
            /// arrived.
            fn mbarrier_complete_tx((Form::MbarrierCompleteTx, "mbarrier.complete_tx"));
        }
    }

    forward_methods! {
        /// `mbarrier.test_wait{.parity}{.acquire.scope}.shared.b64 done, [addr], state|parity`: a
        /// non-blocking test of the phase.
        fn mbarrier_test_wait<S: Window32>(
            acquire: Option<Scope>,
            done: Pred,
            addr: Addr<S>,
            on: WaitOn,
        ) => wait(
            (Form::MbarrierTestWait, "mbarrier.test_wait"),
            acquire,
            done,
            S::SPACE,
            addr.into(),
            on,
            None,
        );
        /// `mbarrier.try_wait{.parity}{.acquire.scope}.shared.b64 done, [addr],
        /// state|parity{, hint}`: waits up to a system-dependent time (or about `hint` ns) for the
        /// phase.
        fn mbarrier_try_wait<S: Window32>(
            acquire: Option<Scope>,
            done: Pred,
            addr: Addr<S>,
            on: WaitOn,
            suspend_hint: Option<Src<ty::U32>>,
        ) => wait(
            (Form::MbarrierTryWait, "mbarrier.try_wait"),
            acquire,
            done,
            S::SPACE,
            addr.into(),
            on,
            suspend_hint,
        );
    }

    /// Waits for the phase with parity `parity` to complete: a `try_wait.parity` loop
    /// (`L: try_wait; @!p bra L;`), the pattern every TMA pipeline uses.
    pub fn mbarrier_wait_parity<S: Window32>(
        &mut self,
        addr: Addr<S>,
        parity: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let (again, done) = (self.label(), self.pred());
        let parity = parity.into();
        self.place(again)?;
        self.mbarrier_try_wait(None, done, addr, WaitOn::Parity(parity), None)?;
        self.unless(done).bra(again)
    }

    /// `mbarrier.pending_count.b64 count, state`.
    pub fn mbarrier_pending_count(
        &mut self,
        count: Reg<ty::U32>,
        state: Reg<ty::B64>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("mbarrier.pending_count")
            .ty(ScalarType::B64)
            .operands((count, state));
        self.emit(Form::MbarrierPendingCount, i)
    }

    /// `cp.async.mbarrier.arrive{.noinc}.shared.b64 [addr]`: an arrive-on the barrier when this
    /// thread's earlier `cp.async` copies complete (PTX ISA 9.7.13.15.15). Without `.noinc` the
    /// pending count is incremented first, so the arrive does not count towards the phase.
    pub fn cp_async_mbarrier_arrive(
        &mut self,
        noinc: bool,
        addr: Addr<crate::space::spaces::Shared>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("cp.async.mbarrier.arrive")
            .modifier_if(noinc, "noinc")
            .modifier("shared")
            .ty(ScalarType::B64)
            .operand(addr.into_address());
        self.emit(Form::CpAsyncMbarrierArrive, i)
    }

    /// `fence.mbarrier_init.release.cluster`: makes barrier initialisation visible to the cluster
    /// (before other CTAs arrive on this CTA's barriers).
    pub fn fence_mbarrier_init(&mut self) -> Result<()> {
        self.emit_row(Form::FenceMbarrierInit)
    }
}
