//! The GEMM's shared memory, laid out by the smem pool: the stage ring (per stage an A tile and
//! a B tile, canonical K-major wgmma tiles), the C staging blocks of the TMA-store epilogue, and
//! the ring's full/empty barriers, in that order.

use smem::pipeline::{Pipeline, TileSpec};
use smem::pool::{PoolError, Region, SmemPool};
use smem::tile::{CanonicalTile, TileShape, wgmma_tile};
use smem::{Major, SwizzleMode};

use super::{GemmConfig, GemmConfigError};

/// Bytes the launch asks for beyond the pool's: the kernel rounds the dynamic array's address up
/// to the 1024 bytes a 128B-swizzled tile needs (PTX ISA 9.7.15.5.1.2) at run time, which may
/// skip up to 1023 of them.
pub(super) const BASE_SLACK: u32 = 1024;

/// Where each buffer of the GEMM lives, as offsets from the aligned base.
#[derive(Debug, Clone)]
pub(super) struct SmemLayout {
    /// The A tile ([`GemmConfig::bm`] x `BK`) of a stage.
    pub a: CanonicalTile,
    /// The B tile (`bn` x `BK`) of a stage.
    pub b: CanonicalTile,
    /// The ring: `stages` x (A, B) and the full/empty barriers (full: the producer's
    /// `arrive.expect_tx`; empty: one arrival per consumer warpgroup that reads the stage
    /// ([`GemmConfig::stage_readers`]) of every CTA whose producer writes it).
    pub ring: Pipeline,
    /// The TMA-store epilogue's staging blocks as a ring of two stages, one 64 x bn block per
    /// consumer warpgroup (its stage is its index), with their barriers placed after the main
    /// ring's: `full` alone (one arrival and the block's bytes) says a tensor loaded into the
    /// block for the epilogue has arrived ([`super::build::HopperGemm::staged_input`]); no
    /// `empty`: a block is freed by its own leader's `cp.async.bulk.wait_group.read` after the
    /// store that read it.
    pub c_staging: Option<Pipeline>,
    /// With [`GemmConfig::epilogue_warps`]: a 64 x 64 slab of a staged input per epilogue warp
    /// (a two-stage ring, a warp's stage its consumer's index; three warps take the two stages
    /// in turn, slab by slab), `full` barriers only: the warp loads each slab of the input by
    /// TMA before it works on that slab of its block (three: one slab ahead)
    /// ([`GemmConfig::epilogue_input_bytes`]).
    pub epilogue_input: Option<Pipeline>,
    /// With [`GemmConfig::smem_scales`]: one scale slot per stage
    /// ([`GemmConfig::SCALE_SLOT_BYTES`] apart, 128-byte aligned for the TMA load of A's
    /// scales), filled with the stage and counted by its full barrier.
    pub scales: Option<Region>,
    /// The dynamic shared memory the launch passes: the pool's bytes and [`BASE_SLACK`].
    pub launch_bytes: u32,
    /// The alignment the dynamic array's base needs: the largest of its regions'.
    pub base_align: u32,
}

impl SmemLayout {
    /// The swizzle both operand tiles are stored with (what their TMA loads and the wgmma
    /// descriptors use).
    pub fn swizzle(&self) -> SwizzleMode {
        self.a.swizzle()
    }
}

