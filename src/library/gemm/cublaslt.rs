//! cuBLASLt FP8 as the baseline of the FP8 GEMM, in the same process: `D = sa·sb·A·Bᵀ` for
//! row-major A `[m, k]` and B `[n, k]` in e4m3 or e5m2 with per-tensor f32 scales read from
//! device memory, D `[m, n]` bf16 or f32.
//!
//! cudarc's safe `Matmul` needs one element type for A, B and D, so this drives the `result`
//! layer directly. cuBLASLt's FP8 matmul takes only the "TN" form (A transposed, B not, column
//! major; cuBLAS 12 "cublasLtMatmul regular FP8 support"): in column-major terms
//! `Dᵀ [n, m] = B [n, k] · Aᵀ`, which is exactly row-major A and B, K contiguous.

use std::ffi::c_void;
use std::mem::size_of;
use std::sync::Arc;

use cudarc::cublaslt::result::{self as lt, CublasError};
use cudarc::cublaslt::sys;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use half::bf16;

use crate::runtime::cuda::{CudaSlice, CudaStream};
use crate::runtime::{E4m3, E5m2};

/// An element type of the baseline's operands, with its `cudaDataType`.
pub trait LtType: cudarc::driver::DeviceRepr {
    /// Its `cudaDataType`.
    const TYPE: sys::cudaDataType;
}

/// The FP8 element types cuBLASLt multiplies.
pub trait Fp8Elem: LtType {}

/// The output element types of the baseline.
pub trait Fp8Out: LtType {}

/// Implements [`LtType`] with its `cudaDataType` and the role trait (`Fp8Elem` or `Fp8Out`) for
/// each listed type.
macro_rules! lt_types {
    ($($ty:ty: $role:ident = $code:ident),+ $(,)?) => {
        $(
            impl LtType for $ty {
                const TYPE: sys::cudaDataType = sys::cudaDataType::$code;
            }
            impl $role for $ty {}
        )+
    };
}

lt_types! {
    E4m3: Fp8Elem = CUDA_R_8F_E4M3,
    E5m2: Fp8Elem = CUDA_R_8F_E5M2,
    bf16: Fp8Out = CUDA_R_16BF,
    f32: Fp8Out = CUDA_R_32F,
}

/// How the FP8 products are accumulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accum {
    /// `CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1`: the tensor core's own accumulator throughout (what
    /// a per-tensor kernel without promotion does; `torch._scaled_mm(use_fast_accum=True)`).
    Fast,
    /// The default: partial sums promoted to f32 (`torch._scaled_mm`'s default).
    Promoted,
}

/// A cuBLASLt handle with its workspace (32 MiB: NVIDIA's recommendation for Hopper).
pub struct LtFp8 {
    handle: sys::cublasLtHandle_t,
    workspace: CudaSlice<u8>,
    stream: Arc<CudaStream>,
}

impl std::fmt::Debug for LtFp8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LtFp8")
            .field("workspace", &self.workspace.len())
            .finish()
    }
}

/// Errors of the baseline.
#[derive(Debug, thiserror::Error)]
pub enum LtError {
    /// cuBLASLt refused or failed (NOT_SUPPORTED: no algorithm for this shape and types).
    #[error("cuBLASLt: {0}")]
    Lt(#[from] CublasError),
    /// Allocating the workspace failed.
    #[error("CUDA: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    /// A buffer is shorter than the shape needs.
    #[error("{operand} holds {len} elements; the shape needs {need}")]
    Short {
        /// `a`, `b`, `d`, `scale_a` or `scale_b`.
        operand: &'static str,
        /// Its length.
        len: usize,
        /// What the shape needs.
        need: usize,
    },
}

/// One matmul's shape: `(m, n, k)`.
pub type Shape = (usize, usize, usize);

/// A layout or descriptor destroyed when dropped.
struct Owned<T: Copy> {
    raw: T,
    drop: unsafe fn(T) -> Result<(), CublasError>,
}

impl<T: Copy> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by the matching cuBLASLt call and is destroyed once.
        // A failure to destroy leaks a handle; nothing else can be done about it here.
        let _ = unsafe { (self.drop)(self.raw) };
    }
}

fn layout(
    ty: sys::cudaDataType,
    rows: usize,
    cols: usize,
    ld: usize,
) -> Result<Owned<sys::cublasLtMatrixLayout_t>, LtError> {
    let raw = lt::create_matrix_layout(ty, rows as u64, cols as u64, ld as i64)?;
    Ok(Owned {
        raw,
        drop: lt::destroy_matrix_layout,
    })
}

/// Sets one matmul-descriptor attribute from a value.
fn set<V>(
    desc: sys::cublasLtMatmulDesc_t,
    attr: sys::cublasLtMatmulDescAttributes_t,
    value: &V,
) -> Result<(), LtError> {
    // SAFETY: `desc` is live; `value` is valid for `size_of::<V>()` bytes, the size cuBLASLt
    // reads for `attr` (the callers pass the attribute's documented type).
    unsafe {
        lt::set_matmul_desc_attribute(
            desc,
            attr,
            value as *const V as *const c_void,
            size_of::<V>(),
        )?;
    }
    Ok(())
}

