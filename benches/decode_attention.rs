//! Decode attention: GB/s of K and V read and tokens per second of the library's kernel on the
//! issue's problems (bf16, 32 query heads over 8 KV heads, head dim 128, one new token: batch x
//! context 32 x 4k, 32 x 16k, 8 x 64k, 1 x 128k), each on a contiguous cache (one page a
//! sequence, the memory torch's SDPA reads), on paged caches of 16- and 64-token pages in a
//! shuffled block table, and on FP8 e4m3 caches (contiguous, 16-, 64-, 128- and 256-token
//! pages, and 16-token pages in order, shuffled only within 2 MiB, shuffled in runs of 64 KiB
//! and as a serving engine's free list hands them out on a fresh server ([`Placement`]; bf16
//! 16-token pages that way too); per-head scales); the split problems also with the splits combined
//! by the combine kernel instead of in the decode kernel (`combine kernel`), and with other split
//! counts beside the launcher's choice, bf16 and e4m3 ([`FORCED_SPLITS`]), and with the split's
//! CTAs on a kernel built for one CTA an SM instead of the one built for two (`one-CTA kernel`:
//! `DecodeConfig::solo`; contiguous, 16-token pages, FP8 64-token pages).
//! Each timed [`REPEATS`] times in turn, a row each (the tables take the median); each time the
//! median of 20 launches from a cold L2 (a 256 MiB clear before each), the mean of [`B2B`]
//! launches back to back alternating between two copies of the cache (no clear: a model's
//! stream of decode steps), and the median of 20 launches each after one on the other copy
//! (`after-another`: an L2 of clean lines, the call on its own), and two timings that say what
//! the cold timing's extra cost is (`cleared, then another`: the clear, then a call on the other
//! copy, then the timed call; `another, then a small clear`: a call on the other copy, then a
//! 1 MiB clear, then the timed call). The caches are filled on the device from one random block (the values do not
//! change the time). `PTXKIT_DECODE_BENCH`, when set, keeps only the rows whose
//! `{batch}x{context} {cache}` contains it or one of its `|`-separated parts and none of its
//! parts that begin with `!` (after the `!`: `contiguous|!combine`); `PTXKIT_DECODE_ONCE`, when
//! set, launches each kept row's kernels once, untimed (a profiler's run: one launch a row;
//! `cold`: after the cold timing's clear); `PTXKIT_DECODE_D` the head dim (64, 128 or 256; 128
//! when unset).
//! Rows named with `evict-first` set `DecodeConfig::evict_first`, with `plain combine` launch
//! the combine as an ordinary kernel instead of a programmatic dependent
//! (`DecodeConfig::dependent_combine`; the split problems), with `combine kernel` combine every
//! split launch by the combine kernel (`DecodeConfig::fold_up_to` 1, where every split launch
//! of the rule's folds by default), with `cp.async` or `TMA boxes` load
//! the FP8 cache's pages the way its configuration does not by default
//! (`DecodeConfig::cp_async`: `cp.async` for pages of at most `DecodeConfig::CP_ASYNC_PAGE`
//! tokens), with `ordinary launch` launch the decode kernel as an ordinary kernel, not as a
//! programmatic dependent of the call before it (`DecodeConfig::dependent_launch` off), with
//! `TMA boxes at one CTA an SM` (or `cp.async at one CTA an SM`) load an FP8 cache's 16-token
//! pages the other way in launches whose CTAs fit one an SM (`DecodeConfig::solo_boxes` on or
//! off against the default), with `table window` or
//! `table a tile ahead` read the `cp.async` copies' block-table entries the way the
//! configuration does not by default (`DecodeConfig::table_window`), with `touching pages N
//! tiles ahead` touch each page N tiles before its copies (`DecodeConfig::touch_pages`), with `L2
//! prefetch N B` carry an N-byte L2 prefetch size on the `cp.async` copies
//! (`DecodeConfig::l2_prefetch`), with `clusters of N heads` or `no clusters` launch the KV
//! heads' CTAs in clusters of N or alone (`DecodeConfig::cluster_heads`; by default pairs over
//! an FP8 cache), with `persistent grid` run every launch on a persistent grid of one CTA an SM
//! (`DecodeConfig::persistent`, bf16), with `two consumer warpgroups` (the unsplit problems) run
//! every launch on two consumer warpgroups at one CTA an SM, a CTA an item, with `one wave of
//! two CTAs an SM` (or `two waves of one CTA an SM`) launch the contiguous bf16 cache the other
//! way (`DecodeConfig::two_waves`). `PTXKIT_DECODE_PROBLEMS` names other problems
//! (`32x8192,32x12288`: batch x context, one new token).
//! `benches/decode_attention_torch.py` times torch's SDPA (cuDNN and flash) on the same
//! contiguous problems; run both in one GPU call.
//!
//! CPU (runs anywhere): the time to build the kernel's PTX.
//!
//! ```text
//! cargo bench --bench decode_attention
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use ptxkit::isa::Target;
use ptxkit::library::decode::{Decode, DecodeArgs, DecodeConfig, KvScales, PrefetchSize, build};
use ptxkit::runtime::{
    Before, Device, DeviceTensor, E4m3, L2_FLUSH_BYTES, RuntimeError, TensorRef,
    mean_ms_back_to_back, median_ms,
};
use ptxkit::selftest::Rng;

/// Query heads, KV heads, head dim.
const HEADS: usize = 32;
const KV_HEADS: usize = 8;
/// The head dim when `PTXKIT_DECODE_D` names none.
const D: usize = 128;

/// The head dim the bench runs at: `PTXKIT_DECODE_D` (64, 128 or 256), else [`D`].
fn head_dim() -> usize {
    match std::env::var("PTXKIT_DECODE_D")
        .ok()
        .and_then(|d| d.parse().ok())
    {
        Some(d @ (64 | 128 | 256)) => d,
        _ => D,
    }
}
/// Timings of each problem and cache, in turn.
const REPEATS: usize = 3;
/// How long the first launch may take before its row fails (a hung kernel).
const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

