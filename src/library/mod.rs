//! The built-in kernel library: kernels written with [`crate::kernel::KernelBuilder`] and the
//! tile ops, each with what a caller (and the GPU self-test, [`crate::selftest`]) needs: its
//! build function, its host-side launcher where it has one, and its host reference. Nothing here
//! imports the self-test harness; [`crate::registry`] names every kernel once.

pub mod attention;
pub mod cluster_exchange;
pub mod decode;
pub mod gemm;
pub mod rows;
pub mod scale;
pub mod tma_copy;
pub mod tp;
pub mod vector_add;

pub use vector_add::vector_add;
