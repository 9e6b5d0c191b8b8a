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
use ptx_isa::{Addr, FunctionBuilder, Imm, Pred, Reg, RegClass, Result, Src, TargetSet, ty};

use super::common::{
    DivPart, MemAddr, Regs, div_const, eval_layout, fragment_tiles, register_side, storage,
    thread_mode,
};
use super::common::{pair, thread_index};
use crate::tile::op::{OpCtx, OpKind};
use crate::tile::operand::{Base, ExecScope, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// A packed pair register moved as two 16-bit halves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Packed {
    /// A `%hh` pair.
    Pair(Reg<ty::Bf16x2>),
    /// A `.b32 %r` word.
    Word(Reg<ty::B32>),
}

/// One load or store at value row `vrow` (an index into [`ViewCopy::vrows`]) and value column
/// `col`: registers as one (vector) access, or one packed register as two 16-bit halves.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Move {
    Whole { regs: Regs, vrow: usize, col: u32 },
    Halves { word: Packed, vrow: usize, col: u32 },
}

/// The copy, decided on the host.
#[derive(Debug)]
struct ViewCopy {
    /// The distinct value rows (row offsets from the thread's first row).
    vrows: Vec<u32>,
    moves: Vec<Move>,
    load: bool,
    scope: ExecScope,
    /// The thread mode of the register layout, evaluated at run time.
    thread_mode: layouts::Layout,
    /// Rows of the register tile.
    rows: u32,
    /// Bytes per element.
    elem: u32,
    base: Reg<ty::U64>,
    pitch: Src<ty::U32>,
    /// The row and column bounds.
    bounds: Option<[Src<ty::U32>; 2]>,
}

fn fragment<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, s) = pair(ctx)?;
    let (regs, mem, load) = register_side(d, s);
    Ok(Box::new(plan(regs, mem, load, ctx.scope)?))
}

fn plan(
    regs_t: &TileRef,
    mem: &TileRef,
    load: bool,
    scope: ExecScope,
) -> std::result::Result<ViewCopy, Rejection> {
    let threads = scope.threads() as i64;
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let tv = regs_t.fragment.as_ref().ok_or_else(|| {
        Rejection::operand(
            Aspect::Fragment,
            "the register tile has no thread-value layout",
        )
    })?;
    let Base::Registers(regs) = &regs_t.base else {
        return Err(Rejection::operand(
            Aspect::Registers,
            "the register tile has no registers",
        ));
    };
    let Base::Global(base) = mem.base else {
        return Err(Rejection::operand(
            Aspect::Base,
            "the memory tile has no global address",
        ));
    };
    let pitch = mem.pitch.as_ref().ok_or_else(|| {
        Rejection::operand(
            Aspect::Layout,
            "the memory tile has no run-time pitch (copy.fragment takes static layouts)",
        )
    })?;
    fragment_tiles(regs_t, mem)?;
    let elem = mem.dtype.bytes();
    if mem.align % elem != 0 {
        return Err(Rejection::operand(
            Aspect::Base,
            format!(
                "the base is aligned to {} bytes, less than an element",
                mem.align
            ),
        ));
    }
    let typed = Regs::of(regs)?;
    let class = regs[0].class;
    let bits = class.decl_type().bits();
    let per_reg = bits / mem.dtype.bits();
    if !matches!((mem.dtype.bits(), bits), (32, 32) | (16, 16) | (16, 32)) {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!("{bits}-bit registers for {} elements", mem.dtype),
        ));
    }
    if per_reg == 2 && !matches!(class, RegClass::H32 | RegClass::B32) {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!("packed 16-bit pairs in {class:?} registers: need %hh or .b32 %r"),
        ));
    }
    if regs.len() as i64 * per_reg as i64 != tv.values() {
        return Err(frag(format!(
            "{} registers of {per_reg} element(s) for {} values per thread",
            regs.len(),
            tv.values()
        )));
    }
    if tv.threads() != threads {
        return Err(frag(format!(
            "the layout spreads over {} threads, the scope has {threads}",
            tv.threads()
        )));
    }
    super::copy_stmatrix_frag::separable(tv)?;
    let rows = tv.rows();
    let off = |t: i64, v: i64| tv.offset(t, v).map_err(|e| frag(e.to_string()));
    // Where each register's first element sits; a packed pair's second is the next column.
    let mut at = Vec::with_capacity(regs.len());
    for i in 0..regs.len() as i64 {
        let o = off(0, per_reg as i64 * i)?;
        if per_reg == 2 && off(0, 2 * i + 1)? != o + rows {
            return Err(frag(format!(
                "register {i} does not hold two adjacent columns"
            )));
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
    let mut moves = Vec::new();
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
        // A packed pair whose word is misaligned or may straddle the bound: two halves.
        let word = match (&typed, halves) {
            (Regs::Pairs(p), true) => Some(Packed::Pair(p[i])),
            (Regs::B32(w), true) => Some(Packed::Word(w[i])),
            _ => None,
        };
        moves.push(match word {
            Some(word) => Move::Halves { word, vrow, col: c },
            None => Move::Whole {
                regs: typed.range(i..i + width),
                vrow,
                col: c,
            },
        });
        i += width;
    }
    let thread_mode = thread_mode(tv)?;
    Ok(ViewCopy {
        vrows,
        moves,
        load,
        scope,
        thread_mode,
        rows: rows as u32,
        elem,
        base,
        pitch: pitch.value,
        bounds: mem.bounds.as_ref().map(|[r, c]| [r.value, c.value]),
    })
}

