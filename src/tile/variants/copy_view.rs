//! `copy.fragment_view`: registers ↔ a tile of a global row-major matrix whose row pitch is known
//! only at run time, optionally bounded (a GEMM's edge tiles), through the register tile's
//! thread-value layout. Value `v` of thread `t` is element `(row, col)` with
//! `row + rows * col = tv(t, v)`; element `(r, c)` is at `base + (r * pitch + c) * size`.
//!
//! The plan is made on the host: the layout splits into a thread part and a value part (no row
//! carries between them), each distinct value row gets one 64-bit row address per thread, and
//! runs of registers in adjacent columns become `ld/st.v2/.v4` where the alignment of the base,
//! of the pitch (its known multiple), of every thread's first column and of the value's column
//! allows, and where no vector can straddle the column bound (PTX ISA 9.7.9.8/9.7.9.9: a vector
//! access is aligned to its full size). Packed 16-bit pairs (`.bf16x2`/`.f16x2` registers) move as
//! 32-bit words when aligned and in bounds as a whole, else as two 16-bit halves.
//!
//! Bounds: every access is predicated on its row and its first column being inside; loads set
//! their registers to zero first, so elements outside read as zero.

use std::collections::HashMap;

use ptx_isa::builder::CmpOp;
use ptx_isa::{Addr, FunctionBuilder, Imm, Pred, RegClass, RegRef, Result, Src, TargetSet, ty};

use super::common::{MemAddr, div_const, eval_layout, expect_copy, rem_const, storages};
use super::common::{pair, thread_index};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

/// One load or store: `width` registers from register `first`, at value row `vrow` (an index
/// into [`Plan::vrows`]) and value column `col`; `halves` splits one packed register into two
/// 16-bit accesses.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Access {
    first: usize,
    width: usize,
    vrow: usize,
    col: u32,
    halves: bool,
}

#[derive(Debug)]
struct Plan {
    /// The distinct value rows (row offsets from the thread's first row).
    vrows: Vec<u32>,
    accesses: Vec<Access>,
}

/// The register tile, the memory tile and whether the copy loads.
fn sides<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<(&'a TileRef, &'a TileRef, bool), String> {
    let (d, s) = pair(ctx)?;
    Ok(if d.storage == Storage::Local {
        (d, s, true)
    } else {
        (s, d, false)
    })
}

fn plan(regs_t: &TileRef, mem: &TileRef, threads: i64) -> std::result::Result<Plan, String> {
    let tv = regs_t
        .fragment
        .as_ref()
        .ok_or("the register tile has no thread-value layout")?;
    let Base::Registers(regs) = &regs_t.base else {
        return Err("the register tile has no registers".into());
    };
    if !matches!(mem.base, Base::Global(_)) {
        return Err("the memory tile has no global address".into());
    }
    let pitch = mem
        .pitch
        .as_ref()
        .ok_or("the memory tile has no run-time pitch (copy.fragment takes static layouts)")?;
    if mem.shape != regs_t.shape {
        return Err(format!(
            "memory tile {:?} vs register tile {:?}",
            mem.shape, regs_t.shape
        ));
    }
    if mem.dtype != regs_t.dtype || !matches!(mem.dtype.bits(), 16 | 32) {
        return Err(format!(
            "{} registers and {} memory: need the same 16- or 32-bit type",
            regs_t.dtype, mem.dtype
        ));
    }
    let elem = mem.dtype.bytes();
    if mem.align % elem != 0 {
        return Err(format!(
            "the base is aligned to {} bytes, less than an element",
            mem.align
        ));
    }
    let class = regs.first().map(|r| r.class).ok_or("no registers")?;
    if regs.iter().any(|r| r.class != class) {
        return Err("the registers are of different classes".into());
    }
    let bits = class.decl_type().bits();
    let per_reg = bits / mem.dtype.bits();
    if !matches!((mem.dtype.bits(), bits), (32, 32) | (16, 16) | (16, 32)) {
        return Err(format!("{bits}-bit registers for {} elements", mem.dtype));
    }
    if regs.len() as i64 * per_reg as i64 != tv.values() {
        return Err(format!(
            "{} registers of {per_reg} element(s) for {} values per thread",
            regs.len(),
            tv.values()
        ));
    }
    if tv.threads() != threads {
        return Err(format!(
            "the layout spreads over {} threads, the scope has {threads}",
            tv.threads()
        ));
    }
    super::copy_stmatrix_frag::separable(tv)?;
    let rows = tv.rows();
    let off = |t: i64, v: i64| tv.offset(t, v).map_err(|e| e.to_string());
    // Where each register's first element sits; a packed pair's second is the next column.
    let mut at = Vec::with_capacity(regs.len());
    for i in 0..regs.len() as i64 {
        let o = off(0, per_reg as i64 * i)?;
        if per_reg == 2 && off(0, 2 * i + 1)? != o + rows {
            return Err(format!("register {i} does not hold two adjacent columns"));
        }
        at.push(((o % rows) as u32, (o / rows) as u32));
    }
    // Every thread's first column is a multiple of `tcol` (a power of two up to 16).
    let mut tcol = 16u32;
    for t in 0..threads {
        let c = (off(t, 0)? / rows) as u32;
        while tcol > 1 && c % tcol != 0 {
            tcol /= 2;
        }
    }
    let col_bound = mem.bounds.as_ref().map(|b| b[1].multiple_of);
    // May `width` registers starting at value column `col` move as one access?
    let fits = |width: u32, col: u32| {
        let bytes = width * per_reg * elem;
        let cols = width * per_reg;
        bytes <= 16
            && mem.align % bytes == 0
            && (pitch.multiple_of * elem) % bytes == 0
            && (tcol * elem) % bytes == 0
            && (col * elem) % bytes == 0
            && col_bound.is_none_or(|m| m % cols == 0)
    };
    let mut vrows: Vec<u32> = Vec::new();
    let mut accesses = Vec::new();
    let mut i = 0;
    while i < regs.len() {
        let (r, c) = at[i];
        let vrow = match vrows.iter().position(|&x| x == r) {
            Some(p) => p,
            None => {
                vrows.push(r);
                vrows.len() - 1
            }
        };
        // The run of registers continuing along the row.
        let mut run = 1;
        while i + run < regs.len() && at[i + run] == (r, c + per_reg * run as u32) {
            run += 1;
        }
        let width = [4usize, 2, 1]
            .into_iter()
            .find(|&w| w <= run && fits(w as u32, c))
            .unwrap_or(1);
        let halves = width == 1 && per_reg == 2 && !fits(1, c);
        accesses.push(Access {
            first: i,
            width,
            vrow,
            col: c,
            halves,
        });
        i += width;
    }
    Ok(Plan { vrows, accesses })
}

