//! The products: `logical_product` and its rearrangements `blocked_product`, `raked_product`,
//! `zipped_product`, `tiled_product` (CuTe "02_layout_algebra", "Product (Tiling)").

use crate::complement::complement;
use crate::composition::composition;
use crate::error::LayoutError;
use crate::layout::Layout;
use crate::tiler::{Tiler, by_mode, tiled, zipped};

/// `A ⊗ B = (A, complement(A, size(A) * cosize(B)) ∘ B)` for a layout `B`; for a tuple tiler,
/// mode `i` of `A` is multiplied by `Bi` and the remaining modes are kept.
///
/// * `@pre` the preconditions of [`complement`]`(A, size(A) * cosize(B))` and [`composition`]
/// * `@pre rank(tiler) <= rank(A)` for a tuple tiler
/// * `@post` for a layout `B`: `mode(result, 0) == A`, `size(result) == size(A) * size(B)`, and
///   `mode(result, 1)(j) == complement(A, size(A) * cosize(B))(B(j))`: each copy of `A` is offset
///   by the position `B` gives it, in units of `A`'s footprint
///
/// ```
/// use layouts::{logical_product, Layout, Tiler};
/// let a: Layout = "(2,2):(4,1)".parse().unwrap();
/// let b: Layout = "6:1".parse().unwrap();
/// let r = logical_product(&a, &Tiler::Layout(b)).unwrap();
/// assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// ```
pub fn logical_product(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    match tiler {
        Tiler::Layout(b) => {
            // Both factors are below 2^31, so the product fits; complement bounds it.
            let cotarget = a.size().saturating_mul(b.cosize());
            let rest = composition(&complement(a, cotarget)?, b)?;
            let r = Layout::tuple_of(vec![a.clone(), rest]);
            r.check_bounds()?;
            Ok(r)
        }
        Tiler::Modes(ts) => Ok(Layout::from_modes(by_mode(
            a,
            ts,
            "logical_product",
            logical_product,
        )?)),
    }
}

/// `logical_product` of `A` and `B` padded to a common rank, its two halves zipped mode by mode.
/// Returns the per-mode `(a_i, c_i)` pairs.
fn zipped_halves(a: &Layout, b: &Layout) -> Result<Vec<(Layout, Layout)>, LayoutError> {
    let r = a.rank().max(b.rank());
    let (a, b) = (a.append_to_rank(r), b.append_to_rank(r));
    let p = logical_product(&a, &Tiler::Layout(b))?;
    let (first, second) = match (p.mode(0), p.mode(1)) {
        (Some(f), Some(s)) => (f, s),
        _ => return Ok(Vec::new()),
    };
    if r == 1 {
        return Ok(vec![(first, second)]);
    }
    Ok(first.modes().into_iter().zip(second.modes()).collect())
}

/// Each mode `i` is `(A_i, C_i)`: `B`'s arrangement of whole blocks `A` (CuTe `blocked_product`).
///
/// * `@pre` as [`logical_product`] with `A` and `B` padded with `1:0` modes to a common rank
/// * `@post rank(result) == max(rank(A), rank(B))` (for rank 1 the result is the single mode
///   `(A, C)` itself), `size(result) == size(A) * size(B)`
/// * `@post` the image equals the image of `logical_product(A, B)`
///
/// ```
/// use layouts::{blocked_product, Layout};
/// let tile: Layout = "(2,2):(1,2)".parse().unwrap();
/// let grid: Layout = "(3,4):(4,1)".parse().unwrap();
/// assert_eq!(blocked_product(&tile, &grid).unwrap().to_string(), "((2,3),(2,4)):((1,16),(2,4))");
/// ```
pub fn blocked_product(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    arranged(a, b, false)
}

/// Each mode `i` is `(C_i, A_i)`: the elements of `A` interleaved ("raked") across the copies
/// (CuTe `raked_product`).
///
/// * `@pre` as [`blocked_product`]
/// * `@post` as [`blocked_product`], with the two halves of each mode swapped
///
/// ```
/// use layouts::{raked_product, Layout};
/// let tile: Layout = "(2,2):(1,2)".parse().unwrap();
/// let grid: Layout = "(3,4):(4,1)".parse().unwrap();
/// assert_eq!(raked_product(&tile, &grid).unwrap().to_string(), "((3,2),(4,2)):((16,1),(4,2))");
/// ```
pub fn raked_product(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    arranged(a, b, true)
}

/// The [`zipped_halves`] of `a` and `b` as modes `(A_i, C_i)`, or `(C_i, A_i)` when `raked`.
fn arranged(a: &Layout, b: &Layout, raked: bool) -> Result<Layout, LayoutError> {
    Ok(Layout::from_modes(
        zipped_halves(a, b)?
            .into_iter()
            .map(|(x, c)| Layout::tuple_of(if raked { vec![c, x] } else { vec![x, c] }))
            .collect(),
    ))
}

/// `((A modes), (arrangement modes))` (CuTe `zipped_product`).
///
/// * `@pre` as [`logical_product`]
/// * `@post` for a layout tiler, `result == logical_product(A, B)`; otherwise the same values
///   as `logical_product(A, tiler)` with the modes regrouped
pub fn zipped_product(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    zipped(a, tiler, "zipped_product", logical_product)
}

/// `((A modes), arrangement0, arrangement1, ...)` (CuTe `tiled_product`).
///
/// * `@pre` as [`logical_product`]
/// * `@post` the same values as [`zipped_product`] in the same order
pub fn tiled_product(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    tiled(a, tiler, "tiled_product", logical_product)
}
