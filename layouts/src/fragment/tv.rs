//! `TvLayout`: (thread, value) -> (row, col), and its comparison.

use std::fmt;

use crate::layout::Layout;
use crate::shape::IntTuple;

/// The operand of a matrix instruction a fragment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The `M × K` multiplicand.
    A,
    /// The `K × N` multiplicand.
    B,
    /// The `M × N` accumulator (C and D share one layout).
    C,
}

/// Why a fragment could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FragmentError {
    /// The instruction has no such shape, type or repetition count.
    #[error("{instruction}: {message}")]
    Unsupported {
        /// The instruction.
        instruction: &'static str,
        /// What is not supported.
        message: String,
    },
    /// A thread-value layout must be rank 2 with every offset inside the tile.
    #[error("{0}")]
    Malformed(String),
    /// A (thread, value) pair outside the layout.
    #[error("(thread {thread}, value {value}) is outside {threads} threads x {values} values")]
    OutOfRange {
        /// The thread.
        thread: i64,
        /// The value.
        value: i64,
        /// Threads of the layout.
        threads: i64,
        /// Values per thread.
        values: i64,
    },
}

/// The first difference between two thread-value layouts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TvMismatch {
    /// Different tiles, thread counts or value counts.
    #[error("{what} differ: {left} vs {right}")]
    Extent {
        /// Which extent.
        what: &'static str,
        /// This layout's.
        left: String,
        /// The other's.
        right: String,
    },
    /// A (thread, value) pair maps to different elements.
    #[error(
        "thread {thread} value {value}: {name} holds (row, col) {left:?}, the other layout {right:?}"
    )]
    Element {
        /// The layout compared against.
        name: String,
        /// The thread.
        thread: i64,
        /// The value.
        value: i64,
        /// The element in this layout.
        left: (i64, i64),
        /// The element in the other.
        right: (i64, i64),
    },
}

/// A thread-value layout over a `rows × cols` tile: `layout(t, v) = row + rows * col`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TvLayout {
    name: String,
    rows: i64,
    cols: i64,
    layout: Layout,
    /// The layout's leaves `(extent, stride)`, colexicographic: `offset` walks these instead of
    /// the nested tuple (lowerings evaluate it for every thread and value).
    flat: Vec<(i64, i64)>,
    threads: i64,
    values: i64,
}

impl TvLayout {
    /// A thread-value layout; errors unless `layout` has rank 2 and maps into the tile.
    pub fn new(
        name: impl Into<String>,
        rows: i64,
        cols: i64,
        layout: Layout,
    ) -> Result<TvLayout, FragmentError> {
        if layout.rank() != 2 {
            return Err(FragmentError::Malformed(format!(
                "a (thread, value) layout needs rank 2, got {layout}"
            )));
        }
        let cells = rows.checked_mul(cols).filter(|&c| c < crate::LIMIT);
        if rows < 1
            || cols < 1
            || cells.is_none_or(|c| layout.cosize() > c)
            || layout.flat_modes().iter().any(|&(_, d)| d < 0)
        {
            return Err(FragmentError::Malformed(format!(
                "{layout} does not map into a {rows}x{cols} tile"
            )));
        }
        let flat = layout.flat_modes();
        let mode = |i: usize| layout.shape().modes().get(i).map_or(1, |m| m.product());
        let (threads, values) = (mode(0), mode(1));
        Ok(TvLayout {
            name: name.into(),
            rows,
            cols,
            layout,
            flat,
            threads,
            values,
        })
    }

