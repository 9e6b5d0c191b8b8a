//! Slicing a tile layout: a sub-range of one dimension that falls on its iterators.

use super::{Iter, TileError, TileLayout};

impl TileLayout {
    /// The sub-tile `start..end` of dimension `dim`, a view with the same axes.
    ///
    /// * `@pre` the range falls on the iterator structure: with the dimension's iterators
    ///   `e_0, ..., e_k` (row-major) and `inner = e_{j+1} * ... * e_k`, the length is
    ///   `c * inner` with `c` dividing into iterator `j` (`start / inner % e_j + c <= e_j`) and
    ///   `start` a multiple of `inner` ([`TileError::BadSlice`])
    /// * `@post` `result.apply(x)` equals `self.apply(x')` where `x'` is `x` with `start` added
    ///   in dimension `dim`
    ///
    /// ```
    /// use layouts::tile::TileLayout;
    /// let l: TileLayout = "S[(8, 16):(16, 1)]".parse()?;
    /// assert_eq!(l.slice(1, 8, 16)?.to_string(), "S[(8, 8):(16, 1)] + 8");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, dim: usize, start: i64, end: i64) -> Result<TileLayout, TileError> {
        let shape = self.shape();
        let Some(iters) = self.dims.get(dim) else {
            return Err(TileError::BadCoordinate {
                coord: vec![dim as i64],
                shape,
            });
        };
        let bad = || TileError::BadSlice {
            dim,
            start,
            end,
            extents: iters.iter().map(|i| i.extent).collect(),
        };
        if start < 0 || end > shape[dim] || start >= end {
            return Err(bad());
        }
        let len = end - start;
        // The innermost iterators j..=k that can hold the range: len = c * inner, c <= e_j.
        let mut inner = 1;
        let mut j = iters.len() - 1;
        while len > inner * iters[j].extent && j > 0 {
            inner *= iters[j].extent;
            j -= 1;
        }
        let c = len / inner;
        if len % inner != 0
            || start % inner != 0
            || (start / inner) % iters[j].extent + c > iters[j].extent
        {
            return Err(bad());
        }
        let mut out = self.clone();
        // The fixed coordinate contributes to the offset: start's digits on iterators 0..=j.
        let mut rest = start / inner;
        let mut new_iters: Vec<Iter> = Vec::new();
        for (k, it) in iters.iter().enumerate().rev() {
            if k > j {
                new_iters.push(*it);
                continue;
            }
            let digit = rest % it.extent;
            rest /= it.extent;
            *out.offset.entry(it.axis).or_insert(0) += digit * it.stride;
            if k == j {
                new_iters.push(Iter::new(c, it.stride, it.axis));
            }
        }
        new_iters.reverse();
        out.dims[dim] = new_iters;
        out.offset.retain(|_, v| *v != 0);
        Ok(out)
    }
}
