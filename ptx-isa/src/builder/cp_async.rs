//! Ampere asynchronous copies (PTX ISA 9.7.9.25.3 `cp.async`, `.commit_group`, `.wait_group`,
//! `.wait_all`).

use super::{FunctionBuilder, PrefetchSize};
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Src};
use crate::reg::ty;
use crate::space::{Addr, spaces};

/// The cache operator of `cp.async`: `.ca` caches in L1 (4, 8 or 16 bytes), `.cg` bypasses it
/// (16 bytes only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpAsyncCache {
    /// `.ca`
    Ca,
    /// `.cg`
    Cg,
}

impl FunctionBuilder {
    /// `cp.async.{ca|cg}.shared.global{.L2::64B|.L2::128B|.L2::256B} [dst], [src], size{, src_size}`:
    /// copies `size` bytes (4, 8 or 16) from global to shared memory asynchronously; with
    /// `src_size`, only that many bytes are read and the rest are zero-filled; with `prefetch`, an
    /// L2 prefetch size (PTX ISA 9.7.9.25.3.1, `.level::prefetch_size`: a hint that the L2 may
    /// fetch that many bytes around the copy's source; PTX 7.4, gated by the form table's
    /// `mem.L2::prefetch_size` row, `cp.async` itself sm_80).
    pub fn cp_async<S: spaces::Window32>(
        &mut self,
        cache: CpAsyncCache,
        dst: Addr<S>,
        src: Addr<spaces::Global>,
        size: u32,
        src_size: Option<Src<ty::U32>>,
        prefetch: Option<PrefetchSize>,
    ) -> Result<()> {
        let mn = "cp.async";
        // The copy sizes per cache mode are the row's rule (PTX ISA 9.7.9.25.3.1), checked by
        // `emit`.
        if let Some(Src::Imm(Imm::UInt(n))) = src_size {
            if n > size as u64 {
                return Err(self.err(
                    ErrorKind::ImmediateRange,
                    mn,
                    format!("src-size {n} exceeds the copy size {size}"),
                ));
            }
        }
        if matches!(
            S::SPACE,
            crate::space::StateSpace::Shared(crate::space::SharedScope::Cluster)
        ) {
            return Err(self.err(
                ErrorKind::OperandKind,
                mn,
                "cp.async writes the executing CTA's shared memory",
            ));
        }
        let mut i = Instruction::from_opcode("cp.async")
            .modifier(if cache == CpAsyncCache::Ca {
                "ca"
            } else {
                "cg"
            })
            .modifier("shared")
            .modifier("global");
        // `{.level::cache_hint}{.level::prefetch_size}` follow `.global` (PTX ISA 9.7.9.25.3.1).
        if let Some(p) = prefetch {
            i = i.modifier(p.name());
        }
        i = i.operands((dst, src, Imm::UInt(size as u64)));
        if let Some(s) = src_size {
            i = i.operand(s);
        }
        self.emit(Form::CpAsync, i)
    }

    /// `cp.async.commit_group`.
    pub fn cp_async_commit_group(&mut self) -> Result<()> {
        self.emit_row(Form::CpAsyncCommit)
    }

    /// `cp.async.wait_group n`: waits until at most `n` groups are pending.
    pub fn cp_async_wait_group(&mut self, n: u32) -> Result<()> {
        self.emit(
            Form::CpAsyncWaitGroup,
            Instruction::from_opcode("cp.async.wait_group").operand(Imm::UInt(n as u64)),
        )
    }

    /// `cp.async.wait_all`.
    pub fn cp_async_wait_all(&mut self) -> Result<()> {
        self.emit_row(Form::CpAsyncWaitAll)
    }
}
