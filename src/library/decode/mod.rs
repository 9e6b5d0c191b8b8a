//! Decode attention over a paged KV cache: a few new query tokens per sequence (1 to 16,
//! speculative decoding; causal among themselves) against the sequence's cached keys and values,
//! bf16 in and out with f32 accumulation, head dims 64, 128 and 256, grouped queries (up to 16
//! query heads per KV head, the group's queries served by one read of its keys and values), a
//! length per sequence.
//!
//! Tensors, in the layout vLLM and FlashInfer use:
//! - `q` and `o` `[batch, q_len, heads, d]`;
//! - the caches `k_cache` and `v_cache` `[num_pages, page_size, kv_heads, d]`;
//! - `block_table` `[batch, max_pages]` i32: sequence `b`'s token `p` is at row
//!   `p % page_size` of page `block_table[b, p / page_size]`;
//! - `seq_lens` `[batch]` i32: each sequence's length, its new tokens included (they are its
//!   last `q_len` tokens, already written to the cache).
//!
//! Query token `t` of a sequence of length `L` sees keys `0..=L - q_len + t` (the causal mask
//! aligned to the bottom right). A contiguous cache is the case of one page per sequence
//! (`block_table[b, 0] = b`, `page_size` the longest length).
//!
//! The kernel ([`build()`]): a CTA per (split of the keys, query chunk, KV head, sequence), on the
//! kernel parts: a producer warpgroup whose one thread streams the sequence's key tiles page by
//! page into a [`crate::parts::Ring`] by TMA (a 4-D tensor map over the cache, the page from the
//! block table as a coordinate, each box's slot and row in its page kept by a
//! [`crate::parts::PageCursor`]), and one consumer warpgroup holding the group's query rows
//! (`q_len · group` rows, padded to wgmma's 64) that computes `S = Q·Kᵀ` and `O += P·V` by wgmma
//! with the online softmax in f32 between. Over an FP8 e4m3 cache ([`DecodeConfig::fp8`]) the
//! consumer holds 16 query rows and each of its four warps takes 16 keys of every tile, read
//! from shared memory into `mma.sync` fragments and converted to f16 in registers
//! ([`crate::parts::fragments`]), its own softmax state merged with the others' at the end.
//! Few sequences split their keys over several CTAs
//! (flash-decoding, [`DecodeConfig::splits`]); where a launch's CTAs fit one an SM (or, over
//! long contiguous sequences, most of two waves of one: [`DecodeConfig::two_waves`]) the kernel
//! has two consumer warpgroups taking the key tiles in turn or each tile's halves of the keys
//! ([`DecodeConfig::consumers`]); with [`DecodeConfig::persistent`] a persistent grid of one CTA
//! an SM walks the items instead ([`crate::parts::PersistentGrid`]); the
//! splits' partial outputs and log-sum-exps go
//! to an f32 workspace, merged in a fixed order (deterministic) by a second kernel
//! ([`build_combine`], launched as a programmatic dependent of the decode kernel,
//! [`DecodeConfig::dependent_combine`]) or, with [`DecodeConfig::fold`], by the last split to
//! finish (a ticket, [`crate::parts::ticket`]).

mod build;
mod host;

pub use build::{build, build_combine};
pub(crate) use host::grown;
pub use host::{Decode, DecodeArgs, DecodeError, DecodeShapeError, KvScales};

use crate::parts::WarpSpecialized;
pub use ptx_isa::builder::PrefetchSize;

/// A configuration the kernel cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeConfigError {
    /// A head dimension other than 64, 128 or 256.
    #[error("head dim {0}: 64, 128 or 256")]
    HeadDim(u32),
    /// A query group the consumer's 64 rows do not hold.
    #[error("{0} query heads per KV head: 1 to 16")]
    Group(u32),
    /// Rows per page box that are not 16, 32 or 64.
    #[error("{0} rows per TMA box: 16, 32 or 64 (a divisor of the 64-key tile)")]
    PageRows(u32),
    /// A page size that is not a positive multiple of the rows a box reads from a page.
    #[error("pages of {page_size} tokens: a positive multiple of the {page_rows} rows a box reads")]
    PageSize {
        /// Tokens a page ([`DecodeConfig::page_size`]).
        page_size: u32,
        /// Rows a box reads ([`DecodeConfig::page_rows`]).
        page_rows: u32,
    },
    /// `cp.async` page loads over a bf16 cache: wgmma reads the ring through the async proxy,
    /// which generic-proxy `cp.async` writes do not reach without a proxy fence.
    #[error(
        "cp.async page loads take an FP8 cache (the bf16 consumer's wgmma reads the async proxy)"
    )]
    CpAsyncBf16,
    /// Evict-first loads with `cp.async` page loads: the L2 policy is carried by the TMA boxes.
    #[error("evict-first loads are TMA boxes': not with cp.async page loads")]
    EvictFirstCpAsync,
    /// A page touch ([`DecodeConfig::touch_pages`]) without `cp.async` page loads and their
    /// block-table window, or further ahead than the window holds entries.
    #[error(
        "pages touched {0} tiles ahead: 1 to {max} tiles, with cp.async page loads and their table window",
        max = crate::parts::PageWindow::MAX_LOOK
    )]
    TouchPages(u32),
    /// An L2 prefetch size ([`DecodeConfig::l2_prefetch`]) without `cp.async` page loads, which
    /// carry it.
    #[error("an L2 prefetch size is a cp.async copy's: with cp.async page loads only")]
    L2PrefetchTma,
    /// A cluster of KV heads ([`DecodeConfig::cluster_heads`]) of other than 1, 2, 4 or 8 CTAs.
    #[error("a cluster of {0} KV heads: 1, 2, 4 or 8")]
    ClusterHeads(u32),
    /// Consumer warpgroups ([`DecodeConfig::consumers`]) the kernel is not built with: 1, or 2
    /// at head dims 64 and 128 (at 256, one CTA an SM already, two O accumulators of 128
    /// registers a thread and their merge outgrow the SM).
    #[error("{0} consumer warpgroups: 1, or 2 at head dims 64 and 128")]
    Consumers(u32),
    /// Two consumer warpgroups over a ring of an odd count of stages (a stage must always be
    /// one warpgroup's: [`DecodeConfig::consumers`]) or of fewer than their merge takes.
    #[error(
        "two consumer warpgroups over {stages} ring stages: an even count of at least {fewest} \
         (each stage one warpgroup's; their merge reuses the ring)"
    )]
    ConsumerStages {
        /// The ring's stages ([`DecodeConfig::stages`]).
        stages: u32,
        /// The fewest two consumers take ([`DecodeConfig::pair_stages`]).
        fewest: u32,
    },
    /// Key halves ([`DecodeConfig::key_halves`]) over an FP8 cache, whose warps already take
    /// a tile's keys apart.
    #[error("key halves are two bf16 consumer warpgroups': not over an FP8 cache")]
    KeyHalvesFp8,
    /// A persistent grid ([`DecodeConfig::persistent`]) without two bf16 consumer warpgroups on
    /// each tile's key halves, or with clusters of KV heads.
    #[error(
        "a persistent grid takes two bf16 consumer warpgroups on each tile's key halves and no \
         clusters of KV heads"
    )]
    Persistent,
    /// A ring stage limit ([`DecodeConfig::stage_limit`]) below what the kernel needs.
    #[error("at most {most} ring stages: the kernel takes at least {fewest}")]
    StageLimit {
        /// The limit asked for.
        most: u32,
        /// The fewest stages the kernel takes (3 over an FP8 cache: its warps' merge).
        fewest: u32,
    },
}