fn build_ptx(c: &mut Criterion) {
    let cfg = DecodeConfig::new(128, 4, 16);
    c.bench_function("build_ptx/decode_bf16_d128_g4", |b| {
        b.iter(|| build(Target::Sm90a, &cfg).map(|k| k.ptx().len()))
    });
}

/// The problems: `(batch, context, new tokens)`.
/// The problems timed: `PTXKIT_DECODE_PROBLEMS` (`{batch}x{context}` separated by commas, one new
/// token each) when it names any, else [`PROBLEMS`].
fn problems() -> Vec<(usize, usize, usize)> {
    let named: Vec<_> = std::env::var("PTXKIT_DECODE_PROBLEMS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|p| {
            let (b, c) = p.trim().split_once('x')?;
            Some((b.parse().ok()?, c.parse().ok()?, 1))
        })
        .collect();
    match named.is_empty() {
        true => PROBLEMS.to_vec(),
        false => named,
    }
}

const PROBLEMS: [(usize, usize, usize); 4] =
    [(32, 4096, 1), (32, 16384, 1), (8, 65536, 1), (1, 131072, 1)];

/// Split counts timed beside the launcher's choice on the contiguous bf16 and e4m3 caches (and
/// the e4m3 counts on 16- and 64-token pages), by batch: `(batch, bf16's, e4m3's)`: two CTAs an SM beside the default's one
/// (`DecodeConfig::splits`; session 16 timed 2, 3, 5, 6 and 8 splits at 8 x 64k, and 16, 24,
/// 32, 40, 48 and 64 at 1 x 128k).
const FORCED_SPLITS: [(usize, &[usize], &[usize]); 2] =
    [(8, &[4], &[4]), (1, &[32, 33], &[32, 33])];

/// Split counts whose CTAs fit one an SM (on the kernel with two consumer warpgroups,
/// `DecodeConfig::solo_consumers`) timed on the FP8 16- and 64-token pages, which the launcher
/// splits for two CTAs an SM, by batch: `(batch, splits)`.
const PAGE_SPLITS_ALONE: [(usize, usize); 2] = [(8, 2), (1, 16)];

/// The caches the split problems' variant rows time (`combine kernel`, `one-CTA kernel`):
/// `(name, tokens a page (None: contiguous), fp8)`.
const SPLIT_CACHES: [(&str, Option<usize>, bool); 5] = [
    ("contiguous", None, false),
    ("contiguous e4m3", None, true),
    ("paged 16", Some(16), false),
    ("paged 16 e4m3", Some(16), true),
    ("paged 64 e4m3", Some(64), true),
];

/// Where a paged cache's pages lie.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// A random permutation of all the pages.
    Shuffled,
    /// Each sequence's pages one after another.
    InOrder,
    /// Each run of this many bytes of pages in order shuffled within itself (the runs in
    /// order): how far apart pages are, kept within one 2 MiB GPU page.
    Within(usize),
    /// The pages in runs of this many bytes, the runs shuffled (each in order): a larger page's
    /// placement under the page size's loads.
    Runs(usize),
    /// As a serving engine's free list hands them out on a fresh server (vLLM's block pool: the
    /// free pages in order, taken from the front): each sequence's first half (its prompt) in
    /// one run, sequence after sequence, then the second half (its decoded tokens) a page a
    /// sequence in turn, so those lie `batch` pages apart.
    Served,
}

/// A cache tensor: bf16 or FP8 e4m3.
enum Kv {
    Bf16(DeviceTensor<half::bf16>),
    E4m3(DeviceTensor<E4m3>),
}

impl Kv {
    fn view(&self) -> TensorRef<'_> {
        match self {
            Kv::Bf16(t) => t.into(),
            Kv::E4m3(t) => t.into(),
        }
    }
}

/// One cache layout's device tensors (an FP8 cache's per-head scales too).
struct Cache {
    k: Kv,
    v: Kv,
    table: DeviceTensor<i32>,
    scales: Option<DeviceTensor<f32>>,
}

/// The cache of `batch` sequences of `ctx` tokens in pages of `page` tokens (`page == ctx`: one
/// page a sequence, contiguous in order), random bf16 or e4m3; the pages placed as `how` says
/// ([`Placement`]).
fn cache(
    dev: &Device,
    rng: &mut Rng,
    (batch, ctx, page): (usize, usize, usize),
    (fp8, how): (bool, Placement),
) -> Result<Cache, RuntimeError> {
    let stream = dev.default_stream();
    let per = ctx.div_ceil(page);
    let pages = batch * per;
    let mut order: Vec<i32> = (0..pages as i32).collect();
    // Fisher-Yates over `units`.
    let mut shuffle = |units: &mut [i32]| {
        for i in (1..units.len()).rev() {
            units.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
    };
    let page_bytes = page * KV_HEADS * head_dim() * if fp8 { 1 } else { 2 };
    let pages_in = |bytes: usize| (bytes / page_bytes).max(1);
    if page < ctx {
        match how {
            Placement::Shuffled => shuffle(&mut order),
            Placement::InOrder => {}
            Placement::Within(bytes) => order.chunks_mut(pages_in(bytes)).for_each(shuffle),
            Placement::Runs(bytes) => {
                let run = pages_in(bytes);
                let mut runs: Vec<i32> = (0..pages.div_ceil(run) as i32).collect();
                shuffle(&mut runs);
                order = runs
                    .iter()
                    .flat_map(|&r| r as usize * run..((r as usize + 1) * run).min(pages))
                    .map(|p| p as i32)
                    .collect();
            }
            Placement::Served => {
                let prompt = per / 2;
                let mut next = 0i32;
                for b in 0..batch {
                    for j in 0..prompt {
                        order[b * per + j] = next;
                        next += 1;
                    }
                }
                for j in prompt..per {
                    for b in 0..batch {
                        order[b * per + j] = next;
                        next += 1;
                    }
                }
            }
        }
    }
    let shape = vec![pages, page, KV_HEADS, head_dim()];
    let n: usize = shape.iter().product();
    // One random block copied over the cache on the device: the values do not change the time.
    let draw = rng.vec_f32(BLOCK);
    let kv = |shape: Vec<usize>| -> Result<Kv, RuntimeError> {
        Ok(if fp8 {
            let d: Vec<E4m3> = draw.iter().map(|&x| E4m3::from_f32(x)).collect();
            Kv::E4m3(filled(&stream, &d, n, shape)?)
        } else {
            let d: Vec<half::bf16> = draw.iter().map(|&x| half::bf16::from_f32(x)).collect();
            Kv::Bf16(filled(&stream, &d, n, shape)?)
        })
    };
    let (k, v) = (kv(shape.clone())?, kv(shape)?);
    let table = DeviceTensor::from_host(&stream, &order, vec![batch, per])?;
    let scales = match fp8 {
        true => Some(DeviceTensor::from_host(
            &stream,
            &[0.5f32; KV_HEADS],
            vec![KV_HEADS],
        )?),
        false => None,
    };
    Ok(Cache {
        k,
        v,
        table,
        scales,
    })
}

/// Elements of the random block a cache is filled with.
const BLOCK: usize = 1 << 20;

/// A device tensor of `n` elements and `shape`: `block` uploaded once and copied over it on the
/// device.
fn filled<T: ptxkit::runtime::Element + cudarc::driver::ValidAsZeroBits>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    block: &[T],
    n: usize,
    shape: Vec<usize>,
) -> Result<DeviceTensor<T>, RuntimeError> {
    let src = stream.clone_htod(block)?;
    let mut dst = stream.alloc_zeros::<T>(n)?;
    for at in (0..n).step_by(block.len().max(1)) {
        let len = block.len().min(n - at);
        stream.memcpy_dtod(&src.slice(0..len), &mut dst.slice_mut(at..at + len))?;
    }
    DeviceTensor::new(dst, shape)
}

