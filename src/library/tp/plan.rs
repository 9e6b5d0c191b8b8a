//! The single-process logic of the tensor-parallel GEMMs, with no GPU: how a rank's rows split
//! into chunks, which flag publishes which chunk, the order a rank pulls its peers' chunks in,
//! how far its tile walk is rotated (its own rows first) and how tall its bands are (none
//! straddles two ranks' rows), the order a rank computes the output shards of a GEMM +
//! reduce-scatter (its peers' first, its own last), where each partial lies, and the order an
//! owner adds them in ([`sum_order`]).

use std::ops::Range;

use super::TpError;
use crate::library::gemm::{GemmConfig, StagedLoadAt};

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

    /// M-tiles of one shard.
    pub fn shard_tiles(&self) -> usize {
        self.rows / TILE_ROWS
    }

    /// The band height (M-tiles, [`GemmConfig::group_m`]) of the gated GEMM's walk: the largest
    /// divisor of a shard's M-tiles up to `group_m`. The walk goes band by band, its rows
    /// alternating within a band, so a band taller than a shard (16 tiles over the 8 of a
    /// 1024-row shard: four ranks at 4096 tokens) would mix the rank's own rows with its next
    /// peer's from the first tile on, and a band that does not divide the shard would straddle
    /// two ranks' rows; bands that divide it start the walk on the rank's own rows alone and
    /// meet the others shard by shard in [`AllGatherPlan::pull_order`].
    pub fn band(&self, group_m: u32) -> u32 {
        let shard = self.shard_tiles() as u32;
        (1..=group_m.clamp(1, shard))
            .rev()
            .find(|b| shard % b == 0)
            .unwrap_or(1)
    }
}

/// The order owner `owner` of `world` ranks adds its shard's partials in: its own first, then
/// its peers' in rank order, in f32, rounded to bf16 once. Fixed for each owner, so the result
/// is deterministic, and the order both the slot sum ([`super::kernels::slot_sum`]) and the
/// owner's GEMM with the sum fused ([`super::kernels::reduce_scatter_gemm`]: its own partial is
/// its accumulator, the others are added to it) can take, so the two agree to the bit. With two
/// ranks it is NCCL's sum too (`p0 + p1` either way round); with more NCCL's ring rounds each
/// hop's partial sum to bf16, which differs in the last bits.
pub fn sum_order(world: usize, owner: usize) -> Vec<usize> {
    std::iter::once(owner)
        .chain((0..world).filter(|&r| r != owner))
        .collect()
}

/// Where the partials of a GEMM + reduce-scatter lie ([`ReduceScatterPlan::partial_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In the owner's memory, slot `rank`: each rank stores its partials of its peers' shards
    /// across the links (peer stores from its GEMM's epilogue), the owner reads them locally.
    Owner,
    /// In the writer's own memory, slot `shard`: each rank stores locally, and the owner reads
    /// its peers' partials across the links (a TMA load of peer memory in its GEMM's epilogue).
    Writer,
}

/// How often a gated owner's GEMM ([`ReduceScatterPlan::gated`]) polls its peer's flag across
/// the links ([`crate::parts::RowGate`]); [`ReduceScatterPlan::owners_load`] says which an
/// owner takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GatePolls {
    /// Before each tile's load of the peer's partial: one `ld.acquire.sys` of peer memory and
    /// a `fence.proxy.async.global` a tile in each loading thread.
    EveryTile,
    /// Before a loading thread's first load only ([`crate::parts::RowGate::remembered`]): the
    /// flag, one for the whole partial, stays up for the launch once seen.
    Once,
}

/// A GEMM + reduce-scatter across `world` ranks: every rank computes a partial C `[world · rows,
/// n]` (its part of the reduction dimension), and rank `s` owns rows `s · rows ..` of the sum
/// (its shard). Each rank writes its partial of shard `s` into slot `r` of rank `s`'s slots
/// `[world, rows, n]` (a peer store for `s != r`), and the owner sums its slots in rank order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceScatterPlan {
    world: usize,
    rows: usize,
    /// How the owners load their peer's partial, where told ([`ReduceScatterPlan::owners_load`]).
    owners: Option<OwnersLoad>,
}