/// What one decode kernel is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeConfig {
    /// The head dimension `d` (64, 128 or 256).
    pub head_dim: u32,
    /// Query heads per KV head (1 to 16).
    pub group: u32,
    /// Tokens a page of the cache the configuration is chosen for (a contiguous cache: its
    /// longest sequence, one page a sequence): it sets [`DecodeConfig::page_rows`] and, over an
    /// FP8 cache, the page loads ([`DecodeConfig::with_fp8`]). The kernel reads the cache's page
    /// size at launch and takes any multiple of `page_rows`.
    pub page_size: u32,
    /// Key rows one TMA box reads from a page (16, 32 or 64): the page size must be a multiple
    /// of it. 64 (a key tile a box) for pages of a multiple of 64 tokens.
    pub page_rows: u32,
    /// An FP8 e4m3 cache with a per-tensor or per-head scale (`k_scale`, `v_scale`: `[1]` or
    /// `[kv_heads]` f32) instead of bf16: the consumer's four warps each take 16 keys of every
    /// tile and read them from shared memory into `mma.sync` fragments, converted to f16 in
    /// registers (e4m3 values are exact in f16; [`crate::parts::fragments`]), over
    /// [`DecodeConfig::FP8_ROWS`] query rows (Q converted to f16 once); the warps' partial
    /// softmax states are merged at the end; the scales are folded into the softmax scale and O.
    pub fp8: bool,
    /// With several splits, the last split of each (sequence, KV head, query chunk) to finish
    /// combines them in the kernel, by a ticket ([`crate::parts::ticket`], the kernel's
    /// `counters` parameter), so a call is one launch; `false` (the default): launches of up to
    /// [`DecodeConfig::fold_up_to`] splits fold all the same (on a second kernel the launcher
    /// builds), more splits take a second kernel ([`build_combine`]). Either gives the same
    /// bits. The last split's 128 threads each combine 4 adjacent columns of one row, a 16-byte
    /// load a split. Measured on the H200 (BENCHMARKS.md, session 23, three processes of each,
    /// head dim 128), against session 22's fold (4 scattered columns a thread, 16 splits a
    /// step): at 1 x 128k's 33 splits 1.8-2.7 % faster (bf16 pages) and 4.0-6.2 % (FP8
    /// pages), now 0.2-1.1 % faster than the combine kernel there; at 16 splits 0.3-1.4 %.
    pub fold: bool,
    /// Without [`DecodeConfig::fold`], launches of at most this many splits still combine them
    /// in the decode kernel: the launcher also builds the kernel with `fold` (and its one-CTA
    /// kernel, [`DecodeConfig::solo_config`]) and runs it for them, more splits taking the
    /// combine kernel. [`DecodeConfig::MOST_SPLITS`] by default ([`DecodeConfig::new`]: every
    /// split the rule chooses, [`DecodeConfig::splits`]); 1: the combine kernel for every split
    /// launch. Measured on the H200 against the combine kernel as a programmatic dependent,
    /// head dim 128: folded, the contiguous FP8 cache 0.7-3.3 % faster at 1 x 128k (16 splits)
    /// and 0.4-1.9 % at 8 x 64k (2), bf16 -0.6 to +0.7 % (BENCHMARKS.md, session 22); the
    /// pages level at 8 x 64k (4 splits) and, with session 23's fold, 0.2-1.1 % faster at
    /// 1 x 128k (33 splits; the bound was 16 while the fold there was 1.6-4.9 % slower).
    pub fold_up_to: u32,
    /// The cache's loads mark the L2 lines they fill evict-first (`.L2::cache_hint` with an
    /// `evict_first` policy, PTX ISA 9.7.9.18 "createpolicy"; the cache is read once a step).
    /// Off by default (and with [`DecodeConfig::cp_async`] page loads, which carry no policy):
    /// measured on the H200 (BENCHMARKS.md, session 14) it gains 1-2 µs a call
    /// when the L2 holds only the last call's evict-first lines (calls back to back) and loses
    /// about 4 % of the bandwidth over the whole kernel when the L2 is full of other lines
    /// (after a 256 MiB clear).
    pub evict_first: bool,
    /// With several splits and the combine kernel, the combine is launched as a programmatic
    /// dependent of the decode kernel (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`):
    /// each decode CTA lets it start after its last key tile (`griddepcontrol.launch_dependents`,
    /// PTX ISA 9.7.13.13), so its CTAs are launched while the decode kernel's last CTAs end, and
    /// it waits for the decode kernel to complete (`griddepcontrol.wait`) before it reads the
    /// splits. A launch waited for (a launcher with a limit) is an ordinary one. On by default:
    /// measured on the H200 (BENCHMARKS.md, session 14) it takes 1.6-1.7 µs off a bf16 call at
    /// 1 x 128k (33 splits), 0.4-0.6 µs off an FP8 one, and is even at 4 splits.
    pub dependent_combine: bool,
    /// The decode kernel is launched as a programmatic dependent of the kernel before it on the
    /// stream (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`; FlashInfer's
    /// `enable_pdl`): its CTAs may be scheduled while that kernel's last CTAs end (after they
    /// let dependents start, `griddepcontrol.launch_dependents`, or exit), and each waits for it
    /// to complete (`griddepcontrol.wait`, PTX ISA 9.7.13.13) before it reads or writes global
    /// memory, so a decode step's launch overlaps the step before it. A launch waited for (a
    /// launcher with a limit) is an ordinary one. On by default: measured on the H200
    /// (BENCHMARKS.md, session 17) it takes 1.1-2.6 µs off a contiguous call back to back
    /// (32 x 4k bf16 122.3 → 121.0 µs, e4m3 65.4 → 64.3; 1 x 128k bf16 123.5 → 122.0, e4m3
    /// 67.8 → 66.5) and changes nothing from a cold L2.
    pub dependent_launch: bool,
    /// Over an FP8 cache: the producer warpgroup's 128 threads load each key tile's K and V rows
    /// with `cp.async.cg` (16 bytes a copy, PTX ISA 9.7.9.25.3.1), each thread's copies of a
    /// stage arriving on its `full` barrier when they complete
    /// (`cp.async.mbarrier.arrive.noinc`, 9.7.13.15.15; [`crate::parts::Ring::arrive_on_copies`])
    /// and each thread reading its rows' pages from the block table itself, instead of one
    /// thread's TMA boxes of [`DecodeConfig::page_rows`] rows. The default over an FP8 cache
    /// of pages of at most [`DecodeConfig::CP_ASYNC_PAGE`] tokens ([`DecodeConfig::with_fp8`]):
    /// measured on the H200 (BENCHMARKS.md, session 15) at 16-token pages it is never slower
    /// than the boxes and 1-6 % faster at 4k, 64k and 128k contexts, at 64-token pages 0.5-2.6 %
    /// faster; over a contiguous cache the boxes are 2-3 % faster up to 64k and even at 128k.
    /// Not with [`DecodeConfig::evict_first`] (a TMA box's policy).
    pub cp_async: bool,
    /// The kernel is built for one CTA an SM: at head dims 64 and 128 a ring of twice the
    /// stages ([`DecodeConfig::stages`], the shared memory two CTAs would share, the bytes in
    /// flight of two), the registers of one CTA ([`DecodeConfig::roles`]). At head dim 256
    /// every kernel is one.
    pub one_cta: bool,
    /// Where a launch's CTAs fit one an SM (the split problems, [`DecodeConfig::splits`]), the
    /// launcher runs a second kernel, this configuration built for one CTA an SM
    /// ([`DecodeConfig::one_cta`]; at head dims 64 and 128, where two CTAs share an SM); the
    /// same bits. Off by default: measured on the H200 (BENCHMARKS.md, session 16b) the deeper
    /// ring is slower at the same splits, bf16 and FP8, contiguous and paged (1 x 128k bf16
    /// 139.3 / 129.2 µs cold / back to back against the two-CTA kernel's 135.6 / 125.3; e4m3
    /// 82.4 / 70.8 against 81.0 / 69.1; 8 x 64k bf16 496.5 / 489.2 against 486.5 / 476.7;
    /// under ncu 86 % of DRAM peak against 91 % (bf16), 81 % against 85 % (e4m3)).
    pub solo: bool,
    /// Consumer warpgroups beside the producer: 1, or 2 at head dims 64 and 128, each with its
    /// own softmax state over the same query rows. Over an FP8 cache (and over bf16 without
    /// [`DecodeConfig::key_halves`]) the two take the split's key tiles in turn (warpgroup `c`
    /// the tiles `first + c`, `first + c + 2`, ...; each passes the other's stages of the
    /// ring, which has an even count of stages so each stage is always one warpgroup's and a
    /// parity wait never runs a lap ahead, PTX ISA 9.7.13.15.16); over bf16 by default both
    /// take every tile, each its half of the keys ([`DecodeConfig::key_halves`]). At the end
    /// over an FP8 cache the eight warps' states are merged, over bf16 the second warpgroup
    /// hands its O (through the ring's stage 1) and row statistics to the first, which merges
    /// them and stores. The CTA then holds an SM alone (384 threads): eight consumer warps, as
    /// two CTAs of one bring, over a ring of one CTA's stages. Where a launch's CTAs fit one an
    /// SM (the split problems), one consumer warpgroup's warps each carry a tile's whole
    /// dependent chain with no other warp on their scheduler, which a lower SM clock stretches
    /// (BENCHMARKS.md, session 23); two hide it. The launcher's kernel for those launches
    /// takes [`DecodeConfig::solo_consumers`]. Not the same bits as one consumer (the sums run
    /// in another order). Measured on the H200 (BENCHMARKS.md, session 24, head dim 128, the
    /// contiguous caches' split problems): under ncu at base clock (1.33 GHz) two are 5-8 %
    /// faster than one over bf16 (8 x 64k 477.6-486.1 µs against 512.5-516.7) and 17-20 %
    /// over FP8 (249.0-261.8 against 298.9-307.5; 1 x 128k 68.6-71.0 against 81.0-83.7), and
    /// barely slower than at free clocks; in the bench at the power cap's clock (six calls),
    /// level with one where the clock stays high (bf16 8 x 64k back to back 464.6-464.8 µs
    /// against 464.7-464.8; FP8 0.2-1.2 % slower) and up to 10 % faster where it falls (call
    /// `final`: one's FP8 263.5-271.2 µs in 6 of 9 repeats against 240.8-241.4 in the rest,
    /// two's 242.8-243.9 in all; bf16 473.4-500.9 against 473.6-474.5; over the six calls 30
    /// of one's 90 FP8 repeats at 8 x 64k ran 3 % or more over their row's fastest, 1 of two's).
    pub consumers: u32,
    /// [`DecodeConfig::consumers`] of the launcher's kernel for launches whose CTAs fit one an
    /// SM ([`DecodeConfig::solo_config`]) at head dims 64 and 128, where this configuration
    /// has one: 2 by default ([`DecodeConfig::new`]).
    pub solo_consumers: u32,
    /// With two consumer warpgroups over a bf16 cache ([`DecodeConfig::consumers`], or the
    /// launcher's kernel of [`DecodeConfig::solo_consumers`]): both take every key tile,
    /// warpgroup `c` its keys `32 c` to `32 c + 31` (`S` a 64 x 32 wgmma, `P·V` over those 32
    /// of V's rows, each clearing its own rows of V past the sequence), instead of alternate
    /// tiles; each releases every stage (two arrivals), so the ring keeps the rule's stages (3
    /// at head dim 128), and the two meet once more before the second hands its state over
    /// (the stages are then free). On by default over bf16 ([`DecodeConfig::new`]; an error
    /// over FP8, whose warps already take a tile's keys apart): measured on the H200
    /// (BENCHMARKS.md, session 24, three GPUs) level with one consumer warpgroup at the power
    /// cap's clock (8 x 64k 464.6-464.8 µs back to back against 464.7-464.8; 64-token pages
    /// 0.1 % slower) where alternate tiles (4 stages) are 0.6-1.5 % slower, and as robust at
    /// base clock (ncu 477.6 against alternate tiles' 469.4 and one's 513.6); at 4 stages 1.4-1.6
    /// % slower, at 2 9-11 %.
    pub key_halves: bool,
    /// Where a launch's CTAs fit one an SM (the split problems), an FP8 cache of 16-row boxes
    /// copied by `cp.async` ([`DecodeConfig::cp_async`]: pages of 16, 48, 80... tokens) is
    /// loaded by TMA boxes instead, by a second kernel the launcher runs
    /// ([`DecodeConfig::solo_config`]; head dims 64 and 128); the same bits. Off by default
    /// since session 18: with the copies' block-table window ([`DecodeConfig::table_window`])
    /// the copies beat the boxes at one CTA an SM, measured on the H200 (BENCHMARKS.md,
    /// session 18; 16-token pages shuffled, head dim 128, two processes: 8 x 64k 0.962 / 0.958
    /// and 0.960 / 0.955 of the contiguous cache cold / back to back against the boxes' 0.953 /
    /// 0.937 and 0.953 / 0.935; 1 x 128k even, 0.987 / 0.958 and 0.979 / 0.950 against 0.984 /
    /// 0.960 and 0.972 / 0.958; pages as a serving engine hands them out 0.989-1.015 against
    /// 0.961-0.998 cold). Session 17 had turned it on: without the window the boxes beat the
    /// copies at one CTA an SM.
    pub solo_boxes: bool,
    /// With [`DecodeConfig::cp_async`] page loads: each producer warp holds its next 32 key
    /// tiles' block-table entries across its lanes ([`crate::parts::PageWindow`]), read 32
    /// tiles ahead (one load a lane every 32 tiles), a tile's page one `shfl.sync`; without
    /// it, each tile's entry is read a tile ahead by every lane of the warp, and a tile whose
    /// entry is late waits for it. Ignored by TMA boxes. The default over an FP8 cache copied
    /// by `cp.async` in 16-row boxes (pages of 16 and 48 tokens: each warp on a page of its own
    /// most tiles; [`DecodeConfig::with_fp8`]): measured on the H200 (BENCHMARKS.md, session
    /// 18; 16-token pages shuffled, head dim 128, two processes) 32 x 16k 0.969 / 0.960 and
    /// 0.962 / 0.957 of the contiguous cache cold / back to back against 0.946 / 0.934 and
    /// 0.938 / 0.934 (ncu: 253.1 against 260.7 µs), 32 x 4k even; over 64-token pages (the
    /// four warps on one page) 0.7-1.7 points slower, so not there.
    pub table_window: bool,
    /// With [`DecodeConfig::table_window`] (`cp.async` page loads), each producer warp touches
    /// the page its copies read this many tiles later (1 to [`crate::parts::PageWindow::MAX_LOOK`];
    /// 0: none): its entry one `shfl.sync` from the window
    /// ([`crate::parts::PageWindow::page_touching`]), then lane 0's `prefetch.global.L2` (PTX
    /// ISA 9.7.9.15) of the line that starts the warp's first row of the CTA's KV head in K's
    /// page and one in V's: a line the copies read that many tiles later anyway (one of the 16
    /// rows a warp reads a tile), so the address translation of a page in another 2 MiB region
    /// (BENCHMARKS.md, session 15: most of the shuffled pages' cost) is taken off the copies'
    /// path. Off by default: on the H200 (session 20) touching 4 tiles ahead was 0.4-1.5 points
    /// slower at every bench row, 16 ahead 2.3-4.6.
    pub touch_pages: u32,
    /// With [`DecodeConfig::cp_async`] page loads: each copy carries an L2 prefetch size
    /// (`cp.async.cg.shared.global.L2::256B`, PTX ISA 9.7.9.25.3.1 `.level::prefetch_size`,
    /// PTX 7.4): a hint that the L2 may fetch that many bytes around the copy's 16, so a miss
    /// on one KV head's 128-byte slice of a token row (FP8, d 128) may bring the neighbouring
    /// head's slice of the same row with it, which that head's CTA, running at the same time,
    /// reads. `None` (the default): measured on the H200 (BENCHMARKS.md, session 21, FP8
    /// 16-token pages shuffled, in order and as served, 64-token pages, d 128, three processes)
    /// `.L2::128B` changes nothing (a warp's copies already read each 128-byte line whole: the
    /// same L2 requests and DRAM bytes under ncu), and `.L2::256B` is 2-12 % slower at every
    /// row (32 x 16k shuffled back to back 0.863-0.873 of the contiguous cache against
    /// 0.953-0.959; ncu: 5.6 % more DRAM bytes, 5 % of the L2's sectors hits).
    pub l2_prefetch: Option<PrefetchSize>,
    /// The CTAs of this many consecutive KV heads of a sequence (and split) launched as one
    /// thread-block cluster (1, 2, 4 or 8; 1: no cluster), so they run on one GPC
    /// (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`): the heads of a sequence read the same pages
    /// (a page holds every KV head's rows), so their address translations are the same ones,
    /// taken once a GPC instead of once on each of the GPCs the heads' CTAs land on. Where it
    /// does not divide the KV heads, the last cluster's CTAs past them end at once. No CTA
    /// reads a peer's shared memory. 2 over an FP8 cache ([`DecodeConfig::with_fp8`]), else 1.
    /// On the H200 (BENCHMARKS.md, session 21, d 128, 8 KV heads, three processes) clusters of
    /// 2 were faster or level at every FP8 bench row (the 16-token pages shuffled 1.7-3.7 % at
    /// 32 x 4k and 32 x 16k, the contiguous cache 0.5-2.5 %), clusters of 4 and 8 10-30 %
    /// slower; a bf16 cache in clusters of 2 was measured paged only (level to 1.2 % faster).
    pub cluster_heads: u32,
    /// At most this many stages in the K/V ring ([`DecodeConfig::stages`]; `None`: the rule's,
    /// [`DecodeConfig::stages_by_rule`]). At head dims 64 and 128 it is the kernel for launches
    /// whose CTAs share SMs (two an SM), and a launch whose CTAs fit one an SM runs a second
    /// kernel with the rule's stages ([`DecodeConfig::solo_config`]); at 256 (one CTA an SM) it
    /// is every launch's. Fewer stages put fewer bytes in flight an SM. The consumer's merge of
    /// an FP8 cache's warp states reuses the ring, which takes 3 stages. The defaults
    /// ([`DecodeConfig::new`], [`DecodeConfig::with_fp8`]) are
    /// [`DecodeConfig::measured_stage_limit`]'s. With a limit the split rule takes two CTAs an
    /// SM first ([`DecodeConfig::splits`]). At head dim 128, measured on the H200
    /// (BENCHMARKS.md, session 22, pages shuffled, back to back, against the rule's stages in
    /// the same processes): FP8 16-token pages 2.5-6.4 % faster at every
    /// problem (32 x 4k 0.989-0.992 of the contiguous cache, 1 x 128k 0.965-0.997, against
    /// 0.942-0.958), 64-token pages level to 10 % faster; bf16 16-token pages 0.6-1.4 %. At one
    /// CTA an SM fewer stages are slower (1 x 128k FP8: 3 stages 74.6 µs, 4 72.1, 6 71.2), as
    /// are more (the one-CTA kernel's 12). What one CTA an SM gives up with one consumer
    /// warpgroup: its warps' per-tile chain is on the critical path, so it slows when the SM
    /// clock falls (the 700 W power cap holds these kernels at 1.74-1.80 GHz): under ncu at 1.33
    /// GHz the split problems' contiguous FP8 cache 25-28 % slower, bf16 11-15 %, against 1-5 %
    /// and 2-5 % at two CTAs an SM (BENCHMARKS.md, session 23); the default's two consumer
    /// warpgroups there ([`DecodeConfig::solo_consumers`]) hide it as two CTAs do.
    /// `with_stage_limit(Some(3))` over a contiguous FP8 cache takes two CTAs an SM there: 0.1-0.7
    /// % slower at 8 x 64k and 1.4-2.8 % at 1 x 128k at those clocks, back to back.
    pub stage_limit: Option<u32>,
    /// The kernel walks its work items (a split of the keys, a query chunk, a KV head and a
    /// sequence each, split fastest) as a persistent grid of one CTA an SM
    /// ([`crate::parts::PersistentGrid`]: CTA `c` of `G` takes items `c`, `c + G`, ...; the
    /// launcher sizes the grid to `min(items, SMs)`), instead of a CTA an item. The producer's
    /// ring and its cursor run on from one item to the next, so the next item's key tiles and
    /// Q (a ring of two Q buffers, released by both consumers after an item's last tile) load
    /// while the consumers end the last; the second consumer's O goes to the first through a
    /// buffer of its own (not the ring's stage 1, which the next item's tiles may hold), after
    /// the two meet at [`DecodeConfig::MEET_BARRIER`]. Takes two bf16 consumer warpgroups on
    /// each tile's key halves ([`DecodeConfig::consumers`], [`DecodeConfig::key_halves`]) and
    /// no clusters ([`DecodeConfig::cluster_heads`]): [`DecodeConfigError::Persistent`]. The
    /// same bits as the two-consumer kernel of a CTA an item. Off by default.
    pub persistent: bool,
    /// Over a bf16 cache, a launch whose CTAs each read a long run of contiguous keys (at least
    /// [`DecodeConfig::LONG_RUN`] keys, from pages of at least as many tokens: a contiguous
    /// cache of long sequences) and fill most of two waves of one CTA an SM (more than the SMs,
    /// at least 70 % of twice them) takes the launcher's kernel for one CTA an SM
    /// ([`DecodeConfig::solo_config`]: two consumer warpgroups) as a launch whose CTAs fit one
    /// an SM does, instead of one wave of two CTAs an SM ([`DecodeConfig::takes_solo`]): one CTA
    /// an SM streams a sequence's contiguous keys faster than two (as the split problems' 2
    /// splits beat 4, [`DecodeConfig::splits`]). On by default: measured on the H200
    /// (BENCHMARKS.md, session 25, head dim 128, three processes) at 32 x 16k (256 CTAs)
    /// 1.4-1.6 % faster from a cold L2 (487.3-487.9 µs against 494.2-495.6) and back to back
    /// (475.9-476.5 against 483.7-485.8), at 32 x 12k 1.0-1.4 %, at 24 x 16k (192 CTAs, 73 %
    /// of two waves) 1.2-1.6 %; level to 0.6 % slower at 32 x 8k and 0.5-1.3 % slower at 32 x
    /// 4k, where the second wave's start costs what one CTA an SM gains; over 64-token pages at
    /// 32 x 16k not faster (-0.6 to +1.6 %).
    pub two_waves: bool,
}

