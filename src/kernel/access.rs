//! Allocating buffers (shared, pool, registers, views over a pointer) and accessing them: the index
//! arithmetic lowered from a buffer's layout and element offset, `ptr_to`, scalar and vector
//! loads and stores.

use ptx_isa::spaces::{Global, Shared};
use ptx_isa::{Addr, Reg, Src, ty};
use smem::emit::emit_swizzle;

use super::KernelBuilder;
use super::buffer::{Buffer, Elem, Layout, Ptr, Storage};
use super::error::{KernelError, Result};
use super::expr::{Expr, Exprs};

fn shape_of(shape: &[u32]) -> Vec<Expr> {
    shape.iter().map(|&d| Expr::from(d)).collect()
}

impl KernelBuilder {
    fn check_shape(&self, name: &str, shape: &[u32]) -> Result<u32> {
        shape
            .iter()
            .try_fold(
                1u32,
                |acc, &d| if d == 0 { None } else { acc.checked_mul(d) },
            )
            .filter(|_| !shape.is_empty())
            .ok_or_else(|| self.buffer_err(name, format!("bad shape {shape:?}")))
    }

    fn smem_err(&self, e: impl std::fmt::Display) -> KernelError {
        KernelError::SharedMemory {
            kernel: self.name.clone(),
            reason: e.to_string(),
        }
    }

    /// A static shared buffer (`T.alloc_shared`): a `.shared .align A .b8 name[bytes]` variable,
    /// row-major. Counts against the kernel's shared-memory limit with the pool.
    pub fn alloc_shared<T: Elem>(
        &mut self,
        name: &str,
        shape: &[u32],
        align: u32,
    ) -> Result<Buffer<T>> {
        let n = self.check_shape(name, shape)?;
        let bytes = n
            .checked_mul(T::DTYPE.bytes())
            .ok_or_else(|| self.buffer_err(name, "too large"))?;
        let align = align.max(T::DTYPE.bytes());
        self.pool
            .alloc_static(name, bytes, align)
            .map_err(|e| self.smem_err(e))?;
        let sym = self.module.shared(name, align, bytes)?;
        let base = self.f.reg::<ty::U32>();
        self.f.mov_shared_addr(base, &sym)?;
        self.shared_buffer(name, base, shape, align)
    }

    /// A shared buffer carved from the kernel's dynamic shared-memory pool (one `.extern .shared`
    /// array whose size the launch passes), row-major, its offset aligned to `align`.
    pub fn pool_alloc<T: Elem>(
        &mut self,
        name: &str,
        shape: &[u32],
        align: u32,
    ) -> Result<Buffer<T>> {
        let n = self.check_shape(name, shape)?;
        let bytes = n
            .checked_mul(T::DTYPE.bytes())
            .ok_or_else(|| self.buffer_err(name, "too large"))?;
        let align = align.max(T::DTYPE.bytes());
        let base = self.pool_bytes(name, bytes, align)?;
        self.shared_buffer(name, base, shape, align)
    }

    /// `bytes` of the dynamic pool aligned to `align`: the register holding their shared address.
    pub fn pool_bytes(&mut self, name: &str, bytes: u32, align: u32) -> Result<Reg<ty::U32>> {
        let region = self
            .pool
            .alloc_bytes(name, bytes, align)
            .map_err(|e| self.smem_err(e))?;
        self.pool_used = true;
        let base = self.f.reg::<ty::U32>();
        let sym = self.pool_symbol.clone();
        self.f.mov_shared_addr(base, &sym)?;
        if region.offset == 0 {
            return Ok(base);
        }
        let at = self.f.reg::<ty::U32>();
        self.f.add(at, base, region.offset)?;
        self.f
            .annotate(&format!("{name}: {sym} + {:#x}", region.offset));
        Ok(at)
    }

    fn shared_buffer<T: Elem>(
        &mut self,
        name: &str,
        base: Reg<ty::U32>,
        shape: &[u32],
        align: u32,
    ) -> Result<Buffer<T>> {
        let shape = shape_of(shape);
        let strides = Layout::RowMajor
            .strides_for(&shape)
            .map_err(|r| self.buffer_err(name, r.to_string()))?;
        Ok(Buffer {
            kernel: self.name.clone(),
            name: name.to_string(),
            storage: Storage::Shared(base),
            shape,
            strides,
            elem_offset: Expr::Const(0),
            align,
            swizzle: None,
        })
    }

