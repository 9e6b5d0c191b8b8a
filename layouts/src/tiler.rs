//! `Tiler`: what divides, multiplies or is composed with a layout: a layout, or a tuple of
//! tilers applied mode by mode (CuTe's `Tile<L0, L1, ...>`; a shape is a tuple of `n:1`).

use std::fmt;

use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::{IntTuple, write_seq};

/// A layout, or `<T0, T1, ...>`: one tiler per top-level mode of the target layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tiler {
    /// A layout applied to the whole target.
    Layout(Layout),
    /// One tiler per leading mode of the target; the remaining modes are left as they are.
    Modes(Vec<Tiler>),
}

impl Tiler {
    /// A shape used as a tiler (CuTe "shapes as tilers"): each integer `n` is the layout `n:1`,
    /// applied to the mode at its position; a nested tuple is a nested tiler.
    pub fn from_shape(shape: &IntTuple) -> Tiler {
        match shape {
            IntTuple::Int(n) => Tiler::Layout(Layout::raw(IntTuple::Int(*n), IntTuple::Int(1))),
            IntTuple::Tuple(m) => Tiler::Modes(m.iter().map(Tiler::from_shape).collect()),
        }
    }

    /// The number of elements the tiler selects (the product of the tiles' sizes).
    pub fn size(&self) -> i64 {
        match self {
            Tiler::Layout(l) => l.size(),
            Tiler::Modes(m) => m.iter().map(Tiler::size).product(),
        }
    }
}

impl From<Layout> for Tiler {
    fn from(l: Layout) -> Tiler {
        Tiler::Layout(l)
    }
}

impl fmt::Display for Tiler {
    /// `<3:4,8:2>` for a tuple of tilers, CuTe notation for a layout.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Modes(m) => write_seq(f, "<", m, ">"),
        }
    }
}

/// An operation of a layout and a tiler that works mode by mode: `logical_divide`,
/// `logical_product`.
pub(crate) type ByMode = fn(&Layout, &Tiler) -> Result<Layout, LayoutError>;

/// `op` of mode `i` of `a` and `ts[i]`, for every `i`; the modes past the tilers as they are.
/// `name` (the public operation) is what a rank mismatch names.
pub(crate) fn by_mode(
    a: &Layout,
    ts: &[Tiler],
    name: &'static str,
    op: ByMode,
) -> Result<Vec<Layout>, LayoutError> {
    let modes = a.modes();
    if ts.len() > modes.len() {
        return Err(LayoutError::RankMismatch {
            op: name,
            tiler: ts.len(),
            layout: modes.len(),
        });
    }
    modes
        .into_iter()
        .enumerate()
        .map(|(i, m)| match ts.get(i) {
            Some(t) => op(&m, t),
            None => Ok(m),
        })
        .collect()
}

/// The first and the second halves of `op(a, tiler)` (the tile and the rest of a divide, `A` and
/// the arrangement of a product): mode 0 of each tiled mode (of the whole for a layout tiler),
/// then their modes 1 followed by the modes of `a` no tiler touched.
pub(crate) fn zipped_parts(
    a: &Layout,
    tiler: &Tiler,
    name: &'static str,
    op: ByMode,
) -> Result<(Vec<Layout>, Vec<Layout>), LayoutError> {
    match tiler {
        Tiler::Layout(_) => {
            let r = op(a, tiler)?;
            let first = r.mode(0).unwrap_or_else(|| r.clone());
            let rest = r.mode(1).map(|m| m.modes()).unwrap_or_default();
            Ok((vec![first], rest))
        }
        Tiler::Modes(ts) => {
            let mut firsts = Vec::new();
            let mut rests = Vec::new();
            for (i, m) in by_mode(a, ts, name, op)?.into_iter().enumerate() {
                if i < ts.len() {
                    firsts.push(m.mode(0).unwrap_or_else(|| m.clone()));
                    rests.push(m.mode(1).unwrap_or_else(|| m.clone()));
                } else {
                    rests.push(m);
                }
            }
            Ok((firsts, rests))
        }
    }
}

/// `((first halves), (second halves))` of [`zipped_parts`]; for a layout tiler, `op(a, tiler)`.
pub(crate) fn zipped(
    a: &Layout,
    tiler: &Tiler,
    name: &'static str,
    op: ByMode,
) -> Result<Layout, LayoutError> {
    if let Tiler::Layout(_) = tiler {
        return op(a, tiler);
    }
    let (firsts, rests) = zipped_parts(a, tiler, name, op)?;
    Ok(Layout::tuple_of(vec![
        Layout::from_modes(firsts),
        Layout::from_modes(rests),
    ]))
}

/// `((first halves), second0, second1, ...)` of [`zipped_parts`].
pub(crate) fn tiled(
    a: &Layout,
    tiler: &Tiler,
    name: &'static str,
    op: ByMode,
) -> Result<Layout, LayoutError> {
    let (firsts, rests) = zipped_parts(a, tiler, name, op)?;
    let mut modes = vec![Layout::from_modes(firsts)];
    modes.extend(rests);
    Ok(Layout::tuple_of(modes))
}
