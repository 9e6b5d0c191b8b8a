//! Kernel tensors as tile operands: a [`Buffer`] (a global tensor parameter, a shared or pooled
//! tile, a register fragment) lowers to the [`TileRef`] a variant reads, so a kernel author hands
//! tile ops the tensors they declared and never restates their element type, shape, layout,
//! swizzle, alignment or base. `TileRef` is what a tensor view lowers to; authors do not build one.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{KernelBuilder, TensorOpts};
//! use ptxkit::tile::ExecScope;
//!
//! // y = x through a shared tile, each copy one tile op on the tensors themselves.
//! let mut k = KernelBuilder::new("stage", Target::Sm90a);
//! let x = k.tensor::<ty::F32>("x", [64, 64], TensorOpts::default().align(16))?;
//! let y = k.tensor::<ty::F32>("y", [64, 64], TensorOpts::default().align(16))?;
//! let [_t] = k.thread_id([128])?;
//! let s = k.pool_alloc::<ty::F32>("s", &[64, 64], 128)?;
//! let cta = ExecScope::Cta { threads: 128 };
//! assert_eq!(k.copy(&s, &x, cta)?, "copy.vector");
//! k.sync_threads()?;
//! k.copy(&y, &s, cta)?;
//! assert!(k.finish()?.ptx().contains("ld.global.v4.b32"));
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::{Imm, Reg, Src, ty};
use smem::SwizzleMode;
use smem::pipeline::sync::{BarrierSync, NamedBarrier};

use super::op::{Accumulate, Elementwise, OpCtx, TileOp};
use super::operand::{Base, ExecScope, RunCount, Storage, TileRef};
use super::registry::plan;
use crate::kernel::{Buffer, CallSite, Elem, Expr, KernelBuilder, KernelError, Result, TmaTensor};

/// Something a tile op takes as an operand: a kernel [`Buffer`], or an already lowered
/// [`TileRef`] (a tensor-map tile).
pub trait TileOperand {
    /// The operand as a variant reads it.
    fn lower_tile(&self, k: &mut KernelBuilder) -> Result<TileRef>;
}

impl TileOperand for TileRef {
    fn lower_tile(&self, _: &mut KernelBuilder) -> Result<TileRef> {
        Ok(self.clone())
    }
}

impl<T: Elem> TileOperand for Buffer<T> {
    #[track_caller]
    fn lower_tile(&self, k: &mut KernelBuilder) -> Result<TileRef> {
        k.tile_ref(self)
    }
}

/// Extents of a buffer that are build-time constants, as a tile shape.
fn const_shape(k: &KernelBuilder, shape: &[Expr]) -> Option<Vec<u32>> {
    shape
        .iter()
        .map(|e| k.simplify(e).as_const().and_then(|c| u32::try_from(c).ok()))
        .collect()
}

