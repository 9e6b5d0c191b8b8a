//! Helpers the variants share: predicates over operands, the thread index within the scope,
//! addresses, and layout evaluation.

use layouts::fragment::TvLayout;
use ptx_isa::builder::{CmpOp, MatrixCount};
use ptx_isa::{
    Addr, Dim, FunctionBuilder, Imm, Reg, RegClass, RegRef, Result, SpecialReg, Src, TargetSet,
    spaces, ty,
};

use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, ExecScope, ScopeKind, StoragePair, TileRef};
use crate::tile::registry::{Planned, Planner, Predicate, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// `(dst, src)` of a copy or cast.
pub fn pair<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<(&'a TileRef, &'a TileRef), Rejection> {
    ctx.op
        .dst_src()
        .ok_or_else(|| Rejection::operand(Aspect::Op, "not a copy"))
}

/// The shared address of `t`, the copy's `role` (`destination`, `source`), or a rejection.
pub fn shared_addr(t: &TileRef, role: &str) -> std::result::Result<Reg<ty::U32>, Rejection> {
    match t.base {
        Base::Shared(a) => Ok(a),
        _ => Err(Rejection::operand(
            Aspect::Base,
            format!("the {role} needs a shared address"),
        )),
    }
}

/// The global address of `t`, the copy's `role`, or a rejection.
pub fn global_addr(t: &TileRef, role: &str) -> std::result::Result<Reg<ty::U64>, Rejection> {
    match t.base {
        Base::Global(a) => Ok(a),
        _ => Err(Rejection::operand(
            Aspect::Base,
            format!("the {role} needs a global address"),
        )),
    }
}

/// The tensor-memory address of `t`, the copy's `role`, or a rejection.
pub fn tmem_addr(t: &TileRef, role: &str) -> std::result::Result<Reg<ty::U32>, Rejection> {
    match t.base {
        Base::Tmem(a) => Ok(a),
        _ => Err(Rejection::operand(
            Aspect::Base,
            format!("the {role} needs a tensor-memory address"),
        )),
    }
}

/// The bytes of a copy from `s` to `d` made of whole 16-byte chunks, `s` a multiple of 16 bytes
/// and both 16-byte aligned (the unit of `cp.async.cg`, PTX ISA 9.7.9.25.3, and of the bulk
/// copies, 9.7.9.25.4.1), or a rejection naming `who` moves them.
pub fn sixteen_byte_chunks(
    d: &TileRef,
    s: &TileRef,
    who: &str,
) -> std::result::Result<u32, Rejection> {
    if s.bytes() % 16 != 0 || s.align % 16 != 0 || d.align % 16 != 0 {
        return Err(Rejection::operand(
            Aspect::Width,
            format!(
                "{} bytes at alignments {}/{}: {who} moves aligned 16-byte chunks",
                s.bytes(),
                s.align,
                d.align
            ),
        ));
    }
    Ok(s.bytes() as u32)
}

/// Both tiles hold elements of `bits` bits, or a rejection saying what `who` moves.
pub fn element_bits(
    (a, b): (&TileRef, &TileRef),
    bits: u32,
    who: &str,
) -> std::result::Result<(), Rejection> {
    match [a, b].into_iter().find(|t| t.dtype.bits() != bits) {
        Some(t) => Err(Rejection::operand(
            Aspect::ElementType,
            format!("{} elements: {who}", t.dtype),
        )),
        None => Ok(()),
    }
}

/// The destination and source storages are one of `allowed`.
pub fn storages(
    ctx: &OpCtx<'_>,
    allowed: &'static [StoragePair],
) -> std::result::Result<(), Rejection> {
    let (d, s) = pair(ctx)?;
    let got = StoragePair::of(d, s);
    if allowed.contains(&got) {
        Ok(())
    } else {
        Err(Rejection::Storage { got, allowed })
    }
}

/// Source and destination have the same element type and element count.
pub fn same_elements(ctx: &OpCtx<'_>) -> std::result::Result<(), Rejection> {
    let (d, s) = pair(ctx)?;
    if d.dtype != s.dtype {
        return Err(Rejection::ElementTypes {
            src: s.dtype,
            dst: d.dtype,
        });
    }
    if d.elements() != s.elements() {
        return Err(Rejection::ElementCount {
            src: s.elements(),
            dst: d.elements(),
        });
    }
    Ok(())
}

/// The scope is one of `allowed`.
pub fn scope_in(
    ctx: &OpCtx<'_>,
    allowed: &'static [ScopeKind],
) -> std::result::Result<(), Rejection> {
    if allowed.contains(&ctx.scope.kind()) {
        Ok(())
    } else {
        Err(Rejection::Scope {
            got: ctx.scope,
            allowed,
        })
    }
}

/// What [`Planner::plan`] is: the plan for an op, or why there is none.
pub type PlanFn = for<'a> fn(&'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection>;

/// The registration of a variant that works on registers alone (any target, at every scope but
/// a cluster): `elementwise.registers` and `cast.registers`.
pub const fn registers_variant(op: OpKind, name: &'static str, plan: PlanFn) -> Variant {
    const SCOPES: &[Predicate] = &[scope!(Thread, Warp, Warpgroup, Cta)];
    Variant {
        op,
        name,
        targets: TargetSet::all(),
        priority: 10,
        views: false,
        predicates: SCOPES,
        planner: Planner {
            name: "registers",
            plan,
        },
    }
}

/// `&'static [StoragePair]` written as copy directions: `storage_pairs![Global -> Shared]` is
/// `&[StoragePair { dst: Storage::Shared, src: Storage::Global }]`.
macro_rules! storage_pairs {
    ($($src:ident -> $dst:ident),+ $(,)?) => {
        &[$($crate::tile::operand::StoragePair {
            dst: $crate::tile::operand::Storage::$dst,
            src: $crate::tile::operand::Storage::$src,
        }),+]
    };
}
pub(crate) use storage_pairs;

/// The `storage` predicate ([`storages`]): the copy runs in one of the listed directions
/// (`storage!(Global -> Shared, Shared -> Global)`) or between a listed pair (`storage!(MEM)`).
macro_rules! storage {
    ($($src:ident -> $dst:ident),+ $(,)?) => {
        $crate::tile::variants::common::storage!(
            $crate::tile::variants::common::storage_pairs![$($src -> $dst),+]
        )
    };
    ($pairs:expr) => {
        $crate::tile::registry::Predicate {
            name: "storage",
            check: |c| $crate::tile::variants::common::storages(c, $pairs),
        }
    };
}
pub(crate) use storage;

/// The `scope` predicate ([`scope_in`]): the op runs at one of the listed scope kinds.
macro_rules! scope {
    ($($kind:ident),+ $(,)?) => {
        $crate::tile::registry::Predicate {
            name: "scope",
            check: |c| {
                $crate::tile::variants::common::scope_in(
                    c,
                    &[$($crate::tile::operand::ScopeKind::$kind),+],
                )
            },
        }
    };
}
pub(crate) use scope;

/// The `elements` predicate: [`same_elements`].
pub const ELEMENTS: Predicate = Predicate {
    name: "elements",
    check: same_elements,
};

/// The `contiguous` predicate: [`both_contiguous`].
pub const CONTIGUOUS: Predicate = Predicate {
    name: "contiguous",
    check: both_contiguous,
};

/// Both operands are dense (identity layout) and unswizzled.
pub fn both_contiguous(ctx: &OpCtx<'_>) -> std::result::Result<(), Rejection> {
    let (d, s) = pair(ctx)?;
    for (what, t) in [("source", s), ("destination", d)] {
        if !t.is_contiguous() || t.swizzle != smem::SwizzleMode::None {
            return Err(Rejection::operand(
                Aspect::Layout,
                format!("the {what} is not a dense unswizzled tile"),
            ));
        }
    }
    Ok(())
}

/// The register tile and the other tile of a copy between registers and something else, and
/// whether the copy loads the registers.
pub fn register_side<'a>(d: &'a TileRef, s: &'a TileRef) -> (&'a TileRef, &'a TileRef, bool) {
    if StoragePair::of(d, s).loads_registers() {
        (d, s, true)
    } else {
        (s, d, false)
    }
}