fn check(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (regs, mem, _) = sides(ctx)?;
    plan(regs, mem, ctx.scope.threads() as i64).map(|_| ())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.fragment_view",
    targets: TargetSet::all(),
    priority: 6,
    views: true,
    predicates: &[
        Predicate {
            name: "storage",
            check: |c| {
                storages(
                    c,
                    &[
                        (Storage::Local, Storage::Global),
                        (Storage::Global, Storage::Local),
                    ],
                )
            },
        },
        Predicate {
            name: "fragment",
            check,
        },
    ],
    lower,
};

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let invalid = |m: String| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, m);
    expect_copy(ctx)?;
    let (regs_t, mem, load) = sides(ctx).map_err(invalid)?;
    let p = plan(regs_t, mem, ctx.scope.threads() as i64).map_err(invalid)?;
    let (Base::Registers(regs), Base::Global(base), Some(tv), Some(pitch)) =
        (&regs_t.base, &mem.base, &regs_t.fragment, &mem.pitch)
    else {
        return Err(invalid("registers and a pitched global tile".into()));
    };
    let elem = mem.dtype.bytes();
    let rows = tv.rows() as u32;
    let thread_mode = tv
        .layout()
        .modes()
        .first()
        .cloned()
        .ok_or_else(|| invalid("empty layout".into()))?;
    let t = thread_index(k, ctx.scope)?;
    let tpart = eval_layout(k, &thread_mode, t)?;
    let (row0, col0) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
    rem_const(k, row0, tpart, rows)?;
    div_const(k, col0, tpart, rows)?;
    // One address per value row: base + ((row0 + vr) * pitch + col0) * size.
    let mut row_addr = Vec::new();
    let mut row_ok = Vec::new();
    for &vr in &p.vrows {
        let (r, idx) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.add(r, row0, vr)?;
        k.mad_lo(idx, r, pitch.value, col0)?;
        let (off, a) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
        k.mul_wide(off, idx, elem)?;
        k.add(a, *base, off)?;
        row_addr.push(a);
        if let Some([rb, _]) = &mem.bounds {
            let ok = k.pred();
            k.setp(CmpOp::Lt, ok, r, rb.value)?;
            row_ok.push(ok);
        }
    }
    // Guards: row inside and column inside, one predicate per (row, column) used.
    let mut col_ok: HashMap<u32, Pred> = HashMap::new();
    let mut guards: HashMap<(usize, u32), Pred> = HashMap::new();
    let mut guard = |k: &mut FunctionBuilder, vrow: usize, col: u32| -> Result<Option<Pred>> {
        let Some([_, cb]) = &mem.bounds else {
            return Ok(None);
        };
        if let Some(g) = guards.get(&(vrow, col)) {
            return Ok(Some(*g));
        }
        let c = match col_ok.get(&col) {
            Some(c) => *c,
            None => {
                let (cc, ok) = (k.reg::<ty::U32>(), k.pred());
                k.add(cc, col0, col)?;
                k.setp(CmpOp::Lt, ok, cc, cb.value)?;
                col_ok.insert(col, ok);
                ok
            }
        };
        let g = k.pred();
        k.and(g, row_ok[vrow], c)?;
        guards.insert((vrow, col), g);
        Ok(Some(g))
    };
    for a in &p.accesses {
        let group = &regs[a.first..a.first + a.width];
        let at = |extra: u32| {
            Addr::<ptx_isa::spaces::Global>::reg(row_addr[a.vrow])
                .offset(((a.col + extra) * elem) as i64)
        };
        if a.halves {
            // A packed pair whose word is misaligned or may straddle the bound: two halves.
            let (lo, hi) = (k.reg::<ty::B16>(), k.reg::<ty::B16>());
            let word = ptx_isa::Reg::<ty::B32>::from_index(group[0].index);
            let whole = ptx_isa::Reg::<ty::Bf16x2>::from_index(group[0].index);
            if !load {
                if group[0].class == RegClass::H32 {
                    k.mov_unpack(&[lo, hi], whole)?;
                } else {
                    k.mov_unpack(&[lo, hi], word)?;
                }
            }
            for (e, h) in [(0u32, lo), (1, hi)] {
                let g = guard(k, a.vrow, a.col + e)?;
                if load && g.is_some() {
                    k.mov(h, Src::Imm(Imm::UInt(0)))?;
                }
                if let Some(g) = g {
                    k.when(g);
                }
                if load {
                    k.ld(h, at(e))?;
                } else {
                    k.st(at(e), h)?;
                }
            }
            if load {
                if group[0].class == RegClass::H32 {
                    k.mov_pack(whole, &[lo, hi])?;
                } else {
                    k.mov_pack(word, &[lo, hi])?;
                }
            }
            continue;
        }
        let g = guard(k, a.vrow, a.col)?;
        if load && g.is_some() {
            zero(k, group)?;
        }
        if let Some(g) = g {
            k.when(g);
        }
        access(k, group, MemAddr::Global(at(0)), load)?;
    }
    Ok(())
}

