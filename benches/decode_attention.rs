//! Decode attention: GB/s of K and V read and tokens per second of the library's kernel on the
//! issue's problems (bf16, 32 query heads over 8 KV heads, head dim 128, one new token: batch x
//! context 64 x 4k, 32 x 4k, 32 x 16k, 8 x 64k, 1 x 128k; and 32 x 16k with 4 new tokens), each
//! on a contiguous cache (one page a sequence, the memory torch's SDPA reads) and on paged caches
//! of 16- and 64-token pages in a shuffled block table. Each timed [`REPEATS`] times in turn, a
//! row each (the tables take the median); each time the median of 20 launches from a cold L2.
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
use ptxkit::library::decode::{Decode, DecodeArgs, DecodeConfig, build};
use ptxkit::runtime::{Device, DeviceTensor, RuntimeError, median_ms_cold};
use ptxkit::selftest::Rng;

/// Query heads, KV heads, head dim.
const HEADS: usize = 32;
const KV_HEADS: usize = 8;
const D: usize = 128;
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
const PROBLEMS: [(usize, usize, usize); 6] = [
    (64, 4096, 1),
    (32, 4096, 1),
    (32, 16384, 1),
    (8, 65536, 1),
    (1, 131072, 1),
    (32, 16384, 4),
];

/// One cache layout's device tensors.
struct Cache {
    k: DeviceTensor<half::bf16>,
    v: DeviceTensor<half::bf16>,
    table: DeviceTensor<i32>,
}

/// The cache of `batch` sequences of `ctx` tokens in pages of `page` tokens (`page == ctx`: one
/// page a sequence, contiguous in order), random bf16.
fn cache(
    dev: &Device,
    rng: &mut Rng,
    batch: usize,
    ctx: usize,
    page: usize,
) -> Result<Cache, RuntimeError> {
    let stream = dev.default_stream();
    let per = ctx.div_ceil(page);
    let pages = batch * per;
    let mut order: Vec<i32> = (0..pages as i32).collect();
    if page < ctx {
        for i in (1..pages).rev() {
            order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
    }
    let shape = vec![pages, page, KV_HEADS, D];
    let n: usize = shape.iter().product();
    // One random draw repeated: the values do not change the time.
    let draw: Vec<half::bf16> = rng.vec_f32(1 << 20).into_iter().map(half::bf16::from_f32).collect();
    let data: Vec<half::bf16> = draw.iter().copied().cycle().take(n).collect();
    let k = DeviceTensor::from_host(&stream, &data, shape.clone())?;
    let v = DeviceTensor::from_host(&stream, &data, shape)?;
    let table = DeviceTensor::from_host(&stream, &order, vec![batch, per])?;
    Ok(Cache { k, v, table })
}

/// The median ms of the decode on `cache`.
fn time(
    dev: &Device,
    dec: &Decode,
    q: &DeviceTensor<half::bf16>,
    c: &Cache,
    lens: &DeviceTensor<i32>,
    o: &mut DeviceTensor<half::bf16>,
    ctx: usize,
) -> Result<f64, String> {
    let stream = dev.default_stream();
    let scale = 1.0 / (D as f32).sqrt();
    let mut run = |dec: &Decode| {
        dec.run(&stream, [q, &c.k, &c.v], &c.table, lens, o, scale, ctx)
            .map_err(|e| RuntimeError::InvalidLaunch {
                reason: e.to_string(),
            })
    };
    // One launch waited for first, so a hang fails its row instead of blocking the rest.
    let first = Decode::new(dev, *dec.config()).map(|d| d.with_limit(LIMIT));
    first
        .map_err(|e| e.to_string())
        .and_then(|d| run(&d).map_err(|e| format!("the first launch: {e}")))?;
    median_ms_cold::<RuntimeError>(&stream, 3, 20, || run(dec)).map_err(|e| e.to_string())
}

fn gpu(_c: &mut Criterion) {
    let Some(dev) = ptxkit::selftest::device_or_skip("GPU benchmarks skipped") else {
        return;
    };
    let stream = dev.default_stream();
    println!("\ndevice: {}", dev.attributes().name);
    println!(
        "| batch x context | q_len | cache | splits | ptxkit ms | K+V GB/s | tokens/s |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut rng = Rng::fresh();
    for (batch, ctx, q_len) in PROBLEMS {
        let row = |cache: &str, splits: usize, r: Result<f64, String>| match r {
            Ok(ms) => {
                let bytes = (batch * ctx * KV_HEADS * D * 2 * 2) as f64;
                println!(
                    "| {batch}x{ctx} | {q_len} | {cache} | {splits} | {ms:.4} | {:.0} | {:.0} |",
                    bytes / ms / 1e6,
                    (batch * q_len) as f64 / ms * 1e3
                )
            }
            Err(e) => println!("| {batch}x{ctx} | {q_len} | {cache} | | failed: {e} | | |"),
        };
        let q_shape = vec![batch, q_len, HEADS, D];
        let n_q: usize = q_shape.iter().product();
        let qh: Vec<half::bf16> = rng.vec_f32(n_q).into_iter().map(half::bf16::from_f32).collect();
        let tensors = DeviceTensor::from_host(&stream, &qh, q_shape.clone())
            .and_then(|q| Ok((q, DeviceTensor::from_host(&stream, &qh, q_shape)?)))
            .and_then(|x| Ok((x, DeviceTensor::from_host(&stream, &vec![ctx as i32; batch], vec![batch])?)));
        let ((q, mut o), lens) = match tensors {
            Ok(t) => t,
            Err(e) => {
                row("(inputs)", 0, Err(e.to_string()));
                continue;
            }
        };
        // The three caches loaded side by side, timed in turn REPEATS times (a drift of the
        // clocks reaches them alike).
        let mut layouts = Vec::new();
        for (name, page) in [("contiguous", ctx), ("paged 16", 16), ("paged 64", 64)] {
            let cfg = DecodeConfig::new(D as u32, (HEADS / KV_HEADS) as u32, page as u32);
            let loaded = Decode::new(&dev, cfg).map_err(|e| e.to_string());
            let c = cache(&dev, &mut rng, batch, ctx, page).map_err(|e| e.to_string());
            match (loaded, c) {
                (Ok(d), Ok(c)) => layouts.push((name, d, c)),
                (Err(e), _) | (_, Err(e)) => row(name, 0, Err(e)),
            }
        }
        for _ in 0..REPEATS {
            for (name, dec, c) in &layouts {
                let splits = dec.splits(batch, KV_HEADS, q_len, ctx);
                let r = time(&dev, dec, &q, c, &lens, &mut o, ctx);
                let hung = r.as_ref().is_err_and(|e| e.contains("did not finish"));
                row(name, splits, r);
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
