//! Tensor-parallel GEMMs on every GPU of the host (at least two), one process, one thread: the
//! overlapped all-gather + GEMM and GEMM + reduce-scatter of `ptxkit::library::tp`, checked for
//! equality with the sequential path (NCCL, then the same GEMM) and timed against it, against
//! NCCL then cuBLAS, and against the GEMM alone, on Llama-70B-like layers; then a stress loop
//! whose every iteration poisons the gathered rows (or the slots) first and counts mismatches
//! against the sequential result on the device.
//!
//! `cargo run --release --example tp_gemm -- [--quick] [--stress N] [--rs-register-epilogue]`.
//! Needs libcuda, libnccl and libcublas; run it with `NCCL_NVLS_ENABLE=0` (no NVLink
//! multicast). Prints one line per shape and a summary; exits non-zero on a mismatch.

use std::sync::Arc;
use std::time::Instant;

use cudarc::cublas::{CudaBlas, Gemm as _};
use cudarc::driver::{CudaSlice, CudaStream};
use half::bf16;
use ptxkit::library::gemm::check::{blas_config, random_values, rel_error};
use ptxkit::library::gemm::{Gemm, GemmConfig};
use ptxkit::library::tp::{
    AllGatherGemm, AllGatherPlan, GemmReduceScatter, ReduceScatterPlan, kernels,
};
use ptxkit::runtime::{
    Arg, DeviceGroup, JitOptions, LoadedKernel, Symmetric, TensorMut, TensorRef,
};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Per-rank A, B and C of a GEMM on every rank.
type Operands<'a> = (
    &'a [CudaSlice<bf16>],
    &'a [CudaSlice<bf16>],
    &'a mut [CudaSlice<bf16>],
);

/// Timed iterations per measurement, and measurements (the median is reported).
const ITERS: usize = 10;
const REPEATS: usize = 3;

struct Ctx {
    group: DeviceGroup,
    blas: Vec<CudaBlas>,
    compare: Vec<LoadedKernel>,
    sms: u32,
}

fn stream(ctx: &Ctx, r: usize) -> Res<&Arc<CudaStream>> {
    Ok(ctx.group.stream(r)?)
}

fn random_bf16(n: usize, seed: u64) -> Vec<bf16> {
    random_values(n, seed)
        .into_iter()
        .map(bf16::from_f32)
        .collect()
}

/// Milliseconds per call of `f` (which enqueues on the group's streams): the median of
/// [`REPEATS`] runs of [`ITERS`] calls, after two warm-up calls, wall clock between group
/// synchronizations.
fn time(ctx: &Ctx, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    f()?;
    f()?;
    ctx.group.synchronize()?;
    let mut runs = Vec::new();
    for _ in 0..REPEATS {
        let t0 = Instant::now();
        for _ in 0..ITERS {
            f()?;
        }
        ctx.group.synchronize()?;
        runs.push(t0.elapsed().as_secs_f64() * 1e3 / ITERS as f64);
    }
    runs.sort_by(f64::total_cmp);
    Ok(runs[REPEATS / 2])
}

/// Bits of every element of `x` and `y` (rank by rank) equal: the count of differing elements.
fn differing(ctx: &Ctx, x: &[CudaSlice<bf16>], y: &[CudaSlice<bf16>]) -> Res<usize> {
    let mut n = 0;
    for r in 0..ctx.group.world() {
        let s = stream(ctx, r)?;
        let (a, b) = (s.clone_dtoh(&x[r])?, s.clone_dtoh(&y[r])?);
        n += a
            .iter()
            .zip(&b)
            .filter(|(p, q)| p.to_bits() != q.to_bits())
            .count();
    }
    Ok(n)
}

/// The largest relative error of `x` against `reference` over the ranks, and `x`'s root mean
/// square (an all-zero output would compare equal to another).
fn worst_error(ctx: &Ctx, x: &[CudaSlice<bf16>], reference: &[CudaSlice<bf16>]) -> Res<(f64, f64)> {
    let (mut worst, mut squares, mut count) = (0.0f64, 0.0f64, 0usize);
    for r in 0..ctx.group.world() {
        let s = stream(ctx, r)?;
        let (a, b) = (s.clone_dtoh(&x[r])?, s.clone_dtoh(&reference[r])?);
        let a: Vec<f32> = a.iter().map(|v| v.to_f32()).collect();
        let b: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
        worst = worst.max(rel_error(&a, &b));
        squares += a.iter().map(|v| f64::from(*v) * f64::from(*v)).sum::<f64>();
        count += a.len();
    }
    Ok((worst, (squares / count.max(1) as f64).sqrt()))
}

