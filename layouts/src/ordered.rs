//! Compact layouts with a chosen stride order (CuTe `make_ordered_layout`, `make_layout` with
//! `LayoutLeft` / `LayoutRight`).

use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// The compact layout of `shape` whose leaves get increasing strides in the order given by
/// `order` (the leaf with the smallest order value gets stride 1; ties keep left-to-right order).
///
/// * `@pre order` is congruent with `shape` ([`LayoutError::NotCongruent`])
/// * `@post` `result` is compact and injective: its image is `0..size(shape)`
/// * `@post` for leaves `i, j`: `order[i] < order[j]` implies `stride[i] < stride[j]`
///
/// ```
/// use layouts::{make_ordered_layout, IntTuple};
/// let l = make_ordered_layout(&IntTuple::flat(&[2, 3, 4]), &IntTuple::flat(&[1, 2, 0])).unwrap();
/// assert_eq!(l.to_string(), "(2,3,4):(4,8,1)");
/// ```
pub fn make_ordered_layout(shape: &IntTuple, order: &IntTuple) -> Result<Layout, LayoutError> {
    if !shape.congruent(order) {
        return Err(LayoutError::NotCongruent {
            shape: shape.to_string(),
            stride: order.to_string(),
        });
    }
    let extents = shape.leaves();
    let ranks = order.leaves();
    let mut idx: Vec<usize> = (0..extents.len()).collect();
    idx.sort_by_key(|&i| (ranks[i], i));
    let mut strides = vec![0; extents.len()];
    let mut acc: i64 = 1;
    for i in idx {
        strides[i] = acc;
        acc = acc.saturating_mul(extents[i]);
    }
    let stride = shape
        .with_leaves(&mut strides.into_iter())
        .unwrap_or(IntTuple::Int(0));
    Layout::new(shape.clone(), stride)
}