/// The decode on `cache` with `splits` (the launcher's choice for `None`), in ms: the median
/// from a cold L2 ([`Before::ColdL2`]), the mean of [`B2B`] calls back to back
/// ([`mean_ms_back_to_back`]) alternating between `cache` and its `twin`, and the median of
/// calls each enqueued after a call on the `twin` ([`Before::Run`]: a cold L2 of clean
/// lines, the clear's dirty ones not written back, the call not overlapping the one before),
/// and two timings that split the cold timing's extra cost between its two causes: each call
/// after the clear and then a call on the `twin` (the clear's dirty lines written back before
/// the timed call: `cleared, then another`), and each call after a call on the `twin` and then
/// a clear of [`SMALL_CLEAR`] bytes (the clear's launch right before the timed call, without an
/// L2 full of its dirty lines: `another, then a small clear`).
/// `PTXKIT_DECODE_ONCE=cold`: the one launch after a clear of [`L2_FLUSH_BYTES`].
#[allow(clippy::too_many_arguments)]
fn time(
    dev: &Device,
    dec: &Decode,
    q: &DeviceTensor<half::bf16>,
    (c, twin): (&Cache, &Cache),
    lens: &DeviceTensor<i32>,
    o: &mut DeviceTensor<half::bf16>,
    ctx: usize,
    (splits, check): (Option<usize>, bool),
) -> Result<Times, String> {
    let stream = dev.default_stream();
    let scale = 1.0 / (head_dim() as f32).sqrt();
    let mut run = |dec: &Decode, c: &Cache| {
        let args = DecodeArgs {
            q: q.into(),
            k_cache: c.k.view(),
            v_cache: c.v.view(),
            block_table: (&c.table).into(),
            seq_lens: lens.into(),
            o: (&mut *o).into(),
            scale,
            max_seq_len: ctx,
            splits,
            kv_scales: c.scales.as_ref().map(|s| KvScales {
                k_scale: s.into(),
                v_scale: s.into(),
            }),
        };
        dec.run_borrowed(&stream, args)
            .map_err(|e| RuntimeError::InvalidLaunch {
                reason: e.to_string(),
            })
    };
    if let Some(once) = std::env::var_os("PTXKIT_DECODE_ONCE") {
        // A profiler's run: one launch, not timed (after the cold timing's clear with `cold`).
        if once == "cold" {
            let mut flush = stream
                .alloc_zeros::<u8>(L2_FLUSH_BYTES)
                .map_err(|e| e.to_string())?;
            stream.memset_zeros(&mut flush).map_err(|e| e.to_string())?;
        }
        run(dec, c).map_err(|e| e.to_string())?;
        stream.synchronize().map_err(|e| e.to_string())?;
        return Ok(Times::default());
    }
    if check {
        // One launch waited for first, so a hang fails its row instead of blocking the rest.
        let first = Decode::new(dev, *dec.config()).map(|d| d.with_limit(LIMIT));
        first
            .map_err(|e| e.to_string())
            .and_then(|d| run(&d, c).map_err(|e| format!("the first launch: {e}")))?;
    }
    let cold = median_ms::<RuntimeError>(&stream, 3, 20, Before::ColdL2, || run(dec, c));
    let cold = cold.map_err(|e| e.to_string())?;
    let b2b = mean_ms_back_to_back::<RuntimeError>(&stream, 3, B2B, |i| {
        run(dec, if i % 2 == 0 { c } else { twin })
    });
    let b2b = b2b.map_err(|e| e.to_string())?;
    // `run` borrows `o` mutably: the call before (on the twin) and the timed call share it.
    let run = std::cell::RefCell::new(run);
    let after = median_ms::<RuntimeError>(
        &stream,
        1,
        20,
        Before::Run(&mut || (run.borrow_mut())(dec, twin)),
        || (run.borrow_mut())(dec, c),
    );
    let after = after.map_err(|e| e.to_string())?;
    let mut flush = stream.alloc_zeros::<u8>(L2_FLUSH_BYTES);
    let mut small = stream.alloc_zeros::<u8>(SMALL_CLEAR);
    let (flush, small) = match (&mut flush, &mut small) {
        (Ok(f), Ok(s)) => (f, s),
        (Err(e), _) | (_, Err(e)) => return Err(e.to_string()),
    };
    let cleared_then_another = median_ms::<RuntimeError>(
        &stream,
        1,
        20,
        Before::Run(&mut || {
            stream.memset_zeros(&mut *flush)?;
            (run.borrow_mut())(dec, twin)
        }),
        || (run.borrow_mut())(dec, c),
    );
    let cleared_then_another = cleared_then_another.map_err(|e| e.to_string())?;
    let another_then_small = median_ms::<RuntimeError>(
        &stream,
        1,
        20,
        Before::Run(&mut || {
            (run.borrow_mut())(dec, twin)?;
            Ok(stream.memset_zeros(&mut *small)?)
        }),
        || (run.borrow_mut())(dec, c),
    );
    Ok(Times {
        cold,
        b2b,
        after,
        cleared_then_another,
        another_then_small: another_then_small.map_err(|e| e.to_string())?,
    })
}

