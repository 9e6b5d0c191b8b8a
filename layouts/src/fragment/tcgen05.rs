//! Blackwell `tcgen05` layouts: the `tcgen05.ld` / `tcgen05.st` atoms as thread-value layouts,
//! and the MMA data-path layouts of the accumulator in tensor memory as tile layouts on
//! `TLane` / `TCol`.
//!
//! Atoms (PTX ISA 9.7.16.8 "tcgen05.ld / tcgen05.st", the matrix-fragment figures for each
//! `.shape`): one warp moves a `lanes × columns` block of 32-bit cells of its 32-lane slab;
//! register `r` of lane `l` holds
//! * `.32x32b.xN`: (lane `l`, column `r`), a 32×N block;
//! * `.16x64b.xN`: (lane `l/4 + 8*(l%2)`, column `(l/2)%2 + 2r`), a 16×2N block;
//! * `.16x128b.xN`: (lane `l/4 + 8*(r%2)`, column `l%4 + 4*(r/2)`), a 16×4N block;
//! * `.16x256b.xN`: (lane `l/4 + 8*((r/2)%2)`, column `r%2 + 2*(l%4) + 8*(r/4)`), a 16×8N block.
//!
//! Data paths (PTX ISA 9.7.16.10.5 "Data path layout organization"): where row `i`, column `j`
//! of the `M × N` accumulator of `tcgen05.mma` lies in this CTA's tensor memory.

use super::{FragmentError, TvLayout};
use crate::tile::{Axis, Iter, TileLayout};

/// The `.shape` of a `tcgen05.ld` / `tcgen05.st`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LdShape {
    /// `.32x32b`: 32 lanes of 32 bits.
    B32x32,
    /// `.16x64b`: 16 lanes of 64 bits.
    B16x64,
    /// `.16x128b`: 16 lanes of 128 bits.
    B16x128,
    /// `.16x256b`: 16 lanes of 256 bits.
    B16x256,
}

impl LdShape {
    /// Every shape, the widest first (the order a dispatch tries them in).
    pub const ALL: [LdShape; 4] = [
        LdShape::B16x256,
        LdShape::B16x128,
        LdShape::B16x64,
        LdShape::B32x32,
    ];

    /// The PTX spelling, e.g. `.16x64b`.
    pub const fn ptx(self) -> &'static str {
        match self {
            LdShape::B32x32 => ".32x32b",
            LdShape::B16x64 => ".16x64b",
            LdShape::B16x128 => ".16x128b",
            LdShape::B16x256 => ".16x256b",
        }
    }

    /// Lanes covered by one instruction.
    pub const fn lanes(self) -> i64 {
        match self {
            LdShape::B32x32 => 32,
            _ => 16,
        }
    }

    /// 32-bit columns per repetition.
    pub const fn columns(self) -> i64 {
        match self {
            LdShape::B32x32 => 1,
            LdShape::B16x64 => 2,
            LdShape::B16x128 => 4,
            LdShape::B16x256 => 8,
        }
    }

    /// Registers per thread per repetition.
    pub const fn registers(self) -> i64 {
        self.lanes() * self.columns() / 32
    }
}

