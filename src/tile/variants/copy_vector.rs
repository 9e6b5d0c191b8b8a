//! `copy.vector`: dense memory-to-memory copies with the widest legal vector access (16, 8 or 4
//! bytes, from both operands' alignment and the tile size), the chunks spread over the scope's
//! threads (PTX ISA 9.7.9.8 `ld`, 9.7.9.11 `st`, `.v2`/`.v4`).

use ptx_isa::{FunctionBuilder, Result, TargetSet, ty};

use super::common::{
    CONTIGUOUS, ELEMENTS, MemAddr, MemBase, pair, storage, storage_pairs, strided_loop,
    thread_index,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{ExecScope, StoragePair, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The widest access both tiles allow, in bytes.
pub fn vector_width(d: &TileRef, s: &TileRef) -> Option<u32> {
    let bytes = s.bytes();
    [16u32, 8, 4].into_iter().find(|&w| {
        bytes % w as u64 == 0 && d.align % w == 0 && s.align % w == 0 && w >= s.dtype.bytes()
    })
}

/// The copy: `chunks` accesses of `width` bytes spread over the scope's threads.
struct VectorCopy {
    dst: MemBase,
    src: MemBase,
    width: u32,
    chunks: u32,
    scope: ExecScope,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let width = vector_width(d, s).ok_or_else(|| {
        Rejection::operand(
            Aspect::Width,
            format!(
                "{} bytes at alignments {} and {} allow no 4-byte access",
                s.bytes(),
                s.align,
                d.align
            ),
        )
    })?;
    Ok(Box::new(VectorCopy {
        dst: MemBase::of(d)?,
        src: MemBase::of(s)?,
        width,
        chunks: (s.bytes() / width as u64) as u32,
        scope: ctx.scope,
    }))
}

/// Memory to memory, every direction.
pub(crate) const MEM: &[StoragePair] =
    storage_pairs![Global -> Shared, Shared -> Global, Shared -> Shared, Global -> Global];

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.vector",
    targets: TargetSet::all(),
    priority: 20,
    views: false,
    predicates: &[storage!(MEM), ELEMENTS, CONTIGUOUS],
    planner: Planner {
        name: "width",
        plan,
    },
};

pub(crate) fn load(
    k: &mut FunctionBuilder,
    regs: &[ptx_isa::Reg<ty::B32>],
    a: MemAddr,
) -> Result<()> {
    match a {
        MemAddr::Global(a) => k.ld_v(regs, a),
        MemAddr::Shared(a) => k.ld_v(regs, a),
    }
}

pub(crate) fn store(
    k: &mut FunctionBuilder,
    a: MemAddr,
    regs: &[ptx_isa::Reg<ty::B32>],
) -> Result<()> {
    match a {
        MemAddr::Global(a) => k.st_v(a, regs),
        MemAddr::Shared(a) => k.st_v(a, regs),
    }
}

impl Plan for VectorCopy {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let (w, chunks) = (self.width, self.chunks);
        let threads = self.scope.threads();
        let t = thread_index(k, self.scope)?;
        k.comment(&format!(
            "copy.vector: {chunks} chunks of {w} bytes over {threads} threads"
        ));
        strided_loop(k, t, chunks, threads, |k, c| {
            let off = k.reg::<ty::U32>();
            k.mul_lo(off, c, w)?;
            let regs = k.regs::<ty::B32>((w / 4) as usize);
            let from = self.src.address(k, off)?;
            load(k, &regs, from)?;
            let to = self.dst.address(k, off)?;
            store(k, to, &regs)
        })
    }
}
