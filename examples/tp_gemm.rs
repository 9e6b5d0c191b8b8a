//! Tensor-parallel GEMMs on every GPU of the host (at least two), one process, one thread: the
//! overlapped all-gather + GEMM and GEMM + reduce-scatter of `ptxkit::library::tp`, checked for
//! equality with the sequential path (NCCL, then the same GEMM) and timed against it, against
//! NCCL then cuBLAS, and against the GEMM alone, on Llama-70B-like layers; then a stress loop
//! whose every iteration poisons the gathered rows (or the slots) first and counts mismatches
//! against the sequential result on the device.
//!
//! `cargo run --release --example tp_gemm -- [--quick | --tokens T,T..] [--stress N]
//! [--rs-register-epilogue] [--rs-fused] [--rs-pull] [--rs-staged-at N[,N]] [--rs-owners V[,V]]
//! [--rs-only] [--rs-layers L[,L]]`
//! (`--rs-fused`: the
//! reduce-scatter with the owners' sum fused into their GEMMs too, `--rs-pull`: fused with the
//! partials read from their writers' memory, each in the layers beside the unfused one and
//! alone in the stress (pulled where both are given); `--rs-staged-at`: the pulled path's owners
//! load their peer's partial under k-tile N of each tile (`StagedLoadAt::KTile`) instead of the
//! middle one, in the stress the first N, in the layers each N beside the middle with its
//! owners' step alone; `--rs-owners`: more such variants of the pulled path's owners, each
//! `+`-joined words changing the block under the middle k-tile polled every tile (the pulled
//! path's default before session 19; `middle` alone): `once` (the flag polled once a thread,
//! `GatePolls::Once`), `ktN`, `spFxE` (slab s under k-tile F + s·E, `StagedLoadAt::Spread`; the
//! default now is `once+sp2x8`, `tp::PULLED_OWNERS`); four at most with those of
//! `--rs-staged-at`, the stress taking the first; `--rs-only`: no all-gather layers;
//! `--rs-layers`: only these reduce-scatter layers, `attn-out`, `ffn-down`), or
//! `-- --small [--stress N]`: only the stress, on small shapes, its all-gather's reference
//! gathered through the host (no NCCL, no cuBLAS, no timing: the run compute-sanitizer checks).
//! Every GPU the process sees is a rank (`CUDA_VISIBLE_DEVICES` picks them). Needs libcuda, and
//! but for `--small` libnccl and libcublas; run it with `NCCL_NVLS_ENABLE=0` (no NVLink
//! multicast). Prints one line per shape and a summary; exits non-zero on a mismatch.
//!
//! The reduce-scatter's reference is the sequential path's partials (the same GEMM on all rows)
//! summed on the host in each owner's order (`plan::sum_order`), which the overlapped paths
//! must match to the bit; NCCL's reduce-scatter equals it with two ranks, and with more
//! differs in the last bits (its ring rounds each hop to bf16), so its differing elements and
//! error are printed beside. Each reduce-scatter layer also times where its time over the GEMM
//! alone goes: the GEMM in a launch a shard, the last path run after each rank waits for its
//! peers' work so far, with its owners' streams waiting for their peers' partials (instead of
//! their GEMMs waiting on the peers' flags), and its owners' step alone on its last partials. The stress runs the reduce-scatter back to back too (nothing
//! between calls, B alternating between two).
//!
//! The paths a layer compares are timed round-robin (each round times every path once, the
//! first path of a round rotating), so a drift of the GPUs' clocks over the run (power or heat)
//! falls on every path alike.

use std::sync::Arc;
use std::time::Instant;

