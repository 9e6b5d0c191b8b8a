//! Buffers: metadata (shape, layout, element offset, alignment) over storage (a global pointer, a
//! shared address, or registers).
//!
//! As in TIRx, `addr(buf[i..]) = data + (elem_offset + sum(i_d * stride_d)) * sizeof(T)`: the same
//! logical access lowers to different address arithmetic depending only on the metadata, and
//! `view`, `permute`, `region` and `reinterpret` are pure metadata changes that emit nothing.

use ptx_isa::{Reg, ty};
use smem::SwizzleMode;

use super::error::{KernelError, Result};
use super::expr::{Expr, Exprs, simplify};
use ptx_isa::ScalarType;

/// An element type a buffer can hold: a register marker type whose PTX type is the element type
/// the launcher checks (`ty::Bf16` for bf16 data, not `ty::U16`). The tensor-core inputs are
/// element types too: `ty::Tf32` (f32 data on the host, read as tf32), `ty::E4m3` and
/// `ty::E5m2` (one byte each; the host's `runtime::E4m3`/`E5m2`).
pub trait Elem: ty::RegType {
    /// The element type: the marker's PTX type.
    const DTYPE: ScalarType = Self::TYPE;

    /// Zero as an immediate of this type (`0f00000000` for f32: PTX takes no integer literal
    /// for a float operand, PTX ISA 4.5.1; an integer's or a 16-bit float's bits `0`): the fill
    /// of a bounded load past the extent.
    fn zero() -> ptx_isa::Src<Self> {
        match Self::TYPE {
            ScalarType::F32 => ptx_isa::Src::Imm(ptx_isa::Imm::f32(0.0)),
            ScalarType::F64 => ptx_isa::Src::Imm(ptx_isa::Imm::f64(0.0)),
            _ => ptx_isa::Src::Imm(ptx_isa::Imm::UInt(0)),
        }
    }
}

macro_rules! elem {
    ($($m:ident),* $(,)?) => {$(
        impl Elem for ty::$m {}
    )*};
}
elem!(
    F32, F64, U32, S32, U64, S64, U16, S16, F16, Bf16, Tf32, E4m3, E5m2
);

/// A CuTe layout with nested modes given as a buffer layout, which takes one flat mode per
/// dimension ([`Layout::cute`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} has nested modes; a buffer layout takes a flat one")]
pub struct NestedLayout(pub layouts::Layout);

/// A layout that does not fit a buffer's shape ([`Layout::strides_for`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayoutMismatch {
    /// Explicit strides of another rank than the shape's.
    #[error("{strides} strides for a rank-{rank} shape")]
    Rank {
        /// Strides given.
        strides: usize,
        /// The shape's rank.
        rank: usize,
    },
    /// A CuTe layout whose extents are not the shape's.
    #[error(
        "layout extents {layout:?} do not match the shape [{}]",
        shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    Extents {
        /// The layout's extents.
        layout: Vec<i64>,
        /// The shape.
        shape: Vec<Expr>,
    },
}

/// How a buffer's indices map to element offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// The last index is contiguous (C order).
    RowMajor,
    /// The first index is contiguous (Fortran order).
    ColMajor,
    /// Explicit strides, in elements, one per dimension (`S[(4, 8):(16, 1)]`).
    Strided(Vec<Expr>),
    /// A flat CuTe layout's (extent, stride) modes: the strides, with the extents checked against
    /// the buffer's shape ([`Layout::cute`]).
    Shaped(Vec<(i64, i64)>),
}

impl Layout {
    /// Explicit strides.
    #[track_caller]
    pub fn strided(strides: impl Exprs) -> Layout {
        Layout::Strided(strides.exprs())
    }

    /// The layout of a flat CuTe layout (`"(4,8):(1,4)"`, as TIRx's `TileLayout(S[(4, 8):(1, 4)])`):
    /// one mode per buffer dimension. Nested modes are refused (their indexing needs the tile
    /// layouts, not a stride per dimension).
    #[track_caller]
    pub fn cute(l: &layouts::Layout) -> std::result::Result<Layout, NestedLayout> {
        if l.depth() > 1 {
            return Err(NestedLayout(l.clone()));
        }
        Ok(Layout::Shaped(l.flat_modes()))
    }

