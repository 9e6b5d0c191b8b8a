//! The attention kernel's GPU check behind `ptxkit selftest` (`attention`): bf16 and f16, head
//! dims 64, 128 and 256, causal and not, every schedule (serial, ping-pong, ping-pong with the
//! softmax overlapping `P·V`), one CTA per query tile or a persistent grid (in either tile
//! order), on batch 2 with 4 query heads over 2 KV heads (grouped queries) at query length 197
//! and key length 333 (neither a multiple of a tile), plus multi-query attention (1 KV head)
//! with more queries than keys under the causal mask (rows that see no key: O = 0, LSE =
//! -inf); the persistent grids also on more query tiles than SMs. `attention_varlen` runs the
//! kernels over packed variable-length sequences (`run_varlen`, through
//! [`Attention::run_borrowed`]). Fresh random inputs, O and LSE poisoned with NaN, both
//! compared with the library's f64 host reference ([`attention::reference`]) computed from the
//! rounded inputs. The error reported is the largest over the cases of `|got - want| /
//! tolerance` (O: 2e-2 for bf16, 4e-3 for f16, absolute; LSE: 2e-3 absolute), so 1 is the bar.

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use super::rows::{Host, random};
use crate::library::attention::{
    self, Attention, AttentionArgs, AttentionConfig, AttentionShape, VarlenArgs, VarlenShape,
};
use crate::runtime::DeviceTensor;
use ptx_isa::ScalarType;

/// How long one launch may take (the cases take milliseconds): short, so a kernel that hangs
/// fails its case well within a GPU run's per-kernel timeout. `PTXKIT_ATTENTION_LIMIT_S`
/// (seconds) replaces it, for runs under compute-sanitizer, whose kernels take far longer.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

/// [`LIMIT`], or `PTXKIT_ATTENTION_LIMIT_S` when set to a number of seconds.
pub(super) fn limit() -> std::time::Duration {
    std::env::var("PTXKIT_ATTENTION_LIMIT_S")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(LIMIT, std::time::Duration::from_secs)
}

