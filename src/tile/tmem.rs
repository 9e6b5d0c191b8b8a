//! The tensor-memory pool (sm_100a): column bump allocation over the 512 columns of a CTA's
//! tensor memory (PTX ISA 9.7.16.2: 128 lanes x 512 columns of 32-bit cells), with the
//! warp-collective `tcgen05.alloc` / `relinquish_alloc_permit` / `dealloc` emitted for one warp
//! (PTX ISA 9.7.16.7.1: allocations are powers of two from 32 to 512 columns, made and freed by
//! the same warp).
//!
//! Kernels use it through kernel tensors: [`KernelBuilder::tmem_tensor`] declares a region,
//! [`KernelBuilder::tmem_alloc`] allocates them all, tile ops take the tensors (and regions of
//! them), [`KernelBuilder::tmem_free`] releases the allocation.

use ptx_isa::builder::{CmpOp, CtaGroup};
use ptx_isa::{Addr, Dim, FunctionBuilder, Pred, Reg, Result, SpecialReg, spaces, ty};

use crate::kernel::{Buffer, Elem, Expr, KernelBuilder, KernelError, Storage};

/// Columns of tensor memory per CTA.
pub const COLUMNS: u32 = 512;

/// A named block of columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmemRegion {
    /// Its name.
    pub name: String,
    /// Its first column, relative to the allocation.
    pub column: u32,
    /// Its width in columns.
    pub columns: u32,
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TmemError {
    /// More columns than tensor memory has.
    #[error("{name}: {requested} columns after {used} exceed the {COLUMNS} of tensor memory")]
    Full {
        /// The region.
        name: String,
        /// Columns asked for.
        requested: u32,
        /// Columns already used.
        used: u32,
    },
    /// A zero-width region.
    #[error("{0}: zero columns")]
    Empty(String),
}

/// The pool: regions bumped one after the other, each aligned to 32 columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TmemPool {
    regions: Vec<TmemRegion>,
    used: u32,
}

impl TmemPool {
    /// An empty pool.
    pub fn new() -> TmemPool {
        TmemPool::default()
    }

    /// Reserves `columns` columns (rounded up to 32) named `name`.
    pub fn alloc(
        &mut self,
        name: &str,
        columns: u32,
    ) -> std::result::Result<TmemRegion, TmemError> {
        if columns == 0 {
            return Err(TmemError::Empty(name.to_string()));
        }
        let width = columns.div_ceil(32) * 32;
        if self.used + width > COLUMNS {
            return Err(TmemError::Full {
                name: name.to_string(),
                requested: width,
                used: self.used,
            });
        }
        let r = TmemRegion {
            name: name.to_string(),
            column: self.used,
            columns: width,
        };
        self.used += width;
        self.regions.push(r.clone());
        Ok(r)
    }

    /// The regions, in allocation order.
    pub fn regions(&self) -> &[TmemRegion] {
        &self.regions
    }

    /// The columns `tcgen05.alloc` must request: the used columns rounded up to a power of two
    /// (at least 32).
    pub fn allocation(&self) -> u32 {
        self.used.max(32).next_power_of_two()
    }

    /// Emits `step` for the warp whose threads have `alloc_warp` true (the allocation is the
    /// warp's collective, made and freed by the same warp: PTX ISA 9.7.16.7.1).
    pub fn emit(&self, k: &mut FunctionBuilder, alloc_warp: Pred, step: TmemStep) -> Result<()> {
        let skip = k.label();
        k.unless(alloc_warp).bra(skip)?;
        match step {
            TmemStep::Alloc(slot) => {
                k.comment(&format!(
                    "tensor memory: {} columns for {}",
                    self.allocation(),
                    self.regions
                        .iter()
                        .map(|r| format!("{} @{}+{}", r.name, r.column, r.columns))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                k.tcgen05_alloc(CtaGroup::One, slot, self.allocation())?;
                k.tcgen05_relinquish_alloc_permit(CtaGroup::One)?;
            }
            TmemStep::Dealloc(base) => k.tcgen05_dealloc(CtaGroup::One, base, self.allocation())?,
        }
        k.place(skip)
    }
}

/// What the allocating warp emits ([`TmemPool::emit`]).
#[derive(Debug, Clone)]
pub enum TmemStep {
    /// `tcgen05.alloc` of [`TmemPool::allocation`] columns writing the base address to the
    /// shared word at the address, then `tcgen05.relinquish_alloc_permit` (no further
    /// allocations by this CTA). Everyone then needs a barrier and a
    /// `tcgen05.fence::after_thread_sync` before reading the slot.
    Alloc(Addr<spaces::Shared>),
    /// The `tcgen05.dealloc` of the allocation at the base address.
    Dealloc(Reg<ty::U32>),
}

/// Where a kernel's tensor memory is in its life: regions are declared, then allocated once
/// by one warp, then freed by the same warp before the kernel ends (PTX ISA 9.7.16.7.1: an
/// allocation must be released before the CTA exits).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum TmemPhase {
    /// Regions may still be declared; none may be used yet.
    #[default]
    Declaring,
    /// `tcgen05.alloc` has run: the regions' addresses are live.
    Allocated {
        /// The warp that allocated (and must free).
        warp: Pred,
        /// The allocation's base address.
        base: Reg<ty::U32>,
    },
    /// `tcgen05.dealloc` has run: the regions are gone.
    Freed,
}

/// A kernel's tensor memory: the pool its tensors were carved from, each region's address
/// register (written when the allocation is made) and the phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TmemState {
    pool: TmemPool,
    addrs: Vec<Reg<ty::U32>>,
    pub(crate) phase: TmemPhase,
}