    /// The strides of this layout for `shape`; an error when explicit strides have the wrong rank
    /// or a CuTe layout's extents are not the shape's.
    #[track_caller]
    pub fn strides_for(&self, shape: &[Expr]) -> std::result::Result<Vec<Expr>, LayoutMismatch> {
        let n = shape.len();
        let mut s = vec![Expr::Const(1); n];
        match self {
            Layout::RowMajor => {
                for d in (0..n.saturating_sub(1)).rev() {
                    s[d] = s[d + 1].clone() * shape[d + 1].clone();
                }
            }
            Layout::ColMajor => {
                for d in 1..n {
                    s[d] = s[d - 1].clone() * shape[d - 1].clone();
                }
            }
            Layout::Strided(v) if v.len() == n => s = v.clone(),
            Layout::Strided(v) => {
                return Err(LayoutMismatch::Rank {
                    strides: v.len(),
                    rank: n,
                });
            }
            Layout::Shaped(modes) => {
                let fits = modes.len() == n
                    && modes
                        .iter()
                        .zip(shape)
                        .all(|(m, e)| e.as_const().is_none_or(|c| c == m.0));
                if !fits {
                    return Err(LayoutMismatch::Extents {
                        layout: modes.iter().map(|m| m.0).collect(),
                        shape: shape.to_vec(),
                    });
                }
                s = modes.iter().map(|m| Expr::Const(m.1)).collect();
            }
        }
        Ok(s.iter().map(plain).collect())
    }
}

/// `e` simplified with nothing known of its variables (buffers do not know their kernel's).
#[track_caller]
fn plain(e: &Expr) -> Expr {
    let none = |_| super::expr::VarFacts::UNKNOWN;
    simplify(e, &none)
}

/// Where a buffer's elements are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage<T: Elem> {
    /// Global memory: a register holding the `.global` address of the data pointer.
    Global(Reg<ty::U64>),
    /// Shared memory: a register holding the shared-window address of the data pointer.
    Shared(Reg<ty::U32>),
    /// Registers, one per element (private to the thread).
    Local(Vec<Reg<T>>),
    /// Tensor memory (sm_100a): a register holding the tensor-memory address of the region's
    /// lane 0, first column (PTX ISA 9.7.16.2.1: lane in bits 31-16, column in bits 15-0). Only
    /// tile ops reach it (`tcgen05.ld`/`st`/`cp`/`mma`); it has no address a load can use.
    Tmem(Reg<ty::U32>),
}

/// A pointer to an element: what `ptr_to` gives and `decl_buffer` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ptr {
    /// A `.global` address.
    Global(Reg<ty::U64>),
    /// A shared-window (`.shared::cta`) address.
    Shared(Reg<ty::U32>),
}

/// A buffer: storage plus shape, strides, element offset and data alignment (and, for shared
/// tiles, the byte swizzle the storage is written with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer<T: Elem> {
    pub(crate) kernel: String,
    pub(crate) name: String,
    pub(crate) storage: Storage<T>,
    pub(crate) shape: Vec<Expr>,
    pub(crate) strides: Vec<Expr>,
    pub(crate) elem_offset: Expr,
    pub(crate) align: u32,
    pub(crate) swizzle: Option<SwizzleMode>,
    /// Register buffers of a fragment: which (thread, value) holds which element of the tile
    /// the scope's threads hold together (a wgmma accumulator, an `mma` operand).
    pub(crate) fragment: Option<layouts::fragment::TvLayout>,
}

impl<T: Elem> Buffer<T> {
    #[track_caller]
    fn err(&self, reason: impl Into<String>) -> KernelError {
        KernelError::Buffer {
            kernel: self.kernel.clone(),
            buffer: self.name.clone(),
            reason: reason.into(),
            at: super::error::CallSite::here(),
        }
    }

    /// The fragment its registers hold, for a register buffer of one.
    pub fn fragment(&self) -> Option<&layouts::fragment::TvLayout> {
        self.fragment.as_ref()
    }

