//! Allocating buffers (shared, pool, registers, views over a pointer) and accessing them: the index
//! arithmetic lowered from a buffer's layout and element offset, `ptr_to`, scalar and vector
//! loads and stores.

use ptx_isa::builder::{LdOpts, StOpts};
use ptx_isa::spaces::{Global, Shared};
use ptx_isa::{Addr, Reg, Src, ty};
use smem::emit::emit_swizzle;

use super::KernelBuilder;
use super::buffer::{Buffer, Elem, Layout, Ptr, Storage};
use super::builder::MemoKey;
use super::caching::Caching;
use super::error::{KernelError, Result};
use super::expr::{Expr, Exprs, decide_lt};

/// One access of a row plan: `width` elements from register `first` at index `at`.
struct Group {
    at: Vec<Expr>,
    first: usize,
    width: usize,
    guard: RowGuard,
}

/// The bounds check of one access.
enum RowGuard {
    /// The facts prove every element in range.
    Always,
    /// The facts prove every element out of range.
    Never,
    /// `first < extent` at run time decides the whole access.
    Check(Expr),
}

/// An access's L1 eviction priority and L2 cache-policy register (PTX ISA 9.7.9.8): what a
/// load's and a store's options both carry.
#[derive(Clone, Copy, Default)]
struct Hints {
    evict: Option<ptx_isa::builder::Evict>,
    cache_hint: Option<Reg<ty::B64>>,
}

impl Hints {
    /// A load with these hints.
    fn ld(self) -> LdOpts {
        LdOpts {
            evict: self.evict,
            cache_hint: self.cache_hint,
            ..LdOpts::default()
        }
    }

    /// A store with these hints.
    fn st(self) -> StOpts {
        StOpts {
            evict: self.evict,
            cache_hint: self.cache_hint,
            ..StOpts::default()
        }
    }
}

#[track_caller]
fn shape_of(shape: &[u32]) -> Vec<Expr> {
    shape.iter().map(|&d| Expr::from(d)).collect()
}

impl KernelBuilder {
    #[track_caller]
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

    /// The bytes of a shared buffer of `T` elements and `shape`, and its alignment: `align`,
    /// at least the element's size.
    #[track_caller]
    fn shared_bytes<T: Elem>(&self, name: &str, shape: &[u32], align: u32) -> Result<(u32, u32)> {
        let n = self.check_shape(name, shape)?;
        let bytes = n
            .checked_mul(T::DTYPE.bytes())
            .ok_or_else(|| self.buffer_err(name, "too large"))?;
        Ok((bytes, align.max(T::DTYPE.bytes())))
    }

