//! The attention benchmarks' setting, the forward's (`benches/attention.rs`) and the
//! backward's (`benches/attention_backward.rs`): the FlashAttention-3 paper's 16k tokens a batch
//! with 2048 = heads x head dim, the shapes they time and the table they print, so both (and
//! `benches/attention_torch.py` beside them) time the same problems in the same columns.

use std::sync::Arc;

use super::{BenchFilter, device_or_skip};
use crate::library::attention::AttentionShape;
use crate::runtime::cuda::CudaStream;
use crate::runtime::{Before, Device, RuntimeError};

/// Tokens a batch: `batch = TOKENS / seqlen`.
pub const TOKENS: usize = 16384;

/// Heads x head dim.
pub const HIDDEN: usize = 2048;

/// The problem of head dim `head_dim` over `seqlen` tokens: [`TOKENS`] a batch, [`HIDDEN`] /
/// `head_dim` heads, as many KV heads.
pub fn shape(head_dim: usize, seqlen: usize) -> AttentionShape {
    let heads = HIDDEN / head_dim;
    AttentionShape {
        batch: TOKENS / seqlen,
        seqlen_q: seqlen,
        seqlen_k: seqlen,
        heads,
        kv_heads: heads,
        head_dim,
    }
}

/// The shapes timed, forward and backward, `(head dim, causal, seqlen)`: head dims 128, 64 and
/// 256 at 4k, 8k and 16k tokens, causal and not (issue 30's grid; `attention_torch.py --kit`
/// and `--backward` time the same).
pub fn shapes() -> Vec<(usize, bool, usize)> {
    let mut out = Vec::new();
    for causal in [false, true] {
        for d in [128, 64, 256] {
            for seqlen in [4096, 8192, 16384] {
                out.push((d, causal, seqlen));
            }
        }
    }
    out
}

/// The start of a benchmark's GPU part: device 0, its name and the table's header printed
/// (Markdown), and the rows the variables `PTXKIT_ATTENTION_SHAPE` (comma-separated beginnings
/// of `d:causal:seqlen`: `128:false:8192` for an ncu run's one launch, `128:` for head dim
/// 128) and `PTXKIT_ATTENTION_VARIANT` (comma-separated variant names) narrow it to
/// ([`BenchFilter`]); `None` after saying on stderr why there is no device.
pub fn start() -> Option<(Device, BenchFilter)> {
    let dev = device_or_skip("GPU benchmarks skipped")?;
    println!("\ndevice: {}", dev.attributes().name);
    println!(
        "| head dim | causal | variant | batch x seqlen | heads | ptxkit ms | ptxkit TFLOP/s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let filter = BenchFilter::from_env("PTXKIT_ATTENTION_SHAPE", "PTXKIT_ATTENTION_VARIANT");
    Some((dev, filter))
}

/// The median time in ms of `run` on `stream`, each run from a cold L2 ([`Before::ColdL2`]: 3
/// runs, then 20 timed), as `attention_torch.py` times torch; a failure in words.
pub fn median_ms(
    stream: &Arc<CudaStream>,
    mut run: impl FnMut() -> Result<(), String>,
) -> Result<f64, String> {
    crate::runtime::median_ms::<RuntimeError>(stream, 3, 20, Before::ColdL2, || {
        run().map_err(|reason| RuntimeError::InvalidLaunch { reason })
    })
    .map_err(|e| e.to_string())
}

/// Prints the row of variant `name` on `s` (`causal`): its time in ms and TFLOP/s of `flops`
/// floating-point operations, or why it has none.
pub fn print_row(
    s: &AttentionShape,
    causal: bool,
    name: &str,
    flops: f64,
    r: &Result<f64, String>,
) {
    let (d, seqlen, heads, batch) = (s.head_dim, s.seqlen_q, s.heads, s.batch);
    match r {
        Ok(ms) => println!(
            "| {d} | {causal} | {name} | {batch}x{seqlen} | {heads} | {ms:.3} | {:.1} |",
            flops / ms / 1e9
        ),
        Err(e) => {
            println!("| {d} | {causal} | {name} | {batch}x{seqlen} | {heads} | failed: {e} | |")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{HIDDEN, TOKENS, shape, shapes};

    #[test]
    fn every_shape_holds_the_same_tokens_and_hidden_size() {
        assert_eq!(shapes().len(), 18);
        for (d, _, seqlen) in shapes() {
            let s = shape(d, seqlen);
            assert_eq!(s.batch * s.seqlen_q, TOKENS);
            assert_eq!(s.heads * s.head_dim, HIDDEN);
            assert_eq!((s.seqlen_k, s.kv_heads), (s.seqlen_q, s.heads));
        }
    }
}