/// `count[r] += mismatches of got[r] against want[r]`, on each rank's compute stream.
fn count_mismatches(
    ctx: &Ctx,
    got: &[CudaSlice<bf16>],
    want: &[CudaSlice<bf16>],
    count: &mut [CudaSlice<u32>],
) -> Res<()> {
    for (r, count) in count.iter_mut().enumerate() {
        let mut args: Vec<Arg<'_>> = vec![
            TensorRef::slice(&got[r], [got[r].len()])?.into(),
            TensorRef::slice(&want[r], [want[r].len()])?.into(),
            TensorMut::slice(count, [1])?.into(),
        ];
        ctx.compare[r].launch(stream(ctx, r)?, &mut args)?;
    }
    Ok(())
}

fn bf16_buffers(ctx: &Ctx, len: usize, seed: Option<u64>) -> Res<Vec<CudaSlice<bf16>>> {
    (0..ctx.group.world())
        .map(|r| {
            let s = stream(ctx, r)?;
            Ok(match seed {
                Some(seed) => s.clone_htod(&random_bf16(len, seed + r as u64))?,
                None => s.alloc_zeros::<bf16>(len)?,
            })
        })
        .collect()
}

/// cuBLAS `C = A·Bᵀ` (row-major A `[m, k]`, B `[n, k]`) on rank `r`'s stream.
fn cublas(
    ctx: &Ctx,
    r: usize,
    (a, b, c): (&CudaSlice<bf16>, &CudaSlice<bf16>, &mut CudaSlice<bf16>),
    (m, n, k): (usize, usize, usize),
) -> Res<()> {
    // SAFETY: A, B and C hold m·k, n·k and m·n elements (allocated so by the callers).
    unsafe {
        ctx.blas[r].gemm(blas_config(m, n, k, bf16::ONE, bf16::ZERO), b, a, c)?;
    }
    Ok(())
}

/// Our GEMM `C_r = A_r·B_rᵀ` on every rank's compute stream (A `[m, k]`, B `[n, k]`).
fn our_gemms(
    ctx: &Ctx,
    gemms: &[Gemm],
    (a, b, c): Operands<'_>,
    (m, n, k): (usize, usize, usize),
) -> Res<()> {
    for (r, c) in c.iter_mut().enumerate() {
        gemms[r].run_borrowed(
            stream(ctx, r)?,
            &TensorRef::slice(&a[r], [m, k])?,
            &TensorRef::slice(&b[r], [n, k])?,
            TensorMut::slice(c, [m, n])?,
            None,
        )?;
    }
    Ok(())
}

/// cuBLAS's `C_r = A_r·B_rᵀ` on every rank.
fn cublas_gemms(ctx: &Ctx, (a, b, c): Operands<'_>, shape: (usize, usize, usize)) -> Res<()> {
    for (r, c) in c.iter_mut().enumerate() {
        cublas(ctx, r, (&a[r], &b[r], c), shape)?;
    }
    Ok(())
}

/// Our GEMM of `cfg` loaded on every rank.
fn load_gemms(ctx: &Ctx, cfg: GemmConfig) -> Res<Vec<Gemm>> {
    (0..ctx.group.world())
        .map(|r| Ok(Gemm::new(ctx.group.device(r)?, cfg)?))
        .collect()
}

/// A symmetric A `[world · rows, k]` holding on each rank its own shard (a copy of `shards[r]`)
/// and zeros elsewhere.
fn symmetric_a(
    ctx: &Ctx,
    shards: &[CudaSlice<bf16>],
    rows: usize,
    k: usize,
) -> Res<Symmetric<bf16>> {
    let world = ctx.group.world();
    let mut a: Symmetric<bf16> = ctx.group.alloc_symmetric(world * rows * k)?;
    for (r, shard) in shards.iter().enumerate() {
        let s = stream(ctx, r)?;
        let host = s.clone_dtoh(shard)?;
        let mut own = a.slice_mut(r)?.slice_mut(r * rows * k..(r + 1) * rows * k);
        s.memcpy_htod(&host, &mut own)?;
    }
    Ok(a)
}

