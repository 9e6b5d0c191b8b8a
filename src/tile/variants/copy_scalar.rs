//! `copy.scalar`: memory-to-memory copies of any layouts and swizzles, one element at a time —
//! the fallback when no vector variant applies.

use ptx_isa::{FunctionBuilder, Result, ScalarType, TargetSet, ty};

use super::common::{
    MemAddr, address, eval_layout, expect_copy, same_elements, storages, strided_loop, thread_index,
};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

const MEM: &[(Storage, Storage)] = &[
    (Storage::Shared, Storage::Global),
    (Storage::Global, Storage::Shared),
    (Storage::Shared, Storage::Shared),
    (Storage::Global, Storage::Global),
];

fn has_layouts(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, s) = super::common::pair(ctx)?;
    if d.layout.is_none() || s.layout.is_none() {
        return Err("both operands need a memory layout".into());
    }
    if s.dtype.bytes() > 8 {
        return Err(format!("{}-byte elements", s.dtype.bytes()));
    }
    Ok(())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.scalar",
    targets: TargetSet::all(),
    priority: 0,
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
            name: "layouts",
            check: has_layouts,
        },
    ],
    lower,
};

/// The byte offset of element `index` of `t`: its layout, times the element size, swizzled.
pub(crate) fn element_offset(
    k: &mut FunctionBuilder,
    t: &TileRef,
    index: ptx_isa::Reg<ty::U32>,
) -> Result<ptx_isa::Reg<ty::U32>> {
    let layout = t
        .layout
        .as_ref()
        .ok_or_else(|| ptx_isa::Error::new(ptx_isa::ErrorKind::OperandKind, "no layout"))?;
    let e = eval_layout(k, layout, index)?;
    let b = k.reg::<ty::U32>();
    k.mul_lo(b, e, t.dtype.bytes())?;
    smem::emit::emit_swizzle(k, t.swizzle, b)
}

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let (d, s) = expect_copy(ctx)?;
    let threads = ctx.scope.threads();
    let t = thread_index(k, ctx.scope)?;
    let bits = s.dtype.bits_type();
    strided_loop(k, t, s.elements() as u32, threads, |k, e| {
        let so = element_offset(k, s, e)?;
        let dof = element_offset(k, d, e)?;
        let (from, to) = (address(k, s, so)?, address(k, d, dof)?);
        match bits {
            ScalarType::B8 | ScalarType::B16 => {
                let v = k.reg::<ty::B16>();
                let o = ptx_isa::builder::LdOpts {
                    mem_type: Some(bits),
                    ..Default::default()
                };
                let so = ptx_isa::builder::StOpts {
                    mem_type: Some(bits),
                    ..Default::default()
                };
                match from {
                    MemAddr::Global(a) => k.ld_with(&o, &[v], a)?,
                    MemAddr::Shared(a) => k.ld_with(&o, &[v], a)?,
                }
                match to {
                    MemAddr::Global(a) => k.st_with(&so, a, &[v.into()]),
                    MemAddr::Shared(a) => k.st_with(&so, a, &[v.into()]),
                }
            }
            ScalarType::B32 => {
                let v = k.reg::<ty::B32>();
                super::copy_vector::load(k, &[v], from)?;
                super::copy_vector::store(k, to, &[v])
            }
            _ => {
                let v = k.reg::<ty::B64>();
                match from {
                    MemAddr::Global(a) => k.ld(v, a)?,
                    MemAddr::Shared(a) => k.ld(v, a)?,
                }
                match to {
                    MemAddr::Global(a) => k.st(a, v),
                    MemAddr::Shared(a) => k.st(a, v),
                }
            }
        }
    })
}
