//! `right_inverse` and `left_inverse` (CuTe "02_layout_algebra" and `include/cute/layout.hpp`).

use crate::coalesce::coalesce;
use crate::complement::complement;
use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// The largest compact layout `R` with `L(R(i)) == i` (CuTe `right_inverse`).
///
/// Starting from offset stride 1, repeatedly find the mode of `coalesce(L)` whose stride is the
/// current offset stride; its extent extends `R`, with `R`'s stride the position of that mode in
/// `L`'s index space.
///
/// * `@pre` strides non-negative ([`LayoutError::NegativeStride`])
/// * `@post for all i < size(result): layout(result(i)) == i`
/// * `@post` `result` is coalesced; `1:0` when `layout` has no stride-1 mode
///
/// ```
/// use layouts::{right_inverse, Layout};
/// let l: Layout = "(4,2):(2,1)".parse().unwrap();
/// assert_eq!(right_inverse(&l).unwrap().to_string(), "(2,4):(4,1)");
/// ```
pub fn right_inverse(layout: &Layout) -> Result<Layout, LayoutError> {
    if let Some(&(_, d)) = layout.flat_modes().iter().find(|&&(_, d)| d < 0) {
        return Err(LayoutError::NegativeStride {
            op: "right_inverse",
            stride: d,
        });
    }
    let flat = coalesce(layout).flat_modes();
    // Exclusive prefix products: the index-space stride of each mode.
    let mut position = Vec::with_capacity(flat.len());
    let mut acc = 1;
    for &(s, _) in &flat {
        position.push(acc);
        acc *= s;
    }
    let mut shapes = Vec::new();
    let mut strides = Vec::new();
    let mut next = 1;
    while let Some(i) = flat.iter().position(|&(s, d)| d == next && s > 1) {
        shapes.push(flat[i].0);
        strides.push(position[i]);
        next = flat[i].0 * flat[i].1;
    }
    if shapes.is_empty() {
        return Ok(Layout::raw(IntTuple::Int(1), IntTuple::Int(0)));
    }
    Ok(coalesce(&Layout::raw(
        IntTuple::flat(&shapes),
        IntTuple::flat(&strides),
    )))
}

/// A layout `R` with `R(L(i)) == i` for all `i < size(L)` (CuTe `left_inverse`):
/// `right_inverse(make_layout(L, complement(L)))`.
///
/// * `@pre` the preconditions of [`complement`]`(L, cosize(L))`; in particular `L` is injective
/// * `@post for all i < size(layout): result(layout(i)) == i`
///
/// ```
/// use layouts::{left_inverse, Layout};
/// let l: Layout = "(4,2):(2,1)".parse().unwrap();
/// let r = left_inverse(&l).unwrap();
/// assert!((0..8).all(|i| r.call(l.call(i)) == i));
/// ```
pub fn left_inverse(layout: &Layout) -> Result<Layout, LayoutError> {
    let c = complement(layout, layout.cosize())?;
    right_inverse(&Layout::tuple_of(vec![layout.clone(), c]))
}