impl GemmConfig {
    /// Lays out `self`'s shared memory in a pool limited to what one CTA may opt into on
    /// [`GemmConfig::TARGET`] (less [`BASE_SLACK`]); too much is
    /// [`GemmConfigError::SharedMemory`].
    pub(super) fn smem_layout(&self) -> Result<SmemLayout, GemmConfigError> {
        let tile = |mn: u32| {
            wgmma_tile(self.input, TileShape { mn, k: self.bk() }, Major::K).map_err(|_| {
                GemmConfigError::Types {
                    input: self.input,
                    output: self.output,
                }
            })
        };
        let (a, b) = (tile(self.bm())?, tile(self.bn)?);
        let mut pool = SmemPool::with_limit(smem::max_smem_optin(Self::TARGET) - BASE_SLACK);
        let placed = pool
            .stage_ring(
                "ring",
                self.stages,
                &[TileSpec::of("A", &a), TileSpec::of("B", &b)],
            )
            .and_then(|ring| {
                // A ring of two blocks of `bytes / 2` (a consumer's, or its epilogue warp's).
                let mut pair = |name: &str, tile: &str, bytes: u32| match bytes {
                    0 => Ok(None),
                    bytes => {
                        let block = TileSpec {
                            name: tile.into(),
                            bytes: bytes / 2,
                            align: b.align(),
                        };
                        pool.stage_ring(name, 2, &[block]).map(Some)
                    }
                };
                let c_staging = pair("c_staging", "C", self.c_staging_bytes())?;
                let input = pair("epilogue_input", "R", self.epilogue_input_bytes())?;
                let scales = match self.scale_slot_bytes() {
                    0 => None,
                    slot => Some(pool.alloc_bytes("scales", self.stages * slot, 128)?),
                };
                let ring =
                    ring.barriers(&mut pool, 1, self.stage_readers() * self.cluster_size())?;
                // With epilogue warps each block is handed over both ways: `full` when its
                // consumer has written it, `empty` when its epilogue warp's stores have read it.
                let c_staging = c_staging
                    .map(|c| match self.epilogue_warps {
                        true => c.barriers(&mut pool, 1, 1),
                        false => c.full_barriers(&mut pool, 1),
                    })
                    .transpose()?;
                let input = input.map(|r| r.full_barriers(&mut pool, 1)).transpose()?;
                Ok((ring, c_staging, input, scales))
            });
        let (ring, c_staging, epilogue_input, scales) = placed.map_err(|e| match e {
            PoolError::OutOfMemory { total, .. } => GemmConfigError::SharedMemory(
                u32::try_from(total + u64::from(BASE_SLACK)).unwrap_or(u32::MAX),
            ),
            _ => GemmConfigError::Stages(self.stages),
        })?;
        Ok(SmemLayout {
            a,
            b,
            ring,
            c_staging,
            epilogue_input,
            scales,
            launch_bytes: pool.dynamic_bytes() + BASE_SLACK,
            base_align: pool.base_align(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool places what the hand layout did: stages from 0, `stage_bytes` apart, the C
    /// staging after them, full then empty barriers after that.
    #[test]
    fn the_layout_is_the_stage_ring_then_c_staging_then_barriers() {
        let large = GemmConfig::large();
        let l = large.smem_layout().unwrap();
        let stages = large.stages * large.stage_bytes();
        assert_eq!(l.ring.stride(), Some(large.stage_bytes()));
        assert_eq!(l.ring.tx_bytes(), large.stage_bytes());
        assert_eq!(l.ring.tile(0, 1).unwrap().offset, 128 * 64 * 2);
        let staging = l.c_staging.as_ref().unwrap();
        assert_eq!(staging.tile(0, 0).unwrap().offset, stages);
        assert_eq!(staging.stride(), Some(large.c_staging_bytes() / 2));
        let bars = stages + large.c_staging_bytes();
        assert_eq!(l.ring.full().offset(0), Ok(bars));
        assert_eq!(
            l.ring.empty().unwrap().offset(0),
            Ok(bars + 8 * large.stages)
        );
        // The staging blocks' barriers last, after the ring's.
        let c_bars = bars + 16 * large.stages;
        assert_eq!(staging.full().offset(1), Ok(c_bars + 8));
        assert!(staging.empty().is_none());
        assert_eq!(l.swizzle(), SwizzleMode::B128);
        assert_eq!(l.launch_bytes, 214_080);
    }

    /// With the scales in the stages, one 640-byte slot per stage follows the C staging,
    /// 128-byte aligned (a TMA destination), before the barriers; the deepest ring gives up a
    /// stage for them where shared memory is full (128 x 128 block-scaled: 6 stages, 5 with
    /// the slots).
    #[test]
    fn stage_scales_have_a_slot_per_stage() {
        use ptx_isa::ScalarType::{Bf16, E4m3};
        let block = GemmConfig::fp8_block_pipelined(8192, 8192, 132, E4m3, Bf16).fp8_block_plain();
        assert!(block.smem_layout().unwrap().scales.is_none());
        let ss = GemmConfig {
            smem_scales: true,
            ..block
        }
        .deepest();
        assert_eq!((block.stages, ss.stages), (6, 5));
        let l = ss.smem_layout().unwrap();
        let slots = l.scales.as_ref().unwrap();
        let staging = l.c_staging.as_ref().unwrap().tile(1, 0).unwrap();
        assert_eq!(slots.offset, staging.offset + staging.bytes);
        assert_eq!(slots.offset % 128, 0);
        assert_eq!(slots.bytes, ss.stages * GemmConfig::SCALE_SLOT_BYTES);
        assert!(l.ring.full().offset(0).unwrap() >= slots.offset + slots.bytes);
        assert!(l.launch_bytes <= smem::max_smem_optin(GemmConfig::TARGET));
    }

    /// The layout is in bytes of K: an 8-bit input (e4m3, for an FP8 variant) takes BK = 128
    /// elements, the same 128-byte swizzle rows, so the same stage ring and barriers.
    #[test]
    fn an_fp8_input_takes_the_same_bytes_with_twice_the_k() {
        let large = GemmConfig::large();
        let fp8 = GemmConfig {
            input: ptx_isa::ScalarType::E4m3,
            ..large
        };
        assert_eq!((large.bk(), fp8.bk()), (64, 128));
        let (l, f) = (large.smem_layout().unwrap(), fp8.smem_layout().unwrap());
        assert_eq!(f.ring.stride(), l.ring.stride());
        assert_eq!(f.ring.tx_bytes(), l.ring.tx_bytes());
        assert_eq!(f.launch_bytes, l.launch_bytes);
        assert_eq!(f.swizzle(), SwizzleMode::B128);
    }
}
