//! Multi-stage buffers: N copies of a set of tiles, each stage with a full and an empty mbarrier.
//!
//! The usual TMA pipeline: the producer waits on `empty[s]`, arms `full[s]` with
//! `mbarrier.arrive.expect_tx` for [`Pipeline::tx_bytes`] and issues the loads of stage `s`; the
//! consumers wait on `full[s]`, compute, and arrive on `empty[s]`. [`crate::mbarrier::PipelineState`]
//! tracks the stage and parity each side waits with.

pub mod cursor;
pub mod hang;
pub mod protocol;
pub mod sync;

use crate::mbarrier::MbarrierArray;
use crate::pool::{PoolError, Region, SmemPool};
use crate::tile::CanonicalTile;

/// One buffer of a stage: a name, a size and an alignment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TileSpec {
    /// The buffer's name; stage `s` of it is called `{pipeline}.{name}[{s}]`.
    pub name: String,
    /// Bytes per stage.
    pub bytes: u32,
    /// Alignment in bytes.
    pub align: u32,
}

impl TileSpec {
    /// The spec of a canonical operand tile (its size and swizzle alignment).
    pub fn of(name: &str, tile: &CanonicalTile) -> TileSpec {
        TileSpec {
            name: name.to_string(),
            bytes: tile.bytes(),
            align: tile.align(),
        }
    }
}

/// The regions and barriers of an N-stage pipeline.
///
/// ```
/// use smem::pipeline::TileSpec;
/// use smem::pool::SmemPool;
/// use smem::tile::{wgmma_tile, TileShape};
/// use ptx_isa::{ScalarType, Target};
/// use smem::Major;
/// let a = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::K).unwrap();
/// let b = wgmma_tile(ScalarType::Bf16, TileShape { mn: 256, k: 64 }, Major::K).unwrap();
/// let mut pool = SmemPool::new(Target::Sm90a);
/// let p = pool
///     .pipeline("main", 4, &[TileSpec::of("A", &a), TileSpec::of("B", &b)], 1, 2)
///     .unwrap();
/// assert_eq!(p.tx_bytes(), 16384 + 32768);
/// assert_eq!(p.tile(3, 1).unwrap().name, "main.B[3]");
/// assert_eq!(p.full().init_count(0), Ok(1));
/// assert_eq!(pool.dynamic_bytes(), 4 * 49152 + 64);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pipeline {
    name: String,
    stages: Vec<Vec<Region>>,
    full: MbarrierArray,
    /// `None` for a ring whose buffers are freed another way ([`StageRing::full_barriers`]).
    empty: Option<MbarrierArray>,
    tx_bytes: u32,
}

impl Pipeline {
    /// The pipeline's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of stages.
    pub fn stages(&self) -> u32 {
        self.stages.len() as u32
    }

    /// The region of buffer `tile` in stage `stage`.
    pub fn tile(&self, stage: u32, tile: u32) -> Option<&Region> {
        self.stages.get(stage as usize)?.get(tile as usize)
    }

    /// The bytes from each stage to the next when the stages are evenly spaced (as a ring whose
    /// stage size is a multiple of its first tile's alignment is), so a stage held in a register
    /// is found with one multiply-add; `None` for a single stage or uneven spacing.
    pub fn stride(&self) -> Option<u32> {
        let starts: Vec<u32> = self.stages.iter().map(|s| s[0].offset).collect();
        let step = starts.get(1)? - starts[0];
        starts
            .windows(2)
            .all(|w| w[1] - w[0] == step)
            .then_some(step)
    }

    /// The regions of one stage, in the order of the specs.
    pub fn stage(&self, stage: u32) -> Option<&[Region]> {
        self.stages.get(stage as usize).map(Vec::as_slice)
    }

    /// The "full" barriers, one per stage (armed by the producer, waited on by consumers).
    pub fn full(&self) -> &MbarrierArray {
        &self.full
    }

