//! Attention backward: TFLOP/s (2.5 times the forward's `4 · batch · heads · seqlen² · d`,
//! halved with the causal mask: the backward's five GEMMs against the forward's two) of the
//! library's backward (preprocess, main and convert kernels together) at 16k tokens per batch
//! (batch = 16384 / seqlen) with 2048 = heads x d: head dims 128, 64 and 256 at 4k, 8k and
//! 16k, causal and not, with dQ reduced in bulk (the default; at d256 with one stage, at d64
//! the warpgroups' partials summed first; `partials`: at d64 each on its own,
//! [`BackwardConfig::dq_summed`]; `m64` and `m128`: at d64 the query blocks of 64 or 128 rows,
//! [`BackwardConfig::block_m`], whichever is not the default; `m80`: at d128 80-query blocks
//! with dQ transposed, [`BackwardConfig::TRANSPOSED_BLOCK_M`], and `m64` there where 80 is the
//! default; `intrip`: at d128 each trip's `Sᵀ` issued at its start rather than by the trip
//! before, [`BackwardConfig::scores_ahead`] off, and `dvlate` that with `dV` queued once `dSᵀ` is
//! stored, [`BackwardConfig::dv_after_ds`]), by `red.global.add.f32` (at
//! d256 with two stages), in the deterministic mode, with the causal mask's CTAs in the grid's
//! order rather than longest first (`inorder`, [`BackwardConfig::in_order`]) and with three
//! ordinary launches rather than the main and convert kernels as programmatic dependents
//! (`serial`, [`BackwardConfig::dependent`]) (a `variant` column); `pre` times the default's
//! preprocess kernel alone ([`AttentionBackward::run_preprocess`], no TFLOP/s). `benches/attention_torch.py --backward` times
//! torch's SDPA backward with its flash and cuDNN backends on the same shapes; run both in one GPU call and put the
//! tables side by side (BENCHMARKS.md).
//!
//! CPU (runs anywhere): the time to build the main kernel's PTX.
//!
//! ```text
//! cargo bench --bench attention_backward
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::attention::backward::build_main;
use ptxkit::library::attention::{
    Attention, AttentionBackward, AttentionConfig, AttentionShape, BackwardArgs, BackwardConfig,
};
use ptxkit::runtime::{Device, DeviceTensor};
use ptxkit::selftest::{Rng, attention_bench};

/// How long one launch may take before its row fails (a hung kernel).
const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

fn build_ptx(c: &mut Criterion) {
    let cfg = BackwardConfig::new(ScalarType::Bf16, 128, true);
    c.bench_function("build_ptx/attention_bwd_bf16_d128_causal", |b| {
        b.iter(|| build_main(Target::Sm90a, &cfg).map(|k| k.ptx().len()))
    });
}

type Bf16 = half::bf16;

/// One shape's device tensors: random Q, K, V and dO, the forward's O and LSE, the gradients.
struct Operands {
    q: DeviceTensor<Bf16>,
    k: DeviceTensor<Bf16>,
    v: DeviceTensor<Bf16>,
    d_o: DeviceTensor<Bf16>,
    o: DeviceTensor<Bf16>,
    lse: DeviceTensor<f32>,
    dq: DeviceTensor<Bf16>,
    dk: DeviceTensor<Bf16>,
    dv: DeviceTensor<Bf16>,
}

impl Operands {
    /// Random inputs for `s` and the forward run on them (`causal`).
    fn new(dev: &Device, s: AttentionShape, causal: bool) -> Result<Operands, String> {
        let stream = dev.default_stream();
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let mut rng = Rng::fresh();
        let q_shape = vec![s.batch, s.seqlen_q, s.heads, s.head_dim];
        let kv_shape = vec![s.batch, s.seqlen_k, s.kv_heads, s.head_dim];
        let mut random = |shape: &Vec<usize>| {
            let n = shape.iter().product();
            let h: Vec<Bf16> = rng.vec_f32(n).into_iter().map(Bf16::from_f32).collect();
            DeviceTensor::from_host(&stream, &h, shape.clone()).map_err(|e| err(&e))
        };
        let (q, k, v, d_o) = (
            random(&q_shape)?,
            random(&kv_shape)?,
            random(&kv_shape)?,
            random(&q_shape)?,
        );
        let zeros = |shape: &Vec<usize>| {
            let n = shape.iter().product();
            DeviceTensor::from_host(&stream, &vec![Bf16::ZERO; n], shape.clone())
                .map_err(|e| err(&e))
        };
        let (mut o, dq, dk, dv) = (
            zeros(&q_shape)?,
            zeros(&q_shape)?,
            zeros(&kv_shape)?,
            zeros(&kv_shape)?,
        );
        let stats = vec![s.batch, s.heads, s.seqlen_q];
        let mut lse = DeviceTensor::from_host(&stream, &vec![0f32; stats.iter().product()], stats)
            .map_err(|e| err(&e))?;
        let fwd = AttentionConfig::for_problem(ScalarType::Bf16, &s, causal);
        let scale = 1.0 / (s.head_dim as f32).sqrt();
        Attention::new(dev, fwd)
            .map(|a| a.with_limit(LIMIT))
            .and_then(|a| a.run(&stream, &q, &k, &v, &mut o, &mut lse, scale))
            .map_err(|e| format!("the forward: {e}"))?;
        Ok(Operands {
            q,
            k,
            v,
            d_o,
            o,
            lse,
            dq,
            dk,
            dv,
        })
    }