/// One call's times, ms (see [`time`]).
#[derive(Default)]
struct Times {
    cold: f64,
    b2b: f64,
    after: f64,
    cleared_then_another: f64,
    another_then_small: f64,
}

/// The bytes of the small clear in `another, then a small clear` (1 MiB: the clear's launch
/// and a few of its lines, not an L2 of them).
const SMALL_CLEAR: usize = 1 << 20;

/// Calls timed back to back.
const B2B: usize = 20;

/// Tiles ahead of its copies the FP8 16-token pages' rows `touching pages` touch each page
/// (`DecodeConfig::touch_pages`).
const TOUCH_AHEAD: [u32; 2] = [4, 16];

/// The `cp.async` copies' L2 prefetch sizes the FP8 pages' rows `L2 prefetch` carry
/// (`DecodeConfig::l2_prefetch`), with their bytes.
const L2_PREFETCH: [(PrefetchSize, u32); 2] =
    [(PrefetchSize::B128, 128), (PrefetchSize::B256, 256)];

/// One cache layout timed on each problem.
struct Layout {
    name: String,
    /// Tokens a page (`None`: contiguous).
    page: Option<usize>,
    fp8: bool,
    /// Splits forced instead of the launcher's choice.
    splits: Option<usize>,
    /// Where the pages lie.
    order: Placement,
    /// The cache's loads evict-first in L2 (`DecodeConfig::evict_first`).
    evict_first: bool,
    /// The combine launched as an ordinary kernel, not as a programmatic dependent
    /// (`DecodeConfig::dependent_combine` off), for every split launch
    /// (`DecodeConfig::fold_up_to` 1).
    plain_combine: bool,
    /// Every split launch combined by the combine kernel, launched as a programmatic dependent
    /// (`DecodeConfig::fold_up_to` 1: the default before session 22).
    combine_kernel: bool,
    /// The FP8 cache's pages loaded by the producer's threads with `cp.async` (`Some(true)`) or
    /// by TMA boxes (`Some(false)`) instead of the configuration's default
    /// (`DecodeConfig::cp_async`).
    cp_async: Option<bool>,
    /// `Some(true)`: the split problems' CTAs on a kernel built for one CTA an SM (twice the
    /// ring's stages) instead of the one built for two (`DecodeConfig::solo`).
    solo: Option<bool>,
    /// The decode kernel launched as an ordinary kernel, not as a programmatic dependent of the
    /// kernel before it (`DecodeConfig::dependent_launch` off).
    ordinary: bool,
    /// An FP8 cache's 16-token pages loaded by TMA boxes (`Some(true)`) or copied by
    /// `cp.async` (`Some(false)`) in launches whose CTAs fit one an SM, instead of the
    /// configuration's default (`DecodeConfig::solo_boxes`).
    solo_boxes: Option<bool>,
    /// The `cp.async` copies' block-table entries read a window of 32 tiles ahead across each
    /// warp's lanes (`Some(true)`) or a tile ahead (`Some(false)`) instead of the
    /// configuration's default (`DecodeConfig::table_window`).
    window: Option<bool>,
    /// The `cp.async` copies' window touching each page this many tiles before its copies
    /// (`DecodeConfig::touch_pages`; 0: the configuration's default, none).
    touch: u32,
    /// The `cp.async` copies' L2 prefetch size (`DecodeConfig::l2_prefetch`; `None`: the
    /// configuration's default).
    l2_prefetch: Option<PrefetchSize>,
    /// The KV heads' CTAs in clusters of this many (`DecodeConfig::cluster_heads`, 1: none;
    /// `None`: the configuration's default, 2 over an FP8 cache, else none).
    cluster: Option<u32>,
    /// At most this many ring stages (`DecodeConfig::stage_limit`; `None`: the rule's).
    stages: Option<u32>,
    /// The consumer warpgroups of the kernel for launches whose CTAs fit one an SM
    /// (`DecodeConfig::solo_consumers`; `None`: the configuration's default, 2 over an FP8
    /// cache).
    solo_consumers: Option<u32>,
    /// Two bf16 consumer warpgroups on each key tile's halves (`Some(true)`) or on alternate
    /// tiles (`Some(false)`) instead of the default (`DecodeConfig::key_halves`).
    key_halves: Option<bool>,
    /// Every launch on two consumer warpgroups (`DecodeConfig::consumers`, one CTA an SM: the
    /// split rule's one-CTA counts) with this many ring stages (`DecodeConfig::stage_limit`).
    pair_stages: Option<u32>,
    /// Every launch on a persistent grid of one CTA an SM (`DecodeConfig::persistent`: two
    /// consumer warpgroups on each tile's key halves, the rule's stages).
    persistent: bool,
    /// Launches that fill two waves of one CTA an SM over long pages on the kernel for one CTA
    /// an SM or not (`DecodeConfig::two_waves`; `None`: the default).
    two_waves: Option<bool>,
}