    /// The "empty" barriers, one per stage (arrived on by consumers, waited on by the producer);
    /// `None` for a ring placed with [`StageRing::full_barriers`].
    pub fn empty(&self) -> Option<&MbarrierArray> {
        self.empty.as_ref()
    }

    /// The bytes one stage receives: what the producer passes to `expect_tx`.
    pub fn tx_bytes(&self) -> u32 {
        self.tx_bytes
    }

    /// Declares the `full` and `empty` arrays (where it has them) to `sync` under their pool
    /// names (`main.full[s]`), with their init counts, so waits and arrivals on them are named
    /// and checked.
    pub fn declare_barriers(
        &self,
        sync: &mut sync::BarrierSync,
    ) -> Result<(protocol::ArrayId, Option<protocol::ArrayId>), protocol::ProtocolError> {
        let counts = |a: &MbarrierArray| a.inits().map(|(_, c)| c).collect::<Vec<_>>();
        let full = sync.declare(self.full.name(), &counts(&self.full))?;
        let empty = match &self.empty {
            Some(e) => Some(sync.declare(e.name(), &counts(e))?),
            None => None,
        };
        Ok((full, empty))
    }
}

/// The stage buffers of a pipeline whose barriers are not placed yet: [`SmemPool::pipeline`] in
/// two steps, for a kernel that puts other buffers between the ring and its barriers (the GEMM's
/// C staging blocks sit after the stages, the barriers after them).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StageRing {
    name: String,
    stages: Vec<Vec<Region>>,
    tx_bytes: u32,
}

impl StageRing {
    /// Places the ring's `{name}.full` (init count `full_arrivals`) and `{name}.empty`
    /// (`empty_arrivals`) barrier arrays, one barrier per stage, in `pool` where it stands now.
    /// On error the pool is left as it was.
    pub fn barriers(
        self,
        pool: &mut SmemPool,
        full_arrivals: u32,
        empty_arrivals: u32,
    ) -> Result<Pipeline, PoolError> {
        let saved = pool.clone();
        let n = self.stages.len();
        let placed = pool
            .mbarriers(&format!("{}.full", self.name), &vec![full_arrivals; n])
            .and_then(|full| {
                let empty =
                    pool.mbarriers(&format!("{}.empty", self.name), &vec![empty_arrivals; n])?;
                Ok((full, empty))
            });
        let (full, empty) = placed.inspect_err(|_| *pool = saved)?;
        Ok(Pipeline {
            name: self.name,
            stages: self.stages,
            full,
            empty: Some(empty),
            tx_bytes: self.tx_bytes,
        })
    }

    /// Places only the ring's `{name}.full` barrier array (init count `full_arrivals`), one
    /// barrier per stage, in `pool` where it stands now: for a ring whose buffers are freed
    /// another way (a GEMM consumer's C staging block, freed by its own
    /// `cp.async.bulk.wait_group.read` after the store that read it). On error the pool is left
    /// as it was.
    pub fn full_barriers(
        self,
        pool: &mut SmemPool,
        full_arrivals: u32,
    ) -> Result<Pipeline, PoolError> {
        let n = self.stages.len();
        let full = pool.mbarriers(&format!("{}.full", self.name), &vec![full_arrivals; n])?;
        Ok(Pipeline {
            name: self.name,
            stages: self.stages,
            full,
            empty: None,
            tx_bytes: self.tx_bytes,
        })
    }
}

impl SmemPool {
    /// Allocates `stages` copies of `tiles` (stage-major: all of stage 0, then stage 1...) and
    /// two barrier arrays `{name}.full` (init count `full_arrivals`, usually 1: the producer's
    /// `arrive.expect_tx`) and `{name}.empty` (init count `empty_arrivals`: one per consumer
    /// arrival). On error the pool is left as it was.
    pub fn pipeline(
        &mut self,
        name: &str,
        stages: u32,
        tiles: &[TileSpec],
        full_arrivals: u32,
        empty_arrivals: u32,
    ) -> Result<Pipeline, PoolError> {
        let saved = self.clone();
        self.stage_ring(name, stages, tiles)
            .and_then(|ring| ring.barriers(self, full_arrivals, empty_arrivals))
            .inspect_err(|_| *self = saved)
    }

