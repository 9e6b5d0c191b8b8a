//! Hardware fragment layouts as thread-value layouts: which thread holds which element of an
//! instruction's tile in which of its registers.
//!
//! A [`TvLayout`] is a CuTe layout of shape `(threads, values)` whose value is the element's
//! column-major offset `row + rows * col` in a `rows × cols` tile, the form CuTe uses for its
//! `MMA_Traits` and `Copy_Traits`. A lowering asks "does this register layout match atom X" by
//! building the thread-value view of its layout (e.g. [`crate::tile::TileLayout::thread_value`])
//! and calling [`TvLayout::compare`], which names the first element that differs.
//!
//! ```
//! use layouts::fragment::{mma, wgmma, Operand};
//! let c = mma::m16n8k16(Operand::C)?;
//! assert_eq!(c.coord(5, 2)?, (9, 2)); // PTX: thread 5 = group 1, c2 is row group+8, col 2*1+0
//! let d = wgmma::accumulator(64, ptx_isa::ScalarType::F16)?;
//! assert_eq!((d.threads(), d.values()), (128, 32));
//! assert!(d.compare(&c).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod ldmatrix;
pub mod mma;
pub mod tcgen05;
mod tv;
pub mod wgmma;

pub use tv::{FragmentError, Operand, TvLayout, TvMismatch};
