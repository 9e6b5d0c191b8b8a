//! Proxy fences (PTX ISA 9.7.13.4 `fence.proxy`), cluster barriers (9.7.13.3 `barrier.cluster`),
//! distributed shared memory addressing (9.7.9.24 `mapa`, 9.7.9.23 `getctarank`), programmatic
//! dependent launch (9.7.13.13 `griddepcontrol`) and register reallocation (9.7.19.5 `setmaxnreg`).

use super::FunctionBuilder;
use super::mem::Scope;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Src};
use crate::reg::{Reg, ty};
use crate::space::{Addr, SharedScope, StateSpace, spaces};
use crate::types::ScalarType;

/// The semantics of `barrier.cluster.arrive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterArrive {
    /// No qualifier (release semantics).
    Default,
    /// `.release`
    Release,
    /// `.relaxed`: no memory ordering.
    Relaxed,
}

impl FunctionBuilder {
    /// `fence.proxy.async{.space}`: orders generic-proxy accesses before async-proxy ones (TMA,
    /// wgmma/tcgen05 operand reads) in `space` (`None` for all spaces).
    pub fn fence_proxy_async(&mut self, space: Option<StateSpace>) -> Result<()> {
        let mut i = Instruction::from_opcode("fence.proxy.async");
        match space {
            None => {}
            Some(StateSpace::Global) => i = i.modifier("global"),
            Some(StateSpace::Shared(SharedScope::Implicit | SharedScope::Cta)) => {
                i = i.modifier("shared::cta")
            }
            Some(StateSpace::Shared(SharedScope::Cluster)) => i = i.modifier("shared::cluster"),
            Some(other) => {
                return Err(self.err(
                    ErrorKind::OperandKind,
                    "fence.proxy.async",
                    format!("no proxy fence for {other:?}"),
                ));
            }
        }
        self.emit(Form::FenceProxyAsync, i)
    }

    /// `fence.proxy.tensormap::generic.release.scope`: publishes a tensor map written in memory.
    pub fn fence_proxy_tensormap_release(&mut self, scope: Scope) -> Result<()> {
        let i = Instruction::from_opcode("fence.proxy.tensormap::generic.release")
            .modifier(scope.name());
        self.emit(Form::FenceProxyTensormap, i)
    }

    /// `fence.proxy.tensormap::generic.acquire.scope [addr], 128`: acquires the tensor map at the
    /// generic address `addr` (size 128, PTX ISA 9.7.13.4).
    pub fn fence_proxy_tensormap_acquire(
        &mut self,
        scope: Scope,
        addr: Addr<spaces::Generic>,
    ) -> Result<()> {
        let i = Instruction::from_opcode("fence.proxy.tensormap::generic.acquire")
            .modifier(scope.name())
            .operands((addr, crate::instr::Imm::UInt(128)));
        self.emit(Form::FenceProxyTensormap, i)
    }

    /// `barrier.cluster.arrive{.release|.relaxed}{.aligned}`.
    pub fn barrier_cluster_arrive(&mut self, sem: ClusterArrive, aligned: bool) -> Result<()> {
        let i = Instruction::from_opcode("barrier.cluster.arrive")
            .modifier_if(sem == ClusterArrive::Release, "release")
            .modifier_if(sem == ClusterArrive::Relaxed, "relaxed")
            .modifier_if(aligned, "aligned");
        self.emit(Form::BarrierClusterArrive, i)
    }

    /// `barrier.cluster.wait{.acquire}{.aligned}`.
    pub fn barrier_cluster_wait(&mut self, acquire: bool, aligned: bool) -> Result<()> {
        let i = Instruction::from_opcode("barrier.cluster.wait")
            .modifier_if(acquire, "acquire")
            .modifier_if(aligned, "aligned");
        self.emit(Form::BarrierClusterWait, i)
    }

    /// `barrier.cluster.arrive` then `barrier.cluster.wait` (both `.aligned`): a cluster-wide
    /// barrier, as `cluster.sync()`.
    pub fn cluster_sync(&mut self) -> Result<()> {
        self.barrier_cluster_arrive(ClusterArrive::Release, true)?;
        self.barrier_cluster_wait(true, true)
    }

    forward_methods! {
        /// `mapa.shared::cluster.u32 d, a, rank`: the shared::cluster address of the variable at
        /// shared::cta address `a` in the CTA of rank `rank`.
        fn mapa_shared(d: Reg<ty::U32>, a: Reg<ty::U32>, rank: impl Into<Src<ty::U32>>)
            => mapa(true, d, a, rank.into());
        /// `mapa.u64 d, a, rank`: the same for generic addresses.
        fn mapa_generic(d: Reg<ty::U64>, a: Reg<ty::U64>, rank: impl Into<Src<ty::U32>>)
            => mapa(false, d, a, rank.into());
    }

    /// `mapa{.shared::cluster}.T d, a, rank` (PTX ISA 9.7.9.24): `.u32` shared::cta addresses
    /// when `shared`, else `.u64` generic ones.
    fn mapa<T: ty::RegType>(
        &mut self,
        shared: bool,
        d: Reg<T>,
        a: Reg<T>,
        rank: Src<ty::U32>,
    ) -> Result<()> {
        let i = Instruction::new("mapa")
            .modifier_if(shared, "shared::cluster")
            .ty(T::TYPE)
            .operands((d, a, rank));
        self.emit(Form::Mapa, i)
    }

    /// `getctarank.shared::cluster.u32 d, a`: the rank of the CTA owning shared::cluster address `a`.
    pub fn getctarank_shared(&mut self, d: Reg<ty::U32>, a: Reg<ty::U32>) -> Result<()> {
        let i = Instruction::from_opcode("getctarank.shared::cluster")
            .ty(ScalarType::U32)
            .operands((d, a));
        self.emit(Form::Getctarank, i)
    }

    /// `getctarank.u64 d, a` for a generic address (the rank is `.u32`).
    pub fn getctarank_generic(&mut self, d: Reg<ty::U32>, a: Reg<ty::U64>) -> Result<()> {
        let i = Instruction::new("getctarank")
            .ty(ScalarType::U64)
            .operands((d, a));
        self.emit(Form::Getctarank, i)
    }

    /// `griddepcontrol.wait`: waits for the prerequisite grids of a programmatic dependent launch.
    pub fn griddepcontrol_wait(&mut self) -> Result<()> {
        self.emit_row(Form::GriddepcontrolWait)
    }

    /// `griddepcontrol.launch_dependents`: lets the dependent grid start.
    pub fn griddepcontrol_launch_dependents(&mut self) -> Result<()> {
        self.emit_row(Form::GriddepcontrolLaunch)
    }

    /// `setmaxnreg.{inc|dec}.sync.aligned.u32 n`: changes the warp's register budget to `n`
    /// (24..=256, a multiple of 8: PTX ISA 9.7.19.5).
    pub fn setmaxnreg(&mut self, increase: bool, n: u32) -> Result<()> {
        // The range is the row's rule, checked by `emit`.
        let i = Instruction::new("setmaxnreg")
            .modifier(if increase { "inc" } else { "dec" })
            .modifier("sync")
            .modifier("aligned")
            .ty(ScalarType::U32)
            .operand(crate::instr::Imm::UInt(n as u64));
        self.emit(Form::Setmaxnreg, i)
    }
}