impl Layout {
    /// `cfg` with the layout's variant settings, in this order (evict-first
    /// loads, the plain combine, the combine kernel, cp.async or TMA loads, the solo kernel, the ordinary launch,
    /// the solo boxes, the block-table window), and whether any is set: a flag that is off or a
    /// choice that is `None` leaves the configuration as it is.
    fn variant_of(&self, cfg: DecodeConfig) -> (DecodeConfig, bool) {
        type Setting = (Option<bool>, fn(DecodeConfig, bool) -> DecodeConfig);
        let on = |flag: bool| flag.then_some(true);
        let settings: [Setting; 8] = [
            // Evict-first is a TMA box's policy.
            (on(self.evict_first), |c, _| {
                c.with_cp_async(false).with_evict_first(true)
            }),
            (on(self.plain_combine), |c, _| {
                c.with_dependent_combine(false).with_fold_up_to(1)
            }),
            (on(self.combine_kernel), |c, _| c.with_fold_up_to(1)),
            (self.cp_async, DecodeConfig::with_cp_async),
            (self.solo, DecodeConfig::with_solo),
            (on(self.ordinary), |c, _| c.with_dependent_launch(false)),
            (self.solo_boxes, DecodeConfig::with_solo_boxes),
            (self.window, DecodeConfig::with_table_window),
        ];
        let (cfg, any) = settings
            .into_iter()
            .fold((cfg, false), |(cfg, any), (choice, set)| match choice {
                Some(v) => (set(cfg, v), true),
                None => (cfg, any),
            });
        let (cfg, any) = match self.touch {
            0 => (cfg, any),
            tiles => (cfg.with_table_window(true).with_touch_pages(tiles), true),
        };
        let (cfg, any) = match self.l2_prefetch {
            None => (cfg, any),
            size => (cfg.with_l2_prefetch(size), true),
        };
        let (cfg, any) = match self.cluster {
            None => (cfg, any),
            Some(heads) => (cfg.with_cluster_heads(heads), true),
        };
        let (cfg, any) = match self.solo_consumers {
            None => (cfg, any),
            Some(n) => (cfg.with_solo_consumers(n), true),
        };
        let (cfg, any) = match self.key_halves {
            None => (cfg, any),
            Some(halves) => (cfg.with_key_halves(halves), true),
        };
        let (cfg, any) = match self.pair_stages {
            None => (cfg, any),
            Some(n) => (cfg.with_consumers(2).with_stage_limit(Some(n)), true),
        };
        let (cfg, any) = match self.two_waves {
            None => (cfg, any),
            Some(on) => (cfg.with_two_waves(on), true),
        };
        let (cfg, any) = match self.persistent {
            false => (cfg, any),
            true => {
                let pair = cfg.with_consumers(2).with_stage_limit(None);
                (pair.with_persistent(true), true)
            }
        };
        match self.stages {
            None => (cfg, any),
            most => (cfg.with_stage_limit(most), true),
        }
    }
}

