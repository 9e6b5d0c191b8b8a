//! GPU checks of the tile-op variants (`ptxkit selftest` runs them): each kernel is written with
//! tile ops only for the data movement and the MMA, runs on fresh random data, and is compared with
//! a host reference. Vectorised copy, `cp.async`, swizzled scalar copy, ldmatrix/stmatrix, TMA in
//! both directions with the 128B swizzle, TMA multicast in a cluster, and one wgmma tile per input
//! type (f16, bf16, tf32, e4m3, e5m2).

use ptx_isa::builder::CmpOp;
use ptx_isa::{RegRef, ScalarType, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::hang::HangSites;
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, NamedBarrier, WaitMode};

use super::ctx::{GpuCheckError, GpuCtx, Report, RunResult, max_abs_err};
use crate::kernel::{
    Buffer, BuiltKernel, Elem, Expr, KernelBuilder, KernelError, Ptr, Result, TensorOpts,
};
use crate::runtime::{Arg, E4m3, E5m2, Element, LoadedKernel};
use crate::signature::TmaBox;
use crate::tile::{Accumulate, ExecScope, Storage, TileOp, TileOperand, TileRef};

/// Dispatches `op` at `scope` in `k`; a miss becomes a kernel error carrying the rejection table.
pub(crate) fn op(k: &mut KernelBuilder, op: TileOp<'_>, scope: ExecScope) -> Result<&'static str> {
    k.tile_op(op, scope, None)
}

fn global<T: Elem>(k: &KernelBuilder, b: &Buffer<T>) -> Result<ptx_isa::Reg<ty::U64>> {
    match b.data() {
        Some(Ptr::Global(r)) => Ok(r),
        _ => Err(k.error("a global tensor expected")),
    }
}

fn shared<T: Elem>(k: &KernelBuilder, b: &Buffer<T>) -> Result<ptx_isa::Reg<ty::U32>> {
    match b.data() {
        Some(Ptr::Shared(r)) => Ok(r),
        _ => Err(k.error("a shared tile expected")),
    }
}

const N: u32 = 64;

/// A kernel's one mbarrier, `bar`, named in a [`BarrierSync`] with its arrival count (1: the
/// leader's `arrive.expect_tx`): the tile ops that complete on it record their bytes there, and
/// its waits are bounded when `mode` is [`WaitMode::Bounded`].
fn one_barrier(k: &mut KernelBuilder, mode: WaitMode) -> Result<(BarrierSync, NamedBarrier)> {
    let mut sync = BarrierSync::new(k.kernel_name(), mode);
    sync.declare_globals(k.module_mut())
        .map_err(KernelError::from)?;
    let addr = k.pool_bytes("bar", 8, 8)?;
    let bar = sync
        .declare_one("bar", 1, addr)
        .map_err(|e| k.error(e.to_string()))?;
    Ok((sync, bar))
}

/// Finishes a kernel with one named barrier: the protocol check first (a copy whose bytes
/// differ from the `expect_tx` announced on the barrier is an error naming it), then the wait
/// sites, located in the PTX (none in a release build).
fn finish(k: KernelBuilder, sync: BarrierSync) -> Result<(BuiltKernel, HangSites)> {
    let mut sites = sync
        .finish()
        .map_err(|e| k.error(format!("barrier protocol: {e}")))?;
    let built = k.finish()?;
    sites.locate(built.ptx());
    Ok((built, sites))
}

/// `y1 = x` through shared memory with `copy.vector`, `y2 = x` with `copy_async.cp_async`, `y3 = x`
/// through a 128B-swizzled tile with `copy.scalar`.
pub fn build_copies(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("tile_copies", target);
    let opts = TensorOpts::default().align(16);
    let x = k.tensor::<ty::F32>("x", [N, N], opts.clone())?;
    let ys: Vec<_> = (1..=3)
        .map(|i| k.tensor::<ty::F32>(&format!("y{i}"), [N, N], opts.clone()))
        .collect::<Result<_>>()?;
    let [_tx] = k.thread_id([128])?;
    let t1 = k.pool_alloc::<ty::F32>("t1", &[N, N], 1024)?;
    let t2 = k.pool_alloc::<ty::F32>("t2", &[N, N], 1024)?;
    let t3 = k
        .pool_alloc::<ty::F32>("t3", &[N, N], 1024)?
        .swizzled(SwizzleMode::B128)?;
    let cta = ExecScope::Cta { threads: 128 };
    k.copy(&t1, &x, cta)?;
    k.copy_async(&t2, &x, None, None, cta)?;
    k.cp_async_commit_group()?;
    k.copy(&t3, &x, cta)?;
    k.cp_async_wait_all()?;
    k.sync_threads()?;
    for (s, y) in [(&t1, &ys[0]), (&t2, &ys[1]), (&t3, &ys[2])] {
        k.copy(y, s, cta)?;
    }
    k.finish()
}

fn run_copies(ctx: &mut GpuCtx) -> RunResult {
    let k = ctx.load(&build_copies(ctx.target())?)?;
    let n = N as usize;
    let hx = ctx.rng.vec_f32(n * n);
    let x = ctx.upload(&hx, &[n, n])?;
    let mut y: Vec<_> = (0..3)
        .map(|_| ctx.poisoned(&[n, n]))
        .collect::<std::result::Result<_, _>>()?;
    let [y1, y2, y3] = &mut y[..] else {
        return Err(GpuCheckError::Unexpected {
            check: "tile_copies".into(),
            detail: "three outputs expected".into(),
        });
    };
    k.launch(
        &ctx.stream,
        &mut [
            Arg::tensor(&x),
            Arg::tensor_mut(y1),
            Arg::tensor_mut(y2),
            Arg::tensor_mut(y3),
        ],
    )?;
    let mut err = 0.0f64;
    for t in &y {
        err = err.max(max_abs_err(&ctx.download(t)?, &hx));
    }
    Ok(Report {
        max_err: err,
        tolerance: 0.0,
        detail: "64x64 f32: copy.vector, copy_async.cp_async, copy.scalar (128B-swizzled)".into(),
    })
}

/// `y = x` for a 32x8 tile of 16-bit values: global → shared (`copy.vector`), shared → registers
/// (`copy.ldmatrix`, x4), registers → a second shared tile (`copy.stmatrix`), → global.
pub fn build_matrix(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("tile_matrix", target);
    let opts = TensorOpts::default().align(16);
    let x = k.tensor::<ty::Bf16>("x", [32u32, 8], opts.clone())?;
    let y = k.tensor::<ty::Bf16>("y", [32u32, 8], opts)?;
    let [_tx] = k.thread_id([32])?;
    let a = k.pool_alloc::<ty::Bf16>("a", &[32, 8], 1024)?;
    let b = k.pool_alloc::<ty::Bf16>("b", &[32, 8], 1024)?;
    let warp = ExecScope::Warp;
    let gx = TileRef::global_row_major(ScalarType::Bf16, 32, 8, global(&k, &x)?, 16);
    let gy = TileRef::global_row_major(ScalarType::Bf16, 32, 8, global(&k, &y)?, 16);
    let sa = TileRef::shared_row_major(ScalarType::Bf16, 32, 8, shared(&k, &a)?, 1024);
    let sb = TileRef::shared_row_major(ScalarType::Bf16, 32, 8, shared(&k, &b)?, 1024);
    let regs: Vec<RegRef> = k
        .regs::<ty::B32>(4)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    let ld = layouts::fragment::ldmatrix::ldmatrix(4, false).map_err(|e| k.error(e.to_string()))?;
    let rt = TileRef::registers(ScalarType::Bf16, ld, regs);
    op(&mut k, TileOp::Copy { dst: &sa, src: &gx }, warp)?;
    k.bar_sync(0u32, None)?;
    op(&mut k, TileOp::Copy { dst: &rt, src: &sa }, warp)?;
    op(&mut k, TileOp::Copy { dst: &sb, src: &rt }, warp)?;
    k.bar_sync(0u32, None)?;
    op(&mut k, TileOp::Copy { dst: &gy, src: &sb }, warp)?;
    k.finish()
}

fn run_matrix(ctx: &mut GpuCtx) -> RunResult {
    let k = ctx.load(&build_matrix(ctx.target())?)?;
    // Any 16-bit patterns (NaNs included): the copy moves bits, compared as bits.
    let hx: Vec<half::bf16> = (0..256)
        .map(|_| half::bf16::from_bits((ctx.rng.next_u64() & 0xFFFF) as u16))
        .collect();
    let x = ctx.upload(&hx, &[32, 8])?;
    let mut y = ctx.upload(&vec![half::bf16::from_bits(0xFFFF); 256], &[32, 8])?;
    k.launch(&ctx.stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y)])?;
    let got = ctx.download(&y)?;
    let wrong = got
        .iter()
        .zip(&hx)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    Ok(Report {
        max_err: wrong as f64,
        tolerance: 0.0,
        detail: "32x8 b16 through copy.ldmatrix x4 and copy.stmatrix x4 (max err = wrong elements)"
            .into(),
    })
}

