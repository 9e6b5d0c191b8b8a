//! `Layout`: a shape and a congruent stride, a function from coordinates to offsets.
//!
//! Evaluation is colexicographic, as in CuTe ("01_layout", "Coordinates and index mapping"): the
//! 1-D index `i` of shape `(s0, s1, ...)` is the coordinate `(i % s0, (i / s0) % s1, ...)`, except
//! that the last mode takes the whole quotient, so a layout extends past its size along its last
//! mode (`crd2idx` in `include/cute/stride.hpp`). Composition relies on that extension.

use std::fmt;

use crate::error::LayoutError;
use crate::shape::IntTuple;

/// Sizes, cosizes and cotargets stay below this, so a product of two never overflows an `i64`.
pub const LIMIT: i64 = 1 << 31;

/// A CuTe layout `shape:stride`.
///
/// ```
/// use layouts::Layout;
/// let l: Layout = "(4,2):(2,1)".parse().unwrap();
/// assert_eq!(l.size(), 8);
/// assert_eq!(l.cosize(), 8);
/// assert_eq!((0..8).map(|i| l.call(i)).collect::<Vec<_>>(), [0, 2, 4, 6, 1, 3, 5, 7]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
}

impl Layout {
    /// `shape:stride`.
    ///
    /// Errors unless shape and stride are congruent, every extent is at least 1, and size,
    /// cosize and strides stay below [`LIMIT`].
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout, LayoutError> {
        if !shape.congruent(&stride) {
            return Err(LayoutError::NotCongruent {
                shape: shape.to_string(),
                stride: stride.to_string(),
            });
        }
        if shape.leaves().iter().any(|&s| s < 1) {
            return Err(LayoutError::NonPositiveShape {
                shape: shape.to_string(),
            });
        }
        let layout = Layout { shape, stride };
        layout.check_bounds()?;
        Ok(layout)
    }

    /// Checks that size, cosize and every stride stay below [`LIMIT`] (computed without
    /// overflow). The algebra's results are checked too, so chained operations cannot overflow.
    pub fn check_bounds(&self) -> Result<(), LayoutError> {
        let mut size: i128 = 1;
        let mut span: i128 = 1;
        for (s, d) in self.shape.leaves().into_iter().zip(self.stride.leaves()) {
            if d.unsigned_abs() >= LIMIT as u64 {
                return Err(LayoutError::TooLarge {
                    what: "stride",
                    value: d.into(),
                });
            }
            size = (size * s as i128).min(i128::from(i64::MAX));
            span = (span + (s as i128 - 1) * (d as i128).abs()).min(i128::from(i64::MAX));
        }
        if size >= LIMIT as i128 {
            return Err(LayoutError::TooLarge {
                what: "size",
                value: size,
            });
        }
        if span >= LIMIT as i128 {
            return Err(LayoutError::TooLarge {
                what: "cosize",
                value: span,
            });
        }
        Ok(())
    }

    /// Builds a layout the caller knows to be congruent (the algebra's own results).
    pub(crate) fn raw(shape: IntTuple, stride: IntTuple) -> Layout {
        debug_assert!(shape.congruent(&stride));
        Layout { shape, stride }
    }

    /// `s:d` with integral shape and stride.
    pub fn int(shape: i64, stride: i64) -> Result<Layout, LayoutError> {
        Layout::new(IntTuple::Int(shape), IntTuple::Int(stride))
    }

    /// The compact column-major layout of `shape` (CuTe `make_layout(shape)`, `LayoutLeft`).
    pub fn column_major(shape: IntTuple) -> Result<Layout, LayoutError> {
        let mut acc: i64 = 1;
        let stride = shape.map(&mut |s| {
            let d = acc;
            acc = acc.saturating_mul(s);
            d
        });
        Layout::new(shape, stride)
    }

    /// The compact row-major layout of `shape` (CuTe `LayoutRight`): the last leaf has stride 1.
    pub fn row_major(shape: IntTuple) -> Result<Layout, LayoutError> {
        let leaves = shape.leaves();
        let mut strides = vec![0; leaves.len()];
        let mut acc: i64 = 1;
        for (d, s) in strides.iter_mut().zip(&leaves).rev() {
            *d = acc;
            acc = acc.saturating_mul(*s);
        }
        let stride = shape
            .with_leaves(&mut strides.into_iter())
            .unwrap_or(IntTuple::Int(0));
        Layout::new(shape, stride)
    }

    /// The layout whose modes are `modes` (CuTe `make_layout(l0, l1, ...)`); one mode is returned
    /// as it is.
    pub fn from_modes(modes: Vec<Layout>) -> Layout {
        if modes.len() == 1 {
            if let Some(m) = modes.into_iter().next() {
                return m;
            }
            return Layout::raw(IntTuple::Int(1), IntTuple::Int(0));
        }
        let (shapes, strides) = modes.into_iter().map(|m| (m.shape, m.stride)).unzip();
        Layout::raw(IntTuple::Tuple(shapes), IntTuple::Tuple(strides))
    }