impl TmemState {
    /// The error `finish` gives for a kernel whose tensor memory was not freed, if any.
    pub(crate) fn unfinished(&self) -> Option<&'static str> {
        match (&self.phase, self.pool.regions().is_empty()) {
            (TmemPhase::Declaring, false) => {
                Some("tensor memory was declared (tmem_tensor) but never allocated (tmem_alloc)")
            }
            (TmemPhase::Allocated { .. }, _) => Some(
                "tensor memory is still allocated at the end: call tmem_free before the kernel \
                 ends (PTX ISA 9.7.16.7.1)",
            ),
            _ => None,
        }
    }
}

/// 32-bit cells a row of `cols` elements of `T` takes (16-bit elements pack two to a cell).
fn cells<T: Elem>(cols: u32) -> u32 {
    (cols * T::DTYPE.bytes()).div_ceil(4)
}

impl KernelBuilder {
    /// A tensor-memory tensor (sm_100a) of `[128, cols]` elements of `T`: the CTA's 128 lanes by
    /// `cols` columns (32-bit cells; 16-bit elements two to a cell), carved from the kernel's
    /// tensor memory (regions bump-allocated, each on a 32-column boundary). Declare every
    /// region first, then [`KernelBuilder::tmem_alloc`]; tile ops take the tensor like any
    /// other (`copy_async` for `tcgen05.ld`/`st`/`cp`, `gemm_async` for `tcgen05.mma`).
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("acc", Target::Sm100a);
    /// let [_t] = k.thread_id([128])?;
    /// let acc = k.tmem_tensor::<ty::F32>("acc", [128, 256])?;
    /// k.tmem_alloc(0)?; // warp 0 allocates 256 columns
    /// // ... gemm_async(&acc, ..), copy_async(&fragment, &acc, ..) ...
    /// k.tmem_free()?;
    /// assert!(k.finish()?.ptx().contains("tcgen05.alloc.cta_group::1.sync.aligned"));
    /// # let _ = acc;
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn tmem_tensor<T: Elem>(
        &mut self,
        name: &str,
        [lanes, cols]: [u32; 2],
    ) -> Result<Buffer<T>, KernelError> {
        if self.tmem.phase != TmemPhase::Declaring {
            return Err(self.buffer_err(
                name,
                "tensor-memory tensors are declared before tmem_alloc (the allocation's size is \
                 decided there)",
            ));
        }
        if lanes != 128 {
            return Err(self.buffer_err(
                name,
                format!("{lanes} lanes: a tensor-memory region spans the CTA's 128 lanes (PTX ISA 9.7.16.2)"),
            ));
        }
        self.tmem
            .pool
            .alloc(name, cells::<T>(cols))
            .map_err(|e| self.buffer_err(name, e.to_string()))?;
        // The address register is written by `tmem_alloc`; the buffer's row-major strides only
        // describe its shape (tile ops address tensor memory by lane and column).
        let addr = self.isa().reg::<ty::U32>();
        self.tmem.addrs.push(addr);
        let mut b = self.decl_buffer::<T>(
            name,
            [Expr::from(lanes), Expr::from(cols)],
            crate::kernel::Ptr::Shared(addr),
            crate::kernel::Layout::RowMajor,
            0,
            4,
        )?;
        b.storage = Storage::Tmem(addr);
        Ok(b)
    }