/// One case's result into a configuration's largest error and count (shown as it comes, see
/// [`progress`]); a failure names its case.
pub(super) fn tally(
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
pub(super) fn abs_err(got: &[f32], want: &[f32]) -> f64 {
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

/// One problem a case runs: batched sequences of one length, or packed ones.
pub(super) enum Problem {
    Batched(AttentionShape),
    Packed(VarlenShape),
}

impl Problem {
    /// Its name in a case's line.
    pub(super) fn name(&self) -> String {
        match self {
            Problem::Batched(s) => format!(
                "b{} sq{} sk{} h{}/{}",
                s.batch, s.seqlen_q, s.seqlen_k, s.heads, s.kv_heads
            ),
            Problem::Packed(s) => format!(
                "cu_q {:?} cu_k {:?} h{}/{}",
                s.cu_seqlens_q, s.cu_seqlens_k, s.heads, s.kv_heads
            ),
        }
    }

    /// The shapes of Q (and O), of K (and V) and of LSE.
    pub(super) fn shapes(&self) -> [Vec<usize>; 3] {
        match self {
            Problem::Batched(s) => [
                vec![s.batch, s.seqlen_q, s.heads, s.head_dim],
                vec![s.batch, s.seqlen_k, s.kv_heads, s.head_dim],
                vec![s.batch, s.heads, s.seqlen_q],
            ],
            Problem::Packed(s) => {
                let (total_q, total_k) = s.totals();
                [
                    vec![total_q, s.heads, s.head_dim],
                    vec![total_k, s.kv_heads, s.head_dim],
                    vec![s.heads, total_q],
                ]
            }
        }
    }

    pub(super) fn head_dim(&self) -> usize {
        match self {
            Problem::Batched(s) => s.head_dim,
            Problem::Packed(s) => s.head_dim,
        }
    }
}

/// A packed problem's offsets on the device.
pub(super) struct Offsets {
    cu_q: DeviceTensor<i32>,
    cu_k: DeviceTensor<i32>,
    /// The longest query and key sequences.
    pub(super) longest: [u32; 2],
}

impl Offsets {
    /// `s`'s offsets uploaded.
    pub(super) fn upload(ctx: &GpuCtx, s: &VarlenShape) -> Result<Offsets, GpuCheckError> {
        let long = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(Offsets {
            cu_q: ctx.upload(&s.cu_seqlens_q, &[s.cu_seqlens_q.len()])?,
            cu_k: ctx.upload(&s.cu_seqlens_k, &[s.cu_seqlens_k.len()])?,
            longest: [long(s.max_seqlen_q()), long(s.max_seqlen_k())],
        })
    }

    /// The kernels' [`VarlenArgs`].
    pub(super) fn args(&self) -> VarlenArgs<'_> {
        VarlenArgs {
            cu_seqlens_q: (&self.cu_q).into(),
            cu_seqlens_k: (&self.cu_k).into(),
            max_seqlen_q: self.longest[0],
        }
    }
}

/// One case: fresh random Q, K and V, O and LSE poisoned with NaN, the kernel, and the O and
/// LSE errors over their tolerances against the host reference.
fn case<H: Host>(
    ctx: &mut GpuCtx,
    att: &Attention,
    problem: &Problem,
) -> Result<f64, GpuCheckError> {
    let cfg = *att.config();
    let [q_shape, kv_shape, lse_shape] = problem.shapes();
    let (hq, fq) = random::<H>(ctx, q_shape.iter().product(), 1.0);
    let (hk, fk) = random::<H>(ctx, kv_shape.iter().product(), 1.0);
    let (hv, fv) = random::<H>(ctx, kv_shape.iter().product(), 1.0);
    let scale = 1.0 / (problem.head_dim() as f32).sqrt();
    let q = ctx.upload(&hq, &q_shape)?;
    let k = ctx.upload(&hk, &kv_shape)?;
    let v = ctx.upload(&hv, &kv_shape)?;
    let nan = vec![H::from_f32(f32::NAN); q_shape.iter().product()];
    let mut o = ctx.upload(&nan, &q_shape)?;
    let mut lse = ctx.poisoned(&lse_shape)?;
    // A kernel that never finishes fails the case after LIMIT (the check runs in a child
    // process, whose end ends the kernel) instead of stopping every check after it.
    let (want_o, want_lse) = match problem {
        Problem::Batched(s) => {
            att.run(&ctx.stream, &q, &k, &v, &mut o, &mut lse, scale)?;
            attention::reference(&fq, &fk, &fv, *s, cfg.causal, scale)
        }
        Problem::Packed(s) => {
            let offsets = Offsets::upload(ctx, s)?;
            let args =
                AttentionArgs::new([&q, &k, &v], &mut o, &mut lse, scale).packed(offsets.args());
            att.run_borrowed(&ctx.stream, args)?;
            attention::reference_varlen(&fq, &fk, &fv, s, cfg.causal, scale)
        }
    };
    let got_o: Vec<f32> = ctx.download(&o)?.into_iter().map(H::to_f32).collect();
    let got_lse = ctx.download(&lse)?;
    Ok((abs_err(&got_o, &want_o) / o_tol(cfg.dtype)).max(abs_err(&got_lse, &want_lse) / 2e-3))
}

/// `problems` on `att`'s kernel, each a case in the kernel's element type: the largest error
/// and how many ran; the first that fails to run names its case.
fn problems(ctx: &mut GpuCtx, att: &Attention, problems: Vec<Problem>) -> Cases {
    let cfg = *att.config();
    let (mut worst, mut cases) = (0.0f64, 0);
    for problem in problems {
        let r = match cfg.dtype {
            ScalarType::F16 => case::<half::f16>(ctx, att, &problem),
            _ => case::<half::bf16>(ctx, att, &problem),
        };
        tally(&cfg.name(), problem.name(), r, (&mut worst, &mut cases))?;
    }
    Ok((worst, cases))
}

/// O's tolerance: 2e-2 for bf16, 4e-3 for f16 (absolute).
fn o_tol(dtype: ScalarType) -> f64 {
    if dtype == ScalarType::F16 { 4e-3 } else { 2e-2 }
}

/// The packed cases of `head_dim`: ragged (query, key) lengths with a sequence of one query,
/// one of one key, lengths under, at and past a tile and not multiples of it, more queries
/// than keys (the causal mask's first rows see nothing) and more keys than queries; grouped
/// queries (4 heads over 2 KV heads) and multi-query (3 over 1).
pub(super) fn varlen_shapes(head_dim: usize, persistent: bool) -> Vec<VarlenShape> {
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
        let shapes = varlen_shapes(cfg.head_dim as usize, cfg.persistent);
        problems(ctx, att, shapes.into_iter().map(Problem::Packed).collect())
    })?;
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{cases} cases: packed sequences, bf16 (f16: default), d 64/128/256, causal or \
             not, one CTA per tile or persistent, lengths 1..300 ragged, GQA 4/2, 8/2 and MQA \
             3/1; error / tolerance of O and LSE"
        ),
    })
}

