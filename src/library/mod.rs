//! The built-in kernel library: kernels written with [`crate::kernel::KernelBuilder`] and the
//! tile ops, each with what a caller (and the GPU self-test, [`crate::selftest`]) needs: its
//! build function, its host-side launcher where it has one, and its host reference. Nothing here
//! imports the self-test harness; [`crate::registry`] names every kernel once.

/// Defines a library kernel's run error (`$name`), one enum shape for the kernels with a host
/// launcher: the configuration refused (`Config`, from `$config`), a kernel not built
/// (`Build`, `$build` its message), loading or launching failed (`Runtime`), the operands not a
/// problem of the configuration (`Shape`, from `$shape`, `$shape_msg` its message).
macro_rules! run_error {
    ($(#[$doc:meta])* $name:ident, $config:ty, $build:literal, $shape:ty, $shape_msg:literal) => {
        $(#[$doc])*
        #[derive(Debug, thiserror::Error)]
        pub enum $name {
            /// The configuration is refused.
            #[error(transparent)]
            Config(#[from] $config),
            /// A kernel could not be built.
            #[error($build)]
            Build(#[from] crate::kernel::KernelError),
            /// Loading or launching failed (the signatures' own checks of shapes, types,
            /// alignment).
            #[error(transparent)]
            Runtime(#[from] crate::runtime::RuntimeError),
            /// The operands do not make a problem of the configuration.
            #[error($shape_msg)]
            Shape(#[from] $shape),
        }
    };
}

pub mod attention;
pub mod cluster_exchange;
pub mod decode;
pub mod gemm;
pub mod operands;
pub mod rows;
pub mod scale;
pub mod tma_copy;
pub mod tp;
pub mod vector_add;

pub use operands::OperandError;
pub use vector_add::vector_add;
