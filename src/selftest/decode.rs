//! The decode attention's GPU check behind `ptxkit selftest` (`decode`): head dims 64, 128 and
//! 256; groups of 1, 4, 5, 8 and 16 query heads a KV head; 1 to 16 new tokens (two query
//! chunks at 16 tokens of a group of 8); ragged lengths from a single token to over a
//! thousand (FP8 to 5000: more than 32 key tiles a CTA), some under, at and past a key tile; pages of 16, 32, 64, 128 and 256 tokens, and
//! of 48, 96 and 192 (no divisor of the 64-key tile nor a multiple of it), in a shuffled block
//! table and a contiguous cache (one page a sequence); one split, several and the
//! launcher's choice, the splits combined by the combine kernel (in three cases also in the
//! decode kernel, `DecodeConfig::fold`, and with evict-first loads by the combine launched as a
//! programmatic dependent, `DecodeConfig::dependent_combine`; every FP8 case also with the
//! page loads it does not take by default, TMA boxes or `cp.async`, `DecodeConfig::cp_async`,
//! and every `cp.async` one with the block-table reads it does not take by default,
//! `DecodeConfig::table_window`, and with that window touching the pages 8 or 24 tiles
//! ahead, `DecodeConfig::touch_pages`, and with the copies' 128- or 256-byte L2 prefetch size,
//! `DecodeConfig::l2_prefetch`; every case with its KV heads' CTAs in pairs where it has
//! none (FP8 cases have pairs by default) and unpaired where it has pairs, and in clusters
//! of 4 or 8 where they divide its KV heads, `DecodeConfig::cluster_heads`;
//! every case also with the launcher's kernel for one CTA an SM, `DecodeConfig::solo`, which
//! the cases' CTAs fit, and for FP8 caches of 16-row pages also with TMA boxes there,
//! `DecodeConfig::solo_boxes`, instead of their `cp.async` copies; every paged case also launched
//! as a programmatic dependent of the launch before it, `DecodeConfig::dependent_launch`,
//! unwaited; each of which must give the same bits; and every case at head dims 64 and 128,
//! whose launches take two consumer warpgroups, also with one, `DecodeConfig::solo_consumers`,
//! its sums in another order, and over bf16 with the two on each tile's key halves,
//! `DecodeConfig::key_halves`, and as a persistent grid, `DecodeConfig::persistent`, each
//! compared with the reference on its own; a case of 40 sequences over 8 KV heads gives the
//! persistent grid's CTAs several items each). Fresh random inputs;
//! the cache slots past each sequence's end, the pages no
//! sequence uses and the block table's unused entries poisoned (NaN, -1), O poisoned with NaN;
//! O compared with the library's f64 reference ([`decode::reference`]) from the rounded inputs.
//! The error reported is the largest `|got - want| / 2e-2` (bf16 O, absolute), so 1 is the bar.

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult, max_abs_err};
use super::rows::random;
use crate::library::decode::{
    self, Decode, DecodeArgs, DecodeConfig, DecodeShape, KvScales, PrefetchSize,
};
use crate::runtime::{DeviceTensor, E4m3, TensorRef};

/// How long one launch may take (the cases take milliseconds); `PTXKIT_DECODE_LIMIT_S`
/// replaces it for runs under compute-sanitizer.
fn limit() -> std::time::Duration {
    std::env::var("PTXKIT_DECODE_LIMIT_S")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(
            std::time::Duration::from_secs(3),
            std::time::Duration::from_secs,
        )
}

/// O's tolerance (bf16, absolute).
const TOL: f64 = 2e-2;

/// One case: a problem and the splits it is run with (`None`: the launcher's choice).
struct Case {
    shape: DecodeShape,
    group: usize,
    /// The cache in one page a sequence.
    contiguous: bool,
    /// An FP8 e4m3 cache, with a scale per head (`Some(true)`) or one (`Some(false)`).
    fp8: Option<bool>,
    splits: Vec<Option<usize>>,
    /// Also run with the splits combined in the decode kernel (which must give the same bits).
    fold: bool,
}

