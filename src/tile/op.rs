//! The tile ops: what moves or multiplies, between which operands, at which scope.

use std::fmt;

use ptx_isa::builder::TmaReduceOp;
use ptx_isa::{Imm, Pred, Reg, Src, Target, ty};

use smem::pipeline::protocol::BarrierAt;
use smem::pipeline::sync::NamedBarrier;

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
    /// An asynchronous reduction of a tile into another (`dst = dst (op) src`, the reduction
    /// done where `dst` lies: the TMA's `cp.reduce.async.bulk.tensor` into L2); its completion
    /// (bulk group wait) is the caller's.
    ReduceAsync,
    /// Fills a tile with a constant.
    Fill,
    /// Converts a tile to another element type.
    Cast,
    /// Combines tiles element by element.
    Elementwise,
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::Copy => "copy",
            OpKind::CopyAsync => "copy_async",
            OpKind::GemmAsync => "gemm_async",
            OpKind::ReduceAsync => "reduce_async",
            OpKind::Fill => "fill",
            OpKind::Cast => "cast",
            OpKind::Elementwise => "elementwise",
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

/// What an elementwise op computes from its inputs `a` (and `b`), element by element.
#[derive(Debug, Clone, PartialEq)]
pub enum Elementwise {
    /// `alpha * a`.
    Scale {
        /// The factor.
        alpha: Src<ty::F32>,
    },
    /// `alpha * a + beta * b` (a GEMM epilogue's `alpha A·B + beta C`).
    Axpby {
        /// The factor of `a`.
        alpha: Src<ty::F32>,
        /// The factor of `b`.
        beta: Src<ty::F32>,
    },
    /// `a + b`.
    Add,
    /// `a * b`.
    Mul,
    /// `max(a, 0)`.
    Relu,
    /// `max(a, b)`.
    Max,
    /// `min(a, b)`.
    Min,
    /// `a - b`.
    Sub,
    /// `a * scale + b`, one `fma` (`b` per element).
    Fma {
        /// The factor of `a`.
        scale: Src<ty::F32>,
    },
    /// `2^(a * scale + bias)`: an `fma` and an `ex2.approx.ftz` (PTX ISA 9.7.3.21), the online
    /// softmax's exponential with its scale and the row maximum folded in.
    Exp2 {
        /// The factor of `a` (`softmax_scale * log2 e`).
        scale: Src<ty::F32>,
        /// The added term (`-max * scale`).
        bias: Src<ty::F32>,
    },
    /// `1 / a` (`rcp.approx.ftz.f32`, 9.7.3.17).
    Rcp,
    /// `1 / sqrt(a)` (`rsqrt.approx.ftz.f32`, 9.7.3.19).
    Rsqrt,
}

impl Elementwise {
    /// Whether it reads a second input.
    pub fn binary(&self) -> bool {
        matches!(
            self,
            Elementwise::Axpby { .. }
                | Elementwise::Add
                | Elementwise::Mul
                | Elementwise::Max
                | Elementwise::Min
                | Elementwise::Sub
                | Elementwise::Fma { .. }
        )
    }
}

