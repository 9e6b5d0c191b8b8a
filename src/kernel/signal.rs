//! Flags in global memory, for signalling between GPUs and between a GPU and its copy engines:
//! acquire loads and release stores/reductions of 32-bit words at a chosen scope (PTX ISA 8
//! "Memory Consistency Model": 8.5 "Scope", 8.4 "Memory Operations"; 9.7.9.8 `ld`, 9.7.9.11
//! `st`, 9.7.13.5 `atom`, 9.7.13.6 `red`), a spin wait on a flag, and the proxy fence that lets
//! the TMA (the async proxy) read what the flag published (9.7.13.4 `fence.proxy.async`).
//!
//! Another GPU's memory (a peer's, through peer access) or memory a copy engine writes is
//! outside the GPU: its flags take `.sys` scope (PTX ISA 8.5: `.sys` covers all threads of the
//! program, on every device and the host). A release store (or reduction) orders the writer's
//! earlier writes before the flag; an acquire load that reads the flag orders the reader's later
//! accesses after it (8.9.1 "Release and acquire patterns").
//!
//! ```
//! use ptxkit::isa::{Target, ty, builder::Scope};
//! use ptxkit::kernel::{KernelBuilder, TensorOpts};
//!
//! let mut k = KernelBuilder::new("flags", Target::Sm90a);
//! let n = k.symbol("n")?;
//! let flags = k.tensor::<ty::U32>("flags", [n], TensorOpts::default())?;
//! let epoch = k.scalar::<ty::U32>("epoch")?;
//! k.thread_id([32])?;
//! // Wait until flag 0 reaches this launch's epoch, then make it visible to TMA loads...
//! k.wait_flag(&flags, [0u32], epoch, Scope::Sys)?;
//! k.fence_proxy_async_global()?;
//! // ...and publish flag 1 to a peer.
//! k.store_release(&flags, [1u32], epoch, Scope::Sys)?;
//! k.red_release_add(&flags, [2u32], 1u32, Scope::Gpu)?;
//! let ptx = k.finish()?.ptx().to_string();
//! assert!(ptx.contains("ld.acquire.sys.global.u32"));
//! assert!(ptx.contains("fence.proxy.async.global;"));
//! assert!(ptx.contains("st.release.sys.global.u32"));
//! assert!(ptx.contains("red.release.gpu.global.add.u32"));
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::{AtomOp, AtomSem, CmpOp, LdOpts, MemOrder, Scope, StOpts};
use ptx_isa::spaces::Global;
use ptx_isa::{Addr, Reg, Src, StateSpace, ty};

use super::KernelBuilder;
use super::buffer::{Buffer, Ptr};
use super::error::Result;
use super::expr::Exprs;

/// An `ld.acquire.scope` (PTX ISA 9.7.9.8 `.sem`).
fn acquire(scope: Scope) -> LdOpts {
    LdOpts {
        order: MemOrder::Acquire(scope),
        ..LdOpts::default()
    }
}

impl KernelBuilder {
    /// The global address of the flag `buf[idx]` (flags live in global memory: a shared-memory
    /// flag is no signal to another GPU or a copy engine).
    #[track_caller]
    fn flag_addr(&mut self, buf: &Buffer<ty::U32>, idx: impl Exprs) -> Result<Addr<Global>> {
        match self.addr_parts(buf, idx)? {
            (Ptr::Global(r), o) => Ok(Addr::<Global>::reg(r).offset(o)),
            (Ptr::Shared(_), _) => Err(self.buffer_err(
                &buf.name,
                "a flag is a word of global memory (another GPU and the copy engines do not see \
                 shared memory)",
            )),
        }
    }