/// A 64x64 bf16 box: TMA load (`copy_async.tma_load`, 128B swizzle, mbarrier) → shared → TMA store
/// (`copy_async.tma_store`), each CTA of a 2-CTA cluster; with `multicast`, CTA 0 loads once into
/// both CTAs (`copy_async.tma_multicast`) and each stores its copy to its own output rows.
pub fn build_tma(target: Target, multicast: bool) -> Result<BuiltKernel> {
    build_tma_with(target, multicast, WaitMode::Spin).map(|(k, _)| k)
}

/// [`build_tma`] with its barrier's waits as `mode` says, and their wait sites.
pub fn build_tma_with(
    target: Target,
    multicast: bool,
    mode: WaitMode,
) -> Result<(BuiltKernel, HangSites)> {
    let mut k = KernelBuilder::new(
        if multicast {
            "tile_tma_multicast"
        } else {
            "tile_tma"
        },
        target,
    );
    // Both tensors are [2N, N] bf16, moved in N x N boxes with the 128-byte swizzle: declared
    // once here, the launcher builds their tensor maps from the tensors passed.
    let tma = TmaBox::new([N, N]).swizzle(SwizzleMode::B128);
    let src = k.tma_tensor::<ty::Bf16>("src", [2 * N, N], tma.clone())?;
    let dst = k.tma_tensor::<ty::Bf16>("dst", [2 * N, N], tma)?;
    let [_b] = k.cta_id([Expr::from(2u32)])?;
    let [tx] = k.thread_id([128])?;
    let [_c] = k.cta_id_in_cluster([2], None)?;
    let rank_id = k.cta_rank_in_cluster()?;
    let rank = k.eval(rank_id)?;
    let tile = k.tma_box_buffer("tile", &src)?;
    let (mut sync, bar) = one_barrier(&mut k, mode)?;
    let tid = k.eval(tx)?;
    let leader = k.pred();
    k.setp(CmpOp::Eq, leader, tid, 0u32)?;
    let bytes = src.box_bytes() as u32;
    k.if_(leader, |k| {
        sync.init(k.isa(), bar)?;
        k.fence_mbarrier_init()?;
        Ok(())
    })
    .end()?;
    // Both CTAs' barriers are initialised before any load may complete on them. (The CTA barrier
    // after the cluster barrier is for compute-sanitizer's racecheck, which does not count
    // barrier.cluster as ordering the CTA's own threads and warns about the mbarrier word.)
    k.cluster_sync()?;
    k.bar_sync(0u32, None)?;
    // Each CTA arms its own barrier for the bytes it will receive. A peer's multicast may land
    // first: its complete-tx takes the tx-count below zero and the phase still waits for this
    // arrival (PTX ISA 9.7.13.15, the tx-count of an mbarrier phase). Arming after the cluster barrier rather than next to
    // the init keeps the init and the arrive apart: ptxas runs a lone lane's init on the uniform
    // datapath, and racecheck then pairs it with the lane's arrive as a warp-level hazard.
    k.if_(leader, |k| {
        sync.arrive(k.isa(), bar, Arrival::ExpectTx(bytes), ArriveSite::Loop)?;
        Ok(())
    })
    .end()?;
    let issuer = k.pred();
    if multicast {
        let r0 = k.pred();
        k.setp(CmpOp::Eq, r0, rank, 0u32)?;
        k.and(issuer, leader, r0)?;
    } else {
        k.mov(issuer, leader)?;
    }
    // Each CTA's box is block row `rank` of the tensor; with multicast CTA 0 loads block row 0
    // into both.
    let (own, first) = (Expr::from(rank_id), Expr::from(0u32));
    let src_block = if multicast {
        first.clone()
    } else {
        own.clone()
    };
    let src_tile = k.tma_tile_at(&src, [src_block, first.clone()])?;
    k.if_(issuer, |k| {
        let mask = if multicast { Some(3u16.into()) } else { None };
        k.copy_async(
            &tile,
            &src_tile,
            Some((&mut sync, bar)),
            mask,
            ExecScope::Thread,
        )?;
        Ok(())
    })
    .end()?;
    sync.wait(k.isa(), bar.at, None, bar.addr, 0u32)?;
    let dst_tile = k.tma_tile_at(&dst, [own, first])?;
    k.if_(leader, |k| {
        k.copy_async(&dst_tile, &tile, None, None, ExecScope::Thread)?;
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, false)?;
        Ok(())
    })
    .end()?;
    k.cluster_sync()?;
    finish(k, sync)
}