/// The most new tokens a sequence may have.
pub const MAX_Q_LEN: u32 = 16;

impl DecodeConfig {
    /// Keys per tile: the N of `S = Q·Kᵀ` and the K of `P·V`.
    pub const BLOCK_N: u32 = 64;
    /// Query rows of the consumer warpgroup over a bf16 cache: one wgmma M.
    pub const ROWS: u32 = 64;
    /// Query rows over an FP8 cache: one `mma.m16n8k16` M, which every warp of the consumer
    /// holds whole (its own 16 keys of each tile).
    pub const FP8_ROWS: u32 = 16;
    /// Columns of a TMA box and a shared slab: 64 bf16, the 128-byte swizzle's span.
    pub const SLAB: u32 = 64;
    /// The named barrier the consumer warpgroup meets at after clearing a V tile's rows past
    /// the keys (PTX ISA 9.7.13.1; 0 is the CTA's); with two consumer warpgroups
    /// ([`DecodeConfig::consumers`]) the second's is the id after it, and over an FP8 cache the
    /// two meet at this one for Q's conversion and their warps' merge.
    pub const CLEAR_BARRIER: u32 = 1;
    /// The largest page (tokens) whose FP8 cache [`DecodeConfig::with_fp8`] loads by `cp.async`
    /// ([`DecodeConfig::cp_async`]); larger pages and contiguous caches by TMA boxes.
    pub const CP_ASYNC_PAGE: u32 = 64;
    /// The named barrier a bf16 cache's second consumer warpgroup hands its O and row
    /// statistics to the first at ([`DecodeConfig::consumers`]; the consumers' own barriers
    /// for a V tile's clearing are [`DecodeConfig::CLEAR_BARRIER`] and the id after it).
    pub const HANDOVER_BARRIER: u32 = 3;
    /// The named barrier the two bf16 consumer warpgroups of a persistent kernel
    /// ([`DecodeConfig::persistent`]) meet at after an item's last tile, before the second
    /// hands its state over at [`DecodeConfig::HANDOVER_BARRIER`]: a barrier of its own, so the
    /// second's arrival there for one item and its wait here for the next never complete one
    /// barrier together (PTX ISA 9.7.13.1: a barrier completes on its count of arrivals,
    /// whichever instruction made them).
    pub const MEET_BARRIER: u32 = 4;
    /// The fewest tokens a page of a cache taken for a contiguous one (one page a sequence) by
    /// [`DecodeConfig::measured_stage_limit`] and the split rule ([`DecodeConfig::splits`]).
    pub const CONTIGUOUS_PAGE: u32 = 1024;
    /// The fewest keys a CTA reads, from pages of at least as many tokens, for
    /// [`DecodeConfig::two_waves`]: a contiguous cache (one page a sequence) of sequences this
    /// long.
    pub const LONG_RUN: u32 = 12288;
    /// The most splits [`DecodeConfig::splits`] chooses, and the default
    /// [`DecodeConfig::fold_up_to`]: every split launch the rule makes folds.
    pub const MOST_SPLITS: u32 = 64;