    /// Like [`Layout::from_modes`] but always a tuple, even of one mode.
    pub(crate) fn tuple_of(modes: Vec<Layout>) -> Layout {
        let (shapes, strides) = modes.into_iter().map(|m| (m.shape, m.stride)).unzip();
        Layout::raw(IntTuple::Tuple(shapes), IntTuple::Tuple(strides))
    }

    /// The shape.
    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    /// The stride.
    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// The number of coordinates: the product of the shape.
    pub fn size(&self) -> i64 {
        self.shape.product()
    }

    /// One past the largest offset reached from index 0 upwards: `1 + sum (s - 1) * |d|`
    /// (CuTe `cosize`, which is `L(size - 1) + 1` for non-negative strides).
    pub fn cosize(&self) -> i64 {
        1 + self
            .flat_modes()
            .iter()
            .map(|&(s, d)| (s - 1) * d.abs())
            .sum::<i64>()
    }

    /// The number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// The nesting depth of the shape.
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// The top-level mode `i`; `None` past the rank.
    pub fn mode(&self, i: usize) -> Option<Layout> {
        Some(Layout::raw(
            self.shape.modes().get(i)?.clone(),
            self.stride.modes().get(i)?.clone(),
        ))
    }

    /// All top-level modes.
    pub fn modes(&self) -> Vec<Layout> {
        self.shape
            .modes()
            .iter()
            .zip(self.stride.modes())
            .map(|(s, d)| Layout::raw(s.clone(), d.clone()))
            .collect()
    }

    /// `op` applied by mode: the first `parts.len()` modes through `f` with their part, the
    /// others kept. Errors: more parts than modes, or `rank_ok` false (a rank mismatch of `op`).
    pub(crate) fn by_mode<T>(
        &self,
        op: &'static str,
        parts: &[T],
        rank_ok: bool,
        f: impl Fn(&Layout, &T) -> Result<Layout, LayoutError>,
    ) -> Result<Vec<Layout>, LayoutError> {
        let modes = self.modes();
        if parts.len() > modes.len() || !rank_ok {
            return Err(LayoutError::RankMismatch {
                op,
                tiler: parts.len(),
                layout: modes.len(),
            });
        }
        modes
            .into_iter()
            .enumerate()
            .map(|(i, m)| parts.get(i).map_or(Ok(m.clone()), |part| f(&m, part)))
            .collect()
    }

    /// The (extent, stride) pairs of the leaves, in order.
    pub fn flat_modes(&self) -> Vec<(i64, i64)> {
        self.shape
            .leaves()
            .into_iter()
            .zip(self.stride.leaves())
            .collect()
    }

    /// The layout with every mode flattened to depth 1 (an integer when a single leaf).
    pub fn flatten(&self) -> Layout {
        let modes = self.flat_modes();
        if modes.len() == 1 {
            return Layout::raw(IntTuple::Int(modes[0].0), IntTuple::Int(modes[0].1));
        }
        let (s, d): (Vec<i64>, Vec<i64>) = modes.into_iter().unzip();
        Layout::raw(IntTuple::flat(&s), IntTuple::flat(&d))
    }

    /// Evaluates the layout at the 1-D index `idx` (colexicographic; the last mode extends past
    /// the size). Any `i64` index is accepted: negative indices split as Rust's `rem_euclid`
    /// does, and an offset far past the cosize that overflows `i64` wraps.
    pub fn call(&self, idx: i64) -> i64 {
        eval_index(&self.shape, &self.stride, idx)
    }

    /// Evaluates the layout at a (nested) coordinate. An integer in place of a tuple mode is a 1-D
    /// index into that mode, as in CuTe. Errors when the coordinate does not fit the shape.
    pub fn eval(&self, coord: &IntTuple) -> Result<i64, LayoutError> {
        eval_coord(&self.shape, &self.stride, coord).ok_or_else(|| LayoutError::BadCoordinate {
            coord: coord.to_string(),
            shape: self.shape.to_string(),
        })
    }

    /// The natural coordinate of the 1-D index `idx` (CuTe `idx2crd`, congruent with the shape).
    pub fn coord_of(&self, idx: i64) -> IntTuple {
        let mut rest = idx;
        idx2crd(&self.shape, &mut rest, true)
    }

    /// All values `L(0), ..., L(size - 1)`.
    pub fn values(&self) -> Vec<i64> {
        (0..self.size()).map(|i| self.call(i)).collect()
    }

    /// Appends modes `1:0` until the layout has `rank` modes (CuTe `append<R>`).
    pub fn append_to_rank(&self, rank: usize) -> Layout {
        let mut modes = self.modes();
        while modes.len() < rank {
            modes.push(Layout::raw(IntTuple::Int(1), IntTuple::Int(0)));
        }
        if modes.len() == 1 {
            self.clone()
        } else {
            Layout::tuple_of(modes)
        }
    }
}

