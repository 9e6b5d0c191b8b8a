//! `Tiler`: what divides, multiplies or is composed with a layout: a layout, or a tuple of
//! tilers applied mode by mode (CuTe's `Tile<L0, L1, ...>`; a shape is a tuple of `n:1`).

use std::fmt;

use crate::layout::Layout;
use crate::shape::IntTuple;

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
            Tiler::Modes(m) => {
                f.write_str("<")?;
                for (i, t) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
        }
    }
}
