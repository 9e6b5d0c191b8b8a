//! The signatures of the hand-written kernels in `tests/ptx/`, as their launches check them:
//! one definition for `tests/runtime_gpu.rs` and `runtime::args`'s unit tests (which compile
//! this file through `#[path]`; the library names itself `ptxkit` for it).

#![allow(dead_code)]

use ptxkit::isa::ScalarType;
use ptxkit::runtime::{KernelSignature, Param};

/// `vadd.ptx`'s parameters: `a`, `b` and a 16-byte aligned `c` of `[n]` f32, the extent `n`.
pub fn vadd() -> KernelSignature {
    KernelSignature::new(
        "vadd",
        vec![
            Param::tensor("a", ScalarType::F32, vec!["n".into()]),
            Param::tensor("b", ScalarType::F32, vec!["n".into()]),
            Param::tensor_aligned("c", ScalarType::F32, vec!["n".into()], 16),
            Param::extent_u32("n"),
        ],
    )
}

/// `scale.ptx`'s parameters: `x` and `y` of `[m, 64]` f32, the factor `s`, the extent `m`.
pub fn scale() -> KernelSignature {
    KernelSignature::new(
        "scale",
        vec![
            Param::tensor("x", ScalarType::F32, vec!["m".into(), 64.into()]),
            Param::tensor("y", ScalarType::F32, vec!["m".into(), 64.into()]),
            Param::scalar("s", ScalarType::F32),
            Param::extent_u32("m"),
        ],
    )
}
