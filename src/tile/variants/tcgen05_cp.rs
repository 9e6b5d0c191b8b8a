//! `copy_async.tcgen05_cp`: shared memory → tensor memory with `tcgen05.cp.128x256b` (PTX ISA
//! 9.7.16.8.1), one instruction per 8 columns. The shared tile is 128 rows of 32-bit cells in the
//! canonical no-swizzle K-major layout of core matrices (8 rows x 16 bytes, 128 contiguous bytes;
//! the two cores of a row's 32 bytes 128 bytes apart (LBO), 8-row groups 256 bytes apart (SBO),
//! 8-column chunks 4096 bytes apart), described to the instruction by a tcgen05 shared-memory
//! descriptor (PTX ISA 9.7.16.4.1). One thread issues it; completion (`tcgen05.commit` to an
//! mbarrier) is the caller's. Not run on hardware (no Blackwell GPU here): checked by ptxas and by
//! the layout tests.

use ptx_isa::builder::{CtaGroup, TmemCpShape};
use ptx_isa::{FunctionBuilder, Reg, TargetSet, ty};

type Result<T, E = ptx_isa::Error> = std::result::Result<T, E>;
use smem::desc::sm100::{UmmaDesc, UmmaSwizzle};

use super::common::{pair, scope, shared_addr, storage, tmem_addr};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The element offset of (row, col) in the canonical layout this variant copies.
pub fn canonical_offset(row: u32, col: u32) -> u32 {
    (col / 8) * 1024 + (row / 8) * 64 + ((col % 8) / 4) * 32 + (row % 8) * 4 + col % 4
}

/// The shared-memory layout (over the row-major index `col + cols * row`) this variant expects.
pub fn canonical_layout(cols: u32) -> Result<layouts::Layout, layouts::LayoutError> {
    use layouts::IntTuple as T;
    let chunks = (cols / 8).max(1) as i64;
    // Column digits (4, 2, chunks) then row digits (8, 16), colexicographic.
    let shape = T::tuple([
        T::tuple([T::Int(4), T::Int(2), T::Int(chunks)]),
        T::tuple([T::Int(8), T::Int(16)]),
    ]);
    let stride = T::tuple([
        T::tuple([T::Int(1), T::Int(32), T::Int(1024)]),
        T::tuple([T::Int(4), T::Int(64)]),
    ]);
    layouts::Layout::new(shape, stride)
}

/// One `tcgen05.cp.128x256b` per 8 columns: `chunks` of them from `src` to `taddr`.
struct TmemCopy {
    taddr: Reg<ty::U32>,
    src: Reg<ty::U32>,
    chunks: u32,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    if s.dtype.bits() != 32 || d.dtype.bits() != 32 {
        return Err(Rejection::operand(
            Aspect::ElementType,
            format!("{} cells: this variant copies 32-bit cells", s.dtype),
        ));
    }
    let [rows, cols] = s.shape[..] else {
        return Err(Rejection::operand(Aspect::Shape, "a 2-D tile expected"));
    };
    if rows != 128 || cols % 8 != 0 || d.shape != s.shape {
        return Err(Rejection::operand(
            Aspect::Shape,
            format!(
                "{rows} x {cols} into {:?}: 128 rows, a multiple of 8 columns",
                d.shape
            ),
        ));
    }
    let layout = s
        .layout
        .as_ref()
        .ok_or_else(|| Rejection::operand(Aspect::Layout, "the shared tile has no layout"))?;
    for r in 0..rows {
        for c in 0..cols {
            if layout.call((c + cols * r) as i64) != canonical_offset(r, c) as i64 {
                return Err(Rejection::operand(
                    Aspect::Layout,
                    format!(
                        "element ({r}, {c}) is not where the canonical no-swizzle K-major layout puts it"
                    ),
                ));
            }
        }
    }
    if s.swizzle != smem::SwizzleMode::None || s.align % 16 != 0 {
        return Err(Rejection::operand(
            Aspect::Layout,
            "an unswizzled, 16-byte-aligned shared tile expected",
        ));
    }
    Ok(Box::new(TmemCopy {
        taddr: tmem_addr(d, "destination")?,
        src: shared_addr(s, "source")?,
        chunks: cols / 8,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::CopyAsync,
    name: "copy_async.tcgen05_cp",
    targets: TargetSet::Sm100a,
    priority: 20,
    views: false,
    predicates: &[storage!(Shared -> Tmem), scope!(Thread)],
    planner: Planner {
        name: "layout",
        plan,
    },
};

impl Plan for TmemCopy {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let desc = UmmaDesc::relative(128, 256, UmmaSwizzle::None);
        for chunk in 0..self.chunks {
            let a = k.reg::<ty::U32>();
            k.add(a, self.src, chunk * 4096)?;
            let dsc = smem::emit::emit_desc(k, &desc, a)?;
            let t = k.reg::<ty::U32>();
            k.add(t, self.taddr, chunk * 8)?;
            k.tcgen05_cp(
                CtaGroup::One,
                TmemCpShape::S128x256b,
                None,
                t,
                dsc.retype()?,
            )?;
        }
        Ok(())
    }
}
