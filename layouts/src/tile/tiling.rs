//! Tiling: copies of a tile layout arranged by an outer layout (the named-axis blocked product).

use std::collections::BTreeMap;

use super::{Iter, TileError, TileLayout};

/// The tile of `outer.shape() * inner.shape()` made of copies of `inner`, the copy at outer
/// coordinate `x` displaced by `outer.apply(x)` in units of `inner`'s span on each axis.
///
/// Dimension `d` of the result has `outer`'s iterators of `d` (slower) followed by `inner`'s
/// (faster), `outer`'s strides multiplied by `inner.span(axis)`.
///
/// * `@pre rank(inner) == rank(outer)` ([`TileError::RankMismatch`])
/// * `@post result.shape()[d] == outer.shape()[d] * inner.shape()[d]`
/// * `@post result.apply(x * inner_shape + y) == outer.apply(x) * span + inner.apply(y)` axis by
///   axis
///
/// ```
/// use layouts::tile::{tile, TileLayout};
/// let inner: TileLayout = "S[(2, 2):(2, 1)]".parse()?;
/// let outer: TileLayout = "S[(2, 3):(3, 1)]".parse()?;
/// assert_eq!(tile(&inner, &outer)?.to_string(), "S[((2, 2), (3, 2)):((12, 2), (4, 1))]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tile(inner: &TileLayout, outer: &TileLayout) -> Result<TileLayout, TileError> {
    if inner.dims.len() != outer.dims.len() {
        return Err(TileError::RankMismatch {
            op: "tile",
            left: inner.dims.len(),
            right: outer.dims.len(),
        });
    }
    let scale = |it: &Iter| Iter::new(it.extent, it.stride * inner.span(it.axis), it.axis);
    let dims = outer
        .dims
        .iter()
        .zip(&inner.dims)
        .map(|(o, i)| o.iter().map(scale).chain(i.iter().copied()).collect())
        .collect();
    let replica = outer
        .replica
        .iter()
        .map(scale)
        .chain(inner.replica.iter().copied())
        .collect();
    let mut offset: BTreeMap<_, i64> = inner.offset.clone();
    for (a, v) in &outer.offset {
        *offset.entry(*a).or_insert(0) += v * inner.span(*a);
    }
    TileLayout::new(dims, replica, offset)
}