fn check_len(operand: &'static str, len: usize, need: usize) -> Result<(), LtError> {
    if len < need {
        return Err(LtError::Short { operand, len, need });
    }
    Ok(())
}

impl LtFp8 {
    /// A handle on `stream`.
    pub fn new(stream: Arc<CudaStream>) -> Result<LtFp8, LtError> {
        let handle = lt::create_handle()?;
        // SAFETY: the workspace is scratch for cuBLASLt; its contents are never read here.
        let workspace = unsafe { stream.alloc::<u8>(32 << 20)? };
        Ok(LtFp8 {
            handle,
            workspace,
            stream,
        })
    }

    /// `d = scale_a[0] · scale_b[0] · a · bᵀ` on the handle's stream, for row-major `a [m, k]`,
    /// `b [n, k]` and `d [m, n]` (`k` a multiple of 16 and both leading dimensions 16-byte
    /// aligned, as cuBLASLt's FP8 kernels require; otherwise it answers NOT_SUPPORTED).
    #[allow(clippy::too_many_arguments)]
    pub fn matmul<A: Fp8Elem, B: Fp8Elem, D: Fp8Out>(
        &self,
        (m, n, k): Shape,
        a: &CudaSlice<A>,
        b: &CudaSlice<B>,
        scale_a: &CudaSlice<f32>,
        scale_b: &CudaSlice<f32>,
        d: &mut CudaSlice<D>,
        accum: Accum,
    ) -> Result<(), LtError> {
        check_len("a", a.len(), m * k)?;
        check_len("b", b.len(), n * k)?;
        check_len("d", d.len(), m * n)?;
        check_len("scale_a", scale_a.len(), 1)?;
        check_len("scale_b", scale_b.len(), 1)?;
        let s = &self.stream;
        // Column-major operands of `Dᵀ = op(B) · A` (see the module doc): cuBLAS's A is our B
        // stored k x n (transposed), its B is our A stored k x m.
        let lt_a = layout(B::TYPE, k, n, k)?;
        let lt_b = layout(A::TYPE, k, m, k)?;
        let lt_d = layout(D::TYPE, n, m, n)?;
        let desc = Owned {
            raw: lt::create_matmul_desc(
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                sys::cudaDataType::CUDA_R_32F,
            )?,
            drop: lt::destroy_matmul_desc,
        };
        use sys::cublasLtMatmulDescAttributes_t as Attr;
        // The transpose attributes are `cublasOperation_t`s, 32-bit (cuBLAS's enum).
        use cudarc::cublas::sys::cublasOperation_t as Op;
        let (t, n_op) = (Op::CUBLAS_OP_T as i32, Op::CUBLAS_OP_N as i32);
        set(desc.raw, Attr::CUBLASLT_MATMUL_DESC_TRANSA, &t)?;
        set(desc.raw, Attr::CUBLASLT_MATMUL_DESC_TRANSB, &n_op)?;
        let fast: i8 = (accum == Accum::Fast) as i8;
        set(desc.raw, Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast)?;
        let (sa, _ra) = scale_a.device_ptr(s);
        let (sb, _rb) = scale_b.device_ptr(s);
        // cuBLAS's A is our B: its scale is scale_b.
        set(desc.raw, Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb)?;
        set(desc.raw, Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa)?;
        let pref = Owned {
            raw: lt::create_matmul_pref()?,
            drop: lt::destroy_matmul_pref,
        };
        let ws = self.workspace.len();
        // SAFETY: `pref` is live; the attribute is a `size_t`.
        unsafe {
            lt::set_matmul_pref_attribute(
                pref.raw,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &ws as *const usize as *const c_void,
                size_of::<usize>(),
            )?;
        }
        // SAFETY: every handle is live for the call.
        let heuristic = unsafe {
            lt::get_matmul_algo_heuristic(
                self.handle,
                desc.raw,
                lt_a.raw,
                lt_b.raw,
                lt_d.raw,
                lt_d.raw,
                pref.raw,
            )?
        };
        let (one, zero) = (1.0f32, 0.0f32);
        let (pa, _ra) = a.device_ptr(s);
        let (pb, _rb) = b.device_ptr(s);
        let (pw, _rw) = self.workspace.device_ptr(s);
        let (pd, _rd) = d.device_ptr_mut(s);
        // SAFETY: the buffers are at least as long as the layouts say (checked above) and stay
        // borrowed, with their stream records, until the call is enqueued; beta is 0, so C (= D)
        // is not read.
        unsafe {
            lt::matmul(
                self.handle,
                desc.raw,
                &one as *const f32 as *const c_void,
                &zero as *const f32 as *const c_void,
                pb as *const c_void,
                lt_a.raw,
                pa as *const c_void,
                lt_b.raw,
                pd as *const c_void,
                lt_d.raw,
                pd as *mut c_void,
                lt_d.raw,
                &heuristic.algo,
                pw as *mut c_void,
                ws,
                s.cu_stream() as sys::cudaStream_t,
            )?;
        }
        Ok(())
    }
}

impl Drop for LtFp8 {
    fn drop(&mut self) {
        // SAFETY: the handle was created in `new` and is destroyed once.
        let _ = unsafe { lt::destroy_handle(self.handle) };
    }
}
