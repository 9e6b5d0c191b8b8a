//! Attention forward: TFLOP/s (`4 · batch · heads · seqlen_q · seqlen_k · d`, halved with the
//! causal mask) of the library's kernel at 16k tokens per batch (batch = 16384 / seqlen) with
//! 2048 = heads x d (the FlashAttention-3 paper's setting): head dims 128, 64 and 256 at 4k, 8k
//! and 16k, causal and not (`selftest::attention_bench`), each in every variant of
//! `AttentionConfig::variants` (one CTA per query tile or a persistent grid in either tile
//! order, O from registers or by TMA, at head dim 128 also 3 stages, 176-row key tiles and the
//! overlap schedule; a `variant` column tells them apart), beside `default`, the configuration
//! `AttentionConfig::for_problem` picks for the shape; each timed several times in turn (a row
//! each).
//! `benches/attention_torch.py --kit` times torch's `scaled_dot_product_attention` with each
//! backend on the same shapes; run both in one GPU call and put the tables side by side
//! (BENCHMARKS.md).
//!
//! CPU (runs anywhere): the time to build the kernel's PTX.
//!
//! ```text
//! cargo bench --bench attention
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::attention::{Attention, AttentionConfig, AttentionShape, build};
use ptxkit::runtime::{Device, DeviceTensor};
use ptxkit::selftest::Rng;
use ptxkit::selftest::attention_bench::{self, HIDDEN, TOKENS};

/// How long one timed launch may take before its row fails (a hung kernel).
const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

fn build_ptx(c: &mut Criterion) {
    let cfg = AttentionConfig::new(ScalarType::Bf16, 128, true);
    c.bench_function("build_ptx/attention_bf16_d128_causal", |b| {
        b.iter(|| build(Target::Sm90a, &cfg).map(|k| k.ptx().len()))
    });
}

/// Random bf16 inputs for every shape: each timed shape holds `TOKENS x HIDDEN` elements of Q, K
/// and V (and the KV heads equal the query heads), so one draw serves all.
struct Inputs {
    q: Vec<half::bf16>,
    k: Vec<half::bf16>,
    v: Vec<half::bf16>,
}

impl Inputs {
    fn draw() -> Inputs {
        let mut rng = Rng::fresh();
        let mut data = || -> Vec<half::bf16> {
            rng.vec_f32(TOKENS * HIDDEN)
                .into_iter()
                .map(half::bf16::from_f32)
                .collect()
        };
        Inputs {
            q: data(),
            k: data(),
            v: data(),
        }
    }
}

/// One shape's device tensors (inputs uploaded once, shared by every schedule timed on it).
struct Operands {
    q: DeviceTensor<half::bf16>,
    k: DeviceTensor<half::bf16>,
    v: DeviceTensor<half::bf16>,
    o: DeviceTensor<half::bf16>,
    lse: DeviceTensor<f32>,
}

impl Operands {
    fn upload(dev: &Device, s: AttentionShape, x: &Inputs) -> Result<Operands, String> {
        let stream = dev.default_stream();
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let q_shape = vec![s.batch, s.seqlen_q, s.heads, s.head_dim];
        let kv_shape = vec![s.batch, s.seqlen_k, s.kv_heads, s.head_dim];
        let n_q: usize = q_shape.iter().product();
        let n_kv: usize = kv_shape.iter().product();
        let upload = |h: &[half::bf16], n: usize, shape: Vec<usize>| {
            h.get(..n)
                .ok_or_else(|| format!("{n} inputs asked, {} drawn", h.len()))
                .and_then(|h| DeviceTensor::from_host(&stream, h, shape).map_err(|e| err(&e)))
        };
        let q = upload(&x.q, n_q, q_shape.clone())?;
        let k = upload(&x.k, n_kv, kv_shape.clone())?;
        let v = upload(&x.v, n_kv, kv_shape)?;
        let o = DeviceTensor::from_host(&stream, &vec![half::bf16::ZERO; n_q], q_shape)
            .map_err(|e| err(&e))?;
        let n_lse = s.batch * s.heads * s.seqlen_q;
        let lse = DeviceTensor::from_host(
            &stream,
            &vec![0f32; n_lse],
            vec![s.batch, s.heads, s.seqlen_q],
        )
        .map_err(|e| err(&e))?;
        Ok(Operands { q, k, v, o, lse })
    }
}

