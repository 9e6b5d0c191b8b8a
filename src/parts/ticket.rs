//! The last arrival: several CTAs (or warpgroups) each store their part of one result to global
//! memory, and the last of them to finish combines the parts, so the combine takes no second
//! launch (split-K's fixup, `library::gemm`; split-KV decode's combine, `library::decode`).
//!
//! The threads of one part meet at a named barrier (`bar.sync id, threads`, PTX ISA 9.7.13.1:
//! their stores are performed relative to every thread of the barrier), then the part's leader
//! takes a ticket, `atom.acq_rel.gpu.global.add.u32` on the result's counter (PTX ISA
//! 9.7.13.5): its release publishes the part's stores (ordered before it by the barrier), its
//! acquire makes visible those of the parts that took tickets before it (8.9.1 "Release and
//! acquire patterns"). A second barrier hands the verdict to every thread (`bar.red.or.pred`,
//! 9.7.13.1: the ticket was the last, `parts - 1`) and orders the leader's acquire before the
//! others' loads. The last part resets the counter to 0 for the next launch and runs the
//! combine. No thread waits for another part (no spin: a part that has not run yet cannot hold
//! up one that has).
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{KernelBuilder, TensorOpts};
//! use ptxkit::parts::ticket::last_arrival;
//!
//! let mut k = KernelBuilder::new("parts_summed", Target::Sm90a);
//! let counters = k.tensor::<ty::U32>("counters", [4u32], TensorOpts::default())?;
//! let [t] = k.thread_id([128])?;
//! // ... each CTA stores its part here ...
//! last_arrival(&mut k, &counters, vec![0u32.into()], 4u32, (1u32, 128), t, |_k| {
//!     // ... the last CTA sums the parts here ...
//!     Ok(())
//! })?;
//! let ptx = k.finish()?.ptx().to_string();
//! assert!(ptx.contains("atom.acq_rel.gpu.global.add.u32"));
//! assert!(ptx.contains("bar.red.or.pred"));
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::{AtomOp, AtomSem, CmpOp, Scope};
use ptx_isa::{Src, ty};

use crate::kernel::{Buffer, Expr, KernelBuilder, Result, Var};

/// `threads` threads of one part (`lt` each one's index in the part, 0 its leader) arrive for
/// the result whose counter is `counters[at]` (zero before the first of its `parts` arrives),
/// meeting at named barrier `bar` (a constant or a register, 1 to 15); in the last part to
/// arrive every thread runs `combine` (after the leader has reset the counter to 0). `parts` is
/// at least 2.
pub fn last_arrival(
    k: &mut KernelBuilder,
    counters: &Buffer<ty::U32>,
    at: Vec<Expr>,
    parts: impl Into<Expr>,
    (bar, threads): (impl Into<Src<ty::U32>> + Copy, u32),
    lt: Var,
    combine: impl FnOnce(&mut KernelBuilder) -> Result<()>,
) -> Result<()> {
    let count = Some(Src::from(threads));
    k.bar_sync(bar, count)?;
    let leader = k.cmp(CmpOp::Eq, lt, 0u32)?;
    let ticket = k.reg::<ty::U32>();
    k.mov(ticket, 0u32)?;
    k.if_(leader, |k| {
        let sem = (AtomSem::AcqRel, Scope::Gpu);
        let t = k.atom_flag(counters, at.clone(), AtomOp::Add, 1u32, sem)?;
        k.mov(ticket, t)?;
        Ok(())
    })
    .end()?;
    let ticket = k.bind("ticket", ticket);
    // Only the leader's ticket can be `parts - 1` (the others hold 0, and parts >= 2).
    let mine = k.cmp(CmpOp::Eq, ticket, parts.into() - 1u32)?;
    let last = k.pred();
    k.bar_red_pred(true, last, bar, count, mine)?;
    k.if_(last, |k| {
        // Every part has arrived: the counter is free for the next launch.
        k.if_(leader, |k| k.store(counters, at, 0u32)).end()?;
        combine(k)
    })
    .end()
}