/// Zeroes each rank's `c` and its peers' rows of `a` (what the all-gather brings), so a GEMM
/// that read a chunk before it arrived shows in its output.
fn poison(
    ctx: &Ctx,
    a: &mut Symmetric<bf16>,
    (rows, k): (usize, usize),
    c: &mut [CudaSlice<bf16>],
) -> Res<()> {
    let world = ctx.group.world();
    for (r, c) in c.iter_mut().enumerate() {
        let s = stream(ctx, r)?;
        s.memset_zeros(c)?;
        for p in (0..world).filter(|&p| p != r) {
            let mut theirs = a.slice_mut(r)?.slice_mut(p * rows * k..(p + 1) * rows * k);
            s.memset_zeros(&mut theirs)?;
        }
    }
    Ok(())
}

/// One measured layer: the overlapped time and the baselines', in ms.
struct Row {
    what: String,
    ours: f64,
    seq_ours: f64,
    seq_cublas: f64,
    gemm_alone: f64,
    differing: usize,
    vs_cublas: f64,
    rms: f64,
}

impl Row {
    fn print(&self) {
        println!(
            "{:<44} ours {:7.3} ms | NCCL+our GEMM {:7.3} ({:.3}x) | NCCL+cuBLAS {:7.3} ({:.3}x) | \
             GEMM alone {:7.3} (ours/alone {:.3}) | differing {} | rel err vs cuBLAS {:.2e} | rms {:.3}",
            self.what,
            self.ours,
            self.seq_ours,
            self.seq_ours / self.ours,
            self.seq_cublas,
            self.seq_cublas / self.ours,
            self.gemm_alone,
            self.ours / self.gemm_alone,
            self.differing,
            self.vs_cublas,
            self.rms,
        );
    }
}

/// The all-gather + GEMM layer `C_r = A·B_rᵀ`, A `[m, k]` gathered from `world` shards.
fn all_gather_layer(ctx: &Ctx, name: &str, (m, n, k): (usize, usize, usize)) -> Res<Row> {
    let g = &ctx.group;
    let world = g.world();
    let rows = m / world;
    let chunk_rows = [1024, 512, 256, 128]
        .into_iter()
        .find(|c| rows % c == 0)
        .unwrap_or(128);
    let plan = AllGatherPlan::new(world, rows, chunk_rows)?;
    let cfg = GemmConfig::for_problem(m, n, ctx.sms);
    let mut ag = AllGatherGemm::new(g, cfg, plan)?;
    let gemms = load_gemms(ctx, cfg)?;

    // The shards, once as NCCL's inputs and once in place in the symmetric A.
    let shards = bf16_buffers(ctx, rows * k, Some(11))?;
    let mut a = symmetric_a(ctx, &shards, rows, k)?;
    let b = bf16_buffers(ctx, n * k, Some(23))?;
    let mut gathered = bf16_buffers(ctx, m * k, None)?;
    let mut c_ours = bf16_buffers(ctx, m * n, None)?;
    let mut c_seq = bf16_buffers(ctx, m * n, None)?;
    let mut c_blas = bf16_buffers(ctx, m * n, None)?;

    // Equality first, on poisoned outputs and with the peers' rows of A zeroed.
    poison(ctx, &mut a, (rows, k), &mut c_ours)?;
    ag.run(g, &a, k, &b, &mut c_ours)?;
    let seq_ours = |gathered: &mut [CudaSlice<bf16>], c: &mut [CudaSlice<bf16>]| -> Res<()> {
        g.all_gather(&shards, gathered)?;
        our_gemms(ctx, &gemms, (gathered, &b, c), (m, n, k))
    };
    let seq_cublas = |gathered: &mut [CudaSlice<bf16>], c: &mut [CudaSlice<bf16>]| -> Res<()> {
        g.all_gather(&shards, gathered)?;
        cublas_gemms(ctx, (gathered, &b, c), (m, n, k))
    };
    seq_ours(&mut gathered, &mut c_seq)?;
    seq_cublas(&mut gathered, &mut c_blas)?;
    g.synchronize()?;
    let differing = differing(ctx, &c_ours, &c_seq)?;
    let (vs_cublas, rms) = worst_error(ctx, &c_ours, &c_blas)?;

    let ours = time(ctx, || Ok(ag.run(g, &a, k, &b, &mut c_ours)?))?;
    let seq = time(ctx, || seq_ours(&mut gathered, &mut c_seq))?;
    let seq_cublas = time(ctx, || seq_cublas(&mut gathered, &mut c_blas))?;
    let gemm_alone = time(ctx, || {
        our_gemms(ctx, &gemms, (&gathered, &b, &mut c_seq), (m, n, k))
    })?;
    Ok(Row {
        what: format!("AG+GEMM {name} {m}x{n}x{k} ({})", cfg.name()),
        ours,
        seq_ours: seq,
        seq_cublas,
        gemm_alone,
        differing,
        vs_cublas,
        rms,
    })
}