    /// `ld.acquire.scope.global.u32` of the flag `buf[idx]` (PTX ISA 9.7.9.8; 8.4: an acquire
    /// load orders this thread's later accesses after it).
    #[track_caller]
    pub fn load_acquire(
        &mut self,
        buf: &Buffer<ty::U32>,
        idx: impl Exprs,
        scope: Scope,
    ) -> Result<Reg<ty::U32>> {
        let at = self.flag_addr(buf, idx)?;
        let d = self.f.reg::<ty::U32>();
        self.f.ld_with(&acquire(scope), &[d], at)?;
        Ok(d)
    }

    /// `st.release.scope.global.u32` of `v` to the flag `buf[idx]` (PTX ISA 9.7.9.11; 8.4: a
    /// release store orders this thread's earlier accesses before it).
    #[track_caller]
    pub fn store_release(
        &mut self,
        buf: &Buffer<ty::U32>,
        idx: impl Exprs,
        v: impl Into<Src<ty::U32>>,
        scope: Scope,
    ) -> Result<()> {
        let at = self.flag_addr(buf, idx)?;
        let opts = StOpts {
            order: MemOrder::Release(scope),
            ..StOpts::default()
        };
        self.f.st_with(&opts, at, &[v.into()])?;
        Ok(())
    }

    /// `red.release.scope.global.add.u32` of `v` to the counter `buf[idx]` (PTX ISA 9.7.13.6):
    /// several writers each add their arrival, and a reader waits for the sum.
    #[track_caller]
    pub fn red_release_add(
        &mut self,
        buf: &Buffer<ty::U32>,
        idx: impl Exprs,
        v: impl Into<Src<ty::U32>>,
        scope: Scope,
    ) -> Result<()> {
        let at = self.flag_addr(buf, idx)?;
        self.f
            .red_with(AtomSem::Release, Some(scope), AtomOp::Add, at, v)?;
        Ok(())
    }

    /// `atom.sem.scope.global.op.u32` on `buf[idx]` with `v`; returns the old value (PTX ISA
    /// 9.7.13.5): a ticket (`add` with `.acq_rel`) or an exchange of a flag.
    #[track_caller]
    pub fn atom_flag(
        &mut self,
        buf: &Buffer<ty::U32>,
        idx: impl Exprs,
        op: AtomOp,
        v: impl Into<Src<ty::U32>>,
        (sem, scope): (AtomSem, Scope),
    ) -> Result<Reg<ty::U32>> {
        let at = self.flag_addr(buf, idx)?;
        let d = self.f.reg::<ty::U32>();
        self.f.atom_with(sem, Some(scope), op, d, at, v)?;
        Ok(d)
    }

    /// Spins until the flag `buf[idx]` is at least `at_least` (unsigned), reading it with
    /// `ld.acquire.scope` each time round: what was written before the flag's release (by a
    /// kernel, a copy engine or a stream's `cuStreamWriteValue32`) is visible to this thread's
    /// later generic-proxy accesses. A TMA load after it needs
    /// [`KernelBuilder::fence_proxy_async_global`] too.
    #[track_caller]
    pub fn wait_flag(
        &mut self,
        buf: &Buffer<ty::U32>,
        idx: impl Exprs,
        at_least: impl Into<Src<ty::U32>>,
        scope: Scope,
    ) -> Result<()> {
        let at = self.flag_addr(buf, idx)?;
        let at_least = at_least.into();
        let opts = acquire(scope);
        let v = self.f.reg::<ty::U32>();
        let below = self.f.pred();
        let top = self.f.label();
        self.f.place(top)?;
        self.f.ld_with(&opts, &[v], at)?;
        self.f.setp(CmpOp::Lt, below, v, at_least)?;
        self.f.when(below).bra(top)?;
        Ok(())
    }

    /// `fence.proxy.async.global`: orders this thread's generic-proxy view of global memory
    /// (what an acquire made visible) before its later async-proxy accesses (TMA loads), PTX
    /// ISA 9.7.13.4 and 8.6 "Proxies".
    pub fn fence_proxy_async_global(&mut self) -> Result<()> {
        self.f.fence_proxy_async(Some(StateSpace::Global))?;
        Ok(())
    }
}