/// The memory tile `mem` of a copy to or from the register tile `regs` has its shape; `how`
/// (appended to the rejection, may be empty) says how the registers cover the tile.
pub fn same_shape(regs: &TileRef, mem: &TileRef, how: &str) -> std::result::Result<(), Rejection> {
    if mem.shape == regs.shape {
        return Ok(());
    }
    Err(Rejection::operand(
        Aspect::Shape,
        format!(
            "the memory tile is {:?}; the register tile covers {:?}{how}",
            mem.shape, regs.shape
        ),
    ))
}

/// The register tile and the memory tile of a fragment copy agree: the same shape
/// ([`same_shape`]) and the same 16- or 32-bit element type.
pub fn fragment_tiles(regs: &TileRef, mem: &TileRef) -> std::result::Result<(), Rejection> {
    same_shape(regs, mem, "")?;
    if regs.dtype != mem.dtype || !matches!(regs.dtype.bits(), 16 | 32) {
        return Err(Rejection::operand(
            Aspect::ElementType,
            format!(
                "{} registers and {} memory: need the same 16- or 32-bit type",
                regs.dtype, mem.dtype
            ),
        ));
    }
    Ok(())
}

/// The thread mode of a thread-value layout (its first mode): what the fragment copies evaluate
/// at run time to find each thread's first cell.
pub fn thread_mode(tv: &TvLayout) -> std::result::Result<layouts::Layout, Rejection> {
    tv.layout()
        .modes()
        .first()
        .cloned()
        .ok_or_else(|| Rejection::operand(Aspect::Fragment, "empty layout"))
}

