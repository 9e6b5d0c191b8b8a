//! The check of a library call's operands that the attention's and the decode's launchers share:
//! each named tensor of the rank and the element type its kernel takes (what a kernel's
//! signature cannot say where the rank depends on the call, as packed or batched sequences).

use ptx_isa::ScalarType;

use crate::runtime::TensorDesc;

/// An operand of the wrong rank or element type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperandError {
    /// A tensor of the wrong rank.
    #[error("`{tensor}` has shape {shape:?}; it takes rank {rank}")]
    Rank {
        /// The tensor (`q`).
        tensor: &'static str,
        /// Its shape.
        shape: Vec<usize>,
        /// The rank it takes.
        rank: usize,
    },
    /// An element type other than the kernel's.
    #[error("`{tensor}` holds {got}; the kernel takes {want}")]
    DType {
        /// The tensor.
        tensor: &'static str,
        /// Its element type.
        got: ScalarType,
        /// The one it takes.
        want: ScalarType,
    },
}

/// Checks each operand `(name, tensor, rank, element type)` in order: the first whose rank, then
/// whose element type, is not the one given is the error.
pub fn check_ranks_and_types(
    operands: &[(&'static str, &TensorDesc, usize, ScalarType)],
) -> Result<(), OperandError> {
    for &(tensor, d, rank, want) in operands {
        if d.shape.len() != rank {
            let shape = d.shape.clone();
            return Err(OperandError::Rank {
                tensor,
                shape,
                rank,
            });
        }
        if d.dtype != want {
            let got = d.dtype;
            return Err(OperandError::DType { tensor, got, want });
        }
    }
    Ok(())
}
