//! `complement(L, cotarget)`: the layout that fills the gaps of `L` up to `cotarget` (CuTe
//! "02_layout_algebra", "Complement"; `complement` in `include/cute/layout.hpp`).

use crate::coalesce::coalesce;
use crate::error::LayoutError;
use crate::filter::filter;
use crate::layout::{LIMIT, Layout};
use crate::shape::IntTuple;

/// The complement of `layout` with respect to `cotarget`.
///
/// * `@pre` strides non-negative ([`LayoutError::NegativeStride`])
/// * `@pre` the modes of `filter(layout)` sorted by stride do not overlap: each stride is a
///   multiple of the span `s * d` of the previous mode ([`LayoutError::ComplementOverlap`],
///   [`LayoutError::ComplementDivisibility`]); this implies `layout` is injective
/// * `@pre 1 <= cotarget < 2^31`
/// * `@post cosize(make_layout(layout, result)) >= cotarget`
/// * `@post for all 1 <= i < size(result): result(i - 1) < result(i)` (ordered)
/// * `@post for all 0 < i < size(result), j < size(layout): result(i) != layout(j)` (disjoint)
/// * `@post` `result` is coalesced
///
/// ```
/// use layouts::{complement, Layout};
/// let l: Layout = "(2,2):(1,6)".parse().unwrap();
/// assert_eq!(complement(&l, 24).unwrap().to_string(), "(3,2):(2,12)");
/// ```
pub fn complement(layout: &Layout, cotarget: i64) -> Result<Layout, LayoutError> {
    if !(1..LIMIT).contains(&cotarget) {
        return Err(if cotarget < 1 {
            LayoutError::BadCotarget(cotarget)
        } else {
            LayoutError::TooLarge {
                what: "cotarget",
                value: cotarget.into(),
            }
        });
    }
    if let Some(&(_, d)) = layout.flat_modes().iter().find(|&&(_, d)| d < 0) {
        return Err(LayoutError::NegativeStride {
            op: "complement",
            stride: d,
        });
    }
    let mut modes = filter(layout).flat_modes();
    modes.retain(|&(s, d)| s != 1 && d != 0);
    // Sort by stride; equal strides always overlap, which the walk below reports.
    modes.sort_by_key(|&(s, d)| (d, s));
    let mut shapes = Vec::with_capacity(modes.len() + 1);
    let mut strides = Vec::with_capacity(modes.len() + 1);
    let mut span: i64 = 1;
    for (s, d) in modes {
        if d < span {
            return Err(LayoutError::ComplementOverlap { stride: d, span });
        }
        if d % span != 0 {
            return Err(LayoutError::ComplementDivisibility { stride: d, span });
        }
        shapes.push(d / span);
        strides.push(span);
        span = s * d;
    }
    shapes.push((cotarget + span - 1) / span);
    strides.push(span);
    let r = coalesce(&Layout::raw(
        IntTuple::flat(&shapes),
        IntTuple::flat(&strides),
    ));
    r.check_bounds()?;
    Ok(r)
}