    /// The configuration for `head_dim`, `group` and the cache's `page_size` (tokens a page): a
    /// bf16 cache, plain loads, the splits combined by the combine kernel launched as a
    /// programmatic dependent; the ring's stage limit [`DecodeConfig::measured_stage_limit`]'s
    /// for a bf16 cache ([`DecodeConfig::stage_limit`]); launches whose CTAs fit one an SM on
    /// two consumer warpgroups at head dims 64 and 128 ([`DecodeConfig::solo_consumers`]), each
    /// on its half of every key tile ([`DecodeConfig::key_halves`]). A contiguous cache's
    /// `page_size` is its longest sequence (one page a sequence).
    pub fn new(head_dim: u32, group: u32, page_size: u32) -> DecodeConfig {
        let page_rows = match page_size % 64 {
            0 => 64,
            r if r % 32 == 0 => 32,
            _ => 16,
        };
        DecodeConfig {
            head_dim,
            group,
            page_size,
            page_rows,
            fp8: false,
            fold: false,
            fold_up_to: Self::MOST_SPLITS,
            evict_first: false,
            dependent_combine: true,
            dependent_launch: true,
            cp_async: false,
            one_cta: false,
            solo: false,
            consumers: 1,
            solo_consumers: 2,
            key_halves: true,
            solo_boxes: false,
            table_window: false,
            touch_pages: 0,
            l2_prefetch: None,
            cluster_heads: 1,
            stage_limit: Self::measured_stage_limit(head_dim, false, false, page_size),
            persistent: false,
            two_waves: true,
        }
    }

