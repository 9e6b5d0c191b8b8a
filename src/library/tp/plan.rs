//! The single-process logic of the tensor-parallel GEMMs, with no GPU: how a rank's rows split
//! into chunks, which flag publishes which chunk, the order a rank pulls its peers' chunks in,
//! how far its tile walk is rotated (its own rows first), and the order a rank computes the
//! output shards of a GEMM + reduce-scatter (its peers' first, its own last).

use std::ops::Range;

use super::TpError;
use crate::library::gemm::GemmConfig;

/// Rows of one M-tile of the GEMM.
const TILE_ROWS: usize = GemmConfig::BM as usize;

fn plan_err(reason: String) -> TpError {
    TpError::Plan(reason)
}

/// An all-gather + GEMM across `world` ranks: A is `[world · rows, k]`, rank `r` holds rows
/// `r · rows ..` (its shard); every rank multiplies all of A by its own B. Each shard moves in
/// chunks of `chunk_rows` rows, chunk `c` (rows `c · chunk_rows ..` of A) published by flag `c`
/// of the receiving rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllGatherPlan {
    world: usize,
    rows: usize,
    chunk_rows: usize,
}

impl AllGatherPlan {
    /// The plan for `world` ranks of `rows` rows each, in chunks of `chunk_rows`: refused unless
    /// a chunk is whole M-tiles (a multiple of 128 rows, so a tile never waits on two chunks)
    /// and a shard whole chunks.
    pub fn new(world: usize, rows: usize, chunk_rows: usize) -> Result<AllGatherPlan, TpError> {
        if world == 0 {
            return Err(plan_err("a group of no ranks".into()));
        }
        if chunk_rows == 0 || chunk_rows % TILE_ROWS != 0 {
            return Err(plan_err(format!(
                "chunks of {chunk_rows} rows: a chunk is whole M-tiles of {TILE_ROWS} rows"
            )));
        }
        if rows == 0 || rows % chunk_rows != 0 {
            return Err(plan_err(format!(
                "shards of {rows} rows are not whole chunks of {chunk_rows}"
            )));
        }
        if u32::try_from(world * rows / TILE_ROWS).is_err() {
            return Err(plan_err(format!("{} rows of A", world * rows)));
        }
        Ok(AllGatherPlan {
            world,
            rows,
            chunk_rows,
        })
    }

    /// Ranks.
    pub fn world(&self) -> usize {
        self.world
    }

    /// Rows per rank (a shard).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Rows of the gathered A (`world · rows`).
    pub fn total_rows(&self) -> usize {
        self.world * self.rows
    }

    /// Rows per chunk.
    pub fn chunk_rows(&self) -> usize {
        self.chunk_rows
    }

    /// M-tiles per chunk (what the kernel's gate divides a tile row by).
    pub fn chunk_tiles(&self) -> u32 {
        (self.chunk_rows / TILE_ROWS) as u32
    }

    /// Chunks per shard.
    pub fn chunks_per_rank(&self) -> usize {
        self.rows / self.chunk_rows
    }

    /// Chunks (and flags) in all.
    pub fn chunks(&self) -> usize {
        self.world * self.chunks_per_rank()
    }

    /// The rows of A chunk `c` covers.
    pub fn chunk_range(&self, c: usize) -> Range<usize> {
        c * self.chunk_rows..(c + 1) * self.chunk_rows
    }

    /// The rank whose shard holds chunk `c`.
    pub fn owner(&self, c: usize) -> usize {
        c / self.chunks_per_rank()
    }

    /// Rank `rank`'s own chunks.
    pub fn own_chunks(&self, rank: usize) -> Range<usize> {
        let per = self.chunks_per_rank();
        rank * per..(rank + 1) * per
    }

    /// The chunks rank `rank` pulls from its peers, in the order it pulls them: the next rank's
    /// shard first (`rank + 1`, `rank + 2`, ... round the ranks), each in row order. That is
    /// the order its rotated tile walk meets them ([`AllGatherPlan::shift_tiles`]).
    pub fn pull_order(&self, rank: usize) -> Vec<usize> {
        (1..self.world)
            .map(|d| (rank + d) % self.world)
            .flat_map(|peer| self.own_chunks(peer))
            .collect()
    }

    /// M-tiles rank `rank`'s tile walk is rotated by: its shard's first tile, so its own rows
    /// (already in place) go first.
    pub fn shift_tiles(&self, rank: usize) -> u32 {
        (rank * self.rows / TILE_ROWS) as u32
    }
}

