//! Kernel parts: the pieces a warp-specialised kernel is composed of, on the authoring model
//! ([`crate::kernel`]) and the tile ops ([`crate::tile`]).
//!
//! - [`roles`]: the producer warpgroup and the consumer warpgroups with their register budgets
//!   ([`WarpSpecialized`]).
//! - [`ring`]: stage rings as typed handles ([`Ring`]): the producer's acquire and commit, the
//!   consumer's wait and release; barrier addresses, phases, `expect_tx` bytes and the
//!   protocol records in one place.
//! - [`schedule`]: the tile scheduler every role reads ([`TileScheduler`]): a persistent grid
//!   ([`PersistentGrid`]) over tiles in a chosen order ([`banded`] rasterization, L2 sections),
//!   whole or in [`Turns`] (consumers alternating at the tiles: ping-pong), and [`IssueOrder`]
//!   (two warpgroups alternating on the tensor cores step by step over the same tiles).
//! - [`epilogue`]: epilogues users compose over an accumulator fragment ([`Epilogue`]).
//! - [`gate`]: a producer that waits for its rows' flags before it loads them ([`RowGate`]:
//!   rows a copy engine or a peer GPU brings in chunks).
//! - [`slabs`]: a `rows x d` tile loaded by TMA as wgmma's 128-byte-swizzled slabs
//!   ([`load_slabs`]; a CTA pair's halves multicast into both CTAs: [`load_slabs_in_pair`]).
//! - [`fragments`]: a warp's `mma.sync` fed from 8-bit floats in shared memory, converted to
//!   f16 in registers (an FP8 KV cache's K and V: `library::decode`).
//! - [`ticket`]: the last of several parts of one result to arrive combines them
//!   ([`ticket::last_arrival`]: split-K's fixup, split-KV decode's combine).
//! - [`pages`]: a key's block-table slot and row in its page, moved a fixed step at a time
//!   through pages of a run-time size by adds, not divisions ([`PageCursor`]: a paged KV
//!   cache's tiles in `library::decode`; [`PageWindow`]: a warp's next 32 steps' block-table
//!   entries across its lanes, read a window ahead, a step's page one `shfl.sync`; looking
//!   ahead, also the page a fixed number of steps on: `library::decode`'s page touch).
//!
//! The library's GEMMs (`library::gemm`: the mainloop, `HopperGemm::with_epilogue`) and its
//! attention are written with them; a user's kernel takes the same parts
//! (`examples/gemm_epilogue.rs`).

pub mod epilogue;
pub mod fragments;
pub mod gate;
pub mod pages;
pub mod ring;
pub mod roles;
pub mod schedule;
pub mod slabs;
pub mod ticket;

pub use epilogue::{
    Activation, BandPacing, Combine, Element, Epilogue, EpilogueOp, EpilogueTensor, FragmentAt,
    StagedBlock,
};
pub use gate::RowGate;
pub use pages::{PageCursor, PageWindow};
pub use ring::{InitScope, Ring, init_barriers, pool_barrier, ring_and_once, rings};
pub use roles::{ConsumerId, WarpSpecialized};
pub use schedule::{
    Along, Band, ClusterTiles, GridSchedule, GridTile, HostStreamUnit, IssueOrder, PersistentGrid,
    StreamUnit, TileBody, TileScheduler, Turn, Turns, banded, stream_k_units,
};
pub use slabs::{load_slabs, load_slabs_in_pair, stage_for_bulk, stage_for_bulk_then};
