//! Grouping a tile layout's iterators by a buffer shape: TIRx applies a layout "with
//! `shape=shape`", so `S[(2, 64, 8):(...)]` serves a `(128, 8)` buffer by grouping its first two
//! iterators into the first dimension.

use super::{TileError, TileLayout};

impl TileLayout {
    /// The same iterators (in order) grouped into dimensions of the given extents.
    ///
    /// * `@pre` consecutive iterators multiply exactly to each extent; an iterator is never split
    ///   ([`TileError::Malformed`])
    /// * `@post result.shape() == shape`, and the row-major index of every element is unchanged
    ///
    /// ```
    /// use layouts::tile::{Axis, TileLayout};
    /// let l: TileLayout = "S[(2, 64, 8):(64@tid_in_wg, 1@tid_in_wg, 1)]".parse()?;
    /// let g = l.group_by(&[128, 8])?;
    /// assert_eq!(g.to_string(), "S[((2, 64), 8):((64@tid_in_wg, 1@tid_in_wg), 1)]");
    /// assert_eq!(g.apply(&[70, 3])?[0].get(Axis::TidInWg), 70);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group_by(&self, shape: &[i64]) -> Result<TileLayout, TileError> {
        let bad = || {
            TileError::Malformed(format!(
                "the iterators of {self} do not group into the shape {shape:?} without splitting one"
            ))
        };
        let mut iters = self.dims.iter().flatten().copied().peekable();
        let mut dims = Vec::with_capacity(shape.len());
        for &extent in shape {
            let mut dim = Vec::new();
            let mut product = 1;
            // Extent-1 iterators at a boundary join the dimension before them.
            while product < extent
                || (product == extent && iters.peek().is_some_and(|i| i.extent == 1))
            {
                let Some(it) = iters.next() else {
                    return Err(bad());
                };
                product *= it.extent;
                dim.push(it);
            }
            if product != extent || dim.is_empty() {
                return Err(bad());
            }
            dims.push(dim);
        }
        if iters.next().is_some() {
            return Err(bad());
        }
        TileLayout::new(dims, self.replica.clone(), self.offset.clone())
    }
}