impl fmt::Display for Elementwise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Elementwise::Scale { .. } => "alpha * a",
            Elementwise::Axpby { .. } => "alpha * a + beta * b",
            Elementwise::Add => "a + b",
            Elementwise::Mul => "a * b",
            Elementwise::Relu => "max(a, 0)",
            Elementwise::Max => "max(a, b)",
            Elementwise::Min => "min(a, b)",
            Elementwise::Sub => "a - b",
            Elementwise::Fma { .. } => "a * scale + b",
            Elementwise::Exp2 { .. } => "2^(a * scale + bias)",
            Elementwise::Rcp => "1 / a",
            Elementwise::Rsqrt => "1 / sqrt(a)",
        })
    }
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
        /// The named mbarrier that completes the copy, for TMA and bulk loads: its shared
        /// address and its place in the kernel's barrier protocol, which records the bytes the
        /// copy delivers ([`TileOp::completes_on`]).
        mbar: Option<NamedBarrier>,
        /// A 16-bit mask of the cluster's CTAs to multicast to.
        multicast: Option<Src<ty::U16>>,
    },
    /// `dst = dst (op) src`, asynchronously: the reduction is done where `dst` lies (a TMA
    /// tensor's box: in L2, PTX ISA 9.7.9.27 `cp.reduce.async.bulk.tensor`).
    ReduceAsync {
        /// Destination, also the reduction's other input.
        dst: &'a TileRef,
        /// Source.
        src: &'a TileRef,
        /// The reduction.
        op: TmaReduceOp,
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
        /// A run-time count of the K columns that contribute, where the rest are known to add
        /// nothing (an attention's `P` past the last key): the variant may skip k-steps past
        /// it (wgmma: in quarters of K). `None`: all of K.
        k_extent: Option<Reg<ty::U32>>,
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
    /// `dst = f(a, b)` element by element (`dst` may be `a`).
    Elementwise {
        /// Destination.
        dst: &'a TileRef,
        /// The first input.
        a: &'a TileRef,
        /// The second input, for the binary functions.
        b: Option<&'a TileRef>,
        /// The function.
        f: Elementwise,
    },
}

impl TileOp<'_> {
    /// The op's kind.
    pub fn kind(&self) -> OpKind {
        match self {
            TileOp::Copy { .. } => OpKind::Copy,
            TileOp::CopyAsync { .. } => OpKind::CopyAsync,
            TileOp::ReduceAsync { .. } => OpKind::ReduceAsync,
            TileOp::GemmAsync { .. } => OpKind::GemmAsync,
            TileOp::Fill { .. } => OpKind::Fill,
            TileOp::Cast { .. } => OpKind::Cast,
            TileOp::Elementwise { .. } => OpKind::Elementwise,
        }
    }

    /// Every operand tile.
    pub fn operands(&self) -> Vec<&TileRef> {
        match self {
            TileOp::Copy { dst, src }
            | TileOp::CopyAsync { dst, src, .. }
            | TileOp::ReduceAsync { dst, src, .. }
            | TileOp::Cast { dst, src } => vec![dst, src],
            TileOp::GemmAsync { d, a, b, .. } => vec![d, a, b],
            TileOp::Fill { dst, .. } => vec![dst],
            TileOp::Elementwise { dst, a, b, .. } => {
                let mut v = vec![*dst, *a];
                v.extend(b.iter().copied());
                v
            }
        }
    }

    /// `(dst, src)` of a copy or cast.
    pub fn dst_src(&self) -> Option<(&TileRef, &TileRef)> {
        match self {
            TileOp::Copy { dst, src }
            | TileOp::CopyAsync { dst, src, .. }
            | TileOp::ReduceAsync { dst, src, .. }
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
            TileOp::ReduceAsync { dst, src, op } => {
                write!(f, "\n  dst: {dst}\n  src: {src}\n  reduce: {op:?}")
            }
            TileOp::GemmAsync {
                d, a, b, k_extent, ..
            } => {
                write!(f, "\n  d: {d}\n  a: {a}\n  b: {b}")?;
                match k_extent {
                    Some(e) => write!(f, "\n  k extent: {e}"),
                    None => Ok(()),
                }
            }
            TileOp::Fill { dst, value } => write!(f, "\n  dst: {dst}\n  value: {value}"),
            TileOp::Elementwise { dst, a, b, f: func } => {
                write!(f, "\n  dst: {dst}\n  a: {a}")?;
                if let Some(b) = b {
                    write!(f, "\n  b: {b}")?;
                }
                write!(f, "\n  f: {func}")
            }
        }
    }
}

impl TileOp<'_> {
    /// The named barrier an asynchronous copy completes on and the bytes it delivers to it per
    /// execution (the destination tile's bytes: a multicast delivers them to each CTA of its
    /// mask, and each CTA's barrier of that name counts its own), or `None` for an op that
    /// completes on no barrier.
    pub fn completes_on(&self) -> Option<(BarrierAt, u64)> {
        match self {
            TileOp::CopyAsync {
                dst,
                mbar: Some(bar),
                ..
            } => Some((bar.at, dst.bytes())),
            _ => None,
        }
    }
}
