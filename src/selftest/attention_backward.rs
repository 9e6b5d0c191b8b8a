//! The attention backward's GPU check behind `ptxkit selftest` (`attention_backward`): bf16
//! and f16, head dims 64, 128 and 256, causal and not, on batch 2 with 4 query heads over 2 KV heads
//! (grouped queries: dK and dV summed over each group) at query length 197 and key length 333
//! (neither a multiple of a block), equal odd lengths (257), and under the causal mask
//! multi-query attention (1 KV head) with more queries than keys (rows that see no key); the
//! packed configurations ([`BackwardConfig::varlen`]) on the forward's packed check's ragged
//! lengths (`attention::varlen_shapes`). Fresh random Q, K, V and dO; O and LSE from the library's forward on them; dQ, dK and dV
//! poisoned with NaN, computed by the forward's [`Attention::backward`] (the default and the
//! deterministic configurations) or a loaded [`AttentionBackward`] (`_red`), then compared with
//! the f64 host reference ([`attention::reference_backward`],
//! [`attention::reference_backward_varlen`]) from the rounded inputs; in the deterministic mode a
//! second run, without a limit (so the main and convert kernels are programmatic dependents,
//! [`BackwardConfig::dependent`]), must give the same bits (else the error is infinite). A gradient's error is its
//! largest `|got - want|` over its largest `|want|` (the gradients' scale varies with the
//! lengths), over a tolerance of 3e-2 for bf16 and 1e-2 for f16, so 1 is the bar.

use super::attention::{Offsets, Problem, abs_err, limit, name_matches, tally, varlen_shapes};
use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult};
use super::rows::{Host, random};
use crate::library::attention::{
    self, Attention, AttentionArgs, AttentionBackward, AttentionConfig, AttentionShape,
    BackwardArgs, BackwardConfig, BackwardSeqs,
};
use ptx_isa::ScalarType;

/// A gradient's tolerance, relative to its largest value.
fn tolerance(dtype: ScalarType) -> f64 {
    if dtype == ScalarType::F16 { 1e-2 } else { 3e-2 }
}

/// `|got - want|`'s largest over `want`'s largest magnitude.
fn rel_err(got: &[f32], want: &[f32]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, &w| m.max(f64::from(w).abs()));
    abs_err(got, want) / scale.max(f64::MIN_POSITIVE)
}