/// The thread's index within the scope: 0, `%laneid`, `%tid.x % 128`, or `%tid.x`.
pub fn thread_index(k: &mut FunctionBuilder, scope: ExecScope) -> Result<Reg<ty::U32>> {
    let t = k.reg::<ty::U32>();
    match scope {
        ExecScope::Thread | ExecScope::Cluster { .. } => k.mov(t, 0u32)?,
        ExecScope::Warp => k.mov_sreg(t, SpecialReg::LaneId)?,
        ExecScope::Warpgroup => {
            k.mov_sreg(t, SpecialReg::Tid(Dim::X))?;
            k.and(t, t, 127u32)?;
        }
        ExecScope::Cta { .. } => k.mov_sreg(t, SpecialReg::Tid(Dim::X))?,
    }
    Ok(t)
}

/// A memory address: 64-bit global or 32-bit shared.
#[derive(Debug, Clone)]
pub enum MemAddr {
    /// `[%rd]` in `.global`.
    Global(Addr<spaces::Global>),
    /// `[%r]` in `.shared`.
    Shared(Addr<spaces::Shared>),
}

impl MemAddr {
    /// The address `bytes` further on (an immediate offset, PTX ISA 6.4.1 `[reg+imm]`).
    pub fn offset(self, bytes: i64) -> MemAddr {
        match self {
            MemAddr::Global(a) => MemAddr::Global(a.offset(bytes)),
            MemAddr::Shared(a) => MemAddr::Shared(a.offset(bytes)),
        }
    }
}

/// Where a memory tile starts: a 64-bit global or a 32-bit shared address.
#[derive(Debug, Clone, Copy)]
pub enum MemBase {
    /// A global address.
    Global(Reg<ty::U64>),
    /// A shared-window address.
    Shared(Reg<ty::U32>),
}

impl MemBase {
    /// The base of `t`, if it is a global or shared address.
    pub fn of(t: &TileRef) -> std::result::Result<MemBase, Rejection> {
        match &t.base {
            Base::Global(b) => Ok(MemBase::Global(*b)),
            Base::Shared(b) => Ok(MemBase::Shared(*b)),
            _ => Err(Rejection::operand(
                Aspect::Base,
                format!("{t} has no memory address"),
            )),
        }
    }

    /// The address `byte_offset` bytes past the base.
    pub fn address(self, k: &mut FunctionBuilder, byte_offset: Reg<ty::U32>) -> Result<MemAddr> {
        match self {
            MemBase::Global(b) => {
                let (w, a) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
                k.cvt(w, byte_offset)?;
                k.add(a, b, w)?;
                Ok(MemAddr::Global(Addr::reg(a)))
            }
            MemBase::Shared(b) => {
                let a = k.reg::<ty::U32>();
                k.add(a, b, byte_offset)?;
                Ok(MemAddr::Shared(Addr::reg32(a)))
            }
        }
    }
}

/// A memory tile with a static layout: its base, layout, element size and swizzle.
#[derive(Debug, Clone, Copy)]
pub struct MemTile<'a> {
    /// Where it starts.
    pub base: MemBase,
    /// Element index (row-major over the shape) → element offset.
    pub layout: &'a layouts::Layout,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// The byte swizzle after the layout.
    pub swizzle: smem::SwizzleMode,
}

