//! A producer gate: before the producer of a warp-specialised kernel loads a tile's rows (or a
//! GEMM's epilogue input, [`crate::library::gemm::HopperGemm::with_staged_gate`]), it waits
//! until those rows have arrived. Rows come in chunks (a copy engine's transfer from a
//! peer GPU, or a peer's stores), each published by a 32-bit flag in global memory that reaches
//! the launch's `epoch` when the chunk is in place; the producer polls the chunk's flag with
//! `ld.acquire.sys` (another GPU or a copy engine wrote it: PTX ISA 8.5 "Scope") and then fences
//! the async proxy (`fence.proxy.async.global`, PTX ISA 9.7.13.4), since its TMA loads read the
//! rows through the async proxy (8.6 "Proxies"). Flags only grow (an epoch per launch), so
//! nothing resets them between launches.
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
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::Scope;
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
        })
    }

    /// Row tiles per chunk (`None`: every row in one chunk).
    pub fn chunk_tiles(&self) -> Option<u32> {
        self.chunk_tiles
    }

    /// Waits until the chunk holding row tile `row` is in place (its flag at least the epoch),
    /// then orders the async proxy after it: the caller's TMA loads of the tile's rows follow.
    #[track_caller]
    pub fn wait(&self, k: &mut KernelBuilder, row: Var) -> Result<()> {
        match self.chunk_tiles {
            Some(tiles) => {
                let chunk = k.let_("gate_chunk", row / tiles)?;
                k.wait_flag(&self.flags, [chunk], self.epoch, Scope::Sys)?;
            }
            None => k.wait_flag(&self.flags, [0u32], self.epoch, Scope::Sys)?,
        }
        k.fence_proxy_async_global()
    }
}
