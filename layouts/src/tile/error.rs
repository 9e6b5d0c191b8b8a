//! Why a tile-layout operation refused its input.

use crate::error::LayoutError;

/// A violated precondition of a tile-layout operation, or a notation error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TileError {
    /// The notation could not be read; `column` counts characters from 1.
    #[error("column {column}: {message}")]
    Syntax {
        /// 1-based character column.
        column: usize,
        /// What was expected.
        message: String,
    },
    /// No axis has this name.
    #[error("unknown axis `{0}`")]
    UnknownAxis(String),
    /// Extents must be at least 1 and shard extents and strides congruent.
    #[error("{0}")]
    Malformed(String),
    /// A coordinate must have one entry per dimension, each inside its extent.
    #[error("coordinate {coord:?} is outside the tile shape {shape:?}")]
    BadCoordinate {
        /// The coordinate.
        coord: Vec<i64>,
        /// The tile shape.
        shape: Vec<i64>,
    },
    /// A slice must fall on the iterator structure of its dimension.
    #[error("slice {start}..{end} of dimension {dim} does not fall on its iterators {extents:?}")]
    BadSlice {
        /// The dimension.
        dim: usize,
        /// First index.
        start: i64,
        /// One past the last index.
        end: i64,
        /// The extents of the dimension's iterators.
        extents: Vec<i64>,
    },
    /// Two layouts combined dimension by dimension must have the same number of dimensions.
    #[error("{op}: ranks differ ({left} vs {right})")]
    RankMismatch {
        /// The operation.
        op: &'static str,
        /// Rank of the first.
        left: usize,
        /// Rank of the second.
        right: usize,
    },
    /// Conversion to a CuTe layout needs every iterator on one axis and no replica or offset.
    #[error("to_cute: {0}")]
    NotCute(String),
    /// A thread-value view needs the thread and value iterators each to form a compact range.
    #[error("thread_value: {0}")]
    NotThreadValue(String),
    /// A CuTe layout operation failed.
    #[error(transparent)]
    Layout(#[from] LayoutError),
}