impl<'a> MemTile<'a> {
    /// `t` as a memory tile with a layout.
    pub fn of(t: &'a TileRef) -> std::result::Result<MemTile<'a>, Rejection> {
        let layout = t.layout.as_ref().ok_or_else(|| {
            Rejection::operand(Aspect::Layout, format!("{t} has no memory layout"))
        })?;
        Ok(MemTile {
            base: MemBase::of(t)?,
            layout,
            elem_bytes: t.dtype.bytes(),
            swizzle: t.swizzle,
        })
    }

    /// The byte offset of element `index`: its layout, times the element size, swizzled.
    pub fn element_offset(
        &self,
        k: &mut FunctionBuilder,
        index: Reg<ty::U32>,
    ) -> Result<Reg<ty::U32>> {
        let e = eval_layout(k, self.layout, index)?;
        let b = k.reg::<ty::U32>();
        k.mul_lo(b, e, self.elem_bytes)?;
        smem::emit::emit_swizzle(k, self.swizzle, b)
    }
}

/// Registers of one class, typed for the instructions that move them: what a register tile's
/// [`RegRef`]s are read as (checked with [`RegRef::retype`], PTX ISA 6.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Regs {
    /// `.f32 %f` registers.
    F32(Vec<Reg<ty::F32>>),
    /// `.b32 %hh` packed 16-bit float pairs.
    Pairs(Vec<Reg<ty::Bf16x2>>),
    /// `.b32 %r` registers.
    B32(Vec<Reg<ty::B32>>),
    /// `.b16 %h` 16-bit floats.
    Halves(Vec<Reg<ty::Bf16>>),
    /// `.b16 %rs` registers.
    B16(Vec<Reg<ty::B16>>),
}

impl Regs {
    /// `regs` typed by their one class.
    pub fn of(regs: &[RegRef]) -> std::result::Result<Regs, Rejection> {
        fn typed<T: ty::RegType>(regs: &[RegRef]) -> std::result::Result<Vec<Reg<T>>, Rejection> {
            regs.iter()
                .map(|r| r.retype::<T>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| Rejection::operand(Aspect::Registers, e.to_string()))
        }
        let class = regs
            .first()
            .map(|r| r.class)
            .ok_or_else(|| Rejection::operand(Aspect::Registers, "no registers"))?;
        if regs.iter().any(|r| r.class != class) {
            return Err(Rejection::operand(
                Aspect::Registers,
                "the registers are of different classes",
            ));
        }
        Ok(match class {
            RegClass::F32 => Regs::F32(typed(regs)?),
            RegClass::H32 => Regs::Pairs(typed(regs)?),
            RegClass::B32 => Regs::B32(typed(regs)?),
            RegClass::H16 => Regs::Halves(typed(regs)?),
            RegClass::B16 => Regs::B16(typed(regs)?),
            other => {
                return Err(Rejection::operand(
                    Aspect::Registers,
                    format!("cannot move {other:?} registers"),
                ));
            }
        })
    }

    /// Registers `range` of these.
    pub fn range(&self, range: std::ops::Range<usize>) -> Regs {
        match self {
            Regs::F32(r) => Regs::F32(r[range].to_vec()),
            Regs::Pairs(r) => Regs::Pairs(r[range].to_vec()),
            Regs::B32(r) => Regs::B32(r[range].to_vec()),
            Regs::Halves(r) => Regs::Halves(r[range].to_vec()),
            Regs::B16(r) => Regs::B16(r[range].to_vec()),
        }
    }

    /// One `ld`/`st` (a vector for more than one register) of these at `a`; only the bit width
    /// matters to ld/st (PTX ISA 9.7.9.8, 9.7.9.11).
    pub fn access(&self, k: &mut FunctionBuilder, a: MemAddr, load: bool) -> Result<()> {
        fn go<T: ty::RegType>(
            k: &mut FunctionBuilder,
            r: &[Reg<T>],
            a: MemAddr,
            load: bool,
        ) -> Result<()> {
            match (a, load) {
                (MemAddr::Global(a), true) => k.ld_v(r, a),
                (MemAddr::Shared(a), true) => k.ld_v(r, a),
                (MemAddr::Global(a), false) => k.st_v(a, r),
                (MemAddr::Shared(a), false) => k.st_v(a, r),
            }
        }
        match self {
            Regs::F32(r) => go(k, r, a, load),
            Regs::Pairs(r) => go(k, r, a, load),
            Regs::B32(r) => go(k, r, a, load),
            Regs::Halves(r) => go(k, r, a, load),
            Regs::B16(r) => go(k, r, a, load),
        }
    }