    /// The same over an FP8 e4m3 cache ([`DecodeConfig::fp8`]), its pages loaded by `cp.async`
    /// when they hold at most [`DecodeConfig::CP_ASYNC_PAGE`] tokens ([`DecodeConfig::cp_async`]),
    /// else (larger pages, a contiguous cache) by TMA boxes; the copies of 16-row boxes with
    /// their block-table entries read a window ahead ([`DecodeConfig::table_window`]); the KV
    /// heads' CTAs in clusters of 2 ([`DecodeConfig::cluster_heads`]); the ring's stage limit
    /// [`DecodeConfig::measured_stage_limit`]'s for an FP8 cache ([`DecodeConfig::stage_limit`]).
    pub fn with_fp8(self) -> DecodeConfig {
        let cp_async = self.page_size <= Self::CP_ASYNC_PAGE;
        DecodeConfig {
            fp8: true,
            cp_async,
            table_window: cp_async && self.page_rows == 16,
            cluster_heads: 2,
            key_halves: false,
            stage_limit: Self::measured_stage_limit(self.head_dim, true, cp_async, self.page_size),
            ..self
        }
    }

    /// The ring stage limit [`DecodeConfig::new`] and [`DecodeConfig::with_fp8`] set
    /// ([`DecodeConfig::stage_limit`]), the fastest measured on the H200 (BENCHMARKS.md, session
    /// 22; the four bench problems, the contiguous caches, bf16 16-token pages and FP8 16- and
    /// 64-token pages shuffled; against the rule's stages in the same processes, back to back):
    /// at head dim 64 3 stages of any cache (bf16 of 6, FP8 of 12: 3-44 % faster, the FP8 pages
    /// and the split problems most); at 128 3 over an FP8 cache copied by `cp.async` (of 6:
    /// 2.5-6.4 %) and 2 over bf16 16-row page boxes (of 3: 0.6-1.4 %) and over a contiguous bf16
    /// cache (pages of at least [`DecodeConfig::CONTIGUOUS_PAGE`] tokens; of 3, session 25's
    /// reading of eight calls of sessions 22 and 23: 32 x 4k 0.4-0.9 % faster cold and 0.6-0.8
    /// % back to back, 32 x 16k level to 0.6 % faster), none over an FP8 cache's TMA boxes or
    /// bf16 32- and 64-row page boxes (even or slower where measured); at 256 (one CTA an SM) 4
    /// over FP8 (of 6: the contiguous cache 0.2-4 %, the pages 4-6 % at 32 x 4k and 1 x 128k and
    /// -4 to +3 % at the two-wave 32 x 16k and 8 x 64k) and 2 over bf16 (of 3: -0.2 to +1.5 %).
    /// `page_size`: the tokens a page the configuration is chosen for
    /// ([`DecodeConfig::page_size`]).
    pub fn measured_stage_limit(
        head_dim: u32,
        fp8: bool,
        cp_async: bool,
        page_size: u32,
    ) -> Option<u32> {
        let rows16 = page_size % 32 != 0;
        let contiguous = page_size >= Self::CONTIGUOUS_PAGE;
        match (head_dim, fp8) {
            (64, _) => Some(3),
            (128, true) => cp_async.then_some(3),
            (128, false) => (rows16 || contiguous).then_some(2),
            (256, true) => Some(4),
            (256, false) => Some(2),
            _ => None,
        }
    }

    /// The same with the splits combined in the decode kernel ([`DecodeConfig::fold`]).
    pub fn with_fold(self) -> DecodeConfig {
        DecodeConfig { fold: true, ..self }
    }

    /// The same with launches of at most `splits` splits folded
    /// ([`DecodeConfig::fold_up_to`]; 1: none).
    pub fn with_fold_up_to(self, splits: u32) -> DecodeConfig {
        DecodeConfig {
            fold_up_to: splits,
            ..self
        }
    }

    /// Whether a launch of `splits` splits combines them in the decode kernel: always with
    /// [`DecodeConfig::fold`], else from 2 to [`DecodeConfig::fold_up_to`] splits.
    pub fn folds(&self, splits: usize) -> bool {
        self.fold || (2..=self.fold_up_to as usize).contains(&splits)
    }

    /// The folded kernel the launcher builds beside this one for launches that fold
    /// ([`DecodeConfig::folds`]): this configuration with [`DecodeConfig::fold`], where it has
    /// none and folds some launches.
    pub fn folded_config(&self) -> Option<DecodeConfig> {
        (!self.fold && self.fold_up_to >= 2).then(|| self.with_fold())
    }

    /// The same with the combine launched as a programmatic dependent or as an ordinary kernel
    /// ([`DecodeConfig::dependent_combine`]).
    pub fn with_dependent_combine(self, dependent_combine: bool) -> DecodeConfig {
        DecodeConfig {
            dependent_combine,
            ..self
        }
    }

    /// The same launched as a programmatic dependent of the kernel before it or not
    /// ([`DecodeConfig::dependent_launch`]).
    pub fn with_dependent_launch(self, dependent_launch: bool) -> DecodeConfig {
        DecodeConfig {
            dependent_launch,
            ..self
        }
    }

    /// The same with the cache's loads evict-first in L2 or not ([`DecodeConfig::evict_first`]).
    pub fn with_evict_first(self, evict_first: bool) -> DecodeConfig {
        DecodeConfig {
            evict_first,
            ..self
        }
    }

    /// The same with the FP8 cache's pages loaded by `cp.async` or by TMA boxes
    /// ([`DecodeConfig::cp_async`]).
    pub fn with_cp_async(self, cp_async: bool) -> DecodeConfig {
        DecodeConfig { cp_async, ..self }
    }

    /// The same with `consumers` consumer warpgroups ([`DecodeConfig::consumers`]).
    pub fn with_consumers(self, consumers: u32) -> DecodeConfig {
        DecodeConfig { consumers, ..self }
    }

    /// The same with the launcher's kernel for launches whose CTAs fit one an SM of
    /// `consumers` consumer warpgroups ([`DecodeConfig::solo_consumers`]).
    pub fn with_solo_consumers(self, consumers: u32) -> DecodeConfig {
        DecodeConfig {
            solo_consumers: consumers,
            ..self
        }
    }

    /// The same with two bf16 consumer warpgroups on each key tile's halves or on alternate
    /// tiles ([`DecodeConfig::key_halves`]).
    pub fn with_key_halves(self, key_halves: bool) -> DecodeConfig {
        DecodeConfig { key_halves, ..self }
    }

    /// The same as a persistent grid or a CTA an item ([`DecodeConfig::persistent`]).
    pub fn with_persistent(self, persistent: bool) -> DecodeConfig {
        DecodeConfig { persistent, ..self }
    }

    /// The same with launches that fill most of two waves of one CTA an SM over long runs of
    /// contiguous keys on the kernel for one CTA an SM or not ([`DecodeConfig::two_waves`]).
    pub fn with_two_waves(self, two_waves: bool) -> DecodeConfig {
        DecodeConfig { two_waves, ..self }
    }

    /// Whether a launch of `ctas` CTAs (splits · query chunks · KV heads · sequences), each
    /// reading at most `keys` keys (the longest sequence over the splits) from pages of
    /// `page_size` tokens, on `sms` SMs takes the launcher's kernel for one CTA an SM
    /// ([`DecodeConfig::solo_config`], where there is one): where its CTAs fit one an SM, and
    /// with [`DecodeConfig::two_waves`] over a bf16 cache where `keys` and `page_size` are at
    /// least [`DecodeConfig::LONG_RUN`] and the CTAs fill most of two waves of one an SM (more
    /// than `sms`, at least 70 % of `2 · sms`).
    ///
    /// ```
    /// use ptxkit::library::decode::DecodeConfig;
    ///
    /// let cfg = DecodeConfig::new(128, 4, 16384);
    /// // 1 x 128k over 8 KV heads, 16 splits: 128 CTAs on 132 SMs.
    /// assert!(cfg.takes_solo(128, 8192, 131072, 132));
    /// // 32 contiguous sequences of 16k: 256 CTAs, two waves of one an SM.
    /// assert!(cfg.takes_solo(256, 16384, 16384, 132));
    /// // Over 64-token pages, or sequences of 4k, one wave of two CTAs an SM.
    /// assert!(!cfg.takes_solo(256, 16384, 64, 132));
    /// assert!(!cfg.takes_solo(256, 4096, 4096, 132));
    /// // Too few for most of a second wave, or more than two.
    /// assert!(!cfg.takes_solo(160, 16384, 16384, 132));
    /// assert!(!cfg.takes_solo(512, 16384, 16384, 132));
    /// assert!(!cfg.with_fp8().takes_solo(256, 16384, 16384, 132));
    /// assert!(!cfg.with_two_waves(false).takes_solo(256, 16384, 16384, 132));
    /// ```
    pub fn takes_solo(&self, ctas: usize, keys: usize, page_size: usize, sms: usize) -> bool {
        let sms = sms.max(1);
        if ctas <= sms {
            return true;
        }
        let run = Self::LONG_RUN as usize;
        let long = self.two_waves && !self.fp8 && keys >= run && page_size >= run;
        long && ctas <= 2 * sms && ctas * 10 >= 14 * sms
    }