use cudarc::cublas::{CudaBlas, Gemm as _};
use cudarc::driver::{CudaSlice, CudaStream};
use half::bf16;
use ptxkit::library::gemm::check::{blas_config, random_values, rel_error};
use ptxkit::library::gemm::{Gemm, GemmConfig, StagedLoadAt};
use ptxkit::library::tp::{
    self as tp, AllGatherGemm, AllGatherPlan, GatePolls, Gather, GemmReduceScatter, OwnersLoad,
    Partials, ReduceScatterPlan, ReduceScatterSum, kernels, plan,
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

/// Timed iterations per measurement, and rounds of measurements (the median is reported).
const ITERS: usize = 10;
const ROUNDS: usize = 5;

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

/// Milliseconds per call of each of `paths` paths, `f(p)` enqueueing one call of path `p` on
/// the group's streams: two warm-up calls of each, then [`ROUNDS`] rounds that each time
/// [`ITERS`] calls of every path (wall clock between group synchronizations), round `i`
/// starting at path `i mod paths`; the median of each path's rounds.
fn time_paths(ctx: &Ctx, paths: usize, mut f: impl FnMut(usize) -> Res<()>) -> Res<Vec<f64>> {
    for p in 0..paths {
        f(p)?;
        f(p)?;
    }
    ctx.group.synchronize()?;
    let mut runs = vec![Vec::new(); paths];
    for round in 0..ROUNDS {
        for p in (0..paths).map(|i| (i + round) % paths) {
            let t0 = Instant::now();
            for _ in 0..ITERS {
                f(p)?;
            }
            ctx.group.synchronize()?;
            runs[p].push(t0.elapsed().as_secs_f64() * 1e3 / ITERS as f64);
        }
    }
    Ok(runs
        .into_iter()
        .map(|mut r| {
            r.sort_by(f64::total_cmp);
            r[ROUNDS / 2]
        })
        .collect())
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
    let a = a
        .iter()
        .map(|a| Ok(TensorRef::slice(a, [m, k])?))
        .collect::<Res<Vec<_>>>()?;
    our_gemms_on(ctx, gemms, (&a, b, c), (n, k))
}

/// [`our_gemms`] in a launch for each rank's shard of the rows (`m / world`, as the GEMM +
/// reduce-scatter splits them), one after the other on each rank's stream.
fn gemm_by_shards(
    ctx: &Ctx,
    gemms: &[Gemm],
    (a, b, c): Operands<'_>,
    (m, n, k): (usize, usize, usize),
) -> Res<()> {
    let world = ctx.group.world();
    let rows = m / world;
    for (r, c) in c.iter_mut().enumerate() {
        for s in 0..world {
            let a_s = a[r].slice(s * rows * k..(s + 1) * rows * k);
            let mut c_s = c.slice_mut(s * rows * n..(s + 1) * rows * n);
            gemms[r].run_borrowed(
                stream(ctx, r)?,
                &TensorRef::view(&a_s, [rows, k])?,
                &TensorRef::slice(&b[r], [n, k])?,
                TensorMut::view(&mut c_s, [rows, n])?,
                None,
            )?;
        }
    }
    Ok(())
}

/// [`our_gemms`] on A given as each rank's `[m, k]` tensor.
fn our_gemms_on(
    ctx: &Ctx,
    gemms: &[Gemm],
    (a, b, c): (&[TensorRef<'_>], &[CudaSlice<bf16>], &mut [CudaSlice<bf16>]),
    (n, k): (usize, usize),
) -> Res<()> {
    for (r, c) in c.iter_mut().enumerate() {
        let m = a[r].desc().shape[0];
        gemms[r].run_borrowed(
            stream(ctx, r)?,
            &a[r],
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
    /// Other paths timed beside these (name, ms): the all-gather's gated GEMM alone, the GEMM
    /// alone on ours' A, ours in other chunk sizes; the reduce-scatter with the sum fused.
    extra: Vec<(String, f64)>,
    differing: usize,
    /// The reduce-scatter's: elements differing from NCCL's sum (its rounding differs with more
    /// than two ranks) and the largest relative error against it.
    vs_nccl: Option<(usize, f64)>,
    vs_cublas: f64,
    rms: f64,
}

impl Row {
    fn print(&self, since: Instant) {
        println!(
            "{:<44} ours {:7.3} ms | NCCL+our GEMM {:7.3} ({:.3}x) | NCCL+cuBLAS {:7.3} ({:.3}x) | \
             GEMM alone {:7.3} (ours/alone {:.3}){} | differing {}{} | rel err vs cuBLAS {:.2e} | \
             rms {:.3} | at {:.1} s",
            self.what,
            self.ours,
            self.seq_ours,
            self.seq_ours / self.ours,
            self.seq_cublas,
            self.seq_cublas / self.ours,
            self.gemm_alone,
            self.ours / self.gemm_alone,
            self.extra(),
            self.differing,
            self.nccl(),
            self.vs_cublas,
            self.rms,
            since.elapsed().as_secs_f64(),
        );
    }

    /// The comparison with NCCL's reduce-scatter, where there is one.
    fn nccl(&self) -> String {
        match self.vs_nccl {
            Some((n, err)) => format!(" (from NCCL's sum {n}, rel err {err:.2e})"),
            None => String::new(),
        }
    }

    /// The other paths, each over the GEMM alone.
    fn extra(&self) -> String {
        self.extra
            .iter()
            .map(|(what, t)| format!(" | {what} {t:7.3} ({:.3} of alone)", t / self.gemm_alone))
            .collect()
    }
}

/// The all-gather + GEMM layer `C_r = A·B_rᵀ`, A `[m, k]` gathered from `world` shards.
/// With `sweep`, the same layer in chunks of 256 rows and of a whole shard too, each checked
/// and timed beside the others.
fn all_gather_layer(
    ctx: &Ctx,
    name: &str,
    (m, n, k): (usize, usize, usize),
    sweep: bool,
) -> Res<Row> {
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
    let mut others = match sweep {
        true => vec![256, 512, rows],
        false => Vec::new(),
    };
    others.retain(|&c| c != chunk_rows);
    others.dedup();
    let mut variants = others
        .into_iter()
        .map(|c| {
            Ok(AllGatherGemm::new(
                g,
                cfg,
                AllGatherPlan::new(world, rows, c)?,
            )?)
        })
        .collect::<Res<Vec<_>>>()?;
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
    ag.run(g, &a, k, &b, &mut c_ours, Gather::Pull)?;
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
    let mut differing = differing(ctx, &c_ours, &c_seq)?;
    let (vs_cublas, rms) = worst_error(ctx, &c_ours, &c_blas)?;
    for v in &mut variants {
        poison(ctx, &mut a, (rows, k), &mut c_ours)?;
        v.run(g, &a, k, &b, &mut c_ours, Gather::Pull)?;
        g.synchronize()?;
        differing += self::differing(ctx, &c_ours, &c_seq)?;
    }

    // The GEMM alone on the all-gather + GEMM's own A too (its memory, not NCCL's output).
    let a_whole = (0..world)
        .map(|r| Ok(a.tensor_ref(r, r, 0, [m, k])?))
        .collect::<Res<Vec<_>>>()?;
    let t = time_paths(ctx, 6 + variants.len(), |path| match path {
        0 => Ok(ag.run(g, &a, k, &b, &mut c_ours, Gather::Pull)?),
        1 => seq_ours(&mut gathered, &mut c_seq),
        2 => seq_cublas(&mut gathered, &mut c_blas),
        3 => our_gemms(ctx, &gemms, (&gathered, &b, &mut c_seq), (m, n, k)),
        4 => Ok(ag.run(g, &a, k, &b, &mut c_ours, Gather::Done)?),
        5 => our_gemms_on(ctx, &gemms, (&a_whole, &b, &mut c_seq), (n, k)),
        v => Ok(variants[v - 6].run(g, &a, k, &b, &mut c_ours, Gather::Pull)?),
    })?;
    Ok(Row {
        what: format!(
            "AG+GEMM {name} {m}x{n}x{k} ({}, chunks of {chunk_rows} rows)",
            cfg.name()
        ),
        ours: t[0],
        seq_ours: t[1],
        seq_cublas: t[2],
        gemm_alone: t[3],
        extra: [
            ("gated GEMM alone".to_string(), t[4]),
            ("GEMM alone on ours' A".into(), t[5]),
        ]
        .into_iter()
        .chain(variants.iter().zip(&t[6..]).map(|(v, t)| {
            (
                format!("ours in chunks of {} rows", v.plan().chunk_rows()),
                *t,
            )
        }))
        .collect(),
        differing,
        vs_nccl: None,
        vs_cublas,
        rms,
    })
}

/// The GEMM + reduce-scatter layer: rank `r` holds `A_r` `[m, k / world]` and `B_r`
/// `[n, k / world]`; rank `s` gets rows `s·m/world ..` of `Σ_r A_r·B_rᵀ`.
/// With `rs.fused` and `rs.pull`, the reduce-scatter with the slot sum fused too
/// ([`ReduceScatterSum::Fused`], [`ReduceScatterSum::Pulled`]), each checked and timed beside
/// the others. Every path is compared to the bit with the sequential path's partials summed on
/// the host in each owner's order ([`reference_sum`]).
fn reduce_scatter_layer(
    ctx: &Ctx,
    name: &str,
    (m, n, k): (usize, usize, usize),
    rs_opts: RsOptions,
) -> Res<Row> {
    let g = &ctx.group;
    let world = g.world();
    let (rows, kr) = (m / world, k / world);
    let plan = ReduceScatterPlan::new(world, rows)?;
    let cfg = GemmConfig::for_problem(rows, n, ctx.sms);
    let cfg = GemmConfig {
        tma_store: cfg.tma_store && !rs_opts.register_epilogue,
        ..cfg
    };
    let mut rs = GemmReduceScatter::new(g, cfg, plan, ReduceScatterSum::Separate)?;
    let mut variants: Vec<(String, GemmReduceScatter)> = Vec::new();
    for (on, name, sum) in [
        (
            rs_opts.fused,
            "ours with the sum fused",
            ReduceScatterSum::Fused,
        ),
        (rs_opts.pull, "ours fused, pulled", ReduceScatterSum::Pulled),
    ] {
        if on {
            variants.push((name.to_string(), GemmReduceScatter::new(g, cfg, plan, sum)?));
        }
    }
    // The pulled path with its owners' variants (`--rs-staged-at`, `--rs-owners`: where they
    // load the staged partial, how often they poll the flag), each checked and timed beside the
    // rest, with its owners' step alone.
    let mut early: Vec<(String, GemmReduceScatter)> = Vec::new();
    for v in rs_opts
        .owners
        .into_iter()
        .flatten()
        .filter(|_| rs_opts.pull)
    {
        early.push((
            owners_label(v),
            GemmReduceScatter::new(g, cfg, plan.with_owners_load(v), ReduceScatterSum::Pulled)?,
        ));
    }
    // The sequential path and the GEMM alone run the same kernel on all m rows.
    let gemms = load_gemms(ctx, cfg)?;
    let a = bf16_buffers(ctx, m * kr, Some(31))?;
    let b = bf16_buffers(ctx, n * kr, Some(47))?;
    let slots: Symmetric<bf16> = g.alloc_symmetric(world * rows * n)?;
    let mut out_ours = bf16_buffers(ctx, rows * n, None)?;
    let mut out_seq = bf16_buffers(ctx, rows * n, None)?;
    let mut out_blas = bf16_buffers(ctx, rows * n, None)?;
    let mut partial = bf16_buffers(ctx, m * n, None)?;

    rs.run(g, (&a, kr), &b, &slots, &mut out_ours, Partials::Compute)?;
    let seq_ours = |partial: &mut [CudaSlice<bf16>], out: &mut [CudaSlice<bf16>]| -> Res<()> {
        our_gemms(ctx, &gemms, (&a, &b, partial), (m, n, kr))?;
        Ok(g.reduce_scatter(partial, out)?)
    };
    let seq_cublas = |partial: &mut [CudaSlice<bf16>], out: &mut [CudaSlice<bf16>]| -> Res<()> {
        cublas_gemms(ctx, (&a, &b, partial), (m, n, kr))?;
        Ok(g.reduce_scatter(partial, out)?)
    };
    seq_ours(&mut partial, &mut out_seq)?;
    g.synchronize()?;
    let mut want = bf16_buffers(ctx, rows * n, None)?;
    reference_sum(ctx, &partial, &mut want)?;
    seq_cublas(&mut partial, &mut out_blas)?;
    g.synchronize()?;
    let mut differing = differing(ctx, &out_ours, &want)?;
    let vs_nccl = (
        self::differing(ctx, &out_ours, &out_seq)?,
        worst_error(ctx, &out_ours, &out_seq)?.0,
    );
    let (vs_cublas, rms) = worst_error(ctx, &out_ours, &out_blas)?;
    // One call of `v` (`partials`) into the zeroed outputs, its elements that differ from the
    // reference counted (and said, as `what`, where any do).
    let check = |v: &mut GemmReduceScatter,
                 partials: Partials,
                 what: &str,
                 out: &mut [CudaSlice<bf16>]|
     -> Res<usize> {
        for (r, out) in out.iter_mut().enumerate() {
            stream(ctx, r)?.memset_zeros(out)?;
        }
        v.run(g, (&a, kr), &b, &slots, out, partials)?;
        g.synchronize()?;
        let d = self::differing(ctx, out, &want)?;
        if d > 0 {
            println!("GEMM+RS {name}: {what} differs from the reference in {d} elements");
        }
        Ok(d)
    };
    for (what, v) in &mut variants {
        differing += check(v, Partials::Compute, what, &mut out_ours)?;
    }
    for (label, v) in &mut early {
        for partials in [Partials::Compute, Partials::Last] {
            let what = format!("pulled, {label} ({partials:?})");
            differing += check(v, partials, &what, &mut out_ours)?;
        }
    }
    // The fused path's (owner's placement, with `--rs-fused`) owners' step alone: the same
    // gated GEMM on partials in its own memory; timed beside the pulled path's owners alone,
    // what reading the peer's partial across the links costs over reading it locally.
    let fused_at = variants
        .iter()
        .position(|(what, _)| what.as_str() == "ours with the sum fused");
    if let Some(f) = fused_at {
        let v = &mut variants[f].1;
        differing += check(v, Partials::Compute, "the fused path", &mut out_ours)?;
        let what = "the fused path's owners alone";
        differing += check(v, Partials::Last, what, &mut out_ours)?;
    }
    // The last path's diagnostics below give the same sum: with its owners' streams waiting for
    // the partials (no use of the flags), and its owners' step alone on its last partials.
    {
        let last = match variants.last_mut() {
            Some((_, v)) => v,
            None => &mut rs,
        };
        for (what, partials) in [
            ("owners' streams waiting", Partials::Compute),
            ("owners alone", Partials::Last),
        ] {
            last.set_stream_wait(partials == Partials::Compute);
            let d = check(
                last,
                partials,
                &format!("the last path, {what},"),
                &mut out_ours,
            );
            last.set_stream_wait(false);
            differing += d?;
        }
    }

    // Where the time over the GEMM alone goes: the same GEMM in a launch a shard (the split
    // the fused paths make, no rank waiting for another); the last variant (pulled, where run)
    // after each rank waits for its peers' work so far, as the paths that do not alternate
    // their partials do; the last with its owners' streams waiting for their peers' partials
    // (an event across GPUs, as before the flags; the same as the last where not gated); and
    // the last's owners' step alone on the partials its last call left (no waits): its distance
    // from half a launch a shard is what reading the peers' partials costs.
    let diagnostics = [
        "GEMM alone, a launch a shard",
        "last, peers awaited first",
        "last, owners' streams waiting",
        "last's owners alone",
    ];
    let paths = 4 + variants.len() + diagnostics.len();
    let diagnostic = |path: usize| path.checked_sub(paths - diagnostics.len());
    // Then each owners' variant (`--rs-staged-at`, `--rs-owners`), and its owners' step alone;
    // last the fused path's owners alone (with `--rs-fused`). The fused path's slots are the
    // pulled paths' too: its owners alone runs on the partials of whichever ran last, in the
    // fused path's places (its own calls' partials only where it ran last, as in the check
    // above; timing only).
    let fused_alone = paths + 2 * early.len();
    let t = time_paths(
        ctx,
        fused_alone + usize::from(fused_at.is_some()),
        |path| match (path, diagnostic(path)) {
            (p, _) if p == fused_alone => {
                let f = fused_at.ok_or("no fused path")?;
                Ok(variants[f]
                    .1
                    .run(g, (&a, kr), &b, &slots, &mut out_ours, Partials::Last)?)
            }
            (p, _) if p >= paths => {
                let (e, partials) = ((p - paths) / 2, (p - paths) % 2);
                let partials = [Partials::Compute, Partials::Last][partials];
                Ok(early[e]
                    .1
                    .run(g, (&a, kr), &b, &slots, &mut out_ours, partials)?)
            }
            (0, _) => Ok(rs.run(g, (&a, kr), &b, &slots, &mut out_ours, Partials::Compute)?),
            (1, _) => seq_ours(&mut partial, &mut out_seq),
            (2, _) => seq_cublas(&mut partial, &mut out_blas),
            (3, _) => our_gemms(ctx, &gemms, (&a, &b, &mut partial), (m, n, kr)),
            (_, Some(0)) => gemm_by_shards(ctx, &gemms, (&a, &b, &mut partial), (m, n, kr)),
            (_, Some(d)) => {
                if d == 1 {
                    for r in 0..world {
                        for peer in (0..world).filter(|&peer| peer != r) {
                            g.order(stream(ctx, peer)?, stream(ctx, r)?)?;
                        }
                    }
                }
                let last = match variants.last_mut() {
                    Some((_, v)) => v,
                    None => &mut rs,
                };
                if d == 3 {
                    return Ok(last.run(g, (&a, kr), &b, &slots, &mut out_ours, Partials::Last)?);
                }
                last.set_stream_wait(d == 2);
                let done = last.run(g, (&a, kr), &b, &slots, &mut out_ours, Partials::Compute);
                last.set_stream_wait(false);
                Ok(done?)
            }
            (v, None) => Ok(variants[v - 4].1.run(
                g,
                (&a, kr),
                &b,
                &slots,
                &mut out_ours,
                Partials::Compute,
            )?),
        },
    )?;
    let named = variants
        .iter()
        .map(|(what, _)| what.clone())
        .chain(diagnostics.iter().map(|d| d.to_string()))
        .chain(early.iter().flat_map(|(label, _)| {
            [
                format!("pulled, {label}"),
                format!("its owners alone, {label}"),
            ]
        }))
        .chain(fused_at.map(|_| "the fused path's owners alone".to_string()));
    // Ours is the last path run (pulled where it ran, else fused, else the unfused slot sum):
    // the one the summary compares; the unfused path is then among the others.
    let (ours, path) = match variants.last() {
        Some((what, _)) => (t[3 + variants.len()], what.as_str()),
        None => (t[0], "unfused"),
    };
    let unfused = (!variants.is_empty()).then(|| ("unfused, slot sum".to_string(), t[0]));
    Ok(Row {
        what: format!("GEMM+RS {name} {m}x{n}x{k} ({}, {path})", cfg.name()),
        ours,
        seq_ours: t[1],
        seq_cublas: t[2],
        gemm_alone: t[3],
        extra: unfused
            .into_iter()
            .chain(named.zip(&t[4..]).map(|(what, t)| (what, *t)))
            .collect(),
        differing,
        vs_nccl: Some(vs_nccl),
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

/// Where the stress's all-gather reference gathers: NCCL, or copies through the host (no NCCL:
/// the small run under compute-sanitizer). Its reduce-scatter's reference is always the host's
/// ([`reference_sum`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Collectives {
    Nccl,
    Host,
}

/// `gathered[r]` = every rank's shard, in rank order, on every rank `r`.
fn all_gather(
    ctx: &Ctx,
    how: Collectives,
    shards: &[CudaSlice<bf16>],
    gathered: &mut [CudaSlice<bf16>],
) -> Res<()> {
    if how == Collectives::Nccl {
        return Ok(ctx.group.all_gather(shards, gathered)?);
    }
    for (p, shard) in shards.iter().enumerate() {
        let host = stream(ctx, p)?.clone_dtoh(shard)?;
        for (r, dst) in gathered.iter_mut().enumerate() {
            let mut part = dst.slice_mut(p * host.len()..(p + 1) * host.len());
            stream(ctx, r)?.memcpy_htod(&host, &mut part)?;
        }
    }
    Ok(())
}

/// `out[s]` = the sum over the ranks `r` of rows `s · rows ..` of `partial[r]`, through the
/// host in f32 in owner `s`'s [`plan::sum_order`] (its own partial first), rounded once: the
/// slot sum's rule and the fused GEMM's, and NCCL's for two ranks.
fn reference_sum(ctx: &Ctx, partial: &[CudaSlice<bf16>], out: &mut [CudaSlice<bf16>]) -> Res<()> {
    let world = partial.len();
    let parts = (0..world)
        .map(|r| Ok(stream(ctx, r)?.clone_dtoh(&partial[r])?))
        .collect::<Res<Vec<_>>>()?;
    for (s, out) in out.iter_mut().enumerate() {
        let len = out.len();
        let order = plan::sum_order(world, s);
        let sum: Vec<bf16> = (s * len..(s + 1) * len)
            .map(|i| {
                let first = parts[order[0]][i].to_f32();
                let sum = order[1..]
                    .iter()
                    .fold(first, |a, &r| a + parts[r][i].to_f32());
                bf16::from_f32(sum)
            })
            .collect();
        stream(ctx, s)?.memcpy_htod(&sum, out)?;
    }
    Ok(())
}

/// The stress's shapes: the all-gather + GEMM's `(m, n, k)` and chunk rows, the GEMM +
/// reduce-scatter's `(m, n, k)` (k split over the ranks).
struct StressShapes {
    gather: (usize, usize, usize),
    chunk_rows: usize,
    scatter: (usize, usize, usize),
}

impl StressShapes {
    /// The benchmark's stress: qkv-sized at 4096 tokens, attn-out at 4096 tokens.
    fn full() -> StressShapes {
        StressShapes {
            gather: (4096, 5120, 8192),
            chunk_rows: 256,
            scatter: (4096, 8192, 8192),
        }
    }

    /// The sanitizer's: 512 rows a rank in four chunks, 256 output rows a rank.
    fn small(world: usize) -> StressShapes {
        StressShapes {
            gather: (world * 512, 512, 512),
            chunk_rows: 128,
            scatter: (world * 256, 512, world * 256),
        }
    }
}

/// `iters` all-gather + GEMMs, each after zeroing the peers' rows of A, each output compared on
/// the device with the sequential result; then as many GEMM + reduce-scatters, each after
/// zeroing the slots, and as many again back to back (nothing between them, B alternating
/// between two). Returns the mismatches counted (0 when no chunk was read before its flag
/// and no slot before its partial).
fn stress(
    ctx: &Ctx,
    (iters, shapes, how): (usize, &StressShapes, Collectives),
    rs_opts: RsOptions,
) -> Res<(u64, u64)> {
    let g = &ctx.group;
    let world = g.world();
    let (m, n, k) = shapes.gather;
    let rows = m / world;
    let plan = AllGatherPlan::new(world, rows, shapes.chunk_rows)?;
    let cfg = GemmConfig::for_problem(m, n, ctx.sms);
    let mut ag = AllGatherGemm::new(g, cfg, plan)?;
    let shards = bf16_buffers(ctx, rows * k, Some(5))?;
    let mut a = symmetric_a(ctx, &shards, rows, k)?;
    let b = bf16_buffers(ctx, n * k, Some(7))?;
    let mut want = bf16_buffers(ctx, m * n, None)?;
    let mut gathered = bf16_buffers(ctx, m * k, None)?;
    all_gather(ctx, how, &shards, &mut gathered)?;
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
        ag.run(g, &a, k, &b, &mut c, Gather::Pull)?;
        count_mismatches(ctx, &c, &want, &mut counts)?;
    }
    g.synchronize()?;
    let ag_bad = total(ctx, &counts)?;

    let (m, n, k) = shapes.scatter;
    let (rows, kr) = (m / world, k / world);
    let cfg = GemmConfig::for_problem(rows, n, ctx.sms);
    let cfg = GemmConfig {
        tma_store: cfg.tma_store && !rs_opts.register_epilogue,
        ..cfg
    };
    let plan = match (rs_opts.pull, rs_opts.owners[0]) {
        (true, Some(v)) => ReduceScatterPlan::new(world, rows)?.with_owners_load(v),
        _ => ReduceScatterPlan::new(world, rows)?,
    };
    let sum = match (rs_opts.pull, rs_opts.fused) {
        (true, _) => ReduceScatterSum::Pulled,
        (false, true) => ReduceScatterSum::Fused,
        (false, false) => ReduceScatterSum::Separate,
    };
    let mut rs = GemmReduceScatter::new(g, cfg, plan, sum)?;
    let a = bf16_buffers(ctx, m * kr, Some(13))?;
    let b = bf16_buffers(ctx, n * kr, Some(17))?;
    let mut slots: Symmetric<bf16> = g.alloc_symmetric(world * rows * n)?;
    // The reference: the sequential path (the same GEMM on all rows, then the reduce-scatter).
    // And its sum with a second B, for the calls back to back.
    let b2 = bf16_buffers(ctx, n * kr, Some(19))?;
    let sequential = load_gemms(ctx, cfg)?;
    let mut partial = bf16_buffers(ctx, m * n, None)?;
    let mut wants = Vec::new();
    for b in [&b, &b2] {
        let mut want = bf16_buffers(ctx, rows * n, None)?;
        our_gemms(ctx, &sequential, (&a, b, &mut partial), (m, n, kr))?;
        g.synchronize()?;
        reference_sum(ctx, &partial, &mut want)?;
        wants.push(want);
    }
    let want = &wants[0];
    let mut out = bf16_buffers(ctx, rows * n, None)?;
    let mut counts = (0..world)
        .map(|r| Ok(stream(ctx, r)?.alloc_zeros::<u32>(1)?))
        .collect::<Res<Vec<_>>>()?;
    for _ in 0..iters {
        // Pulled, a rank's slots are read by its peers' GEMMs: zeroed once every rank's work
        // so far (its reads) is done.
        for r in 0..world {
            for p in (0..world).filter(|&p| p != r) {
                g.order(stream(ctx, p)?, stream(ctx, r)?)?;
            }
        }
        for (r, out) in out.iter_mut().enumerate() {
            let s = stream(ctx, r)?;
            s.memset_zeros(out)?;
            s.memset_zeros(slots.slice_mut(r)?)?;
        }
        rs.run(g, (&a, kr), &b, &slots, &mut out, Partials::Compute)?;
        count_mismatches(ctx, &out, want, &mut counts)?;
    }
    // Back to back, nothing ordered or zeroed between the calls, B alternating between two:
    // a partial overwritten while its owner's GEMM of the call before still read it (the
    // pulled path does not wait for its peers' earlier work) would mix the two sums.
    for i in 0..iters {
        let b = [&b, &b2][i % 2];
        rs.run(g, (&a, kr), b, &slots, &mut out, Partials::Compute)?;
        count_mismatches(ctx, &out, &wants[i % 2], &mut counts)?;
    }
    g.synchronize()?;
    let rs_bad = total(ctx, &counts)?;
    Ok((ag_bad, rs_bad))
}

/// Runs the stress and prints its line; whether it found no mismatch.
fn report_stress(ctx: &Ctx, run: (usize, &StressShapes, Collectives), rs_opts: RsOptions) -> bool {
    let (iters, shapes, how) = run;
    let t0 = Instant::now();
    let (ag_bad, rs_bad) = match stress(ctx, run, rs_opts) {
        Ok(bad) => bad,
        Err(e) => {
            println!("stress FAILED: {e}");
            (u64::MAX, u64::MAX)
        }
    };
    println!(
        "stress ({how:?} references): {iters} all-gather + GEMMs {:?} in chunks of {} rows, \
         {ag_bad} mismatching elements; {iters} GEMM + reduce-scatters {:?} ({rs_opts:?}) and \
         {iters} back to back, {rs_bad} mismatching elements ({:.1} s)",
        shapes.gather,
        shapes.chunk_rows,
        shapes.scatter,
        t0.elapsed().as_secs_f64()
    );
    ag_bad == 0 && rs_bad == 0
}

/// How the GEMM + reduce-scatter runs: its GEMMs' register epilogue instead of the TMA store;
/// the owners' sum fused into their GEMMs, and fused with the partials pulled from their
/// writers (each beside the unfused path in the layers; in the stress the one run, pulled
/// before fused).
/// `owners`: variants of the pulled path's owners' GEMMs, timed beside the default
/// (`--rs-staged-at`, `--rs-owners`; the stress takes the first).
#[derive(Debug, Clone, Copy)]
struct RsOptions {
    register_epilogue: bool,
    fused: bool,
    pull: bool,
    owners: [Option<OwnersLoad>; 4],
}

/// A variant of the pulled path's owners' loads from `+`-joined words, from the block under
/// the middle k-tile polled every tile (`middle` alone): `once` (poll the flag once,
/// [`GatePolls::Once`]), `ktN` (the load under k-tile N), `spFxE` (slab s under k-tile F + s·E,
/// [`StagedLoadAt::Spread`]); e.g. `once+sp2x8` (the pulled path's default).
fn parse_owners(v: &str) -> Result<OwnersLoad, String> {
    let bad = || format!("--rs-owners {v}: once, ktN, spFxE or middle, joined by +");
    let mut out = tp::LOCAL_OWNERS;
    for word in v.split('+') {
        if word == "once" {
            out.polls = GatePolls::Once;
        } else if word == "middle" {
            out.at = StagedLoadAt::Middle;
        } else if let Some(n) = word.strip_prefix("kt") {
            out.at = StagedLoadAt::KTile(n.parse().map_err(|_| bad())?);
        } else if let Some((f, e)) = word.strip_prefix("sp").and_then(|w| w.split_once('x')) {
            let (first, every) = (f.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
            out.at = StagedLoadAt::Spread { first, every };
        } else {
            return Err(bad());
        }
    }
    Ok(out)
}

/// How the timings name an owners' variant.
fn owners_label(owners: OwnersLoad) -> String {
    let at = match owners.at {
        StagedLoadAt::Middle => "staged at the middle k-tile".to_string(),
        StagedLoadAt::KTile(n) => format!("staged at k-tile {n}"),
        StagedLoadAt::Spread { first, every } => {
            format!("staged slab by slab from k-tile {first} every {every}")
        }
    };
    match owners.polls {
        GatePolls::EveryTile => at,
        GatePolls::Once => format!("{at}, flag polled once"),
    }
}

/// The command line.
struct Options {
    tokens: Vec<usize>,
    small: bool,
    stress: usize,
    rs: RsOptions,
    rs_only: bool,
    /// The reduce-scatter layers to run (`--rs-layers`; all where empty).
    rs_layers: Vec<String>,
}

impl Options {
    fn parse() -> Res<Options> {
        let args: Vec<String> = std::env::args().collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        let value = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .map(|i| args.get(i + 1).ok_or(format!("{flag} needs a value")))
                .transpose()
        };
        let small = has("--small");
        let stress = match value("--stress")? {
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| format!("--stress {v}: not a count"))?,
            None if small => 3,
            None => 1000,
        };
        let tokens = match value("--tokens")? {
            Some(v) => v
                .split(',')
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().map_err(|_| format!("--tokens {v}: not counts")))
                .collect::<Result<Vec<usize>, String>>()?,
            None if has("--quick") => vec![4096],
            None => vec![4096, 8192, 16384],
        };
        // `--rs-staged-at N[,N]` is `--rs-owners ktN[,ktN]`; both may be given.
        let mut variants = Vec::new();
        if let Some(v) = value("--rs-staged-at")? {
            for t in v.split(',') {
                let kt = t
                    .parse()
                    .map_err(|_| format!("--rs-staged-at {v}: not k-tiles"))?;
                variants.push(OwnersLoad {
                    at: StagedLoadAt::KTile(kt),
                    ..tp::LOCAL_OWNERS
                });
            }
        }
        if let Some(v) = value("--rs-owners")? {
            for t in v.split(',') {
                variants.push(parse_owners(t)?);
            }
        }
        let mut owners = [None; 4];
        if variants.len() > owners.len() {
            return Err(format!(
                "{} owners' variants: at most {}",
                variants.len(),
                owners.len()
            )
            .into());
        }
        for (at, v) in owners.iter_mut().zip(variants) {
            *at = Some(v);
        }
        Ok(Options {
            tokens,
            small,
            stress,
            rs: RsOptions {
                register_epilogue: has("--rs-register-epilogue"),
                fused: has("--rs-fused"),
                pull: has("--rs-pull"),
                owners,
            },
            rs_only: has("--rs-only"),
            rs_layers: value("--rs-layers")?
                .map(|v| v.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
        })
    }
}

fn main() -> Res<()> {
    let mut opts = Options::parse()?;
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
    if !opts.small {
        group.init_nccl()?;
    }
    let world = group.world();
    if opts.rs.pull && world > 2 {
        println!("--rs-pull left out: the pulled reduce-scatter takes two ranks, not {world}");
        opts.rs.pull = false;
    }
    let sms = group.device(0)?.attributes().sm_count;
    for r in 0..world {
        println!("rank {r}: {}", group.device(r)?.attributes().name);
    }
    let compare = kernels::count_mismatches()?;
    let mut blas = Vec::new();
    let mut compares = Vec::new();
    for r in 0..world {
        if !opts.small {
            blas.push(CudaBlas::new(group.stream(r)?.clone())?);
        }
        compares.push(compare.load(group.device(r)?, &JitOptions::default())?);
    }
    let ctx = Ctx {
        group,
        blas,
        compare: compares,
        sms,
    };
    let since = Instant::now();
    let mut failed = false;
    if opts.small || opts.stress > 0 {
        let (shapes, how) = match opts.small {
            true => (StressShapes::small(world), Collectives::Host),
            false => (StressShapes::full(), Collectives::Nccl),
        };
        failed |= !report_stress(&ctx, (opts.stress, &shapes, how), opts.rs);
    }
    if opts.small {
        return match failed {
            true => Err("results differ from the sequential path".into()),
            false => Ok(()),
        };
    }

    // Llama-70B-like layers at tensor parallelism `world`: hidden 8192, FFN 28672, 64 query
    // heads and 8 KV heads of 128. The column-parallel layers gather the tokens' activations
    // (all-gather + GEMM), the row-parallel ones reduce-scatter their outputs.
    let mut rows = Vec::new();
    for &t in &opts.tokens {
        let mut gather = vec![
            ("qkv", (t, (8192 + 2 * 1024) / world, 8192)),
            ("ffn-up", (t, 28672 / world, 8192)),
        ];
        if opts.rs_only {
            gather.clear();
        }
        if t == 16384 && !opts.rs_only {
            // The measured case: a 16384 x 4096 x 8192 GEMM behind a 128 MiB all-gather.
            gather.push(("issue", (t, 4096, 8192)));
        }
        for (name, shape) in gather {
            match all_gather_layer(&ctx, name, shape, t == opts.tokens[0]) {
                Ok(row) => {
                    row.print(since);
                    failed |= row.differing != 0;
                    rows.push(row);
                }
                Err(e) => {
                    println!("AG+GEMM {name} {shape:?} FAILED: {e}");
                    failed = true;
                }
            }
        }
        let layers = [
            ("attn-out", (t, 8192, 8192)),
            ("ffn-down", (t, 8192, 28672)),
        ];
        let chosen =
            |name: &str| opts.rs_layers.is_empty() || opts.rs_layers.iter().any(|l| l == name);
        for (name, shape) in layers.into_iter().filter(|(name, _)| chosen(name)) {
            match reduce_scatter_layer(&ctx, name, shape, opts.rs) {
                Ok(row) => {
                    row.print(since);
                    failed |= row.differing != 0;
                    rows.push(row);
                }
                Err(e) => {
                    println!("GEMM+RS {name} {shape:?} FAILED: {e}");
                    failed = true;
                }
            }
        }
    }
    println!(
        "\nsummary, {world} ranks (ratios > 1: ours faster; ours/alone < 1.10 is within 10% of \
         the GEMM alone)"
    );
    for r in &rows {
        println!(
            "{:<60} vs NCCL+our GEMM {:.3}x  vs NCCL+cuBLAS {:.3}x  ours/alone {:.3}{}  equal {}{}",
            r.what,
            r.seq_ours / r.ours,
            r.seq_cublas / r.ours,
            r.ours / r.gemm_alone,
            r.extra(),
            r.differing == 0,
            r.nccl()
        );
    }
    if failed {
        return Err("results differ from the sequential path".into());
    }
    Ok(())
}
