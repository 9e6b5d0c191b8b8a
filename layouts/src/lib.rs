//! Layout algebra for GPU tiles: CuTe-style shape:stride layouts, TIRx-style tile layouts with named
//! hardware axes, swizzles, and the fragment layouts of the tensor-core instructions.
#![deny(missing_docs)]

pub mod swizzle;

pub use swizzle::{Swizzle, SwizzleError};
