//! `copy.ldmatrix` and `copy.stmatrix`: shared memory ↔ registers in the `ldmatrix`/`stmatrix`
//! fragment (PTX ISA 9.7.14.5.15-16): a warp moves one, two or four 8x8 matrices of 16-bit
//! elements; lane `t` gives the address of row `t % 8` of matrix `t / 8`. The lanes' addresses
//! must be an affine function of (row, matrix bit 0, matrix bit 1), checked on the host.

use layouts::fragment::ldmatrix;
use ptx_isa::builder::MatrixCount;
use ptx_isa::{Addr, FunctionBuilder, Result, TargetSet, ty};

use super::common::{pair, scope_in, storages, thread_index};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

/// The matrices of a register tile whose fragment is the `ldmatrix`/`stmatrix` one.
fn matrices(regs: &TileRef, store: bool) -> std::result::Result<u32, String> {
    let tv = regs
        .fragment
        .as_ref()
        .ok_or("the register tile has no thread-value layout")?;
    for num in [4i64, 2, 1] {
        let want = if store {
            ldmatrix::stmatrix(num, false)
        } else {
            ldmatrix::ldmatrix(num, false)
        };
        if let Ok(want) = want {
            if tv.compare(&want).is_ok() {
                return Ok(num as u32);
            }
        }
    }
    Err(format!(
        "the register layout {} is not an ldmatrix x1/x2/x4 fragment",
        tv.name()
    ))
}

/// Lane `t`'s byte offset into the shared tile: `a*(t%8) + b*((t>>3)&1) + c*(t>>4) + d`.
fn lane_offsets(regs: &TileRef, mem: &TileRef, num: u32) -> std::result::Result<[u32; 4], String> {
    let tv = regs.fragment.as_ref().ok_or("no fragment")?;
    let layout = mem.layout.as_ref().ok_or("the shared tile has no layout")?;
    let cols = mem
        .shape
        .get(1)
        .copied()
        .ok_or("the shared tile is not 2-D")? as i64;
    let off = |t: u32| -> std::result::Result<i64, String> {
        let t = t % (8 * num);
        // Row t%8 of matrix t/8 starts at the value register t/8 holds for thread 4*(t%8).
        let cell = tv
            .offset(4 * (t % 8) as i64, 2 * (t / 8) as i64)
            .map_err(|e| e.to_string())?;
        let (row, col) = (cell % tv.rows(), cell / tv.rows());
        Ok(layout.call(row * cols + col) * mem.dtype.bytes() as i64)
    };
    let d = off(0)?;
    let (a, b, c) = (off(1)? - d, off(8)? - d, off(16)? - d);
    for t in 0..32 {
        let want = a * (t % 8) as i64 + b * ((t >> 3) & 1) as i64 + c * (t >> 4) as i64 + d;
        if off(t)? != want {
            return Err(format!(
                "lane {t}'s row address is not affine in (row, matrix)"
            ));
        }
    }
    if [a, b, c, d].iter().any(|&x| x < 0) {
        return Err("negative offsets".into());
    }
    Ok([a as u32, b as u32, c as u32, d as u32])
}

fn check(ctx: &OpCtx<'_>, store: bool) -> std::result::Result<(), String> {
    let (d, s) = pair(ctx)?;
    let (regs, mem) = if store { (s, d) } else { (d, s) };
    if regs.dtype.bits() != 16 || mem.dtype.bits() != 16 {
        return Err(format!(
            "{} elements: ldmatrix/stmatrix move 16-bit elements",
            mem.dtype
        ));
    }
    let num = matrices(regs, store)?;
    if mem.shape != regs.shape {
        return Err(format!(
            "the shared tile is {:?}; the fragment covers {:?} (matrices stacked by rows)",
            mem.shape, regs.shape
        ));
    }
    let Base::Registers(r) = &regs.base else {
        return Err("no registers".into());
    };
    if r.len() != num as usize || r.iter().any(|x| x.class.decl_type().bits() != 32) {
        return Err(format!(
            "{} registers: x{num} takes {num} 32-bit registers",
            r.len()
        ));
    }
    let cols = mem.shape.get(1).copied().unwrap_or(0) as i64;
    // Eight consecutive elements of a row are 16 contiguous bytes (before the swizzle, which
    // moves whole 16-byte chunks).
    if let Some(l) = &mem.layout {
        if (0..8).any(|c| l.call(c) != l.call(0) + c) || cols % 8 != 0 {
            return Err("rows are not 16 contiguous bytes".into());
        }
    }
    lane_offsets(regs, mem, num).map(|_| ())
}

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>, store: bool) -> Result<()> {
    let (d, s) = super::common::expect_copy(ctx)?;
    let (regs, mem) = if store { (s, d) } else { (d, s) };
    let invalid = |m: String| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, m);
    let num = matrices(regs, store).map_err(invalid)?;
    let [a, b, c, d0] = lane_offsets(regs, mem, num).map_err(invalid)?;
    let Base::Registers(r) = &regs.base else {
        return Err(invalid("no registers".into()));
    };
    let Base::Shared(base) = mem.base else {
        return Err(invalid("not a shared tile".into()));
    };
    let lane = thread_index(k, ctx.scope)?;
    let (row, m0, m1, off) = (
        k.reg::<ty::U32>(),
        k.reg::<ty::U32>(),
        k.reg::<ty::U32>(),
        k.reg::<ty::U32>(),
    );
    k.and(row, lane, 7u32)?;
    k.bfe(m0, lane, 3u32, 1u32)?;
    k.shr(m1, lane, 4u32)?;
    k.mul_lo(off, row, a)?;
    k.mad_lo(off, m0, b, off)?;
    k.mad_lo(off, m1, c, off)?;
    k.add(off, off, d0)?;
    let sw = smem::emit::emit_swizzle(k, mem.swizzle, off)?;
    let addr = k.reg::<ty::U32>();
    k.add(addr, base, sw)?;
    let regs32: Vec<ptx_isa::Reg<ty::B32>> = r
        .iter()
        .map(|x| ptx_isa::Reg::from_index(x.index))
        .collect();
    let count = match num {
        4 => MatrixCount::X4,
        2 => MatrixCount::X2,
        _ => MatrixCount::X1,
    };
    let regs_same_class = r.iter().all(|x| x.class == ptx_isa::RegClass::B32);
    if !regs_same_class {
        return Err(invalid(
            "ldmatrix/stmatrix registers must be .b32 (%r) registers".into(),
        ));
    }
    if store {
        k.stmatrix(count, false, Addr::reg32(addr), &regs32)
    } else {
        k.ldmatrix(count, false, &regs32, Addr::reg32(addr))
    }
}

/// `copy.ldmatrix` (shared → registers, a warp).
pub const LDMATRIX: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.ldmatrix",
    targets: TargetSet::all(),
    priority: 30,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::Local, Storage::Shared)]),
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["warp"]),
        },
        Predicate {
            name: "fragment",
            check: |c| check(c, false),
        },
    ],
    lower: |k, c| lower(k, c, false),
};

/// `copy.stmatrix` (registers → shared, a warp; sm_90+).
pub const STMATRIX: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.stmatrix",
    targets: TargetSet::sm_at_least(90),
    priority: 30,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| storages(c, &[(Storage::Shared, Storage::Local)]),
        },
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["warp"]),
        },
        Predicate {
            name: "fragment",
            check: |c| check(c, true),
        },
    ],
    lower: |k, c| lower(k, c, true),
};