impl KernelBuilder {
    /// The tile operand `buf` lowers to: its element type, constant shape, layout (from its
    /// strides: element `(r, c)` at `r * stride_r + c * stride_c`), swizzle, alignment and base
    /// address (its element offset folded in). A register buffer needs a fragment
    /// ([`KernelBuilder::alloc_fragment`]). For a block of a tensor with run-time extents, see
    /// [`KernelBuilder::tile_at`].
    #[track_caller]
    pub fn tile_ref<T: Elem>(&mut self, buf: &Buffer<T>) -> Result<TileRef> {
        let dtype = <T as ty::RegType>::TYPE;
        let err = |k: &KernelBuilder, why: String| k.buffer_err(buf.name(), why);
        if let crate::kernel::Storage::Local(regs) = buf.storage() {
            let Some(tv) = buf.fragment() else {
                return Err(err(
                    self,
                    "a register buffer is a tile operand only with a fragment (alloc_fragment)"
                        .into(),
                ));
            };
            let refs = regs.iter().map(|r| r.as_ref()).collect();
            return Ok(TileRef::registers(dtype, tv.clone(), refs));
        }
        if let crate::kernel::Storage::Tmem(addr) = buf.storage() {
            return self.tmem_tile(buf, *addr);
        }
        let Some(shape) = const_shape(self, buf.shape()) else {
            return Err(err(
                self,
                format!(
                    "a tile has a constant shape; [{}] is not (take a block with tile_at)",
                    buf.shape()
                        .iter()
                        .map(|e| self.show(e))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let strides: Option<Vec<i64>> = buf
            .strides()
            .iter()
            .map(|e| self.simplify(e).as_const())
            .collect();
        let Some(strides) = strides else {
            return Err(err(self, "a tile's strides are constants".into()));
        };
        // TileRef layouts index colexicographically over the shape reversed (column fastest).
        let (ext, st): (Vec<i64>, Vec<i64>) = shape
            .iter()
            .rev()
            .map(|&e| i64::from(e))
            .zip(strides.iter().rev().copied())
            .unzip();
        let layout = layouts::Layout::new(
            layouts::IntTuple::Tuple(ext.into_iter().map(layouts::IntTuple::Int).collect()),
            layouts::IntTuple::Tuple(st.into_iter().map(layouts::IntTuple::Int).collect()),
        )
        .map(|l| layouts::coalesce(&l))
        .map_err(|e| err(self, e.to_string()))?;
        let zeros = vec![Expr::Const(0); buf.shape().len()];
        let offset_bytes =
            self.divisibility(buf.elem_offset()) * <T as ty::RegType>::TYPE.bytes() as i64;
        let align = match (buf.elem_offset().as_const(), offset_bytes) {
            (Some(0), _) => buf.align(),
            (_, 0) => buf.align(),
            (_, b) => buf.align().min(1 << b.trailing_zeros().min(30)),
        };
        let (storage, base) = match self.ptr_to(buf, zeros)? {
            crate::kernel::Ptr::Global(r) => (Storage::Global, Base::Global(r)),
            crate::kernel::Ptr::Shared(r) => (Storage::Shared, Base::Shared(r)),
        };
        Ok(TileRef {
            storage,
            dtype,
            shape,
            layout: Some(layout),
            fragment: None,
            swizzle: buf.swizzle().unwrap_or(SwizzleMode::None),
            base,
            align,
            pitch: None,
            bounds: None,
        })
    }

    /// The box of the rank-2 TMA tensor `t` at block coordinates `(bi, bj)` (outermost first):
    /// the tile whose origin is `(bi * box_rows, bj * box_cols)`, with the box's shape and
    /// swizzle, for `copy_async` to or from shared memory (the `copy_async.tma_*` variants).
    #[track_caller]
    pub fn tma_tile_at<T: Elem>(
        &mut self,
        t: &TmaTensor<T>,
        [bi, bj]: [Expr; 2],
    ) -> Result<TileRef> {
        let &[rows, cols] = t.box_shape() else {
            return Err(self.buffer_err(
                t.name(),
                format!(
                    "tma_tile_at takes a rank-2 TMA tensor, not rank {}",
                    t.box_shape().len()
                ),
            ));
        };
        // The tensor map's coordinates are innermost first (PTX ISA 9.7.9.27).
        let x = self.tma_coord(t.name(), bj * cols)?;
        let y = self.tma_coord(t.name(), bi * rows)?;
        Ok(
            TileRef::tensor_map(T::DTYPE, rows, cols, t.map().clone(), vec![x, y])
                .with_swizzle(t.swizzle()),
        )
    }

    /// The box of the TMA tensor `t` (any rank) whose first element is `origin` (element
    /// coordinates, outermost first), for `copy_async`: a tile of `box_rows x box_cols`, the
    /// box's innermost extent its columns and the product of the others its rows (a box
    /// `[1, 128, 1, 64]` of a `[batch, seq, heads, dim]` tensor is a 128 x 64 tile). Elements
    /// past the tensor's extents read as zero and are not written (PTX ISA 9.7.9.27, the
    /// tensor copy's bounds), so a box may hang over an edge.
    #[track_caller]
    pub fn tma_box_at<T: Elem>(&mut self, t: &TmaTensor<T>, origin: &[Expr]) -> Result<TileRef> {
        let shape = t.box_shape().to_vec();
        if origin.len() != shape.len() {
            return Err(self.buffer_err(
                t.name(),
                format!(
                    "an origin of {} coordinates for a rank-{} TMA tensor",
                    origin.len(),
                    shape.len()
                ),
            ));
        }
        let cols = shape.last().copied().unwrap_or(1);
        let rows = shape[..shape.len() - 1].iter().product();
        // The tensor map's coordinates are innermost first (PTX ISA 9.7.9.27).
        let mut coords = Vec::with_capacity(origin.len());
        for e in origin.iter().rev() {
            coords.push(self.tma_coord(t.name(), e.clone())?);
        }
        Ok(
            TileRef::tensor_map(T::DTYPE, rows, cols, t.map().clone(), coords)
                .with_swizzle(t.swizzle()),
        )
    }

    /// A `rows x cols` block of the global tensor `buf` (any rank, its last dimension
    /// contiguous) whose first element is `origin`, its rows running along dimension `row_dim`
    /// and its columns along the last: a run-time pitch (`row_dim`'s stride) and bounds (the rows
    /// left along `row_dim` from the origin, the columns left along the last), which the
    /// edge-aware variants honour. A query tile of `O[batch, seq, heads, dim]` is the block at
    /// `[b, s0, h, 0]` along dimension 1.
    #[track_caller]
    pub fn rows_at<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        origin: &[Expr],
        row_dim: usize,
        dims: [u32; 2],
    ) -> Result<TileRef> {
        self.rows_until(buf, origin, row_dim, dims, None)
    }

    /// [`KernelBuilder::rows_at`] with the rows bounded by `row_end` (exclusive, an index along
    /// `row_dim`) where that is given instead of by the dimension's extent: a block of one
    /// sequence of a packed batch (`O[total, heads, dim]`, the sequence ending at its next
    /// offset) whose rows past the sequence belong to the next and are not written.
    #[track_caller]
    pub fn rows_until<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        origin: &[Expr],
        row_dim: usize,
        [rows, cols]: [u32; 2],
        row_end: Option<Expr>,
    ) -> Result<TileRef> {
        let rank = buf.shape().len();
        let last_stride = buf.strides().last().map(|e| self.simplify(e).as_const());
        if origin.len() != rank || row_dim + 1 >= rank || last_stride != Some(Some(1)) {
            return Err(self.buffer_err(
                buf.name(),
                format!(
                    "rows_at takes an origin of every dimension, a row dimension before the \
                     last, and a contiguous last dimension (origin of {}, rank {rank}, row \
                     dimension {row_dim})",
                    origin.len()
                ),
            ));
        }
        let ptr = self.ptr_to(buf, origin.to_vec())?;
        let crate::kernel::Ptr::Global(base) = ptr else {
            return Err(self.buffer_err(buf.name(), "rows_at takes a global tensor"));
        };
        let pitch_e = self.simplify(&buf.strides()[row_dim]);
        let multiple = self.divisibility(&pitch_e).clamp(1, i64::from(u32::MAX)) as u32;
        let pitch = RunCount::new(self.eval(pitch_e)?, multiple);
        // What is left of an extent from an origin: `extent - origin`, or 0 for an origin past
        // it (`max(extent, origin) - origin`, not a count wrapped round 2^32) unless the bounds
        // show the origin is within it. Either value is a multiple of the difference's multiple.
        let left = |k: &mut KernelBuilder, extent: &Expr, origin: &Expr| -> Result<RunCount> {
            let e = k.simplify(&(extent.clone() - origin.clone()));
            let m = k.divisibility(&e).clamp(1, i64::from(u32::MAX)) as u32;
            let (_, origin_max) = crate::kernel::expr::bounds(origin, k.vars.as_slice());
            let (extent_min, _) = crate::kernel::expr::bounds(extent, k.vars.as_slice());
            if origin_max.is_some_and(|o| o <= extent_min) {
                return Ok(RunCount::new(k.eval(e)?, m));
            }
            let (x, o) = (k.eval(extent.clone())?, k.eval(origin.clone())?);
            let d = k.isa().reg::<ty::U32>();
            k.isa().max(d, x, o)?;
            k.isa().sub(d, d, o)?;
            Ok(RunCount::new(d, m))
        };
        let h = row_end.unwrap_or_else(|| buf.shape()[row_dim].clone());
        let w = buf.shape()[rank - 1].clone();
        let rows_left = left(self, &h, &origin[row_dim])?;
        let cols_left = left(self, &w, &origin[rank - 1])?;
        let size = i64::from(<T as ty::RegType>::TYPE.bytes());
        let offset = self.linear_index(buf, origin.to_vec())?;
        let d = self.divisibility(&offset) * size;
        let align = if d == 0 {
            buf.align()
        } else {
            buf.align().min(1 << d.trailing_zeros().min(30))
        };
        Ok(
            TileRef::global_pitched(<T as ty::RegType>::TYPE, rows, cols, base, align, pitch)
                .with_bounds(rows_left, cols_left),
        )
    }

    /// One coordinate of a TMA tile: an immediate when it is a build-time constant, else the
    /// register it evaluates to, read as `.s32` (the type `cp.async.bulk.tensor` takes).
    #[track_caller]
    fn tma_coord(&mut self, tensor: &str, e: Expr) -> Result<Src<ty::S32>> {
        // The errors are made here, not in closures, so that they carry the author's call site.
        let e = self.simplify(&e);
        if let Some(c) = e.as_const() {
            return match i32::try_from(c) {
                Ok(c) => Ok(Src::from(c)),
                Err(_) => {
                    Err(self.buffer_err(tensor, format!("coordinate {c} does not fit in .s32")))
                }
            };
        }
        let r = self.eval(e)?;
        match r.retype::<ty::S32>() {
            Ok(r) => Ok(Src::from(r)),
            Err(err) => Err(self.buffer_err(tensor, err.to_string())),
        }
    }

    /// The `rows x cols` block at block coordinates `(bi, bj)` of a row-major rank-2 global
    /// tensor: its origin is `(bi * rows, bj * cols)`. With run-time extents the block carries a
    /// run-time pitch (the row stride, with the multiple its symbols' facts give) and bounds (the
    /// rows and columns left from its origin, 0 for a block that starts past the edge), which the
    /// edge-aware variants honour: stores past the edge are skipped, loads read zero.
    #[track_caller]
    pub fn tile_at<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        [bi, bj]: [Expr; 2],
        [rows, cols]: [u32; 2],
    ) -> Result<TileRef> {
        if buf.shape().len() != 2 || !buf.is_row_major() {
            return Err(self.buffer_err(buf.name(), "tile_at takes a row-major rank-2 tensor"));
        }
        let r0 = self.simplify(&(bi * rows));
        let c0 = self.simplify(&(bj * cols));
        if const_shape(self, buf.shape()).is_some() {
            let region = buf.region([r0, c0], [rows, cols])?;
            return self.tile_ref(&region);
        }
        if !matches!(buf.storage(), crate::kernel::Storage::Global(_)) {
            return Err(self.buffer_err(
                buf.name(),
                "tile_at with run-time extents takes a global tensor",
            ));
        }
        self.rows_at(buf, &[r0, c0], 0, [rows, cols])
    }

    /// Lowers one tile op with the first variant that takes it (or the variant named `force`),
    /// returning the variant's name; a miss is [`KernelError::TileOp`] with the table of every
    /// variant and why it declined. The one place a kernel dispatches a tile op.
    #[track_caller]
    pub fn tile_op(
        &mut self,
        op: TileOp<'_>,
        scope: ExecScope,
        force: Option<&str>,
    ) -> Result<&'static str> {
        self.tile_op_synced(op, scope, force, None)
    }