    /// `stmatrix` of these when `store`, else `ldmatrix` into them (PTX ISA 9.7.14.5.16,
    /// 9.7.14.5.15; the builder checks they are 32-bit).
    pub fn matrix(
        &self,
        k: &mut FunctionBuilder,
        n: MatrixCount,
        at: Addr<spaces::Shared>,
        store: bool,
    ) -> Result<()> {
        fn go<T: ty::RegType>(
            k: &mut FunctionBuilder,
            n: MatrixCount,
            at: Addr<spaces::Shared>,
            store: bool,
            r: &[Reg<T>],
        ) -> Result<()> {
            if store {
                k.stmatrix(n, false, at, r)
            } else {
                k.ldmatrix(n, false, r, at)
            }
        }
        match self {
            Regs::F32(r) => go(k, n, at, store, r),
            Regs::Pairs(r) => go(k, n, at, store, r),
            Regs::B32(r) => go(k, n, at, store, r),
            Regs::Halves(r) => go(k, n, at, store, r),
            Regs::B16(r) => go(k, n, at, store, r),
        }
    }

    /// Sets them to zero (what a guarded load leaves outside the bounds).
    pub fn zero(&self, k: &mut FunctionBuilder) -> Result<()> {
        fn zero<T: ty::RegType>(k: &mut FunctionBuilder, r: &[Reg<T>]) -> Result<()> {
            r.iter()
                .try_for_each(|&x| k.mov(x, Src::<T>::Imm(Imm::UInt(0))))
        }
        match self {
            Regs::F32(r) => r.iter().try_for_each(|&x| k.mov(x, 0.0f32)),
            Regs::Pairs(r) => zero(k, r),
            Regs::B32(r) => zero(k, r),
            Regs::Halves(r) => zero(k, r),
            Regs::B16(r) => zero(k, r),
        }
    }
}

/// Emits `offset = layout(index)` for a CuTe layout with flat modes `(shape_i, stride_i)`:
/// `sum((index / prod(shape_<i)) % shape_i * stride_i)` (CuTe colexicographic evaluation).
pub fn eval_layout(
    k: &mut FunctionBuilder,
    layout: &layouts::Layout,
    index: Reg<ty::U32>,
) -> Result<Reg<ty::U32>> {
    let out = k.reg::<ty::U32>();
    k.mov(out, 0u32)?;
    let mut step: i64 = 1;
    for (extent, stride) in layout.flat_modes() {
        if extent > 1 && stride != 0 {
            let c = k.reg::<ty::U32>();
            div_const(k, DivPart::Quotient, c, index, step as u32)?;
            div_const(k, DivPart::Remainder, c, c, extent as u32)?;
            k.mad_lo(out, c, stride as u32, out)?;
        }
        step *= extent.max(1);
    }
    Ok(out)
}

/// What [`div_const`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DivPart {
    /// `src / d`: a move for 1, a shift for a power of two, else `div.u32`.
    Quotient,
    /// `src % d`: a mask for a power of two, else `rem.u32`.
    Remainder,
}

/// `dst = src / d` or `src % d` (`part`) for a constant `d`, unsigned. ptxas does not turn every
/// unsigned division by a constant into shifts (it emitted `MUFU.RCP` sequences for some in the
/// GEMM epilogue), so the lowering does it.
pub fn div_const(
    k: &mut FunctionBuilder,
    part: DivPart,
    dst: Reg<ty::U32>,
    src: Reg<ty::U32>,
    d: u32,
) -> Result<()> {
    match part {
        DivPart::Quotient if d == 1 => k.mov(dst, src),
        DivPart::Quotient if d.is_power_of_two() => k.shr(dst, src, d.trailing_zeros()),
        DivPart::Quotient => k.div(dst, src, d),
        DivPart::Remainder if d.is_power_of_two() => k.and(dst, src, d - 1),
        DivPart::Remainder => k.rem(dst, src, d),
    }
}

/// `for i = start; i < end; i += step` with a body that gets `i`.
pub fn strided_loop(
    k: &mut FunctionBuilder,
    start: Reg<ty::U32>,
    end: u32,
    step: u32,
    body: impl FnOnce(&mut FunctionBuilder, Reg<ty::U32>) -> Result<()>,
) -> Result<()> {
    let i = k.reg::<ty::U32>();
    k.mov(i, start)?;
    let (top, done, out) = (k.label(), k.label(), k.pred());
    k.place(top)?;
    k.setp(CmpOp::Ge, out, i, end)?;
    k.when(out).bra(done)?;
    body(k, i)?;
    k.add(i, i, step)?;
    k.bra(top)?;
    k.place(done)
}