    /// Whether two consumer warpgroups take each key tile's halves
    /// ([`DecodeConfig::key_halves`]) in this kernel.
    pub fn halves_tiles(&self) -> bool {
        self.key_halves && self.consumers == 2 && !self.fp8
    }

    /// The same built for one CTA an SM or not ([`DecodeConfig::one_cta`]).
    pub fn with_one_cta(self, one_cta: bool) -> DecodeConfig {
        DecodeConfig { one_cta, ..self }
    }

    /// The same with the launcher's kernel for one CTA an SM or without
    /// ([`DecodeConfig::solo`]).
    pub fn with_solo(self, solo: bool) -> DecodeConfig {
        DecodeConfig { solo, ..self }
    }

    /// The same with the launcher's TMA-box kernel for launches whose CTAs fit one an SM or
    /// without ([`DecodeConfig::solo_boxes`]).
    pub fn with_solo_boxes(self, solo_boxes: bool) -> DecodeConfig {
        DecodeConfig { solo_boxes, ..self }
    }

    /// The same with the `cp.async` producer's block-table entries read a window of 32 tiles
    /// ahead or a tile ahead ([`DecodeConfig::table_window`]).
    pub fn with_table_window(self, table_window: bool) -> DecodeConfig {
        DecodeConfig {
            table_window,
            ..self
        }
    }

    /// The same with each producer warp touching the page its copies read `tiles` tiles later,
    /// or not (0; [`DecodeConfig::touch_pages`]).
    pub fn with_touch_pages(self, tiles: u32) -> DecodeConfig {
        DecodeConfig {
            touch_pages: tiles,
            ..self
        }
    }

    /// The same with the `cp.async` copies carrying an L2 prefetch size or not
    /// ([`DecodeConfig::l2_prefetch`]).
    pub fn with_l2_prefetch(self, l2_prefetch: Option<PrefetchSize>) -> DecodeConfig {
        DecodeConfig {
            l2_prefetch,
            ..self
        }
    }

    /// The same with the CTAs of `heads` consecutive KV heads launched as one cluster
    /// ([`DecodeConfig::cluster_heads`]; 1: none).
    pub fn with_cluster_heads(self, heads: u32) -> DecodeConfig {
        DecodeConfig {
            cluster_heads: heads,
            ..self
        }
    }

    /// The same with at most `stages` ring stages ([`DecodeConfig::stage_limit`]).
    pub fn with_stage_limit(self, stages: Option<u32>) -> DecodeConfig {
        DecodeConfig {
            stage_limit: stages,
            ..self
        }
    }

    /// The kernel for launches whose CTAs fit one an SM, where it differs from this one: built
    /// for one CTA an SM where this is not ([`DecodeConfig::solo`]), loading an FP8 cache
    /// of 16-row boxes by TMA boxes where this copies it by `cp.async`
    /// ([`DecodeConfig::solo_boxes`], head dims 64 and 128), with two consumer warpgroups
    /// where this has one ([`DecodeConfig::solo_consumers`]), and with the rule's ring stages
    /// where this one has fewer ([`DecodeConfig::stage_limit`]).
    pub fn solo_config(&self) -> Option<DecodeConfig> {
        let one_cta = self.solo && self.ctas_per_sm() > 1;
        let boxes =
            self.solo_boxes && self.cp_async && self.page_rows == 16 && self.head_dim <= 128;
        let limited = self.ctas_per_sm() > 1 && self.fewer_stages();
        let pair = self.solo_consumers == 2 && self.consumers == 1 && self.head_dim <= 128;
        match one_cta || boxes || limited || pair {
            // TMA boxes touch no pages (DecodeConfig::touch_pages) and carry no prefetch size
            // (DecodeConfig::l2_prefetch).
            true => Some(
                self.with_one_cta(self.one_cta || one_cta)
                    .with_consumers(if pair { 2 } else { self.consumers })
                    .with_stage_limit(None)
                    .with_cp_async(self.cp_async && !boxes)
                    .with_touch_pages(if boxes { 0 } else { self.touch_pages })
                    .with_l2_prefetch(if boxes { None } else { self.l2_prefetch }),
            ),
            false => None,
        }
    }

    /// Arrivals that complete a stage's `full` barrier: the producer's one
    /// `arrive.expect_tx` (TMA), or each producer thread's `cp.async.mbarrier.arrive.noinc`
    /// ([`DecodeConfig::cp_async`]).
    pub fn fills(&self) -> u32 {
        if self.cp_async {
            crate::parts::WarpSpecialized::WARPGROUP
        } else {
            1
        }
    }

    /// The roles: a producer warpgroup (one thread issues the loads) and one consumer warpgroup.
    /// Two CTAs share an SM at head dims 64 and 128 (128 registers a thread at launch: 24 to the
    /// producer, 232 to the consumer), one at 256 (whose O takes 128 registers; the producer
    /// keeps 40 when its threads copy a tile's 16 rows of 256 bytes by `cp.async`,
    /// [`DecodeConfig::cp_async`], from the 256 a thread holds at launch). With two consumer
    /// warpgroups ([`DecodeConfig::consumers`], one CTA an SM) 24 and 240, in a persistent grid
    /// ([`DecodeConfig::persistent`]) 56 and 224.
    pub fn roles(&self) -> WarpSpecialized {
        if self.consumers == 2 {
            // 384 threads hold 168 registers each at launch: 24 to the producer (its copies
            // of rows of at most 128 bytes, as at two CTAs an SM), 240 to each consumer; a
            // persistent grid's producer 56 (its items' ids and Q's ring beside the page
            // cursors: 40 spill with 16-row boxes) and its consumers 224 (what 56 leaves).
            return match self.persistent {
                true => WarpSpecialized::new(2, 56, 224),
                false => WarpSpecialized::new(2, 24, 240),
            };
        }
        match (self.ctas_per_sm(), self.cp_async) {
            (1, true) => WarpSpecialized::new(1, 40, 240),
            (1, false) => WarpSpecialized::new(1, 24, 240),
            _ => WarpSpecialized::new(1, 24, 232),
        }
    }

    /// CTAs an SM holds: 2, or 1 at head dim 256, built for one ([`DecodeConfig::one_cta`])
    /// and with two consumer warpgroups ([`DecodeConfig::consumers`]).
    pub fn ctas_per_sm(&self) -> u32 {
        if self.head_dim > 128 || self.one_cta || self.consumers > 1 {
            1
        } else {
            2
        }
    }

    /// Stages of the K/V ring: [`DecodeConfig::stages_by_rule`], at most
    /// [`DecodeConfig::stage_limit`].
    pub fn stages(&self) -> u32 {
        let rule = self.stages_by_rule();
        self.stage_limit.map_or(rule, |most| most.min(rule))
    }

    /// Whether the stage limit leaves the ring fewer stages than the rule's (the name's `_stN`,
    /// the split rule's two CTAs an SM first, the second kernel with the rule's).
    pub fn fewer_stages(&self) -> bool {
        self.stages() < self.stages_by_rule()
    }

    /// What half of shared memory holds beside Q (the whole at d 256, and for one CTA an SM:
    /// twice the stages). An FP8 stage is half a bf16 one: twice the stages, the same bytes in
    /// flight.
    pub fn stages_by_rule(&self) -> u32 {
        let half = match (self.head_dim, self.fp8) {
            (64, false) => 6,
            (64, true) => 12,
            (_, true) => 6,
            _ => 3,
        };
        match (self.one_cta, self.consumers) {
            (true, _) if self.head_dim <= 128 => 2 * half,
            // Two consumer warpgroups on alternate tiles take alternate stages: an even count.
            // On each tile's key halves the rule's (measured faster than 4 and 2 at head dim
            // 128: BENCHMARKS.md, session 24).
            (false, 2) if !self.halves_tiles() => half + half % 2,
            _ => half,
        }
    }