/// The warp's atom of `tcgen05.{ld,st}.sync.aligned{shape}.x{num}.b32`: 32 threads ×
/// `registers * num` values over a `lanes × (columns * num)` block of 32-bit cells (rows are
/// lanes relative to the instruction's lane base).
///
/// `num` is a power of two from 1 with at most 128 registers per thread.
pub fn atom(shape: LdShape, num: i64) -> Result<TvLayout, FragmentError> {
    let regs = shape.registers() * num;
    if num < 1 || num.count_ones() != 1 || regs > 128 {
        return Err(FragmentError::Unsupported {
            instruction: "tcgen05.ld",
            message: format!(
                "{}.x{num}: num is a power of two with at most 128 registers",
                shape.ptx()
            ),
        });
    }
    let rows = shape.lanes();
    let cols = shape.columns() * num;
    let name = format!("tcgen05{}.x{num}", shape.ptx());
    // offset = lane + rows * column, lane l = l0 + ... as in the module doc.
    match shape {
        LdShape::B32x32 => TvLayout::from_modes(name, rows, cols, &[(32, 1)], &[(num, 32)]),
        // l = l0 + 2 l1 + 4 l2: lane l2 + 8 l0, column l1 + 2 r.
        LdShape::B16x64 => {
            TvLayout::from_modes(name, rows, cols, &[(2, 8), (2, 16), (8, 1)], &[(num, 32)])
        }
        // l = l0 + 4 l1, r = r0 + 2 r1: lane l1 + 8 r0, column l0 + 4 r1.
        LdShape::B16x128 => {
            TvLayout::from_modes(name, rows, cols, &[(4, 16), (8, 1)], &[(2, 8), (num, 64)])
        }
        // r = r0 + 2 r1 + 4 r2: lane l1 + 8 r1, column r0 + 2 l0 + 8 r2.
        LdShape::B16x256 => TvLayout::from_modes(
            name,
            rows,
            cols,
            &[(4, 32), (8, 1)],
            &[(2, 16), (2, 8), (num, 128)],
        ),
    }
}

/// The warpgroup's view of an atom issued by its four warps, warp `w` on its TMEM lane slab
/// `32w..32w+32` (PTX ISA 9.7.16.8: warp `w % 4` of a warpgroup accesses lanes `32(w%4)` to
/// `32(w%4)+31`): 128 threads over `128 × cols` for `.32x32b`; a 16-lane shape is issued at lane
/// bases 0 and 16 of each slab, the second issue's registers following the first's, giving
/// `128 × cols` as well.
pub fn warpgroup_atom(shape: LdShape, num: i64) -> Result<TvLayout, FragmentError> {
    let warp = atom(shape, num)?;
    let cols = warp.cols();
    let rows = 128;
    // Re-express the warp atom's offsets (lane + lanes * col) in the 128-row tile.
    let lanes = shape.lanes();
    let remap = |(e, d): (i64, i64)| -> Vec<(i64, i64)> {
        // A stride in the warp tile moves lanes (d < lanes) or columns (multiples of lanes).
        if d % lanes == 0 {
            vec![(e, d / lanes * rows)]
        } else {
            vec![(e, d)]
        }
    };
    let (tmodes, vmodes) = match (warp.layout().mode(0), warp.layout().mode(1)) {
        (Some(t), Some(v)) => (t.flat_modes(), v.flat_modes()),
        _ => return Err(FragmentError::Malformed(format!("{warp} is not rank 2"))),
    };
    let mut threads: Vec<(i64, i64)> = tmodes.into_iter().flat_map(remap).collect();
    threads.push((4, 32));
    let mut values: Vec<(i64, i64)> = vmodes.into_iter().flat_map(remap).collect();
    if lanes == 16 {
        values.push((2, 16));
    }
    TvLayout::from_modes(
        format!("{} warpgroup", warp.name()),
        rows,
        cols,
        &threads,
        &values,
    )
}

/// The data-path layouts of a `tcgen05.mma` accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Datapath {
    /// Layout A: M = 256, `cta_group::2`; each CTA holds 128 rows, row `i` in lane `i`.
    A,
    /// Layout B: M = 128, `cta_group::2`, dense; each CTA holds 64 rows, the columns' halves
    /// folded onto the two 64-lane halves: (i, j) at lane `i + 64 * (j / (N/2))`, column
    /// `j % (N/2)`.
    B,
    /// Layout D: M = 128, `cta_group::1`; row `i` in lane `i`.
    D,
    /// Layout F: M = 64, `cta_group::1`; rows scattered 16 per warp slab: row `i` in lane
    /// `32 * (i / 16) + i % 16`.
    F,
}

