//! The divides: `logical_divide` and its rearrangements `zipped_divide`, `tiled_divide`,
//! `flat_divide` (CuTe "02_layout_algebra", "Division (Tiling)").

use crate::complement::complement;
use crate::composition::composition;
use crate::error::LayoutError;
use crate::layout::Layout;
use crate::tiler::{Tiler, by_mode, tiled, zipped, zipped_parts};

/// `A ⊘ B = A ∘ (B, complement(B, size(A)))` for a layout tiler; for a tuple tiler, mode `i` of
/// `A` is divided by `Bi` and the remaining modes are kept.
///
/// * `@pre` the preconditions of [`complement`]`(B, size(A))` and of [`composition`]
/// * `@pre rank(tiler) <= rank(A)` for a tuple tiler
/// * `@post` for a layout tiler, `result == composition(A, make_layout(B, complement(B,
///   size(A))))`, whose mode 0 is the tile (`A ∘ B`) and mode 1 the tiles' arrangement
/// * `@post size(result) >= size(A)` (the complement rounds up to whole tiles)
///
/// ```
/// use layouts::{logical_divide, Layout, Tiler};
/// let a: Layout = "(4,2,3):(2,1,8)".parse().unwrap();
/// let b: Layout = "4:2".parse().unwrap();
/// let r = logical_divide(&a, &Tiler::Layout(b)).unwrap();
/// assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// ```
pub fn logical_divide(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    match tiler {
        Tiler::Layout(b) => {
            let rest = complement(b, a.size())?;
            composition(a, &Layout::tuple_of(vec![b.clone(), rest]))
        }
        Tiler::Modes(ts) => Ok(Layout::from_modes(by_mode(
            a,
            ts,
            "logical_divide",
            logical_divide,
        )?)),
    }
}

/// `((tile modes), (rest modes))`: the tile gathered in mode 0, everything else in mode 1.
///
/// * `@pre` as [`logical_divide`]
/// * `@post` the same function as [`logical_divide`] up to a rearrangement of modes; for a layout
///   tiler, `result == logical_divide(A, B)`
/// * `@post size(mode(result, 0)) == size(tiler)`
///
/// ```
/// use layouts::{zipped_divide, Layout, Tiler};
/// let a: Layout = "(9,(4,8)):(59,(13,1))".parse().unwrap();
/// let t = Tiler::Modes(vec![
///     Tiler::Layout("3:3".parse().unwrap()),
///     Tiler::Layout("(2,4):(1,8)".parse().unwrap()),
/// ]);
/// assert_eq!(
///     zipped_divide(&a, &t).unwrap().to_string(),
///     "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
/// );
/// ```
pub fn zipped_divide(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    zipped(a, tiler, "zipped_divide", logical_divide)
}

/// `((tile modes), rest0, rest1, ...)`: the tile in mode 0, the rest modes unpacked after it.
///
/// * `@pre` as [`logical_divide`]
/// * `@post` the same values as [`zipped_divide`] in the same order
pub fn tiled_divide(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    tiled(a, tiler, "tiled_divide", logical_divide)
}

/// `(tile0, tile1, ..., rest0, rest1, ...)`: every mode of the tile and the rest at the top level.
///
/// * `@pre` as [`logical_divide`]
/// * `@post` the same values as [`zipped_divide`] in the same order
pub fn flat_divide(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    let (mut modes, rests) = zipped_parts(a, tiler, "flat_divide", logical_divide)?;
    modes.extend(rests);
    Ok(Layout::from_modes(modes))
}
