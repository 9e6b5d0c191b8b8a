//! The attention kernel's GPU check behind `ptxkit selftest` (`attention`): bf16 and f16, head
//! dims 64, 128 and 256, causal and not, every schedule (serial, ping-pong, ping-pong with the
//! softmax overlapping `P·V`), one CTA per query tile or a persistent grid (where accepted: serial, non-causal, batched), on batch 2 with 4 query heads over 2 KV heads (grouped
//! queries) at query length 197 and key length 333 (neither a multiple of a tile), plus
//! multi-query attention (1 KV head) with more queries than keys under the causal mask (rows
//! that see no key: O = 0, LSE = -inf); the persistent grids also on more query tiles than
//! SMs. `attention_varlen` runs the kernels over packed variable-length sequences
//! ([`run_varlen`]). Fresh random inputs, O and LSE poisoned with NaN, both
//! compared with the library's f64 host reference ([`attention::reference`]) computed from the
//! rounded inputs. The error reported is the largest over the cases of `|got - want| /
//! tolerance` (O: 2e-2 for bf16, 4e-3 for f16, absolute; LSE: 2e-3 absolute), so 1 is the bar.

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use super::rows::{Host, random};
use crate::library::attention::{self, Attention, AttentionConfig, AttentionShape, VarlenShape};
use ptx_isa::ScalarType;

/// How long one launch may take (the cases take milliseconds): short, so a kernel that hangs
/// fails its case well within a GPU run's per-kernel timeout. `PTXKIT_ATTENTION_LIMIT_S`
/// (seconds) replaces it, for runs under compute-sanitizer, whose kernels take far longer.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

/// [`LIMIT`], or `PTXKIT_ATTENTION_LIMIT_S` when set to a number of seconds.
fn limit() -> std::time::Duration {
    std::env::var("PTXKIT_ATTENTION_LIMIT_S")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(LIMIT, std::time::Duration::from_secs)
}

/// One case's result into a configuration's largest error and count (shown as it comes, see
/// [`progress`]); a failure names its case.
fn tally(
    kernel: &str,
    case: String,
    r: Result<f64, GpuCheckError>,
    (worst, cases): (&mut f64, &mut usize),
) -> Result<(), Box<(String, GpuCheckError)>> {
    progress(kernel, &case, &r);
    *worst = worst.max(r.map_err(|e| Box::new((case, e)))?);
    *cases += 1;
    Ok(())
}

/// With `PTXKIT_ATTENTION_PROGRESS` set, each case's kernel, shape and error on stderr as it
/// finishes (unbuffered), so a run cut short by a timeout shows how far it got.
fn progress(kernel: &str, case: &str, err: &Result<f64, GpuCheckError>) {
    if std::env::var_os("PTXKIT_ATTENTION_PROGRESS").is_some() {
        match err {
            Ok(e) => eprintln!("case {kernel} {case}: err {e:.3e}"),
            Err(e) => eprintln!("case {kernel} {case}: FAILED {e}"),
        }
    }
}

/// The largest `|got - want|`; NaN counts as infinite, and equal infinities (an LSE of -inf) as 0.
fn abs_err(got: &[f32], want: &[f32]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            if g == w {
                return 0.0;
            }
            let d = (f64::from(g) - f64::from(w)).abs();
            if d.is_nan() { f64::INFINITY } else { d }
        })
        .fold(0.0, f64::max)
}

/// One case: the O and LSE errors over their tolerances.
fn case<H: Host>(
    ctx: &mut GpuCtx,
    att: &Attention,
    s: AttentionShape,
) -> Result<f64, GpuCheckError> {
    let cfg = *att.config();
    let q_shape = [s.batch, s.seqlen_q, s.heads, s.head_dim];
    let kv_shape = [s.batch, s.seqlen_k, s.kv_heads, s.head_dim];
    let (hq, fq) = random::<H>(ctx, q_shape.iter().product(), 1.0);
    let (hk, fk) = random::<H>(ctx, kv_shape.iter().product(), 1.0);
    let (hv, fv) = random::<H>(ctx, kv_shape.iter().product(), 1.0);
    let scale = 1.0 / (s.head_dim as f32).sqrt();
    let q = ctx.upload(&hq, &q_shape)?;
    let k = ctx.upload(&hk, &kv_shape)?;
    let v = ctx.upload(&hv, &kv_shape)?;
    let nan = vec![H::from_f32(f32::NAN); q_shape.iter().product()];
    let mut o = ctx.upload(&nan, &q_shape)?;
    let mut lse = ctx.poisoned(&[s.batch, s.heads, s.seqlen_q])?;
    // A kernel that never finishes fails the case after LIMIT (the check runs in a child
    // process, whose end ends the kernel) instead of stopping every check after it.
    att.run(&ctx.stream, &q, &k, &v, &mut o, &mut lse, scale)?;
    let got_o: Vec<f32> = ctx.download(&o)?.into_iter().map(H::to_f32).collect();
    let got_lse = ctx.download(&lse)?;
    let (want_o, want_lse) = attention::reference(&fq, &fk, &fv, s, cfg.causal, scale);
    Ok((abs_err(&got_o, &want_o) / o_tol(cfg.dtype)).max(abs_err(&got_lse, &want_lse) / 2e-3))
}

