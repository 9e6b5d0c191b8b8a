//! Tile layouts with named hardware axes, after the TIRx `TileLayout` model: a *shard* of
//! (extent, stride, axis) iterators grouped by the tile's dimensions, a *replica* part of
//! iterators that copy every element, and a per-axis *offset*.
//!
//! The logical coordinate of a tile dimension splits over that dimension's iterators row-major
//! (the last iterator varies fastest, as numpy and TIRx index). Each iterator adds
//! `coordinate * stride` to its axis; `m` is memory (element offset), the others are thread,
//! CTA and tensor-memory coordinates. `apply` returns the value on every axis, or a set of such
//! points when the layout is replicated.
//!
//! ```
//! use layouts::tile::{Axis, TileLayout};
//! // Column-major 4x8: element (i, j) at offset i + 4j.
//! let l: TileLayout = "S[(4, 8):(1, 4)]".parse()?;
//! assert_eq!(l.apply(&[1, 2])?[0].get(Axis::M), 9);
//! // A register tile: row i lives in thread i of the warpgroup, column j in register j.
//! let r: TileLayout = "S[(128, 8):(1@tid_in_wg, 1)]".parse()?;
//! let p = &r.apply(&[5, 3])?[0];
//! assert_eq!((p.get(Axis::TidInWg), p.get(Axis::M)), (5, 3));
//! assert_eq!(r.storage().to_string(), "S[8:1]");
//! assert_eq!(r.to_string(), "S[(128, 8):(1@tid_in_wg, 1)]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod axis;
mod cute;
mod error;
mod group;
mod layout;
mod notation;
mod slice;
mod tiling;

pub use axis::{Axis, AxisKind};
pub use error::TileError;
pub use layout::{Iter, Point, TileLayout};
pub use tiling::tile;