/// The GEMM + reduce-scatter layer: rank `r` holds `A_r` `[m, k / world]` and `B_r`
/// `[n, k / world]`; rank `s` gets rows `s·m/world ..` of `Σ_r A_r·B_rᵀ`.
fn reduce_scatter_layer(
    ctx: &Ctx,
    name: &str,
    (m, n, k): (usize, usize, usize),
    register_epilogue: bool,
) -> Res<Row> {
    let g = &ctx.group;
    let world = g.world();
    let (rows, kr) = (m / world, k / world);
    let plan = ReduceScatterPlan::new(world, rows)?;
    let cfg = GemmConfig::for_problem(rows, n, ctx.sms);
    let cfg = GemmConfig {
        tma_store: cfg.tma_store && !register_epilogue,
        ..cfg
    };
    let rs = GemmReduceScatter::new(g, cfg, plan)?;
    // The sequential path and the GEMM alone run the same kernel on all m rows.
    let gemms = load_gemms(ctx, cfg)?;
    let a = bf16_buffers(ctx, m * kr, Some(31))?;
    let b = bf16_buffers(ctx, n * kr, Some(47))?;
    let slots: Symmetric<bf16> = g.alloc_symmetric(world * rows * n)?;
    let mut out_ours = bf16_buffers(ctx, rows * n, None)?;
    let mut out_seq = bf16_buffers(ctx, rows * n, None)?;
    let mut out_blas = bf16_buffers(ctx, rows * n, None)?;
    let mut partial = bf16_buffers(ctx, m * n, None)?;

    rs.run(g, (&a, kr), &b, &slots, &mut out_ours)?;
    let seq_ours = |partial: &mut [CudaSlice<bf16>], out: &mut [CudaSlice<bf16>]| -> Res<()> {
        our_gemms(ctx, &gemms, (&a, &b, partial), (m, n, kr))?;
        Ok(g.reduce_scatter(partial, out)?)
    };
    let seq_cublas = |partial: &mut [CudaSlice<bf16>], out: &mut [CudaSlice<bf16>]| -> Res<()> {
        cublas_gemms(ctx, (&a, &b, partial), (m, n, kr))?;
        Ok(g.reduce_scatter(partial, out)?)
    };
    seq_ours(&mut partial, &mut out_seq)?;
    seq_cublas(&mut partial, &mut out_blas)?;
    g.synchronize()?;
    let differing = differing(ctx, &out_ours, &out_seq)?;
    let (vs_cublas, rms) = worst_error(ctx, &out_ours, &out_blas)?;

    let ours = time(ctx, || {
        Ok(rs.run(g, (&a, kr), &b, &slots, &mut out_ours)?)
    })?;
    let seq = time(ctx, || seq_ours(&mut partial, &mut out_seq))?;
    let seq_cublas = time(ctx, || seq_cublas(&mut partial, &mut out_blas))?;
    let gemm_alone = time(ctx, || {
        our_gemms(ctx, &gemms, (&a, &b, &mut partial), (m, n, kr))
    })?;
    Ok(Row {
        what: format!("GEMM+RS {name} {m}x{n}x{k} ({})", cfg.name()),
        ours,
        seq_ours: seq,
        seq_cublas,
        gemm_alone,
        differing,
        vs_cublas,
        rms,
    })
}