    /// Its name.
    #[track_caller]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its shape.
    #[track_caller]
    pub fn shape(&self) -> &[Expr] {
        &self.shape
    }

    /// Its strides, in elements.
    #[track_caller]
    pub fn strides(&self) -> &[Expr] {
        &self.strides
    }

    /// Its element offset.
    #[track_caller]
    pub fn elem_offset(&self) -> &Expr {
        &self.elem_offset
    }

    /// The alignment of its data pointer in bytes.
    #[track_caller]
    pub fn align(&self) -> u32 {
        self.align
    }

    /// Its storage.
    #[track_caller]
    pub fn storage(&self) -> &Storage<T> {
        &self.storage
    }

    /// The swizzle its shared storage is written with, if any.
    #[track_caller]
    pub fn swizzle(&self) -> Option<SwizzleMode> {
        self.swizzle
    }

    /// The data pointer (`A.data`): the storage's base, before the element offset; `None` for
    /// registers.
    #[track_caller]
    pub fn data(&self) -> Option<Ptr> {
        match &self.storage {
            Storage::Global(r) => Some(Ptr::Global(*r)),
            Storage::Shared(r) => Some(Ptr::Shared(*r)),
            Storage::Local(_) | Storage::Tmem(_) => None,
        }
    }

    /// The registers of a register buffer (in element order).
    #[track_caller]
    pub fn regs(&self) -> Option<&[Reg<T>]> {
        match &self.storage {
            Storage::Local(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the strides are the compact row-major strides of the shape.
    #[track_caller]
    pub fn is_row_major(&self) -> bool {
        Layout::RowMajor
            .strides_for(&self.shape)
            .is_ok_and(|s| s == self.strides)
    }

    #[track_caller]
    fn const_size(shape: &[Expr]) -> Option<i64> {
        shape
            .iter()
            .try_fold(1i64, |acc, e| acc.checked_mul(e.as_const()?))
    }

    /// The same storage seen with another row-major shape (`A.view(64, 4)`). The buffer must be
    /// compact row-major; when both sizes are constants they must agree.
    #[track_caller]
    pub fn view(&self, shape: impl Exprs) -> Result<Buffer<T>> {
        let shape: Vec<Expr> = shape.exprs();
        if !self.is_row_major() {
            return Err(self.err("view needs a compact row-major buffer"));
        }
        if let (Some(a), Some(b)) = (Self::const_size(&self.shape), Self::const_size(&shape)) {
            if a != b {
                return Err(self.err(format!("view of {a} elements as {b}")));
            }
        }
        let strides = Layout::RowMajor
            .strides_for(&shape)
            .map_err(|r| self.err(r.to_string()))?;
        Ok(Buffer {
            shape,
            strides,
            fragment: None,
            ..self.clone()
        })
    }

    /// The axes permuted (`A.permute(1, 0)` transposes): dimension `d` of the result is dimension
    /// `perm[d]` of this buffer.
    #[track_caller]
    pub fn permute(&self, perm: &[usize]) -> Result<Buffer<T>> {
        let n = self.shape.len();
        let mut seen = vec![false; n];
        for &p in perm {
            if p >= n || std::mem::replace(&mut seen[p], true) {
                return Err(self.err(format!("{perm:?} is not a permutation of 0..{n}")));
            }
        }
        if perm.len() != n {
            return Err(self.err(format!("{perm:?} is not a permutation of 0..{n}")));
        }
        Ok(Buffer {
            shape: perm.iter().map(|&p| self.shape[p].clone()).collect(),
            strides: perm.iter().map(|&p| self.strides[p].clone()).collect(),
            fragment: None,
            ..self.clone()
        })
    }

    /// The sub-region starting at `origin` with extents `shape` (`A[m0:m0+BM, 0:BK]`): same
    /// strides, the origin folded into the element offset.
    #[track_caller]
    pub fn region(&self, origin: impl Exprs, shape: impl Exprs) -> Result<Buffer<T>> {
        let origin: Vec<Expr> = origin.exprs();
        let shape: Vec<Expr> = shape.exprs();
        if origin.len() != self.shape.len() || shape.len() != self.shape.len() {
            return Err(self.err(format!(
                "region of rank {}/{} in a rank-{} buffer",
                origin.len(),
                shape.len(),
                self.shape.len()
            )));
        }
        let mut off = self.elem_offset.clone();
        for (o, s) in origin.into_iter().zip(&self.strides) {
            off = off + o * s.clone();
        }
        Ok(Buffer {
            shape,
            elem_offset: plain(&off),
            fragment: None,
            ..self.clone()
        })
    }

    /// The same storage under another layout.
    #[track_caller]
    pub fn with_layout(&self, layout: Layout) -> Result<Buffer<T>> {
        let strides = layout
            .strides_for(&self.shape)
            .map_err(|r| self.err(r.to_string()))?;
        Ok(Buffer {
            strides,
            fragment: None,
            ..self.clone()
        })
    }

    /// A shared buffer whose storage is written with `mode` (as a TMA load with that swizzle
    /// writes it): indexing applies the swizzle to the byte offset from the data pointer, which
    /// must be aligned to the swizzle's repeat ([`SwizzleMode::alignment`]).
    #[track_caller]
    pub fn swizzled(&self, mode: SwizzleMode) -> Result<Buffer<T>> {
        if !matches!(self.storage, Storage::Shared(_)) {
            return Err(self.err("only shared buffers are swizzled"));
        }
        if self.align < mode.alignment() {
            return Err(self.err(format!(
                "{mode} swizzle needs a {}-byte aligned base; this one is aligned to {}",
                mode.alignment(),
                self.align
            )));
        }
        Ok(Buffer {
            swizzle: Some(mode),
            ..self.clone()
        })
    }

    /// The same bytes as elements of another type with a row-major `shape` (`decl_buffer` with
    /// another dtype over `A.data`): the element offset converts to the new element size, which
    /// must divide it.
    #[track_caller]
    pub fn reinterpret<U: Elem>(&self, shape: impl Exprs) -> Result<Buffer<U>> {
        let storage = match &self.storage {
            Storage::Global(r) => Storage::Global(*r),
            Storage::Shared(r) => Storage::Shared(*r),
            Storage::Local(_) => return Err(self.err("registers cannot be reinterpreted")),
            Storage::Tmem(_) => {
                return Err(self.err("tensor memory cannot be reinterpreted"));
            }
        };
        let (from, to) = (T::DTYPE.bytes() as i64, U::DTYPE.bytes() as i64);
        let elem_offset = match self.elem_offset.as_const() {
            Some(c) if (c * from) % to == 0 => Expr::Const(c * from / to),
            Some(c) => {
                return Err(self.err(format!(
                    "element offset {c} x {from} bytes is not a multiple of {to}"
                )));
            }
            None => return Err(self.err("reinterpret needs a constant element offset")),
        };
        let shape: Vec<Expr> = shape.exprs();
        let strides = Layout::RowMajor
            .strides_for(&shape)
            .map_err(|r| self.err(r.to_string()))?;
        Ok(Buffer {
            kernel: self.kernel.clone(),
            name: self.name.clone(),
            storage,
            shape,
            strides,
            elem_offset,
            align: self.align,
            swizzle: self.swizzle,
            fragment: None,
        })
    }

    /// The calling thread's `n` registers of a register buffer, as a flat 1-D buffer (`R.local(n)`).
    /// Registers are already private to each thread here, so this is the flat view of the whole
    /// buffer; `n` must be its size.
    #[track_caller]
    pub fn local(&self, n: usize) -> Result<Buffer<T>> {
        let Storage::Local(regs) = &self.storage else {
            return Err(self.err("local() takes a register buffer"));
        };
        if regs.len() != n {
            return Err(self.err(format!("{} registers, not {n}", regs.len())));
        }
        Ok(Buffer {
            shape: vec![Expr::Const(n as i64)],
            strides: vec![Expr::Const(1)],
            elem_offset: Expr::Const(0),
            ..self.clone()
        })
    }
}
