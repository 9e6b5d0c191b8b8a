//! The roles of a warp-specialised kernel: warpgroup 0 the producer (it issues copies and gives
//! its registers away), warpgroups 1..=N the consumers (they hold accumulators), each with its
//! register budget (`setmaxnreg`, PTX ISA 9.7.19.5) declared once.
//!
//! ```
//! use ptxkit::isa::Target;
//! use ptxkit::kernel::KernelBuilder;
//! use ptxkit::parts::WarpSpecialized;
//!
//! let mut k = KernelBuilder::new("ws", Target::Sm90a);
//! let roles = WarpSpecialized::new(2, 24, 240);
//! let tid = roles.declare(&mut k)?; // 384 threads, one CTA an SM
//! roles.run(&mut k, tid, |_k| Ok(()), |_k, _consumer| Ok(()))?;
//! let ptx = k.finish()?.ptx().to_string();
//! assert!(ptx.contains("setmaxnreg.dec.sync.aligned.u32 24;"));
//! assert!(ptx.contains("setmaxnreg.inc.sync.aligned.u32 240;"));
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::CmpOp;
use smem::pipeline::hang::HangSites;
use smem::pipeline::sync::BarrierSync;

use crate::kernel::{KernelBuilder, Result, Var};

/// One producer warpgroup and `consumers` consumer warpgroups, with their per-thread register
/// budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpSpecialized {
    /// Consumer warpgroups (1 to 3).
    pub consumers: u32,
    /// The producer's registers per thread after `setmaxnreg.dec`.
    pub producer_regs: u32,
    /// Each consumer's registers per thread after `setmaxnreg.inc`.
    pub consumer_regs: u32,
}

/// What a consumer warpgroup knows of itself.
#[derive(Debug, Clone, Copy)]
pub struct ConsumerId {
    /// Its index among the consumers, `0..consumers` (warpgroup `index + 1`).
    pub index: Var,
    /// Its thread's index in the warpgroup, `0..128`.
    pub thread: Var,
}

impl WarpSpecialized {
    /// Threads of a warpgroup.
    pub const WARPGROUP: u32 = 128;

    /// The Hopper GEMM's and attention's roles: a producer warpgroup left 24 registers (it
    /// only issues TMA loads) and two consumer warpgroups raised to 240 (24 x 128 + 240 x 256
    /// fits the 64K registers of an SM); 384 threads.
    pub const PRODUCER_AND_TWO_CONSUMERS: WarpSpecialized = WarpSpecialized::new(2, 24, 240);

    /// Three consumer warpgroups beside the producer (512 threads: 128 registers each at
    /// launch), raised to 160 (24 x 128 + 160 x 384 = 64,512 of the 64K): the attention's
    /// 192-row query tiles at head dim 64, where S (64 x 128 f32), O (64 x 64) and P fit.
    pub const PRODUCER_AND_THREE_CONSUMERS: WarpSpecialized = WarpSpecialized::new(3, 24, 160);

    /// `consumers` consumer warpgroups beside the producer, with these budgets.
    pub const fn new(consumers: u32, producer_regs: u32, consumer_regs: u32) -> WarpSpecialized {
        WarpSpecialized {
            consumers,
            producer_regs,
            consumer_regs,
        }
    }

    /// The block's threads: a warpgroup per role.
    pub const fn threads(&self) -> u32 {
        Self::WARPGROUP * (1 + self.consumers)
    }

    /// Declares the block (`.maxntid` of [`WarpSpecialized::threads`]) and one CTA an SM
    /// (`.minnctapersm 1`): `setmaxnreg` needs a register cap at entry, which these fix.
    /// Returns the thread's index in the CTA.
    #[track_caller]
    pub fn declare(&self, k: &mut KernelBuilder) -> Result<Var> {
        self.declare_ctas(k, 1)
    }