fn run_tma(ctx: &mut GpuCtx, multicast: bool) -> RunResult {
    let n = N as usize;
    let k = ctx.load(&build_tma(ctx.target(), multicast)?)?;
    // Source rows 0..128 (each CTA reads its own 64 rows, or CTA 0's rows for both with multicast).
    let hx: Vec<u16> = (0..2 * n * n)
        .map(|_| (ctx.rng.next_u64() & 0x7F7F) as u16)
        .collect();
    let bits =
        |v: &[u16]| -> Vec<half::bf16> { v.iter().map(|&b| half::bf16::from_bits(b)).collect() };
    let x = ctx.upload(&bits(&hx), &[2 * n, n])?;
    let mut y = ctx.upload(&bits(&vec![0xFFFFu16; 2 * n * n]), &[2 * n, n])?;
    // The launcher builds both tensor maps from the tensors and the kernel's declared boxes.
    k.launch(&ctx.stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y)])?;
    ctx.stream.synchronize()?;
    let got: Vec<u16> = ctx.download(&y)?.iter().map(|b| b.to_bits()).collect();
    let want: Vec<u16> = if multicast {
        hx[..n * n].iter().chain(&hx[..n * n]).copied().collect()
    } else {
        hx.clone()
    };
    let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    Ok(Report {
        max_err: wrong as f64,
        tolerance: 0.0,
        detail: format!(
            "2 CTAs x 64x64 bf16, 128B swizzle{} (max err = wrong elements)",
            if multicast {
                ", CTA 0 multicasts to both"
            } else {
                ""
            }
        ),
    })
}