fn case(
    lens: &[usize],
    q_len: usize,
    (kv_heads, group): (usize, usize),
    head_dim: usize,
    page_size: usize,
    splits: &[Option<usize>],
) -> Case {
    Case {
        shape: DecodeShape {
            seq_lens: lens.to_vec(),
            q_len,
            heads: kv_heads * group,
            kv_heads,
            head_dim,
            page_size,
        },
        group,
        contiguous: false,
        fp8: None,
        splits: splits.to_vec(),
        fold: false,
    }
}

/// `c` also run with the splits combined in the decode kernel.
fn both(mut c: Case) -> Case {
    c.fold = true;
    c
}

/// `c` over an FP8 cache, its scales per head or one.
fn fp8(mut c: Case, per_head: bool) -> Case {
    c.fp8 = Some(per_head);
    c
}

/// The cases (see the module).
fn cases() -> Vec<Case> {
    let ragged = [1, 17, 64, 65, 300, 1000, 33];
    // More items (sequences x KV heads x splits) than an H200 has SMs: a persistent grid's
    // CTAs take several each (DecodeConfig::persistent), the CTAs of a CTA an item more than
    // one wave.
    let many: Vec<usize> = (0..40).map(|i| 1 + (i * 97) % 700).collect();
    // The same over a contiguous cache: the two-CTA kernel's contiguous ring (2 stages at head
    // dim 128, DecodeConfig::measured_stage_limit) past a wave of CTAs.
    let mut many_contiguous = case(&many, 1, (8, 4), 128, 1024, &[None]);
    many_contiguous.contiguous = true;
    let mut contiguous = case(&[1000, 1024, 517], 1, (2, 4), 128, 1024, &[None, Some(1)]);
    contiguous.contiguous = true;
    vec![
        both(case(&ragged, 1, (2, 4), 128, 16, &[None, Some(1), Some(3)])),
        case(&ragged, 4, (2, 4), 128, 64, &[Some(1), Some(5)]),
        both(case(&[16, 100, 777], 16, (1, 8), 128, 32, &[None, Some(2)])),
        case(&[3, 500, 2000], 3, (2, 16), 128, 256, &[None, Some(4)]),
        case(&[7, 90, 257], 7, (1, 5), 128, 16, &[Some(1), Some(3)]),
        case(&[5, 129, 400], 2, (4, 1), 64, 16, &[Some(1), Some(2)]),
        case(&[1, 300, 1500], 1, (2, 4), 256, 128, &[None, Some(3)]),
        contiguous,
        case(&many, 2, (8, 4), 128, 16, &[None, Some(2)]),
        many_contiguous,
        both(fp8(
            case(&ragged, 1, (2, 4), 128, 16, &[None, Some(1), Some(3)]),
            true,
        )),
        fp8(
            case(&[16, 100, 777], 16, (1, 8), 128, 64, &[Some(1), Some(2)]),
            false,
        ),
        fp8(case(&[5, 129, 400], 2, (4, 1), 64, 32, &[Some(2)]), true),
        fp8(case(&[1, 300, 1500], 3, (2, 4), 256, 128, &[None]), false),
        fp8(
            case(&[7, 90, 257], 7, (1, 5), 128, 16, &[Some(1), Some(3)]),
            true,
        ),
        fp8(
            case(&[3, 500, 2000], 3, (2, 16), 128, 256, &[None, Some(4)]),
            false,
        ),
        // Pages that are no divisor of the 64-key tile nor a multiple of it (a tile's keys and
        // boxes cross pages at a different row each tile): the page cursors' wraps.
        case(
            &[1, 47, 48, 49, 500, 97],
            2,
            (2, 4),
            128,
            48,
            &[None, Some(3)],
        ),
        case(&[191, 193, 900], 1, (2, 4), 128, 192, &[Some(1), Some(3)]),
        fp8(
            case(
                &[95, 96, 97, 1000, 2],
                1,
                (2, 4),
                128,
                48,
                &[Some(1), Some(4)],
            ),
            true,
        ),
        // Sequences of more than 32 key tiles a CTA: the cp.async producer's block-table
        // windows past the first (DecodeConfig::table_window), and 48-token pages whose window
        // steps (2048 keys) end mid-page.
        fp8(
            case(
                &[5000, 2500, 4097, 130],
                1,
                (2, 4),
                128,
                16,
                &[Some(1), None, Some(2)],
            ),
            true,
        ),
        fp8(
            case(&[3100, 2049, 60], 2, (2, 4), 64, 48, &[Some(1), Some(3)]),
            false,
        ),
        fp8(
            case(
                &[100, 191, 192, 193, 700],
                3,
                (1, 8),
                64,
                96,
                &[None, Some(2)],
            ),
            false,
        ),
    ]
}