/// Sets the registers to zero (what a guarded load leaves outside the bounds).
fn zero(k: &mut FunctionBuilder, regs: &[RegRef]) -> Result<()> {
    for r in regs {
        let zero = Imm::UInt(0);
        match r.class {
            RegClass::F32 => k.mov(ptx_isa::Reg::<ty::F32>::from_index(r.index), 0.0f32)?,
            RegClass::H32 => k.mov(
                ptx_isa::Reg::<ty::Bf16x2>::from_index(r.index),
                Src::Imm(zero),
            )?,
            RegClass::B32 => k.mov(ptx_isa::Reg::<ty::B32>::from_index(r.index), Src::Imm(zero))?,
            RegClass::H16 => k.mov(
                ptx_isa::Reg::<ty::Bf16>::from_index(r.index),
                Src::Imm(zero),
            )?,
            RegClass::B16 => k.mov(ptx_isa::Reg::<ty::B16>::from_index(r.index), Src::Imm(zero))?,
            _ => {
                return Err(ptx_isa::Error::new(
                    ptx_isa::ErrorKind::OperandKind,
                    format!("cannot zero a {:?} register", r.class),
                ));
            }
        }
    }
    Ok(())
}

/// One `ld`/`st` (vector when more than one register) of registers of one class, each used
/// through its own class (only the bit width matters to ld/st).
pub(super) fn access(
    k: &mut FunctionBuilder,
    regs: &[RegRef],
    a: MemAddr,
    load: bool,
) -> Result<()> {
    macro_rules! go {
        ($t:ty) => {{
            let r: Vec<ptx_isa::Reg<$t>> = regs
                .iter()
                .map(|x| ptx_isa::Reg::<$t>::from_index(x.index))
                .collect();
            match (a, load) {
                (MemAddr::Global(a), true) => k.ld_v(&r, a),
                (MemAddr::Shared(a), true) => k.ld_v(&r, a),
                (MemAddr::Global(a), false) => k.st_v(a, &r),
                (MemAddr::Shared(a), false) => k.st_v(a, &r),
            }
        }};
    }
    match regs.first().map(|r| r.class) {
        Some(RegClass::F32) => go!(ty::F32),
        Some(RegClass::H32) => go!(ty::Bf16x2),
        Some(RegClass::B32) => go!(ty::B32),
        Some(RegClass::H16) => go!(ty::Bf16),
        Some(RegClass::B16) => go!(ty::B16),
        other => Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::OperandKind,
            format!("cannot move {other:?} registers"),
        )),
    }
}