/// K of the 64 x K tiles: one 128-byte swizzled row.
fn k_of(input: ScalarType) -> u32 {
    128 / input.bytes()
}

fn tag(input: ScalarType) -> &'static str {
    match input {
        ScalarType::F16 => "f16",
        ScalarType::Tf32 => "tf32",
        ScalarType::E4m3 => "e4m3",
        ScalarType::E5m2 => "e5m2",
        _ => "bf16",
    }
}

/// The leader initialises `bar`, arms it for the bytes of every box, and issues one TMA load per
/// `(tile, box)` pair completing on it (the other threads wait on it afterwards).
fn tma_loads<T: Elem>(
    k: &mut KernelBuilder,
    leader: ptx_isa::Pred,
    (sync, bar): (&mut BarrierSync, NamedBarrier),
    bytes: u64,
    loads: &[(&Buffer<T>, &TileRef)],
) -> Result<()> {
    let bytes = u32::try_from(bytes).map_err(|_| k.error(format!("{bytes} bytes in flight")))?;
    k.if_(leader, |k| {
        sync.init(k.isa(), bar)?;
        sync.arrive(k.isa(), bar, Arrival::ExpectTx(bytes), ArriveSite::Loop)?;
        for (tile, boxed) in loads {
            k.copy_async(
                *tile,
                *boxed,
                Some((&mut *sync, bar)),
                None,
                ExecScope::Thread,
            )?;
        }
        Ok(())
    })
    .end()
}

/// One wgmma tile: A (64 x K) and B (64 x K, K-major) of element type `T`, declared as TMA
/// tensors with a 64 x K box and the 128B swizzle (K = 64 for f16/bf16, 32 for tf32, 128 for
/// e4m3/e5m2: one 128-byte row) and loaded with `copy_async`, `D = A·Bᵀ` by `gemm_async.wgmma`,
/// D (64 x 64 f32) stored with `copy.fragment`.
pub fn build_wgmma<T: Elem>(target: Target) -> Result<BuiltKernel> {
    let input = T::DTYPE;
    let mut k = KernelBuilder::new(&format!("tile_wgmma_{}", tag(input)), target);
    let kk = k_of(input);
    // Declared once: the launcher builds both tensor maps from the tensors passed.
    let tma = TmaBox::new([N, kk]).swizzle(SwizzleMode::B128);
    let a = k.tma_tensor::<T>("a", [N, kk], tma.clone())?;
    let b = k.tma_tensor::<T>("b", [N, kk], tma)?;
    let d = k.tensor::<ty::F32>("d", [N, N], TensorOpts::default().align(16))?;
    let [tx] = k.thread_id([128])?;
    let ta = k.tma_box_buffer("ta", &a)?;
    let tb = k.tma_box_buffer("tb", &b)?;
    let (mut sync, bar) = one_barrier(&mut k, WaitMode::Spin)?;
    let tid = k.eval(tx)?;
    let leader = k.pred();
    k.setp(CmpOp::Eq, leader, tid, 0u32)?;
    let origin = || [Expr::from(0u32), Expr::from(0u32)];
    let (a_g, b_g) = (k.tma_tile_at(&a, origin())?, k.tma_tile_at(&b, origin())?);
    tma_loads(
        &mut k,
        leader,
        (&mut sync, bar),
        a.box_bytes() + b.box_bytes(),
        &[(&ta, &a_g), (&tb, &b_g)],
    )?;
    k.bar_sync(0u32, None)?;
    sync.wait(k.isa(), bar.at, None, bar.addr, 0u32)?;
    wgmma_into(k, sync, &d, (&ta, &tb), input)
}

