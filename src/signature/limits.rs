//! The launch-shape limits a kernel is defined within and launched with: the kernel-definition
//! layer refuses a cluster larger than the hardware runs, and the launcher checks the same bound.

/// Blocks per cluster any cluster-capable device runs (CUDA C++ Programming Guide, "Thread Block
/// Clusters": 8 is portable; more needs `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`).
pub const PORTABLE_CLUSTER_SIZE: u64 = 8;
/// Blocks per cluster Hopper runs with the non-portable attribute set.
pub const MAX_CLUSTER_SIZE: u64 = 16;