/// The paged problem's host data: the block table (shuffled pages, unused entries -1) and the
/// page count; slots past each sequence's end and unused pages are what `poison` marks.
fn pages(ctx: &mut GpuCtx, c: &Case) -> (Vec<i32>, usize) {
    let s = &c.shape;
    let (batch, max_pages) = (s.seq_lens.len(), s.max_pages());
    if c.contiguous {
        let table = (0..batch as i32).collect();
        return (table, batch);
    }
    let used: usize = (0..batch).map(|b| s.pages_of(b)).sum();
    let num_pages = used + 3;
    // A random permutation of the pages (Fisher-Yates).
    let mut perm: Vec<i32> = (0..num_pages as i32).collect();
    for i in (1..num_pages).rev() {
        let j = (ctx.rng.next_u64() % (i as u64 + 1)) as usize;
        perm.swap(i, j);
    }
    let mut table = vec![-1i32; batch * max_pages];
    let mut next = perm.into_iter();
    for b in 0..batch {
        for j in 0..s.pages_of(b) {
            table[b * max_pages + j] = next.next().unwrap_or(0);
        }
    }
    (table, num_pages)
}

/// A case's caches on the device and their values in f32 for the reference (an FP8 cache's
/// dequantized: its e4m3 values times their head's scale).
enum Caches {
    Bf16(
        (DeviceTensor<half::bf16>, DeviceTensor<half::bf16>),
        Vec<f32>,
        Vec<f32>,
    ),
    E4m3(
        (DeviceTensor<E4m3>, DeviceTensor<E4m3>),
        (DeviceTensor<f32>, DeviceTensor<f32>),
        Vec<f32>,
        Vec<f32>,
    ),
}