/// Ends a wgmma kernel: `d = a·bᵀ` by one warpgroup's wgmma of `input` products into a 64 x 64
/// f32 accumulator, waited for and stored to the `[N, N]` tensor `d`; then finishes `k`.
fn wgmma_into(
    mut k: KernelBuilder,
    sync: BarrierSync,
    d: &Buffer<ty::F32>,
    (a, b): (&impl TileOperand, &impl TileOperand),
    input: ScalarType,
) -> Result<BuiltKernel> {
    let frag = layouts::fragment::wgmma::accumulator(N as i64, input)
        .map_err(|e| k.error(e.to_string()))?;
    let acc: Vec<RegRef> = k
        .regs::<ty::F32>((N / 2) as usize)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    let d_regs = TileRef::registers(ScalarType::F32, frag, acc);
    let wg = ExecScope::Warpgroup;
    k.gemm_async(&d_regs, a, b, Accumulate::No, wg)?;
    k.wgmma_wait_group(0)?;
    let gd = TileRef::global_row_major(ScalarType::F32, N, N, global(&k, d)?, 16);
    k.copy(&gd, &d_regs, wg)?;
    finish(k, sync).map(|(k, _)| k)
}

/// A wgmma input type: its kernel element type, its host element, and random host values the
/// tensor cores read exactly, so the f32 accumulation is the only rounding.
trait WgmmaInput: Elem {
    /// The host element uploaded for it.
    type Host: Element;
    /// The values drawn from, when not uniform in [-1, 1) ([`FP8_VALUES`] for the 8-bit types).
    const DRAWN_FROM: Option<&'static [f32]>;
    /// The host element holding `x` (rounded; exactly for every value drawn).
    fn host(x: f32) -> Self::Host;
    /// The exact value of a host element.
    fn to_f32(h: Self::Host) -> f32;

    /// `len` random host values.
    fn draw(ctx: &mut GpuCtx, len: usize) -> Vec<Self::Host> {
        let xs = match Self::DRAWN_FROM {
            Some(values) => (0..len)
                .map(|_| values[(ctx.rng.next_u64() % values.len() as u64) as usize])
                .collect(),
            None => ctx.rng.vec_f32(len),
        };
        xs.into_iter().map(Self::host).collect()
    }

    /// The exact value of one.
    fn value(h: Self::Host) -> f64 {
        Self::to_f32(h).into()
    }
}

/// Values both 8-bit formats hold exactly (PTX ISA 5.2.5.1), drawn at random for the FP8 tiles:
/// their products are multiples of 1/4 below 4, so 128 of them sum exactly even in the narrower
/// accumulator the FP8 wgmma is known to keep.
const FP8_VALUES: [f32; 9] = [0.0, 0.5, 1.0, 1.5, 2.0, -0.5, -1.0, -1.5, -2.0];

/// tf32 data is f32 on the host; its low 13 mantissa bits are cleared so the tensor cores (which
/// keep 10, PTX ISA 5.2.5.1) see the values exactly.
fn tf32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xFFFF_E000)
}

/// `kernel type => host type, from f32, to f32, values drawn from`.
macro_rules! wgmma_input {
    ($($t:ty => $host:ty, $from:expr, $to:expr, $drawn:expr;)*) => {$(
        impl WgmmaInput for $t {
            type Host = $host;
            const DRAWN_FROM: Option<&'static [f32]> = $drawn;
            fn host(x: f32) -> $host {
                $from(x)
            }
            fn to_f32(h: $host) -> f32 {
                $to(h)
            }
        }
    )*};
}

wgmma_input! {
    ty::Bf16 => half::bf16, half::bf16::from_f32, half::bf16::to_f32, None;
    ty::F16 => half::f16, half::f16::from_f32, half::f16::to_f32, None;
    ty::Tf32 => f32, tf32, f32::from, None;
    ty::E4m3 => E4m3, E4m3::from_f32, E4m3::to_f32, Some(&FP8_VALUES);
    ty::E5m2 => E5m2, E5m2::from_f32, E5m2::to_f32, Some(&FP8_VALUES);
}