    /// A register buffer (`T.alloc_local`): one register per element, private to the thread;
    /// indices must fold to constants.
    pub fn alloc_local<T: Elem>(&mut self, name: &str, shape: &[u32]) -> Result<Buffer<T>> {
        let n = self.check_shape(name, shape)?;
        if n > 1024 {
            return Err(self.buffer_err(name, format!("{n} registers is too many")));
        }
        let regs = self.f.regs::<T>(n as usize);
        let shape = shape_of(shape);
        let strides = Layout::RowMajor
            .strides_for(&shape)
            .map_err(|r| self.buffer_err(name, r.to_string()))?;
        Ok(Buffer {
            kernel: self.name.clone(),
            name: name.to_string(),
            storage: Storage::Local(regs),
            shape,
            strides,
            elem_offset: Expr::Const(0),
            align: T::DTYPE.bytes(),
            swizzle: None,
        })
    }

    /// A mutable scalar of type `T` (a one-element register buffer) holding `init`; read it with
    /// [`Buffer::regs`]`[0]` or [`KernelBuilder::load`], write it with [`KernelBuilder::store`].
    pub fn local_scalar<T: Elem>(
        &mut self,
        name: &str,
        init: impl Into<Src<T>>,
    ) -> Result<Buffer<T>> {
        let b = self.alloc_local::<T>(name, &[1])?;
        self.store(&b, [0], init)?;
        Ok(b)
    }

    /// A view over existing storage (`T.decl_buffer(shape, dtype, data=ptr)`): aliasing,
    /// reinterpreting or sub-regions of a pool. `align` is what the caller guarantees of `data`.
    pub fn decl_buffer<T: Elem>(
        &mut self,
        name: &str,
        shape: impl Exprs,
        data: Ptr,
        layout: Layout,
        elem_offset: impl Into<Expr>,
        align: u32,
    ) -> Result<Buffer<T>> {
        let shape: Vec<Expr> = shape.exprs().iter().map(|e| self.simplify(e)).collect();
        let strides = layout
            .strides_for(&shape)
            .map_err(|r| self.buffer_err(name, r.to_string()))?;
        if !align.is_power_of_two() {
            return Err(self.buffer_err(name, format!("alignment {align}")));
        }
        Ok(Buffer {
            kernel: self.name.clone(),
            name: name.to_string(),
            storage: match data {
                Ptr::Global(r) => Storage::Global(r),
                Ptr::Shared(r) => Storage::Shared(r),
            },
            shape,
            strides,
            elem_offset: self.simplify(&elem_offset.into()),
            align,
            swizzle: None,
        })
    }