    /// The stage buffers of [`SmemPool::pipeline`] alone: `stages` copies of `tiles`,
    /// stage-major; [`StageRing::barriers`] places the barriers later. On error the pool is
    /// left as it was.
    pub fn stage_ring(
        &mut self,
        name: &str,
        stages: u32,
        tiles: &[TileSpec],
    ) -> Result<StageRing, PoolError> {
        if stages == 0 || tiles.is_empty() {
            return Err(PoolError::EmptyPipeline {
                name: name.to_string(),
            });
        }
        let tx: u64 = tiles.iter().map(|t| u64::from(t.bytes)).sum();
        let tx_bytes = u32::try_from(tx).map_err(|_| PoolError::OutOfMemory {
            name: name.to_string(),
            requested: tx,
            total: tx,
            limit: self.limit(),
        })?;
        let saved = self.clone();
        let mut regions = Vec::with_capacity(stages as usize);
        for s in 0..stages {
            let mut stage = Vec::with_capacity(tiles.len());
            for t in tiles {
                let placed = self.alloc_bytes(&format!("{name}.{}[{s}]", t.name), t.bytes, t.align);
                stage.push(placed.inspect_err(|_| *self = saved.clone())?);
            }
            regions.push(stage);
        }
        Ok(StageRing {
            name: name.to_string(),
            stages: regions,
            tx_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage's tile `A` of `bytes`, aligned to `align`.
    fn tile_a(bytes: u32, align: u32) -> TileSpec {
        TileSpec {
            name: "A".into(),
            bytes,
            align,
        }
    }

    #[test]
    fn pipeline_barriers_are_named_and_checked() {
        use super::protocol::{BarrierAt, ProtocolError};
        use super::sync::{BarrierSync, WaitMode};
        let spec = tile_a(16384, 1024);
        let mut pool = SmemPool::new(ptx_isa::Target::Sm90a);
        let p = pool.pipeline("main", 3, &[spec], 1, 2).unwrap();
        assert_eq!(
            p.full().barrier_name(2).unwrap().to_string(),
            "main.full[2]"
        );
        assert!(p.empty().unwrap().barrier_name(3).is_err());
        let mut sync = BarrierSync::new("k", WaitMode::Spin);
        let (full, empty) = p.declare_barriers(&mut sync).unwrap();
        let empty = empty.unwrap();
        let mut q = sync.protocol().clone();
        q.arrive_expect_tx(BarrierAt::Each(full), p.tx_bytes());
        q.copy(BarrierAt::Each(full), p.tx_bytes() / 2);
        q.wait(BarrierAt::Each(full));
        q.wait(BarrierAt::Each(empty));
        q.arrive(BarrierAt::Each(empty), 2);
        assert!(matches!(
            q.check(),
            Err(ProtocolError::TxMismatch { ref barrier, expect_tx: 16384, copied: 8192 })
                if barrier.to_string() == "main.full[0]"
        ));
    }

    #[test]
    fn too_many_stages_is_an_error() {
        let spec = tile_a(32768, 1024);
        let mut pool = SmemPool::new(ptx_isa::Target::Sm90a);
        let err = pool
            .pipeline("p", 8, std::slice::from_ref(&spec), 1, 1)
            .unwrap_err();
        assert!(matches!(err, PoolError::OutOfMemory { ref name, .. } if name == "p.A[7]"));
        assert!(pool.regions().is_empty());
        let mut pool = SmemPool::new(ptx_isa::Target::Sm90a);
        assert_eq!(
            pool.pipeline("p", 0, &[spec], 1, 1),
            Err(PoolError::EmptyPipeline { name: "p".into() })
        );
        assert!(matches!(
            pool.pipeline("q", 2, &[tile_a(64, 64)], 0, 1),
            Err(PoolError::Mbarrier(_))
        ));
    }
}
