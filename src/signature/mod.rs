//! A kernel's signature: its parameters in `.param` order (tensors with their element type and
//! shape, scalars, symbolic extents, tensor maps, TMA tensors with their box). The layer below both kernel definition, which
//! produces it, and the runtime, which checks arguments against it.

mod error;
mod extent;
mod limits;
mod params;
mod tma;

pub use error::SignatureError;
pub(crate) use extent::shape_text;
pub use extent::{Extent, ExtentFacts, Fact};
pub use limits::{MAX_CLUSTER_SIZE, PORTABLE_CLUSTER_SIZE};
pub use params::{KernelSignature, Param};
pub use tma::{L2Promotion, TmaBox};
