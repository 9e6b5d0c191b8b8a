//! The runtime's error type: every failure has a kind and, where there is one, a place (the
//! parameter, the PTX line, the tensor-map rule).

use cudarc::driver::DriverError;

use super::tensor_map::TensorMapRule;
use crate::signature::Fact;
use ptx_isa::ScalarType;

/// Where a symbolic extent got one of its values: `param`'s dimension `dim`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolSource {
    /// The tensor parameter.
    pub param: String,
    /// The dimension of its shape (0 = outermost).
    pub dim: usize,
    /// The extent the argument has there.
    pub value: usize,
}

impl std::fmt::Display for SymbolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.shape[{}] = {}", self.param, self.dim, self.value)
    }
}

fn sources_text(values: &[SymbolSource]) -> String {
    let parts: Vec<String> = values.iter().map(ToString::to_string).collect();
    parts.join(", ")
}

fn tma_text(rule: &Option<TensorMapRule>, value: &str) -> String {
    match rule {
        Some(rule) => format!("{rule} (got {value})"),
        None => value.to_string(),
    }
}

fn jit_text(
    line: &Option<usize>,
    source_line: &Option<String>,
    message: &str,
    log: &str,
) -> String {
    match (line, source_line) {
        (Some(l), Some(src)) => {
            format!("PTX JIT failed at line {l}: {message}\n  {l:>5} | {src}\nfull log:\n{log}")
        }
        (Some(l), None) => format!("PTX JIT failed at line {l}: {message}\nfull log:\n{log}"),
        _ => format!("PTX JIT failed: {message}\nfull log:\n{log}"),
    }
}