    /// The fewest ring stages under two consumer warpgroups ([`DecodeConfig::consumers`]): over
    /// an FP8 cache 6 (the eight warps' states, merged through the ring's tiles at the end,
    /// take 70 KB at head dim 128, 6 stages of 16 KB, and 37 KB at 64, 6 of 8); over bf16 2
    /// (the second warpgroup's O, a stage's K and V, handed over in stage 1, always its own).
    pub fn pair_stages(&self) -> u32 {
        if self.fp8 { 6 } else { 2 }
    }

    /// Query rows a CTA holds: [`DecodeConfig::ROWS`], or [`DecodeConfig::FP8_ROWS`] over an
    /// FP8 cache.
    pub fn rows(&self) -> u32 {
        if self.fp8 { Self::FP8_ROWS } else { Self::ROWS }
    }

    /// The consumer's releases of a stage: its warpgroup's leader (bf16; both warpgroups'
    /// with [`DecodeConfig::key_halves`]), or each of its four warps' first lane (FP8: the
    /// warps run apart).
    pub fn releases(&self) -> u32 {
        match (self.fp8, self.halves_tiles()) {
            (true, _) => 4,
            (false, true) => 2,
            (false, false) => 1,
        }
    }

    /// Bytes of a cache element: 2 (bf16) or 1 (e4m3).
    pub fn cache_bytes(&self) -> u32 {
        if self.fp8 { 1 } else { 2 }
    }

    /// Columns of one TMA box of the cache and of its tile's slabs in shared memory: 64 bf16
    /// (the 128-byte swizzle's span, which wgmma reads), or 128 e4m3 (64 at head dim 64), one
    /// swizzle span ([`DecodeConfig::cache_swizzle`]) that `ldmatrix` reads without bank
    /// conflicts.
    pub fn cache_slab(&self) -> u32 {
        if self.fp8 {
            self.head_dim.min(128)
        } else {
            Self::SLAB
        }
    }

    /// The swizzle of the cache's slabs: 128 bytes, or 64 for e4m3 rows of 64.
    pub fn cache_swizzle(&self) -> smem::SwizzleMode {
        match self.cache_slab() * self.cache_bytes() {
            64 => smem::SwizzleMode::B64,
            _ => smem::SwizzleMode::B128,
        }
    }

    /// Query tokens a CTA holds: as many whole groups as fit its rows
    /// ([`DecodeConfig::rows`]), at most [`MAX_Q_LEN`].
    pub fn tokens_per_cta(&self) -> u32 {
        (self.rows() / self.group.max(1)).clamp(1, MAX_Q_LEN)
    }

    /// Bytes of one K (or V) tile of the ring.
    pub fn kv_bytes(&self) -> u32 {
        Self::BLOCK_N * self.head_dim * self.cache_bytes()
    }

    /// Bytes of Q's buffer ([`DecodeConfig::rows`] rows of 16-bit values).
    pub fn q_bytes(&self) -> u32 {
        self.rows() * self.head_dim * 2
    }

    /// The kernel's name.
    pub fn name(&self) -> String {
        format!(
            "decode_{}_d{}_g{}_r{}{}{}{}{}{}{}{}{}{}{}{}{}{}",
            if self.fp8 { "e4m3" } else { "bf16" },
            self.head_dim,
            self.group,
            self.page_rows,
            if self.fold { "_fold" } else { "" },
            if self.evict_first { "_ef" } else { "" },
            if self.dependent_combine { "" } else { "_plain" },
            if self.dependent_launch { "_dl" } else { "" },
            if self.cp_async { "_ca" } else { "" },
            if self.cp_async && self.table_window {
                "_tw"
            } else {
                ""
            },
            match self.touch_pages {
                0 => String::new(),
                n => format!("_pt{n}"),
            },
            match self.l2_prefetch {
                None => "",
                Some(PrefetchSize::B64) => "_l2p64",
                Some(PrefetchSize::B128) => "_l2p128",
                Some(PrefetchSize::B256) => "_l2p256",
            },
            match self.cluster_heads {
                1 => String::new(),
                n => format!("_ch{n}"),
            },
            if self.one_cta && self.head_dim <= 128 {
                "_1cta"
            } else {
                ""
            },
            match (self.consumers, self.halves_tiles()) {
                (2, true) => "_c2h",
                (2, false) => "_c2",
                _ => "",
            },
            match self.fewer_stages() {
                true => format!("_st{}", self.stages()),
                false => String::new(),
            },
            if self.persistent { "_pg" } else { "" }
        )
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), DecodeConfigError> {
        if !matches!(self.head_dim, 64 | 128 | 256) {
            return Err(DecodeConfigError::HeadDim(self.head_dim));
        }
        if !(1..=16).contains(&self.group) {
            return Err(DecodeConfigError::Group(self.group));
        }
        if !matches!(self.page_rows, 16 | 32 | 64) {
            return Err(DecodeConfigError::PageRows(self.page_rows));
        }
        if self.page_size == 0 || self.page_size % self.page_rows != 0 {
            let (page_size, page_rows) = (self.page_size, self.page_rows);
            return Err(DecodeConfigError::PageSize {
                page_size,
                page_rows,
            });
        }
        if self.cp_async && !self.fp8 {
            return Err(DecodeConfigError::CpAsyncBf16);
        }
        if self.cp_async && self.evict_first {
            return Err(DecodeConfigError::EvictFirstCpAsync);
        }
        let touch = self.touch_pages;
        if touch > 0
            && !(self.cp_async && self.table_window && touch <= crate::parts::PageWindow::MAX_LOOK)
        {
            return Err(DecodeConfigError::TouchPages(touch));
        }
        if self.l2_prefetch.is_some() && !self.cp_async {
            return Err(DecodeConfigError::L2PrefetchTma);
        }
        if !matches!(self.cluster_heads, 1 | 2 | 4 | 8) {
            return Err(DecodeConfigError::ClusterHeads(self.cluster_heads));
        }
        let fewest = if self.fp8 { 3 } else { 2 };
        if let Some(most) = self.stage_limit.filter(|&n| n < fewest) {
            return Err(DecodeConfigError::StageLimit { most, fewest });
        }
        if !(self.consumers == 1 || self.consumers == 2 && self.head_dim <= 128) {
            return Err(DecodeConfigError::Consumers(self.consumers));
        }
        // The launcher's kernel takes two only where they are built (DecodeConfig::solo_config).
        if !matches!(self.solo_consumers, 1 | 2) {
            return Err(DecodeConfigError::Consumers(self.solo_consumers));
        }
        if self.key_halves && self.fp8 {
            return Err(DecodeConfigError::KeyHalvesFp8);
        }
        let (stages, fewest) = (self.stages(), self.pair_stages());
        let odd = stages % 2 == 1 && !self.halves_tiles();
        if self.consumers == 2 && (odd || stages < fewest) {
            return Err(DecodeConfigError::ConsumerStages { stages, fewest });
        }
        if self.persistent && !(self.halves_tiles() && self.cluster_heads == 1) {
            return Err(DecodeConfigError::Persistent);
        }
        Ok(())
    }

