//! `copy.scalar`: memory-to-memory copies of any layouts and swizzles, one element at a time —
//! the fallback when no vector variant applies.

use ptx_isa::{FunctionBuilder, Result, ScalarType, TargetSet, ty};

use super::common::{ELEMENTS, MemAddr, MemTile, pair, storage, strided_loop, thread_index};
use super::copy_vector::MEM;
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::ExecScope;
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The copy: element `e` of `src` to element `e` of `dst`, each through its layout and swizzle,
/// moved as `bits` (a `.b8`/`.b16` access in a 16-bit register, `.b32`, or `.b64`).
struct ScalarCopy<'a> {
    dst: MemTile<'a>,
    src: MemTile<'a>,
    bits: ScalarType,
    elements: u32,
    scope: ExecScope,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    if d.layout.is_none() || s.layout.is_none() {
        return Err(Rejection::operand(
            Aspect::Layout,
            "both operands need a memory layout",
        ));
    }
    if s.dtype.bytes() > 8 {
        return Err(Rejection::operand(
            Aspect::ElementType,
            format!("{}-byte elements", s.dtype.bytes()),
        ));
    }
    Ok(Box::new(ScalarCopy {
        dst: MemTile::of(d)?,
        src: MemTile::of(s)?,
        bits: s.dtype.bits_type(),
        elements: s.elements() as u32,
        scope: ctx.scope,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.scalar",
    targets: TargetSet::all(),
    priority: 0,
    views: false,
    predicates: &[storage!(MEM), ELEMENTS],
    planner: Planner {
        name: "layouts",
        plan,
    },
};

impl Plan for ScalarCopy<'_> {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let threads = self.scope.threads();
        let t = thread_index(k, self.scope)?;
        let bits = self.bits;
        strided_loop(k, t, self.elements, threads, |k, e| {
            let so = self.src.element_offset(k, e)?;
            let dof = self.dst.element_offset(k, e)?;
            let (from, to) = (
                self.src.base.address(k, so)?,
                self.dst.base.address(k, dof)?,
            );
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
}
