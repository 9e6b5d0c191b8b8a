//! A serving engine's decode step over a paged KV cache, written from the public API: a batch of
//! sequences of ragged lengths, each with one new token, 32 query heads over 8 KV heads, head dim
//! 128, the cache in vLLM's layout (`[num_pages, page_size, kv_heads, d]`) in pages of 16 tokens
//! handed out from a shuffled free list, a block table per sequence. The cache is FP8 e4m3 with a
//! scale per KV head (`--bf16`: bf16). Prints the decode kernel's name and the start of its entry
//! (`--ptx`: all of the PTX), then (when a GPU is there) runs the step on fresh random data, checks O
//! against the library's f64 reference and times it.
//!
//! ```text
//! cargo run --release --example decode_paged             # FP8 cache
//! cargo run --release --example decode_paged -- --bf16   # bf16 cache
//! ```

use ptxkit::isa::Target;
use ptxkit::library::decode::{
    Decode, DecodeArgs, DecodeConfig, DecodeShape, KvScales, build, reference,
};
use ptxkit::runtime::{Before, DeviceTensor, E4m3, RuntimeError, median_ms};

/// Query heads, KV heads, head dim, tokens a page.
const HEADS: usize = 32;
const KV_HEADS: usize = 8;
const D: usize = 128;
const PAGE: usize = 16;

/// The sequences' lengths, their new token included.
const LENS: [usize; 6] = [4096, 17, 1000, 16384, 64, 2500];

/// A small xorshift generator: values in `[-1, 1)`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.next() + 1.0) * 0.5 * n as f32) as usize % n
    }
}

/// The engine's configuration for this cache.
fn config(fp8: bool) -> DecodeConfig {
    let cfg = DecodeConfig::new(D as u32, (HEADS / KV_HEADS) as u32, PAGE as u32);
    if fp8 { cfg.with_fp8() } else { cfg }
}

/// The block table `[batch, max_pages]`: each sequence's pages taken in turn from a shuffled
/// free list of `pages` pages (-1 past a sequence's pages), as a busy server hands them out.
fn block_table(shape: &DecodeShape, pages: usize, rng: &mut Rng) -> Vec<i32> {
    let mut free: Vec<i32> = (0..pages as i32).collect();
    for i in (1..free.len()).rev() {
        free.swap(i, rng.below(i + 1));
    }
    let width = shape.max_pages();
    let mut table = vec![-1; shape.seq_lens.len() * width];
    let mut next = free.into_iter();
    for b in 0..shape.seq_lens.len() {
        for slot in table[b * width..][..shape.pages_of(b)].iter_mut() {
            *slot = next.next().unwrap_or(0);
        }
    }
    table
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let fp8 = !args.iter().any(|a| a == "--bf16");
    let cfg = config(fp8);
    let ptx = build(Target::Sm90a, &cfg)?.ptx().to_string();
    println!("{} ({} lines of PTX)", cfg.name(), ptx.lines().count());
    match args.iter().any(|a| a == "--ptx") {
        true => println!("{ptx}"),
        // The kernel's entry and its first parameters.
        false => ptx
            .lines()
            .skip_while(|l| !l.contains(".entry"))
            .take(12)
            .for_each(|l| println!("{l}")),
    }

    let Some(dev) = ptxkit::selftest::device_or_skip("decode_paged: not run on a GPU") else {
        return Ok(());
    };
    let stream = dev.default_stream();
    let dec = Decode::new(&dev, cfg)?;
    let shape = DecodeShape {
        seq_lens: LENS.to_vec(),
        q_len: 1,
        heads: HEADS,
        kv_heads: KV_HEADS,
        head_dim: D,
        page_size: PAGE,
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()));
    // A pool with room to spare: the engine's other sequences' pages hold garbage (NaN here).
    let pages = 2 * (0..LENS.len()).map(|b| shape.pages_of(b)).sum::<usize>();
    let table = block_table(&shape, pages, &mut rng);
    let cache_shape = vec![pages, PAGE, KV_HEADS, D];
    let n = cache_shape.iter().product::<usize>();
    let used: std::collections::HashSet<usize> = table
        .iter()
        .filter(|&&p| p >= 0)
        .map(|&p| p as usize)
        .collect();
    // Each value a random draw; a page no sequence holds is NaN.
    let mut draw = || -> Vec<f32> {
        (0..n)
            .map(|i| match used.contains(&(i / (PAGE * KV_HEADS * D))) {
                true => rng.next(),
                false => f32::NAN,
            })
            .collect()
    };
    let (k, v) = (draw(), draw());
    let q_shape = vec![LENS.len(), 1, HEADS, D];
    let q: Vec<half::bf16> = (0..q_shape.iter().product::<usize>())
        .map(|_| half::bf16::from_f32(rng.next()))
        .collect();
    let lens: Vec<i32> = LENS.iter().map(|&l| l as i32).collect();
    let scale = 1.0 / (D as f32).sqrt();

    // The cache on the device, and what the reference reads: the values as the kernel sees them.
    let head_scales: Vec<f32> = (0..KV_HEADS).map(|h| 0.5 + h as f32 / 8.0).collect();
    let scales = fp8.then_some(&head_scales[..]);
    let (k_dev, k_ref) = stored(&stream, &k, scales, &cache_shape)?;
    let (v_dev, v_ref) = stored(&stream, &v, scales, &cache_shape)?;
    let q_dev = DeviceTensor::from_host(&stream, &q, q_shape.clone())?;
    let table_dev = DeviceTensor::from_host(&stream, &table, vec![LENS.len(), shape.max_pages()])?;
    let lens_dev = DeviceTensor::from_host(&stream, &lens, vec![LENS.len()])?;
    let scales_dev = DeviceTensor::from_host(&stream, &head_scales, vec![KV_HEADS])?;
    let poison = vec![half::bf16::from_f32(f32::NAN); q.len()];
    let mut o = DeviceTensor::from_host(&stream, &poison, q_shape)?;

    let longest = LENS.iter().copied().max().unwrap_or(0);
    let step = |o: &mut DeviceTensor<half::bf16>| {
        let args = DecodeArgs {
            q: (&q_dev).into(),
            k_cache: k_dev.view(),
            v_cache: v_dev.view(),
            block_table: (&table_dev).into(),
            seq_lens: (&lens_dev).into(),
            o: o.into(),
            scale,
            max_seq_len: longest,
            splits: None,
            kv_scales: fp8.then(|| KvScales {
                k_scale: (&scales_dev).into(),
                v_scale: (&scales_dev).into(),
            }),
        };
        dec.run_borrowed(&stream, args)
    };
    step(&mut o)?;
    let got: Vec<f32> = o.to_host(&stream)?.iter().map(|x| x.to_f32()).collect();
    let q_ref: Vec<f32> = q.iter().map(|x| x.to_f32()).collect();
    let want = reference(&q_ref, &k_ref, &v_ref, &table, &shape, scale);
    let err = got
        .iter()
        .zip(&want)
        .map(|(g, w)| f64::from((g - w).abs()))
        .fold(0.0, f64::max);
    let ms = median_ms::<RuntimeError>(&stream, 3, 20, Before::Nothing, || {
        step(&mut o).map_err(|e| RuntimeError::InvalidLaunch {
            reason: e.to_string(),
        })
    })?;
    let splits = dec.splits(LENS.len(), KV_HEADS, 1, longest);
    let verdict = if err < 2e-2 { "PASS" } else { "FAIL" };
    println!(
        "{verdict} {} cache, lengths {LENS:?}: largest error {err:.2e} (bf16 O; bar 2e-2), \
         {splits} splits, {ms:.4} ms a step",
        if fp8 { "e4m3" } else { "bf16" }
    );
    if err >= 2e-2 {
        return Err(format!("decode_paged: largest error {err:.2e}").into());
    }
    Ok(())
}