/// The ranks' mismatch counters, added.
fn total(ctx: &Ctx, counts: &[CudaSlice<u32>]) -> Res<u64> {
    let mut sum = 0u64;
    for (r, count) in counts.iter().enumerate() {
        sum += u64::from(stream(ctx, r)?.clone_dtoh(count)?[0]);
    }
    Ok(sum)
}

/// `iters` all-gather + GEMMs, each after zeroing the peers' rows of A, each output compared on
/// the device with the sequential result; then as many GEMM + reduce-scatters, each after
/// zeroing the slots. Returns the mismatches counted (0 when no chunk was read before its flag
/// and no slot before its partial).
fn stress(ctx: &Ctx, iters: usize, register_epilogue: bool) -> Res<(u64, u64)> {
    let g = &ctx.group;
    let world = g.world();
    let (m, n, k) = (4096, 5120, 8192);
    let rows = m / world;
    let plan = AllGatherPlan::new(world, rows, 256)?;
    let cfg = GemmConfig::for_problem(m, n, ctx.sms);
    let mut ag = AllGatherGemm::new(g, cfg, plan)?;
    let shards = bf16_buffers(ctx, rows * k, Some(5))?;
    let mut a = symmetric_a(ctx, &shards, rows, k)?;
    let b = bf16_buffers(ctx, n * k, Some(7))?;
    let mut want = bf16_buffers(ctx, m * n, None)?;
    let mut gathered = bf16_buffers(ctx, m * k, None)?;
    g.all_gather(&shards, &mut gathered)?;
    our_gemms(
        ctx,
        &load_gemms(ctx, cfg)?,
        (&gathered, &b, &mut want),
        (m, n, k),
    )?;
    let mut c = bf16_buffers(ctx, m * n, None)?;
    let mut counts = (0..world)
        .map(|r| Ok(stream(ctx, r)?.alloc_zeros::<u32>(1)?))
        .collect::<Res<Vec<_>>>()?;
    for _ in 0..iters {
        poison(ctx, &mut a, (rows, k), &mut c)?;
        ag.run(g, &a, k, &b, &mut c)?;
        count_mismatches(ctx, &c, &want, &mut counts)?;
    }
    g.synchronize()?;
    let ag_bad = total(ctx, &counts)?;

    // GEMM + reduce-scatter: m rows, n = 8192, k = 2 · 4096 split over the ranks.
    let (m, n, k) = (4096, 8192, 8192);
    let (rows, kr) = (m / world, k / world);
    let cfg = GemmConfig::for_problem(rows, n, ctx.sms);
    let cfg = GemmConfig {
        tma_store: cfg.tma_store && !register_epilogue,
        ..cfg
    };
    let rs = GemmReduceScatter::new(g, cfg, ReduceScatterPlan::new(world, rows)?)?;
    let a = bf16_buffers(ctx, m * kr, Some(13))?;
    let b = bf16_buffers(ctx, n * kr, Some(17))?;
    let mut slots: Symmetric<bf16> = g.alloc_symmetric(world * rows * n)?;
    // The reference: the sequential path (the same GEMM on all rows, then NCCL's
    // reduce-scatter).
    let mut want = bf16_buffers(ctx, rows * n, None)?;
    let mut partial = bf16_buffers(ctx, m * n, None)?;
    our_gemms(
        ctx,
        &load_gemms(ctx, cfg)?,
        (&a, &b, &mut partial),
        (m, n, kr),
    )?;
    g.reduce_scatter(&partial, &mut want)?;
    let mut out = bf16_buffers(ctx, rows * n, None)?;
    let mut counts = (0..world)
        .map(|r| Ok(stream(ctx, r)?.alloc_zeros::<u32>(1)?))
        .collect::<Res<Vec<_>>>()?;
    for _ in 0..iters {
        for (r, out) in out.iter_mut().enumerate() {
            let s = stream(ctx, r)?;
            s.memset_zeros(out)?;
            s.memset_zeros(slots.slice_mut(r)?)?;
        }
        rs.run(g, (&a, kr), &b, &slots, &mut out)?;
        count_mismatches(ctx, &out, &want, &mut counts)?;
    }
    g.synchronize()?;
    let rs_bad = total(ctx, &counts)?;
    Ok((ag_bad, rs_bad))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let register_epilogue = args.iter().any(|a| a == "--rs-register-epilogue");
    let stress_iters = args
        .iter()
        .position(|a| a == "--stress")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000usize);
    let mut group = match DeviceGroup::all() {
        Ok(g) if g.world() >= 2 => g,
        Ok(g) => {
            println!("tp_gemm: {} GPU here; it needs two or more", g.world());
            return Ok(());
        }
        Err(e) => {
            println!("tp_gemm: no device group here ({e})");
            return Ok(());
        }
    };
    if std::env::var("NCCL_NVLS_ENABLE").as_deref() != Ok("0") {
        return Err("set NCCL_NVLS_ENABLE=0: NVLink multicast must stay off".into());
    }
    group.init_nccl()?;
    let world = group.world();
    let sms = group.device(0)?.attributes().sm_count;
    for r in 0..world {
        println!("rank {r}: {}", group.device(r)?.attributes().name);
    }
    let compare = kernels::count_mismatches()?;
    let mut blas = Vec::new();
    let mut compares = Vec::new();
    for r in 0..world {
        blas.push(CudaBlas::new(group.stream(r)?.clone())?);
        compares.push(compare.load(group.device(r)?, &JitOptions::default())?);
    }
    let ctx = Ctx {
        group,
        blas,
        compare: compares,
        sms,
    };

    // Llama-70B-like layers at tensor parallelism `world`: hidden 8192, FFN 28672, 64 query
    // heads and 8 KV heads of 128. The column-parallel layers gather the tokens' activations
    // (all-gather + GEMM), the row-parallel ones reduce-scatter their outputs.
    let tokens: &[usize] = if quick { &[4096] } else { &[4096, 8192, 16384] };
    let mut rows = Vec::new();
    let mut failed = false;
    for (i, &t) in tokens.iter().enumerate() {
        let mut gather = vec![
            ("qkv", (t, (8192 + 2 * 1024) / world, 8192)),
            ("ffn-up", (t, 28672 / world, 8192)),
        ];
        if t == 16384 {
            // The measured case: a 16384 x 4096 x 8192 GEMM behind a 128 MiB all-gather.
            gather.push(("issue", (t, 4096, 8192)));
        }
        for (name, shape) in gather {
            match all_gather_layer(&ctx, name, shape) {
                Ok(row) => {
                    row.print();
                    failed |= row.differing != 0;
                    rows.push(row);
                }
                Err(e) => {
                    println!("AG+GEMM {name} {shape:?} FAILED: {e}");
                    failed = true;
                }
            }
        }
        for (name, shape) in [
            ("attn-out", (t, 8192, 8192)),
            ("ffn-down", (t, 8192, 28672)),
        ] {
            match reduce_scatter_layer(&ctx, name, shape, register_epilogue) {
                Ok(row) => {
                    row.print();
                    failed |= row.differing != 0;
                    rows.push(row);
                }
                Err(e) => {
                    println!("GEMM+RS {name} {shape:?} FAILED: {e}");
                    failed = true;
                }
            }
        }
        if i == 0 {
            let t0 = Instant::now();
            let (ag_bad, rs_bad) = match stress(&ctx, stress_iters, register_epilogue) {
                Ok(bad) => bad,
                Err(e) => {
                    println!("stress FAILED: {e}");
                    (u64::MAX, u64::MAX)
                }
            };
            println!(
                "stress: {stress_iters} all-gather + GEMMs, {ag_bad} mismatching elements; \
                 {stress_iters} GEMM + reduce-scatters, {rs_bad} mismatching elements ({:.1} s)",
                t0.elapsed().as_secs_f64()
            );
            failed |= ag_bad != 0 || rs_bad != 0;
        }
    }
    println!(
        "\nsummary (ratios > 1: ours faster; ours/alone < 1.10 is within 10% of the GEMM alone)"
    );
    for r in &rows {
        println!(
            "{:<60} vs NCCL+our GEMM {:.3}x  vs NCCL+cuBLAS {:.3}x  ours/alone {:.3}  equal {}",
            r.what,
            r.seq_ours / r.ours,
            r.seq_cublas / r.ours,
            r.ours / r.gemm_alone,
            r.differing == 0
        );
    }
    if failed {
        return Err("results differ from the sequential path".into());
    }
    Ok(())
}