    /// The element offset of `buf[idx]`, simplified: `elem_offset + sum(idx_d * stride_d)`.
    pub fn linear_index<T: Elem>(&self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Expr> {
        let idx: Vec<Expr> = idx.exprs();
        if idx.len() != buf.shape.len() {
            return Err(self.buffer_err(
                &buf.name,
                format!(
                    "{} indices for a rank-{} buffer",
                    idx.len(),
                    buf.shape.len()
                ),
            ));
        }
        let mut sum: Option<Expr> = None;
        for (i, s) in idx.into_iter().zip(&buf.strides) {
            let term = i * s.clone();
            sum = Some(match sum {
                None => term,
                Some(acc) => acc + term,
            });
        }
        let e = sum.unwrap_or(Expr::Const(0)) + buf.elem_offset.clone();
        Ok(self.simplify(&e))
    }

    /// A pointer to `buf[idx]` (`A.ptr_to([i, j])`): the index lowered to `shl`/`mul`/`add`, scaled
    /// to bytes (`mul.wide.u32` into the 64-bit global address; `shl`/`mul` in the 32-bit shared
    /// window, then the buffer's swizzle if it has one) and added to the data pointer.
    pub fn ptr_to<T: Elem>(&mut self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Ptr> {
        let e = self.linear_index(buf, idx)?;
        let size = T::DTYPE.bytes();
        match &buf.storage {
            Storage::Local(_) => Err(self.buffer_err(&buf.name, "registers have no address")),
            Storage::Global(base) => {
                if e == Expr::Const(0) {
                    return Ok(Ptr::Global(*base));
                }
                let i = self.lower(&e)?;
                let off = self.f.reg::<ty::U64>();
                self.f.mul_wide(off, i, size)?;
                let at = self.f.reg::<ty::U64>();
                self.f.add(at, *base, off)?;
                Ok(Ptr::Global(at))
            }
            Storage::Shared(base) => {
                let bytes = self.simplify(&(e * size));
                if bytes == Expr::Const(0) {
                    return Ok(Ptr::Shared(*base));
                }
                let mut off = self.eval(bytes)?;
                if let Some(mode) = buf.swizzle {
                    off = emit_swizzle(&mut self.f, mode, off)?;
                }
                let at = self.f.reg::<ty::U32>();
                self.f.add(at, *base, off)?;
                Ok(Ptr::Shared(at))
            }
        }
    }

    fn local_reg<T: Elem>(&self, buf: &Buffer<T>, e: &Expr) -> Result<Reg<T>> {
        let Storage::Local(regs) = &buf.storage else {
            return Err(self.buffer_err(&buf.name, "not a register buffer"));
        };
        match e.as_const() {
            Some(c) if c >= 0 && (c as usize) < regs.len() => Ok(regs[c as usize]),
            Some(c) => Err(self.buffer_err(
                &buf.name,
                format!("register index {c} outside 0..{}", regs.len()),
            )),
            None => Err(self.buffer_err(
                &buf.name,
                format!(
                    "register index {e} is not a constant (registers cannot be indexed at run time)"
                ),
            )),
        }
    }

    /// `buf[idx]` into a fresh register (`ld.global`/`ld.shared`; the register itself for a
    /// register buffer).
    pub fn load<T: Elem>(&mut self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Reg<T>> {
        if let Storage::Local(_) = buf.storage {
            let e = self.linear_index(buf, idx)?;
            return self.local_reg(buf, &e);
        }
        let d = self.f.reg::<T>();
        match self.ptr_to(buf, idx)? {
            Ptr::Global(r) => self.f.ld(d, Addr::<Global>::reg(r))?,
            Ptr::Shared(r) => self.f.ld(d, Addr::<Shared>::reg32(r))?,
        }
        Ok(d)
    }

    /// `buf[idx] = v`.
    pub fn store<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        v: impl Into<Src<T>>,
    ) -> Result<()> {
        let v = v.into();
        if let Storage::Local(_) = buf.storage {
            let e = self.linear_index(buf, idx)?;
            let r = self.local_reg(buf, &e)?;
            self.f.mov(r, v)?;
            return Ok(());
        }
        match self.ptr_to(buf, idx)? {
            Ptr::Global(r) => self.f.st(Addr::<Global>::reg(r), v)?,
            Ptr::Shared(r) => self.f.st(Addr::<Shared>::reg32(r), v)?,
        }
        Ok(())
    }

    /// Checks that `width` elements from `buf[idx]` are one aligned vector access: the data
    /// pointer's alignment and the divisibility of the index must both cover the vector's bytes.
    fn check_vector<T: Elem>(&self, buf: &Buffer<T>, e: &Expr, width: usize) -> Result<()> {
        let size = T::DTYPE.bytes() as i64;
        let bytes = size * width as i64;
        if !(width == 2 || width == 4) || bytes > 16 {
            return Err(self.buffer_err(
                &buf.name,
                format!("a vector of {width} x {size} bytes (2 or 4 elements, 16 bytes at most)"),
            ));
        }
        if buf.swizzle.is_some() {
            return Err(self.buffer_err(&buf.name, "vector access to a swizzled buffer"));
        }
        let d = self.divisibility(e);
        if i64::from(buf.align) % bytes != 0 || (d != 0 && (d * size) % bytes != 0) {
            return Err(self.buffer_err(
                &buf.name,
                format!(
                    "cannot prove a {bytes}-byte aligned vector: data aligned to {}, index {e} a multiple of {d}",
                    buf.align
                ),
            ));
        }
        Ok(())
    }

    /// A vector load of `width` (2 or 4) consecutive elements from `buf[idx]`
    /// (`ld.global.v4.f32`, as `A.vload([tx * 4], "float32x4")`). The alignment must be provable
    /// from the data pointer's alignment and the index's divisibility.
    pub fn vload<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        width: usize,
    ) -> Result<Vec<Reg<T>>> {
        let idx: Vec<Expr> = idx.exprs();
        let e = self.linear_index(buf, idx.clone())?;
        self.check_vector(buf, &e, width)?;
        let d = self.f.regs::<T>(width);
        match self.ptr_to(buf, idx)? {
            Ptr::Global(r) => self.f.ld_v(&d, Addr::<Global>::reg(r))?,
            Ptr::Shared(r) => self.f.ld_v(&d, Addr::<Shared>::reg32(r))?,
        }
        Ok(d)
    }

    /// A vector store of `v` (2 or 4 registers) to consecutive elements from `buf[idx]`.
    pub fn vstore<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        v: &[Reg<T>],
    ) -> Result<()> {
        let idx: Vec<Expr> = idx.exprs();
        let e = self.linear_index(buf, idx.clone())?;
        self.check_vector(buf, &e, v.len())?;
        match self.ptr_to(buf, idx)? {
            Ptr::Global(r) => self.f.st_v(Addr::<Global>::reg(r), v)?,
            Ptr::Shared(r) => self.f.st_v(Addr::<Shared>::reg32(r), v)?,
        }
        Ok(())
    }
}