    /// A row-major buffer `name` of `shape` in `storage`, its base aligned to `align`.
    #[track_caller]
    fn row_major<T: Elem>(
        &self,
        name: &str,
        storage: Storage<T>,
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
            storage,
            shape,
            strides,
            elem_offset: Expr::Const(0),
            align,
            swizzle: None,
            fragment: None,
        })
    }

    /// `idx` has one index per dimension of `buf`.
    #[track_caller]
    fn check_rank<T: Elem>(&self, buf: &Buffer<T>, idx: &[Expr]) -> Result<()> {
        if idx.len() == buf.shape.len() {
            return Ok(());
        }
        Err(self.buffer_err(
            &buf.name,
            format!(
                "{} indices for a rank-{} buffer",
                idx.len(),
                buf.shape.len()
            ),
        ))
    }

    #[track_caller]
    fn smem_err(&self, e: impl std::fmt::Display) -> KernelError {
        KernelError::SharedMemory {
            kernel: self.name.clone(),
            reason: e.to_string(),
            at: super::error::CallSite::here(),
        }
    }

    /// A static shared buffer (`T.alloc_shared`): a `.shared .align A .b8 name[bytes]` variable,
    /// row-major. Counts against the kernel's shared-memory limit with the pool.
    #[track_caller]
    pub fn alloc_shared<T: Elem>(
        &mut self,
        name: &str,
        shape: &[u32],
        align: u32,
    ) -> Result<Buffer<T>> {
        let (bytes, align) = self.shared_bytes::<T>(name, shape, align)?;
        self.pool
            .alloc_static(name, bytes, align)
            .map_err(|e| self.smem_err(e))?;
        let sym = self.module.shared(name, align, bytes)?;
        let base = self.f.reg::<ty::U32>();
        self.f.mov_shared_addr(base, &sym)?;
        self.shared_view(name, base, shape, align)
    }

    /// A shared buffer carved from the kernel's dynamic shared-memory pool (one `.extern .shared`
    /// array whose size the launch passes), row-major, its offset aligned to `align`.
    #[track_caller]
    pub fn pool_alloc<T: Elem>(
        &mut self,
        name: &str,
        shape: &[u32],
        align: u32,
    ) -> Result<Buffer<T>> {
        let (bytes, align) = self.shared_bytes::<T>(name, shape, align)?;
        let base = self.pool_bytes(name, bytes, align)?;
        self.shared_view(name, base, shape, align)
    }

    /// `bytes` of the dynamic pool aligned to `align`: the register holding their shared address.
    #[track_caller]
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

    /// A multi-stage ring in the dynamic pool ([`smem::pool::SmemPool::pipeline`]): `stages`
    /// copies of `tiles` and the `{name}.full` / `{name}.empty` barrier arrays (init counts
    /// `full_arrivals`, `empty_arrivals`), with the register holding the pool's base address: a
    /// region's address is the base plus its offset, a stage held in a register is found with
    /// one multiply-add over [`smem::pipeline::Pipeline::stride`].
    #[track_caller]
    pub fn pool_pipeline(
        &mut self,
        name: &str,
        stages: u32,
        tiles: &[smem::pipeline::TileSpec],
        full_arrivals: u32,
        empty_arrivals: u32,
    ) -> Result<(smem::pipeline::Pipeline, Reg<ty::U32>)> {
        let ring = self
            .pool
            .pipeline(name, stages, tiles, full_arrivals, empty_arrivals)
            .map_err(|e| self.smem_err(e))?;
        self.pool_used = true;
        let base = self.f.reg::<ty::U32>();
        let sym = self.pool_symbol.clone();
        self.f.mov_shared_addr(base, &sym)?;
        Ok((ring, base))
    }

    /// A row-major view of `shape` elements of shared memory at the address in `base` (which
    /// must be aligned to `align` bytes): a buffer placed at run time, e.g. one stage's slot of
    /// a ring whose stage is a register, addressed with the same index arithmetic as any shared
    /// buffer (`ld.shared`/`st.shared` through [`KernelBuilder::load`] and
    /// [`KernelBuilder::store`]).
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::KernelBuilder;
    /// let mut k = KernelBuilder::new("view", Target::Sm90a);
    /// let [t] = k.thread_id([128])?;
    /// let ring = k.pool_bytes("ring", 4 * 512, 128)?;
    /// let slot = k.shared_view::<ty::F32>("slot", ring, &[128], 128)?;
    /// let v = k.load(&slot, [t])?;
    /// k.store(&slot, [t], v)?;
    /// assert!(k.finish()?.ptx().contains("ld.shared.f32"));
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn shared_view<T: Elem>(
        &mut self,
        name: &str,
        base: Reg<ty::U32>,
        shape: &[u32],
        align: u32,
    ) -> Result<Buffer<T>> {
        self.check_shape(name, shape)?;
        let align = align.max(T::DTYPE.bytes());
        self.row_major(name, Storage::Shared(base), shape, align)
    }

    /// A register buffer (`T.alloc_local`): one register per element, private to the thread;
    /// indices must fold to constants.
    #[track_caller]
    pub fn alloc_local<T: Elem>(&mut self, name: &str, shape: &[u32]) -> Result<Buffer<T>> {
        let n = self.check_shape(name, shape)?;
        if n > 1024 {
            return Err(self.buffer_err(name, format!("{n} registers is too many")));
        }
        let regs = self.f.regs::<T>(n as usize);
        self.row_major(name, Storage::Local(regs), shape, T::DTYPE.bytes())
    }

    /// This thread's registers of a register tile laid out by `fragment` (a wgmma accumulator, an
    /// `mma` operand): one register per value the fragment gives a thread. Tile ops read the
    /// fragment to know which element each register holds.
    #[track_caller]
    pub fn alloc_fragment<T: Elem>(
        &mut self,
        name: &str,
        fragment: layouts::fragment::TvLayout,
    ) -> Result<Buffer<T>> {
        let values = u32::try_from(fragment.values())
            .map_err(|_| self.buffer_err(name, "a fragment of too many values"))?;
        let mut b = self.alloc_local::<T>(name, &[values])?;
        b.fragment = Some(fragment);
        Ok(b)
    }

    /// A mutable scalar of type `T` (a one-element register buffer) holding `init`; read it with
    /// [`Buffer::regs`]`[0]` or [`KernelBuilder::load`], write it with [`KernelBuilder::store`].
    #[track_caller]
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
    #[track_caller]
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
            fragment: None,
        })
    }

    /// The element offset of `buf[idx]`, simplified: `elem_offset + sum(idx_d * stride_d)`.
    #[track_caller]
    pub fn linear_index<T: Elem>(&self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Expr> {
        let idx: Vec<Expr> = idx.exprs();
        self.check_rank(buf, &idx)?;
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
    #[track_caller]
    pub fn ptr_to<T: Elem>(&mut self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Ptr> {
        let (ptr, offset) = self.addr_parts(buf, idx)?;
        if offset == 0 {
            return Ok(ptr);
        }
        Ok(match ptr {
            Ptr::Global(r) => {
                let at = self.f.reg::<ty::U64>();
                self.f.add(at, r, offset as u64)?;
                Ptr::Global(at)
            }
            Ptr::Shared(r) => {
                let at = self.f.reg::<ty::U32>();
                self.f.add(at, r, offset as u32)?;
                Ptr::Shared(at)
            }
        })
    }

    /// The address of `buf[idx]` as a register plus a constant byte offset that loads and stores
    /// fold into the instruction (`ld.global.f32 %f1, [%rd4+64]`, PTX ISA 6.4.1 "Addresses as
    /// Operands"). The register part is computed once and reused while its region is open, so
    /// the elements of one row cost one address between them.
    #[track_caller]
    pub(crate) fn addr_parts<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
    ) -> Result<(Ptr, i64)> {
        let e = self.linear_index(buf, idx)?;
        let size = T::DTYPE.bytes();
        // `e = rest + c`: the constant becomes the instruction's offset.
        let (rest, c) = match &e {
            Expr::Const(c) => (Expr::Const(0), *c),
            Expr::Add(x, c) => match c.as_const() {
                Some(c) if c > 0 => ((**x).clone(), c),
                _ => (e.clone(), 0),
            },
            _ => (e.clone(), 0),
        };
        let split = c
            .checked_mul(i64::from(size))
            .filter(|b| *b < i64::from(i32::MAX));
        let (rest, offset) = match split {
            Some(b) if buf.swizzle.is_none() => (rest, b),
            _ => (e, 0),
        };
        match &buf.storage {
            Storage::Local(_) => Err(self.buffer_err(&buf.name, "registers have no address")),
            Storage::Tmem(_) => Err(self.buffer_err(
                &buf.name,
                "tensor memory has no address a load or store can use: move it with a tile op \
                 (copy_async: tcgen05.ld/st)",
            )),
            Storage::Global(base) => {
                if rest == Expr::Const(0) {
                    return Ok((Ptr::Global(*base), offset));
                }
                let key = MemoKey::Global(*base, rest.clone(), size);
                if let Some(r) = self.recall::<ty::U64>(&key) {
                    return Ok((Ptr::Global(r), offset));
                }
                let wide = MemoKey::Wide(rest.clone(), size);
                let off = match self.recall::<ty::U64>(&wide) {
                    Some(off) => off,
                    None => {
                        let i = self.lower(&rest)?;
                        let off = self.f.reg::<ty::U64>();
                        self.f.mul_wide(off, i, size)?;
                        self.remember(wide, &rest, off);
                        off
                    }
                };
                let at = self.f.reg::<ty::U64>();
                self.f.add(at, *base, off)?;
                self.remember(key, &rest, at);
                Ok((Ptr::Global(at), offset))
            }
            Storage::Shared(base) => {
                let bytes = self.simplify(&(rest.clone() * size));
                if bytes == Expr::Const(0) {
                    return Ok((Ptr::Shared(*base), offset));
                }
                let key = MemoKey::Shared(*base, rest.clone(), size);
                if buf.swizzle.is_none() {
                    if let Some(r) = self.recall::<ty::U32>(&key) {
                        return Ok((Ptr::Shared(r), offset));
                    }
                }
                let mut off = self.eval(bytes)?;
                if let Some(mode) = buf.swizzle {
                    off = emit_swizzle(&mut self.f, mode, off)?;
                }
                let at = self.f.reg::<ty::U32>();
                self.f.add(at, *base, off)?;
                if buf.swizzle.is_none() {
                    self.remember(key, &rest, at);
                }
                Ok((Ptr::Shared(at), offset))
            }
        }
    }

    #[track_caller]
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
                    "register index {} is not a constant (registers cannot be indexed at run time)",
                    self.show(e)
                ),
            )),
        }
    }

    /// `buf[idx]` into a fresh register (`ld.global`/`ld.shared`; the register itself for a
    /// register buffer).
    #[track_caller]
    pub fn load<T: Elem>(&mut self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Reg<T>> {
        if let Storage::Local(_) = buf.storage {
            let e = self.linear_index(buf, idx)?;
            return self.local_reg(buf, &e);
        }
        let d = self.f.reg::<T>();
        match self.addr_parts(buf, idx)? {
            (Ptr::Global(r), o) => self.f.ld(d, Addr::<Global>::reg(r).offset(o))?,
            (Ptr::Shared(r), o) => self.f.ld(d, Addr::<Shared>::reg32(r).offset(o))?,
        }
        Ok(d)
    }

    /// `buf[idx] = v`.
    #[track_caller]
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
        match self.addr_parts(buf, idx)? {
            (Ptr::Global(r), o) => self.f.st(Addr::<Global>::reg(r).offset(o), v)?,
            (Ptr::Shared(r), o) => self.f.st(Addr::<Shared>::reg32(r).offset(o), v)?,
        }
        Ok(())
    }

    /// Checks that `width` elements from `buf[idx]` are one aligned vector access: the data
    /// pointer's alignment and the divisibility of the index must both cover the vector's bytes.
    #[track_caller]
    fn check_vector<T: Elem>(&self, buf: &Buffer<T>, e: &Expr, width: usize) -> Result<()> {
        let size = T::DTYPE.bytes() as i64;
        let bytes = size * width as i64;
        // 8 16-bit elements move as 4 packed `.b32` pairs (see `ld_group`).
        let packed8 = width == 8 && size == 2;
        if !(width == 2 || width == 4 || packed8) || bytes > 16 {
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
                    "cannot prove a {bytes}-byte aligned vector: data aligned to {}, index {} a multiple of {d} (declare facts on its symbols: `symbol_with`)",
                    buf.align, self.show(e)
                ),
            ));
        }
        Ok(())
    }

    /// A vector load of `width` (2 or 4) consecutive elements from `buf[idx]`
    /// (`ld.global.v4.f32`, as `A.vload([tx * 4], "float32x4")`). The alignment must be provable
    /// from the data pointer's alignment and the index's divisibility.
    #[track_caller]
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
        self.ld_group(buf, idx, &d, None, Caching::NONE)?;
        Ok(d)
    }

    /// A vector store of `v` (2 or 4 registers) to consecutive elements from `buf[idx]`.
    #[track_caller]
    pub fn vstore<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        v: &[Reg<T>],
    ) -> Result<()> {
        let idx: Vec<Expr> = idx.exprs();
        let e = self.linear_index(buf, idx.clone())?;
        self.check_vector(buf, &e, v.len())?;
        self.st_group(buf, idx, v, None, Caching::NONE)
    }

    /// One load of `d.len()` consecutive elements (a scalar `ld` or an `ld.v2`/`.v4`), under
    /// the builder's current guard, with `caching`'s hints (global memory only).
    #[track_caller]
    fn ld_group<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: Vec<Expr>,
        d: &[Reg<T>],
        guard: Option<ptx_isa::Pred>,
        caching: Caching,
    ) -> Result<()> {
        // The policy comes before the guard: `when` applies to the next instruction.
        let (ptr, o, hints) = self.access_at(buf, idx, caching)?;
        let ld = hints.ld();
        if T::DTYPE.bytes() == 2 && d.len() == 8 {
            // 16-bit elements, pairs packed in `.b32` registers: 8 of them are one 16-byte
            // `ld.v4.b32` (PTX ISA 9.7.9.8: vectors of .b16 stop at .v4), then `mov.b32 {lo, hi}`
            // splits each pair (9.7.9.10, low half first = the lower address).
            let words = self.f.regs::<ty::B32>(d.len() / 2);
            self.ld_at(&ld, ptr, o, &words, guard)?;
            for (w, pair) in words.iter().zip(d.chunks(2)) {
                self.guard_next(guard);
                self.f.mov_unpack(pair, *w)?;
            }
            return Ok(());
        }
        self.ld_at(&ld, ptr, o, d, guard)
    }

    /// One load of `d.len()` consecutive values at `ptr + o` (a scalar `ld` or an
    /// `ld.v2`/`.v4`; global with `ld`'s hints, or shared), under `guard` when given, the guard
    /// on the access itself, after its address arithmetic (PTX ISA 9.7.9.8): the one load
    /// instruction of [`KernelBuilder::ld_group`] and of the 16-bit elements' words.
    fn ld_at<R: ty::RegType>(
        &mut self,
        ld: &LdOpts,
        ptr: Ptr,
        o: i64,
        d: &[Reg<R>],
        guard: Option<ptx_isa::Pred>,
    ) -> Result<()> {
        self.guard_next(guard);
        match ptr {
            Ptr::Global(r) => self.f.ld_with(ld, d, Addr::<Global>::reg(r).offset(o))?,
            Ptr::Shared(r) => self.f.ld_v(d, Addr::<Shared>::reg32(r).offset(o))?,
        }
        Ok(())
    }

    /// One store of `v.len()` consecutive values to `ptr + o` (global with `st`'s hints, or
    /// shared), under `guard` when given (PTX ISA 9.7.9.11): the store of [`KernelBuilder::ld_at`].
    fn st_at<R: ty::RegType>(
        &mut self,
        st: &StOpts,
        ptr: Ptr,
        o: i64,
        v: &[Reg<R>],
        guard: Option<ptx_isa::Pred>,
    ) -> Result<()> {
        self.guard_next(guard);
        match ptr {
            Ptr::Global(r) => {
                let src: Vec<Src<R>> = v.iter().map(|&x| x.into()).collect();
                self.f.st_with(st, Addr::<Global>::reg(r).offset(o), &src)?
            }
            Ptr::Shared(r) => self.f.st_v(Addr::<Shared>::reg32(r).offset(o), v)?,
        }
        Ok(())
    }

    /// Puts `guard`, when given, on the next instruction (`@p`, PTX ISA 9.3).
    fn guard_next(&mut self, guard: Option<ptx_isa::Pred>) {
        if let Some(p) = guard {
            self.f.when(p);
        }
    }

    /// Eight consecutive 16-bit elements of `buf` from `idx` along its last dimension, as the
    /// four `.b32` words one 16-byte `ld.v4.b32` reads (PTX ISA 9.7.9.8; each word's low half
    /// the lower address), not split into 16-bit registers: a word whose elements lie past the
    /// extent reads as 0. ptxas 13.0 gives each 16-bit register of a split pair a 32-bit
    /// register of its own, so a kernel that keeps 16-bit data in registers keeps the words
    /// (and widens bf16 halves with a shift or a mask). Refused unless the eight elements are
    /// one aligned vector access (`T` 16-bit, the facts proving the alignment).
    #[track_caller]
    pub fn load_words_with<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        caching: Caching,
    ) -> Result<Vec<Reg<ty::B32>>> {
        let idx: Vec<Expr> = idx.exprs().iter().map(|e| self.simplify(e)).collect();
        let groups = self.plan_row(buf, &idx, 8)?;
        let [g] = groups.as_slice() else {
            return Err(self.buffer_err(
                &buf.name,
                "words of 8 elements that are not one vector access",
            ));
        };
        if T::DTYPE.bytes() != 2 || g.width != 8 {
            return Err(self.buffer_err(
                &buf.name,
                "words of 16-bit elements, 8 of them one 16-byte access",
            ));
        }
        let words = self.f.regs::<ty::B32>(4);
        let guard = match &g.guard {
            RowGuard::Always => None,
            RowGuard::Never => {
                for w in &words {
                    self.f.mov(*w, Src::Imm(ptx_isa::Imm::UInt(0)))?;
                }
                return Ok(words);
            }
            RowGuard::Check(first) => {
                let p = self.row_guard(buf, first)?;
                for w in &words {
                    self.f.mov(*w, Src::Imm(ptx_isa::Imm::UInt(0)))?;
                }
                Some(p)
            }
        };
        let (ptr, o, hints) = self.access_at(buf, g.at.clone(), caching)?;
        self.ld_at(&hints.ld(), ptr, o, &words, guard)?;
        Ok(words)
    }

    /// The address of `buf[idx]` (a pointer and a constant byte offset) and the L1 priority and
    /// L2 policy register of an access there with `caching`: none for no hint; refused for shared
    /// memory (PTX ISA 9.7.9.8: the qualifiers apply to global addresses).
    #[track_caller]
    fn access_at<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: Vec<Expr>,
        caching: Caching,
    ) -> Result<(Ptr, i64, Hints)> {
        let (ptr, o) = self.addr_parts(buf, idx)?;
        if caching.is_none() {
            return Ok((ptr, o, Hints::default()));
        }
        if let Ptr::Shared(_) = ptr {
            return Err(self.buffer_err(
                &buf.name,
                "cache hints apply to global memory, not shared (PTX ISA 9.7.9.8)",
            ));
        }
        let policy = match caching.l2 {
            Some(p) => Some(self.l2_policy(p)?),
            None => None,
        };
        let hints = Hints {
            evict: caching.l1,
            cache_hint: policy,
        };
        Ok((ptr, o, hints))
    }

    /// One store of `v.len()` consecutive elements, with `caching`'s hints (global memory only).
    #[track_caller]
    fn st_group<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: Vec<Expr>,
        v: &[Reg<T>],
        guard: Option<ptx_isa::Pred>,
        caching: Caching,
    ) -> Result<()> {
        let (ptr, o, hints) = self.access_at(buf, idx, caching)?;
        let st = hints.st();
        if T::DTYPE.bytes() == 2 && v.len() == 8 {
            // Pairs packed into `.b32` words, then one vector store (see `ld_group`).
            let words = self.f.regs::<ty::B32>(v.len() / 2);
            for (w, pair) in words.iter().zip(v.chunks(2)) {
                self.f.mov_pack(*w, pair)?;
            }
            return self.st_at(&st, ptr, o, &words, guard);
        }
        self.st_at(&st, ptr, o, v, guard)
    }

    /// How `n` consecutive elements from `buf[idx]` along the last dimension split into accesses:
    /// the widest vectors whose alignment the facts prove (16 bytes at most), each with the bounds
    /// check on the last dimension that the facts do not already decide.
    #[track_caller]
    fn plan_row<T: Elem>(&self, buf: &Buffer<T>, idx: &[Expr], n: usize) -> Result<Vec<Group>> {
        let Some((last, extent)) = idx.last().zip(buf.shape.last()) else {
            return Err(self.buffer_err(&buf.name, "a rank-0 access"));
        };
        self.check_rank(buf, idx)?;
        let facts = self.vars.as_slice();
        let size = T::DTYPE.bytes() as usize;
        let mut out = Vec::new();
        let mut j = 0usize;
        while j < n {
            let at = |j: usize| {
                let mut v = idx.to_vec();
                v[idx.len() - 1] = self.simplify(&(last.clone() + j as i64));
                v
            };
            let first = self.simplify(&(last.clone() + j as i64));
            let mut chosen = None;
            for w in [8usize, 4, 2, 1] {
                if w > n - j || w * size > 16 {
                    continue;
                }
                let e = self.linear_index(buf, at(j))?;
                if w > 1 && self.check_vector(buf, &e, w).is_err() {
                    continue;
                }
                let end = self.simplify(&(first.clone() + (w as i64 - 1)));
                let guard = match (
                    decide_lt(&end, extent, facts),
                    decide_lt(&first, extent, facts),
                ) {
                    (Some(true), _) => RowGuard::Always,
                    (_, Some(false)) => RowGuard::Never,
                    // One test covers the group when its start and the extent are both multiples
                    // of its width: then `first < extent` implies `first + w - 1 < extent`.
                    _ if w == 1
                        || (self.divisibility(&first) % w as i64 == 0
                            && self.divisibility(extent) % w as i64 == 0) =>
                    {
                        RowGuard::Check(first.clone())
                    }
                    _ => continue,
                };
                chosen = Some(Group {
                    at: at(j),
                    first: j,
                    width: w,
                    guard,
                });
                break;
            }
            let Some(g) = chosen else {
                return Err(self.buffer_err(&buf.name, "no access plan (internal)"));
            };
            j += g.width;
            out.push(g);
        }
        Ok(out)
    }

    /// `p = first < extent` for a group's bounds check.
    #[track_caller]
    fn row_guard<T: Elem>(&mut self, buf: &Buffer<T>, first: &Expr) -> Result<ptx_isa::Pred> {
        let extent = buf.shape.last().cloned().unwrap_or(Expr::Const(0));
        let key = MemoKey::Below(first.clone(), extent.clone());
        if let Some(p) = self.recall::<ptx_isa::ty::Pred>(&key) {
            return Ok(p);
        }
        let p = self.cmp(ptx_isa::builder::CmpOp::Lt, first.clone(), extent.clone())?;
        self.remember(key, &(first.clone() + extent), p);
        Ok(p)
    }

    /// `n` consecutive elements of `buf` from `idx` along its last dimension, in fresh registers;
    /// elements at or past the last dimension's extent read as `fill` (a masked load). The
    /// accesses are the widest vectors the facts prove aligned (`ld.global.v4.f32` when the data
    /// pointer is 16-byte aligned and the index a multiple of 4), and bounds checks the facts
    /// decide are left out. The other indices must be in range.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{KernelBuilder, TensorOpts};
    /// use ptxkit::runtime::ExtentFacts;
    /// let mut k = KernelBuilder::new("masked", Target::Sm90a);
    /// let n = k.symbol_with("n", ExtentFacts::NONE.multiple_of(4))?;
    /// let x = k.tensor::<ty::F32>("x", [n], TensorOpts::default().align(16))?;
    /// let [t] = k.thread_id([64])?;
    /// let v = k.load_n(&x, [t * 4], 4, f32::NEG_INFINITY)?;
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert!(ptx.contains("ld.global.v4.f32"));      // one vector access...
    /// assert_eq!(ptx.matches("setp.lt.u32").count(), 1); // ...under one bounds check
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn load_n<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        n: usize,
        fill: impl Into<Src<T>>,
    ) -> Result<Vec<Reg<T>>> {
        self.load_n_with(buf, idx, n, fill, Caching::NONE)
    }

    /// [`KernelBuilder::load_n`] with cache hints on its global accesses ([`Caching`]: an L1
    /// eviction priority and an L2 cache policy, PTX ISA 9.7.9.8). Refused for shared memory
    /// unless `caching` is [`Caching::NONE`].
    #[track_caller]
    pub fn load_n_with<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        n: usize,
        fill: impl Into<Src<T>>,
        caching: Caching,
    ) -> Result<Vec<Reg<T>>> {
        let idx: Vec<Expr> = idx.exprs().iter().map(|e| self.simplify(e)).collect();
        let fill = fill.into();
        let d = self.f.regs::<T>(n);
        for g in self.plan_row(buf, &idx, n)? {
            let regs = &d[g.first..g.first + g.width];
            match &g.guard {
                RowGuard::Always => self.ld_group(buf, g.at, regs, None, caching)?,
                RowGuard::Never => {
                    for r in regs {
                        self.f.mov(*r, fill)?;
                    }
                }
                RowGuard::Check(first) => {
                    let p = self.row_guard(buf, first)?;
                    for r in regs {
                        self.f.mov(*r, fill)?;
                    }
                    self.ld_group(buf, g.at, regs, Some(p), caching)?;
                }
            }
        }
        Ok(d)
    }

    /// Stores `v` to consecutive elements of `buf` from `idx` along its last dimension; elements
    /// at or past the last dimension's extent are not written. Vector widths and bounds checks as
    /// [`KernelBuilder::load_n`] chooses them.
    #[track_caller]
    pub fn store_n<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        v: &[Reg<T>],
    ) -> Result<()> {
        self.store_n_with(buf, idx, v, Caching::NONE)
    }

    /// [`KernelBuilder::store_n`] with cache hints on its global accesses ([`Caching`], PTX ISA
    /// 9.7.9.11). Refused for shared memory unless `caching` is [`Caching::NONE`].
    #[track_caller]
    pub fn store_n_with<T: Elem>(
        &mut self,
        buf: &Buffer<T>,
        idx: impl Exprs,
        v: &[Reg<T>],
        caching: Caching,
    ) -> Result<()> {
        let idx: Vec<Expr> = idx.exprs().iter().map(|e| self.simplify(e)).collect();
        for g in self.plan_row(buf, &idx, v.len())? {
            let regs = &v[g.first..g.first + g.width];
            match &g.guard {
                RowGuard::Always => self.st_group(buf, g.at, regs, None, caching)?,
                RowGuard::Never => {}
                RowGuard::Check(first) => {
                    let p = self.row_guard(buf, first)?;
                    self.st_group(buf, g.at, regs, Some(p), caching)?;
                }
            }
        }
        Ok(())
    }

    /// As many consecutive elements from `buf[idx]` (along the last dimension) as one aligned
    /// vector access the facts prove can take (4, 2 or 1, 16 bytes at most), unguarded: the
    /// caller knows they are in range.
    #[track_caller]
    pub fn load_vec<T: Elem>(&mut self, buf: &Buffer<T>, idx: impl Exprs) -> Result<Vec<Reg<T>>> {
        let idx: Vec<Expr> = idx.exprs();
        let e = self.linear_index(buf, idx.clone())?;
        let size = T::DTYPE.bytes() as usize;
        let w = [8usize, 4, 2]
            .into_iter()
            .find(|&w| w * size <= 16 && self.check_vector(buf, &e, w).is_ok())
            .unwrap_or(1);
        let d = self.f.regs::<T>(w);
        self.ld_group(buf, idx, &d, None, Caching::NONE)?;
        Ok(d)
    }
}
