//! A producer gate: before the producer of a warp-specialised kernel loads a tile's rows (or a
//! GEMM's epilogue input, [`crate::library::gemm::HopperGemm::with_staged_gate`]), it waits
//! until those rows have arrived. Rows come in chunks (a copy engine's transfer from a
//! peer GPU, or a peer's stores), each published by a 32-bit flag in global memory that reaches
//! the launch's `epoch` when the chunk is in place; the producer polls the chunk's flag with
//! `ld.acquire.sys` (another GPU or a copy engine wrote it: PTX ISA 8.5 "Scope") and then fences
//! the async proxy (`fence.proxy.async.global`, PTX ISA 9.7.13.4), since its TMA loads read the
//! rows through the async proxy (8.6 "Proxies"). Flags only grow (an epoch per launch), so
//! nothing resets them between launches. A gate can also remember the chunk its thread last
//! found in place ([`RowGate::remembered`]): a flag once at the epoch stays there for the
//! launch, and the acquire and the proxy fence order every later load of that thread after the
//! chunk's writes, so waiting on the same chunk again neither polls nor fences.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::KernelBuilder;
//! use ptxkit::parts::RowGate;
//!
//! let mut k = KernelBuilder::new("gated", Target::Sm90a);
//! // Chunks of 4 row tiles (512 rows of 128-row tiles).
//! let gate = RowGate::declare(&mut k, 4)?;
//! let [t] = k.thread_id([32])?;
//! gate.wait(&mut k, t)?; // tile row t waits on flag t / 4
//! let ptx = k.finish()?.ptx().to_string();
//! assert!(ptx.contains("ld.acquire.sys.global.u32"));
//! assert!(ptx.contains("fence.proxy.async.global;"));
//!
//! // One flag for every row, polled once by each thread that waits (before the roles split).
//! let mut k = KernelBuilder::new("gated_once", Target::Sm90a);
//! let gate = RowGate::declare_whole(&mut k)?.remembered(&mut k)?;
//! let [t] = k.thread_id([32])?;
//! k.for_range(0u32, 4u32, |k, _| gate.wait(k, t))?; // polls on the first pass only
//! let ptx = k.finish()?.ptx().to_string();
//! assert_eq!(ptx.matches("ld.acquire.sys.global.u32").count(), 1);
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::{CmpOp, Scope};
use ptx_isa::{Reg, ty};

use crate::kernel::{Buffer, KernelBuilder, Result, TensorOpts, Var};

/// The flags of a gated producer: `flags` `[chunks]` (u32, a parameter; `chunks` read from its
/// shape), the `epoch` a chunk's flag reaches when it is in place (a parameter), and the row
/// tiles one chunk holds (`None`: one chunk of every row, one flag).
#[derive(Debug, Clone)]
pub struct RowGate {
    flags: Buffer<ty::U32>,
    epoch: Reg<ty::U32>,
    chunk_tiles: Option<u32>,
    /// With [`RowGate::remembered`]: the chunk the waiting thread last found in place
    /// (`u32::MAX` before its first wait).
    passed: Option<Var>,
}

impl RowGate {
    /// Declares the parameters `flags` `[chunks]` and `epoch`, for chunks of `chunk_tiles` row
    /// tiles.
    #[track_caller]
    pub fn declare(k: &mut KernelBuilder, chunk_tiles: u32) -> Result<RowGate> {
        if chunk_tiles == 0 {
            return Err(k.error("a row gate's chunks hold at least one row tile"));
        }
        RowGate::declare_chunks(k, Some(chunk_tiles))
    }

    /// Declares the parameters of a gate whose rows all come in one chunk, published by the one
    /// flag `flags[0]` (`flags` `[chunks]`, at least one): a whole tensor another GPU computes
    /// in one launch.
    #[track_caller]
    pub fn declare_whole(k: &mut KernelBuilder) -> Result<RowGate> {
        RowGate::declare_chunks(k, None)
    }

    #[track_caller]
    fn declare_chunks(k: &mut KernelBuilder, chunk_tiles: Option<u32>) -> Result<RowGate> {
        let chunks = k.symbol("chunks")?;
        let flags = k.tensor::<ty::U32>("flags", [chunks], TensorOpts::default())?;
        let epoch = k.scalar::<ty::U32>("epoch")?;
        Ok(RowGate {
            flags,
            epoch,
            chunk_tiles,
            passed: None,
        })
    }

    /// The gate remembering, in each thread that waits, the chunk it last found in place: a
    /// wait on that chunk again neither polls its flag nor fences (a flag at the launch's epoch
    /// stays there for the launch, and this thread's acquire and `fence.proxy.async.global`
    /// already order its later TMA loads after the chunk's writes: PTX ISA 8.5 "Scope", 8.6
    /// "Proxies", 9.7.13.4). With one chunk ([`RowGate::declare_whole`]) each thread polls
    /// once a launch, not once a tile. Sets a register to "no chunk yet" here: call it at the
    /// kernel's top level, before the roles split, so every thread that waits has run it.
    #[track_caller]
    pub fn remembered(self, k: &mut KernelBuilder) -> Result<RowGate> {
        let passed = k.index_var("gate_passed", u32::MAX)?;
        Ok(RowGate {
            passed: Some(passed),
            ..self
        })
    }

    /// Whether each waiting thread polls a chunk once ([`RowGate::remembered`]).
    pub fn remembers(&self) -> bool {
        self.passed.is_some()
    }

    /// Row tiles per chunk (`None`: every row in one chunk).
    pub fn chunk_tiles(&self) -> Option<u32> {
        self.chunk_tiles
    }

    /// Waits until the chunk holding row tile `row` is in place (its flag at least the epoch),
    /// then orders the async proxy after it: the caller's TMA loads of the tile's rows follow.
    /// Remembered ([`RowGate::remembered`]), only where the thread has not yet found that
    /// chunk in place.
    #[track_caller]
    pub fn wait(&self, k: &mut KernelBuilder, row: Var) -> Result<()> {
        let chunk = match self.chunk_tiles {
            Some(tiles) => k.let_("gate_chunk", row / tiles)?,
            None => k.let_("gate_chunk", 0u32)?,
        };
        let Some(passed) = self.passed else {
            return self.poll(k, chunk);
        };
        let fresh = k.cmp(CmpOp::Ne, chunk, passed)?;
        k.if_(fresh, |k| {
            self.poll(k, chunk)?;
            k.assign(passed, chunk)
        })
        .end()
    }

    /// Polls `chunk`'s flag until it reaches the epoch, then fences the async proxy.
    #[track_caller]
    fn poll(&self, k: &mut KernelBuilder, chunk: Var) -> Result<()> {
        k.wait_flag(&self.flags, [chunk], self.epoch, Scope::Sys)?;
        k.fence_proxy_async_global()
    }
}
