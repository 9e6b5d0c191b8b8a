//! `IntTuple`: the hierarchical integer tuples that CuTe layouts are made of.
//!
//! A shape, a stride and a coordinate are all nested tuples of integers, e.g. `((2,2),3)`. The
//! definitions (`size`, `rank`, `depth`, congruence and compatibility) follow CuTe's
//! `include/cute/int_tuple.hpp` and the "01_layout" documentation.

use std::fmt;

/// A nested tuple of integers: an integer or a tuple of `IntTuple`s.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IntTuple {
    /// A leaf.
    Int(i64),
    /// A tuple of modes (possibly empty).
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// A tuple of the given modes.
    pub fn tuple(modes: impl IntoIterator<Item = IntTuple>) -> IntTuple {
        IntTuple::Tuple(modes.into_iter().collect())
    }

    /// A flat tuple of integers.
    pub fn flat(values: &[i64]) -> IntTuple {
        IntTuple::Tuple(values.iter().map(|&v| IntTuple::Int(v)).collect())
    }

    /// The leaf value, if this is an integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            IntTuple::Int(v) => Some(*v),
            IntTuple::Tuple(_) => None,
        }
    }

    /// True for a leaf.
    pub fn is_int(&self) -> bool {
        matches!(self, IntTuple::Int(_))
    }

    /// The top-level modes; an integer is its own single mode.
    pub fn modes(&self) -> &[IntTuple] {
        match self {
            IntTuple::Int(_) => std::slice::from_ref(self),
            IntTuple::Tuple(m) => m,
        }
    }

    /// The number of top-level modes (1 for an integer).
    pub fn rank(&self) -> usize {
        self.modes().len()
    }

    /// The nesting depth: 0 for an integer, 1 for a flat tuple, ...
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(m) => 1 + m.iter().map(IntTuple::depth).max().unwrap_or(0),
        }
    }

    /// The product of all leaves (1 for an empty tuple), saturating at `i64::MAX` / `i64::MIN`
    /// rather than overflowing (callers bound sizes well below that).
    pub fn product(&self) -> i64 {
        match self {
            IntTuple::Int(v) => *v,
            IntTuple::Tuple(m) => m.iter().map(IntTuple::product).fold(1, i64::saturating_mul),
        }
    }

    /// The leaves in order (depth-first, left to right).
    pub fn leaves(&self) -> Vec<i64> {
        match self {
            IntTuple::Int(v) => vec![*v],
            IntTuple::Tuple(m) => m.iter().flat_map(IntTuple::leaves).collect(),
        }
    }

    /// Rebuilds a tuple with the structure of `self` from `leaves` (taken in order).
    /// Returns `None` when there are too few leaves.
    pub fn with_leaves(&self, leaves: &mut impl Iterator<Item = i64>) -> Option<IntTuple> {
        Some(match self {
            IntTuple::Int(_) => IntTuple::Int(leaves.next()?),
            IntTuple::Tuple(m) => IntTuple::Tuple(
                m.iter()
                    .map(|t| t.with_leaves(leaves))
                    .collect::<Option<_>>()?,
            ),
        })
    }

    /// Applies `f` to every leaf, keeping the structure.
    pub fn map(&self, f: &mut impl FnMut(i64) -> i64) -> IntTuple {
        match self {
            IntTuple::Int(v) => IntTuple::Int(f(*v)),
            IntTuple::Tuple(m) => IntTuple::Tuple(m.iter().map(|t| t.map(f)).collect()),
        }
    }

    /// Same tree structure (CuTe `congruent`).
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// CuTe `compatible(self, other)`: the sizes agree and every coordinate of `self` is a
    /// coordinate of `other` (an integer is compatible with any tuple of the same size).
    pub fn compatible(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(a), _) => *a == other.product(),
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (IntTuple::Tuple(_), IntTuple::Int(_)) => false,
        }
    }

    /// A single-mode tuple is written as its mode (`(4)` is `4`), as CuTe's `make_layout` of one
    /// mode does.
    pub fn unwrap_single(self) -> IntTuple {
        match self {
            IntTuple::Tuple(mut m) if m.len() == 1 => m.pop().unwrap_or(IntTuple::Int(1)),
            other => other,
        }
    }
}

impl From<i64> for IntTuple {
    fn from(v: i64) -> IntTuple {
        IntTuple::Int(v)
    }
}

/// `open`, the items separated by commas, `close`: how CuTe writes a tuple (`(2,3)`) and a
/// tuple of tilers (`<3:4,8:2>`).
pub(crate) fn write_seq<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    open: &str,
    items: &[T],
    close: &str,
) -> fmt::Result {
    f.write_str(open)?;
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{t}")?;
    }
    f.write_str(close)
}

impl fmt::Display for IntTuple {
    /// CuTe notation without spaces: `((2,2),3)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(m) => write_seq(f, "(", m, ")"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(m: Vec<IntTuple>) -> IntTuple {
        IntTuple::Tuple(m)
    }

    #[test]
    fn size_rank_depth() {
        let s = t(vec![t(vec![2.into(), 2.into()]), 3.into()]);
        assert_eq!(s.product(), 12);
        assert_eq!(s.rank(), 2);
        assert_eq!(s.depth(), 2);
        assert_eq!(s.leaves(), vec![2, 2, 3]);
        assert_eq!(s.to_string(), "((2,2),3)");
        assert_eq!(IntTuple::Int(7).depth(), 0);
    }

    #[test]
    fn compatibility_is_the_cute_relation() {
        let a: IntTuple = 12.into();
        let b = t(vec![4.into(), 3.into()]);
        assert!(a.compatible(&b));
        assert!(!b.compatible(&a));
        assert!(b.compatible(&t(vec![t(vec![2.into(), 2.into()]), 3.into()])));
        assert!(!IntTuple::Int(5).compatible(&b));
    }
}