    /// [`WarpSpecialized::declare`] with `ctas` CTAs an SM (`.minnctapersm`): ptxas then caps
    /// the registers a thread holds at launch at `65536 / (ctas · threads)`, which the budgets
    /// must share (a decode kernel's two CTAs of a producer and one consumer: 128 at launch,
    /// 24 and 232 after `setmaxnreg`).
    #[track_caller]
    pub fn declare_ctas(&self, k: &mut KernelBuilder, ctas: u32) -> Result<Var> {
        if !(1..=3).contains(&self.consumers) {
            return Err(k.error(format!(
                "{} consumer warpgroups: a warp-specialised CTA holds 1 to 3 beside its producer",
                self.consumers
            )));
        }
        // `setmaxnreg.inc` waits until the CTA's pool holds the registers it asks for (PTX ISA
        // 9.7.19.5), and the pool holds only what `setmaxnreg.dec` gave back: the CTA's
        // allocation is fixed at launch, at the cap ptxas takes from `.maxntid` and
        // `.minnctapersm` (65536 / (ctas · threads) a thread, in steps of 8). Consumers that
        // ask for more than the producer gives back wait forever.
        let launch = 65536 / (ctas.max(1) * self.threads()) / 8 * 8;
        let wanted = self.consumers * self.consumer_regs.saturating_sub(launch);
        let freed = launch.saturating_sub(self.producer_regs);
        if wanted > freed {
            return Err(k.error(format!(
                "register budgets {} / {}: {} consumer warpgroups raised from the {launch} a \
                 thread holds at launch ask for {wanted} registers a thread, the producer gives \
                 back {freed}; setmaxnreg.inc would wait forever",
                self.producer_regs, self.consumer_regs, self.consumers
            )));
        }
        let [tid] = k.thread_id([self.threads()])?;
        k.min_blocks_per_sm(ctas)?;
        Ok(tid)
    }

    /// Writes the roles (`tid` is [`WarpSpecialized::declare`]'s): warpgroup 0 sets its budget and runs `producer`, the others set theirs
    /// and run `consumer` with their [`ConsumerId`]. Both branches are written once.
    #[track_caller]
    pub fn run(
        &self,
        k: &mut KernelBuilder,
        tid: Var,
        producer: impl FnOnce(&mut KernelBuilder) -> Result<()>,
        consumer: impl FnOnce(&mut KernelBuilder, ConsumerId) -> Result<()>,
    ) -> Result<()> {
        let wg = k.warpgroup_id([1 + self.consumers])?;
        let is_producer = k.cmp(CmpOp::Eq, wg, 0u32)?;
        let (pr, cr) = (self.producer_regs, self.consumer_regs);
        k.if_(is_producer, |k| {
            k.warpgroup_registers(false, pr)?;
            producer(k)
        })
        .else_(|k| {
            k.warpgroup_registers(true, cr)?;
            let index = k.let_("consumer", wg - 1)?;
            let thread = k.let_("wg_thread", tid % Self::WARPGROUP)?;
            consumer(k, ConsumerId { index, thread })
        })
    }

    /// [`WarpSpecialized::run`] with the kernel's barrier protocol: both roles record their
    /// waits and arrives in `sync` (each closure gets it), then the protocol is checked
    /// ([`BarrierSync::finish`]: a byte or arrival mismatch is the kernel's error) and its wait
    /// sites returned for a debug build's hang records.
    #[track_caller]
    pub fn run_synced(
        &self,
        k: &mut KernelBuilder,
        tid: Var,
        sync: BarrierSync,
        producer: impl FnOnce(&mut KernelBuilder, &mut BarrierSync) -> Result<()>,
        consumer: impl FnOnce(&mut KernelBuilder, &mut BarrierSync, ConsumerId) -> Result<()>,
    ) -> Result<HangSites> {
        let sync = std::cell::RefCell::new(sync);
        self.run(
            k,
            tid,
            |k| producer(k, &mut sync.borrow_mut()),
            |k, me| consumer(k, &mut sync.borrow_mut(), me),
        )?;
        sync.into_inner()
            .finish()
            .map_err(|e| k.error(format!("barrier protocol: {e}")))
    }
}
