//! `coalesce`: the simplest layout with the same function and size (CuTe "02_layout_algebra",
//! "Coalesce").

use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// Merges adjacent modes where possible and drops extent-1 modes.
///
/// * `@post size(result) == size(layout)`
/// * `@post depth(result) <= 1`, and `result` is an integer layout when one mode is left
/// * `@post for all i < size(layout): result(i) == layout(i)`
///
/// Modes `(s0, s1):(d0, d1)` merge into `s0*s1:d0` when `d1 == s0 * d0`. A layout of size 1 is
/// `1:0`.
///
/// ```
/// use layouts::{coalesce, Layout};
/// let l: Layout = "(2,(1,6)):(1,(6,2))".parse().unwrap();
/// assert_eq!(coalesce(&l).to_string(), "12:1");
/// ```
pub fn coalesce(layout: &Layout) -> Layout {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, d) in layout.flat_modes() {
        if s == 1 {
            continue;
        }
        match out.last_mut() {
            Some((ps, pd)) if *pd * *ps == d => *ps *= s,
            _ => out.push((s, d)),
        }
    }
    match out.len() {
        0 => Layout::raw(IntTuple::Int(1), IntTuple::Int(0)),
        1 => Layout::raw(IntTuple::Int(out[0].0), IntTuple::Int(out[0].1)),
        _ => {
            let (s, d): (Vec<i64>, Vec<i64>) = out.into_iter().unzip();
            Layout::raw(IntTuple::flat(&s), IntTuple::flat(&d))
        }
    }
}

/// Coalesces mode by mode following `profile` (CuTe `coalesce(layout, trg_profile)`): where the
/// profile is an integer the whole (sub)layout is coalesced; where it is a tuple, each of its
/// modes is coalesced by the matching sub-profile and the rank is kept.
///
/// * `@pre rank(profile) <= rank(layout)` wherever the profile is a tuple
/// * `@post size(result) == size(layout)` and `result(i) == layout(i)` for all `i < size`
/// * `@post` the result has at least the top-level structure of `profile`
///
/// ```
/// use layouts::{coalesce_by_mode, IntTuple, Layout};
/// let l: Layout = "(2,(1,6)):(1,(6,2))".parse().unwrap();
/// let by_mode = coalesce_by_mode(&l, &IntTuple::flat(&[1, 1])).unwrap();
/// assert_eq!(by_mode.to_string(), "(2,6):(1,2)");
/// ```
pub fn coalesce_by_mode(layout: &Layout, profile: &IntTuple) -> Result<Layout, LayoutError> {
    match profile {
        IntTuple::Int(_) => Ok(coalesce(layout)),
        IntTuple::Tuple(p) => {
            // An integer layout is one mode: a profile of more is a mismatch.
            let rank_ok = !layout.shape().is_int() || p.len() == 1;
            let out = layout.by_mode("coalesce", p, rank_ok, coalesce_by_mode)?;
            Ok(Layout::tuple_of(out))
        }
    }
}