/// `want[r][c] = sum_x a[r][x] * b[c][x]` over `kk`, for 64 x 64 D.
fn abt(a: &[f64], b: &[f64], kk: usize) -> Vec<f32> {
    let n = N as usize;
    (0..n * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            (0..kk).map(|x| a[r * kk + x] * b[c * kk + x]).sum::<f64>() as f32
        })
        .collect()
}

/// Launches a wgmma kernel on A and B (`[N, kk]` each, from the host values `ha`, `hb`) and a
/// poisoned `[N, N]` D; returns D. The launcher builds the tensor maps of the operands the
/// kernel loads by TMA from the tensors and the kernel's declared boxes.
fn launch_abt<H: Element>(
    ctx: &GpuCtx,
    k: &LoadedKernel,
    (ha, hb): (&[H], &[H]),
    kk: usize,
) -> Result<Vec<f32>, GpuCheckError> {
    let n = N as usize;
    let a = ctx.upload(ha, &[n, kk])?;
    let b = ctx.upload(hb, &[n, kk])?;
    let mut d = ctx.poisoned(&[n, n])?;
    k.launch(
        &ctx.stream,
        &mut [Arg::tensor(&a), Arg::tensor(&b), Arg::tensor_mut(&mut d)],
    )?;
    ctx.download(&d)
}

fn run_wgmma<T: WgmmaInput>(ctx: &mut GpuCtx) -> RunResult {
    let n = N as usize;
    let kk = k_of(T::DTYPE) as usize;
    let k = ctx.load(&build_wgmma::<T>(ctx.target())?)?;
    let (ha, hb) = (T::draw(ctx, n * kk), T::draw(ctx, n * kk));
    let got = launch_abt(ctx, &k, (&ha, &hb), kk)?;
    let values = |h: &[T::Host]| -> Vec<f64> { h.iter().map(|&x| T::value(x)).collect() };
    Ok(Report {
        max_err: max_abs_err(&got, &abt(&values(&ha), &values(&hb), kk)),
        tolerance: 1e-3,
        detail: format!(
            "64x64x{kk} {}: TMA 128B, gemm_async.wgmma, copy.fragment",
            tag(T::DTYPE)
        ),
    })
}

pub(crate) fn tile_copies(ctx: &mut GpuCtx) -> RunResult {
    run_copies(ctx)
}
pub(crate) fn tile_matrix(ctx: &mut GpuCtx) -> RunResult {
    run_matrix(ctx)
}
pub(crate) fn tile_tma(ctx: &mut GpuCtx) -> RunResult {
    run_tma(ctx, false)
}
pub(crate) fn tile_tma_multicast(ctx: &mut GpuCtx) -> RunResult {
    run_tma(ctx, true)
}
pub(crate) fn build_tma_plain(t: Target) -> Result<BuiltKernel> {
    build_tma(t, false)
}
pub(crate) fn build_tma_mc(t: Target) -> Result<BuiltKernel> {
    build_tma(t, true)
}
pub(crate) fn tile_wgmma_bf16(ctx: &mut GpuCtx) -> RunResult {
    run_wgmma::<ty::Bf16>(ctx)
}
pub(crate) fn tile_wgmma_f16(ctx: &mut GpuCtx) -> RunResult {
    run_wgmma::<ty::F16>(ctx)
}
pub(crate) fn tile_wgmma_tf32(ctx: &mut GpuCtx) -> RunResult {
    run_wgmma::<ty::Tf32>(ctx)
}
pub(crate) fn tile_wgmma_e4m3(ctx: &mut GpuCtx) -> RunResult {
    run_wgmma::<ty::E4m3>(ctx)
}
pub(crate) fn tile_wgmma_e5m2(ctx: &mut GpuCtx) -> RunResult {
    run_wgmma::<ty::E5m2>(ctx)
}
pub(crate) fn build_wgmma_bf16(t: Target) -> Result<BuiltKernel> {
    build_wgmma::<ty::Bf16>(t)
}
pub(crate) fn build_wgmma_f16(t: Target) -> Result<BuiltKernel> {
    build_wgmma::<ty::F16>(t)
}
pub(crate) fn build_wgmma_tf32(t: Target) -> Result<BuiltKernel> {
    build_wgmma::<ty::Tf32>(t)
}
pub(crate) fn build_wgmma_e4m3(t: Target) -> Result<BuiltKernel> {
    build_wgmma::<ty::E4m3>(t)
}
pub(crate) fn build_wgmma_e5m2(t: Target) -> Result<BuiltKernel> {
    build_wgmma::<ty::E5m2>(t)
}

