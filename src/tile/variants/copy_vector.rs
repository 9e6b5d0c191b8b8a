//! `copy.vector`: dense memory-to-memory copies with the widest legal vector access (16, 8 or 4
//! bytes, from both operands' alignment and the tile size), the chunks spread over the scope's
//! threads (PTX ISA 9.7.9.8 `ld`, 9.7.9.11 `st`, `.v2`/`.v4`).

use ptx_isa::{FunctionBuilder, Result, TargetSet, ty};

use super::common::{
    MemAddr, address, both_contiguous, expect_copy, same_elements, storages, strided_loop,
    thread_index,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

/// The widest access both tiles allow, in bytes.
pub fn vector_width(d: &TileRef, s: &TileRef) -> Option<u32> {
    let bytes = s.bytes();
    [16u32, 8, 4].into_iter().find(|&w| {
        bytes % w as u64 == 0 && d.align % w == 0 && s.align % w == 0 && w >= s.dtype.bytes()
    })
}

fn width(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = super::common::pair(ctx)?;
    vector_width(d, s).map(|_| ()).ok_or_else(|| {
        format!(
            "{} bytes at alignments {} and {} allow no 4-byte access",
            s.bytes(),
            s.align,
            d.align
        )
    })
}

const MEM: &[(Storage, Storage)] = &[
    (Storage::Shared, Storage::Global),
    (Storage::Global, Storage::Shared),
    (Storage::Shared, Storage::Shared),
    (Storage::Global, Storage::Global),
];

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.vector",
    targets: TargetSet::all(),
    priority: 20,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, MEM),
        },
        Predicate {
            name: "elements",
            check: same_elements,
        },
        Predicate {
            name: "contiguous",
            check: both_contiguous,
        },
        Predicate {
            name: "width",
            check: width,
        },
    ],
    lower,
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

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let w = vector_width(d, s).unwrap_or(4);
    let chunks = (s.bytes() / w as u64) as u32;
    let threads = ctx.scope.threads();
    let t = thread_index(k, ctx.scope)?;
    k.comment(&format!(
        "copy.vector: {chunks} chunks of {w} bytes over {threads} threads"
    ));
    strided_loop(k, t, chunks, threads, |k, c| {
        let off = k.reg::<ty::U32>();
        k.mul_lo(off, c, w)?;
        let regs = k.regs::<ty::B32>((w / 4) as usize);
        let from = address(k, s, off)?;
        load(k, &regs, from)?;
        let to = address(k, d, off)?;
        store(k, to, &regs)
    })
}