/// The configurations checked: every one of [`AttentionConfig::all`] in bf16; in f16 (which
/// changes only the conversions, not the schedule, grid or store) the default ones, batched and
/// packed. `PTXKIT_ATTENTION_ONLY` (kernel names, comma-separated) narrows them, for a run
/// under compute-sanitizer; so does `PTXKIT_ATTENTION_MATCH` (comma-separated parts of names:
/// a kernel runs when its name holds one of them and none of those written `!part`), so a GPU
/// run can take, say, the persistent kernels (`_persistent`) in a process of their own.
fn checked(varlen: bool) -> Vec<AttentionConfig> {
    let env = |name: &str| std::env::var(name).ok().filter(|s| !s.is_empty());
    let (only, parts) = (env("PTXKIT_ATTENTION_ONLY"), env("PTXKIT_ATTENTION_MATCH"));
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
        .filter(|c| parts.as_deref().is_none_or(|p| name_matches(&c.name(), p)))
        .collect()
}

/// Whether `name` holds one of the comma-separated `parts` (any, when all are exclusions) and
/// none of those written `!part`.
pub(super) fn name_matches(name: &str, parts: &str) -> bool {
    let (not, wanted): (Vec<&str>, Vec<&str>) = parts.split(',').partition(|p| p.starts_with('!'));
    let excluded = not
        .iter()
        .filter_map(|p| p.strip_prefix('!'))
        .any(|p| name.contains(p));
    (wanted.is_empty() || wanted.iter().any(|p| name.contains(p))) && !excluded
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
        if cfg.pair {
            // One query tile: the pair's second CTA lies past the queries (it loads its half
            // of each K and V tile and stores nothing).
            shapes.push(AttentionShape {
                batch: 1,
                seqlen_q: 100,
                seqlen_k: 333,
                heads: 2,
                kv_heads: 1,
                head_dim: cfg.head_dim as usize,
            });
        }
        problems(ctx, att, shapes.into_iter().map(Problem::Batched).collect())
    })?;
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{cases} cases: bf16 (f16: default configurations), d 64/128/256, causal or not, \
             serial/pingpong/overlap, persistent, TMA store of O, CTA pairs, GQA 4/2 at \
             197x333, MQA 3/1 causal at 300x130, persistent/TMA-store GQA 16/4 at 2x600x250, \
             pairs 2/1 at 100x333; error / tolerance of O and LSE"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn a_match_takes_the_parts_named_and_leaves_the_excluded() {
        let name = "attention_fwd_bf16_d128_causal_persistent";
        assert!(name_matches(name, "_persistent"));
        assert!(name_matches(name, "_d64,_causal"));
        assert!(!name_matches(name, "!_persistent"));
        assert!(name_matches(name, "!_varlen"));
        assert!(!name_matches(name, "_d128,!_causal"));
        assert!(!name_matches(name, "_d64"));
    }
}