/// `gemm_async.wgmma` with A from registers: A (64 x 16 bf16) from global into the register-A
/// fragment with `copy.fragment_view` (packed pairs), B (64 x 16) a TMA tensor loaded with
/// `copy_async` in the 32B swizzle its 32-byte rows imply, `D = A·Bᵀ` (64 x 64 f32) stored with
/// `copy.fragment`.
pub fn build_wgmma_regs(target: Target) -> Result<BuiltKernel> {
    use crate::tile::RunCount;
    let mut k = KernelBuilder::new("tile_wgmma_regs_a", target);
    let opts = TensorOpts::default().align(16);
    let a = k.tensor::<ty::Bf16>("a", [N, 16], opts.clone())?;
    let b =
        k.tma_tensor::<ty::Bf16>("b", [N, 16], TmaBox::new([N, 16]).swizzle(SwizzleMode::B32))?;
    let d = k.tensor::<ty::F32>("d", [N, N], opts)?;
    let [tx] = k.thread_id([128])?;
    let tb = k.tma_box_buffer("tb", &b)?;
    let (mut sync, bar) = one_barrier(&mut k, WaitMode::Spin)?;
    let tid = k.eval(tx)?;
    let leader = k.pred();
    k.setp(CmpOp::Eq, leader, tid, 0u32)?;
    let b_g = k.tma_tile_at(&b, [Expr::from(0u32), Expr::from(0u32)])?;
    tma_loads(
        &mut k,
        leader,
        (&mut sync, bar),
        b.box_bytes(),
        &[(&tb, &b_g)],
    )?;
    let wg = ExecScope::Warpgroup;
    let frag_a = layouts::fragment::wgmma::register_a(ptx_isa::ScalarType::Bf16)
        .map_err(|e| k.error(e.to_string()))?;
    let a_regs: Vec<RegRef> = k
        .regs::<ty::B32>(4)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    let a_r = TileRef::registers(ScalarType::Bf16, frag_a, a_regs);
    let a_g = TileRef::global_pitched(
        ScalarType::Bf16,
        N,
        16,
        global(&k, &a)?,
        16,
        RunCount::new(16u32, 16),
    );
    k.copy(&a_r, &a_g, wg)?;
    k.bar_sync(0u32, None)?;
    sync.wait(k.isa(), bar.at, None, bar.addr, 0u32)?;
    wgmma_into(k, sync, &d, (&a_r, &tb), ScalarType::Bf16)
}

pub(crate) fn tile_wgmma_regs_a(ctx: &mut GpuCtx) -> RunResult {
    let n = N as usize;
    let k = ctx.load(&build_wgmma_regs(ctx.target())?)?;
    let (ha, hb) = (
        <ty::Bf16 as WgmmaInput>::draw(ctx, n * 16),
        <ty::Bf16 as WgmmaInput>::draw(ctx, n * 16),
    );
    let got = launch_abt(ctx, &k, (&ha, &hb), 16)?;
    let values = |h: &[half::bf16]| -> Vec<f64> { h.iter().map(|x| x.to_f64()).collect() };
    Ok(Report {
        max_err: max_abs_err(&got, &abt(&values(&ha), &values(&hb), 16)),
        tolerance: 1e-3,
        detail: "64x64x16 bf16, A in registers (copy.fragment_view), B by TMA 32B, \
                 gemm_async.wgmma"
            .into(),
    })
}

/// `copy_async.bulk_cluster` in a 2-CTA cluster: each CTA stages its 256 floats of `x` in shared
/// memory, sends them into its peer's shared memory with one bulk copy that completes on the
/// peer's mbarrier, waits for the peer's copy on its own barrier, and writes what it received to
/// its rows of `y` (`y[rank] = x[peer]`).
pub fn build_bulk_cluster(target: Target) -> Result<BuiltKernel> {
    build_bulk_cluster_with(target, WaitMode::Spin).map(|(k, _)| k)
}

