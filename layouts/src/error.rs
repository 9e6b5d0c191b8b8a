//! Why a layout operation refused its input: each variant names the violated precondition.

/// A violated precondition of a layout operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A layout's shape and stride must have the same tree structure.
    #[error("shape {shape} and stride {stride} are not congruent")]
    NotCongruent {
        /// The shape.
        shape: String,
        /// The stride.
        stride: String,
    },
    /// Every extent of a shape must be at least 1.
    #[error("shape {shape} has an extent below 1")]
    NonPositiveShape {
        /// The shape.
        shape: String,
    },
    /// Sizes, cosizes, strides and cotargets are kept below 2^31 so that no product of two
    /// overflows; printing stops at 2^20 elements.
    #[error("{what} = {value} exceeds its limit (2^31, or 2^20 elements to print)")]
    TooLarge {
        /// What grew too large.
        what: &'static str,
        /// Its value.
        value: i128,
    },
    /// Composition's stride divisibility condition: each stride of `B` met while walking the
    /// modes of `A` must divide, or be divided by, the extent of that mode.
    #[error(
        "composition: stride divisibility condition violated: stride {stride} of B and extent \
         {extent} of A's mode {mode} divide neither way"
    )]
    StrideDivisibility {
        /// The remaining stride of the mode of B.
        stride: i64,
        /// The extent of the mode of A.
        extent: i64,
        /// The index of the mode of (coalesced) A.
        mode: usize,
    },
    /// Composition's shape divisibility condition: an extent of `B` that spans several modes of
    /// `A` must be a multiple of each mode's (remaining) extent.
    #[error(
        "composition: shape divisibility condition violated: extent {shape} of B is not a \
         multiple of the {available} elements left in A's mode {mode}"
    )]
    ShapeDivisibility {
        /// The remaining extent of the mode of B.
        shape: i64,
        /// The extent available in A's mode.
        available: i64,
        /// The index of the mode of (coalesced) A.
        mode: usize,
    },
    /// Composition works mode by mode of `B`, which needs `B`'s modes to be disjoint in `A`'s
    /// index space whenever `A` has more than one mode.
    #[error(
        "composition: disjointness condition violated: B has a mode of stride {stride} inside \
         the span {span} of its modes with smaller strides, and A has several modes"
    )]
    CompositionOverlap {
        /// The offending stride of B.
        stride: i64,
        /// The span of B's modes with smaller strides.
        span: i64,
    },
    /// Complement needs the modes, sorted by stride, not to overlap: a stride below the span of
    /// the smaller modes means the layout is not injective (or interleaves its modes).
    #[error(
        "complement: injectivity condition violated: stride {stride} is below {span}, the span \
         of the modes with smaller strides"
    )]
    ComplementOverlap {
        /// The offending stride.
        stride: i64,
        /// The span of the smaller modes.
        span: i64,
    },
    /// Complement needs each stride, sorted, to be a multiple of the span of the smaller modes.
    #[error(
        "complement: divisibility condition violated: stride {stride} is not a multiple of \
         {span}, the span of the modes with smaller strides"
    )]
    ComplementDivisibility {
        /// The offending stride.
        stride: i64,
        /// The span of the smaller modes.
        span: i64,
    },
    /// The operation is defined only for non-negative strides.
    #[error("{op}: strides must be non-negative, found {stride}")]
    NegativeStride {
        /// The operation.
        op: &'static str,
        /// The stride.
        stride: i64,
    },
    /// A tiler or profile has more modes than the layout it applies to.
    #[error("{op}: the tiler has {tiler} modes but the layout only {layout}")]
    RankMismatch {
        /// The operation.
        op: &'static str,
        /// Modes of the tiler.
        tiler: usize,
        /// Modes of the layout.
        layout: usize,
    },
    /// A coordinate must be compatible with (the prefix of) the shape and inside it.
    #[error("coordinate {coord} is not a coordinate of shape {shape}")]
    BadCoordinate {
        /// The coordinate.
        coord: String,
        /// The shape.
        shape: String,
    },
    /// A cotarget must be at least 1.
    #[error("complement: the cotarget {0} must be at least 1")]
    BadCotarget(i64),
    /// A byte swizzle moves chunks of `2^M` bytes; an element must fit inside one.
    #[error(
        "swizzle: elements of {bytes} bytes must be a power of two of at most the {chunk}-byte chunk"
    )]
    SwizzleSplitsElement {
        /// The element size in bytes.
        bytes: u32,
        /// The chunk the swizzle moves, `2^M` bytes.
        chunk: u64,
    },
    /// The operation needs a rank-2 layout.
    #[error("a rank-2 layout is needed, this one has rank {rank}")]
    RankNotTwo {
        /// The rank found.
        rank: usize,
    },
}