/// One problem with each of its splits: the largest error over the tolerance. Each split is
/// also run by `others` (the same configuration with the splits combined in the decode kernel,
/// [`DecodeConfig::with_fold`], and with evict-first loads launched with no limit, so the
/// combine is a programmatic dependent, [`DecodeConfig::dependent_combine`]; over an FP8 cache
/// with the other page loads, TMA boxes or `cp.async`, [`DecodeConfig::cp_async`], and its
/// copies with the other block-table reads and touching the pages ahead,
/// [`DecodeConfig::table_window`], [`DecodeConfig::touch_pages`]; with the launcher's kernel for one CTA an SM, [`DecodeConfig::solo`]), whose O must be the same bits
/// as `dec`'s; and by `apart` (kernels whose sums run in another order: one consumer
/// warpgroup where `dec` has two, [`DecodeConfig::solo_consumers`]), whose O is compared with
/// the reference on its own.
fn run_case(
    ctx: &mut GpuCtx,
    dec: &Decode,
    others: &[Decode],
    apart: &[Decode],
    c: &Case,
) -> Result<f64, GpuCheckError> {
    let s = &c.shape;
    let (d, batch, hk) = (s.head_dim, s.seq_lens.len(), s.kv_heads);
    let (table, num_pages) = pages(ctx, c);
    let max_pages = if c.contiguous { 1 } else { s.max_pages() };
    let q_shape = [batch, s.q_len, s.heads, d];
    let cache_shape = [num_pages, s.page_size, hk, d];
    let n_cache = cache_shape.iter().product();
    let (hq, fq) = random::<half::bf16>(ctx, q_shape.iter().product(), 1.0);
    // Every slot no sequence holds is poisoned: NaN (what a reused page may hold).
    let mut held = vec![false; num_pages * s.page_size];
    for b in 0..batch {
        for p in 0..s.seq_lens[b] {
            let page = table[b * max_pages + p / s.page_size] as usize;
            held[page * s.page_size + p % s.page_size] = true;
        }
    }
    let row = hk * d;
    let poisoned = |slot: usize| !held[slot];
    let caches = match c.fp8 {
        None => {
            let mut draw = || {
                let (mut h, f) = random::<half::bf16>(ctx, n_cache, 1.0);
                for slot in (0..held.len()).filter(|&i| poisoned(i)) {
                    h[slot * row..][..row].fill(half::bf16::from_f32(f32::NAN));
                }
                (h, f)
            };
            let ((hk_, fk), (hv, fv)) = (draw(), draw());
            let up = (
                ctx.upload(&hk_, &cache_shape)?,
                ctx.upload(&hv, &cache_shape)?,
            );
            Caches::Bf16(up, fk, fv)
        }
        Some(per_head) => {
            // e4m3 values of up to 2 in magnitude, scaled by 0.5 to 1.5 (a head's or one).
            let scales: Vec<f32> = (0..if per_head { hk } else { 1 })
                .map(|_| 0.5 + ctx.rng.f32().abs().min(1.0))
                .collect();
            let mut draw = || {
                let mut h: Vec<E4m3> = ctx
                    .rng
                    .vec_f32(n_cache)
                    .into_iter()
                    .map(|x| E4m3::from_f32(2.0 * x))
                    .collect();
                let f: Vec<f32> = h
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x.to_f32() * scales[(i / d) % hk % scales.len()])
                    .collect();
                for slot in (0..held.len()).filter(|&i| poisoned(i)) {
                    h[slot * row..][..row].fill(E4m3::from_f32(f32::NAN));
                }
                (h, f)
            };
            let ((hk_, fk), (hv, fv)) = (draw(), draw());
            let up = (
                ctx.upload(&hk_, &cache_shape)?,
                ctx.upload(&hv, &cache_shape)?,
            );
            let n = scales.len();
            let sc = (ctx.upload(&scales, &[n])?, ctx.upload(&scales, &[n])?);
            Caches::E4m3(up, sc, fk, fv)
        }
    };
    let lens: Vec<i32> = s.seq_lens.iter().map(|&l| l as i32).collect();
    let q = ctx.upload(&hq, &q_shape)?;
    let bt = ctx.upload(&table, &[batch, max_pages])?;
    let sl = ctx.upload(&lens, &[batch])?;
    let scale = 1.0 / (d as f32).sqrt();
    let (fk, fv) = match &caches {
        Caches::Bf16(_, fk, fv) | Caches::E4m3(_, _, fk, fv) => (fk, fv),
    };
    let want = decode::reference(&fq, fk, fv, &table, s, scale);
    let longest = s.seq_lens.iter().copied().max().unwrap_or(0);
    let mut worst = 0.0f64;
    for &splits in &c.splits {
        let mut outs = Vec::new();
        for d in std::iter::once(dec).chain(others).chain(apart) {
            let poison = vec![half::bf16::from_f32(f32::NAN); q_shape.iter().product()];
            let mut o = ctx.upload(&poison, &q_shape)?;
            let (k_cache, v_cache, kv_scales): (TensorRef, TensorRef, _) = match &caches {
                Caches::Bf16((kc, vc), ..) => (kc.into(), vc.into(), None),
                Caches::E4m3((kc, vc), (ks, vs), ..) => (
                    kc.into(),
                    vc.into(),
                    Some(KvScales {
                        k_scale: ks.into(),
                        v_scale: vs.into(),
                    }),
                ),
            };
            let args = DecodeArgs {
                q: (&q).into(),
                k_cache,
                v_cache,
                block_table: (&bt).into(),
                seq_lens: (&sl).into(),
                o: (&mut o).into(),
                scale,
                max_seq_len: longest,
                splits,
                kv_scales,
            };
            d.run_borrowed(&ctx.stream, args)
                .map_err(|e| case_error(d, c, splits, e.into()))?;
            outs.push(ctx.download(&o)?);
        }
        let (same, apart_outs) = outs.split_at(1 + others.len());
        for (other, out) in others.iter().zip(&same[1..]) {
            let differ = out
                .iter()
                .zip(&outs[0])
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            if differ > 0 {
                return Err(GpuCheckError::Unexpected {
                    check: format!("{} {} splits {splits:?}", other.config().name(), name(c)),
                    detail: format!(
                        "{differ} values of O differ from {}'s (same bits expected)",
                        dec.config().name()
                    ),
                });
            }
        }
        let error_of = |out: &[half::bf16]| {
            let got: Vec<f32> = out.iter().map(|x| x.to_f32()).collect();
            max_abs_err(&got, &want) / TOL
        };
        let err = apart_outs
            .iter()
            .map(|out| error_of(out))
            .fold(error_of(&outs[0]), f64::max);
        if std::env::var_os("PTXKIT_DECODE_PROGRESS").is_some() {
            // The kernels whose O were the same bits, by name (each distinct name once).
            let mut same: Vec<String> = others.iter().map(|o| o.config().name()).collect();
            same.sort();
            same.dedup();
            eprintln!(
                "case {} {} splits {splits:?}: err {err:.3e} (the same bits: {})",
                dec.config().name(),
                name(c),
                same.join(", ")
            );
            for (d, out) in apart.iter().zip(apart_outs) {
                eprintln!("  {}: err {:.3e}", d.config().name(), error_of(out));
            }
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

/// A case's name: lengths, new tokens, heads, page size.
fn name(c: &Case) -> String {
    let s = &c.shape;
    format!(
        "lens {:?} q{} h{}/{} d{} page {}{}{}",
        s.seq_lens,
        s.q_len,
        s.heads,
        s.kv_heads,
        s.head_dim,
        s.page_size,
        if c.contiguous { " (contiguous)" } else { "" },
        match c.fp8 {
            Some(true) => " e4m3 per-head scales",
            Some(false) => " e4m3 one scale",
            None => "",
        }
    )
}

fn case_error(dec: &Decode, c: &Case, splits: Option<usize>, e: GpuCheckError) -> GpuCheckError {
    GpuCheckError::Case {
        case: format!("{} {} splits {splits:?}", dec.config().name(), name(c)),
        source: Box::new(e),
    }
}

/// Every case (with `PTXKIT_DECODE_CASES=fold`, only those also run with the splits combined in
/// the decode kernel: a run under compute-sanitizer of the splits' combine; with `fp8`, only the
/// FP8 caches: a run under compute-sanitizer of the `cp.async` page loads); the first failure
/// to run names its case. Every FP8 case also runs with the page loads its configuration does not
/// take by default (`cp.async` or TMA boxes, [`DecodeConfig::cp_async`]), which must give the
/// same bits.
pub(crate) fn run(ctx: &mut GpuCtx) -> RunResult {
    let (mut worst, mut runs, mut touched) = (0.0f64, 0, 0u32);
    let only = std::env::var("PTXKIT_DECODE_CASES").ok();
    let kept = |c: &Case| match only.as_deref() {
        Some("fold") => c.fold,
        Some("fp8") => c.fp8.is_some(),
        _ => true,
    };
    for c in cases().into_iter().filter(kept) {
        let s = &c.shape;
        let mut cfg = DecodeConfig::new(s.head_dim as u32, c.group as u32, s.page_size as u32);
        if c.fp8.is_some() {
            cfg = cfg.with_fp8();
        }
        let load = |cfg: DecodeConfig| {
            Decode::new(&ctx.dev, cfg)
                .map(|d| d.with_limit(limit()))
                .map_err(|e| GpuCheckError::Case {
                    case: cfg.name(),
                    source: Box::new(e.into()),
                })
        };
        let dec = load(cfg)?;
        let mut others = match c.fold {
            // The dependent combine without a limit: a launch not waited for is a programmatic
            // dependent one.
            true => vec![
                load(cfg.with_fold())?,
                Decode::new(&ctx.dev, cfg.with_cp_async(false).with_evict_first(true)).map_err(
                    |e| GpuCheckError::Case {
                        case: cfg.name(),
                        source: Box::new(e.into()),
                    },
                )?,
            ],
            false => Vec::new(),
        };
        // With no limit, so launched as a programmatic dependent of the launch before it
        // (DecodeConfig::dependent_launch; a launch waited for is an ordinary one): the paged
        // cases, bf16 and FP8.
        if !c.contiguous {
            others.push(Decode::new(&ctx.dev, cfg).map_err(|e| GpuCheckError::Case {
                case: cfg.name(),
                source: Box::new(e.into()),
            })?);
        }
        // The TMA boxes where the launcher takes the cp.async copies for these launches (their
        // CTAs fit one an SM: DecodeConfig::solo_boxes), or the reverse.
        let boxes = cfg.with_solo_boxes(!cfg.solo_boxes);
        if cfg.solo_config() != boxes.solo_config() {
            others.push(load(boxes)?);
        }
        if c.fp8.is_some() {
            // The other page loads: TMA boxes where cp.async is the default, and the reverse.
            others.push(load(cfg.with_cp_async(!cfg.cp_async))?);
        }
        if cfg.cp_async {
            // The cp.async copies with the block-table reads they do not take by default: a
            // window of 32 tiles across each warp's lanes, or a tile ahead
            // (DecodeConfig::table_window).
            others.push(load(cfg.with_table_window(!cfg.table_window))?);
            // With the window touching the pages ahead (DecodeConfig::touch_pages; a prefetch
            // changes no bits): 8 tiles ahead, and in every other case the farthest.
            let tiles = match touched % 2 {
                0 => 8,
                _ => crate::parts::PageWindow::MAX_LOOK,
            };
            touched += 1;
            others.push(load(cfg.with_table_window(true).with_touch_pages(tiles))?);
            // With the copies' L2 prefetch size (DecodeConfig::l2_prefetch; a hint changes no
            // bits): 256 bytes, and 128 in every other case.
            let size = match touched % 2 {
                0 => PrefetchSize::B256,
                _ => PrefetchSize::B128,
            };
            others.push(load(cfg.with_l2_prefetch(Some(size)))?);
        }
        // Every split launch combined by the combine kernel (DecodeConfig::fold_up_to 1),
        // where the default folds every split launch of the rule's in the decode kernel.
        others.push(load(cfg.with_fold_up_to(1))?);
        // The launcher's kernel for one CTA an SM where the CTAs fit one an SM (the cases'
        // do): at head dims 64 and 128 the kernel `dec` does not run.
        others.push(load(cfg.with_solo(!cfg.solo))?);
        // The KV heads' CTAs in clusters (DecodeConfig::cluster_heads: where they run changes
        // no bits): pairs where the case has none and none where it has pairs (pairs past an
        // odd count of heads: the last pair's second CTA ends at once), and as many heads a
        // cluster as divide the case's (4 or 8).
        let other = if cfg.cluster_heads == 1 { 2 } else { 1 };
        others.push(load(cfg.with_cluster_heads(other))?);
        if let Some(heads) = [8, 4].into_iter().find(|c| s.kv_heads % c == 0) {
            others.push(load(cfg.with_cluster_heads(heads as u32))?);
        }
        // The launcher's kernel with one consumer warpgroup where the default has two
        // (DecodeConfig::solo_consumers): its sums in another order, checked against the
        // reference.
        let mut apart = Vec::new();
        let one = cfg.with_solo_consumers(1);
        if one.solo_config() != cfg.solo_config() {
            apart.push(load(one)?);
        }
        // Over bf16 the two consumer warpgroups on each tile's key halves
        // (DecodeConfig::key_halves) where they take alternate tiles.
        if !cfg.fp8 && cfg.solo_config().is_some_and(|c| c.consumers == 2) {
            apart.push(load(cfg.with_key_halves(!cfg.key_halves))?);
            // A persistent grid (DecodeConfig::persistent), every launch on it.
            let grid = cfg.with_consumers(2).with_stage_limit(None);
            apart.push(load(grid.with_persistent(true))?);
        }
        worst = worst.max(run_case(ctx, &dec, &others, &apart, &c)?);
        runs += c.splits.len();
    }
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{runs} runs: paged (pages 16-256 and 48, 96, 192, shuffled) and contiguous, bf16 \
             and e4m3 (scale per head or one) caches, d 64/128/256, GQA 1/4/5/8/16, q_len 1-16, ragged lengths \
             1..5000, 1 to 5 splits combined by the combine kernel (and, in 3 cases, in the \
             decode kernel, and with evict-first loads by a programmatic dependent combine; e4m3 \
             both with TMA boxes and cp.async page loads, the cp.async copies with both block-table \
             reads, touching the pages ahead and with an L2 prefetch size; the KV heads' CTAs \
             paired and not, and in clusters of 4 or 8; every case on the kernels built for \
             one CTA an SM and for two; every paged case also launched unwaited, a programmatic \
             dependent: the same bits; d 64/128 on two consumer warpgroups and one, bf16's two also \
             on each tile's key halves and as a persistent grid, 40 sequences x 8 KV heads its \
             CTAs taking several items each); \
             error / tolerance of O"
        ),
    })
}