/// [`build_bulk_cluster`] with its barrier's waits as `mode` says, and their wait sites.
pub fn build_bulk_cluster_with(target: Target, mode: WaitMode) -> Result<(BuiltKernel, HangSites)> {
    const M: u32 = 256;
    let mut k = KernelBuilder::new("tile_bulk_cluster", target);
    let opts = TensorOpts::default().align(16);
    let x = k.tensor::<ty::F32>("x", [2u32, M], opts.clone())?;
    let y = k.tensor::<ty::F32>("y", [2u32, M], opts)?;
    let [_b] = k.cta_id([crate::kernel::Expr::from(2u32)])?;
    let [tx] = k.thread_id([128])?;
    let [_c] = k.cta_id_in_cluster([2], None)?;
    let rank = k.cta_rank_in_cluster()?;
    let rank = k.eval(rank)?;
    let src = k.pool_alloc::<ty::F32>("src", &[M], 1024)?;
    let dst = k.pool_alloc::<ty::F32>("dst", &[M], 1024)?;
    let (mut sync, bar) = one_barrier(&mut k, mode)?;
    let tid = k.eval(tx)?;
    let leader = k.pred();
    k.setp(CmpOp::Eq, leader, tid, 0u32)?;
    let cta = ExecScope::Cta { threads: 128 };
    // This CTA's row of x, and of y.
    let row =
        |k: &mut KernelBuilder, base: ptx_isa::Reg<ty::U64>| -> Result<ptx_isa::Reg<ty::U64>> {
            let (off, at) = (k.reg::<ty::U64>(), k.reg::<ty::U64>());
            k.mul_wide(off, rank, M * 4)?;
            k.add(at, base, off)?;
            Ok(at)
        };
    let (bx, by) = (global(&k, &x)?, global(&k, &y)?);
    let gx = row(&mut k, bx)?;
    let gy = row(&mut k, by)?;
    let (s_src, s_dst) = (shared(&k, &src)?, shared(&k, &dst)?);
    let tile = |storage, base| {
        let mut t = TileRef::shared_row_major(ScalarType::F32, 1, M, base, 1024);
        t.storage = storage;
        t
    };
    let gx_t = TileRef::global_row_major(ScalarType::F32, 1, M, gx, 16);
    op(
        &mut k,
        TileOp::Copy {
            dst: &tile(Storage::Shared, s_src),
            src: &gx_t,
        },
        cta,
    )?;
    k.if_(leader, |k| {
        sync.init(k.isa(), bar)?;
        k.fence_mbarrier_init()?;
        Ok(())
    })
    .end()?;
    // The staged rows are visible to the async proxy, and every barrier of the cluster is
    // initialised, before any copy starts.
    k.fence_proxy_async(Some(ptx_isa::StateSpace::Shared(
        ptx_isa::space::SharedScope::Cta,
    )))?;
    k.cluster_sync()?;
    k.bar_sync(0u32, None)?;
    let (peer, r_dst, r_bar) = (k.reg::<ty::U32>(), k.reg::<ty::U32>(), k.reg::<ty::U32>());
    k.xor(peer, rank, 1u32)?;
    k.mapa_shared(r_dst, s_dst, peer)?;
    k.mapa_shared(r_bar, bar.addr, peer)?;
    k.if_(leader, |k| {
        // Arm this CTA's barrier for the peer's bytes (the peer's complete-tx may come first:
        // PTX ISA 9.7.13.15, tx-count), then send this CTA's row.
        sync.arrive(k.isa(), bar, Arrival::ExpectTx(M * 4), ArriveSite::Loop)?;
        // The copy completes on the peer's barrier of the same name: each CTA's `bar` receives
        // the peer's row, which this line of the program sends.
        k.tile_op_on(
            &mut sync,
            TileOp::CopyAsync {
                dst: &tile(Storage::SharedCluster, r_dst),
                src: &tile(Storage::Shared, s_src),
                mbar: Some(NamedBarrier {
                    at: bar.at,
                    addr: r_bar,
                }),
                multicast: None,
            },
            ExecScope::Thread,
        )?;
        Ok(())
    })
    .end()?;
    sync.wait(k.isa(), bar.at, None, bar.addr, 0u32)?;
    let gy_t = TileRef::global_row_major(ScalarType::F32, 1, M, gy, 16);
    op(
        &mut k,
        TileOp::Copy {
            dst: &gy_t,
            src: &tile(Storage::Shared, s_dst),
        },
        cta,
    )?;
    // No CTA leaves while its peer may still read its shared memory.
    k.cluster_sync()?;
    finish(k, sync)
}

pub(crate) fn tile_bulk_cluster(ctx: &mut GpuCtx) -> RunResult {
    let k = ctx.load(&build_bulk_cluster(ctx.target())?)?;
    let hx = ctx.rng.vec_f32(512);
    let x = ctx.upload(&hx, &[2, 256])?;
    let mut y = ctx.poisoned(&[2, 256])?;
    k.launch(&ctx.stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y)])?;
    let got = ctx.download(&y)?;
    let want: Vec<f32> = hx[256..].iter().chain(&hx[..256]).copied().collect();
    Ok(Report {
        max_err: max_abs_err(&got, &want),
        tolerance: 0.0,
        detail: "2-CTA cluster, 1 KiB each way: copy_async.bulk_cluster onto the peer's mbarrier"
            .into(),
    })
}
