//! smem
#![deny(missing_docs)]
pub mod alu;
pub mod arch;
pub mod desc;
pub mod dtype;
pub mod major;
pub mod mbarrier;
pub mod pool;
pub mod swizzle;
pub mod tile;
pub use arch::Arch;
pub use dtype::Dtype;
pub use major::Major;
pub use layouts::Swizzle;
pub use swizzle::SwizzleMode;