    /// The backward on these operands (`pre`: its preprocess kernel alone).
    fn run(
        &mut self,
        dev: &Device,
        bwd: &AttentionBackward,
        scale: f32,
        pre: bool,
    ) -> Result<(), String> {
        let stream = dev.default_stream();
        let args = BackwardArgs::new(
            [&self.q, &self.k, &self.v, &self.o, &self.d_o],
            &self.lse,
            [&mut self.dq, &mut self.dk, &mut self.dv],
            scale,
        );
        match pre {
            true => bwd.run_preprocess(&stream, args),
            false => bwd.run_borrowed(&stream, args),
        }
        .map_err(|e| e.to_string())
    }
}

/// The backward's median time in ms on one shape, each run from a cold L2 (as
/// `attention_torch.py` times torch).
fn time(
    dev: &Device,
    (cfg, pre): (BackwardConfig, bool),
    s: AttentionShape,
    x: &mut Operands,
) -> Result<f64, String> {
    let scale = 1.0 / (s.head_dim as f32).sqrt();
    // One run waited for at most LIMIT first, so a kernel that hangs fails its row.
    let watched = AttentionBackward::new(dev, cfg)
        .map(|b| b.with_limit(LIMIT))
        .map_err(|e| e.to_string())?;
    x.run(dev, &watched, scale, pre)
        .map_err(|e| format!("the first run: {e}"))?;
    let bwd = AttentionBackward::new(dev, cfg).map_err(|e| e.to_string())?;
    let stream = dev.default_stream();
    attention_bench::median_ms(&stream, || x.run(dev, &bwd, scale, pre))
}

fn gpu(_c: &mut Criterion) {
    // `PTXKIT_ATTENTION_SHAPE` and `PTXKIT_ATTENTION_VARIANT` (bulk, red, det) narrow the rows
    // (`attention_bench::start`).
    let Some((dev, filter)) = attention_bench::start() else {
        return;
    };
    // The shapes: head dims 128, 64 and 256 at 4k, 8k and 16k tokens, causal and not.
    for (d, causal, seqlen) in attention_bench::shapes() {
        if !filter.shape(&format!("{d}:{causal}:{seqlen}")) {
            continue;
        }
        let s = attention_bench::shape(d, seqlen);
        let mut x = match Operands::new(&dev, s, causal) {
            Ok(x) => x,
            Err(e) => {
                attention_bench::print_row(&s, causal, "(inputs)", 0.0, &Err(e));
                continue;
            }
        };
        // dQ reduced in bulk (the default; at d256 with one stage, at d64 the warpgroups'
        // partials summed first), at d64 each partial on its own, by `red.global.add.f32` (at
        // d256 with two stages), and in the deterministic mode.
        let cfg = BackwardConfig::new(ScalarType::Bf16, d as u32, causal);
        let block = |rows: u32| cfg.with_block_m(rows);
        for (name, cfg) in [
            ("bulk", cfg.with_bulk_dq()),
            ("m64", block(BackwardConfig::BLOCK_M)),
            ("m128", block(BackwardConfig::WIDE_BLOCK_M)),
            ("dvlate", cfg.with_scores_in_trip().with_dv_after_ds()),
            ("intrip", cfg.with_scores_in_trip()),
            ("m80", block(BackwardConfig::TRANSPOSED_BLOCK_M)),
            ("partials", block(BackwardConfig::BLOCK_M).with_partial_dq()),
            ("red", cfg.with_red_dq()),
            ("det", cfg.with_deterministic()),
            ("inorder", cfg.with_in_order()),
            ("serial", cfg.with_serial_launches()),
            ("pre", cfg),
        ] {
            // `m64` and `m128` at d64 where they are not the default, `m64` and the `m80`s at
            // d128 likewise; `partials` at d64.
            let default = cfg == BackwardConfig::new(ScalarType::Bf16, d as u32, causal);
            let skip = match name {
                "m64" => d == 256 || default,
                "m128" => d != 64 || default,
                "m80" => d != 128 || default,
                "partials" => d != 64,
                "dvlate" => d != 128,
                "intrip" => d != 128,
                "inorder" => !causal,
                _ => false,
            };
            if !filter.variant(name) || skip {
                continue;
            }
            // `pre`: the default's preprocess alone (its TFLOP/s column 0).
            let pre = name == "pre";
            let r = time(&dev, (cfg, pre), s, &mut x);
            let flops = if pre { 0.0 } else { 2.5 * s.flops(causal) };
            attention_bench::print_row(&s, causal, name, flops, &r);
            if r.is_err_and(|e| e.contains("did not finish")) {
                println!("stopped: the GPU is still running the hung kernel");
                return;
            }
        }
    }
}

criterion_group!(benches, build_ptx, gpu);
criterion_main!(benches);
