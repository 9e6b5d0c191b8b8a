//! smem
#![deny(missing_docs)]
pub mod alu;
pub mod arch;
pub mod desc;
pub mod dtype;
pub mod swizzle;
pub use arch::Arch;
pub use dtype::Dtype;
pub use layouts::Swizzle;
pub use swizzle::SwizzleMode;