/// A row's name suffix and what it sets on its layout.
type Flag = (&'static str, fn(&mut Layout));

/// The caches timed on each problem: contiguous, paged 16 and 64, e4m3 contiguous and paged 16,
/// 64, 128 and 256 (and paged 16 with each sequence's pages in order: what the shuffle costs); where the
/// batch splits, the contiguous caches with the splits combined in the decode kernel and with
/// other splits; the FP8 caches also with the page loads they do not take by default.
fn layouts(batch: usize, ctx: usize) -> Vec<Layout> {
    let layout = |name: &str, page, fp8, splits| Layout {
        name: name.to_string(),
        page,
        fp8,
        splits,
        order: Placement::Shuffled,
        evict_first: false,
        plain_combine: false,
        combine_kernel: false,
        cp_async: None,
        solo: None,
        ordinary: false,
        solo_boxes: None,
        window: None,
        touch: 0,
        l2_prefetch: None,
        cluster: None,
        stages: None,
        solo_consumers: None,
        key_halves: None,
        pair_stages: None,
        persistent: false,
        two_waves: None,
    };
    let mut out = vec![
        layout("contiguous", None, false, None),
        layout("paged 16", Some(16), false, None),
        layout("paged 64", Some(64), false, None),
        layout("contiguous e4m3", None, true, None),
        // The contiguous caches with each sequence 64 tokens further on than its length (one
        // page a sequence of `ctx + 64` tokens): sequences not a power of two apart.
        layout("contiguous, sequences padded", Some(ctx + 64), false, None),
        layout(
            "contiguous e4m3, sequences padded",
            Some(ctx + 64),
            true,
            None,
        ),
        layout("paged 16 e4m3", Some(16), true, None),
        layout("paged 64 e4m3", Some(64), true, None),
        layout("paged 128 e4m3", Some(128), true, None),
        layout("paged 256 e4m3", Some(256), true, None),
        Layout {
            order: Placement::InOrder,
            ..layout("paged 16 e4m3 in order", Some(16), true, None)
        },
        Layout {
            order: Placement::Within(2 << 20),
            ..layout("paged 16 e4m3 shuffled in 2 MiB", Some(16), true, None)
        },
        Layout {
            order: Placement::Runs(64 << 10),
            ..layout("paged 16 e4m3 in 64 KiB runs", Some(16), true, None)
        },
        Layout {
            order: Placement::Served,
            ..layout("paged 16 e4m3 as served", Some(16), true, None)
        },
        Layout {
            order: Placement::Served,
            ..layout("paged 16 as served", Some(16), false, None)
        },
    ];
    // The FP8 pages copied by cp.async with the block-table reads they do not take by default
    // (a window of 32 tiles across each warp's lanes, or a tile ahead); the 16-token pages at
    // the split problems (CTAs that fit one an SM) loaded the other way there too (TMA boxes
    // or cp.async, DecodeConfig::solo_boxes).
    let fp8_16 = DecodeConfig::new(head_dim() as u32, (HEADS / KV_HEADS) as u32, 16).with_fp8();
    let window = !fp8_16.table_window;
    let named = if window {
        "table window"
    } else {
        "table a tile ahead"
    };
    for (name, page, order) in [
        ("paged 16 e4m3", 16, Placement::Shuffled),
        ("paged 16 e4m3 in order", 16, Placement::InOrder),
        ("paged 16 e4m3 as served", 16, Placement::Served),
        ("paged 64 e4m3", 64, Placement::Shuffled),
    ] {
        out.push(Layout {
            window: Some(window),
            order,
            ..layout(&format!("{name}, {named}"), Some(page), true, None)
        });
    }
    // The FP8 16-token pages, shuffled and as served, with the copies' window touching each
    // page 4 and 16 tiles before its copies (DecodeConfig::touch_pages, off by default).
    for (name, order) in [
        ("paged 16 e4m3", Placement::Shuffled),
        ("paged 16 e4m3 as served", Placement::Served),
    ] {
        for tiles in TOUCH_AHEAD {
            out.push(Layout {
                touch: tiles,
                order,
                ..layout(
                    &format!("{name}, touching pages {tiles} tiles ahead"),
                    Some(16),
                    true,
                    None,
                )
            });
        }
    }
    // The FP8 pages copied by cp.async (16-token shuffled, in order and as served, 64-token
    // shuffled) with the copies carrying a 128- and a 256-byte L2 prefetch size
    // (DecodeConfig::l2_prefetch, off by default).
    for (name, page, order) in [
        ("paged 16 e4m3", 16, Placement::Shuffled),
        ("paged 16 e4m3 in order", 16, Placement::InOrder),
        ("paged 16 e4m3 as served", 16, Placement::Served),
        ("paged 64 e4m3", 64, Placement::Shuffled),
    ] {
        for (size, bytes) in L2_PREFETCH {
            out.push(Layout {
                l2_prefetch: Some(size),
                order,
                ..layout(
                    &format!("{name}, L2 prefetch {bytes}B"),
                    Some(page),
                    true,
                    None,
                )
            });
        }
    }
    // The KV heads' CTAs unclustered and in clusters of 2, 4 and 8 (DecodeConfig::cluster_heads;
    // by default 2 over an FP8 cache, else none; the default's own is not repeated): the FP8
    // 16-token pages shuffled and as served, bf16 16-token pages shuffled, and the contiguous
    // FP8 cache.
    for (name, page, fp8, order) in [
        ("paged 16 e4m3", Some(16), true, Placement::Shuffled),
        ("paged 16 e4m3 as served", Some(16), true, Placement::Served),
        ("paged 16", Some(16), false, Placement::Shuffled),
        ("contiguous e4m3", None, true, Placement::Shuffled),
    ] {
        let default = if fp8 { 2 } else { 1 };
        for heads in [1, 2, 4, 8].into_iter().filter(|&h| h != default) {
            let row = match heads {
                1 => format!("{name}, no clusters"),
                _ => format!("{name}, clusters of {heads} heads"),
            };
            out.push(Layout {
                cluster: Some(heads),
                order,
                ..layout(&row, page, fp8, None)
            });
        }
    }
    // Ring stages other than the defaults' in the kernel for launches whose CTAs share SMs
    // (DecodeConfig::stage_limit; the split problems' launches take the rule's): the contiguous
    // caches and the 16- and 64-token pages at each of 2, 3, 4, 6, 8 and 12 stages up to the
    // rule's that the default does not take (FP8 from 3: the warps' merge).
    for (name, page, fp8) in [
        ("contiguous", None, false),
        ("paged 16", Some(16), false),
        ("contiguous e4m3", None, true),
        ("paged 16 e4m3", Some(16), true),
        ("paged 64 e4m3", Some(64), true),
    ] {
        let tokens = page.unwrap_or(ctx) as u32;
        let cfg = DecodeConfig::new(head_dim() as u32, (HEADS / KV_HEADS) as u32, tokens);
        let cfg = if fp8 { cfg.with_fp8() } else { cfg };
        // A limit the configuration takes (DecodeConfig::validate), up to the rule's.
        let limits = [2, 3, 4, 6, 8, 12].into_iter().filter(|&n| {
            let valid = cfg.with_stage_limit(Some(n)).validate().is_ok();
            valid && n <= cfg.stages_by_rule() && n != cfg.stages()
        });
        for most in limits {
            out.push(Layout {
                stages: Some(most),
                ..layout(&format!("{name}, {most} stages"), page, fp8, None)
            });
        }
    }
    let boxes = !fp8_16.solo_boxes;
    let alone = match boxes {
        true => "TMA boxes at one CTA an SM",
        false => "cp.async at one CTA an SM",
    };
    for (name, order) in [
        ("paged 16 e4m3", Placement::Shuffled),
        ("paged 16 e4m3 as served", Placement::Served),
    ] {
        out.push(Layout {
            solo_boxes: Some(boxes),
            order,
            ..layout(&format!("{name}, {alone}"), Some(16), true, None)
        });
    }
    // The contiguous caches and the FP8 16-token pages with the cache's loads evict-first in
    // L2, and launched as ordinary kernels, not as dependents of the call before them.
    let flags: [Flag; 2] = [
        ("evict-first", |l| l.evict_first = true),
        ("ordinary launch", |l| l.ordinary = true),
    ];
    for (how, set) in flags {
        for (name, page, fp8) in [
            ("contiguous", None, false),
            ("contiguous e4m3", None, true),
            ("paged 16 e4m3", Some(16), true),
        ] {
            let mut l = layout(&format!("{name}, {how}"), page, fp8, None);
            set(&mut l);
            out.push(l);
        }
    }
    // The FP8 caches' pages loaded the other way: by cp.async where TMA boxes are the default
    // (contiguous, pages over 64 tokens), by TMA boxes where cp.async is (pages up to 64).
    for (name, page, order) in [
        ("contiguous e4m3", None, Placement::Shuffled),
        ("paged 16 e4m3", Some(16), Placement::Shuffled),
        ("paged 64 e4m3", Some(64), Placement::Shuffled),
        ("paged 128 e4m3", Some(128), Placement::Shuffled),
        ("paged 256 e4m3", Some(256), Placement::Shuffled),
        ("paged 16 e4m3 in order", Some(16), Placement::InOrder),
    ] {
        let tokens = page.unwrap_or(ctx) as u32;
        let group = (HEADS / KV_HEADS) as u32;
        let cp_async = !DecodeConfig::new(head_dim() as u32, group, tokens)
            .with_fp8()
            .cp_async;
        let how = if cp_async { "cp.async" } else { "TMA boxes" };
        out.push(Layout {
            cp_async: Some(cp_async),
            order,
            ..layout(&format!("{name}, {how}"), page, true, None)
        });
    }
    // Every problem's bf16 caches on a persistent grid of one CTA an SM (DecodeConfig::persistent).
    if head_dim() <= 128 {
        for (name, page) in [
            ("contiguous", None),
            ("paged 16", Some(16)),
            ("paged 64", Some(64)),
        ] {
            out.push(Layout {
                persistent: true,
                ..layout(&format!("{name}, persistent grid"), page, false, None)
            });
        }
    }
    // The unsplit problems' launches (more CTAs than an SM's slots at one CTA an SM) on two
    // consumer warpgroups, one CTA an SM (`DecodeConfig::consumers`, the rule's stages): about
    // two waves of CTAs where the default runs one of two CTAs an SM.
    if !FORCED_SPLITS.iter().any(|f| f.0 == batch) {
        // The contiguous bf16 cache in one wave of two CTAs an SM where the default takes two
        // waves of one (DecodeConfig::two_waves), and the reverse.
        let two = DecodeConfig::new(head_dim() as u32, (HEADS / KV_HEADS) as u32, ctx as u32);
        let row = match two.two_waves {
            true => "contiguous, one wave of two CTAs an SM",
            false => "contiguous, two waves of one CTA an SM",
        };
        out.push(Layout {
            two_waves: Some(!two.two_waves),
            ..layout(row, None, false, None)
        });
        for (name, page, fp8) in [
            ("contiguous", None, false),
            ("contiguous e4m3", None, true),
            ("paged 64", Some(64), false),
        ] {
            let tokens = page.unwrap_or(ctx) as u32;
            let cfg = DecodeConfig::new(head_dim() as u32, (HEADS / KV_HEADS) as u32, tokens);
            let pair = if fp8 { cfg.with_fp8() } else { cfg };
            let pair = pair.with_consumers(2).with_stage_limit(None);
            if pair.validate().is_err() {
                continue;
            }
            out.push(Layout {
                pair_stages: Some(pair.stages()),
                ..layout(&format!("{name}, two consumer warpgroups"), page, fp8, None)
            });
        }
    }
    for (b, splits, fp8_splits) in FORCED_SPLITS {
        if b == batch {
            // Every split launch on the combine kernel (the pages' too: 33 and 4 splits, their
            // split problems at two CTAs an SM), the contiguous caches' also as an ordinary
            // kernel.
            for (name, page, fp8) in SPLIT_CACHES {
                out.push(Layout {
                    combine_kernel: true,
                    ..layout(&format!("{name}, combine kernel"), page, fp8, None)
                });
                if page.is_none() {
                    out.push(Layout {
                        plain_combine: true,
                        ..layout(&format!("{name}, plain combine"), None, fp8, None)
                    });
                }
            }
            // The split CTAs (one an SM) on one consumer warpgroup, where the default takes
            // two (DecodeConfig::solo_consumers): the caches whose launches fit one an SM.
            for (name, page, fp8) in [
                ("contiguous", None, false),
                ("contiguous e4m3", None, true),
                ("paged 64", Some(64), false),
            ] {
                out.push(Layout {
                    solo_consumers: Some(1),
                    ..layout(&format!("{name}, one consumer warpgroup"), page, fp8, None)
                });
            }
            // The bf16 caches' two consumer warpgroups on alternate tiles instead of each
            // tile's key halves (DecodeConfig::key_halves), and over 2 ring stages (the
            // default's 3; the one-CTA kernel's 6 below).
            for (name, page) in [("contiguous", None), ("paged 64", Some(64))] {
                out.push(Layout {
                    key_halves: Some(false),
                    ..layout(&format!("{name}, alternate tiles"), page, false, None)
                });
                out.push(Layout {
                    pair_stages: Some(2),
                    ..layout(
                        &format!("{name}, two consumer warpgroups, 2 stages"),
                        page,
                        false,
                        None,
                    )
                });
            }
            // The split's CTAs (one an SM) on a kernel built for one CTA an SM.
            for (name, page, fp8) in SPLIT_CACHES {
                out.push(Layout {
                    solo: Some(true),
                    ..layout(&format!("{name}, one-CTA kernel"), page, fp8, None)
                });
            }
            // The FP8 caches on the one-CTA kernel unclustered and in clusters of 4 and 8 KV
            // heads (the default's pairs above): a kernel that fits two CTAs an SM leaves the
            // cluster scheduler free to put a cluster's CTAs two on an SM.
            for (name, page) in [("contiguous e4m3", None), ("paged 16 e4m3", Some(16))] {
                for heads in [1, 4, 8] {
                    let row = match heads {
                        1 => format!("{name}, one-CTA kernel, no clusters"),
                        _ => format!("{name}, one-CTA kernel, clusters of {heads} heads"),
                    };
                    out.push(Layout {
                        solo: Some(true),
                        cluster: Some(heads),
                        ..layout(&row, page, true, None)
                    });
                }
            }
            for &s in splits {
                let name = format!("contiguous, {s} splits");
                out.push(layout(&name, None, false, Some(s)));
            }
            for (_, s) in PAGE_SPLITS_ALONE.into_iter().filter(|p| p.0 == b) {
                for page in [16, 64] {
                    let name = format!("paged {page} e4m3, {s} splits");
                    out.push(layout(&name, Some(page), true, Some(s)));
                    out.push(Layout {
                        solo_consumers: Some(1),
                        ..layout(
                            &format!("{name}, one consumer warpgroup"),
                            Some(page),
                            true,
                            Some(s),
                        )
                    });
                }
            }
            for &s in fp8_splits {
                let name = format!("contiguous e4m3, {s} splits");
                out.push(layout(&name, None, true, Some(s)));
                // Two CTAs an SM with the FP8 copies' 3 stages: the same for the boxes.
                out.push(Layout {
                    stages: Some(3),
                    ..layout(&format!("{name}, 3 stages"), None, true, Some(s))
                });
                // The FP8 pages at two CTAs an SM too (session 16b: the pages lost to the
                // contiguous cache at one CTA an SM).
                for page in [16, 64] {
                    let name = format!("paged {page} e4m3, {s} splits");
                    out.push(layout(&name, Some(page), true, Some(s)));
                }
            }
        }
    }
    out
}

fn gpu(_c: &mut Criterion) {
    let Some(dev) = ptxkit::selftest::device_or_skip("GPU benchmarks skipped") else {
        return;
    };
    let stream = dev.default_stream();
    println!(
        "\ndevice: {}; head dim {}",
        dev.attributes().name,
        head_dim()
    );
    println!(
        "| batch x context | q_len | cache | splits | ptxkit ms | K+V GB/s | tokens/s | \
         back-to-back ms | back-to-back GB/s | back-to-back tokens/s | after-another ms | \
         cleared, then another ms | another, then a small clear ms |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut rng = Rng::fresh();
    for (batch, ctx, q_len) in problems() {
        let row = |cache: &str, fp8: bool, splits: usize, r: Result<Times, String>| match r {
            Ok(Times {
                cold: ms,
                b2b,
                after,
                cleared_then_another,
                another_then_small,
            }) => {
                let bytes =
                    (batch * ctx * KV_HEADS * head_dim() * 2 * if fp8 { 1 } else { 2 }) as f64;
                let tokens = (batch * q_len) as f64;
                println!(
                    "| {batch}x{ctx} | {q_len} | {cache} | {splits} | {ms:.4} | {:.0} | {:.0} | \
                     {b2b:.4} | {:.0} | {:.0} | {after:.4} | {cleared_then_another:.4} | \
                     {another_then_small:.4} |",
                    bytes / ms / 1e6,
                    tokens / ms * 1e3,
                    bytes / b2b / 1e6,
                    tokens / b2b * 1e3,
                )
            }
            Err(e) => {
                println!("| {batch}x{ctx} | {q_len} | {cache} | | failed: {e} | | | | | | | | |")
            }
        };
        let q_shape = vec![batch, q_len, HEADS, head_dim()];
        let n_q: usize = q_shape.iter().product();
        let qh: Vec<half::bf16> = rng
            .vec_f32(n_q)
            .into_iter()
            .map(half::bf16::from_f32)
            .collect();
        let tensors = DeviceTensor::from_host(&stream, &qh, q_shape.clone())
            .and_then(|q| Ok((q, DeviceTensor::from_host(&stream, &qh, q_shape)?)))
            .and_then(|x| {
                Ok((
                    x,
                    DeviceTensor::from_host(&stream, &vec![ctx as i32; batch], vec![batch])?,
                ))
            });
        let ((q, mut o), lens) = match tensors {
            Ok(t) => t,
            Err(e) => {
                row("(inputs)", false, 0, Err(e.to_string()));
                continue;
            }
        };
        // The caches loaded side by side (each with a twin for the back-to-back timing), timed
        // in turn REPEATS times (a drift of the clocks reaches them alike).
        let mut loaded = Vec::new();
        let only = std::env::var("PTXKIT_DECODE_BENCH").ok();
        for l in layouts(batch, ctx) {
            let key = format!("{batch}x{ctx} {}", l.name);
            let kept = |o: &String| {
                let (drop, keep): (Vec<&str>, Vec<&str>) =
                    o.split('|').partition(|p| p.starts_with('!'));
                keep.iter().any(|p| key.contains(p)) && !drop.iter().any(|p| key.contains(&p[1..]))
            };
            if only.as_ref().is_some_and(|o| !kept(o)) {
                continue;
            }
            let page = l.page.unwrap_or(ctx);
            let mut cfg =
                DecodeConfig::new(head_dim() as u32, (HEADS / KV_HEADS) as u32, page as u32);
            if l.fp8 {
                cfg = cfg.with_fp8();
            }
            let (cfg, variant) = l.variant_of(cfg);
            let dec = Decode::new(&dev, cfg).map_err(|e| e.to_string());
            // A forced split or a variant reuses the cache of its layout loaded before.
            let reuse = l.splits.is_some() || variant;
            let c = match reuse {
                true => None,
                false => Some(
                    (0..2)
                        .map(|_| cache(&dev, &mut rng, (batch, ctx, page), (l.fp8, l.order)))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| e.to_string()),
                ),
            };
            match (dec, c) {
                (Ok(d), Some(Ok(c))) => loaded.push((l, d, Some(c))),
                (Ok(d), None) => loaded.push((l, d, None)),
                (Err(e), _) | (_, Some(Err(e))) => row(&l.name, l.fp8, 0, Err(e)),
            }
        }
        let repeats = match std::env::var_os("PTXKIT_DECODE_ONCE") {
            Some(_) => 1,
            None => REPEATS,
        };
        for repeat in 0..repeats {
            for (l, dec, c) in &loaded {
                let Some([c, twin]) = c
                    .as_ref()
                    .or_else(|| {
                        loaded
                            .iter()
                            .find(|m| {
                                (m.0.page, m.0.fp8, m.0.order) == (l.page, l.fp8, l.order)
                                    && m.2.is_some()
                            })
                            .and_then(|m| m.2.as_ref())
                    })
                    .map(|c| [&c[0], &c[1]])
                else {
                    continue;
                };
                let n = l
                    .splits
                    .unwrap_or_else(|| dec.splits(batch, KV_HEADS, q_len, ctx));
                let at = (l.splits, repeat == 0);
                let r = time(&dev, dec, &q, (c, twin), &lens, &mut o, ctx, at);
                let hung = r.as_ref().is_err_and(|e| e.contains("did not finish"));
                row(&l.name, l.fp8, n, r);
                if hung {
                    println!("stopped: `{}` hung", dec.config().name());
                    return;
                }
            }
        }
    }
}

criterion_group!(benches, build_ptx, gpu);
criterion_main!(benches);