/// A GEMM + reduce-scatter across `world` ranks: every rank computes a partial C `[world · rows,
/// n]` (its part of the reduction dimension), and rank `s` owns rows `s · rows ..` of the sum
/// (its shard). Each rank writes its partial of shard `s` into slot `r` of rank `s`'s slots
/// `[world, rows, n]` (a peer store for `s != r`), and the owner sums its slots in rank order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceScatterPlan {
    world: usize,
    rows: usize,
}

impl ReduceScatterPlan {
    /// The plan for `world` ranks owning `rows` rows each.
    pub fn new(world: usize, rows: usize) -> Result<ReduceScatterPlan, TpError> {
        if world == 0 || rows == 0 {
            return Err(plan_err(format!("{world} ranks of {rows} rows")));
        }
        Ok(ReduceScatterPlan { world, rows })
    }

    /// Ranks.
    pub fn world(&self) -> usize {
        self.world
    }

    /// Rows each rank owns.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The rows of the partial C that shard `s` covers.
    pub fn shard_range(&self, s: usize) -> Range<usize> {
        s * self.rows..(s + 1) * self.rows
    }

    /// The shards rank `rank` computes, in order: its peers' (`rank + 1`, `rank + 2`, ... round
    /// the ranks) first, so their stores cross the links while it computes the rest, its own
    /// last.
    pub fn shard_order(&self, rank: usize) -> Vec<usize> {
        (1..=self.world).map(|d| (rank + d) % self.world).collect()
    }

    /// Where rank `rank`'s partial of shard `s` goes: element offset in rank `s`'s slots
    /// `[world, rows, n]` (slot `rank`).
    pub fn slot_offset(&self, rank: usize, n: usize) -> usize {
        rank * self.rows * n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_partial_tiles_and_chunks() {
        assert!(AllGatherPlan::new(2, 1024, 100).is_err());
        assert!(AllGatherPlan::new(2, 1000, 128).is_err());
        assert!(AllGatherPlan::new(0, 1024, 128).is_err());
        assert!(ReduceScatterPlan::new(0, 128).is_err());
        let e = AllGatherPlan::new(2, 1024, 384).unwrap_err().to_string();
        assert!(e.contains("not whole chunks of 384"), "{e}");
    }

    /// Every rank pulls every chunk it does not hold exactly once, none of its own, and a
    /// chunk's rows lie in its owner's shard.
    #[test]
    fn pull_order_covers_the_peers() {
        for world in 1..=8 {
            let p = AllGatherPlan::new(world, 1024, 256).unwrap();
            assert_eq!(p.chunks(), world * 4);
            for rank in 0..world {
                let mut seen = vec![0u32; p.chunks()];
                for c in p.pull_order(rank) {
                    seen[c] += 1;
                    assert_ne!(p.owner(c), rank);
                    let r = p.chunk_range(c);
                    assert!(r.start >= p.owner(c) * p.rows() && r.end <= (p.owner(c) + 1) * 1024);
                }
                for (c, n) in seen.iter().enumerate() {
                    let want = u32::from(p.owner(c) != rank);
                    assert_eq!(*n, want, "world {world} rank {rank} chunk {c}");
                }
            }
        }
    }

    /// The rotated walk (row `(t + shift) mod tiles`, the formula of `GridSchedule::rotated`)
    /// meets the rank's own rows first, then the chunks in pull order.
    #[test]
    fn rotation_puts_own_rows_first() {
        let p = AllGatherPlan::new(4, 512, 128).unwrap();
        let tiles = p.total_rows() / 128;
        for rank in 0..4 {
            let shift = p.shift_tiles(rank) as usize;
            let walk: Vec<usize> = (0..tiles).map(|t| (t + shift) % tiles).collect();
            let chunk_of = |row: usize| row * 128 / p.chunk_rows();
            let first: Vec<usize> = walk[..4].iter().map(|&r| chunk_of(r)).collect();
            assert_eq!(first, p.own_chunks(rank).collect::<Vec<_>>());
            let rest: Vec<usize> = walk[4..].iter().map(|&r| chunk_of(r)).collect();
            assert_eq!(rest, p.pull_order(rank));
        }
    }

    #[test]
    fn shard_order_ends_with_own() {
        for world in 1..=8 {
            let p = ReduceScatterPlan::new(world, 256).unwrap();
            for rank in 0..world {
                let order = p.shard_order(rank);
                assert_eq!(order.len(), world);
                assert_eq!(*order.last().unwrap(), rank);
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, (0..world).collect::<Vec<_>>());
            }
            assert_eq!(p.slot_offset(world - 1, 8), (world - 1) * 256 * 8);
            assert_eq!(
                p.shard_range(1 % world),
                (1 % world) * 256..(1 % world + 1) * 256
            );
        }
    }
}