/// The per-CTA tile layout of an `rows × cols` accumulator in tensor memory for `datapath`,
/// on the axes `TLane` and `TCol` (32-bit columns).
///
/// * `@pre` `rows` is 128 for A and D, 64 for B and F; `cols >= 1`, even for B
///
/// ```
/// use layouts::fragment::tcgen05::{datapath, Datapath};
/// assert_eq!(datapath(Datapath::D, 128, 64)?.to_string(), "S[(128, 64):(1@TLane, 1@TCol)]");
/// assert_eq!(
///     datapath(Datapath::F, 64, 32)?.to_string(),
///     "S[((4, 16), 32):((32@TLane, 1@TLane), 1@TCol)]"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn datapath(path: Datapath, rows: i64, cols: i64) -> Result<TileLayout, FragmentError> {
    let want = match path {
        Datapath::A | Datapath::D => 128,
        Datapath::B | Datapath::F => 64,
    };
    if rows != want || cols < 1 || (path == Datapath::B && cols % 2 != 0) {
        return Err(FragmentError::Unsupported {
            instruction: "tcgen05.mma",
            message: format!(
                "data path {path:?} holds {want} rows per CTA (even columns for B), not {rows}x{cols}"
            ),
        });
    }
    let lane = |e, s| Iter::new(e, s, Axis::TLane);
    let col = |e, s| Iter::new(e, s, Axis::TCol);
    let dims = match path {
        Datapath::A | Datapath::D => vec![vec![lane(128, 1)], vec![col(cols, 1)]],
        Datapath::B => vec![vec![lane(64, 1)], vec![lane(2, 64), col(cols / 2, 1)]],
        Datapath::F => vec![vec![lane(4, 32), lane(16, 1)], vec![col(cols, 1)]],
    };
    TileLayout::new(dims, Vec::new(), []).map_err(|e| FragmentError::Malformed(e.to_string()))
}

/// Why no `tcgen05.ld/st` atom matched a register layout: every shape with the reason it
/// declined, widest first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no tcgen05.ld/st atom matches {layout}: {}", .declined.iter().map(|(s, why)| format!("{} ({why})", s.ptx())).collect::<Vec<_>>().join("; "))]
pub struct AtomMiss {
    /// The register layout that was matched.
    pub layout: String,
    /// Each shape tried and why it declined.
    pub declined: Vec<(LdShape, String)>,
}

/// The widest warpgroup atom (`.16x256b` first, `.32x32b` last) whose thread-value layout is
/// `regs`, a 128-thread register layout over a `128 × cols` tile of 32-bit cells; returns the
/// shape and its `.num`.
///
/// ```
/// use layouts::fragment::tcgen05::{match_warpgroup_atom, LdShape};
/// use layouts::tile::{Axis, TileLayout};
/// let regs: TileLayout = "S[(128, 8):(1@tid_in_wg, 1)]".parse()?;
/// let tv = regs.thread_value(Axis::TidInWg)?;
/// assert_eq!(match_warpgroup_atom(&tv)?, (LdShape::B32x32, 8));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn match_warpgroup_atom(regs: &TvLayout) -> Result<(LdShape, i64), AtomMiss> {
    let mut declined = Vec::new();
    for shape in LdShape::ALL {
        let cols = regs.cols();
        if cols % shape.columns() != 0 {
            declined.push((
                shape,
                format!("{cols} columns are not a multiple of {}", shape.columns()),
            ));
            continue;
        }
        let num = cols / shape.columns();
        match warpgroup_atom(shape, num) {
            Err(e) => declined.push((shape, e.to_string())),
            Ok(atom) => match atom.compare(regs) {
                Ok(()) => return Ok((shape, num)),
                Err(m) => declined.push((shape, m.to_string())),
            },
        }
    }
    Err(AtomMiss {
        layout: regs.to_string(),
        declined,
    })
}