/// One configuration on one shape: its median time in ms, each run from a cold L2 (as
/// `attention_torch.py` times torch).
fn time(dev: &Device, att: &Attention, s: AttentionShape, x: &mut Operands) -> Result<f64, String> {
    let stream = dev.default_stream();
    let scale = 1.0 / (s.head_dim as f32).sqrt();
    // One launch waited for at most LIMIT first (the module is cached: no second JIT), so a
    // kernel that hangs fails its row instead of blocking the rest; the timed launches are not
    // waited on one by one.
    Attention::new(dev, *att.config())
        .map(|a| a.with_limit(LIMIT))
        .and_then(|a| a.run(&stream, &x.q, &x.k, &x.v, &mut x.o, &mut x.lse, scale))
        .map_err(|e| format!("the first launch: {e}"))?;
    attention_bench::median_ms(&stream, || {
        att.run(&stream, &x.q, &x.k, &x.v, &mut x.o, &mut x.lse, scale)
            .map_err(|e| e.to_string())
    })
}

fn gpu(_c: &mut Criterion) {
    // `PTXKIT_ATTENTION_VARIANT` (labels of `AttentionConfig::variants`: grid, tma, pers, ...,
    // and `default`) times those variants only, so each can run in a process of its own;
    // `PTXKIT_ATTENTION_SHAPE` those shapes only (`attention_bench::start`).
    let Some((dev, filter)) = attention_bench::start() else {
        return;
    };
    // `PTXKIT_ATTENTION_REPEATS` (3 unless set) times each variant that many times, all the
    // variants of a shape in turn each time, so a drift of the clocks reaches them alike; a row
    // per timing (the tables take the median).
    let repeats = std::env::var("PTXKIT_ATTENTION_REPEATS")
        .ok()
        .and_then(|r| r.trim().parse::<usize>().ok())
        .unwrap_or(3);
    let inputs = Inputs::draw();
    // Each configuration's kernel loaded once.
    let mut loaded: Vec<(AttentionConfig, Result<Attention, String>)> = Vec::new();
    for (d, causal, seqlen) in attention_bench::shapes() {
        if !filter.shape(&format!("{d}:{causal}:{seqlen}")) {
            continue;
        }
        let s = attention_bench::shape(d, seqlen);
        let row = |name: &str, r: Result<f64, String>| {
            attention_bench::print_row(&s, causal, name, s.flops(causal), &r)
        };
        let mut x = match Operands::upload(&dev, s, &inputs) {
            Ok(x) => x,
            Err(e) => {
                row("(inputs)", Err(e));
                continue;
            }
        };
        // What the library picks for the shape first (`default`), then every variant.
        let picked = (
            "default",
            AttentionConfig::for_problem(ScalarType::Bf16, &s, causal),
        );
        let timed: Vec<_> = std::iter::once(picked)
            .chain(AttentionConfig::variants(d as u32, causal))
            .filter(|(name, _)| filter.variant(name))
            .collect();
        for (name, cfg) in (0..repeats).flat_map(|_| timed.iter().copied()) {
            if !loaded.iter().any(|(c, _)| *c == cfg) {
                let att = Attention::new(&dev, cfg).map_err(|e| e.to_string());
                loaded.push((cfg, att));
            }
            let Some((_, att)) = loaded.iter().find(|(c, _)| *c == cfg) else {
                continue;
            };
            match att {
                Ok(att) => {
                    let r = time(&dev, att, s, &mut x);
                    // A kernel still running holds the GPU: every later launch would wait
                    // behind it, so the rows stop here.
                    let hung = r.as_ref().is_err_and(|e| e.contains("did not finish"));
                    row(name, r);
                    if hung {
                        println!(
                            "stopped: `{}` hung; the GPU is still running it",
                            cfg.name()
                        );
                        return;
                    }
                }
                Err(e) => row(name, Err(format!("not built: {e}"))),
            }
        }
    }
}

criterion_group!(benches, build_ptx, gpu);
criterion_main!(benches);
