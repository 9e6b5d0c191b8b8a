//! Why a variant declines an op: a typed rejection with its kind, shown as one row of the
//! dispatch-miss table.

use std::fmt;

use ptx_isa::{ScalarType, Target, TargetSet};

use super::op::OpKind;
use super::operand::{ExecScope, ScopeKind, StoragePair};

/// What a rejection is about, for the rejections that carry only a description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aspect {
    /// The op is not the kind the variant lowers, or lacks a part it needs (an mbarrier, `b`).
    Op,
    /// A tile's shape, or how two tiles' shapes relate.
    Shape,
    /// A memory tile's layout or swizzle.
    Layout,
    /// Where a tile starts (its base: address kind, alignment).
    Base,
    /// A tile's element type or a pair of them.
    ElementType,
    /// A register tile's registers (count, class).
    Registers,
    /// A register tile's thread-value layout.
    Fragment,
    /// The access width or granularity the hardware needs.
    Width,
}

/// Why a variant does not take an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The variant does not run on the target.
    Target {
        /// The op's target.
        target: Target,
        /// The variant's targets.
        supported: TargetSet,
    },
    /// An operand has a run-time pitch or bounds and the variant honours neither.
    View {
        /// The operand, as displayed.
        operand: String,
    },
    /// A forced variant name that the op has no variant of.
    UnknownName {
        /// The op.
        op: OpKind,
        /// The name asked for.
        name: String,
    },
    /// The (destination, source) storages are not ones the variant moves between.
    Storage {
        /// The op's storages.
        got: StoragePair,
        /// The variant's.
        allowed: &'static [StoragePair],
    },
    /// The op runs at a scope the variant does not take.
    Scope {
        /// The op's scope.
        got: ExecScope,
        /// The variant's.
        allowed: &'static [ScopeKind],
    },
    /// Source and destination element types differ.
    ElementTypes {
        /// The source's.
        src: ScalarType,
        /// The destination's.
        dst: ScalarType,
    },
    /// Source and destination element counts differ.
    ElementCount {
        /// The source's.
        src: u64,
        /// The destination's.
        dst: u64,
    },
    /// Anything else about the operands: what it is about, and the details.
    Operand {
        /// What it is about.
        aspect: Aspect,
        /// The details.
        detail: String,
    },
}

impl Rejection {
    /// A rejection about `aspect` of the operands.
    pub fn operand(aspect: Aspect, detail: impl Into<String>) -> Rejection {
        Rejection::Operand {
            aspect,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Target { target, supported } => {
                write!(f, "{target} lacks it (targets: {})", supported.names())
            }
            Rejection::View { operand } => {
                write!(f, "takes no run-time pitch or bounds ({operand})")
            }
            Rejection::UnknownName { op, name } => write!(f, "no {op} variant is called `{name}`"),
            Rejection::Storage { got, allowed } => {
                write!(f, "{got} is not ")?;
                join(f, allowed.iter())
            }
            Rejection::Scope { got, allowed } => {
                write!(f, "scope {got} is not ")?;
                join(f, allowed.iter())
            }
            Rejection::ElementTypes { src, dst } => {
                write!(f, "element types differ: {src} and {dst}")
            }
            Rejection::ElementCount { src, dst } => write!(f, "{src} elements into {dst}"),
            Rejection::Operand { detail, .. } => f.write_str(detail),
        }
    }
}

fn join<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: impl Iterator<Item = T>,
) -> fmt::Result {
    for (i, x) in items.enumerate() {
        if i > 0 {
            f.write_str(" or ")?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

impl std::error::Error for Rejection {}
