//! The runtime: open a device, JIT-load PTX through the CUDA driver, check arguments against a
//! kernel signature, and launch through `cuLaunchKernelEx`; encode TMA tensor maps; drive the
//! GPUs of one host together ([`DeviceGroup`]: peer access, symmetric buffers, flags, NCCL).
//!
//! The driver is loaded dynamically (cudarc), so a machine without libcuda or without a GPU gets
//! [`RuntimeError::NoDriver`] / [`RuntimeError::NoDevice`] from [`Device::new`], never a panic.
//! Every check (arguments, launch configuration, tensor-map rules, JIT log reading) is a pure
//! function over descriptions and runs without a GPU.
//!
//! ```
//! use ptxkit::isa::ScalarType;
//! use ptxkit::runtime::{ArgDesc, KernelSignature, Param, TensorDesc, check_and_pack};
//!
//! // vadd(a: f32[n], b: f32[n], c: f32[n], n: u32): `n` is read from the tensors' shapes.
//! let sig = KernelSignature::new("vadd", vec![
//!     Param::tensor("a", ScalarType::F32, vec!["n".into()]),
//!     Param::tensor("b", ScalarType::F32, vec!["n".into()]),
//!     Param::tensor("c", ScalarType::F32, vec!["n".into()]),
//!     Param::extent_u32("n"),
//! ]);
//! let t = |addr, len| ArgDesc::Tensor(TensorDesc {
//!     dtype: ScalarType::F32, shape: vec![len], addr, device: 0,
//! });
//! let (_, symbols) = check_and_pack(&sig, &[t(0x1000, 100), t(0x2000, 100), t(0x3000, 100)], 0)?;
//! assert_eq!(symbols["n"], 100);
//! let err = check_and_pack(&sig, &[t(0x1000, 100), t(0x2000, 99), t(0x3000, 100)], 0);
//! assert!(err.unwrap_err().to_string().contains("b.shape[0] = 99"));
//!
//! // On a machine without a GPU, opening a device is an error, not a panic.
//! if let Err(e) = ptxkit::runtime::Device::new(0) {
//!     println!("no GPU here: {e}");
//! }
//! # Ok::<(), ptxkit::runtime::RuntimeError>(())
//! ```

mod args;
mod built;
mod device;
mod diagnosis;
mod dtype;
mod error;
mod fp8;
mod hang;
mod jit;
mod launch;
mod module;
mod multi;
mod tensor;
mod tensor_map;
mod timing;
mod watchdog;

pub use crate::signature::{
    Extent, ExtentFacts, Fact, KernelSignature, MAX_CLUSTER_SIZE, PORTABLE_CLUSTER_SIZE, Param,
    TmaBox,
};
pub use args::{
    ArgDesc, MAX_PARAM_BYTES, ParamBuffer, Symbols, TensorDesc, check_and_pack, tma_map_desc,
};
pub use built::{LoadedKernel, Residency};
pub use device::{Device, DeviceAttributes, device_count, driver_available, driver_version};
pub use diagnosis::{Cause, HangDiagnosis, Root};
pub use dtype::{Element, Scalar};
pub use error::{Result, RuntimeError, SymbolSource};
pub use fp8::{E4m3, E5m2};
pub use hang::{
    DEBUG_HANG_ENV, HangBuffer, HangReport, ObservedPhase, Trip, debug_hang_from_env,
    decode_record, decode_records, parse_debug_hang,
};
pub use jit::{JitDiagnostic, JitOptions, Severity, jit_error, parse_jit_log};
pub use launch::{Kernel, LaunchConfig, LaunchLimits, LaunchPlan, StreamOrder, check_launch};
pub use module::{Module, ModuleCache};
pub use multi::{DeviceGroup, Flags, Symmetric, nccl_available};
pub use tensor::{Arg, DeviceTensor, TensorArg, TensorMut, TensorRef};
pub use tensor_map::{
    Interleave, L2Promotion, NoTensorMapType, OobFill, TensorMap, TensorMapDType, TensorMapDesc,
    TensorMapRule, check_tensor_map,
};
pub use timing::{
    Before, L2_FLUSH_BYTES, mean_ms_back_to_back, median_ms, median_ms_interleaved,
    medians_ms_interleaved,
};
pub use watchdog::{PollOutcome, Watch, poll_until};

/// cudarc's driver layer, re-exported for slices and streams.
pub use cudarc::driver as cuda;