    /// Allocates the tensor memory the declared tensors need (their columns rounded up to a
    /// power of two, at least 32: PTX ISA 9.7.16.7.1) by warp `warp` of the CTA (`%tid.x / 32`;
    /// the `tcgen05.alloc` is warp-collective), gives the permit up, and makes the address
    /// visible to every thread: the allocating warp writes it to a shared word,
    /// `tcgen05.fence::before_thread_sync`, `bar.sync 0`, `tcgen05.fence::after_thread_sync`
    /// (PTX ISA 9.7.16.6.4.1), then each thread reads it and forms each region's address.
    #[track_caller]
    pub fn tmem_alloc(&mut self, warp: u32) -> Result<(), KernelError> {
        if self.tmem.phase != TmemPhase::Declaring {
            return Err(
                self.error("tensor memory is allocated once (tmem_alloc was called before)")
            );
        }
        if self.tmem.pool.regions().is_empty() {
            return Err(
                self.error("tmem_alloc with no tensor-memory tensor declared (tmem_tensor)")
            );
        }
        let slot = self.pool_bytes("tmem_base", 4, 4)?;
        let state = self.tmem.clone();
        let f = self.isa();
        let tid = f.sreg_u32(SpecialReg::Tid(Dim::X))?;
        let w = f.reg::<ty::U32>();
        f.shr(w, tid, 5u32)?;
        let mine = f.pred();
        f.setp(CmpOp::Eq, mine, w, warp)?;
        let at = Addr::<spaces::Shared>::reg32(slot);
        state.pool.emit(f, mine, TmemStep::Alloc(at))?;
        f.tcgen05_fence_before_thread_sync()?;
        f.bar_sync(0u32, None)?;
        f.tcgen05_fence_after_thread_sync()?;
        let base = f.reg::<ty::U32>();
        f.ld(base, Addr::<spaces::Shared>::reg32(slot))?;
        // A region's address: the allocation's base plus its first column (lane 0).
        for (region, &addr) in state.pool.regions().iter().zip(&state.addrs) {
            f.add(addr, base, region.column)?;
        }
        self.tmem.phase = TmemPhase::Allocated { warp: mine, base };
        Ok(())
    }

    /// Frees the allocation: every thread's tensor-memory work is ordered before a `bar.sync 0`
    /// (`tcgen05.fence::before_thread_sync`), then the allocating warp runs `tcgen05.dealloc`
    /// (PTX ISA 9.7.16.7.1). The regions may not be used after it.
    #[track_caller]
    pub fn tmem_free(&mut self) -> Result<(), KernelError> {
        let TmemPhase::Allocated { warp, base } = self.tmem.phase.clone() else {
            return Err(self.error("tmem_free without a live allocation (tmem_alloc first, once)"));
        };
        let pool = self.tmem.pool.clone();
        let f = self.isa();
        f.tcgen05_fence_before_thread_sync()?;
        f.bar_sync(0u32, None)?;
        f.tcgen05_fence_after_thread_sync()?;
        pool.emit(f, warp, TmemStep::Dealloc(base))?;
        self.tmem.phase = TmemPhase::Freed;
        Ok(())
    }

    /// The tile operand of a tensor-memory tensor or of a region of one (`acc.region([0, c],
    /// [128, n])`: its origin moves the address by whole lanes and cells, lane in bits 31-16 and
    /// column in bits 15-0, PTX ISA 9.7.16.2.1); refused outside its allocation's life.
    #[track_caller]
    pub(crate) fn tmem_tile<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        addr: Reg<ty::U32>,
    ) -> Result<crate::tile::TileRef, KernelError> {
        if !matches!(self.tmem.phase, TmemPhase::Allocated { .. }) {
            return Err(self.buffer_err(
                buf.name(),
                "a tensor-memory tensor is used between tmem_alloc and tmem_free",
            ));
        }
        let dims: Option<Vec<u32>> = buf
            .shape()
            .iter()
            .map(|e| e.as_const().and_then(|c| u32::try_from(c).ok()))
            .collect();
        let Some(&[rows, cols]) = dims.as_deref() else {
            return Err(self.buffer_err(buf.name(), "a tensor-memory tile is [lanes, columns]"));
        };
        let (offset, pitch) = (
            buf.elem_offset().as_const(),
            buf.strides().first().and_then(Expr::as_const),
        );
        let (Some(offset), Some(pitch)) = (offset, pitch) else {
            return Err(
                self.buffer_err(buf.name(), "a tensor-memory region's origin is a constant")
            );
        };
        let (lane, col) = (offset / pitch, offset % pitch);
        let bytes = i64::from(T::DTYPE.bytes());
        if (col * bytes) % 4 != 0 {
            return Err(self.buffer_err(
                buf.name(),
                format!("column {col} is not on a 32-bit cell of tensor memory"),
            ));
        }
        let delta = (lane << 16) + col * bytes / 4;
        let addr = match u32::try_from(delta) {
            Ok(0) => addr,
            Ok(d) => {
                let at = self.isa().reg::<ty::U32>();
                self.isa().add(at, addr, d)?;
                at
            }
            Err(_) => {
                return Err(self.buffer_err(buf.name(), "a tensor-memory origin out of range"));
            }
        };
        Ok(crate::tile::TileRef::tmem(T::DTYPE, rows, cols, addr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_allocation_rounds_and_refuses_overflow() {
        let mut p = TmemPool::new();
        let a = p.alloc("acc0", 256).unwrap();
        let b = p.alloc("acc1", 100).unwrap();
        assert_eq!(
            (a.column, a.columns, b.column, b.columns),
            (0, 256, 256, 128)
        );
        assert_eq!(p.allocation(), 512);
        assert!(matches!(p.alloc("x", 160), Err(TmemError::Full { .. })));
        assert!(matches!(p.alloc("z", 0), Err(TmemError::Empty(_))));
        let mut q = TmemPool::new();
        q.alloc("small", 8).unwrap();
        assert_eq!(q.allocation(), 32);
    }
}
