//! Conversion between tile layouts and CuTe layouts, and the thread-value view.

use super::{Axis, Iter, TileError, TileLayout};
use crate::fragment::TvLayout;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// The CuTe mode of one dimension: its iterators reversed (CuTe is colexicographic, the
/// dimension's coordinate splits row-major), with `stride` picking each iterator's stride.
fn mode(iters: &[Iter], stride: impl Fn(&Iter) -> i64) -> (IntTuple, IntTuple) {
    if iters.len() == 1 {
        return (
            IntTuple::Int(iters[0].extent),
            IntTuple::Int(stride(&iters[0])),
        );
    }
    let rev: Vec<&Iter> = iters.iter().rev().collect();
    (
        IntTuple::Tuple(rev.iter().map(|i| IntTuple::Int(i.extent)).collect()),
        IntTuple::Tuple(rev.iter().map(|i| IntTuple::Int(stride(i))).collect()),
    )
}

/// One mode per dimension; a single integral mode is the layout itself, but a single tuple mode
/// stays wrapped (`((2,4)):((4,1))`) so that it reads back as one dimension.
fn from_modes(modes: Vec<(IntTuple, IntTuple)>) -> Result<Layout, TileError> {
    let (s, d): (Vec<_>, Vec<_>) = modes.into_iter().unzip();
    if s.len() == 1 && s[0].is_int() {
        return Ok(Layout::new(
            IntTuple::Tuple(s).unwrap_single(),
            IntTuple::Tuple(d).unwrap_single(),
        )?);
    }
    Ok(Layout::new(IntTuple::Tuple(s), IntTuple::Tuple(d))?)
}

impl TileLayout {
    /// The CuTe layout of a layout on `m` alone: mode `d` is dimension `d`.
    ///
    /// * `@pre` every iterator is on `m`, no replica, no offset ([`TileError::NotCute`])
    /// * `@post result(x) == self.apply(x)[0].get(Axis::M)` for every coordinate `x`
    ///
    /// ```
    /// use layouts::tile::TileLayout;
    /// let l: TileLayout = "S[((2, 4), 8):((1, 16), 2)]".parse()?;
    /// assert_eq!(l.to_cute()?.to_string(), "((4,2),8):((16,1),2)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_cute(&self) -> Result<Layout, TileError> {
        if let Some(it) = self.dims.iter().flatten().find(|i| i.axis != Axis::M) {
            return Err(TileError::NotCute(format!(
                "iterator on axis {} (project with to_cute_axis)",
                it.axis
            )));
        }
        if !self.replica.is_empty() || !self.offset.is_empty() {
            return Err(TileError::NotCute(
                "replicated or offset layouts are not CuTe layouts".into(),
            ));
        }
        self.to_cute_axis(Axis::M)
    }

    /// The projection on one axis as a CuTe layout: iterators on other axes get stride 0
    /// (replicas and offsets are ignored).
    pub fn to_cute_axis(&self, axis: Axis) -> Result<Layout, TileError> {
        from_modes(
            self.dims
                .iter()
                .map(|d| mode(d, |i| if i.axis == axis { i.stride } else { 0 }))
                .collect(),
        )
    }

    /// The tile layout of a CuTe layout on `axis`: top-level mode `d` becomes dimension `d`,
    /// its leaves (flattened) the iterators, reversed to row-major order.
    ///
    /// * `@post result.to_cute_axis(axis)` has the values of `layout` at every coordinate
    ///
    /// ```
    /// use layouts::{tile::{Axis, TileLayout}, Layout};
    /// let l: Layout = "(4,8):(1,4)".parse()?;
    /// assert_eq!(TileLayout::from_cute(&l, Axis::M)?.to_string(), "S[(4, 8):(1, 4)]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_cute(layout: &Layout, axis: Axis) -> Result<TileLayout, TileError> {
        let dims = layout
            .modes()
            .iter()
            .map(|m| {
                m.flat_modes()
                    .into_iter()
                    .rev()
                    .map(|(e, s)| Iter::new(e, s, axis))
                    .collect()
            })
            .collect();
        TileLayout::new(dims, Vec::new(), [])
    }

    /// The thread-value view of a register layout over a `rows × cols` tile: `(thread, value)
    /// -> row + rows * col`, with `thread` the value on `thread_axis` and `value` the register
    /// index (axis `m`). This is what a lowering compares against a hardware fragment
    /// ([`TvLayout::compare`]).
    ///
    /// * `@pre` a rank-2 layout, no replica, offsets only on the thread axis or `m` being zero
    /// * `@pre` every iterator is on `thread_axis` or `m`, and each axis's iterators, sorted by
    ///   stride, form a compact range (stride 1, then each the span of the previous)
    ///   ([`TileError::NotThreadValue`])
    ///
    /// ```
    /// use layouts::{fragment::tcgen05::{self, LdShape}, tile::{Axis, TileLayout}};
    /// let regs: TileLayout = "S[(32, 8):(1@laneid, 1)]".parse()?;
    /// let tv = regs.thread_value(Axis::LaneId)?;
    /// tcgen05::atom(LdShape::B32x32, 8)?.compare(&tv)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn thread_value(&self, thread_axis: Axis) -> Result<TvLayout, TileError> {
        let bad = |m: String| TileError::NotThreadValue(m);
        if self.dims.len() != 2 {
            return Err(bad(format!(
                "needs a rank-2 tile, this one has rank {}",
                self.dims.len()
            )));
        }
        if !self.replica.is_empty() || !self.offset.is_empty() {
            return Err(bad(
                "replicated or offset layouts have no single owner per element".into(),
            ));
        }
        let shape = self.shape();
        let rows = shape[0];
        // Each iterator's step in the tile's column-major offset space.
        let mut by_axis: [Vec<(i64, i64, i64)>; 2] = [Vec::new(), Vec::new()];
        for (d, iters) in self.dims.iter().enumerate() {
            let unit = if d == 0 { 1 } else { rows };
            let mut inner = 1;
            for it in iters.iter().rev() {
                let slot = if it.axis == thread_axis {
                    0
                } else if it.axis == Axis::M {
                    1
                } else {
                    return Err(bad(format!(
                        "iterator on axis {} is neither {thread_axis} nor m",
                        it.axis
                    )));
                };
                if it.extent > 1 {
                    by_axis[slot].push((it.stride, it.extent, unit * inner));
                }
                inner *= it.extent;
            }
        }
        let mut modes = Vec::new();
        for (slot, mut iters) in by_axis.into_iter().enumerate() {
            iters.sort();
            let mut span = 1;
            let (mut s, mut d) = (Vec::new(), Vec::new());
            for (stride, extent, step) in iters {
                if stride != span {
                    let what = if slot == 0 { thread_axis.name() } else { "m" };
                    return Err(bad(format!(
                        "the {what} strides are not compact: found {stride}, expected {span}"
                    )));
                }
                span *= extent;
                s.push(IntTuple::Int(extent));
                d.push(IntTuple::Int(step));
            }
            if s.is_empty() {
                s.push(IntTuple::Int(1));
                d.push(IntTuple::Int(0));
            }
            modes.push((
                IntTuple::Tuple(s).unwrap_single(),
                IntTuple::Tuple(d).unwrap_single(),
            ));
        }
        let layout = Layout::new(
            IntTuple::Tuple(modes.iter().map(|m| m.0.clone()).collect()),
            IntTuple::Tuple(modes.into_iter().map(|m| m.1).collect()),
        )?;
        TvLayout::new(format!("{self}"), rows, shape[1], layout).map_err(|e| bad(e.to_string()))
    }
}