/// How an owner's GEMM loads its peer's partial (its staged input,
/// [`crate::library::gemm::HopperGemm::with_staged_load_at`]): under which k-tiles of each
/// tile's main loop, and how often a gated one polls the peer's flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OwnersLoad {
    /// Where in each tile's main loop the partial is loaded.
    pub at: StagedLoadAt,
    /// How often a gated owner polls its peer's flag.
    pub polls: GatePolls,
}

/// How the pulled path's owners ([`Placement::Writer`]) load the peer's partial unless told:
/// slab by slab from k-tile 2, every 8 k-tiles, the flag polled once a thread. Session 19 (tp20, `notes/session19-tp20-bench.txt`,
/// two H200s, attn-out at 4096 tokens): with [`GatePolls::Once`] the pulled path 0.405 ms against
/// 0.433 with the whole block under the middle k-tile polled every tile, in two processes;
/// its owners' step alone 0.209 against 0.233; equal at 8192 tokens and on ffn-down.
pub const PULLED_OWNERS: OwnersLoad = OwnersLoad {
    at: StagedLoadAt::Spread { first: 2, every: 8 },
    polls: GatePolls::Once,
};

/// How the owners load a partial in their own memory ([`Placement::Owner`], the fused path)
/// unless told: the whole block under the middle k-tile, the flag polled before every tile's
/// load (polling once not measured there).
pub const LOCAL_OWNERS: OwnersLoad = OwnersLoad {
    at: StagedLoadAt::Middle,
    polls: GatePolls::EveryTile,
};

impl ReduceScatterPlan {
    /// The plan for `world` ranks owning `rows` rows each.
    pub fn new(world: usize, rows: usize) -> Result<ReduceScatterPlan, TpError> {
        if world == 0 || rows == 0 {
            return Err(plan_err(format!("{world} ranks of {rows} rows")));
        }
        Ok(ReduceScatterPlan {
            world,
            rows,
            owners: None,
        })
    }

    /// The plan with the owners' GEMMs loading their peer's partial as `owners` says.
    pub fn with_owners_load(self, owners: OwnersLoad) -> ReduceScatterPlan {
        ReduceScatterPlan {
            owners: Some(owners),
            ..self
        }
    }

