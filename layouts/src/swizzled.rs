//! A swizzle as the last stage of a layout: `Swizzle<B, M, S> ∘ L` (CuTe `ComposedLayout` of a
//! swizzle functor after a layout, `include/cute/swizzle_layout.hpp`), applied to element
//! offsets or to byte offsets.

use std::fmt;

use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;
use crate::swizzle::Swizzle;

/// The unit of the offsets the swizzle sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SwizzleUnit {
    /// The swizzle permutes element offsets (CuTe's `Swizzle<3,3,3>` on 16-bit elements).
    Elements,
    /// The swizzle permutes byte offsets of elements of this many bytes (the TMA / wgmma
    /// descriptor modes `Swizzle<B,4,3>` on bytes, PTX ISA 9.7.9.27.1.2 "Shared memory matrix
    /// layout").
    Bytes(u32),
}

/// `swizzle ∘ layout`: offsets from the layout, then permuted by the swizzle.
///
/// ```
/// use layouts::{Layout, Swizzle, SwizzledLayout, SwizzleUnit};
/// // A 128-byte swizzled tile of 8 rows x 64 bf16: row r's 16-byte chunks XOR-permuted by r.
/// let rows: Layout = "(8,64):(64,1)".parse()?;
/// let sw = SwizzledLayout::new(Swizzle::B128, SwizzleUnit::Bytes(2), rows)?;
/// let at = |r: i64, c: i64| sw.eval(&layouts::IntTuple::flat(&[r, c]));
/// assert_eq!(at(0, 8)?, 8);      // row 0: unchanged
/// assert_eq!(at(1, 0)?, 64 + 8); // row 1, chunk 0 -> chunk 1
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SwizzledLayout {
    swizzle: Swizzle,
    unit: SwizzleUnit,
    layout: Layout,
}

impl SwizzledLayout {
    /// `swizzle ∘ layout` in `unit`.
    ///
    /// * `@pre` the layout's strides are non-negative ([`LayoutError::NegativeStride`])
    /// * `@pre` in bytes, the element size is a power of two no larger than the `2^M`-byte
    ///   chunks the swizzle moves, so no element is split ([`LayoutError::SwizzleSplitsElement`])
    pub fn new(
        swizzle: Swizzle,
        unit: SwizzleUnit,
        layout: Layout,
    ) -> Result<SwizzledLayout, LayoutError> {
        if let Some(&(_, d)) = layout.flat_modes().iter().find(|&&(_, d)| d < 0) {
            return Err(LayoutError::NegativeStride {
                op: "swizzle",
                stride: d,
            });
        }
        if let SwizzleUnit::Bytes(b) = unit {
            if b == 0
                || !b.is_power_of_two()
                || (!swizzle.is_identity() && u64::from(b) > 1u64 << swizzle.base())
            {
                return Err(LayoutError::SwizzleSplitsElement {
                    bytes: b,
                    chunk: 1u64 << swizzle.base(),
                });
            }
        }
        Ok(SwizzledLayout {
            swizzle,
            unit,
            layout,
        })
    }

    /// The swizzle.
    pub fn swizzle(&self) -> Swizzle {
        self.swizzle
    }

    /// The unit the swizzle works in.
    pub fn unit(&self) -> SwizzleUnit {
        self.unit
    }

    /// The layout before the swizzle.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The swizzled element offset of index `idx`.
    pub fn call(&self, idx: i64) -> i64 {
        self.permute(self.layout.call(idx))
    }

    /// The swizzled element offset of a coordinate.
    pub fn eval(&self, coord: &IntTuple) -> Result<i64, LayoutError> {
        Ok(self.permute(self.layout.eval(coord)?))
    }

    /// The swizzled offsets of indices `0..size`.
    pub fn values(&self) -> Vec<i64> {
        (0..self.layout.size()).map(|i| self.call(i)).collect()
    }

    /// Applies the swizzle to one element offset, in the configured unit.
    fn permute(&self, offset: i64) -> i64 {
        // Offsets are non-negative: the strides are (checked in `new`) and indices count up.
        let o = offset.max(0) as u64;
        let out = match self.unit {
            SwizzleUnit::Elements => self.swizzle.apply(o),
            SwizzleUnit::Bytes(b) => self.swizzle.apply(o * u64::from(b)) / u64::from(b),
        };
        out as i64
    }
}

impl fmt::Display for SwizzledLayout {
    /// `Sw<3,4,3> o (8,64):(64,1)`, with ` (bytes of 2)` when the swizzle sees bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {}", self.swizzle, self.layout)?;
        if let SwizzleUnit::Bytes(b) = self.unit {
            write!(f, " (bytes of {b})")?;
        }
        Ok(())
    }
}