/// One packed case: sequences of their own lengths back to back, the offsets on the device.
fn case_varlen<H: Host>(
    ctx: &mut GpuCtx,
    att: &Attention,
    s: &VarlenShape,
) -> Result<f64, GpuCheckError> {
    let cfg = *att.config();
    let (total_q, total_k) = s.totals();
    let q_shape = [total_q, s.heads, s.head_dim];
    let kv_shape = [total_k, s.kv_heads, s.head_dim];
    let (hq, fq) = random::<H>(ctx, q_shape.iter().product(), 1.0);
    let (hk, fk) = random::<H>(ctx, kv_shape.iter().product(), 1.0);
    let (hv, fv) = random::<H>(ctx, kv_shape.iter().product(), 1.0);
    let scale = 1.0 / (s.head_dim as f32).sqrt();
    let q = ctx.upload(&hq, &q_shape)?;
    let k = ctx.upload(&hk, &kv_shape)?;
    let v = ctx.upload(&hv, &kv_shape)?;
    let cu_q = ctx.upload(&s.cu_seqlens_q, &[s.cu_seqlens_q.len()])?;
    let cu_k = ctx.upload(&s.cu_seqlens_k, &[s.cu_seqlens_k.len()])?;
    let nan = vec![H::from_f32(f32::NAN); q_shape.iter().product()];
    let mut o = ctx.upload(&nan, &q_shape)?;
    let mut lse = ctx.poisoned(&[s.heads, total_q])?;
    let max_q = u32::try_from(s.max_seqlen_q()).unwrap_or(u32::MAX);
    att.run_varlen(
        &ctx.stream,
        &q,
        &k,
        &v,
        &mut o,
        &mut lse,
        (&cu_q, &cu_k, max_q),
        scale,
    )?;
    let got_o: Vec<f32> = ctx.download(&o)?.into_iter().map(H::to_f32).collect();
    let got_lse = ctx.download(&lse)?;
    let (want_o, want_lse) = attention::reference_varlen(&fq, &fk, &fv, s, cfg.causal, scale);
    Ok((abs_err(&got_o, &want_o) / o_tol(cfg.dtype)).max(abs_err(&got_lse, &want_lse) / 2e-3))
}

/// O's tolerance: 2e-2 for bf16, 4e-3 for f16 (absolute).
fn o_tol(dtype: ScalarType) -> f64 {
    if dtype == ScalarType::F16 { 4e-3 } else { 2e-2 }
}

/// The packed cases of `head_dim`: ragged (query, key) lengths with a sequence of one query,
/// one of one key, lengths under, at and past a tile and not multiples of it, more queries
/// than keys (the causal mask's first rows see nothing) and more keys than queries; grouped
/// queries (4 heads over 2 KV heads) and multi-query (3 over 1).
fn varlen_shapes(head_dim: usize, persistent: bool) -> Vec<VarlenShape> {
    let mut shapes = vec![
        VarlenShape::from_lengths(
            &[(1, 77), (129, 1), (64, 300), (200, 128), (1, 1), (257, 190)],
            4,
            2,
            head_dim,
        ),
        VarlenShape::from_lengths(&[(130, 130), (5, 333), (128, 64)], 3, 1, head_dim),
    ];
    if persistent {
        // 3 query tiles x 8 heads x 8 sequences = 192 tiles: more than an H100's or H200's
        // 132 SMs, so CTAs take several (the skipped ones past a short sequence too).
        shapes.push(VarlenShape::from_lengths(
            &[
                (300, 200),
                (17, 290),
                (256, 256),
                (129, 1),
                (1, 300),
                (200, 77),
                (64, 64),
                (290, 300),
            ],
            8,
            2,
            head_dim,
        ));
    }
    shapes
}

/// The packed-sequence kernels ([`AttentionConfig::varlen`]) on [`varlen_shapes`], against
/// [`attention::reference_varlen`].
pub(crate) fn run_varlen(ctx: &mut GpuCtx) -> RunResult {
    let (worst, cases) = every_case(ctx, checked(true), |ctx, att| {
        let cfg = *att.config();
        let mut worst = 0.0f64;
        let mut cases = 0;
        for s in varlen_shapes(cfg.head_dim as usize, cfg.persistent) {
            let r = match cfg.dtype {
                ScalarType::F16 => case_varlen::<half::f16>(ctx, att, &s),
                _ => case_varlen::<half::bf16>(ctx, att, &s),
            };
            let name = format!(
                "cu_q {:?} cu_k {:?} h{}/{}",
                s.cu_seqlens_q, s.cu_seqlens_k, s.heads, s.kv_heads
            );
            tally(&cfg.name(), name, r, (&mut worst, &mut cases))?;
        }
        Ok((worst, cases))
    })?;
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{cases} cases: packed sequences, bf16 (f16: default), d 64/128/256, causal or \
             not, one CTA per tile, lengths 1..300 ragged, GQA 4/2, 8/2 and MQA \
             3/1; error / tolerance of O and LSE"
        ),
    })
}

