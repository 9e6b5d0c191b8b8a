//! `composition(A, B)`: the layout `R` with `R(c) == A(B(c))` (CuTe "02_layout_algebra",
//! "Composition"; `composition_impl` in `include/cute/layout.hpp`).

use crate::coalesce::coalesce;
use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;
use crate::tiler::Tiler;

/// Functional composition `A ∘ B`.
///
/// * `@pre` stride divisibility: walking the modes of `coalesce(A)`, each stride of `B` and each
///   extent of `A` it meets divide one another ([`LayoutError::StrideDivisibility`])
/// * `@pre` shape divisibility: an extent of `B` that spills over a mode of `A` is a multiple of
///   what is left of that mode ([`LayoutError::ShapeDivisibility`])
/// * `@pre` when `coalesce(A)` has more than one mode, the modes of `B` are disjoint in `A`'s
///   index space: its leaves (extent > 1, stride != 0) sorted by stride each start at or past the
///   span `s * d` of the previous one ([`LayoutError::CompositionOverlap`]). Composition is
///   computed mode by mode of `B`, which is `A ∘ B` only when `A(x + y) == A(x) + A(y)` for
///   offsets `x`, `y` of different modes of `B`
/// * `@post compatible(shape(B), shape(result))`
/// * `@post for all i < size(B)` with `B(i) < size(A)`: `result(i) == A(B(i))`
/// * `@post for all i < size(B): result(i) == coalesce(A)(B(i))`, that is past `size(A)` the
///   layout `A` is extended along the last mode of `coalesce(A)`, as in CuTe
///
/// ```
/// use layouts::{composition, Layout};
/// let a: Layout = "(6,2):(8,2)".parse().unwrap();
/// let b: Layout = "(4,3):(3,1)".parse().unwrap();
/// assert_eq!(composition(&a, &b).unwrap().to_string(), "((2,2),3):((24,2),8)");
/// ```
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout, LayoutError> {
    let flat_a = coalesce(a).flat_modes();
    if flat_a.len() > 1 {
        check_disjoint_modes(b)?;
    }
    let r = compose_modes(&flat_a, b.shape(), b.stride())?;
    r.check_bounds()?;
    Ok(r)
}

/// Composition with a tiler: a layout tiler composes with the whole of `A`; a tuple
/// `<B0, B1, ...>` composes `mode(A, i)` with `Bi` and leaves the remaining modes of `A`.
///
/// * `@pre rank(tiler) <= rank(A)` when the tiler is a tuple
/// * `@pre` the divisibility conditions of [`composition`] for each mode
/// * `@post` for a tuple tiler, mode `i < rank(tiler)` of the result is `mode(A, i) ∘ Bi`, and
///   the remaining modes are those of `A`
///
/// ```
/// use layouts::{composition_tiler, Layout, Tiler};
/// let a: Layout = "(12,(4,8)):(59,(13,1))".parse().unwrap();
/// let tiler = Tiler::Modes(vec![
///     Tiler::Layout("3:4".parse().unwrap()),
///     Tiler::Layout("8:2".parse().unwrap()),
/// ]);
/// assert_eq!(composition_tiler(&a, &tiler).unwrap().to_string(), "(3,(2,4)):(236,(26,1))");
/// ```
pub fn composition_tiler(a: &Layout, tiler: &Tiler) -> Result<Layout, LayoutError> {
    match tiler {
        Tiler::Layout(b) => composition(a, b),
        Tiler::Modes(ts) => {
            let out = a.by_mode("composition", ts, true, composition_tiler)?;
            Ok(Layout::from_modes(out))
        }
    }
}

/// Composes the flat, coalesced modes of `A` with `B` given by shape and stride, mode by mode of
/// `B` (composition distributes over the concatenation of `B`'s modes).
fn compose_modes(
    a: &[(i64, i64)],
    shape: &IntTuple,
    stride: &IntTuple,
) -> Result<Layout, LayoutError> {
    match (shape, stride) {
        (IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            let modes = s
                .iter()
                .zip(d)
                .map(|(s, d)| compose_modes(a, s, d))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Layout::tuple_of(modes))
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => compose_leaf(a, *s, *d),
        _ => Err(LayoutError::NotCongruent {
            shape: shape.to_string(),
            stride: stride.to_string(),
        }),
    }
}

/// `A ∘ (s:d)`: walk the modes of `A`, first skipping `d` elements (the stride "divides out" the
/// leading modes), then taking `s` elements (the shape "mods out" the following modes).
fn compose_leaf(a: &[(i64, i64)], s: i64, d: i64) -> Result<Layout, LayoutError> {
    if d == 0 {
        return Ok(Layout::raw(IntTuple::Int(s), IntTuple::Int(0)));
    }
    let Some((&(_, last_stride), init)) = a.split_last() else {
        return Ok(Layout::raw(IntTuple::Int(s), IntTuple::Int(0)));
    };
    let sign = d.signum();
    let mut rest_shape = s;
    let mut rest_stride = d.abs();
    let mut shapes = Vec::new();
    let mut strides = Vec::new();
    for (mode, &(curr_shape, curr_stride)) in init.iter().enumerate() {
        if rest_shape == 1 {
            break;
        }
        if curr_shape % rest_stride != 0 && rest_stride % curr_shape != 0 {
            return Err(LayoutError::StrideDivisibility {
                stride: rest_stride,
                extent: curr_shape,
                mode,
            });
        }
        // After skipping `rest_stride` elements, `next_shape` are left in this mode.
        let next_shape = ceil_div(curr_shape, rest_stride);
        let next_stride = ceil_div(rest_stride, curr_shape);
        if next_shape != 1 {
            let new_shape = next_shape.min(rest_shape);
            if rest_shape % new_shape != 0 {
                return Err(LayoutError::ShapeDivisibility {
                    shape: rest_shape,
                    available: next_shape,
                    mode,
                });
            }
            shapes.push(new_shape);
            strides.push(sign * rest_stride * curr_stride);
            rest_shape /= new_shape;
        }
        rest_stride = next_stride;
    }
    if rest_shape != 1 || shapes.is_empty() {
        shapes.push(rest_shape);
        strides.push(sign * rest_stride * last_stride);
    }
    Ok(if shapes.len() == 1 {
        Layout::raw(IntTuple::Int(shapes[0]), IntTuple::Int(strides[0]))
    } else {
        Layout::raw(IntTuple::flat(&shapes), IntTuple::flat(&strides))
    })
}

/// The leaves of `b` sorted by stride must not overlap (see [`composition`]'s preconditions).
fn check_disjoint_modes(b: &Layout) -> Result<(), LayoutError> {
    let mut leaves: Vec<(i64, i64)> = b
        .flat_modes()
        .into_iter()
        .filter(|&(s, d)| s > 1 && d != 0)
        .map(|(s, d)| (s, d.abs()))
        .collect();
    leaves.sort_by_key(|&(s, d)| (d, s));
    let mut span = 1;
    for (s, d) in leaves {
        if d < span {
            return Err(LayoutError::CompositionOverlap { stride: d, span });
        }
        span = s * d;
    }
    Ok(())
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}
