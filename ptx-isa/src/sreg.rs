//! Special registers (PTX ISA chapter 10 "Special Registers"), read with `mov`.

use std::fmt;

use crate::types::ScalarType;

/// A component of a three-dimensional special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
    /// `.w`: the fourth component of the `.v4 .u32` special registers (PTX ISA 10.1, 10.2, 10.6,
    /// 10.7, 10.12-10.15: `%tid`, `%clusterid` ... are declared `.v4`; ptxas 13.0 reads `.w`,
    /// always 0). Not in [`Dim::ALL`], the three a grid has.
    W,
}

impl Dim {
    /// All three components.
    pub const ALL: [Dim; 3] = [Dim::X, Dim::Y, Dim::Z];

    /// The suffix letter.
    pub const fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
            Dim::W => "w",
        }
    }
}

/// A `%lanemask_*` comparison (PTX ISA 10.18-10.22 "%lanemask_eq" ... "%lanemask_gt").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum LaneMask {
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
}

/// A special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    /// `%tid.{x,y,z}`: thread index in the CTA (PTX ISA 10.1).
    Tid(Dim),
    /// `%ntid.{x,y,z}`: CTA shape (10.2).
    Ntid(Dim),
    /// `%laneid` (10.3).
    LaneId,
    /// `%warpid` (10.4): not stable across preemption; use `%tid` for warp roles.
    WarpId,
    /// `%nwarpid` (10.5).
    NWarpId,
    /// `%ctaid.{x,y,z}` (10.6).
    CtaId(Dim),
    /// `%nctaid.{x,y,z}` (10.7).
    NCtaId(Dim),
    /// `%smid` (10.8).
    SmId,
    /// `%nsmid` (10.9).
    NSmId,
    /// `%gridid` (10.10).
    GridId,
    /// `%is_explicit_cluster` (10.11; PTX 7.8, sm_90).
    IsExplicitCluster,
    /// `%clusterid.{x,y,z}` (10.12; PTX 7.8, sm_90).
    ClusterId(Dim),
    /// `%nclusterid.{x,y,z}` (10.13).
    NClusterId(Dim),
    /// `%cluster_ctaid.{x,y,z}` (10.14).
    ClusterCtaId(Dim),
    /// `%cluster_nctaid.{x,y,z}` (10.15).
    ClusterNCtaId(Dim),
    /// `%cluster_ctarank` (10.16).
    ClusterCtaRank,
    /// `%cluster_nctarank` (10.17).
    ClusterNCtaRank,
    /// `%lanemask_{eq,le,lt,ge,gt}` (10.18-10.22).
    LaneMask(LaneMask),
    /// `%clock` (10.23).
    Clock,
    /// `%clock64` (10.25).
    Clock64,
    /// `%globaltimer` (10.28).
    GlobalTimer,
    /// `%dynamic_smem_size` (10.31; PTX 4.1).
    DynamicSmemSize,
    /// `%total_smem_size` (10.30).
    TotalSmemSize,
}

impl SpecialReg {
    /// Every special register (each component of the 3-D ones).
    pub fn all() -> Vec<SpecialReg> {
        use SpecialReg::*;
        let mut v = Vec::new();
        let four = [Dim::X, Dim::Y, Dim::Z, Dim::W];
        for d in four {
            v.extend([Tid(d), Ntid(d), CtaId(d), NCtaId(d)]);
        }
        v.extend([LaneId, WarpId, NWarpId, SmId, NSmId, GridId]);
        for d in four {
            v.extend([
                ClusterId(d),
                NClusterId(d),
                ClusterCtaId(d),
                ClusterNCtaId(d),
            ]);
        }
        v.extend([IsExplicitCluster, ClusterCtaRank, ClusterNCtaRank]);
        for m in [
            self::LaneMask::Eq,
            self::LaneMask::Le,
            self::LaneMask::Lt,
            self::LaneMask::Ge,
            self::LaneMask::Gt,
        ] {
            v.push(LaneMask(m));
        }
        v.extend([Clock, Clock64, GlobalTimer, DynamicSmemSize, TotalSmemSize]);
        v
    }

    /// The narrowest width `mov` still reads the register at, for the registers the PTX ISA
    /// widened: `%tid`, `%ntid`, `%ctaid` and `%nctaid` were `.v4.u16` before PTX ISA 2.0 (10.1,
    /// 10.2, 10.6, 10.7: "Legacy PTX code that accesses %tid using 16-bit mov and cvt
    /// instructions are supported"), `%gridid` 32 bits before PTX ISA 3.0 (10.10). ptxas 13.0
    /// takes `mov.u16` of each of them, at every version, and refuses `mov.u16` of `%laneid` or
    /// `%clusterid.x` and `mov.u32` of `%clock64`.
    pub const fn legacy_bits(self) -> Option<u32> {
        use SpecialReg::*;
        match self {
            Tid(_) | Ntid(_) | CtaId(_) | NCtaId(_) | GridId => Some(16),
            _ => None,
        }
    }

    /// The type of the value (what `mov` reads it as).
    pub const fn ty(self) -> ScalarType {
        use SpecialReg::*;
        match self {
            GridId | Clock64 | GlobalTimer => ScalarType::U64,
            IsExplicitCluster => ScalarType::Pred,
            _ => ScalarType::U32,
        }
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SpecialReg::*;
        match self {
            Tid(d) => write!(f, "%tid.{}", d.name()),
            Ntid(d) => write!(f, "%ntid.{}", d.name()),
            LaneId => f.write_str("%laneid"),
            WarpId => f.write_str("%warpid"),
            NWarpId => f.write_str("%nwarpid"),
            CtaId(d) => write!(f, "%ctaid.{}", d.name()),
            NCtaId(d) => write!(f, "%nctaid.{}", d.name()),
            SmId => f.write_str("%smid"),
            NSmId => f.write_str("%nsmid"),
            GridId => f.write_str("%gridid"),
            IsExplicitCluster => f.write_str("%is_explicit_cluster"),
            ClusterId(d) => write!(f, "%clusterid.{}", d.name()),
            NClusterId(d) => write!(f, "%nclusterid.{}", d.name()),
            ClusterCtaId(d) => write!(f, "%cluster_ctaid.{}", d.name()),
            ClusterNCtaId(d) => write!(f, "%cluster_nctaid.{}", d.name()),
            ClusterCtaRank => f.write_str("%cluster_ctarank"),
            ClusterNCtaRank => f.write_str("%cluster_nctarank"),
            LaneMask(m) => {
                let s = match m {
                    self::LaneMask::Eq => "eq",
                    self::LaneMask::Le => "le",
                    self::LaneMask::Lt => "lt",
                    self::LaneMask::Ge => "ge",
                    self::LaneMask::Gt => "gt",
                };
                write!(f, "%lanemask_{s}")
            }
            Clock => f.write_str("%clock"),
            Clock64 => f.write_str("%clock64"),
            GlobalTimer => f.write_str("%globaltimer"),
            DynamicSmemSize => f.write_str("%dynamic_smem_size"),
            TotalSmemSize => f.write_str("%total_smem_size"),
        }
    }
}
