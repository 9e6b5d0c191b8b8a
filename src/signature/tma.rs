//! What a kernel declares of a global tensor it moves through TMA: the box one copy moves, the
//! swizzle the box lands in shared memory with, the traversal step. With the tensor's element
//! type and shape ([`super::Param::TmaTensor`]) it is everything the launcher needs to build the
//! `CUtensorMap` from the device tensor a caller passes, so no caller restates it.

use std::fmt;

use smem::SwizzleMode;

/// The TMA box of a [`super::Param::TmaTensor`]. Dimensions are outermost first, as the tensor's
/// shape (the launcher reverses them into the driver's innermost-first order).
///
/// ```
/// use ptxkit::signature::TmaBox;
/// use ptxkit::smem::SwizzleMode;
/// let b = TmaBox::new([32, 32]).swizzle(SwizzleMode::B128);
/// assert_eq!(b.elements(), 1024);
/// assert_eq!(b.element_strides, [1, 1]);
/// assert_eq!(b.to_string(), "box [32, 32], swizzle 128B");
/// let l2 = b.l2_promotion(ptxkit::signature::L2Promotion::B256);
/// assert_eq!(l2.to_string(), "box [32, 32], swizzle 128B, L2 promotion 256B");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TmaBox {
    /// The box's extent in each dimension, outermost first (`boxDim`, 1 to 256 each).
    pub shape: Vec<u32>,
    /// The traversal step in each dimension, outermost first (`elementStrides`, 1 to 8; 1 for a
    /// dense box).
    pub element_strides: Vec<u32>,
    /// The swizzle the box is written to (and read from) shared memory with.
    pub swizzle: SwizzleMode,
    /// How far the TMA unit widens each of the box's global reads into L2
    /// (`CUtensorMapL2promotion`; none by default).
    pub l2_promotion: L2Promotion,
}

/// L2 promotion of a tensor map's global reads (`CUtensorMapL2promotion`, CUDA Driver API
/// `cuTensorMapEncodeTiled`): the L2 sector size a box's rows are fetched in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum L2Promotion {
    /// None.
    #[default]
    None,
    /// 64 bytes.
    B64,
    /// 128 bytes.
    B128,
    /// 256 bytes.
    B256,
}

impl TmaBox {
    /// A dense box of `shape` (outermost first), no swizzle.
    pub fn new(shape: impl Into<Vec<u32>>) -> TmaBox {
        let shape = shape.into();
        TmaBox {
            element_strides: vec![1; shape.len()],
            shape,
            swizzle: SwizzleMode::None,
            l2_promotion: L2Promotion::None,
        }
    }

    /// The same box with its global reads promoted to `l2` sectors (operands read by many CTAs,
    /// such as a GEMM's A and B, take [`L2Promotion::B256`]).
    pub fn l2_promotion(mut self, l2: L2Promotion) -> TmaBox {
        self.l2_promotion = l2;
        self
    }

    /// The same box with `swizzle`.
    pub fn swizzle(mut self, swizzle: SwizzleMode) -> TmaBox {
        self.swizzle = swizzle;
        self
    }

    /// The same box traversed with `strides` (outermost first).
    pub fn element_strides(mut self, strides: impl Into<Vec<u32>>) -> TmaBox {
        self.element_strides = strides.into();
        self
    }

    /// Elements one copy of the box moves (the element strides ignored, as the driver's
    /// transaction count for a dense box).
    pub fn elements(&self) -> u64 {
        self.shape.iter().map(|&d| u64::from(d)).product()
    }
}

impl fmt::Display for TmaBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(ToString::to_string).collect();
        write!(f, "box [{}]", dims.join(", "))?;
        if self.element_strides.iter().any(|&s| s != 1) {
            let s: Vec<String> = self
                .element_strides
                .iter()
                .map(ToString::to_string)
                .collect();
            write!(f, ", element strides [{}]", s.join(", "))?;
        }
        match self.swizzle {
            SwizzleMode::None => {}
            s => write!(f, ", swizzle {}B", s.span_bytes())?,
        }
        match self.l2_promotion {
            L2Promotion::None => Ok(()),
            L2Promotion::B64 => write!(f, ", L2 promotion 64B"),
            L2Promotion::B128 => write!(f, ", L2 promotion 128B"),
            L2Promotion::B256 => write!(f, ", L2 promotion 256B"),
        }
    }
}
