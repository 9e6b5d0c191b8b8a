//! The named axes a tile layout maps onto.

use std::fmt;
use std::str::FromStr;

use super::TileError;

/// What an axis indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AxisKind {
    /// An element offset in a memory (`m`).
    Memory,
    /// A thread coordinate inside a CTA.
    Thread,
    /// A CTA or cluster coordinate.
    Cta,
    /// A Blackwell tensor-memory address coordinate (`TLane`, `TCol`).
    TensorMemory,
}

/// A named axis: memory, thread, CTA/cluster or tensor-memory coordinate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    /// `m`: the element offset in memory (registers, shared or global).
    M,
    /// `laneid`: lane in the warp, 0..32.
    LaneId,
    /// `warpid`: warp in the CTA.
    WarpId,
    /// `tid_in_wg`: thread in the warpgroup, 0..128.
    TidInWg,
    /// `wid_in_wg`: warp in the warpgroup, 0..4.
    WidInWg,
    /// `wgid`: warpgroup in the CTA.
    WgId,
    /// `tx`: thread index in the CTA (`%tid.x`).
    Tx,
    /// `cta_in_cluster`: CTA rank in its cluster (`%cluster_ctarank`); the peer CTA of a
    /// `cta_group::2` pair.
    CtaInCluster,
    /// `bx`: CTA index in the grid (`%ctaid.x`).
    Bx,
    /// `TLane`: tensor-memory lane (data-path row), 0..128.
    TLane,
    /// `TCol`: tensor-memory column of 32-bit cells, 0..512.
    TCol,
}

impl Axis {
    /// Every axis, in notation order.
    pub const ALL: [Axis; 11] = [
        Axis::M,
        Axis::LaneId,
        Axis::WarpId,
        Axis::TidInWg,
        Axis::WidInWg,
        Axis::WgId,
        Axis::Tx,
        Axis::CtaInCluster,
        Axis::Bx,
        Axis::TLane,
        Axis::TCol,
    ];

    /// The name used in the notation (`1@tid_in_wg`).
    pub const fn name(self) -> &'static str {
        match self {
            Axis::M => "m",
            Axis::LaneId => "laneid",
            Axis::WarpId => "warpid",
            Axis::TidInWg => "tid_in_wg",
            Axis::WidInWg => "wid_in_wg",
            Axis::WgId => "wgid",
            Axis::Tx => "tx",
            Axis::CtaInCluster => "cta_in_cluster",
            Axis::Bx => "bx",
            Axis::TLane => "TLane",
            Axis::TCol => "TCol",
        }
    }

    /// What the axis indexes.
    pub const fn kind(self) -> AxisKind {
        match self {
            Axis::M => AxisKind::Memory,
            Axis::LaneId | Axis::WarpId | Axis::TidInWg | Axis::WidInWg | Axis::WgId | Axis::Tx => {
                AxisKind::Thread
            }
            Axis::CtaInCluster | Axis::Bx => AxisKind::Cta,
            Axis::TLane | Axis::TCol => AxisKind::TensorMemory,
        }
    }

    /// True for the thread axes, which [`super::TileLayout::storage`] drops.
    pub const fn is_thread(self) -> bool {
        matches!(self.kind(), AxisKind::Thread)
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Axis {
    type Err = TileError;

    fn from_str(s: &str) -> Result<Axis, TileError> {
        Axis::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| TileError::UnknownAxis(s.to_string()))
    }
}