    /// How the owners' GEMMs with `placement`'s partials load them: as told
    /// ([`ReduceScatterPlan::with_owners_load`]), else [`PULLED_OWNERS`] where the partials stay
    /// with their writers (the pulled path: the peer's partial comes across the links) and
    /// [`LOCAL_OWNERS`] where they lie with their owners.
    pub fn owners_load(&self, placement: Placement) -> OwnersLoad {
        match (self.owners, placement) {
            (Some(owners), _) => owners,
            (None, Placement::Writer) => PULLED_OWNERS,
            (None, Placement::Owner) => LOCAL_OWNERS,
        }
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

    /// Refuses a placement this plan cannot take: the writer's ([`Placement::Writer`]) with more
    /// than two ranks. The owner's fused GEMM stages one peer's partial by TMA; with more ranks
    /// it reads the others with plain loads across the links in its epilogue, and on four H200s
    /// (NV18, 2026-11-28, `notes/session11-tp-bench.log`) that ran 9-31 times the GEMM alone.
    pub fn check_placement(&self, placement: Placement) -> Result<(), TpError> {
        match (placement, self.world) {
            (Placement::Writer, world) if world > 2 => Err(plan_err(format!(
                "partials left with their writers take at most two ranks, not {world}: the \
                 owner's GEMM stages one peer's partial, and reads the others across the links \
                 with plain loads (9-31x the GEMM alone at four ranks)"
            ))),
            _ => Ok(()),
        }
    }

    /// The GEMM launches rank `rank` makes before its owner's step, each a run of shards (their
    /// rows of its A, their partials into one block of slots), in
    /// [`ReduceScatterPlan::shard_order`], its own shard left out when `fused` (its owner's GEMM
    /// computes it). With
    /// the owner's placement each shard goes to another rank's memory and takes a launch of its
    /// own; with the writer's, shards that follow each other in both orders lie next to each
    /// other in the rank's own slots as in its A, and take one launch together (for rank 0 of
    /// four, shards 1-3 in one GEMM of three shards' rows: fewer waves' tails).
    pub fn launches(&self, placement: Placement, rank: usize, fused: bool) -> Vec<Range<usize>> {
        let mut runs: Vec<Range<usize>> = Vec::new();
        for s in self.shard_order(rank) {
            if fused && s == rank {
                continue;
            }
            match runs.last_mut() {
                Some(run) if placement == Placement::Writer && run.end == s => run.end = s + 1,
                _ => runs.push(s..s + 1),
            }
        }
        runs
    }

    /// Whether the partials of `placement` alternate between two slots from one call to the
    /// next ([`ReduceScatterPlan::partial_at`]'s `turn`): the writer's placement at two ranks,
    /// where each rank's one peer partial leaves its own slot free (the owner's GEMM computes
    /// its own shard). Then a call's partial never overwrites the one the peer's GEMM of the
    /// call before may still be reading, and a call need not wait for the peers' work before it
    /// (the call between orders the two: its owner's GEMM waits for the peer's partial, which
    /// the peer computes after its owner's GEMM of the call before).
    pub fn alternates(&self, placement: Placement) -> bool {
        placement == Placement::Writer && self.world == 2
    }

    /// Whether the owner's GEMM takes its peers' partials through a flag instead of its stream
    /// waiting for theirs: at two ranks, where the one peer's partial is its `staged` input
    /// (the fused sum with the TMA-store epilogue). Each rank's stream raises its flag once its
    /// partial of its peer's shard is written, and the owner's consumers wait on it only before
    /// they load that partial, under their first tile's main loop
    /// ([`crate::library::gemm::HopperGemm::with_staged_gate`]). With more ranks the epilogue
    /// reads the other peers' partials with plain loads (prefetched under the main loop), and
    /// the owner's stream waits for every peer as before.
    pub fn gated(&self, staged: bool) -> bool {
        self.world == 2 && staged
    }

    /// Where rank `rank`'s partial `[rows, n]` of shard `shard` lies with `placement` on a call
    /// of turn `turn` (calls alternate 0, 1, 0, ...): the rank whose slots `[world, rows, n]`
    /// hold it and its element offset there. The writer's placement holds it in the writer's
    /// slot `shard`, or at two ranks on turn 1 in its slot `rank`
    /// ([`ReduceScatterPlan::alternates`]); the owner's, in the owner's slot `rank`.
    pub fn partial_at(
        &self,
        placement: Placement,
        (rank, shard): (usize, usize),
        n: usize,
        turn: usize,
    ) -> (usize, usize) {
        match placement {
            Placement::Owner => (shard, self.slot_offset(rank, n)),
            Placement::Writer if self.alternates(placement) && turn % 2 == 1 => {
                (rank, self.slot_offset(rank, n))
            }
            Placement::Writer => (rank, self.slot_offset(shard, n)),
        }
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

    /// The gated GEMM's walk as the kernel takes it (`parts::banded`: band by band, rows
    /// alternating within a band, the last band as tall as the rows left; then rotated,
    /// `GridSchedule::rotated`) with the bands of [`AllGatherPlan::band`]: for 2, 3, 4 and 8
    /// ranks, every rank's walk meets its own rows alone first, then the chunks in its pull
    /// order, never one before a chunk it pulls earlier.
    #[test]
    fn banded_walks_meet_own_rows_then_the_pull_order() {
        let walk = |p: &AllGatherPlan, rank: usize, band: usize, cols: usize| -> Vec<usize> {
            let rows = p.total_rows() / TILE_ROWS;
            let shift = p.shift_tiles(rank) as usize;
            (0..rows * cols)
                .map(|t| {
                    let (which, in_band) = (t / (band * cols), t % (band * cols));
                    let height = band.min(rows - which * band);
                    let row = in_band % height + which * band;
                    (row + shift) % rows
                })
                .collect()
        };
        for world in [2, 3, 4, 8] {
            for (rows, chunk) in [
                (1024, 1024),
                (1024, 256),
                (2048, 1024),
                (512, 128),
                (384, 128),
            ] {
                let p = AllGatherPlan::new(world, rows, chunk).unwrap();
                for group_m in [1, 8, 16] {
                    let band = p.band(group_m) as usize;
                    assert!(band <= group_m as usize && p.shard_tiles() % band == 0);
                    for rank in 0..world {
                        let cols = 3;
                        let own = p.shard_tiles() * cols;
                        let chunk_of = |row: usize| row * TILE_ROWS / p.chunk_rows();
                        let met: Vec<usize> = walk(&p, rank, band, cols)
                            .into_iter()
                            .map(chunk_of)
                            .collect();
                        let what = format!("world {world} rows {rows} chunk {chunk} band {band}");
                        assert!(met[..own].iter().all(|c| p.owner(*c) == rank), "{what}");
                        let place = |c: usize| p.pull_order(rank).iter().position(|&x| x == c);
                        let order: Vec<usize> =
                            met[own..].iter().map(|&c| place(c).unwrap()).collect();
                        // Chunk by chunk where a band fits in a chunk; with taller bands the
                        // chunks of a band interleave, but no band reaches past its shard.
                        let shard_of = |i: usize| i / p.chunks_per_rank();
                        assert!(
                            order.windows(2).all(|w| shard_of(w[0]) <= shard_of(w[1])),
                            "{what}: {order:?}"
                        );
                        if p.chunk_tiles() as usize % band == 0 {
                            assert!(order.windows(2).all(|w| w[0] <= w[1]), "{what}");
                        }
                    }
                }
            }
        }
        // Four ranks at 4096 tokens: 8-tile shards take 8-tile bands, not the GEMM's 16.
        assert_eq!(AllGatherPlan::new(4, 1024, 1024).unwrap().band(16), 8);
        assert_eq!(AllGatherPlan::new(2, 2048, 1024).unwrap().band(16), 16);
        assert_eq!(AllGatherPlan::new(3, 384, 128).unwrap().band(16), 3);
    }

    /// Each owner adds every rank's partial once, its own first, its peers' in rank order.
    #[test]
    fn sum_orders_start_at_the_owner() {
        for world in [1, 2, 3, 4, 8] {
            for owner in 0..world {
                let order = sum_order(world, owner);
                assert_eq!(order[0], owner);
                assert!(order[1..].windows(2).all(|w| w[0] < w[1]));
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, (0..world).collect::<Vec<_>>());
            }
        }
        assert_eq!(sum_order(4, 2), [2, 0, 1, 3]);
    }

    /// Every rank's partial of every shard has a slot of its own, inside the holder's
    /// `[world, rows, n]`; with the owner's placement the owner holds it, with the writer's the
    /// writer does (its stores stay local).
    #[test]
    fn partials_never_share_a_slot() {
        let n = 64;
        for (world, p, placement) in plans() {
            let mut seen = std::collections::HashSet::new();
            for rank in 0..world {
                for shard in 0..world {
                    let (holder, at) = p.partial_at(placement, (rank, shard), n, 0);
                    let want = match placement {
                        Placement::Owner => shard,
                        Placement::Writer => rank,
                    };
                    assert_eq!(holder, want);
                    assert!(at + 128 * n <= world * 128 * n && at % (128 * n) == 0);
                    assert!(seen.insert((holder, at)), "{placement:?} world {world}");
                }
            }
        }
    }

    /// Plans of 128 rows a shard at 1, 2, 3, 4 and 8 ranks, each with both placements.
    fn plans() -> impl Iterator<Item = (usize, ReduceScatterPlan, Placement)> {
        [1, 2, 3, 4, 8].into_iter().flat_map(|world| {
            [Placement::Owner, Placement::Writer].map(|placement| {
                (
                    world,
                    ReduceScatterPlan::new(world, 128).unwrap(),
                    placement,
                )
            })
        })
    }

    /// Every shard a rank computes is in exactly one launch, in its shard order; the writer's
    /// launches are whole runs of neighbouring shards, so each writes one block of its slots.
    #[test]
    fn launches_cover_the_shards_once() {
        for (world, p, placement) in plans() {
            for rank in 0..world {
                for fused in [false, true] {
                    let runs = p.launches(placement, rank, fused);
                    let flat: Vec<usize> = runs.iter().flat_map(|r| r.clone()).collect();
                    let mut want = p.shard_order(rank);
                    if fused {
                        want.retain(|&s| s != rank);
                    }
                    assert_eq!(flat, want, "{placement:?} world {world} rank {rank}");
                    for run in &runs {
                        let (_, first) = p.partial_at(placement, (rank, run.start), 64, 0);
                        for (i, s) in run.clone().enumerate() {
                            let (holder, at) = p.partial_at(placement, (rank, s), 64, 0);
                            assert_eq!(at, first + i * 128 * 64);
                            if run.len() > 1 {
                                assert_eq!(holder, rank);
                            }
                        }
                    }
                    if placement == Placement::Owner {
                        assert!(runs.iter().all(|r| r.len() == 1));
                    }
                }
            }
        }
        // Four ranks, pulled (a plan refused to run, its launches still well formed): at most
        // two launches before the owner's GEMM.
        let p = ReduceScatterPlan::new(4, 1024).unwrap();
        let one = |r: Range<usize>| vec![r];
        assert_eq!(p.launches(Placement::Writer, 0, true), one(1..4));
        assert_eq!(p.launches(Placement::Writer, 1, true), [2..4, 0..1]);
        assert_eq!(p.launches(Placement::Writer, 3, true), one(0..3));
    }

    /// Where the partials alternate (the writer's placement at two ranks), a rank's partials
    /// of one turn never share a slot with its peers' or its own of the other turn; elsewhere
    /// the turn changes nothing.
    #[test]
    fn alternating_partials_never_meet_the_call_before() {
        let n = 64;
        for (world, p, placement) in plans() {
            let alternates = p.alternates(placement);
            assert_eq!(alternates, placement == Placement::Writer && world == 2);
            let peers = |turn: usize| -> Vec<(usize, usize)> {
                (0..world)
                    .flat_map(|r| (0..world).filter(move |&s| s != r).map(move |s| (r, s)))
                    .map(|rs| p.partial_at(placement, rs, n, turn))
                    .collect()
            };
            let (even, odd) = (peers(0), peers(1));
            assert_eq!(peers(2), even);
            let shared = even.iter().filter(|x| odd.contains(x)).count();
            match alternates {
                true => assert_eq!(shared, 0, "world {world}"),
                false => assert_eq!(even, odd, "{placement:?} world {world}"),
            }
            for turn in [0, 1] {
                let mut seen = std::collections::HashSet::new();
                assert!(peers(turn).into_iter().all(|x| seen.insert(x)));
            }
        }
        let p = ReduceScatterPlan::new(2, 1024).unwrap();
        assert_eq!(p.partial_at(Placement::Writer, (0, 1), 8, 0), (0, 1024 * 8));
        assert_eq!(p.partial_at(Placement::Writer, (0, 1), 8, 1), (0, 0));
        assert_eq!(p.partial_at(Placement::Writer, (1, 0), 8, 1), (1, 1024 * 8));
    }

    #[test]
    fn partials_stay_with_their_writers_at_two_ranks_at_most() {
        for world in 1..=8 {
            let p = ReduceScatterPlan::new(world, 128).unwrap();
            assert!(p.check_placement(Placement::Owner).is_ok());
            let writer = p.check_placement(Placement::Writer);
            assert_eq!(writer.is_ok(), world <= 2, "world {world}");
        }
        let e = ReduceScatterPlan::new(4, 128)
            .unwrap()
            .check_placement(Placement::Writer)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most two ranks, not 4"), "{e}");
    }

    #[test]
    fn owners_wait_on_a_flag_at_two_ranks_with_a_staged_partial() {
        for world in 1..=8 {
            let p = ReduceScatterPlan::new(world, 128).unwrap();
            // Two ranks: one peer, whose partial is the owner's one staged input.
            assert_eq!(p.gated(true), world == 2, "world {world}");
            assert!(
                !p.gated(false),
                "world {world}: no staged input, nothing to gate"
            );
        }
    }

    /// Unless told, the pulled path's owners poll once and spread their loads, the owner's
    /// placement's load under the middle k-tile and poll every tile; told, both take what they
    /// are told.
    #[test]
    fn owners_load_as_measured_unless_told() {
        let (owner, writer) = (Placement::Owner, Placement::Writer);
        let p = ReduceScatterPlan::new(2, 128).unwrap();
        assert_eq!(p.owners_load(writer), PULLED_OWNERS);
        assert_eq!(p.owners_load(owner), LOCAL_OWNERS);
        assert_eq!(LOCAL_OWNERS.at, StagedLoadAt::Middle);
        let early = OwnersLoad {
            at: StagedLoadAt::KTile(2),
            polls: GatePolls::Once,
        };
        let told = p.with_owners_load(early);
        for placement in [owner, writer] {
            assert_eq!(told.owners_load(placement), early);
        }
        assert_eq!((told.world(), told.rows()), (2, 128));
        assert_ne!(told, p);
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