/// A runtime failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The CUDA driver library (`libcuda`) could not be loaded.
    #[error("no CUDA driver: libcuda could not be loaded on this machine")]
    NoDriver,
    /// The driver loaded but there is no such device.
    #[error("no CUDA device {ordinal}: the driver reports {count} device(s)")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        count: usize,
    },
    /// The driver JIT rejected the PTX.
    #[error("{}", jit_text(.line, .source_line, .message, .log))]
    Jit {
        /// The 1-based PTX line of the first error, when the log names one.
        line: Option<usize>,
        /// That line of the PTX source.
        source_line: Option<String>,
        /// The first error message of the log (or the driver's error when the log is empty).
        message: String,
        /// The whole JIT error log.
        log: String,
    },
    /// The PTX text cannot be handed to the driver (it holds a NUL byte).
    #[error("invalid PTX text: {reason}")]
    InvalidPtx {
        /// Why.
        reason: String,
    },
    /// A JIT option out of its range.
    #[error("invalid JIT option: {reason}")]
    JitOption {
        /// Why.
        reason: String,
    },
    /// The module has no entry point of that name.
    #[error("the module has no kernel named `{name}`")]
    KernelNotFound {
        /// The name looked up.
        name: String,
    },
    /// `cuLaunchKernelEx` (or a stream operation right after it) failed.
    #[error("launch of `{kernel}` failed: {source}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// The driver's error.
        source: DriverError,
    },
    /// A kernel signature that no launch could satisfy.
    #[error(transparent)]
    Signature(#[from] crate::signature::SignatureError),
    /// Wrong number of arguments.
    #[error("kernel `{kernel}` takes {expected} argument(s) ({params}), got {got}")]
    ArgCount {
        /// The kernel.
        kernel: String,
        /// Arguments the signature takes (symbolic extents excluded).
        expected: usize,
        /// Arguments given.
        got: usize,
        /// The parameter list, for the message.
        params: String,
    },
    /// An argument of the wrong kind (a scalar where a tensor is expected, ...).
    #[error("argument `{param}`: expected a {expected}, got a {got}")]
    ArgKind {
        /// The parameter.
        param: String,
        /// What the parameter is.
        expected: String,
        /// What was passed.
        got: String,
    },
    /// An argument of the wrong element or scalar type.
    #[error("argument `{param}`: expected dtype {}, got {}", expected.name(), got.name())]
    ArgDtype {
        /// The parameter.
        param: String,
        /// The parameter's dtype.
        expected: ScalarType,
        /// The argument's dtype.
        got: ScalarType,
    },
    /// A tensor argument whose shape does not fit the parameter's.
    #[error("argument `{param}`: expected shape {expected}, got {got:?}: {reason}")]
    ArgShape {
        /// The parameter.
        param: String,
        /// The parameter's shape, as text (`[n, 64]`).
        expected: String,
        /// The argument's shape.
        got: Vec<usize>,
        /// What differs.
        reason: String,
    },
    /// Tensors disagree on the value of a symbolic extent.
    #[error("symbolic extent `{symbol}` has different values: {}", sources_text(.values))]
    SymbolMismatch {
        /// The symbol.
        symbol: String,
        /// Every place it was read, with the value there.
        values: Vec<SymbolSource>,
    },
    /// A symbolic extent's value does not fit the integer type the kernel takes it as.
    #[error("symbolic extent `{symbol}` = {value} does not fit the kernel's {}", dtype.name())]
    ExtentOverflow {
        /// The symbol.
        symbol: String,
        /// Its value.
        value: u64,
        /// The parameter's type.
        dtype: ScalarType,
    },
    /// A symbolic extent's value breaks a fact the kernel was built assuming (a multiple, a bound).
    #[error(
        "kernel `{kernel}`: symbolic extent `{symbol}` = {value}, but the kernel was built for {fact}"
    )]
    ExtentFact {
        /// The kernel.
        kernel: String,
        /// The symbol.
        symbol: String,
        /// Its value at this launch.
        value: u64,
        /// The fact it breaks ("a multiple of 4", "at most 8192").
        fact: Fact,
    },
    /// A tensor argument whose base address is not aligned as the parameter requires.
    #[error("argument `{param}`: address {addr:#x} is not {align}-byte aligned")]
    Misaligned {
        /// The parameter.
        param: String,
        /// The required alignment.
        align: usize,
        /// The argument's device address.
        addr: u64,
    },
    /// A tensor argument on another device than the kernel's.
    #[error("argument `{param}`: lives on device {got}, the kernel runs on device {expected}")]
    WrongDevice {
        /// The parameter.
        param: String,
        /// The kernel's device ordinal.
        expected: usize,
        /// The argument's device ordinal.
        got: usize,
    },
    /// More dynamic shared memory than the device allows a block.
    #[error(
        "{requested} bytes of dynamic shared memory (+{static_bytes} static) exceed the device's \
         opt-in limit of {limit} bytes per block"
    )]
    SharedMemoryTooLarge {
        /// Dynamic bytes asked for.
        requested: usize,
        /// The kernel's static shared memory.
        static_bytes: usize,
        /// The device's per-block opt-in maximum.
        limit: usize,
    },
    /// A cluster with more blocks than allowed.
    #[error("cluster {dims:?} has {size} blocks; the limit is {limit}")]
    ClusterTooLarge {
        /// The cluster dimensions.
        dims: [u32; 3],
        /// Blocks per cluster.
        size: u64,
        /// The limit (8 portable, 16 with the non-portable attribute).
        limit: u64,
    },
    /// A launch configuration that cannot work (zero dimension, grid not a multiple of the
    /// cluster, too many threads per block, ...).
    #[error("invalid launch configuration: {reason}")]
    InvalidLaunch {
        /// Why.
        reason: String,
    },
    /// A tensor-map description that breaks one of `cuTensorMapEncodeTiled`'s rules.
    #[error("tensor map: {rule} (got {value})")]
    TensorMapRule {
        /// The rule broken.
        rule: TensorMapRule,
        /// The offending value.
        value: String,
    },
    /// The tensor passed for a TMA tensor parameter ([`crate::signature::Param::TmaTensor`]) is
    /// one the parameter's tensor map cannot describe: it breaks a rule of
    /// `cuTensorMapEncodeTiled` (its address, strides or extents with the declared box), or its
    /// element type has no tensor-map encoding.
    #[error("TMA tensor `{param}`: {}", tma_text(.rule, .value))]
    TmaTensor {
        /// The parameter.
        param: String,
        /// The rule broken; `None` when the element type has no tensor-map encoding.
        rule: Option<TensorMapRule>,
        /// The offending value.
        value: String,
    },
    /// A debug build's bounded waits gave up: the records they wrote, decoded.
    #[error("{0}")]
    Hang(Box<super::diagnosis::HangDiagnosis>),
    /// The host watchdog's limit passed before the kernel finished.
    #[error(
        "`{kernel}` did not finish within {waited:.1?} (host watchdog); it may still be running. \
         A debug build (bounded waits; the GEMM reads PTXKIT_DEBUG_HANG=1) names the barrier"
    )]
    Timeout {
        /// The kernel.
        kernel: String,
        /// How long the host waited.
        waited: std::time::Duration,
    },
    /// A hang-diagnosis setting or record that cannot be used.
    #[error("hang diagnosis: {reason}")]
    HangConfig {
        /// Why.
        reason: String,
    },
    /// The NCCL library (`libnccl`) could not be loaded.
    #[error("no NCCL: libnccl could not be loaded on this machine")]
    NoNccl,
    /// An NCCL call failed.
    #[error("NCCL {op} failed: {message}")]
    Nccl {
        /// The call (`ncclCommInitAll`, `ncclAllGather`, ...).
        op: &'static str,
        /// NCCL's error.
        message: String,
    },
    /// One device of a group cannot read or write another's memory (no peer access between
    /// them: `cuDeviceCanAccessPeer` says 0).
    #[error("device {from} cannot access the memory of device {to} (no peer access)")]
    PeerAccess {
        /// The device that would access.
        from: usize,
        /// The device whose memory it would access.
        to: usize,
    },
    /// A driver call of a multi-GPU operation failed (peer access, a pool's access, a flag, a
    /// peer copy), named.
    #[error("{call} failed: {source}")]
    DriverCall {
        /// The driver function (`cuMemcpyPeerAsync`, ...).
        call: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// Arguments to a multi-GPU operation that do not fit its device group (one per rank, equal
    /// lengths, a rank in range).
    #[error("device group: {reason}")]
    Group {
        /// Why.
        reason: String,
    },
    /// Any other driver error.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
}

/// The runtime's result type.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