    /// [`KernelBuilder::tile_op`], recording what the op does to a named barrier in `sync`: the
    /// bytes a copy delivers to the barrier it completes on (see [`crate::tile::dispatch_on`]).
    #[track_caller]
    pub fn tile_op_on(
        &mut self,
        sync: &mut BarrierSync,
        op: TileOp<'_>,
        scope: ExecScope,
    ) -> Result<&'static str> {
        self.tile_op_synced(op, scope, None, Some(sync))
    }

    #[track_caller]
    fn tile_op_synced(
        &mut self,
        op: TileOp<'_>,
        scope: ExecScope,
        force: Option<&str>,
        sync: Option<&mut BarrierSync>,
    ) -> Result<&'static str> {
        let at = CallSite::here();
        let ctx = OpCtx {
            op,
            scope,
            target: self.target(),
        };
        let fail = |k: &KernelBuilder, error| KernelError::TileOp {
            kernel: k.kernel_name().to_string(),
            error: Box::new(error),
            at,
        };
        let (v, p) = plan(&ctx, force).map_err(|e| fail(self, e))?;
        // Checked before anything is written, recorded once the op is.
        let delivers = match sync {
            Some(_) => super::registry::delivered(&ctx, v.name).map_err(|e| fail(self, e))?,
            None => None,
        };
        p.emit(self.isa()).map_err(|error| {
            fail(
                self,
                super::DispatchError::Emit {
                    op: ctx.to_string(),
                    variant: v.name,
                    error: Box::new(error),
                },
            )
        })?;
        if let (Some(sync), Some((at, bytes))) = (sync, delivers) {
            sync.copy(at, bytes);
        }
        self.comment(&format!("tile op lowered by {}", v.name));
        Ok(v.name)
    }

    /// `dst = src` at `scope` (`copy`: vector, scalar, ldmatrix/stmatrix, fragment and edge-aware
    /// variants).
    #[track_caller]
    pub fn copy(
        &mut self,
        dst: &impl TileOperand,
        src: &impl TileOperand,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let (d, s) = (dst.lower_tile(self)?, src.lower_tile(self)?);
        self.tile_op(TileOp::Copy { dst: &d, src: &s }, scope, None)
    }

    /// `dst = src` asynchronously (`cp.async`, TMA, bulk copies); `mbar` is the named barrier
    /// that completes a TMA or bulk load and the [`BarrierSync`] it is declared in (which
    /// records the bytes the copy delivers to it), `multicast` the cluster CTAs a TMA load also
    /// writes.
    #[track_caller]
    pub fn copy_async(
        &mut self,
        dst: &impl TileOperand,
        src: &impl TileOperand,
        mbar: Option<(&mut BarrierSync, NamedBarrier)>,
        multicast: Option<ptx_isa::Src<ty::U16>>,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let (d, s) = (dst.lower_tile(self)?, src.lower_tile(self)?);
        let (sync, bar) = match mbar {
            Some((sync, bar)) => (Some(sync), Some(bar)),
            None => (None, None),
        };
        let op = TileOp::CopyAsync {
            dst: &d,
            src: &s,
            mbar: bar,
            multicast,
        };
        self.tile_op_synced(op, scope, None, sync)
    }

    /// `dst = dst (op) src` asynchronously, the reduction done where `dst` lies: a shared tile
    /// reduced into a TMA tensor's box in L2 (`reduce_async.tma_reduce`, PTX ISA 9.7.9.27
    /// `cp.reduce.async.bulk.tensor`; the element type is the tensor map's). Like a TMA store
    /// it joins the bulk async-group: its commit and its waits are the caller's.
    #[track_caller]
    pub fn reduce_async(
        &mut self,
        dst: &impl TileOperand,
        src: &impl TileOperand,
        op: ptx_isa::builder::TmaReduceOp,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let (d, s) = (dst.lower_tile(self)?, src.lower_tile(self)?);
        self.tile_op(
            TileOp::ReduceAsync {
                dst: &d,
                src: &s,
                op,
            },
            scope,
            None,
        )
    }

    /// `d = a·bᵀ (+ d)` asynchronously (wgmma, tcgen05.mma).
    #[track_caller]
    pub fn gemm_async(
        &mut self,
        d: &impl TileOperand,
        a: &impl TileOperand,
        b: &impl TileOperand,
        accumulate: Accumulate,
        scope: ExecScope,
    ) -> Result<&'static str> {
        self.gemm_async_over(d, a, b, accumulate, None, scope)
    }

    /// [`KernelBuilder::gemm_async`] over the first `k_extent` columns of K only, a run-time
    /// count the whole warpgroup shares (derived from no thread index: ptxas must see the
    /// branch on it as uniform). A path per quarter of the k-steps, each one commit group,
    /// taken by the extent: the columns from `k_extent` to the end of the path's last k-step
    /// still enter the product and must add nothing, as an attention's `P` past the last key
    /// does.
    #[track_caller]
    pub fn gemm_async_until(
        &mut self,
        d: &impl TileOperand,
        a: &impl TileOperand,
        b: &impl TileOperand,
        accumulate: Accumulate,
        k_extent: Reg<ty::U32>,
        scope: ExecScope,
    ) -> Result<&'static str> {
        self.gemm_async_over(d, a, b, accumulate, Some(k_extent), scope)
    }

    #[track_caller]
    fn gemm_async_over(
        &mut self,
        d: &impl TileOperand,
        a: &impl TileOperand,
        b: &impl TileOperand,
        accumulate: Accumulate,
        k_extent: Option<Reg<ty::U32>>,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let (d, a, b) = (
            d.lower_tile(self)?,
            a.lower_tile(self)?,
            b.lower_tile(self)?,
        );
        let op = TileOp::GemmAsync {
            d: &d,
            a: &a,
            b: &b,
            accumulate,
            k_extent,
        };
        self.tile_op(op, scope, None)
    }

    /// `dst = value` everywhere in the tile.
    #[track_caller]
    pub fn fill(
        &mut self,
        dst: &impl TileOperand,
        value: Imm,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let d = dst.lower_tile(self)?;
        self.tile_op(TileOp::Fill { dst: &d, value }, scope, None)
    }

    /// `dst = src` converted to `dst`'s element type.
    #[track_caller]
    pub fn cast(
        &mut self,
        dst: &impl TileOperand,
        src: &impl TileOperand,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let (d, s) = (dst.lower_tile(self)?, src.lower_tile(self)?);
        self.tile_op(TileOp::Cast { dst: &d, src: &s }, scope, None)
    }

    /// `dst = f(a, b)` element by element over tiles holding the same fragment.
    #[track_caller]
    pub fn elementwise(
        &mut self,
        dst: &impl TileOperand,
        a: &impl TileOperand,
        b: Option<&dyn TileOperandDyn>,
        f: Elementwise,
        scope: ExecScope,
    ) -> Result<&'static str> {
        let (d, a) = (dst.lower_tile(self)?, a.lower_tile(self)?);
        let b = match b {
            Some(b) => Some(b.lower_tile_dyn(self)?),
            None => None,
        };
        let op = TileOp::Elementwise {
            dst: &d,
            a: &a,
            b: b.as_ref(),
            f,
        };
        self.tile_op(op, scope, None)
    }
}

/// [`TileOperand`] as a trait object (an optional operand of either kind).
pub trait TileOperandDyn {
    /// The operand as a variant reads it.
    fn lower_tile_dyn(&self, k: &mut KernelBuilder) -> Result<TileRef>;
}

impl<O: TileOperand> TileOperandDyn for O {
    fn lower_tile_dyn(&self, k: &mut KernelBuilder) -> Result<TileRef> {
        self.lower_tile(k)
    }
}