    /// The configurations the tests assemble: every head dim and box height (pages of 16, 32
    /// and 64 tokens), groups 1, 4, 5, 8 and 16, bf16 and FP8 caches, each also contiguous, of
    /// 4096 tokens (FP8: 64-row TMA boxes, where 64-token pages take `cp.async`; bf16 at head
    /// dim 128: 2 ring stages, [`DecodeConfig::measured_stage_limit`]), the splits combined
    /// by the combine kernel (and, at head dim 128 and 16-token pages, in the decode kernel:
    /// [`DecodeConfig::fold`]; and with evict-first loads (TMA boxes) and the combine an
    /// ordinary kernel; and launched as an ordinary kernel, not a programmatic dependent,
    /// [`DecodeConfig::dependent_launch`]); FP8 caches of 16- and 32-token pages at group 4
    /// also with the TMA boxes they do not take by default ([`DecodeConfig::cp_async`]), and
    /// those copied by `cp.async` at group 4 with the block-table reads they do not take by
    /// default ([`DecodeConfig::table_window`]), and with the window touching the pages 8
    /// tiles ahead ([`DecodeConfig::touch_pages`]), and with their copies carrying a 256-byte
    /// L2 prefetch size ([`DecodeConfig::l2_prefetch`]); at
    /// group 4 and head dims 64 and 128 also built for one CTA an SM
    /// ([`DecodeConfig::one_cta`]), and with two consumer warpgroups and one
    /// ([`DecodeConfig::consumers`]; bf16's also on each tile's key halves,
    /// [`DecodeConfig::key_halves`]).
    pub fn all() -> Vec<DecodeConfig> {
        let mut out = Vec::new();
        for fp8 in [false, true] {
            let pages: &[u32] = &[16, 32, 64, 4096];
            for head_dim in [64, 128, 256] {
                for group in [1, 4, 5, 8, 16] {
                    for &page_size in pages {
                        let mut cfg = DecodeConfig::new(head_dim, group, page_size);
                        if fp8 {
                            cfg = cfg.with_fp8();
                        }
                        out.push(cfg);
                        if page_size == 16 && head_dim == 128 {
                            out.push(cfg.with_fold());
                            out.push(cfg.with_dependent_launch(false));
                            let evict_first = cfg.with_cp_async(false).with_evict_first(true);
                            out.push(evict_first.with_dependent_combine(false));
                        }
                        if fp8 && group == 4 && cfg.page_rows < 64 {
                            out.push(cfg.with_cp_async(false));
                        }
                        if cfg.cp_async && group == 4 {
                            out.push(cfg.with_table_window(!cfg.table_window));
                            let touched = cfg.with_table_window(true);
                            out.push(touched.with_touch_pages(8));
                            out.push(cfg.with_l2_prefetch(Some(PrefetchSize::B256)));
                        }
                        if group == 4 {
                            out.extend(cfg.with_solo(true).solo_config());
                            // The rule's stages where the default has fewer, two consumer
                            // warpgroups; and one.
                            out.extend(cfg.solo_config());
                            let one = cfg.with_solo_consumers(1);
                            out.extend(one.solo_config());
                            out.extend(one.with_solo(true).solo_config());
                            if !fp8 {
                                out.extend(cfg.with_key_halves(true).solo_config());
                                // A persistent grid (DecodeConfig::persistent), folding too.
                                if head_dim <= 128 {
                                    let grid = cfg.with_consumers(2).with_stage_limit(None);
                                    let grid = grid.with_persistent(true);
                                    out.push(grid);
                                    out.push(grid.with_fold());
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The key splits for a batch of `batch` sequences over `kv_heads` KV heads, `q_len` new
    /// tokens and keys up to `max_len`, on `sms` SMs, a split holding at least 4 key tiles (at
    /// most 64 splits): when one CTA an SM can fill at least 90 % of the SMs, the count that
    /// fills the most of them (a sequence of 128k over 8 KV heads: 16 splits, 128 of 132 SMs;
    /// eight of 64k: 2); else when one wave of CTAs can fill at least 90 % of the SMs' slots
    /// (`sms · ctas_per_sm`), the count that fills the most of them in one wave; else the
    /// fewest splits whose CTAs fill the slots in waves at least 85 % as well as the best count
    /// does (FlashAttention's rule). One CTA an SM first, by the numbers (H200, BENCHMARKS.md,
    /// session 16): it streams the cache faster than two (1 x 128k e4m3: 16 splits 66.9 µs back
    /// to back against 33's 69.9, ncu 88 % of DRAM peak against 85 %; 8 x 64k: 2 splits
    /// against 4, bf16 467.0 against 475.1 µs, e4m3 239.3 against 249.4). Two CTAs an SM first
    /// where the kernel for them has fewer ring stages than the rule's
    /// ([`DecodeConfig::stage_limit`]: the FP8 copies' 3, two CTAs' bytes in flight those of
    /// one with the rule's 6): the shuffled pages' CTAs, each slower or faster by where its
    /// pages lie, share SMs and finish closer together (H200, BENCHMARKS.md, session 22,
    /// 16-token pages back to back: 1 x 128k 32 splits 68.2-68.7 µs against 16's 70.7-71.5,
    /// 8 x 64k 4 splits 249.4-250.8 against 2's 258.1-259.7); not over a contiguous bf16 cache
    /// at head dim 128 ([`DecodeConfig::CONTIGUOUS_PAGE`]), whose 2 stages are for its unsplit
    /// launches.
    pub fn splits(
        &self,
        batch: usize,
        kv_heads: usize,
        q_len: usize,
        max_len: usize,
        sms: usize,
    ) -> usize {
        let chunks = q_len.div_ceil(self.tokens_per_cta() as usize).max(1);
        let items = batch * kv_heads * chunks;
        let slots = (sms * self.ctas_per_sm() as usize).max(1);
        let tiles = max_len.div_ceil(Self::BLOCK_N as usize).max(1);
        let most = (tiles / 4).clamp(1, Self::MOST_SPLITS as usize);
        if items >= slots * 2 || most == 1 {
            return 1;
        }
        // A memory-bound CTA reads at its share of the bandwidth: in one wave, the most CTAs,
        // one an SM, else as many as an SM holds; as many as an SM holds first where their
        // kernel has fewer stages than the rule's, but over a contiguous bf16 cache at head
        // dim 128, whose 2 stages are its unsplit launches' (one CTA an SM streams its split
        // launches faster: 8 x 64k 2 splits against 4, above).
        let contiguous = self.page_size >= Self::CONTIGUOUS_PAGE;
        let kept = self.head_dim == 128 && !self.fp8 && contiguous;
        let rooms = match self.fewer_stages() && !kept {
            true => [slots, sms.max(1)],
            false => [sms.max(1), slots],
        };
        for room in rooms {
            if let Some(s) = (1..=most).filter(|&s| items * s <= room).max() {
                if (items * s) as f64 >= 0.9 * room as f64 {
                    return s;
                }
            }
        }
        let efficiency = |s: usize| {
            let waves = (items * s) as f64 / slots as f64;
            waves / waves.ceil()
        };
        let best = (1..=most).map(efficiency).fold(0.0, f64::max);
        (1..=most)
            .find(|&s| efficiency(s) >= 0.85 * best)
            .unwrap_or(1)
    }
}

/// The sizes of one decode problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeShape {
    /// Each sequence's length (its new tokens included).
    pub seq_lens: Vec<usize>,
    /// New tokens per sequence.
    pub q_len: usize,
    /// Query heads.
    pub heads: usize,
    /// KV heads (dividing `heads`).
    pub kv_heads: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// Tokens a page.
    pub page_size: usize,
}

impl DecodeShape {
    /// Pages each sequence takes.
    pub fn pages_of(&self, b: usize) -> usize {
        self.seq_lens[b].div_ceil(self.page_size.max(1))
    }

    /// The block table's width: the most pages a sequence takes.
    pub fn max_pages(&self) -> usize {
        (0..self.seq_lens.len())
            .map(|b| self.pages_of(b))
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Bytes of K and V a decode step reads: every sequence's keys and values, bf16 (`bytes` 2)
    /// or FP8 (1).
    pub fn kv_bytes(&self, bytes: usize) -> usize {
        self.seq_lens.iter().sum::<usize>() * self.kv_heads * self.head_dim * 2 * bytes
    }
}

/// The host reference in f64 (through [`crate::library::attention::reference`], one sequence
/// at a time over its keys gathered from the pages): `O` `[batch, q_len, heads, d]` for `q`
/// `[batch, q_len, heads, d]`, the caches `[num_pages, page_size, kv_heads, d]` and the block
/// table `[batch, max_pages]` (row major).
pub fn reference(
    q: &[f32],
    k_cache: &[f32],
    v_cache: &[f32],
    block_table: &[i32],
    s: &DecodeShape,
    scale: f32,
) -> Vec<f32> {
    use crate::library::attention::{AttentionShape, reference as attend};
    let (d, hk, ps, ql) = (s.head_dim, s.kv_heads, s.page_size, s.q_len);
    let row = hk * d;
    let max_pages = s.max_pages();
    let mut o = Vec::with_capacity(q.len());
    for (b, &len) in s.seq_lens.iter().enumerate() {
        let gather = |cache: &[f32]| {
            let mut out = Vec::with_capacity(len * row);
            for p in 0..len {
                let page = block_table[b * max_pages + p / ps] as usize;
                let at = (page * ps + p % ps) * row;
                out.extend_from_slice(&cache[at..at + row]);
            }
            out
        };
        let (kb, vb) = (gather(k_cache), gather(v_cache));
        let qb = &q[b * ql * s.heads * d..][..ql * s.heads * d];
        let shape = AttentionShape {
            batch: 1,
            seqlen_q: ql,
            seqlen_k: len,
            heads: s.heads,
            kv_heads: hk,
            head_dim: d,
        };
        o.extend(attend(qb, &kb, &vb, shape, true, scale).0);
    }
    o
}
