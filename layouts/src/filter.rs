//! `filter`: the layout with the broadcast (stride-0) and trivial modes removed (CuTe
//! "02_layout_algebra" and `include/cute/layout.hpp`, `filter`).

use crate::coalesce::coalesce;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// Replaces every stride-0 mode by `1:0` (CuTe `filter_zeros`), keeping the structure.
///
/// * `@post shape(result)` is congruent with `shape(layout)`, `cosize(result) == cosize(layout)`
/// * `@post` the image of `result` equals the image of `layout`
pub fn filter_zeros(layout: &Layout) -> Layout {
    let mut extents = layout
        .flat_modes()
        .into_iter()
        .map(|(s, d)| if d == 0 { 1 } else { s });
    let shape = layout
        .shape()
        .with_leaves(&mut extents)
        .unwrap_or(IntTuple::Int(1));
    Layout::raw(shape, layout.stride().clone())
}

/// `coalesce(filter_zeros(layout))`: a layout without stride-0 and extent-1 modes whose image
/// (set of offsets) equals the image of `layout`.
///
/// * `@post` the image of `result` equals the image of `layout`
/// * `@post` `result` has no stride-0 mode unless it is `1:0`
///
/// ```
/// use layouts::{filter, Layout};
/// let l: Layout = "(4,(2,3)):(1,(0,4))".parse().unwrap();
/// assert_eq!(filter(&l).to_string(), "12:1");
/// ```
pub fn filter(layout: &Layout) -> Layout {
    let out = coalesce(&filter_zeros(layout));
    if out.size() == 1 {
        Layout::raw(IntTuple::Int(1), IntTuple::Int(0))
    } else {
        out
    }
}