    /// Builds the layout from thread and value modes given as flat (extent, stride) lists.
    pub(crate) fn from_modes(
        name: impl Into<String>,
        rows: i64,
        cols: i64,
        threads: &[(i64, i64)],
        values: &[(i64, i64)],
    ) -> Result<TvLayout, FragmentError> {
        // Extent-1 modes (e.g. one column block of an N = 8 accumulator) are left out.
        let mode = |m: &[(i64, i64)]| {
            let kept: Vec<(i64, i64)> = m.iter().copied().filter(|&(e, _)| e > 1).collect();
            let m: &[(i64, i64)] = if kept.is_empty() { &[(1, 0)] } else { &kept };
            (
                IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(x.0)).collect()).unwrap_single(),
                IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(x.1)).collect()).unwrap_single(),
            )
        };
        let (ts, td) = mode(threads);
        let (vs, vd) = mode(values);
        let layout = Layout::new(IntTuple::tuple([ts, vs]), IntTuple::tuple([td, vd]))
            .map_err(|e| FragmentError::Malformed(e.to_string()))?;
        TvLayout::new(name, rows, cols, layout)
    }

    /// A name for messages (the instruction and operand).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Tile rows.
    pub fn rows(&self) -> i64 {
        self.rows
    }

    /// Tile columns.
    pub fn cols(&self) -> i64 {
        self.cols
    }

    /// The CuTe layout `(thread, value) -> row + rows * col`.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The number of threads.
    pub fn threads(&self) -> i64 {
        self.threads
    }

    /// The number of values per thread.
    pub fn values(&self) -> i64 {
        self.values
    }

    /// The element offset `row + rows * col` held by `thread` in value `value`.
    pub fn offset(&self, thread: i64, value: i64) -> Result<i64, FragmentError> {
        let (threads, values) = (self.threads(), self.values());
        if !(0..threads).contains(&thread) || !(0..values).contains(&value) {
            return Err(FragmentError::OutOfRange {
                thread,
                value,
                threads,
                values,
            });
        }
        let mut idx = thread + threads * value;
        let mut offset = 0;
        for &(extent, stride) in &self.flat {
            offset += idx % extent * stride;
            idx /= extent;
        }
        Ok(offset)
    }

    /// The `(row, col)` held by `thread` in value `value`.
    pub fn coord(&self, thread: i64, value: i64) -> Result<(i64, i64), FragmentError> {
        let o = self.offset(thread, value)?;
        Ok((o % self.rows, o / self.rows))
    }

    /// True when every element of the tile is held exactly once.
    pub fn is_bijective(&self) -> bool {
        let mut seen = vec![false; (self.rows * self.cols) as usize];
        for o in self.layout.values() {
            match seen.get_mut(o as usize) {
                Some(s) if !*s => *s = true,
                _ => return false,
            }
        }
        seen.iter().all(|&s| s)
    }

    /// The same fragment over the transposed `cols × rows` tile: `(thread, value)` holds
    /// `(col, row)` where `self` holds `(row, col)` (a swapped-operand GEMM's accumulator, whose
    /// rows are C's columns). The layout is `T ∘ self` with `T = (rows, cols):(cols, 1)`, which
    /// sends `row + rows·col` to `col + cols·row`.
    ///
    /// `@post` for every thread `t` and value `v`: `transposed.coord(t, v) == (c, r)` where
    /// `self.coord(t, v) == (r, c)`.
    pub fn transposed(&self) -> Result<TvLayout, FragmentError> {
        let swap = Layout::new(
            IntTuple::tuple([IntTuple::Int(self.rows), IntTuple::Int(self.cols)]),
            IntTuple::tuple([IntTuple::Int(self.cols), IntTuple::Int(1)]),
        )
        .and_then(|t| crate::composition(&t, &self.layout))
        .map_err(|e| FragmentError::Malformed(e.to_string()))?;
        TvLayout::new(
            format!("{} transposed", self.name),
            self.cols,
            self.rows,
            swap,
        )
    }

    /// Compares two layouts as functions: same tile, same thread and value counts, and every
    /// (thread, value) on the same element. The error names the first difference.
    pub fn compare(&self, other: &TvLayout) -> Result<(), TvMismatch> {
        let ext = |what, l: String, r: String| {
            Err(TvMismatch::Extent {
                what,
                left: l,
                right: r,
            })
        };
        if (self.rows, self.cols) != (other.rows, other.cols) {
            return ext(
                "tiles",
                format!("{}x{}", self.rows, self.cols),
                format!("{}x{}", other.rows, other.cols),
            );
        }
        if self.threads() != other.threads() {
            return ext(
                "thread counts",
                self.threads().to_string(),
                other.threads().to_string(),
            );
        }
        if self.values() != other.values() {
            return ext(
                "value counts",
                self.values().to_string(),
                other.values().to_string(),
            );
        }
        // Structurally equal layouts are equal functions: skip the enumeration (a lowering asks
        // this once per op, and an m64n256 accumulator has 16384 cells).
        if self.layout == other.layout {
            return Ok(());
        }
        let t = self.threads();
        for v in 0..self.values() {
            for th in 0..t {
                let (a, b) = (self.layout.call(th + t * v), other.layout.call(th + t * v));
                if a != b {
                    return Err(TvMismatch::Element {
                        name: self.name.clone(),
                        thread: th,
                        value: v,
                        left: (a % self.rows, a / self.rows),
                        right: (b % other.rows, b / other.rows),
                    });
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for TvLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}x{}: {}",
            self.name, self.rows, self.cols, self.layout
        )
    }
}