/// One case: the forward's O and LSE, then the backward (`bwd`, else the forward's own),
/// against the host reference; packed problems through [`BackwardArgs::packed`].
fn case<H: Host>(
    ctx: &mut GpuCtx,
    (fwd, bwd, unwatched): (
        &Attention,
        Option<&AttentionBackward>,
        Option<&AttentionBackward>,
    ),
    problem: &Problem,
) -> Result<f64, GpuCheckError> {
    let cfg = *bwd.map_or(fwd.backward_config(), |b| b.config());
    let [q_shape, kv_shape, lse_shape] = problem.shapes();
    let (nq, nk) = (q_shape.iter().product(), kv_shape.iter().product());
    let (hq, fq) = random::<H>(ctx, nq, 1.0);
    let (hk, fk) = random::<H>(ctx, nk, 1.0);
    let (hv, fv) = random::<H>(ctx, nk, 1.0);
    let (hdo, fdo) = random::<H>(ctx, nq, 1.0);
    let scale = 1.0 / (problem.head_dim() as f32).sqrt();
    let q = ctx.upload(&hq, &q_shape)?;
    let k = ctx.upload(&hk, &kv_shape)?;
    let v = ctx.upload(&hv, &kv_shape)?;
    let d_o = ctx.upload(&hdo, &q_shape)?;
    let nan = |n: usize| vec![H::from_f32(f32::NAN); n];
    let mut o = ctx.upload(&nan(nq), &q_shape)?;
    let mut lse = ctx.poisoned(&lse_shape)?;
    let offsets = match problem {
        Problem::Packed(s) => Some(Offsets::upload(ctx, s)?),
        Problem::Batched(_) => None,
    };
    let mut args = AttentionArgs::new([&q, &k, &v], &mut o, &mut lse, scale);
    if let Some(offs) = &offsets {
        args = args.packed(offs.args());
    }
    fwd.run_borrowed(&ctx.stream, args)?;
    let mut dq = ctx.upload(&nan(nq), &q_shape)?;
    let mut dk = ctx.upload(&nan(nk), &kv_shape)?;
    let mut dv = ctx.upload(&nan(nk), &kv_shape)?;
    // `second`: the deterministic mode's second run, by `unwatched` where given.
    let backward = |stream: &_, grads: [&mut _; 3], second: bool| {
        let mut args = BackwardArgs::new([&q, &k, &v, &o, &d_o], &lse, grads, scale);
        if let Some(offs) = &offsets {
            args = args.packed(BackwardSeqs {
                offsets: offs.args(),
                max_seqlen_k: offs.longest[1],
            });
        }
        match (bwd, unwatched.filter(|_| second)) {
            (_, Some(b)) | (Some(b), None) => b.run_borrowed(stream, args),
            (None, None) => fwd.backward(stream, args),
        }
    };
    backward(&ctx.stream, [&mut dq, &mut dk, &mut dv], false)?;
    let (want_q, want_k, want_v) = match problem {
        Problem::Batched(s) => {
            attention::reference_backward(&fq, &fk, &fv, &fdo, *s, cfg.causal, scale)
        }
        Problem::Packed(s) => {
            attention::reference_backward_varlen([&fq, &fk, &fv, &fdo], s, cfg.causal, scale)
        }
    };
    let mut worst = 0.0f64;
    if cfg.deterministic {
        // A second run into fresh poisoned gradients (without a limit: the main and convert
        // kernels programmatic dependents): the same bits.
        let mut again = [
            ctx.upload(&nan(nq), &q_shape)?,
            ctx.upload(&nan(nk), &kv_shape)?,
            ctx.upload(&nan(nk), &kv_shape)?,
        ];
        let [aq, ak, av] = &mut again;
        backward(&ctx.stream, [aq, ak, av], true)?;
        for (first, second) in [(&dq, &again[0]), (&dk, &again[1]), (&dv, &again[2])] {
            let bits = |x: Vec<H>| {
                x.into_iter()
                    .map(|v| v.to_f32().to_bits())
                    .collect::<Vec<u32>>()
            };
            if bits(ctx.download(first)?) != bits(ctx.download(second)?) {
                if std::env::var_os("PTXKIT_ATTENTION_PROGRESS").is_some() {
                    eprintln!("  {}: two runs differ", cfg.name());
                }
                worst = f64::INFINITY;
            }
        }
    }
    for (name, got, want) in [
        ("dq", &dq, want_q),
        ("dk", &dk, want_k),
        ("dv", &dv, want_v),
    ] {
        let got: Vec<f32> = ctx.download(got)?.into_iter().map(H::to_f32).collect();
        let err = rel_err(&got, &want) / tolerance(cfg.dtype);
        // With `PTXKIT_ATTENTION_PROGRESS` set, each gradient's error on stderr.
        if std::env::var_os("PTXKIT_ATTENTION_PROGRESS").is_some() {
            eprintln!("  {} {name}: {err:.3e}", cfg.name());
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

/// The configurations checked: every one of [`BackwardConfig::all`], or those whose names
/// `PTXKIT_ATTENTION_MATCH` takes (as the forward's check reads it), for a run under
/// compute-sanitizer.
fn checked() -> Vec<BackwardConfig> {
    let parts = std::env::var("PTXKIT_ATTENTION_MATCH")
        .ok()
        .filter(|s| !s.is_empty());
    BackwardConfig::all()
        .into_iter()
        .filter(|c| parts.as_deref().is_none_or(|p| name_matches(&c.name(), p)))
        .collect()
}

/// The problems of a configuration's cases: batched, or packed the forward's varlen check's
/// ragged lengths ([`varlen_shapes`]: sequences of one query and of one key, lengths under,
/// at and past a block, GQA 4/2 and MQA 3/1).
fn problems(cfg: &BackwardConfig) -> Vec<Problem> {
    let d = cfg.head_dim as usize;
    if cfg.varlen {
        return varlen_shapes(d, false)
            .into_iter()
            .map(Problem::Packed)
            .collect();
    }
    let mut out = vec![
        AttentionShape {
            batch: 2,
            seqlen_q: 197,
            seqlen_k: 333,
            heads: 4,
            kv_heads: 2,
            head_dim: d,
        },
        AttentionShape {
            batch: 1,
            seqlen_q: 257,
            seqlen_k: 257,
            heads: 2,
            kv_heads: 2,
            head_dim: d,
        },
    ];
    if cfg.causal {
        // Multi-query, more queries than keys: the first rows see no key.
        out.push(AttentionShape {
            batch: 1,
            seqlen_q: 300,
            seqlen_k: 130,
            heads: 3,
            kv_heads: 1,
            head_dim: d,
        });
    }
    out.into_iter().map(Problem::Batched).collect()
}

/// Every case; the first failure to run names its kernel and case.
pub(crate) fn run(ctx: &mut GpuCtx) -> RunResult {
    let (mut worst, mut cases) = (0.0f64, 0usize);
    for cfg in checked() {
        let named = |e: crate::library::attention::AttentionError| GpuCheckError::Case {
            case: cfg.name(),
            source: Box::new(e.into()),
        };
        let mut fwd_cfg = AttentionConfig::new(cfg.dtype, cfg.head_dim, cfg.causal);
        if cfg.varlen {
            fwd_cfg = fwd_cfg.with_varlen();
        }
        let mut fwd = Attention::new(&ctx.dev, fwd_cfg)
            .map(|a| a.with_limit(limit()))
            .map_err(named)?;
        if cfg.deterministic {
            fwd = fwd.with_deterministic_backward();
        }
        // The forward's own backward where it is the configuration, else one loaded for it.
        let bwd = match *fwd.backward_config() == cfg {
            true => None,
            false => Some(
                AttentionBackward::new(&ctx.dev, cfg)
                    .map(|a| a.with_limit(limit()))
                    .map_err(named)?,
            ),
        };
        // The deterministic mode's second run without a limit: a launch not waited for is a
        // programmatic dependent one ([`BackwardConfig::dependent`]), its bits the same.
        let unwatched = match cfg.deterministic {
            true => Some(AttentionBackward::new(&ctx.dev, cfg).map_err(named)?),
            false => None,
        };
        for problem in problems(&cfg) {
            let name = problem.name();
            let launchers = (&fwd, bwd.as_ref(), unwatched.as_ref());
            let r = match cfg.dtype {
                ScalarType::F16 => case::<half::f16>(ctx, launchers, &problem),
                _ => case::<half::bf16>(ctx, launchers, &problem),
            };
            tally(&cfg.name(), name, r, (&mut worst, &mut cases)).map_err(|failed| {
                let (case, e) = *failed;
                GpuCheckError::Case {
                    case: format!("{} {case}", cfg.name()),
                    source: Box::new(e),
                }
            })?;
        }
    }
    // The bad calls last, so a failed one does not hide the gradients' results.
    let refused = super::attention_backward_args::run(ctx)?;
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{cases} cases and {refused} bad calls refused (typed errors naming their place, gradients untouched): bf16/f16, d 64/128/256, causal or not, dQ in bulk (at d64 in 128-query \
             blocks, or in 64 with the partials summed first or not; at d128 in 64- or 80-query blocks, \
             80 with dQ transposed), by red or deterministic (two runs bit-identical, the second with the kernels programmatic \
             dependents), causal CTAs longest first, GQA 4/2 at 2x197x333, 257x257, MQA 3/1 \
             causal at 300x130, packed ragged lengths 1..300 (GQA 4/2, MQA 3/1); the largest |error| over the largest |gradient| of dQ, dK, dV \
             over its tolerance (bf16 3e-2, f16 1e-2)"
        ),
    })
}
