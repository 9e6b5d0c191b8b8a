//! The tile ops: what moves or multiplies, between which operands, at which scope.

use std::fmt;

use ptx_isa::{Imm, Pred, Reg, Src, Target, ty};

use super::operand::{ExecScope, TileRef};

/// The kind of a tile op (what the registry files variants under).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A synchronous copy.
    Copy,
    /// An asynchronous copy; its completion (mbarrier wait, bulk group wait, tcgen05.wait) is the
    /// caller's.
    CopyAsync,
    /// An asynchronous matrix multiply-accumulate; its completion (wgmma.wait_group,
    /// tcgen05.commit) is the caller's.
    GemmAsync,
    /// Fills a tile with a constant.
    Fill,
    /// Converts a tile to another element type.
    Cast,
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::Copy => "copy",
            OpKind::CopyAsync => "copy_async",
            OpKind::GemmAsync => "gemm_async",
            OpKind::Fill => "fill",
            OpKind::Cast => "cast",
        })
    }
}

/// Whether a matrix multiply accumulates into D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulate {
    /// D = A·B + D.
    Yes,
    /// D = A·B.
    No,
    /// Decided at run time.
    Pred(Pred),
}

/// One tile op with its operands.
#[derive(Debug, Clone)]
pub enum TileOp<'a> {
    /// `dst = src`.
    Copy {
        /// Destination.
        dst: &'a TileRef,
        /// Source.
        src: &'a TileRef,
    },
    /// `dst = src`, asynchronously.
    CopyAsync {
        /// Destination.
        dst: &'a TileRef,
        /// Source.
        src: &'a TileRef,
        /// The mbarrier (shared address) that completes the copy, for TMA and bulk loads.
        mbar: Option<Reg<ty::U32>>,
        /// A 16-bit mask of the cluster's CTAs to multicast to.
        multicast: Option<Src<ty::U16>>,
    },
    /// `d = a·b (+ d)`.
    GemmAsync {
        /// The accumulator.
        d: &'a TileRef,
        /// A (M x K).
        a: &'a TileRef,
        /// B (N x K, K-major: the GEMM's `A·Bᵀ`).
        b: &'a TileRef,
        /// Accumulate into d or overwrite it.
        accumulate: Accumulate,
    },
    /// `dst = value`.
    Fill {
        /// Destination.
        dst: &'a TileRef,
        /// The value.
        value: Imm,
    },
    /// `dst = (dst type) src`.
    Cast {
        /// Destination.
        dst: &'a TileRef,
        /// Source.
        src: &'a TileRef,
    },
}

impl TileOp<'_> {
    /// The op's kind.
    pub fn kind(&self) -> OpKind {
        match self {
            TileOp::Copy { .. } => OpKind::Copy,
            TileOp::CopyAsync { .. } => OpKind::CopyAsync,
            TileOp::GemmAsync { .. } => OpKind::GemmAsync,
            TileOp::Fill { .. } => OpKind::Fill,
            TileOp::Cast { .. } => OpKind::Cast,
        }
    }

    /// `(dst, src)` of a copy or cast.
    pub fn dst_src(&self) -> Option<(&TileRef, &TileRef)> {
        match self {
            TileOp::Copy { dst, src }
            | TileOp::CopyAsync { dst, src, .. }
            | TileOp::Cast { dst, src } => Some((dst, src)),
            _ => None,
        }
    }
}

/// An op in its context: the op, the threads that run it, the target.
#[derive(Debug, Clone)]
pub struct OpCtx<'a> {
    /// The op.
    pub op: TileOp<'a>,
    /// The threads that run it.
    pub scope: ExecScope,
    /// The target.
    pub target: Target,
}

impl fmt::Display for OpCtx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {} scope on {}",
            self.op.kind(),
            self.scope,
            self.target
        )?;
        match &self.op {
            TileOp::Copy { dst, src } | TileOp::Cast { dst, src } => {
                write!(f, "\n  dst: {dst}\n  src: {src}")
            }
            TileOp::CopyAsync {
                dst,
                src,
                mbar,
                multicast,
            } => {
                write!(f, "\n  dst: {dst}\n  src: {src}")?;
                if mbar.is_some() {
                    write!(f, "\n  mbarrier: yes")?;
                }
                if multicast.is_some() {
                    write!(f, "\n  multicast: yes")?;
                }
                Ok(())
            }
            TileOp::GemmAsync { d, a, b, .. } => write!(f, "\n  d: {d}\n  a: {a}\n  b: {b}"),
            TileOp::Fill { dst, value } => write!(f, "\n  dst: {dst}\n  value: {value}"),
        }
    }
}