/// The configurations checked: every one of [`AttentionConfig::all`] in bf16; in f16 (which
/// changes only the conversions, not the schedule, grid or store) the default ones, batched and
/// packed. `PTXKIT_ATTENTION_ONLY` (kernel names, comma-separated) narrows them, for a run
/// under compute-sanitizer.
fn checked(varlen: bool) -> Vec<AttentionConfig> {
    let only = std::env::var("PTXKIT_ATTENTION_ONLY")
        .ok()
        .filter(|s| !s.is_empty());
    AttentionConfig::all()
        .into_iter()
        .filter(|c| c.varlen == varlen)
        .filter(|c| {
            c.dtype == ScalarType::Bf16
                || (c.schedule == AttentionConfig::default_schedule(c.head_dim)
                    && !c.persistent
                    && !c.tma_store)
        })
        .filter(|c| {
            only.as_deref()
                .is_none_or(|names| names.split(',').any(|n| n == c.name()))
        })
        .collect()
}

/// A configuration's cases: the largest error and how many ran, or the case that failed to
/// run (named after the kernel) and why.
type Cases = Result<(f64, usize), Box<(String, GpuCheckError)>>;

/// `cases` of each configuration's kernel (loaded once): the largest error and how many ran;
/// the first failure names its kernel and case.
fn every_case(
    ctx: &mut GpuCtx,
    cfgs: Vec<AttentionConfig>,
    mut cases: impl FnMut(&mut GpuCtx, &Attention) -> Cases,
) -> Result<(f64, usize), GpuCheckError> {
    let (mut worst, mut count) = (0.0f64, 0);
    for cfg in cfgs {
        let att = load(ctx, cfg)?;
        let (w, n) = cases(ctx, &att).map_err(|failed| {
            let (case, e) = *failed;
            GpuCheckError::Case {
                case: format!("{} {case}", cfg.name()),
                source: Box::new(e),
            }
        })?;
        worst = worst.max(w);
        count += n;
    }
    Ok((worst, count))
}

/// `cfg`'s kernel, each launch waited for at most [`limit`].
fn load(ctx: &GpuCtx, cfg: AttentionConfig) -> Result<Attention, GpuCheckError> {
    Attention::new(&ctx.dev, cfg)
        .map(|a| a.with_limit(limit()))
        .map_err(|e| GpuCheckError::Case {
            case: cfg.name(),
            source: Box::new(e.into()),
        })
}

/// Every case; the first failure to run names its case.
pub(crate) fn run(ctx: &mut GpuCtx) -> RunResult {
    let gqa = AttentionShape {
        batch: 2,
        seqlen_q: 197,
        seqlen_k: 333,
        heads: 4,
        kv_heads: 2,
        head_dim: 64,
    };
    let (worst, cases) = every_case(ctx, checked(false), |ctx, att| {
        let cfg = *att.config();
        let mut shapes = vec![AttentionShape {
            head_dim: cfg.head_dim as usize,
            ..gqa
        }];
        if cfg.causal {
            // Multi-query, more queries than keys: the first rows see no key.
            shapes.push(AttentionShape {
                batch: 1,
                seqlen_q: 300,
                seqlen_k: 130,
                heads: 3,
                kv_heads: 1,
                head_dim: cfg.head_dim as usize,
            });
        }
        if cfg.persistent || cfg.tma_store {
            // 5 query tiles x 16 heads x 2 = 160 tiles: more than the SMs, so CTAs loop.
            shapes.push(AttentionShape {
                batch: 2,
                seqlen_q: 600,
                seqlen_k: 250,
                heads: 16,
                kv_heads: 4,
                head_dim: cfg.head_dim as usize,
            });
        }
        let mut worst = 0.0f64;
        let mut cases = 0;
        for s in shapes {
            let r = match cfg.dtype {
                ScalarType::F16 => case::<half::f16>(ctx, att, s),
                _ => case::<half::bf16>(ctx, att, s),
            };
            let name = format!(
                "b{} sq{} sk{} h{}/{}",
                s.batch, s.seqlen_q, s.seqlen_k, s.heads, s.kv_heads
            );
            tally(&cfg.name(), name, r, (&mut worst, &mut cases))?;
        }
        Ok((worst, cases))
    })?;
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{cases} cases: bf16 (f16: default configurations), d 64/128/256, causal or not, \
             serial/pingpong/overlap, persistent, TMA store of O, GQA 4/2 at 197x333, MQA 3/1 \
             causal at 300x130, persistent/TMA-store GQA 16/4 at 2x600x250; error / tolerance \
             of O and LSE"
        ),
    })
}