/// `x` as the cache holds it on the device (with `scales`, each value e4m3 of twice itself over
/// its KV head's scale; else bf16), and the values the kernel reads back (the reference's).
fn stored(
    stream: &std::sync::Arc<ptxkit::runtime::cuda::CudaStream>,
    x: &[f32],
    scales: Option<&[f32]>,
    shape: &[usize],
) -> Result<(Cache, Vec<f32>), Box<dyn std::error::Error>> {
    Ok(match scales {
        Some(scales) => {
            let (held, back): (Vec<E4m3>, Vec<f32>) = x
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    let s = scales[(i / D) % KV_HEADS];
                    let e = E4m3::from_f32(2.0 * x / s);
                    (e, e.to_f32() * s)
                })
                .unzip();
            let t = DeviceTensor::from_host(stream, &held, shape.to_vec())?;
            (Cache::E4m3(t), back)
        }
        None => {
            let held: Vec<half::bf16> = x.iter().map(|&x| half::bf16::from_f32(x)).collect();
            let back = held.iter().map(|b| b.to_f32()).collect();
            let t = DeviceTensor::from_host(stream, &held, shape.to_vec())?;
            (Cache::Bf16(t), back)
        }
    })
}

/// A cache tensor on the device, bf16 or e4m3.
enum Cache {
    Bf16(DeviceTensor<half::bf16>),
    E4m3(DeviceTensor<E4m3>),
}

impl Cache {
    fn view(&self) -> ptxkit::runtime::TensorRef<'_> {
        match self {
            Cache::Bf16(t) => t.into(),
            Cache::E4m3(t) => t.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    /// `cargo test` holds the example's kernels to ptxas (the example runs them only with a GPU).
    #[test]
    fn the_kernels_assemble() {
        use ptxkit::isa::Target;
        for fp8 in [false, true] {
            let built = ptxkit::library::decode::build(Target::Sm90a, &super::config(fp8)).unwrap();
            let want = if fp8 {
                "cp.async.cg"
            } else {
                "cp.async.bulk.tensor"
            };
            ptxkit::selftest::check_ptx(built.ptx(), Target::Sm90a, &[want])
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
