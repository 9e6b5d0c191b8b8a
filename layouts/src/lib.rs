//! Layout algebra for GPU tiles: CuTe-style shape:stride layouts, TIRx-style tile layouts with named
//! hardware axes, swizzles, and the fragment layouts of the tensor-core instructions.
//!
//! ```
//! use layouts::{complement, composition, logical_divide, Layout, Tiler};
//!
//! // A 4x8 column-major tile, divided into 2x4 blocks.
//! let a: Layout = "(4,8):(1,4)".parse()?;
//! let tiles = logical_divide(&a, &Tiler::from_shape(&layouts::IntTuple::flat(&[2, 4])))?;
//! assert_eq!(tiles.to_string(), "((2,2),(4,2)):((1,2),(4,16))");
//!
//! // Composition: R(i) == A(B(i)).
//! let b: Layout = "(2,2):(4,1)".parse()?;
//! let r = composition(&a, &b)?;
//! assert!((0..4).all(|i| r.call(i) == a.call(b.call(i))));
//!
//! // A violated precondition is an error that names it.
//! let err = complement(&"(2,2):(1,1)".parse()?, 8).unwrap_err();
//! assert!(err.to_string().contains("injectivity"));
//!
//! // The calculator behind `ptxkit layout`.
//! let l = layouts::calc::evaluate("zipped_divide((8,8):(1,8), <2:1, 4:1>)")?;
//! assert_eq!(l.to_string(), "((2,4),(4,2)):((1,8),(2,32))");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod calc;
mod coalesce;
mod complement;
mod composition;
mod divide;
mod error;
mod filter;
pub mod fragment;
mod inverse;
mod layout;
mod ordered;
pub mod print;
mod product;
mod shape;
pub mod swizzle;
mod swizzled;
pub mod tile;
mod tiler;

pub use coalesce::{coalesce, coalesce_by_mode};
pub use complement::complement;
pub use composition::{composition, composition_tiler};
pub use divide::{flat_divide, logical_divide, tiled_divide, zipped_divide};
pub use error::LayoutError;
pub use filter::{filter, filter_zeros};
pub use inverse::{left_inverse, right_inverse};
pub use layout::{LIMIT, Layout};
pub use ordered::make_ordered_layout;
pub use product::{blocked_product, logical_product, raked_product, tiled_product, zipped_product};
pub use shape::IntTuple;
pub use swizzle::{Swizzle, SwizzleError};
pub use swizzled::{SwizzleUnit, SwizzledLayout};
pub use tiler::Tiler;