/// Splits `rest` into the natural coordinate of `shape`; `last` says this mode takes the whole
/// quotient (the colexicographic extension).
fn idx2crd(shape: &IntTuple, rest: &mut i64, last: bool) -> IntTuple {
    match shape {
        IntTuple::Int(s) => {
            let c = if last { *rest } else { rest.rem_euclid(*s) };
            *rest = rest.div_euclid(*s);
            IntTuple::Int(c)
        }
        IntTuple::Tuple(m) => {
            let n = m.len();
            IntTuple::Tuple(
                m.iter()
                    .enumerate()
                    .map(|(i, s)| idx2crd(s, rest, last && i + 1 == n))
                    .collect(),
            )
        }
    }
}

fn eval_index(shape: &IntTuple, stride: &IntTuple, idx: i64) -> i64 {
    let mut rest = idx;
    let mut acc = 0;
    eval_leaves(shape, stride, &mut rest, &mut acc, true);
    acc
}

/// Walks the leaves colexicographically without building the coordinate: every leaf takes
/// `rest mod extent` except the very last, which takes the whole quotient.
fn eval_leaves(shape: &IntTuple, stride: &IntTuple, rest: &mut i64, acc: &mut i64, last: bool) {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            let c = if last { *rest } else { rest.rem_euclid(*s) };
            *rest = rest.div_euclid(*s);
            // Far past the size (the last mode's extension) an offset may not fit: it wraps
            // rather than panics; below the size every offset is bounded by the cosize.
            *acc = acc.wrapping_add(c.wrapping_mul(*d));
        }
        (IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            let n = s.len();
            for (i, (s, d)) in s.iter().zip(d).enumerate() {
                eval_leaves(s, d, rest, acc, last && i + 1 == n);
            }
        }
        _ => {}
    }
}

fn eval_coord(shape: &IntTuple, stride: &IntTuple, coord: &IntTuple) -> Option<i64> {
    match (coord, shape) {
        (IntTuple::Int(c), _) => {
            if *c < 0 || *c >= shape.product() {
                return None;
            }
            Some(eval_index(shape, stride, *c))
        }
        (IntTuple::Tuple(c), IntTuple::Tuple(s)) if c.len() == s.len() => {
            let d = stride.modes();
            let mut sum = 0;
            for ((c, s), d) in c.iter().zip(s).zip(d) {
                sum += eval_coord(s, d, c)?;
            }
            Some(sum)
        }
        _ => None,
    }
}

impl fmt::Display for Layout {
    /// CuTe notation without spaces: `((2,2),3):((24,2),8)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

impl std::str::FromStr for Layout {
    type Err = crate::calc::CalcError;

    /// Parses CuTe notation `shape:stride` (or a bare shape, taken column-major).
    fn from_str(s: &str) -> Result<Layout, Self::Err> {
        crate::calc::parse_layout(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn colexicographic_evaluation() {
        let a = l("((2,2),3):((24,2),8)");
        assert_eq!(a.size(), 12);
        assert_eq!(a.rank(), 2);
        assert_eq!(a.depth(), 2);
        assert_eq!(a.values(), [0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42]);
        assert_eq!(a.cosize(), 43);
        let c = IntTuple::tuple([IntTuple::tuple([1.into(), 1.into()]), 2.into()]);
        assert_eq!(a.eval(&c).unwrap(), 24 + 2 + 16);
        // An integer in place of the first mode indexes it.
        assert_eq!(a.eval(&IntTuple::tuple([3.into(), 2.into()])).unwrap(), 42);
        assert_eq!(a.eval(&IntTuple::Int(11)).unwrap(), 42);
        assert!(a.eval(&IntTuple::tuple([4.into(), 0.into()])).is_err());
    }

    #[test]
    fn last_mode_extends() {
        assert_eq!(l("(4,2):(1,4)").call(9), 9);
        assert_eq!(l("(4,2):(2,1)").call(9), 2 + 2);
    }

    #[test]
    fn compact_constructors() {
        let s = IntTuple::tuple([4.into(), IntTuple::tuple([2.into(), 3.into()])]);
        assert_eq!(
            Layout::column_major(s.clone()).unwrap().to_string(),
            "(4,(2,3)):(1,(4,8))"
        );
        assert_eq!(
            Layout::row_major(s).unwrap().to_string(),
            "(4,(2,3)):(6,(3,1))"
        );
    }

    #[test]
    fn bad_layouts_are_errors() {
        let shape = IntTuple::flat(&[2, 2]);
        assert!(matches!(
            Layout::new(shape, IntTuple::Int(1)),
            Err(LayoutError::NotCongruent { .. })
        ));
        assert!(matches!(
            Layout::int(0, 1),
            Err(LayoutError::NonPositiveShape { .. })
        ));
        assert!(matches!(
            Layout::int(1 << 40, 1),
            Err(LayoutError::TooLarge { .. })
        ));
    }
}