/// Register tiles to or from global memory.
/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::Copy,
    name: "copy.fragment_view",
    targets: TargetSet::all(),
    priority: 6,
    views: true,
    predicates: &[storage!(Global -> Local, Local -> Global)],
    planner: Planner {
        name: "fragment",
        plan: fragment,
    },
};

impl Plan for ViewCopy {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let (elem, load) = (self.elem, self.load);
        let t = thread_index(k, self.scope)?;
        let tpart = eval_layout(k, &self.thread_mode, t)?;
        let (row0, col0) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        div_const(k, DivPart::Remainder, row0, tpart, self.rows)?;
        div_const(k, DivPart::Quotient, col0, tpart, self.rows)?;
        // One address per value row: base + ((row0 + vr) * pitch + col0) * size.
        let mut row_addr = Vec::new();
        let mut row_ok = Vec::new();
        for &vr in &self.vrows {
            let (r, idx) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
            k.add(r, row0, vr)?;
            k.mad_lo(idx, r, self.pitch, col0)?;
            let (off, a) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
            k.mul_wide(off, idx, elem)?;
            k.add(a, self.base, off)?;
            row_addr.push(a);
            if let Some([rb, _]) = self.bounds {
                let ok = k.pred();
                k.setp(CmpOp::Lt, ok, r, rb)?;
                row_ok.push(ok);
            }
        }
        // Guards: row inside and column inside, one predicate per (row, column) used.
        let mut col_ok: HashMap<u32, Pred> = HashMap::new();
        let mut guards: HashMap<(usize, u32), Pred> = HashMap::new();
        let mut guard = |k: &mut FunctionBuilder, vrow: usize, col: u32| -> Result<Option<Pred>> {
            let Some([_, cb]) = self.bounds else {
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
                    k.setp(CmpOp::Lt, ok, cc, cb)?;
                    col_ok.insert(col, ok);
                    ok
                }
            };
            let g = k.pred();
            k.and(g, row_ok[vrow], c)?;
            guards.insert((vrow, col), g);
            Ok(Some(g))
        };
        let at = |vrow: usize, col: u32| {
            Addr::<ptx_isa::spaces::Global>::reg(row_addr[vrow]).offset((col * elem) as i64)
        };
        for m in &self.moves {
            match m {
                Move::Halves { word, vrow, col } => {
                    let (vrow, col) = (*vrow, *col);
                    let (lo, hi) = (k.reg::<ty::B16>(), k.reg::<ty::B16>());
                    if !load {
                        match *word {
                            Packed::Pair(w) => k.mov_unpack(&[lo, hi], w)?,
                            Packed::Word(w) => k.mov_unpack(&[lo, hi], w)?,
                        }
                    }
                    for (e, h) in [(0u32, lo), (1, hi)] {
                        let g = guard(k, vrow, col + e)?;
                        if load && g.is_some() {
                            k.mov(h, Src::Imm(Imm::UInt(0)))?;
                        }
                        if let Some(g) = g {
                            k.when(g);
                        }
                        if load {
                            k.ld(h, at(vrow, col + e))?;
                        } else {
                            k.st(at(vrow, col + e), h)?;
                        }
                    }
                    if load {
                        match *word {
                            Packed::Pair(w) => k.mov_pack(w, &[lo, hi])?,
                            Packed::Word(w) => k.mov_pack(w, &[lo, hi])?,
                        }
                    }
                }
                Move::Whole { regs, vrow, col } => {
                    let g = guard(k, *vrow, *col)?;
                    if load && g.is_some() {
                        regs.zero(k)?;
                    }
                    if let Some(g) = g {
                        k.when(g);
                    }
                    regs.access(k, MemAddr::Global(at(*vrow, *col)), load)?;
                }
            }
        }
        Ok(())
    }
}
