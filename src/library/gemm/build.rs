//! The GEMM kernel, written with [`KernelBuilder`] and the kernel parts ([`crate::parts`]) in
//! the shape of its design: [`HopperGemm`] declares the operands (A and B as TMA tensors, C as a
//! TMA tensor or a global tensor, the extents as symbols with their facts), lays out shared
//! memory and declares its stage ring ([`Ring`]); then [`HopperGemm::init_barriers`], and the
//! roles ([`HopperGemm::roles`], a [`WarpSpecialized`]): [`HopperGemm::producer`] (warpgroup 0:
//! TMA loads into the ring) and [`HopperGemm::consumer`] (warpgroups 1 and 2: the wgmma
//! [`HopperGemm::mainloop`], then [`HopperGemm::epilogue`], which applies
//! [`HopperGemm::tile_epilogue`]: the library's fusions and a user's
//! [`HopperGemm::with_epilogue`]). Each role walks the same tiles because it reads them from
//! the same [`Tiles`] ([`TileScheduler`]) and, inside each tile, the k loop; the launcher sizes
//! the persistent grid to the device.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::KernelBuilder;
//! use ptxkit::library::gemm::{GemmConfig, HopperGemm};
//! use ptxkit::smem::pipeline::sync::WaitMode;
//!
//! let cfg = GemmConfig::large();
//! let mut k = KernelBuilder::new(&cfg.name(), Target::Sm90a);
//! let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
//! let built = gemm.build(k)?;
//! assert_eq!(built.built.signature().params.len(), 6); // m, n, k, a, b, c
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use std::cell::RefCell;

use ptx_isa::builder::{CmpOp, TmaReduceOp};
use ptx_isa::{Directive, Module, Reg, RegRef, ScalarType, SpecialReg, StateSpace, Target, ty};
use smem::SwizzleMode;
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pipeline::hang::HangSites;
use smem::pipeline::sync::{Arrival, ArriveSite, BarrierSync, WaitMode};

use super::GemmConfig;
use super::grouped::schedule::{declare_block_scales, declare_operands};
use super::grouped::{GroupTile, GroupedSchedule, Grouping};
use super::layout::SmemLayout;
use crate::kernel::{
    Buffer, BuiltKernel, Elem, Expr, KernelBuilder, KernelError, Result, TensorOpts, TmaTensor, Var,
};
use crate::parts::epilogue::{pair_tile, whole_or_edge, write_from_f32};
use crate::parts::{
    Along, BandPacing, ClusterTiles, Combine, ConsumerId, Epilogue, EpilogueOp, EpilogueTensor,
    FragmentAt, GridSchedule, GridTile, InitScope, Ring, RowGate, StagedBlock, StreamUnit,
    TileBody, TileScheduler, Turn, Turns, WarpSpecialized, init_barriers,
};
use crate::signature::{ExtentFacts, KernelSignature, L2Promotion, TmaBox};
use crate::tile::{Accumulate, ExecScope, TileRef};

type R32 = Reg<ty::U32>;

/// The first of the named barriers ping-pong consumers pass their turns at
/// ([`GemmConfig::pingpong`], [`Turns::barrier`]): after the TMA-store epilogue's, `1 + cw`.
const TURN_BARRIER: u32 = 1 + GemmConfig::ROLES.consumers;

/// C's box for the TMA-store epilogue (and a staged input's): 64 x 64 elements, 128B-swizzled
/// as the staging slabs are (PTX ISA 9.7.9.27 tensor copies).
fn c_box() -> TmaBox {
    TmaBox::new([64, 64]).swizzle(SwizzleMode::B128)
}

/// One 64 x 64 slab of a C staging block (or of an epilogue warp's input buffer) at `addr`: the
/// shared side of one TMA box of C's tensor map ([`c_box`], PTX ISA 9.7.9.27).
fn c_slab(dtype: ScalarType, addr: R32) -> TileRef {
    TileRef::shared_row_major(dtype, 64, 64, addr, 1024).with_swizzle(SwizzleMode::B128)
}

/// One TMA load of the 64 x 64 box of `map` at element `origin` into the slab at `addr`,
/// completing on `full` (whose bytes the caller announced).
fn load_c_slab<T: Elem>(
    k: &mut KernelBuilder,
    (map, origin): (&TmaTensor<T>, [Expr; 2]),
    sync: &mut BarrierSync,
    full: smem::pipeline::sync::NamedBarrier,
    addr: R32,
) -> Result<()> {
    let src = k.tma_box_at(map, &origin)?;
    let dst = c_slab(T::DTYPE, addr);
    k.copy_async(&dst, &src, Some((sync, full)), None, ExecScope::Thread)?;
    Ok(())
}

/// A warpgroup's C staging block at `addr` as a `64 x bn` tile of `dtype`: 64-column slabs of
/// 64 rows x 128 bytes, 128B-swizzled as C's tensor map expects (offset(r, c) = c % 64 + 64 r +
/// 4096 (c / 64) elements), the layout `stmatrix` writes the output in and `ldmatrix` reads a
/// staged input from (`copy.stmatrix_fragment`, `copy.ldmatrix_fragment`).
fn staging_slabs(k: &KernelBuilder, dtype: ScalarType, bn: u32, addr: R32) -> Result<TileRef> {
    use layouts::IntTuple as T;
    let slabs = i64::from(bn / 64);
    let slab_layout = layouts::Layout::new(
        T::tuple([T::tuple([T::Int(64), T::Int(slabs)]), T::Int(64)]),
        T::tuple([T::tuple([T::Int(1), T::Int(4096)]), T::Int(64)]),
    )
    .map_err(|e| k.error(e.to_string()))?;
    let mut tile =
        TileRef::shared_row_major(dtype, 64, bn, addr, 1024).with_swizzle(SwizzleMode::B128);
    tile.layout = Some(slab_layout);
    Ok(tile)
}

/// An error unless `epi` only scales (a linear op, which split-K's partials and swap-AB's
/// transposed store take): `what` names the store in the message.
fn scale_only(k: &KernelBuilder, epi: &Epilogue, what: &str) -> Result<()> {
    match epi
        .ops()
        .iter()
        .find(|op| !matches!(op, EpilogueOp::Scale(_)))
    {
        Some(op) => Err(k.error(format!(
            "the epilogue op {op:?} on {what}: it takes a scale only"
        ))),
        None => Ok(()),
    }
}

/// A built GEMM kernel and the wait sites of its barrier protocol.
#[derive(Debug)]
pub struct GemmKernel {
    /// The kernel: its PTX, its signature (the symbolic extents `m`, `n`, `k`; `a` `[m, k]` and
    /// `b` `[n, k]` as TMA tensors with 128B-swizzled boxes of `128 / cluster_n` x BK and
    /// `bn / cluster_m` x BK;
    /// `c` `[m, n]`, a TMA tensor in 64 x 64 boxes for the TMA-store epilogue, else a global
    /// tensor aligned as [`GemmConfig::c_align`] says; with `alpha_beta`, `alpha` and `beta`) and
    /// its launch (a persistent grid of CTAs, or of clusters with `cluster_m = 2` or
    /// `cluster_n` 2 or 4, of 384
    /// threads, and the dynamic shared memory of [`GemmConfig::smem_bytes`]).
    pub built: BuiltKernel,
    /// The wait sites (located in the PTX in a [`WaitMode::Bounded`] build).
    pub sites: HangSites,
}

impl GemmKernel {
    /// The PTX module (one entry, named [`GemmConfig::name`]).
    pub fn module(&self) -> &Module {
        self.built.module()
    }

    /// The parameters the launcher checks arguments against.
    pub fn signature(&self) -> &KernelSignature {
        self.built.signature()
    }
}

/// Builds the GEMM module for `cfg` (target sm_90a: wgmma and setmaxnreg need it).
pub fn build(cfg: &GemmConfig) -> ptx_isa::Result<Module> {
    build_with(cfg, WaitMode::Spin).map(|g| g.built.into_module())
}

/// [`build`] with its waits emitted as `mode` says: [`WaitMode::Bounded`] is the debug build
/// (every full/empty wait a bounded loop that writes a hang record and traps), whose wait sites
/// come back with their PTX lines. Either way the barrier protocol (bytes announced vs bytes the
/// TMA loads deliver, arrivals vs init counts) is checked; a broken one is an error naming the
/// barrier.
pub fn build_with(cfg: &GemmConfig, mode: WaitMode) -> ptx_isa::Result<GemmKernel> {
    use ScalarType::{Bf16, E4m3, E5m2, F16, F32};
    fn typed<I: Elem, O: Elem>(cfg: &GemmConfig, mode: WaitMode) -> Result<GemmKernel> {
        mixed::<I, I, O>(cfg, mode)
    }
    fn mixed<I: Elem, J: Elem, O: Elem>(cfg: &GemmConfig, mode: WaitMode) -> Result<GemmKernel> {
        let mut k = KernelBuilder::new(&cfg.name(), Target::Sm90a);
        HopperGemm::<I, O, J>::declare(&mut k, *cfg, mode)?.build(k)
    }
    /// FP8 with A `I` and B `J`, for each output type.
    fn fp8<I: Elem, J: Elem>(cfg: &GemmConfig, mode: WaitMode) -> Option<Result<GemmKernel>> {
        match cfg.output {
            Bf16 => Some(mixed::<I, J, ty::Bf16>(cfg, mode)),
            F16 => Some(mixed::<I, J, ty::F16>(cfg, mode)),
            F32 => Some(mixed::<I, J, ty::F32>(cfg, mode)),
            _ => None,
        }
    }
    cfg.validate()
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))?;
    let fp8_built = match (cfg.input, cfg.b_type()) {
        (E4m3, E4m3) => fp8::<ty::E4m3, ty::E4m3>(cfg, mode),
        (E4m3, E5m2) => fp8::<ty::E4m3, ty::E5m2>(cfg, mode),
        (E5m2, E4m3) => fp8::<ty::E5m2, ty::E4m3>(cfg, mode),
        (E5m2, E5m2) => fp8::<ty::E5m2, ty::E5m2>(cfg, mode),
        _ => None,
    };
    let built = match (fp8_built, cfg.input, cfg.output) {
        (Some(built), _, _) => built,
        (None, Bf16, Bf16) => typed::<ty::Bf16, ty::Bf16>(cfg, mode),
        (None, Bf16, F16) => typed::<ty::Bf16, ty::F16>(cfg, mode),
        (None, Bf16, F32) => typed::<ty::Bf16, ty::F32>(cfg, mode),
        (None, F16, Bf16) => typed::<ty::F16, ty::Bf16>(cfg, mode),
        (None, F16, F16) => typed::<ty::F16, ty::F16>(cfg, mode),
        (None, F16, F32) => typed::<ty::F16, ty::F32>(cfg, mode),
        (None, input, output) => {
            return Err(ptx_isa::Error::new(
                ptx_isa::ErrorKind::Invalid,
                super::GemmConfigError::Types { input, output }.to_string(),
            ));
        }
    };
    built.map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))
}

/// Where C goes: through TMA stores of staged 64 x 64 boxes, or straight from registers.
#[derive(Debug, Clone)]
pub enum Output<O: Elem> {
    /// The TMA-store epilogue's C (`[m, n]`, 64 x 64 boxes, 128B swizzle).
    Tma(TmaTensor<O>),
    /// The register epilogue's C, and `alpha`, `beta` when it computes `alpha·A·Bᵀ + beta·C`.
    Global(Buffer<O>, Option<(Reg<ty::F32>, Reg<ty::F32>)>),
    /// A grouped GEMM's C ([`super::Grouping`]): stored from registers with the group's row
    /// bound, and whole 64-row blocks through `tma` (C's TMA view) when the kernel has the
    /// TMA-store epilogue.
    Grouped {
        /// C as a global tensor.
        rows: Buffer<O>,
        /// Its TMA view ([`KernelBuilder::tma_view_of`]).
        tma: Option<TmaTensor<O>>,
    },
    /// Split-K's partial tiles ([`GemmConfig::split_k`]): f32 `[split_k, m, n]`, each part's
    /// tile at its part's index, which [`super::split`] sums into C.
    Partials(Buffer<ty::F32>),
}

/// The Hopper GEMM being built: its operands, the extents of its tile schedule, its shared memory
/// and its barrier protocol, shared by the producer, the consumers and the epilogue. `I` is A's
/// element type, `O` C's, `J` B's (`I` unless an FP8 kernel mixes e4m3 and e5m2).
#[derive(Debug)]
pub struct HopperGemm<I: Elem, O: Elem, J: Elem = I> {
    cfg: GemmConfig,
    /// A `[m, k]`, loaded in `128 / cluster_n` x BK boxes (the CTAs of a cluster along N each
    /// load their part of the shared tile).
    a: TmaTensor<I>,
    /// B `[n, k]`, loaded in `bn / cluster_m` x BK boxes (a CTA pair each loads half the tile).
    b: TmaTensor<J>,
    c: Output<O>,
    /// `scale_a` and `scale_b` (one f32 each) with [`super::Scaling::PerTensor`].
    scales: Option<[Buffer<ty::F32>; 2]>,
    /// The block scales with [`super::Scaling::Block`].
    block_scales: Option<BlockScales>,
    /// `sa·sb` (times the output scale), or the output scale alone with block scales, read by
    /// each consumer thread before its first tile.
    alpha: Option<Reg<ty::F32>>,
    /// The optional per-column bias of an FP8 GEMM ([`GemmConfig::bias`]), bf16 or f32.
    bias: Option<EpilogueTensor>,
    /// The optional output scale of an FP8 GEMM ([`GemmConfig::out_scale`]).
    out_scale: Option<OutScaleParam>,
    /// The thread's index in the CTA.
    tid: Var,
    /// The extents `m`, `n`, `k`.
    extents: [Var; 3],
    /// The user's epilogue ([`HopperGemm::with_epilogue`]).
    epilogue: Epilogue,
    /// The persistent tile schedule.
    schedule: Tiles,
    /// K-tiles.
    ktiles: Var,
    /// Split-K: the k-tiles of one part ([`GemmConfig::split_k`]).
    k_part: Option<Var>,
    /// Split-K's in-kernel fixup ([`GemmConfig::split_fixup`]): C and the counters.
    fixup: Option<super::fixup::Fixup<O>>,
    /// This CTA's rank in its cluster (a pair along M, or `cluster_n` CTAs along N).
    rank: Option<Var>,
    /// The shared-memory base (aligned at run time to 1024 bytes).
    base: R32,
    /// Where the stages, the C staging blocks and the barriers live.
    layout: SmemLayout,
    /// The barrier operations, recorded for the protocol check (and bounded in a debug build).
    sync: BarrierSync,
    /// The stage ring (A and B tiles) with its `full` and `empty` barriers.
    ring: Ring,
    /// The m64nNk16 f32 accumulator fragment of a consumer warpgroup (layouts crate).
    fragment: layouts::fragment::TvLayout,
    /// The producer's gate ([`HopperGemm::with_row_gate`]): it waits for a tile's rows of A.
    gate: Option<RowGate>,
    /// The C staging blocks as a ring of two stages, one per consumer warpgroup (TMA-store
    /// epilogue): their barriers serve a staged input.
    staging: Option<Ring>,
    /// The `[m, n]` input loaded into the staging blocks for the epilogue
    /// ([`HopperGemm::staged_input`]).
    staged: Option<Staged<O>>,
    /// With [`GemmConfig::epilogue_warps`]: a consumer warpgroup's side of the staging ring
    /// (its own block, stage = its index, one phase a tile), handing its rounded tile to its
    /// epilogue warp.
    handoff: Option<RingCursor>,
    /// With [`GemmConfig::epilogue_warps`], in a consumer: whether the current tile is the
    /// CTA's last ([`TileScheduler::is_last`]), whose epilogue the consumer applies itself.
    last_tile: Option<ptx_isa::Pred>,
    /// With [`GemmConfig::epilogue_warps`]: the warps' slabs of a staged input, a ring of two
    /// stages with `full` barriers ([`SmemLayout::epilogue_input`]).
    epilogue_input: Option<Ring>,
    /// How the epilogue warps pace their passes ([`HopperGemm::with_epilogue_pace`]).
    pace: EpiloguePace,
}

/// How an epilogue warp ([`GemmConfig::epilogue_warps`]) paces its pass over a handed tile
/// ([`HopperGemm::with_epilogue_pace`], [`Epilogue::with_band_pacing`]). The pass's
/// shared-memory accesses (`ldmatrix`, `stmatrix`, the TMA's loads and stores) share the SM's
/// data path with the next main loop's wgmma operand reads and, unpaced, come in a burst at the
/// start of that main loop; paced, the warp spreads them over it. Never on the warp's last tile
/// (the consumers' own last tile waits for its block). `benches/gemm_epilogue.rs` times each
/// against the default; no launcher picks one (measured in BENCHMARKS.md, session 20: a fixed
/// pause helps a little at 4096³ and ruins a main loop too short for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EpiloguePace {
    /// Each band as soon as the warp gets to it (the default).
    #[default]
    Off,
    /// A pause of this many nanoseconds after each 8-row band.
    Fixed(u32),
    /// Band `q` of the tile's `Q` done no earlier than `(q + 1) / Q` of `percent` % of the
    /// time from the previous hand-over to this one (the last main loop's length, read from
    /// `%globaltimer`): the pass spread over that share of the next main loop, whatever its
    /// length. A tile the warp did not have to wait for (it is behind) is not paced.
    MainLoop(u32),
}

/// An epilogue warp's pacing ([`EpiloguePace`], not `Off`): the band pacing its
/// [`Epilogue::apply_staged`] takes ([`BandPacing`]) and the registers behind it.
#[derive(Debug, Clone, Copy)]
struct WarpPacing {
    pace: EpiloguePace,
    /// A pause after each band ([`EpiloguePace::Fixed`]) or the band step
    /// ([`EpiloguePace::MainLoop`]) of the current tile, 0 on a tile not paced.
    step: Reg<ty::U32>,
    /// The current tile's hand-over (`%globaltimer`; before it, when the warp began waiting).
    start: Reg<ty::U64>,
    /// The previous hand-over (at first, the warp's start).
    prev: Reg<ty::U64>,
}

impl WarpPacing {
    /// The registers of `pace` (`None` for [`EpiloguePace::Off`]); for
    /// [`EpiloguePace::MainLoop`] the warp's start read as the first "previous hand-over".
    fn declare(k: &mut KernelBuilder, pace: EpiloguePace) -> Result<Option<WarpPacing>> {
        if pace == EpiloguePace::Off {
            return Ok(None);
        }
        let p = WarpPacing {
            pace,
            step: k.reg::<ty::U32>(),
            start: k.reg::<ty::U64>(),
            prev: k.reg::<ty::U64>(),
        };
        if let EpiloguePace::MainLoop(_) = pace {
            // %globaltimer: a 64-bit nanosecond timer (PTX ISA 10.28).
            k.isa().mov_sreg(p.prev, SpecialReg::GlobalTimer)?;
        }
        Ok(Some(p))
    }

    /// What [`Epilogue::with_band_pacing`] takes.
    fn bands(&self) -> BandPacing {
        match self.pace {
            EpiloguePace::MainLoop(_) => BandPacing::Schedule {
                start: self.start,
                step: self.step,
            },
            _ => BandPacing::Pause(self.step),
        }
    }

    /// Before the warp waits for its next block: when it began waiting.
    fn before_wait(&self, k: &mut KernelBuilder) -> Result<()> {
        if let EpiloguePace::MainLoop(_) = self.pace {
            k.isa().mov_sreg(self.start, SpecialReg::GlobalTimer)?;
        }
        Ok(())
    }

    /// Once the block is handed over: the tile's pause or band step (`bands` of them a tile),
    /// 0 on the warp's `last` tile; paced to the main loop, `percent` % of the period since the
    /// previous hand-over over the bands, and 0 where the warp waited less than a quarter of a
    /// step (it is behind).
    fn tile(&self, k: &mut KernelBuilder, last: ptx_isa::Pred, bands: u32) -> Result<()> {
        match self.pace {
            EpiloguePace::Off => Ok(()),
            EpiloguePace::Fixed(ns) => Ok(k.isa().selp(self.step, 0u32, ns, last)?),
            EpiloguePace::MainLoop(percent) => {
                let (now, period, waited) =
                    (k.reg::<ty::U64>(), k.reg::<ty::U64>(), k.reg::<ty::U64>());
                k.isa().mov_sreg(now, SpecialReg::GlobalTimer)?;
                k.isa().sub(period, now, self.prev)?;
                k.isa().sub(waited, now, self.start)?;
                k.isa().mov(self.prev, now)?;
                k.isa().mov(self.start, now)?;
                k.isa().min(period, period, u64::from(u32::MAX))?;
                let (p32, share) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
                k.isa().cvt(p32, period)?;
                k.isa().mul_wide(period, p32, percent)?;
                let step = k.reg::<ty::U64>();
                k.isa().div(step, period, u64::from(100 * bands))?;
                k.isa().cvt(share, step)?;
                let behind = k.isa().pred();
                k.isa().div(step, step, 4u64)?;
                k.isa().setp(CmpOp::Lt, behind, waited, step)?;
                k.isa().or(last, last, behind)?;
                Ok(k.isa().selp(self.step, 0u32, share, last)?)
            }
        }
    }
}

/// A `[m, n]` input of the epilogue loaded by TMA into the consumer warpgroup's C staging block
/// The named barrier three epilogue warps ([`GemmConfig::epilogue_warp_count`]) sync on after
/// each slab (PTX ISA 9.7.13.1 `bar.sync` with a thread count): after the consumers' `1 + cw`
/// and the ping-pong turns' ([`TURN_BARRIER`]).
const EPILOGUE_BARRIER: u32 = TURN_BARRIER + GemmConfig::ROLES.consumers;

/// How C's boxes leave the staging blocks: a TMA store (`None`), or with
/// [`Epilogue::accumulate`] a TMA reduction that adds them to what C holds (`Some(Add)`, PTX
/// ISA 9.7.9.27 `cp.reduce.async.bulk.tensor`).
type CStore = Option<TmaReduceOp>;

/// One box of C from the slab `src` into `dst` (a box of C's tensor map) as `how` says: stored,
/// or reduced into what C holds. Thread scope: the caller elects the thread, and commits.
fn store_c_box(k: &mut KernelBuilder, dst: &TileRef, src: &TileRef, how: CStore) -> Result<()> {
    match how {
        None => k.copy_async(dst, src, None, None, ExecScope::Thread)?,
        Some(op) => k.reduce_async(dst, src, op, ExecScope::Thread)?,
    };
    Ok(())
}

/// After an epilogue pass over the slab at `addr`: its writes fenced for the async proxy (PTX
/// ISA 9.7.13.4.1), the `warps` that wrote it synced (`bar.warp.sync` for one, else
/// [`EPILOGUE_BARRIER`]), and thread `first` stores it by TMA into the box of `map` at
/// `origin` (9.7.9.27), or reduces it into the box (`how`, [`CStore`]).
fn store_slab<O: Elem>(
    k: &mut KernelBuilder,
    (map, origin, how): (&TmaTensor<O>, [Expr; 2], CStore),
    out: ScalarType,
    addr: R32,
    first: ptx_isa::Pred,
    warps: u32,
) -> Result<()> {
    k.fence_proxy_async(Some(StateSpace::Shared(ptx_isa::space::SharedScope::Cta)))?;
    match warps {
        1 => k.isa().bar_warp_sync(0xffff_ffffu32)?,
        n => k.bar_sync(EPILOGUE_BARRIER, Some((32 * n).into()))?,
    }
    k.if_(first, |k| {
        let src = c_slab(out, addr);
        let dst = k.tma_box_at(map, &origin)?;
        store_c_box(k, &dst, &src, how)
    })
    .end()
}

/// An epilogue warp's staged input ([`HopperGemm::staged_input`]): the input ring of slab
/// buffers, the cursor its waits walk (and, with three warps, the one its loads walk ahead),
/// the input's tensor map and gate.
struct SlabInput<O: Elem> {
    name: String,
    ring: Ring,
    at: RingCursor,
    load_at: Option<RingCursor>,
    map: TmaTensor<O>,
    gate: Option<RowGate>,
}

/// What an epilogue warp's pass over a tile takes ([`HopperGemm::epilogue_warp`]).
struct EpilogueWarp<'a, O: Elem> {
    epi: &'a Epilogue,
    staging: &'a Ring,
    cursor: &'a RingCursor,
    input: Option<&'a SlabInput<O>>,
    /// The thread that stores, loads and hands back.
    first: ptx_isa::Pred,
    lane: Var,
    c_map: &'a TmaTensor<O>,
    /// How the slabs go to C ([`CStore`]).
    how: CStore,
    extents: &'a [Expr; 2],
}

/// while its main loop runs ([`HopperGemm::staged_input`]).
#[derive(Debug, Clone)]
struct Staged<O: Elem> {
    tensor: TmaTensor<O>,
    /// The same tensor as a global one ([`HopperGemm::staged_input_direct`]): the epilogue
    /// warps read it from there into registers instead of loading it by TMA.
    direct: Option<Buffer<O>>,
    /// The consumer warpgroup's side of the staging ring: its own block (stage = its index),
    /// one phase a tile.
    cursor: Option<RingCursor>,
    /// The current tile's block of the tensor: its first row and column.
    origin: Option<[Expr; 2]>,
    /// The current tile's M-tile, which [`Staged::gate`] waits for.
    row_tile: Option<Var>,
    /// A gate on the input's rows ([`HopperGemm::with_staged_gate`]): another GPU writes them,
    /// and a tile's block is loaded only once the flag of its chunk of rows is up.
    gate: Option<RowGate>,
    /// The k-tile of a cooperative consumer's main loop under whose wgmmas the block is loaded
    /// ([`HopperGemm::with_staged_load_at`]).
    at: StagedLoadAt,
}

/// Where in a tile's main loop a cooperative consumer issues its staged input's load
/// ([`HopperGemm::staged_input`], [`HopperGemm::with_staged_load_at`]); ping-pong consumers
/// load it under their first k-tile, epilogue warps slab by slab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StagedLoadAt {
    /// Under the middle k-tile's wgmmas: the previous tile's store, issued just before the main
    /// loop, has long read the block, and half the main loop hides the load (a local input).
    #[default]
    Middle,
    /// Under the wgmmas of k-tile `n` of the tile's main loop (counted from 0; the last k-tile
    /// where the loop is shorter): the whole main loop hides the load, for an input that comes
    /// across the links ([`crate::library::tp`]); the loading thread first waits until the
    /// previous tile's store has read the block (`cp.async.bulk.wait_group.read 0`).
    KTile(u32),
    /// Slab by slab (the block's [`GemmConfig::bn`] / 64 slabs of 64 columns): slab `s` under
    /// the wgmmas of k-tile `first + s · every` (the last k-tile where the loop is shorter).
    /// With slab 0 the loading thread passes the gate, waits for the previous tile's store to
    /// read the block and announces the whole block's bytes; each later slab is one TMA load
    /// on the same `full` barrier. An input that comes across the links: no k-tile puts a whole
    /// block's remote loads ahead of the producer's loads of A and B in the SM's TMA unit.
    Spread {
        /// The k-tile of slab 0.
        first: u32,
        /// K-tiles from one slab's load to the next's.
        every: u32,
    },
}

/// The scales of [`super::Scaling::Block`]: `scale_a` `[k_blocks, m]` (A's 1 x 128 blocks,
/// M-major), `scale_b` `[n_blocks, k_blocks]` (B's 128 x 128 blocks), `m` (the last row a
/// scale load may read) and `n_blocks` (the last block row of B's scales one may read). A
/// grouped GEMM's have a group dimension
/// ([`super::grouped::schedule::declare_block_scales`]), indexed through the tile's
/// [`GroupTile`].
#[derive(Debug, Clone)]
struct BlockScales {
    a: ScaleA,
    b: Buffer<ty::F32>,
    m: Var,
    n_blocks: Var,
}

/// The output scale of an FP8 GEMM's epilogue: a parameter by value, or a device tensor of one
/// f32.
#[derive(Debug, Clone)]
enum OutScaleParam {
    Value(Reg<ty::F32>),
    Pointer(Box<Buffer<ty::F32>>),
}

/// For the m64nN f32 accumulator fragment of a warpgroup (PTX ISA 9.7.15.5.1.1.1): each value's
/// column relative to the thread's first, `2 (t % 4)`. Checked against every thread of the
/// fragment.
fn fragment_cols(k: &KernelBuilder, tv: &layouts::fragment::TvLayout) -> Result<Vec<i64>> {
    let bad = || k.error("the accumulator fragment's columns are not 2 (t % 4) + an offset");
    let col = |t: i64, v: i64| tv.coord(t, v).map(|(_, c)| c).map_err(|_| bad());
    let offsets = (0..tv.values())
        .map(|v| col(0, v))
        .collect::<Result<Vec<i64>>>()?;
    for t in 0..tv.threads() {
        for (v, &o) in offsets.iter().enumerate() {
            if col(t, v as i64)? != 2 * (t % 4) + o {
                return Err(bad());
            }
        }
    }
    Ok(offsets)
}

/// Where the consumers find A's block scales: in global memory (each consumer thread loads its
/// rows' scales at each k-tile), or in each stage's scale slot
/// ([`GemmConfig::smem_scales`]: the producer loads the tile's 128 row scales of the k-tile
/// with the stage, one TMA box of `1 x 128`).
#[derive(Debug, Clone)]
enum ScaleA {
    /// `scale_a` `[k_blocks, m]` as a global tensor.
    Global(Buffer<ty::F32>),
    /// `scale_a` `[k_blocks, m]` as a TMA tensor in `1 x 128` boxes.
    Stage(TmaTensor<ty::F32>),
}

/// With [`GemmConfig::smem_scales`], where a consumer thread reads its k-tile's scales: the
/// shared address of stage 0's scale slot (a stage's is [`GemmConfig::SCALE_SLOT_BYTES`]
/// further per stage) and the thread's rows within the tile (A's scales of the slot are the
/// tile's 128 rows in order, B's follow them).
#[derive(Debug)]
struct SlotScales {
    base: R32,
    rows: Vec<Var>,
}

/// What the producer needs to fill a tile's stages' scale slots ([`GemmConfig::smem_scales`]):
/// A's scale map, the tile's block rows of B's scales, and stage 0's slot address.
#[derive(Debug)]
struct ProducerScales<'a> {
    a: &'a TmaTensor<ty::F32>,
    nblocks: Vec<Var>,
    base: R32,
}

/// What one consumer thread needs to promote each k-tile's partial accumulator under
/// [`super::Scaling::Block`] for one tile: the partial fragment, where its rows' scales of A are
/// (clamped to rows that exist: an edge tile's missing rows are never stored) and its tile's
/// row of B's scales. Built by [`HopperGemm::consumer`] for each tile. A 256-wide tile spans
/// two 128-column scale blocks of B: its k-tile's wgmmas run one 128-column half at a time into
/// a half-width partial, each half promoted with its own scale of B.
#[derive(Debug)]
pub struct Promotion<'a> {
    scales: &'a BlockScales,
    /// The partial accumulator (the fragment of `acc`, or of one 128-column half of it).
    part: &'a Buffer<ty::F32>,
    /// With [`GemmConfig::pipelined_promotion`]: the second partial (k-tiles alternate between
    /// the two) and the cursor of the stages being released, one k-tile behind the one being
    /// waited for.
    pipelined: Option<(&'a Buffer<ty::F32>, &'a RingCursor)>,
    /// The thread's distinct rows' indices into A's scales (2 for the m64nNk16 fragment).
    rows: Vec<Var>,
    /// For each value of the fragment, which of `rows` it lies in.
    row_of: Vec<usize>,
    /// The tile's block rows of B's scales, one per 128-column block its columns touch
    /// (clamped to rows that exist: an edge tile's second block may lie past N).
    nblocks: Vec<Var>,
    /// For each value of `part`, its 64-column chunk of `part` (PTX ISA 9.7.15.5.1.1.1: a
    /// thread's values walk the columns in steps of 8).
    chunk_of: Vec<usize>,
    /// A 192-wide tile's [`HopperGemm::straddle`]: whether its odd chunks lie in the next
    /// block of B's scales.
    straddle: Option<ptx_isa::Pred>,
    /// A grouped GEMM's tile: its group's scales ([`GroupTile::scale_a_at`],
    /// [`GroupTile::scale_b_at`]).
    group: Option<GroupTile>,
    /// With [`GemmConfig::smem_scales`]: the scales are read from the stage's slot, after its
    /// full wait, instead of from global memory.
    slot: Option<&'a SlotScales>,
}

/// One k-tile's scales of a thread: B's per 128-column block of the tile, A's per row.
type KtileScales = (Vec<Reg<ty::F32>>, Vec<Reg<ty::F32>>);

impl Promotion<'_> {
    /// Before k-tile `kt`'s full wait: its scales from global memory (see
    /// [`Promotion::load`]), or `None` when they come with the stage (read after the wait by
    /// [`Promotion::after_wait`]).
    fn before_wait(&self, k: &mut KernelBuilder, kt: Var) -> Result<Option<KtileScales>> {
        match self.slot {
            Some(_) => Ok(None),
            None => self.load(k, kt).map(Some),
        }
    }

    /// After the full wait of `stage`: the scales [`Promotion::before_wait`] loaded, or with
    /// [`GemmConfig::smem_scales`] the stage's slot's, read with `ld.shared` (the producer's
    /// TMA load and `st.shared` are complete and visible once the full barrier's phase is,
    /// PTX ISA 9.7.13.15.16).
    fn after_wait(
        &self,
        k: &mut KernelBuilder,
        stage: R32,
        early: Option<KtileScales>,
    ) -> Result<KtileScales> {
        let (Some(slot), None) = (self.slot, &early) else {
            return early.ok_or_else(|| k.error("block scales neither loaded nor in the stage"));
        };
        let at = k.reg::<ty::U32>();
        k.mad_lo(at, stage, GemmConfig::SCALE_SLOT_BYTES, slot.base)?;
        let view =
            k.shared_view::<ty::F32>("scale_slot", at, &[GemmConfig::SCALE_SLOT_BYTES / 4], 128)?;
        let sb = (0..self.nblocks.len() as u32)
            .map(|h| k.load(&view, [GemmConfig::BM + h]))
            .collect::<Result<_>>()?;
        let sa = slot
            .rows
            .iter()
            .map(|&r| k.load(&view, [r]))
            .collect::<Result<_>>()?;
        Ok((sb, sa))
    }

    /// This k-tile's scales: `sb[nblock, kt]` of each of the tile's blocks and `sa[kt, row]`
    /// of the thread's rows (a grouped tile's through its [`GroupTile`]), loaded before the
    /// stage is waited for and used only after the wgmmas, so their latency runs under the
    /// wgmmas.
    fn load(&self, k: &mut KernelBuilder, kt: Var) -> Result<KtileScales> {
        let ScaleA::Global(scale_a) = &self.scales.a else {
            return Err(k.error("A's scales are in the stages, not in global memory"));
        };
        let kt = Expr::from(kt);
        let g = self.group.as_ref();
        // Each scale at its index (through the group's tensors for a grouped tile).
        let each = |k: &mut KernelBuilder,
                    buf: &Buffer<ty::F32>,
                    of: &[Var],
                    at: &dyn Fn(Expr) -> Vec<Expr>| {
            of.iter()
                .map(|&i| k.load(buf, at(i.into())))
                .collect::<Result<Vec<_>>>()
        };
        let sb = each(k, &self.scales.b, &self.nblocks, &|nb| match g {
            Some(g) => g.scale_b_at(nb, kt.clone()),
            None => vec![nb, kt.clone()],
        })?;
        let sa = each(k, scale_a, &self.rows, &|r| match g {
            Some(g) => g.scale_a_at(kt.clone(), r),
            None => vec![kt.clone(), r],
        })?;
        Ok((sb, sa))
    }

    /// `acc += part·(sa[row]·sb)` for part `half` of the tile (`part` holds its columns:
    /// the whole tile, or a 128-column half of a 256-wide one; `acc`'s values of that part are
    /// the `part.len()` from `half·part.len()`, as [`half_fragment`] checked), one `fma` per
    /// value (PTX ISA 9.7.3.6), after the part's wgmmas are waited for. `sb` is the scale of
    /// B's block of each value's 64-column chunk `c` (of the tile): block `c / 2` of the
    /// tile's, or for an odd chunk of a straddling tile (192 wide, first column in a block's
    /// second half) the next one, picked by `selp` (PTX ISA 9.7.5.3). `sa·sb` is multiplied
    /// once per row and chunk, not per value.
    fn promote(
        &self,
        k: &mut KernelBuilder,
        acc: &Buffer<ty::F32>,
        part: &Buffer<ty::F32>,
        (sb, sa): (&[Reg<ty::F32>], &[Reg<ty::F32>]),
        half: usize,
    ) -> Result<()> {
        let (Some(acc), Some(part)) = (acc.regs(), part.regs()) else {
            return Err(k.error("the accumulators are not register fragments"));
        };
        let Some(acc) = acc.get(half * part.len()..) else {
            return Err(k.error("a promoted part past the tile"));
        };
        let chunks = self.chunk_of.iter().max().map_or(1, |&c| c + 1);
        // Per chunk of `part`: its scale of B, then sa·sb per row.
        let mut scale = Vec::with_capacity(chunks);
        for local in 0..chunks {
            let c = half * chunks + local;
            let at = |k: &KernelBuilder, i: usize| {
                sb.get(i)
                    .copied()
                    .ok_or_else(|| k.error("a promoted chunk past the tile's blocks of B's scales"))
            };
            let b = match self.straddle {
                Some(odd) if c % 2 == 1 => {
                    let (low, high) = (at(k, c / 2)?, at(k, c / 2 + 1)?);
                    let b = k.reg::<ty::F32>();
                    k.selp(b, high, low, odd)?;
                    b
                }
                _ => at(k, c / 2)?,
            };
            let rows = sa
                .iter()
                .map(|&a| k.mul_of(a, b))
                .collect::<Result<Vec<_>>>()?;
            scale.push(rows);
        }
        for (((&d, &p), &row), &c) in acc.iter().zip(part).zip(&self.row_of).zip(&self.chunk_of) {
            k.fma(d, p, scale[c][row], d)?;
        }
        Ok(())
    }
}

/// For the m64nNk16 f32 accumulator fragment of a warpgroup (PTX ISA 9.7.15.5.1.1.1): the rows
/// thread 0 holds, relative to its first (0 and 8), and for each value which of them it lies
/// in. Checked against every thread of the fragment: thread `t` holds rows
/// `16 (t / 32) + (t % 32) / 4` plus the same offsets, which [`HopperGemm::consumer`] computes at
/// run time.
fn fragment_rows(
    k: &KernelBuilder,
    tv: &layouts::fragment::TvLayout,
) -> Result<(Vec<i64>, Vec<usize>)> {
    let bad =
        || k.error("the accumulator fragment's rows are not 16 (t / 32) + (t % 32) / 4 + {0, 8}");
    let row = |t: i64, v: i64| tv.coord(t, v).map(|(r, _)| r).map_err(|_| bad());
    let mut offsets: Vec<i64> = Vec::new();
    let mut row_of = Vec::new();
    for v in 0..tv.values() {
        let r = row(0, v)?;
        let i = match offsets.iter().position(|&o| o == r) {
            Some(i) => i,
            None => {
                offsets.push(r);
                offsets.len() - 1
            }
        };
        row_of.push(i);
    }
    for t in 0..tv.threads() {
        let base = 16 * (t / 32) + (t % 32) / 4;
        for v in 0..tv.values() {
            if row(t, v)? != base + offsets[row_of[v as usize]] {
                return Err(bad());
            }
        }
    }
    Ok((offsets, row_of))
}

/// The partial accumulator's fragment for an accumulator fragment `tv` of a tile `bn` wide:
/// `tv` itself up to 128 columns and for 192 (one partial; [`Promotion::promote`] scales its
/// chunks by block); for 256, the m64n128 fragment of one 128-column half, checked
/// to be `tv`'s first half value for value in every thread, and its second half shifted by 128
/// columns (PTX ISA 9.7.15.5.1.1.1: a thread's values walk the columns in steps of 8).
fn half_fragment(
    k: &KernelBuilder,
    tv: &layouts::fragment::TvLayout,
    bn: u32,
    input: ScalarType,
) -> Result<layouts::fragment::TvLayout> {
    if bn % super::SCALE_BLOCK != 0 || bn <= super::SCALE_BLOCK {
        return Ok(tv.clone());
    }
    let half = layouts::fragment::wgmma::accumulator(i64::from(super::SCALE_BLOCK), input)
        .map_err(|e| k.error(e.to_string()))?;
    let bad = || k.error("the accumulator's 128-column halves are not the m64n128 fragment");
    let blocks = i64::from(bn / super::SCALE_BLOCK);
    if tv.values() != half.values() * blocks || tv.threads() != half.threads() {
        return Err(bad());
    }
    for t in 0..half.threads() {
        for v in 0..half.values() {
            let (r, c) = half.coord(t, v).map_err(|_| bad())?;
            for b in 0..blocks {
                let at = tv.coord(t, b * half.values() + v).map_err(|_| bad())?;
                if at != (r, c + b * i64::from(super::SCALE_BLOCK)) {
                    return Err(bad());
                }
            }
        }
    }
    Ok(half)
}

/// A tile of the schedule: its block coordinates in M (tiles of [`GemmConfig::bm`] rows) and N
/// (tiles of `bn`).
#[derive(Debug, Clone, Copy)]
pub struct Tile {
    /// The M-tile.
    pub mb: Var,
    /// The tile's rows ([`GemmConfig::bm`]).
    pub rows: u32,
    /// With split-K, the part of the reduction ([`GemmConfig::split_k`]).
    pub ksplit: Option<Var>,
    /// The N-tile.
    pub nb: Var,
    /// A grouped GEMM's group of the tile (`mb` is then the M-tile within the group).
    pub group: Option<GroupTile>,
    /// The persistent grid's item the tile came from ([`TileScheduler::is_last`] reads it).
    pub item: Var,
    /// With stream-K ([`GemmConfig::stream_k`]), the unit of the tile this CTA runs: its
    /// k-tiles and the tile's parts.
    pub stream: Option<StreamUnit>,
}

impl Tile {
    /// The tile's first row in A's (and C's) row coordinates: `rows · mb`, or a grouped tile's
    /// [`GroupTile::row0`] (a global row of the contiguous form, a row within the group of the
    /// masked one).
    pub fn first_row(&self) -> Expr {
        match self.group {
            Some(g) => g.row0.into(),
            None => Expr::from(self.mb) * self.rows,
        }
    }
}

/// The tile schedule a GEMM walks: the dense one, or the grouped one over all groups' tiles.
/// Both roles read their tiles from it ([`TileScheduler`]).
#[derive(Debug, Clone)]
pub enum Tiles {
    /// One problem's tiles: [`GemmConfig::bm`] x `bn` tiles in bands of `group_m` M-tiles, in
    /// CTA pairs with `cluster_m = 2` ([`GridSchedule`]); the tiles' height beside it.
    Dense(GridSchedule, u32),
    /// All groups' tiles ([`GroupedSchedule`]).
    Grouped(Box<GroupedSchedule>),
}

impl TileScheduler for Tiles {
    type Tile = Tile;

    #[track_caller]
    fn for_each_tile(&self, k: &mut KernelBuilder, body: impl TileBody<Tile>) -> Result<()> {
        match self {
            Tiles::Dense(s, rows) => s.for_each_tile(k, |k, t| body(k, Tile::dense(t, *rows))),
            Tiles::Grouped(s) => s.for_each_tile(k, body),
        }
    }

    fn is_last(&self, k: &mut KernelBuilder, tile: &Tile) -> Result<ptx_isa::Pred> {
        match self {
            Tiles::Dense(s, _) => match tile.stream {
                Some(unit) => Ok(unit.last),
                None => s.grid().is_last(k, tile.item),
            },
            Tiles::Grouped(s) => s.is_last(k, tile),
        }
    }
}

impl Tiles {
    /// The dense schedule without each CTA's last tile ([`GridSchedule::but_last`]): the
    /// epilogue warps' (`HopperGemm::own_last_tile`).
    pub fn but_last(&self, k: &mut KernelBuilder) -> Result<Tiles> {
        match self {
            Tiles::Dense(s, rows) => Ok(Tiles::Dense(s.but_last(k)?, *rows)),
            Tiles::Grouped(_) => Err(k.error("a grouped schedule without its last tiles")),
        }
    }

    /// [`TileScheduler::for_each_tile`] for one consumer of [`Turns`] (ping-pong): its share of
    /// the CTA's tiles. The dense schedule only ([`GemmConfigError::PingPong`]).
    ///
    /// [`GemmConfigError::PingPong`]: super::GemmConfigError::PingPong
    #[track_caller]
    pub fn for_each_turn(
        &self,
        k: &mut KernelBuilder,
        turns: Turns,
        body: impl FnOnce(&mut KernelBuilder, Tile, Turn) -> Result<()>,
    ) -> Result<()> {
        match self {
            Tiles::Dense(s, rows) => {
                s.for_each_turn(k, turns, |k, t, turn| body(k, Tile::dense(t, *rows), turn))
            }
            Tiles::Grouped(_) => Err(k.error("consumers taking turns at a grouped schedule")),
        }
    }
}

impl Tile {
    /// The tile `t` of a dense schedule of tiles `rows` high.
    fn dense(t: GridTile, rows: u32) -> Tile {
        Tile {
            mb: t.row,
            rows,
            ksplit: t.split,
            nb: t.col,
            group: None,
            item: t.item,
            stream: t.unit,
        }
    }
}

impl<I: Elem, O: Elem, J: Elem> HopperGemm<I, O, J> {
    /// Declares the GEMM's parameters (once: the signature is what the launcher checks), its
    /// block (384 threads, one CTA per SM), cluster and persistent grid, lays out its shared
    /// memory (the stage ring, C staging and barriers of `GemmConfig::smem_layout`) and its
    /// barrier arrays. `I`, `J` and `O` must be `cfg`'s A, B ([`GemmConfig::b_type`]) and C types.
    #[track_caller]
    pub fn declare(
        k: &mut KernelBuilder,
        cfg: GemmConfig,
        mode: WaitMode,
    ) -> Result<HopperGemm<I, O, J>> {
        let invalid = |k: &KernelBuilder, e: &dyn std::fmt::Display| k.error(e.to_string());
        cfg.validate().map_err(|e| invalid(k, &e))?;
        if I::DTYPE != cfg.input || J::DTYPE != cfg.b_type() || O::DTYPE != cfg.output {
            return Err(k.error(format!(
                "{} x {} / {} element types for a {} x {} -> {} configuration",
                I::DTYPE.name(),
                J::DTYPE.name(),
                O::DTYPE.name(),
                cfg.input.name(),
                cfg.b_type().name(),
                cfg.output.name()
            )));
        }
        let layout = cfg.smem_layout().map_err(|e| invalid(k, &e))?;
        let mut sync = BarrierSync::new(&cfg.name(), mode);
        sync.declare_globals(k.module_mut())?;

        // The extents and what the kernel relies on of them: K a multiple of 16 bytes (a tensor
        // map's row pitch is a multiple of 16 bytes: 8 16-bit or 16 8-bit elements; the host
        // pads other 16-bit K and refuses other 8-bit K), N even for the paired
        // epilogue stores, a multiple of 8 for the TMA-store epilogue (C's row pitch).
        let one = ExtentFacts::NONE.at_least(1);
        let n_multiple = if cfg.tma_store {
            8
        } else if cfg.n_even && !cfg.swap_ab {
            2
        } else {
            1
        };
        let m = k.symbol_with("m", one)?;
        let n = k.symbol_with("n", one.multiple_of(n_multiple))?;
        let kk = k.symbol_with("k", one.multiple_of(u64::from(16 / cfg.input.bytes())))?;
        let bk = cfg.bk();
        // K-major operands in boxes of one 128-byte swizzle row of K, read through L2 in 256-byte
        // sectors (both are read by many CTAs).
        let operand = |rows: u32| {
            TmaBox::new([rows, bk])
                .swizzle(SwizzleMode::B128)
                .l2_promotion(L2Promotion::B256)
        };
        // A grouped GEMM's operands have a group dimension (and C a TMA view beside it).
        let grouped = match cfg.grouping {
            Grouping::None => None,
            _ => Some(declare_operands::<I, J, O>(k, &cfg, [m, n, kk], operand)?),
        };
        let (a, b) = match &grouped {
            Some(ops) => (ops.a.clone(), ops.b.clone()),
            None => (
                k.tma_tensor::<I>(
                    "a",
                    [m.into(), Expr::from(kk)],
                    operand(cfg.bm() / cfg.cluster_n),
                )?,
                k.tma_tensor::<J>(
                    "b",
                    [n.into(), Expr::from(kk)],
                    operand(cfg.bn / cfg.cluster_m),
                )?,
            ),
        };
        let c = if let Some(ops) = &grouped {
            ops.c.clone()
        } else if cfg.tma_store {
            // C in 64 x 64 boxes with the 128B swizzle of the staging slabs; the TMA clips at
            // the edges.
            Output::Tma(k.tma_tensor::<O>("c", [m.into(), Expr::from(n)], c_box())?)
        } else if cfg.stream_k {
            // Stream-K's parts: two slots a CTA, in fragment order ([`super::fixup`]).
            Output::Partials(super::fixup::declare_stream_partials(k, &cfg)?)
        } else if cfg.split_fixup {
            // The kernel sums the parts itself: its workspace in fragment order
            // ([`super::fixup`]; C alone is transposed when swapped).
            Output::Partials(super::fixup::declare_partials(k, &cfg)?)
        } else if cfg.split_k > 1 {
            // Pairs of f32 stored from registers: rows of an even N are 8-byte aligned.
            // Swap-AB's partials are stored transposed ([`super::swap_ab`]): `[split_k, n, m]`.
            let transposed = cfg.swap_ab;
            let align = if cfg.n_even && !transposed { 8 } else { 4 };
            let parts = match transposed {
                true => [Expr::from(cfg.split_k), n.into(), m.into()],
                false => [Expr::from(cfg.split_k), m.into(), n.into()],
            };
            Output::Partials(k.tensor::<ty::F32>(
                "partials",
                parts,
                TensorOpts::default().align(align),
            )?)
        } else if cfg.swap_ab {
            // The problem's C `[m, n]` is the kernel's `[n, m]` ([`super::swap_ab`]).
            Output::Global(k.tensor::<O>("c", [n, m], TensorOpts::default())?, None)
        } else {
            let c = k.tensor::<O>("c", [m, n], TensorOpts::default().align(cfg.c_align()))?;
            let ab = if cfg.alpha_beta {
                Some((k.scalar::<ty::F32>("alpha")?, k.scalar::<ty::F32>("beta")?))
            } else {
                None
            };
            Output::Global(c, ab)
        };
        let fixup = match (&c, cfg.split_fixup || cfg.stream_k) {
            (Output::Partials(p), true) => {
                Some(super::fixup::Fixup::<O>::declare(k, &cfg, [m, n], p)?)
            }
            _ => None,
        };
        let (mut scales, mut block_scales) = (None, None);
        match cfg.scaling {
            super::Scaling::None => {}
            super::Scaling::PerTensor => {
                let scale = |k: &mut KernelBuilder, name: &str| {
                    k.tensor::<ty::F32>(name, [1u32], TensorOpts::default())
                };
                scales = Some([scale(k, "scale_a")?, scale(k, "scale_b")?]);
            }
            super::Scaling::Block => {
                // The scale grids' extents are symbols of their own, read from the scale
                // tensors' shapes; the launcher checks they are ceil(k / 128) and ceil(n / 128).
                let kb = k.symbol_with("k_blocks", one)?;
                let nb = k.symbol_with("n_blocks", one)?;
                let opts = TensorOpts::default;
                let (a, b) = match &grouped {
                    Some(ops) => {
                        let [a, b] =
                            declare_block_scales(k, cfg.grouping, ops.groups, m, [kb, nb])?;
                        (ScaleA::Global(a), b)
                    }
                    None => {
                        // With the scales in the stages, A's are loaded by TMA: a 1 x 128 box
                        // is one k-block's scales of a tile's rows (512 contiguous bytes).
                        let a = if cfg.smem_scales {
                            let tile_rows = TmaBox::new([1, GemmConfig::BM]);
                            ScaleA::Stage(k.tma_tensor::<ty::F32>("scale_a", [kb, m], tile_rows)?)
                        } else {
                            ScaleA::Global(k.tensor::<ty::F32>("scale_a", [kb, m], opts())?)
                        };
                        (a, k.tensor::<ty::F32>("scale_b", [nb, kb], opts())?)
                    }
                };
                block_scales = Some(BlockScales {
                    a,
                    b,
                    m,
                    n_blocks: nb,
                });
            }
        }

        // The optional epilogue operands of an FP8 GEMM, after the scales.
        let bias = match cfg.bias {
            None => None,
            Some(ScalarType::Bf16) => Some(EpilogueTensor::Bf16(k.tensor::<ty::Bf16>(
                "bias",
                [n],
                TensorOpts::default(),
            )?)),
            Some(ScalarType::F32) => Some(EpilogueTensor::F32(k.tensor::<ty::F32>(
                "bias",
                [n],
                TensorOpts::default(),
            )?)),
            Some(_) => return Err(invalid(k, &super::GemmConfigError::Epilogue)),
        };
        let out_scale = match cfg.out_scale {
            super::OutScale::None => None,
            super::OutScale::Value => Some(OutScaleParam::Value(k.scalar::<ty::F32>("out_scale")?)),
            super::OutScale::Pointer => Some(OutScaleParam::Pointer(Box::new(
                k.tensor::<ty::F32>("out_scale", [1u32], TensorOpts::default())?,
            ))),
        };

        // setmaxnreg needs a register cap at entry: __launch_bounds__(384, 1).
        let tid = cfg.roles().declare(k)?;
        let ctas = cfg.cluster_size();
        let rank = if ctas > 1 {
            let [rank] = k.cta_id_in_cluster([ctas], None)?;
            // The peers arrive on this CTA's barriers from the same kernel: the cluster's shape
            // is part of the kernel (PTX ISA 11.4.5 `.reqnctapercluster`).
            k.directive(Directive::ReqNctaPerCluster([ctas, 1, 1]))?;
            Some(rank)
        } else {
            None
        };
        let cluster = rank.map(|rank| ClusterTiles {
            rank,
            size: ctas,
            along: if cfg.cluster_n > 1 {
                Along::N
            } else {
                Along::M
            },
        });
        let ktiles_e = Expr::ceil_div(kk, bk);
        let schedule = match grouped {
            Some(ops) => Tiles::Grouped(Box::new(GroupedSchedule::new(
                k,
                cfg.grouping,
                ops.groups,
                m,
                n,
                cfg.bn,
                cfg.group_m,
                ops.rows,
            )?)),
            None => Tiles::Dense(
                GridSchedule::new(
                    k,
                    Expr::ceil_div(m, cfg.bm()),
                    Expr::ceil_div(n, cfg.bn),
                    cfg.group_m,
                    cluster,
                )?
                .with_splits(k, cfg.split_k)?,
                cfg.bm(),
            ),
        };
        // Stream-K: the tiles' k-iterations dealt out over the persistent grid.
        let schedule = match schedule {
            Tiles::Dense(s, rows) if cfg.stream_k => {
                Tiles::Dense(s.stream_k(k, ktiles_e.clone())?, rows)
            }
            s => s,
        };
        let ktiles = k.let_("ktiles", ktiles_e)?;
        // Split-K: the k-tiles of each part (the last part may have fewer, or none).
        let k_part = match cfg.split_k {
            1 => None,
            s => Some(k.let_("k_part", Expr::ceil_div(ktiles, s))?),
        };

        // The dynamic shared array, aligned up to what its tiles need (1024 bytes: 128B-swizzled
        // tiles must sit on a 1024-byte boundary, PTX ISA 9.7.15.5.1.2); the layout's bytes
        // include the slack the rounding may skip.
        let align = layout.base_align;
        let raw = k.pool_bytes("gemm", layout.launch_bytes, align)?;
        let base = k.reg::<ty::U32>();
        k.add(base, raw, align - 1)?;
        k.and(base, base, !(align - 1))?;
        let fragment = layouts::fragment::wgmma::accumulator(cfg.bn as i64, cfg.input)
            .map_err(|e| invalid(k, &e))?;
        // The ring's barriers with the init counts the pool placed them with; each stage is
        // released by the leaders of the consumer warpgroups that read it (and the peers' in a
        // cluster).
        let readers = cfg.stage_readers();
        let ring = Ring::declare(k, &mut sync, "", layout.ring.clone(), base, readers)?
            .in_cluster(rank, ctas);
        // The two-block rings (one arrival a phase): the staging blocks (each block's own
        // warpgroup, or its epilogue warp, loads and reads it) and the epilogue warps' input slabs.
        let mut pair_ring = |name: &str, pipe: &Option<smem::pipeline::Pipeline>| match pipe {
            Some(pipe) => Ring::declare(k, &mut sync, name, pipe.clone(), base, 1).map(Some),
            None => Ok(None),
        };
        let staging = pair_ring("c_staging", &layout.c_staging)?;
        let epilogue_input = pair_ring("epilogue_input", &layout.epilogue_input)?;
        Ok(HopperGemm {
            cfg,
            a,
            b,
            c,
            scales,
            block_scales,
            alpha: None,
            bias,
            out_scale,
            tid,
            extents: [m, n, kk],
            schedule,
            ktiles,
            k_part,
            fixup,
            rank,
            base,
            layout,
            sync,
            ring,
            fragment,
            epilogue: Epilogue::new(),
            gate: None,
            staging,
            staged: None,
            handoff: None,
            last_tile: None,
            epilogue_input,
            pace: EpiloguePace::Off,
        })
    }

    /// The whole kernel: [`HopperGemm::init_barriers`], then warpgroup 0 runs
    /// [`HopperGemm::producer`] and warpgroups 1 and 2 [`HopperGemm::consumer`], then
    /// [`HopperGemm::finish`].
    #[track_caller]
    pub fn build(self, mut k: KernelBuilder) -> Result<GemmKernel> {
        // Both branches use the GEMM, one after the other.
        let (tid, roles) = (self.tid, self.roles());
        let gemm = RefCell::new(self);
        gemm.borrow_mut().init_barriers(&mut k)?;
        roles.run(
            &mut k,
            tid,
            |k| gemm.borrow_mut().producer(k),
            |k, me| gemm.borrow_mut().consumer(k, me),
        )?;
        gemm.into_inner().finish(k)
    }

    /// The GEMM's roles ([`GemmConfig::roles`]): a producer warpgroup and two consumer
    /// warpgroups (64 rows of each tile each), with the budgets of its configuration.
    pub fn roles(&self) -> WarpSpecialized {
        self.cfg.roles()
    }

    /// The thread's index in the CTA (what [`HopperGemm::roles`] run with).
    pub fn tid(&self) -> Var {
        self.tid
    }

    /// The extent `m` (rows of A and C), for the tensors a user's epilogue declares.
    pub fn m(&self) -> Var {
        self.extents[0]
    }

    /// The extent `n` (rows of B, columns of C).
    pub fn n(&self) -> Var {
        self.extents[1]
    }

    /// The extent `k` (the reduction).
    pub fn k(&self) -> Var {
        self.extents[2]
    }

    /// The GEMM with `epilogue` applied to each tile's accumulators after the library's own
    /// fusions (per-tensor FP8 scales, bias, output scale) and before `alpha`/`beta` with C and
    /// the store. Its `[m, n]` tensors are read and written with C's tiling (whole tiles
    /// without bounds); a grouped GEMM takes only ops that touch no `[m, n]` tensor.
    pub fn with_epilogue(mut self, epilogue: Epilogue) -> HopperGemm<I, O, J> {
        self.epilogue = epilogue;
        self
    }

    /// The GEMM with its epilogue warps ([`GemmConfig::epilogue_warps`]) pacing their passes as
    /// `pace` says ([`EpiloguePace`]; nothing without epilogue warps).
    pub fn with_epilogue_pace(mut self, pace: EpiloguePace) -> HopperGemm<I, O, J> {
        self.pace = pace;
        self
    }

    /// Declares `name`, a `[m, n]` tensor of C's element type (row-major, 16-byte aligned rows:
    /// a multiple of 8 columns, as C's) that the epilogue reads, typically a residual
    /// (`Epilogue::residual(&it)`), as a TMA tensor in C's 64 x 64 boxes, 128B-swizzled. Each
    /// consumer warpgroup loads its block of it into its own C staging block by TMA while its
    /// main loop runs (under the middle k-tile's wgmmas when the consumers share tiles, the
    /// first's when they take turns: the block's previous store has read it by then), and the
    /// epilogue reads it there (`ldmatrix`, in the accumulator
    /// fragment's layout) instead of from global memory; the output is then written into the
    /// same block and stored by TMA. Past the edges of C the block holds zeros (the TMA fills
    /// them) and is never stored. With [`GemmConfig::epilogue_warps`] the epilogue warps load
    /// it instead, a 64 x 64 slab at a time into a buffer of their own, just before they work
    /// on that slab of the block. Launch with the device tensor, like C. One staged input a
    /// GEMM; it needs the TMA-store epilogue of a dense GEMM (no grouping, split-K or block
    /// scales).
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::KernelBuilder;
    /// use ptxkit::library::gemm::{GemmConfig, HopperGemm};
    /// use ptxkit::parts::Epilogue;
    /// use ptxkit::smem::pipeline::sync::WaitMode;
    ///
    /// let cfg = GemmConfig::large();
    /// let mut k = KernelBuilder::new("gemm_residual", Target::Sm90a);
    /// let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    /// let residual = gemm.staged_input(&mut k, "residual")?;
    /// let built = gemm.with_epilogue(Epilogue::new().residual(&residual)).build(k)?;
    /// assert_eq!(built.built.signature().params.len(), 7); // m, n, k, a, b, c, residual
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn staged_input(&mut self, k: &mut KernelBuilder, name: &str) -> Result<TmaTensor<O>> {
        if let Some(s) = &self.staged {
            return Err(k.error(format!(
                "a second staged input `{name}`: the GEMM stages one (`{}`)",
                s.tensor.name()
            )));
        }
        let refused = match (&self.c, self.staging.is_some()) {
            (Output::Tma(_), true) if self.block_scales.is_none() => None,
            (Output::Tma(_), true) => Some("block-scaled FP8"),
            (Output::Grouped { .. }, _) => Some("a grouped GEMM"),
            (Output::Partials(_), _) => Some("split-K"),
            _ => Some("the register epilogue (GemmConfig::tma_store is off)"),
        };
        if let Some(why) = refused {
            return Err(k.error(format!(
                "the staged input `{name}` with {why}: it is loaded into the TMA-store \
                 epilogue's staging blocks of a dense GEMM"
            )));
        }
        let shape = [Expr::from(self.m()), Expr::from(self.n())];
        let tensor = k.tma_tensor::<O>(name, shape, c_box())?;
        self.staged = Some(Staged {
            tensor: tensor.clone(),
            direct: None,
            cursor: None,
            origin: None,
            row_tile: None,
            gate: None,
            at: StagedLoadAt::Middle,
        });
        Ok(tensor)
    }

    /// The GEMM with its staged input ([`HopperGemm::staged_input`]) loaded under the wgmmas of
    /// k-tile `at` of each cooperative consumer's main loop ([`StagedLoadAt`]; the middle one
    /// by default). Ping-pong consumers load it under their first k-tile whatever `at` says.
    #[track_caller]
    pub fn with_staged_load_at(
        mut self,
        k: &KernelBuilder,
        at: StagedLoadAt,
    ) -> Result<HopperGemm<I, O, J>> {
        self.staged_mut(k, "where to load the staged input")?.at = at;
        Ok(self)
    }

    /// The staged input ([`HopperGemm::staged_input`]), or an error about `what` (a setting
    /// of it) on a GEMM without one.
    #[track_caller]
    fn staged_mut(&mut self, k: &KernelBuilder, what: &str) -> Result<&mut Staged<O>> {
        match self.staged.as_mut() {
            Some(staged) => Ok(staged),
            None => Err(k.error(format!(
                "{what} of a GEMM without one (HopperGemm::staged_input)"
            ))),
        }
    }

    /// The GEMM with its staged input ([`HopperGemm::staged_input`]) gated: before the loads of
    /// a tile's block of it (a consumer's under its main loop, or an epilogue warp's slab by
    /// slab) the loading thread waits on `gate` for the chunk holding the tile's rows
    /// ([`RowGate::wait`]: `ld.acquire.sys` until the chunk's flag reaches the launch's epoch,
    /// then `fence.proxy.async.global`). Chunks count the kernel's M-tiles ([`GemmConfig::bm`]
    /// rows). Only that load waits: the main loop starts at once and the tile's epilogue takes
    /// the input when it is there. The owner's GEMM of a tensor-parallel reduce-scatter, whose
    /// staged input is a partial its peer computes ([`crate::library::tp`]).
    #[track_caller]
    pub fn with_staged_gate(
        mut self,
        k: &KernelBuilder,
        gate: RowGate,
    ) -> Result<HopperGemm<I, O, J>> {
        self.staged_mut(k, "a gate on the staged input")?.gate = Some(gate);
        Ok(self)
    }

    /// [`HopperGemm::staged_input`], and the same tensor declared a second time as a global
    /// `[m, n]` tensor `{name}_direct` (16-byte aligned): with [`GemmConfig::epilogue_warps`]
    /// the epilogue warps read each band of it from global memory straight into registers
    /// (`ld.global`, in the band's accumulator column order, [`Epilogue::apply_staged`]) rather
    /// than loading its slabs by TMA into shared memory and reading them back with `ldmatrix`:
    /// a handed tile's input then makes no round trip through shared memory, which the
    /// consumers' wgmmas read their operands from. The consumers' own last tile
    /// (`HopperGemm::own_last_tile`) still stages it under its main loop. Launch with the
    /// same device tensor for both parameters. Without epilogue warps the global one is not
    /// read. Returns the staged tensor, what the epilogue names. Measured slower than
    /// [`HopperGemm::staged_input`] on the H200 (session 18, `benches/gemm_epilogue.rs`: bias +
    /// ReLU + residual at 4096³ 0.93-0.94 of the plain GEMM against 0.98, 8192³ 0.99 against
    /// 1.00; under ncu 5.6 % more cycles, 1.67 M global-load sectors through L1 against 0.12 M
    /// and the same shared-memory wavefronts), so no launcher picks it: the A/B it keeps.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::KernelBuilder;
    /// use ptxkit::library::gemm::{GemmConfig, HopperGemm};
    /// use ptxkit::parts::Epilogue;
    /// use ptxkit::smem::pipeline::sync::WaitMode;
    ///
    /// let cfg = GemmConfig::large().with_epilogue_warps();
    /// let mut k = KernelBuilder::new("gemm_residual", Target::Sm90a);
    /// let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    /// let residual = gemm.staged_input_direct(&mut k, "residual")?;
    /// let built = gemm.with_epilogue(Epilogue::new().residual(&residual)).build(k)?;
    /// // m, n, k, a, b, c, residual, residual_direct
    /// assert_eq!(built.built.signature().params.len(), 8);
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn staged_input_direct(
        &mut self,
        k: &mut KernelBuilder,
        name: &str,
    ) -> Result<TmaTensor<O>> {
        let tensor = self.staged_input(k, name)?;
        let shape = [Expr::from(self.m()), Expr::from(self.n())];
        let direct = k.tensor::<O>(
            &format!("{name}_direct"),
            shape,
            TensorOpts::default().align(16),
        )?;
        self.staged_mut(k, "a direct copy of the staged input")?
            .direct = Some(direct);
        Ok(tensor)
    }

    /// The GEMM with a gated producer: before it loads a tile's boxes of A it waits on `gate`
    /// for the chunk holding the tile's rows ([`RowGate::wait`]); with `shift`, the dense tile
    /// walk is rotated to start `shift` row tiles down ([`GridSchedule::rotated`]), so the rows
    /// a rank holds go first. Chunks and `shift` count the kernel's M-tiles ([`GemmConfig::bm`]
    /// rows). A tensor-parallel all-gather + GEMM ([`crate::library::tp`]).
    #[track_caller]
    pub fn with_row_gate(
        mut self,
        k: &KernelBuilder,
        gate: RowGate,
        shift: Option<Var>,
    ) -> Result<HopperGemm<I, O, J>> {
        if let Some(s) = shift {
            self.schedule = match self.schedule {
                Tiles::Dense(d, rows) => Tiles::Dense(d.rotated(s), rows),
                Tiles::Grouped(_) => return Err(k.error("a grouped GEMM's tiles are not rotated")),
            };
        }
        self.gate = Some(gate);
        Ok(self)
    }

    /// Ends the kernel, checks the barrier protocol and, in a [`WaitMode::Bounded`] build, finds
    /// the wait sites in the PTX. A cluster's CTAs leave without waiting for each other: no CTA
    /// may leave while a peer can still arrive on its barriers or multicast into its shared
    /// memory, and its producer's tail ([`Ring::drain`], in [`HopperGemm::producer`]) and its
    /// consumers' waits on every stage see to that.
    #[track_caller]
    pub fn finish(self, k: KernelBuilder) -> Result<GemmKernel> {
        let name = k.kernel_name().to_string();
        let mode = self.sync.mode();
        let built = k.finish()?;
        let mut sites = self.sync.finish().map_err(|e| KernelError::Invalid {
            kernel: name,
            reason: e.to_string(),
            at: crate::kernel::CallSite::here(),
        })?;
        if mode == WaitMode::Bounded {
            sites.locate(built.ptx());
        }
        Ok(GemmKernel { built, sites })
    }

    /// Thread 0 initialises the ring's barriers (full\[s\] expects the producer's one arrival
    /// plus the stage's bytes, empty\[s\] one arrival per consumer warpgroup of each CTA whose
    /// producer fills the stage), and the CTA (or the CTA pair: the peer arrives on these
    /// barriers and multicasts into this shared memory) waits until they are.
    #[track_caller]
    pub fn init_barriers(&mut self, k: &mut KernelBuilder) -> Result<()> {
        // The staging blocks' barriers only where an input is staged or the blocks are handed
        // to epilogue warps.
        let staging = self
            .staging
            .as_ref()
            .filter(|_| self.staged.is_some() || self.cfg.epilogue_warps);
        // The epilogue warps' input slabs only where an input is staged.
        let input = self
            .epilogue_input
            .as_ref()
            .filter(|_| self.staged.is_some());
        let rings: Vec<&Ring> = std::iter::once(&self.ring)
            .chain(staging)
            .chain(input)
            .collect();
        let scope = match self.rank {
            Some(_) => InitScope::Cluster,
            None => InitScope::Cta,
        };
        init_barriers(k, &mut self.sync, self.tid, (&rings, &[]), scope)
    }

    /// The addresses of the stage's A and B tiles (the stage in a register).
    fn stage_tiles(&self, k: &mut KernelBuilder, stage: R32) -> Result<(R32, R32)> {
        match self.ring.tile_addrs(k, stage)?[..] {
            [a, b] => Ok((a, b)),
            _ => Err(k.error("the GEMM's stages hold an A and a B tile")),
        }
    }

    /// `rows` x BK of a stage's operand tile at `addr`, K-major and 128B-swizzled as the TMA
    /// loads write it and the wgmma descriptors read it.
    /// `dtype` is the operand's (`cfg.input` for A, `cfg.b_type()` for B).
    fn operand_tile(&self, dtype: ScalarType, rows: u32, addr: R32, align: u32) -> TileRef {
        TileRef::shared_row_major(dtype, rows, self.cfg.bk(), addr, align)
            .with_swizzle(self.layout.swizzle())
    }

    /// The producer warpgroup: gives its registers to the consumers (24 left), and one elected
    /// thread walks the tiles' k-tiles round the stage ring: wait until the consumers released
    /// the stage (empty), announce its bytes on full, and load A's and B's boxes into it (with
    /// `cluster_m = 2`, this CTA's half of B into both CTAs of the pair).
    /// With [`GemmConfig::epilogue_warps`], warps 1 and 2 of the warpgroup are the consumers'
    /// epilogue warps, or warps 1 to 3 share both consumers' blocks
    /// ([`GemmConfig::epilogue_warp_count`]; `HopperGemm::epilogue_warp`).
    #[track_caller]
    pub fn producer(&mut self, k: &mut KernelBuilder) -> Result<()> {
        let leader = k.cmp(CmpOp::Eq, self.tid, 0u32)?;
        k.if_(leader, |k| self.produce(k)).end()?;
        if !self.cfg.epilogue_warps {
            return Ok(());
        }
        let (count, name) = match self.cfg.epilogue_warp_count {
            3 => (3, "epi_part"),
            _ => (self.roles().consumers, "epi_consumer"),
        };
        let warp = k.let_("epi_warp", Expr::from(self.tid) / 32u32)?;
        let first = k.cmp(CmpOp::Ge, warp, 1u32)?;
        let last = k.cmp(CmpOp::Le, warp, count)?;
        k.and(first, first, last)?;
        k.if_(first, |k| {
            let who = k.let_(name, Expr::from(warp) - 1u32)?;
            let lane = k.let_("epi_lane", Expr::from(self.tid) % 32u32)?;
            self.epilogue_warp(k, who, lane)
        })
        .end()
    }

    /// An epilogue warp ([`GemmConfig::epilogue_warps`]), `lane` its lane. On 2 warps, `who`
    /// is its consumer warpgroup `cw`: for each of the CTA's tiles (the schedule the consumers
    /// walk), it waits until the consumer has written its rounded 64 x bn block into its C
    /// staging block (the staging ring's `full` of stage `cw`), applies the epilogue's ops to
    /// it in place ([`Epilogue::apply_staged`]), stores each 64-column slab by TMA as soon as
    /// it is done (generic-proxy writes fenced for the async proxy first, PTX ISA 9.7.13.4.1),
    /// and once the stores have read the block (`cp.async.bulk.wait_group.read 0`,
    /// 9.7.9.25.4) hands it back (`empty`). On 3 warps, `who` is the warp's part: the three
    /// warps walk every slab of both blocks together (`HopperGemm::shared_epilogue_tile`).
    /// Its last stores are complete before it leaves. Paced
    /// ([`HopperGemm::with_epilogue_pace`]), it sleeps between bands on all its tiles but its
    /// last.
    fn epilogue_warp(&mut self, k: &mut KernelBuilder, who: Var, lane: Var) -> Result<()> {
        let (Some(staging), Output::Tma(c)) = (self.staging.clone(), self.c.clone()) else {
            return Err(k.error("epilogue warps without the TMA-store epilogue's staging"));
        };
        let shared = self.cfg.epilogue_warp_count == 3;
        if shared && matches!(self.pace, EpiloguePace::MainLoop(_)) {
            return Err(k.error("three epilogue warps paced to the main loop (its band schedule)"));
        }
        let mut epi = self.tile_epilogue(k)?;
        // Paced (EpiloguePace): the bands' pauses or schedule, set per tile.
        let pacing = WarpPacing::declare(k, self.pace)?;
        if let Some(p) = &pacing {
            epi = epi.with_band_pacing(p.bands());
        }
        let cursor = RingCursor::new(k.isa(), 2, Phase::Parity)?;
        let cw_r = k.eval(who)?;
        if !shared {
            k.mov(cursor.stage(), cw_r)?;
        }
        // A staged input read directly (HopperGemm::staged_input_direct): the ops read its
        // global copy, band by band, into registers.
        if let Some((staged, direct)) = self
            .staged
            .as_ref()
            .and_then(|s| s.direct.as_ref().map(|d| (s, d)))
        {
            let global = EpilogueTensor::of(k, direct)?;
            epi = epi.with_tensor_replaced(staged.tensor.name(), global);
        }
        // A staged input: this warp's slab of it (the input ring's stage `cw`), a phase a slab;
        // shared by three warps, the two stages in turn, the next slab's loaded ahead.
        let input = match (&self.staged, &self.epilogue_input) {
            (Some(staged), Some(ring)) if staged.direct.is_none() => {
                let at = RingCursor::new(k.isa(), 2, Phase::Parity)?;
                let load_at = match shared {
                    true => Some(RingCursor::new(k.isa(), 2, Phase::Parity)?),
                    false => {
                        k.mov(at.stage(), cw_r)?;
                        None
                    }
                };
                Some(SlabInput {
                    name: staged.tensor.name().to_string(),
                    ring: ring.clone(),
                    at,
                    load_at,
                    map: k.tma_generic(&staged.tensor)?,
                    gate: staged.gate.clone(),
                })
            }
            _ => None,
        };
        let first = match shared {
            // The slabs' stores, the input's loads and the blocks' hand-backs: warp 1's lane 0.
            true => k.cmp(CmpOp::Eq, self.tid, 32u32)?,
            false => k.cmp(CmpOp::Eq, lane, 0u32)?,
        };
        let c_map = k.tma_generic(&c)?;
        let how = self.c_store(k, &epi)?;
        let (bn, out) = (self.cfg.bn, self.cfg.output);
        let extents: [Expr; 2] = [self.m().into(), self.n().into()];
        // The CTA's last tile is its consumer's own (HopperGemm::own_last_tile).
        let schedule = match self.owns_last_tile(k)? {
            true => self.schedule.but_last(k)?,
            false => self.schedule.clone(),
        };
        let warp = EpilogueWarp {
            epi: &epi,
            staging: &staging,
            cursor: &cursor,
            input: input.as_ref(),
            first,
            lane,
            c_map: &c_map,
            how,
            extents: &extents,
        };
        schedule.for_each_tile(k, |k, tile| {
            if let Some(p) = &pacing {
                p.before_wait(k)?;
            }
            if shared {
                if let Some(p) = &pacing {
                    let last = schedule.is_last(k, &tile)?;
                    p.tile(k, last, bn / 64 * 8)?;
                }
                return self.shared_epilogue_tile(k, &warp, &tile, who);
            }
            staging.wait(k, &mut self.sync, &cursor)?;
            if let Some(p) = &pacing {
                let last = schedule.is_last(k, &tile)?;
                p.tile(k, last, bn / 64 * 8)?;
            }
            let block_row = k.let_("epi_block", self.consumer_block(&tile, who))?;
            let block = StagedBlock {
                addr: staging.first_tile(k, cursor.stage())?,
                dtype: out,
                shape: [64, bn],
                row0: Expr::from(block_row) * 64u32,
                col0: Expr::from(tile.nb) * bn,
                extents: extents.clone(),
                bands: None,
            };
            k.for_range(0u32, bn / 64, |k, slab| {
                let col = Expr::from(tile.nb) * (bn / 64) + slab;
                let origin = [Expr::from(block_row) * 64u32, col * 64u32];
                // The staged input's slab, by TMA into this warp's slab buffer (its reads of
                // the previous slab are done: the proxy fence and warp sync below came first).
                let mut inputs = Vec::new();
                if let Some(input) = &input {
                    let at = (input.at.stage(), ArriveSite::Loop);
                    let buf = self.load_input_slab(k, input, first, at, &tile, &origin)?;
                    input.ring.wait(k, &mut self.sync, &input.at)?;
                    input.at.lap(k.isa())?;
                    inputs.push((input.name.as_str(), buf));
                }
                let addr = epi.apply_staged(k, lane, &block, slab, &inputs)?;
                store_slab(k, (&c_map, origin, how), out, addr, first, 1)
            })?;
            self.hand_back(k, &staging, cursor.stage(), first)?;
            Ok(cursor.lap(k.isa())?)
        })?;
        // The last stores complete before the CTA's shared memory goes away.
        k.when(first).cp_async_bulk_wait_group(0, false)?;
        Ok(())
    }

    /// Three epilogue warps ([`GemmConfig::epilogue_warp_count`]) on one tile, `part` the
    /// warp's: they walk the 2 x bn/64 slabs of both consumers' blocks together, each block
    /// once its consumer has handed it over (the staging ring's `full`), each warp on a third of
    /// every slab's 8-row bands (the parts turning round from slab to slab, so the short one
    /// moves between the warps' sub-partitions); after a slab each warp fences its writes for
    /// the async proxy (PTX ISA 9.7.13.4.1), the three sync on a named barrier
    /// ([`EPILOGUE_BARRIER`]), and warp 1's lane 0 stores the slab by TMA, loads the staged
    /// input's next slab into the other buffer (the barrier says the warps are done with it),
    /// and hands a block back once its stores have read it.
    fn shared_epilogue_tile(
        &mut self,
        k: &mut KernelBuilder,
        w: &EpilogueWarp<'_, O>,
        tile: &Tile,
        part: Var,
    ) -> Result<()> {
        const WARPS: u32 = 3;
        let (bn, out) = (self.cfg.bn, self.cfg.output);
        let (slabs, bands) = (bn / 64, 64u32 / 8);
        let (per, excess) = (bands.div_ceil(WARPS), bands.div_ceil(WARPS) * WARPS - bands);
        let origin = |cw: Expr, slab: Expr| {
            let row = Expr::from(tile.mb) * 2 + cw;
            [row * 64u32, (Expr::from(tile.nb) * slabs + slab) * 64u32]
        };
        // The tile's first slab of the staged input.
        if let Some(input) = w.input {
            let at = input
                .load_at
                .as_ref()
                .ok_or_else(|| k.error("no load cursor"))?;
            let o = origin(0u32.into(), 0u32.into());
            let peeled = (at.stage(), ArriveSite::Peeled);
            self.load_input_slab(k, input, w.first, peeled, tile, &o)?;
            at.advance(k.isa())?;
        }
        k.for_range(0u32, 2 * slabs, |k, j| {
            let cw = k.let_("epi_cw", Expr::from(j) / slabs)?;
            let slab = k.let_("epi_slab", Expr::from(j) % slabs)?;
            // A block's first slab: once its consumer has handed it over.
            let starts = k.cmp(CmpOp::Eq, slab, 0u32)?;
            let sync = &mut self.sync;
            k.if_(starts, |k| {
                let cw_r = k.eval(cw)?;
                k.mov(w.cursor.stage(), cw_r)?;
                w.staging.wait(k, sync, w.cursor)
            })
            .end()?;
            let mut inputs = Vec::new();
            if let Some(input) = w.input {
                let at = input
                    .load_at
                    .as_ref()
                    .ok_or_else(|| k.error("no load cursor"))?;
                let more = k.cmp(CmpOp::Lt, Expr::from(j) + 1u32, 2 * slabs)?;
                let next = Expr::from(j) + 1u32;
                let o = origin(next.clone() / slabs, next % slabs);
                k.if_(more, |k| {
                    let site = (at.stage(), ArriveSite::Loop);
                    self.load_input_slab(k, input, w.first, site, tile, &o)?;
                    Ok(at.advance(k.isa())?)
                })
                .end()?;
                input.ring.wait(k, &mut self.sync, &input.at)?;
                inputs.push((
                    input.name.as_str(),
                    input.ring.first_tile(k, input.at.stage())?,
                ));
            }
            // This warp's bands of the slab: part (part + j) % 3 of them, the last one short.
            let share = k.let_("epi_share", (Expr::from(part) + j) % WARPS)?;
            let band0 = Expr::from(share) * per;
            let band_end = band0.clone() + per - Expr::from(share) / (WARPS - 1) * excess;
            let block = StagedBlock {
                addr: w.staging.first_tile(k, w.cursor.stage())?,
                dtype: out,
                shape: [64, bn],
                row0: origin(cw.into(), 0u32.into())[0].clone(),
                col0: Expr::from(tile.nb) * bn,
                extents: w.extents.clone(),
                bands: Some([band0, band_end]),
            };
            let addr = w.epi.apply_staged(k, w.lane, &block, slab, &inputs)?;
            store_slab(
                k,
                (w.c_map, origin(cw.into(), slab.into()), w.how),
                out,
                addr,
                w.first,
                WARPS,
            )?;
            if let Some(input) = w.input {
                input.at.advance(k.isa())?;
            }
            // A block's last slab stored: the block goes back once the stores have read it.
            let ends = k.cmp(CmpOp::Eq, slab, slabs - 1)?;
            k.if_(ends, |k| {
                self.hand_back(k, w.staging, w.cursor.stage(), w.first)
            })
            .end()
        })?;
        Ok(w.cursor.lap(k.isa())?)
    }

    /// Thread `first` loads the staged input's 64 x 64 slab at `origin` into stage `stage` of
    /// the epilogue warps' input ring by TMA, once the input's gate lets tile row `tile.mb`
    /// through, announcing its bytes on the stage's `full` (from `site`: the three warps' load of
    /// a tile's first slab is their loop's load peeled); the stage's buffer.
    fn load_input_slab(
        &mut self,
        k: &mut KernelBuilder,
        input: &SlabInput<O>,
        first: ptx_isa::Pred,
        (stage, site): (R32, ArriveSite),
        tile: &Tile,
        origin: &[Expr; 2],
    ) -> Result<R32> {
        let buf = input.ring.first_tile(k, stage)?;
        let sync = &mut self.sync;
        let bytes = 64 * 64 * self.cfg.output.bytes();
        k.if_(first, |k| {
            // A gated input: its rows are in place (and visible to the TMA) first.
            if let Some(gate) = &input.gate {
                gate.wait(k, tile.mb)?;
            }
            let full = input.ring.full_at(k, stage)?;
            sync.arrive(k.isa(), full, Arrival::ExpectTx(bytes), site)?;
            load_c_slab(k, (&input.map, origin.clone()), sync, full, buf)
        })
        .end()?;
        Ok(buf)
    }

    /// An epilogue warp's block goes back to its consumer: once thread `first`'s stores of it
    /// have read it (`cp.async.bulk.wait_group.read 0`, PTX ISA 9.7.9.25.4), `first` arrives on
    /// the staging ring's `empty` of `stage`.
    fn hand_back(
        &mut self,
        k: &mut KernelBuilder,
        staging: &Ring,
        stage: R32,
        first: ptx_isa::Pred,
    ) -> Result<()> {
        k.if_(first, |k| {
            k.cp_async_bulk_commit_group()?;
            Ok(k.cp_async_bulk_wait_group(0, true)?)
        })
        .end()?;
        staging.release(k, &mut self.sync, stage, first, false)
    }

    /// The elected producer thread's loop.
    fn produce(&mut self, k: &mut KernelBuilder) -> Result<()> {
        // The producer's phase counts the laps round the ring (its parity is bit 0): a debug
        // build's hang records read the producer's trip from it and the stage, at no register's
        // cost (the producer runs in 24); the consumers' trips follow from it.
        // The tensor maps' generic addresses, once for all the loads.
        let (a, b) = (k.tma_generic(&self.a)?, k.tma_generic(&self.b)?);
        // With the scales in the stages: A's scale map's generic address and the slots' base.
        let stage_scales = match &self.block_scales {
            Some(BlockScales {
                a: ScaleA::Stage(sa),
                ..
            }) => Some((k.tma_generic(sa)?, self.scale_slots(k)?)),
            _ => None,
        };
        let ring = RingCursor::new(k.isa(), self.cfg.stages, Phase::Laps)?;
        self.sync.count_laps(ring.phase());
        let schedule = self.schedule.clone();
        schedule.for_each_tile(k, |k, tile| {
            // A CTA pair's B tile is two boxes: this CTA loads box 2·nb + rank. A cluster's A
            // tile along N is `cluster_n` boxes: this CTA loads box cluster_n·mb + rank.
            let (a_box, b_box) = match (self.rank, self.cfg.cluster_n) {
                (Some(rank), 1) => (tile.mb, k.let_("b_box", tile.nb * 2 + rank)?),
                (Some(rank), c) => (k.let_("a_box", tile.mb * c + rank)?, tile.nb),
                (None, _) => (tile.mb, tile.nb),
            };
            // The boxes' rows, computed once per tile: the k loop's loads reuse them.
            if tile.group.is_none() {
                k.eval(a_box * (self.cfg.bm() / self.cfg.cluster_n))?;
            }
            if let Some(gate) = &self.gate {
                gate.wait(k, tile.mb)?;
            }
            k.eval(b_box * (self.cfg.bn / self.cfg.cluster_m))?;
            let scales = match &stage_scales {
                Some((sa, base)) => Some(ProducerScales {
                    a: sa,
                    nblocks: self.scale_nblocks(k, &tile)?,
                    base: *base,
                }),
                None => None,
            };
            let (k0, k1) = self.k_range(k, &tile)?;
            k.for_range(k0, k1, |k, kt| {
                let boxes = (a_box, b_box);
                self.load_stage(k, &ring, (&a, &b), &tile, boxes, kt, scales.as_ref())
            })
        })?;
        // Split-K summed by a second launch ([`super::split`]): once this CTA's last loads are
        // issued the sum may be scheduled (a programmatic dependent: `launch_dependents`, PTX
        // ISA 9.7.13.13; the first thread of a CTA to issue it counts); it waits for this grid
        // to complete before it reads the parts.
        if self.cfg.split_k > 1 && !self.cfg.split_fixup {
            k.isa().griddepcontrol_launch_dependents()?;
        }
        // In a cluster the producer leaves only once every stage it filled is released by
        // every CTA's consumers ([`Ring::drain`]): no peer arrives on this CTA's barriers or
        // multicasts into it after that, so the kernel ends without a cluster barrier.
        if self.rank.is_some() {
            self.ring.drain(k, &mut self.sync, &ring)?;
        }
        self.sync.end_trips();
        Ok(())
    }

    /// The k-tiles `[k0, k1)` of `tile`: all of them, or with split-K its part's
    /// ([`GemmConfig::split_k`]: part `s` takes `[s·k_part, min((s + 1)·k_part, ktiles))`, empty
    /// past the last k-tile).
    fn k_range(&self, k: &mut KernelBuilder, tile: &Tile) -> Result<(Expr, Expr)> {
        if let Some(unit) = tile.stream {
            // Stream-K: the unit's k-tiles of the tile ([`GridSchedule::stream_k`]).
            return Ok((unit.k0.into(), unit.k1.into()));
        }
        match (tile.ksplit, self.k_part) {
            (Some(s), Some(part)) => {
                let k0 = k.let_("k_first", Expr::from(s) * part)?;
                let end = k.reg::<ty::U32>();
                let (from, all) = (k.eval(Expr::from(k0) + part)?, k.eval(self.ktiles)?);
                k.min(end, from, all)?;
                Ok((k0.into(), k.bind("k_end", end).into()))
            }
            _ => Ok((Expr::from(0u32), self.ktiles.into())),
        }
    }

    /// The ring steps (k-tiles) of persistent-grid item `item` with split-K: its part's,
    /// `min((s + 1)·k_part, ktiles) - min(s·k_part, ktiles)` for part `s = item mod split_k`
    /// ([`HopperGemm::k_range`], [`crate::parts::GridSchedule::with_splits`]); without, every
    /// k-tile.
    fn part_steps(&self, k: &mut KernelBuilder, item: Var) -> Result<Var> {
        let Some(part) = self.k_part else {
            return Ok(self.ktiles);
        };
        let s = k.let_("other_split", Expr::from(item) % self.cfg.split_k)?;
        let all = k.eval(self.ktiles)?;
        let (lo, hi) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        let from = k.eval(Expr::from(s) * part)?;
        k.min(lo, from, all)?;
        let to = k.eval(Expr::from(s) * part + part)?;
        k.min(hi, to, all)?;
        k.sub(hi, hi, lo)?;
        Ok(k.bind("other_steps", hi))
    }

    /// The shared address of stage 0's scale slot ([`GemmConfig::smem_scales`]).
    fn scale_slots(&self, k: &mut KernelBuilder) -> Result<R32> {
        let Some(region) = self.layout.scales.as_ref() else {
            return Err(k.error("scales in the stages without their slots"));
        };
        let at = k.reg::<ty::U32>();
        k.add(at, self.base, region.offset)?;
        Ok(at)
    }

    /// The tile's block rows of B's scales, one per 128-column block its columns touch: one
    /// for a tile of 64 or 128 columns, two for 192 (which straddles a block boundary: its
    /// columns start at a multiple of 64) or 256, from the block of its first column (the
    /// second clamped to the last block: past N, never stored).
    fn scale_nblocks(&self, k: &mut KernelBuilder, tile: &Tile) -> Result<Vec<Var>> {
        let Some(scales) = self.block_scales.as_ref() else {
            return Err(k.error("B's scale blocks without block scales"));
        };
        let per = self.cfg.bn.div_ceil(super::SCALE_BLOCK);
        let first = Expr::from(tile.nb) * self.cfg.bn / super::SCALE_BLOCK;
        if per == 1 {
            return Ok(vec![k.let_("scale_nb", first)?]);
        }
        let last = k.let_("nb_last", Expr::from(scales.n_blocks) - 1u32)?;
        (0..per)
            .map(|h| {
                let b = k.eval(first.clone() + h)?;
                let last = k.eval(last)?;
                k.min(b, b, last)?;
                Ok(k.bind("scale_nb", b))
            })
            .collect()
    }

    /// For a tile width that is not a multiple of 128 (192): whether `tile`'s first column
    /// lies in the second half of its block of B's scales (`nb·bn/64` odd), which moves the
    /// tile's odd 64-column chunks into the next block ([`Promotion::promote`]); `None` where
    /// every chunk's block is fixed (64, 128, 256).
    fn straddle(&self, k: &mut KernelBuilder, tile: &Tile) -> Result<Option<ptx_isa::Pred>> {
        if self.cfg.bn % super::SCALE_BLOCK == 0 || self.cfg.bn < super::SCALE_BLOCK {
            return Ok(None);
        }
        let chunks = k.let_("chunk0", Expr::from(tile.nb) * (self.cfg.bn / 64))?;
        let odd = k.let_("chunk0_odd", chunks % 2u32)?;
        Ok(Some(k.cmp(CmpOp::Ne, odd, 0u32)?))
    }

    /// One k-tile of the producer: wait until the consumers have released the ring's current
    /// stage, announce its bytes on its full barrier, load A's box `(a_box, kt)` and B's box
    /// `(b_box, kt)` into it (a grouped tile's boxes at its group's element origins; in a
    /// cluster this CTA's part of the shared tile into every CTA, [`HopperGemm::load_part`]),
    /// and step the ring. With `scales` ([`GemmConfig::smem_scales`]) the stage's scale slot is filled
    /// too: B's scales of the k-tile, loaded before the empty wait (their latency runs under
    /// it) and stored before the arrival (whose release orders them before the consumers'
    /// acquiring wait, PTX ISA 9.7.13.15.16), and A's tile rows' by a TMA load counted by the
    /// full barrier.
    #[allow(clippy::too_many_arguments)]
    fn load_stage(
        &mut self,
        k: &mut KernelBuilder,
        ring: &RingCursor,
        (a, b): (&TmaTensor<I>, &TmaTensor<J>),
        tile: &Tile,
        (a_box, b_box): (Var, Var),
        kt: Var,
        scales: Option<&ProducerScales<'_>>,
    ) -> Result<()> {
        let cfg = self.cfg;
        let stage = ring.stage();
        let sb_values = match (scales, &self.block_scales) {
            (Some(sc), Some(bs)) => sc
                .nblocks
                .iter()
                .map(|&nb| k.load(&bs.b, [Expr::from(nb), Expr::from(kt)]))
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        let full_bar = self.ring.acquire(k, &mut self.sync, ring)?;
        let mut tx = self.layout.ring.tx_bytes();
        let slot = match scales {
            Some(sc) => {
                let at = k.reg::<ty::U32>();
                k.mad_lo(at, stage, GemmConfig::SCALE_SLOT_BYTES, sc.base)?;
                let view = k.shared_view::<ty::F32>(
                    "scale_slot",
                    at,
                    &[GemmConfig::SCALE_SLOT_BYTES / 4],
                    128,
                )?;
                for (h, &v) in sb_values.iter().enumerate() {
                    k.store(&view, [GemmConfig::BM + h as u32], v)?;
                }
                tx += u32::try_from(sc.a.box_bytes())
                    .map_err(|_| k.error("a scale box over 4 GB"))?;
                Some(at)
            }
            None => None,
        };
        self.ring.commit(k, &mut self.sync, full_bar, tx)?;
        let (sa, sb) = self.stage_tiles(k, stage)?;
        // The k-tile, bound once for both loads' coordinates.
        let kt = k.let_("kt", kt)?;
        let a_src = match &tile.group {
            None => k.tma_tile_at(a, [a_box.into(), kt.into()])?,
            Some(g) => k.tma_box_at(a, &g.a_origin(kt * cfg.bk()))?,
        };
        let a_align = self.layout.a.align();
        if cfg.cluster_n > 1 {
            let rows = cfg.bm() / cfg.cluster_n;
            self.load_part(k, (cfg.input, rows, sa, a_align), &a_src, full_bar)?;
        } else {
            let a_dst = self.operand_tile(cfg.input, cfg.bm(), sa, a_align);
            let on_full = Some((&mut self.sync, full_bar));
            k.copy_async(&a_dst, &a_src, on_full, None, ExecScope::Thread)?;
        }
        if let (Some(sc), Some(at)) = (scales, slot) {
            // The k-tile's scales of the tile's 128 rows: box (kt, mb) of `scale_a` [kb, m]
            // (rows past M read as zeros: never stored).
            let dst = TileRef::shared_row_major(ScalarType::F32, 1, GemmConfig::BM, at, 128);
            let src = k.tma_tile_at(sc.a, [kt.into(), tile.mb.into()])?;
            let on_full = Some((&mut self.sync, full_bar));
            k.copy_async(&dst, &src, on_full, None, ExecScope::Thread)?;
        }
        let b_src = match &tile.group {
            None => k.tma_tile_at(b, [b_box.into(), kt.into()])?,
            Some(g) => k.tma_box_at(b, &g.b_origin(b_box * cfg.bn, kt * cfg.bk()))?,
        };
        let b_align = self.layout.b.align();
        if cfg.cluster_m > 1 {
            // This CTA's half of the pair's B tile.
            let half = cfg.bn / cfg.cluster_m;
            self.load_part(k, (cfg.b_type(), half, sb, b_align), &b_src, full_bar)?;
        } else {
            let b_dst = self.operand_tile(cfg.b_type(), cfg.bn, sb, b_align);
            let on_full = Some((&mut self.sync, full_bar));
            k.copy_async(&b_dst, &b_src, on_full, None, ExecScope::Thread)?;
        }
        ring.advance(k.isa())?;
        Ok(())
    }

    /// This CTA's part of a stage's operand tile that the cluster shares (B's in a pair along
    /// M, A's along N): `rows` rows of `dtype` from `src`, written at the part's offset (`rank ·
    /// rows` rows into the tile at `tile`) in every CTA's shared memory and counted by every
    /// CTA's full barrier (PTX ISA 9.7.9.27: `.multicast::cluster`, ctaMask of the cluster's
    /// CTAs). This CTA's `full` also counts the peers' parts, which their producers multicast
    /// here from the same line of the program.
    fn load_part(
        &mut self,
        k: &mut KernelBuilder,
        (dtype, rows, tile, align): (ScalarType, u32, R32, u32),
        src: &TileRef,
        full_bar: smem::pipeline::sync::NamedBarrier,
    ) -> Result<()> {
        let Some(rank) = self.rank else {
            return Err(k.error("a shared stage tile without a cluster"));
        };
        let ctas = self.cfg.cluster_size();
        let rank = k.eval(rank)?;
        let at = k.reg::<ty::U32>();
        k.mad_lo(at, rank, rows * self.cfg.bk() * dtype.bytes(), tile)?;
        let dst = self.operand_tile(dtype, rows, at, align);
        let on_full = Some((&mut self.sync, full_bar));
        let everyone = (1u16 << ctas) - 1;
        k.copy_async(&dst, src, on_full, Some(everyone.into()), ExecScope::Thread)?;
        let bytes =
            u32::try_from(dst.bytes()).map_err(|_| k.error("a shared tile part over 4 GB"))?;
        self.sync.copy(full_bar.at, bytes * (ctas - 1));
        Ok(())
    }

    /// A consumer warpgroup (1 or 2: rows `64 (wg - 1)` of each tile): takes its registers
    /// (240), and for each tile runs the main loop into its accumulators and the epilogue.
    #[track_caller]
    pub fn consumer(&mut self, k: &mut KernelBuilder, me: ConsumerId) -> Result<()> {
        let (cw, lt) = (me.index, me.thread);
        let leader = k.cmp(CmpOp::Eq, lt, 0u32)?;
        let acc = k.alloc_fragment::<ty::F32>("acc", self.fragment.clone())?;
        // Block scales: each k-tile's wgmmas run into `part`, promoted into `acc`.
        let block = match self.block_scales.clone() {
            Some(scales) => {
                let half = half_fragment(k, &self.fragment, self.cfg.bn, self.cfg.input)?;
                let part = k.alloc_fragment::<ty::F32>("part", half.clone())?;
                let pipelined = if self.cfg.pipelined_promotion {
                    let second = k.alloc_fragment::<ty::F32>("part2", half.clone())?;
                    let behind = RingCursor::new(k.isa(), self.cfg.stages, Phase::Parity)?;
                    Some((second, behind))
                } else {
                    None
                };
                let (offsets, row_of) = fragment_rows(k, &half)?;
                let chunk_of = fragment_cols(k, &half)?
                    .iter()
                    .map(|&c| usize::try_from(c / 64))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|_| k.error("a negative fragment column"))?;
                // This thread's first row in its warpgroup's 64 (PTX ISA 9.7.15.5.1.1.1).
                let row0 = k.let_("frag_row", (lt / 32) * 16 + (lt % 32) / 4)?;
                Some((scales, part, pipelined, offsets, row_of, chunk_of, row0))
            }
            None => None,
        };
        // With the scales in the stages: the slots' base and this thread's rows in the tile.
        let slot = match &block {
            Some((scales, _, _, offsets, _, _, row0)) if matches!(scales.a, ScaleA::Stage(_)) => {
                let base = self.scale_slots(k)?;
                let rows = offsets
                    .iter()
                    .map(|&o| k.let_("slot_row", cw * 64 + *row0 + o as u32))
                    .collect::<Result<Vec<Var>>>()?;
                Some(SlotScales { base, rows })
            }
            _ => None,
        };
        // The output scale, once per thread for all its tiles.
        let out_scale = match &self.out_scale {
            None => None,
            Some(OutScaleParam::Value(s)) => Some(*s),
            Some(OutScaleParam::Pointer(s)) => Some(k.load(s, [0u32])?),
        };
        if let Some([sa, sb]) = self.scales.clone() {
            // The per-tensor scales, once per thread for all its tiles: alpha = sa·sb (times
            // the output scale).
            let (sa, sb) = (k.load(&sa, [0u32])?, k.load(&sb, [0u32])?);
            let alpha = k.reg::<ty::F32>();
            k.mul(alpha, sa, sb)?;
            if let Some(s) = out_scale {
                k.mul(alpha, alpha, s)?;
            }
            self.alpha = Some(alpha);
        } else {
            // Block scales are promoted in the main loop: the epilogue applies the output
            // scale alone.
            self.alpha = out_scale;
        }
        let ring = RingCursor::new(k.isa(), self.cfg.stages, Phase::Parity)?;
        let schedule = self.schedule.clone();
        let epilogue = self.tile_epilogue(k)?;
        // A staged input: read by the epilogue, loaded into this warpgroup's own staging block
        // (the staging ring's stage `cw`), one phase of its barriers a tile.
        if let Some(staged) = self.staged.as_mut().filter(|_| !self.cfg.epilogue_warps) {
            let name = staged.tensor.name().to_string();
            if !epilogue.tile_tensors().any(|t| t.name() == name) {
                return Err(k.error(format!(
                    "the staged input `{name}` that no epilogue op reads"
                )));
            }
            let cursor = RingCursor::new(k.isa(), 2, Phase::Parity)?;
            let cw_r = k.eval(cw)?;
            k.mov(cursor.stage(), cw_r)?;
            staged.cursor = Some(cursor);
        }
        // Epilogue warps: this warpgroup's block of the staging ring, one phase a tile. A
        // staged input comes through the same block on the CTA's last tile (its epilogue the
        // consumer's own, [`HopperGemm::own_last_tile`]).
        if self.cfg.epilogue_warps {
            let cursor = RingCursor::new(k.isa(), 2, Phase::Parity)?;
            let cw_r = k.eval(cw)?;
            k.mov(cursor.stage(), cw_r)?;
            self.handoff = Some(cursor);
            if let Some(staged) = self.staged.as_mut() {
                staged.cursor = Some(cursor);
            }
        }
        // Ping-pong: this consumer's turns at the tiles, its cursor past the stages of the
        // tiles it leaves to the other.
        let turns = self.cfg.pingpong.then_some(Turns {
            index: cw,
            count: GemmConfig::ROLES.consumers,
            barrier: TURN_BARRIER,
        });
        // With split-K a part's k-tiles depend on the part (the last may have fewer, or none):
        // the cursor passes the other consumer's items one by one ([`Turns::skip_others`]).
        let uneven = self.k_part.is_some();
        if let Some(turns) = turns.as_ref().filter(|_| !uneven) {
            turns.skip_before(k, &ring, self.ktiles)?;
        }
        let mut body = |k: &mut KernelBuilder, tile: Tile, turn: Option<Turn>| {
            let promotion = match &block {
                Some((scales, part, pipelined, offsets, row_of, chunk_of, row0)) => {
                    let first = k.let_("row_first", tile.first_row() + cw * 64 + *row0)?;
                    let last = k.let_("row_last", Expr::from(scales.m) - 1u32)?;
                    let rows = offsets
                        .iter()
                        .map(|&o| {
                            let r = k.eval(first + o as u32)?;
                            let last = k.eval(last)?;
                            k.min(r, r, last)?;
                            Ok(k.bind("scale_row", r))
                        })
                        .collect::<Result<Vec<Var>>>()?;
                    let nblocks = self.scale_nblocks(k, &tile)?;
                    let straddle = self.straddle(k, &tile)?;
                    Some(Promotion {
                        scales,
                        part,
                        pipelined: pipelined.as_ref().map(|(b, c)| (b, c)),
                        rows,
                        row_of: row_of.clone(),
                        nblocks,
                        chunk_of: chunk_of.clone(),
                        straddle,
                        group: tile.group,
                        slot: slot.as_ref(),
                    })
                }
                None => None,
            };
            if tile.group.is_none() {
                // The epilogue's tensor reads go to L2 while the mainloop runs.
                let at = self.fragment_at(None, tile, cw, lt);
                let row_multiple = if self.cfg.tma_store { 8 } else { 1 };
                epilogue.prefetch(k, &at, WarpSpecialized::WARPGROUP, row_multiple)?;
            }
            // The staged input's block of this tile, which the main loop loads.
            let origin = [
                self.consumer_block(&tile, cw) * 64,
                Expr::from(tile.nb) * self.cfg.bn,
            ];
            if let Some(staged) = self.staged.as_mut() {
                staged.origin = Some(origin);
                staged.row_tile = Some(tile.mb);
            }
            if self.owns_last_tile(k)? {
                self.last_tile = Some(schedule.is_last(k, &tile)?);
            }
            match (&turns, turn) {
                (Some(turns), Some(turn)) => {
                    if uneven {
                        turns.skip_others(k, &ring, &turn, |k, item| self.part_steps(k, item))?;
                    }
                    let (k0, k1) = self.k_range(k, &tile)?;
                    turn.take(k)?;
                    if uneven {
                        // A split-K part with no k-tile takes its turn, adds nothing (its
                        // accumulators 0) and passes it on.
                        let empty = k.cmp(CmpOp::Ge, k0.clone(), k1.clone())?;
                        k.if_else_with(
                            empty,
                            self,
                            |k, _| {
                                k.fill(&acc, ptx_isa::Imm::f32(0.0), ExecScope::Warpgroup)?;
                                turn.pass(k)
                            },
                            |k, this| this.mainloop_turn(k, &ring, leader, &acc, &turn, (k0, k1)),
                        )?;
                    } else {
                        self.mainloop_turn(k, &ring, leader, &acc, &turn, (k0, k1))?;
                    }
                    self.epilogue(k, tile, cw, lt, &acc)?;
                    match uneven {
                        true => Ok(()),
                        false => turns.skip_after(k, &ring, self.ktiles),
                    }
                }
                _ => {
                    let range = self.k_range(k, &tile)?;
                    let bounds = range.clone();
                    self.mainloop(k, &ring, (cw, bounds), leader, &acc, promotion.as_ref())?;
                    if tile.ksplit.is_some() {
                        // A part past the last k-tile has nothing to add: its partial is 0.
                        let empty = k.cmp(CmpOp::Ge, range.0.clone(), range.1.clone())?;
                        k.if_(empty, |k| {
                            k.fill(&acc, ptx_isa::Imm::f32(0.0), ExecScope::Warpgroup)?;
                            Ok(())
                        })
                        .end()?;
                    }
                    self.epilogue(k, tile, cw, lt, &acc)
                }
            }
        };
        match turns {
            Some(turns) => schedule.for_each_turn(k, turns, |k, t, turn| body(k, t, Some(turn)))?,
            None => schedule.for_each_tile(k, |k, t| body(k, t, None))?,
        }
        if self.cfg.tma_store {
            // The last tile's stores must be done before the CTA's shared memory goes away
            // (with epilogue warps, the CTA's last tile is the consumer's own).
            k.when(leader).cp_async_bulk_wait_group(0, false)?;
        }
        Ok(())
    }

    /// One tile's main loop in consumer warpgroup `cw`: for each k-tile, wait until its stage is
    /// full, `acc (+)= A·Bᵀ` over the stage's tiles (this warpgroup's 64 rows of A) as one tile
    /// op, wait for the wgmmas, and release the stage (in a CTA pair, in both CTAs: the peer's
    /// producer wrote half of it). With a `promotion` (block scales), each k-tile's wgmmas run
    /// into its fresh partial accumulator instead, which is then added into `acc` times the
    /// k-tile's scales (two-level accumulation; `acc` starts at 0). The k-tiles `[k0, k1)` are
    /// absolute, so a split-K part ([`GemmConfig::split_k`]) reads its own k-blocks' scales:
    /// its `acc` is its share of the scaled sum, which the parts' ordered sum completes.
    #[track_caller]
    pub fn mainloop(
        &mut self,
        k: &mut KernelBuilder,
        ring: &RingCursor,
        (cw, (k0, k1)): (Var, (Expr, Expr)),
        leader: ptx_isa::Pred,
        acc: &Buffer<ty::F32>,
        promotion: Option<&Promotion<'_>>,
    ) -> Result<()> {
        let stage = ring.stage();
        let cw = k.eval(cw)?;
        let cfg = self.cfg;
        if promotion.is_some() {
            k.fill(acc, ptx_isa::Imm::f32(0.0), ExecScope::Warpgroup)?;
        }
        if let Some((p, (second, behind))) = promotion.and_then(|p| p.pipelined.map(|s| (p, s))) {
            let cursors = (ring, behind);
            if self.k_part.is_none() {
                return self.mainloop_pipelined(k, cursors, cw, None, leader, acc, p, second);
            }
            // Split-K: a part past the last k-tile has none, so it issues no wgmma and waits
            // for no stage (the producer loads none for it): its `acc` stays the 0 it was
            // given above, which the epilogue stores as its partial (and with the fixup its
            // ticket is taken there). Every wgmma wait of a part with k-tiles lies inside this
            // branch, on each of its paths.
            let some = k.cmp(CmpOp::Lt, k0.clone(), k1.clone())?;
            return k
                .if_(some, |k| {
                    let first = k.let_("kt_first", k0)?;
                    let end = k.let_("kt_end", k1)?;
                    let range = Some((first, end));
                    self.mainloop_pipelined(k, cursors, cw, range, leader, acc, p, second)
                })
                .end();
        }
        if cfg.pingpong {
            return Err(k.error(
                "a ping-pong consumer's main loop runs in its turn: HopperGemm::consumer runs it",
            ));
        }
        // The k-tiles whose wgmmas the staged input's loads go under ([`StagedLoadAt`]), each
        // with the slabs it loads: the middle one, k-tile `n`, or a slab a k-tile (the last
        // where the loop is shorter).
        let slabs = cfg.bn / 64;
        let mut staged_at = Vec::new();
        match self.staged.as_ref().map(|s| s.at) {
            Some(StagedLoadAt::Middle) => {
                let mid = k.let_("staged_kt", k0.clone() + (k1.clone() - k0.clone()) / 2u32)?;
                staged_at.push((0..slabs, mid, None));
            }
            Some(StagedLoadAt::KTile(n)) => {
                let at = k.let_("staged_kt", k0.clone() + n)?;
                let last = k.let_("staged_last", k1.clone() - 1u32)?;
                let short = k.cmp(CmpOp::Lt, last, at)?;
                staged_at.push((0..slabs, at, Some((last, short))));
            }
            Some(StagedLoadAt::Spread { first, every }) => {
                let last = k.let_("staged_last", k1.clone() - 1u32)?;
                for slab in 0..slabs {
                    let at = k.let_("staged_kt", k0.clone() + (first + slab * every))?;
                    let short = k.cmp(CmpOp::Lt, last, at)?;
                    staged_at.push((slab..slab + 1, at, Some((last, short))));
                }
            }
            None => {}
        }
        k.for_range(k0.clone(), k1, |k, kt| {
            let early = match promotion {
                Some(p) => p.before_wait(k, kt)?,
                None => None,
            };
            self.ring.wait(k, &mut self.sync, ring)?;
            let scale = match promotion {
                Some(p) => Some(p.after_wait(k, stage, early)?),
                None => None,
            };
            let (sa, sb) = self.stage_tiles(k, stage)?;
            // This warpgroup's 64 rows of A.
            k.mad_lo(sa, cw, 64 * cfg.bk() * cfg.input.bytes(), sa)?;
            // D (+)= A·Bᵀ for this k-tile as one tile op (gemm_async.wgmma: fence, the K/16
            // (16-bit) or K/32 (8-bit) wgmmas with descriptors from the swizzled tiles, commit):
            // into `acc` (scale-d = 0 on the first k-tile), or with block scales into the fresh
            // partial (scale-d = 0 on the k-tile's first wgmma).
            let a_s = self.operand_tile(cfg.input, 64, sa, self.layout.a.align());
            if let (Some(p), Some(scale)) = (promotion, scale) {
                // Each part of the tile (the whole tile, or each 128-column half of a 256-wide
                // one): its wgmmas into the fresh partial, waited for, promoted; the stage is
                // released after the last part's wgmmas, so the producer refills it under the
                // promotion.
                let (Some(acc_regs), Some(part_regs)) = (acc.regs(), p.part.regs()) else {
                    return Err(k.error("the accumulators are not register fragments"));
                };
                let blocks = acc_regs.len() / part_regs.len().max(1);
                let cols = cfg.bn / blocks as u32;
                let rows_bytes = cols * cfg.bk() * cfg.b_type().bytes();
                for h in 0..blocks {
                    let sbh = if h == 0 {
                        sb
                    } else {
                        let at = k.reg::<ty::U32>();
                        k.add(at, sb, rows_bytes * h as u32)?;
                        at
                    };
                    let b_s = self.operand_tile(cfg.b_type(), cols, sbh, self.layout.b.align());
                    k.gemm_async(p.part, &a_s, &b_s, Accumulate::No, ExecScope::Warpgroup)?;
                    k.wgmma_wait_group(0)?;
                    if h + 1 == blocks {
                        self.release_stage(k, stage, leader, false)?;
                    }
                    p.promote(k, acc, p.part, (&scale.0, &scale.1), h)?;
                }
            } else {
                // Into `acc`, scale-d = 0 on the first k-tile.
                let accumulate = Accumulate::Pred(k.cmp(CmpOp::Ne, kt, k0.clone())?);
                let b_s = self.operand_tile(cfg.b_type(), cfg.bn, sb, self.layout.b.align());
                k.gemm_async(acc, &a_s, &b_s, accumulate, ExecScope::Warpgroup)?;
                for (slabs, at, short) in &staged_at {
                    // The staged input's block (or slabs of it), loaded under this k-tile's
                    // wgmmas where it is the chosen one ([`StagedLoadAt`]): by the middle
                    // k-tile the previous tile's store, issued just before this main loop, has
                    // long read the block, and half the main loop hides the load; an earlier
                    // one leaves the load the rest of the loop.
                    let here = k.cmp(CmpOp::Eq, kt, *at)?;
                    if let Some((last, short)) = short {
                        // A loop of `n` k-tiles or fewer: its last k-tile.
                        let at_last = k.cmp(CmpOp::Eq, kt, *last)?;
                        k.and(at_last, at_last, *short)?;
                        k.or(here, here, at_last)?;
                    }
                    let slabs = slabs.clone();
                    k.if_(here, |k| self.load_staged(k, leader, slabs)).end()?;
                }
                k.wgmma_wait_group(0)?;
                self.release_stage(k, stage, leader, false)?;
            }
            ring.advance(k.isa())?;
            Ok(())
        })
    }

    /// A ping-pong consumer's main loop over its whole tile ([`GemmConfig::pingpong`]), in its
    /// `turn` ([`Turn::take`] first): for each k-tile, wait until its stage is full and issue
    /// `acc (+)= A·Bᵀ` over it (scale-d = 0 on the first), then wait until only this k-tile's
    /// wgmmas are in flight (`wgmma.wait_group 1`, PTX ISA 9.7.15.7.3) and release the previous
    /// k-tile's stage: the tensor cores never drain between k-tiles, even while the other
    /// consumer runs its epilogue. Once the last stage has been waited for, the turn passes to
    /// the other consumer ([`Turn::pass`]), whose wgmmas then queue behind this one's last; the
    /// last stage is released once every wgmma is done. Every wait is unconditional on its path
    /// (a wgmma wait under a branch makes ptxas serialise the wgmmas, C7514). The k-tiles are
    /// `[k0, k1)` ([`HopperGemm::k_range`]), at least one; the caller has taken the turn
    /// ([`Turn::take`]).
    fn mainloop_turn(
        &mut self,
        k: &mut KernelBuilder,
        ring: &RingCursor,
        leader: ptx_isa::Pred,
        acc: &Buffer<ty::F32>,
        turn: &Turn,
        (k0, k1): (Expr, Expr),
    ) -> Result<()> {
        // The stage of the k-tile before (released one k-tile behind) and of this one.
        let (behind, current) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        let issue = |this: &mut Self, k: &mut KernelBuilder, accumulate: Accumulate, at: R32| {
            let cfg = this.cfg;
            let stage = ring.stage();
            this.ring.wait(k, &mut this.sync, ring)?;
            let (sa, sb) = this.stage_tiles(k, stage)?;
            let a_s = this.operand_tile(cfg.input, 64, sa, this.layout.a.align());
            let b_s = this.operand_tile(cfg.b_type(), cfg.bn, sb, this.layout.b.align());
            k.gemm_async(acc, &a_s, &b_s, accumulate, ExecScope::Warpgroup)?;
            k.mov(at, stage)?;
            Ok::<(), KernelError>(ring.advance(k.isa())?)
        };
        issue(self, k, Accumulate::No, behind)?;
        // The staged input's block, loaded under the first k-tile's wgmmas (this consumer's
        // last store went out before the other consumer's whole main loop).
        self.load_staged(k, leader, 0..self.cfg.bn / 64)?;
        k.for_range(k0 + 1u32, k1, |k, _| {
            issue(self, k, Accumulate::Yes, current)?;
            k.wgmma_wait_group(1)?;
            self.release_stage(k, behind, leader, false)?;
            k.mov(behind, current)?;
            Ok(())
        })?;
        turn.pass(k)?;
        k.wgmma_wait_group(0)?;
        self.release_stage(k, behind, leader, true)
    }

    /// Releases `stage` of the ring: the leaders of both consumer warpgroups, and in a CTA pair
    /// the peer's too (its producer wrote half of it). `peeled`: a second site of the same
    /// release in a loop unrolled by two ([`Ring::release`]).
    fn release_stage(
        &mut self,
        k: &mut KernelBuilder,
        stage: R32,
        leader: ptx_isa::Pred,
        peeled: bool,
    ) -> Result<()> {
        self.ring.release(k, &mut self.sync, stage, leader, peeled)
    }

    /// Block scales with [`GemmConfig::pipelined_promotion`]: the main loop with k-tile `kt + 1`'s
    /// wgmmas in flight while k-tile `kt`'s partial is promoted (`wgmma.wait_group 1`, PTX ISA
    /// 9.7.15.7.3), the two partials alternating, so the tensor cores do not wait for the
    /// promotion. Unrolled by two (a register cannot be indexed): each pair of k-tiles promotes
    /// `part` then `second`. `ring` is the cursor of the stages waited for, `behind` of the
    /// stages released (one k-tile behind). The k-tiles are `range`, `[first, end)` with at
    /// least one (a split-K part's, [`HopperGemm::k_range`]: absolute, so the scales read are
    /// its own k-blocks'), or all of them.
    #[allow(clippy::too_many_arguments)]
    fn mainloop_pipelined(
        &mut self,
        k: &mut KernelBuilder,
        (ring, behind): (&RingCursor, &RingCursor),
        cw: R32,
        range: Option<(Var, Var)>,
        leader: ptx_isa::Pred,
        acc: &Buffer<ty::F32>,
        p: &Promotion<'_>,
        second: &Buffer<ty::F32>,
    ) -> Result<()> {
        // The k-tiles' count and end, and `at(rel)` the absolute k-tile `rel` into the range.
        let (ktiles, end) = match range {
            Some((first, end)) => (k.let_("kt_count", Expr::from(end) - first)?, end),
            None => (self.ktiles, self.ktiles),
        };
        let at = |rel: Expr| match range {
            Some((first, _)) => Expr::from(first) + rel,
            None => rel,
        };
        // The scales of each partial's k-tile, in registers that live across the iterations.
        let held = |k: &mut KernelBuilder| -> KtileScales {
            (
                k.regs::<ty::F32>(p.nblocks.len()),
                k.regs::<ty::F32>(p.rows.len()),
            )
        };
        let scales = [held(k), held(k)];
        let zero = k.let_("kt0", at(0u32.into()))?;
        self.issue_partial(k, ring, cw, p, p.part, &scales[0], zero)?;
        // Every wait below is unconditional on its path (ptxas proves the promoted partial's
        // wgmmas complete only then; a wait under a branch makes it serialise the wgmmas,
        // C7514): the loop runs while two more k-tiles exist, a tail of one or two after it.
        // Loop: k-tile kt is in `part` (in flight); kt + 1 and kt + 2 exist.
        let pairs_end = k.reg::<ty::U32>();
        let kt_r = k.eval(ktiles)?;
        k.max(pairs_end, kt_r, 2u32)?;
        k.sub(pairs_end, pairs_end, 2u32)?;
        let pairs_end = k.bind("pairs_end", pairs_end);
        // The first site of the release is the loop's; the others are the same release.
        let mut peeled = false;
        let mut release = |this: &mut Self, k: &mut KernelBuilder| -> Result<()> {
            this.release_stage(k, behind.stage(), leader, peeled)?;
            peeled = true;
            Ok(behind.advance(k.isa())?)
        };
        let [(sb0, sa0), (sb1, sa1)] = &scales;
        k.for_range_step(at(0u32.into()), at(pairs_end.into()), 2, |k, kt| {
            let next = k.let_("kt_next", kt + 1u32)?;
            self.issue_partial(k, ring, cw, p, second, &scales[1], next)?;
            k.wgmma_wait_group(1)?;
            release(self, k)?;
            p.promote(k, acc, p.part, (sb0, sa0), 0)?;
            let after = k.let_("kt_after", kt + 2u32)?;
            self.issue_partial(k, ring, cw, p, p.part, &scales[0], after)?;
            k.wgmma_wait_group(1)?;
            release(self, k)?;
            p.promote(k, acc, second, (sb1, sa1), 0)
        })?;
        // Tail: the k-tile in `part` is tail = pairs_end rounded up to even; one or two left.
        let tail = k.let_("kt_tail", at((Expr::from(pairs_end) + 1u32) / 2u32 * 2u32))?;
        let last = k.let_("kt_last", tail + 1u32)?;
        let two = k.cmp(CmpOp::Lt, last, end)?;
        let gemm = RefCell::new((self, release));
        k.if_(two, |k| {
            let (this, release) = &mut *gemm.borrow_mut();
            this.issue_partial(k, ring, cw, p, second, &scales[1], last)?;
            k.wgmma_wait_group(1)?;
            release(this, k)?;
            p.promote(k, acc, p.part, (sb0, sa0), 0)?;
            k.wgmma_wait_group(0)?;
            release(this, k)?;
            p.promote(k, acc, second, (sb1, sa1), 0)
        })
        .else_(|k| {
            let (this, release) = &mut *gemm.borrow_mut();
            k.wgmma_wait_group(0)?;
            release(this, k)?;
            p.promote(k, acc, p.part, (sb0, sa0), 0)
        })
    }

    /// Block scales: k-tile `kt`'s scales loaded into `held`, its stage waited for, and its
    /// wgmmas issued into the fresh partial `dst` (scale-d = 0 on the first); the ring steps on.
    #[allow(clippy::too_many_arguments)]
    fn issue_partial(
        &mut self,
        k: &mut KernelBuilder,
        ring: &RingCursor,
        cw: R32,
        p: &Promotion<'_>,
        dst: &Buffer<ty::F32>,
        held: &KtileScales,
        kt: Var,
    ) -> Result<()> {
        let cfg = self.cfg;
        let early = p.before_wait(k, kt)?;
        let stage = ring.stage();
        self.ring.wait(k, &mut self.sync, ring)?;
        // Read (from the stage: before it is released) into the registers the promotion uses.
        let (sb, sa) = p.after_wait(k, stage, early)?;
        for (&h, b) in held.0.iter().zip(sb) {
            k.mov(h, b)?;
        }
        for (&h, a) in held.1.iter().zip(sa) {
            k.mov(h, a)?;
        }
        let (sa, sb) = self.stage_tiles(k, stage)?;
        // This warpgroup's 64 rows of A.
        k.mad_lo(sa, cw, 64 * cfg.bk() * cfg.input.bytes(), sa)?;
        let a_s = self.operand_tile(cfg.input, 64, sa, self.layout.a.align());
        let b_s = self.operand_tile(cfg.b_type(), cfg.bn, sb, self.layout.b.align());
        k.gemm_async(dst, &a_s, &b_s, Accumulate::No, ExecScope::Warpgroup)?;
        ring.advance(k.isa())?;
        Ok(())
    }

    /// The epilogue of consumer warpgroup `cw` for `tile`: [`HopperGemm::tile_epilogue`]
    /// applied to its 64 x bn accumulators, which then go to C by TMA stores
    /// ([`HopperGemm::epilogue_tma`]) or from registers ([`HopperGemm::epilogue_registers`]).
    #[track_caller]
    pub fn epilogue(
        &mut self,
        k: &mut KernelBuilder,
        tile: Tile,
        cw: Var,
        lt: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        if self.cfg.epilogue_warps {
            let Some(last) = self.last_tile else {
                return self.hand_over(k, &tile, cw, lt, acc);
            };
            return k.if_else_with(
                last,
                self,
                |k, this| this.own_last_tile(k, tile, cw, lt, acc),
                |k, this| this.hand_over(k, &tile, cw, lt, acc),
            );
        }
        self.own_epilogue(k, tile, cw, lt, acc)
    }

    /// With [`GemmConfig::epilogue_warps`], the CTA's last tile: no later main loop would hide
    /// its epilogue warp's pass over it, so the consumer warpgroup applies the epilogue itself
    /// (four warps on its block instead of one), as without epilogue warps, once its epilogue
    /// warp has handed the staging block back (the staging ring's `empty`: its stores of the
    /// previous tile have read the block). With a staged input, [`HopperGemm::load_staged`]
    /// waited for the block and loaded the input into it under the main loop.
    fn own_last_tile(
        &mut self,
        k: &mut KernelBuilder,
        tile: Tile,
        cw: Var,
        lt: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let (staging, cursor) = self.handoff_side(k)?;
        if self.staged.is_none() {
            // The leader's wait orders the warpgroup's writes, which follow its named barrier
            // (HopperGemm::epilogue_tma).
            let leader = k.cmp(CmpOp::Eq, lt, 0u32)?;
            let sync = &mut self.sync;
            k.if_(leader, |k| staging.acquire(k, sync, &cursor).map(|_| ()))
                .end()?;
        }
        self.own_epilogue(k, tile, cw, lt, acc)
    }

    /// With [`GemmConfig::epilogue_warps`]: whether the consumers apply the epilogue to the
    /// CTA's last tile themselves ([`HopperGemm::own_last_tile`]): when its ops only read
    /// (vectors, activations, a residual or C, closures). Ops that write a second tensor or
    /// fold an amax would keep more beside the accumulators than the consumers' registers
    /// hold: such an epilogue hands every tile over.
    fn owns_last_tile(&self, k: &KernelBuilder) -> Result<bool> {
        if !self.cfg.epilogue_warps {
            return Ok(false);
        }
        let epi = self.tile_epilogue(k)?;
        let writes = |op: &EpilogueOp| matches!(op, EpilogueOp::Store(_) | EpilogueOp::Amax(_));
        Ok(!epi.ops().iter().any(writes))
    }

    /// The consumer warpgroup's own epilogue of `tile`: the ops applied to its accumulators,
    /// which then go to C (by TMA stores through its staging block, or from registers).
    fn own_epilogue(
        &mut self,
        k: &mut KernelBuilder,
        tile: Tile,
        cw: Var,
        lt: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let epi = self.tile_epilogue(k)?;
        if let Some(group) = tile.group {
            // A grouped GEMM takes no per-tensor scales (block scales are promoted in the main
            // loop), and ops that need no row or tensor of its output.
            if let Some(op) = epi.ops().iter().find(|op| {
                !matches!(
                    op,
                    EpilogueOp::Scale(_) | EpilogueOp::Cols(..) | EpilogueOp::Activation(_)
                )
            }) {
                return Err(k.error(format!(
                    "the epilogue op {op:?} on a grouped GEMM: it takes scales, column vectors \
                     and activations"
                )));
            }
            let at = self.fragment_at(tile.group.map(|g| g.row0.into()), tile, cw, lt);
            epi.apply_front(k, &at, acc)?;
            return self.epilogue_grouped(k, group, tile.nb, cw, lt, acc);
        }
        // This warpgroup's 64-row block of C.
        let block = k.let_("c_block", self.consumer_block(&tile, cw))?;
        let at = self.fragment_at(None, tile, cw, lt);
        let at = FragmentAt {
            row0: Expr::from(block) * 64,
            block: [block.into(), tile.nb.into()],
            ..at
        };
        epi.apply_front(k, &at, acc)?;
        let bn = self.cfg.bn;
        match self.c.clone() {
            Output::Tma(c) => {
                let staged = self.staged_block(k)?;
                let known: Vec<(&str, &TileRef)> =
                    staged.iter().map(|(n, v)| (n.as_str(), v)).collect();
                let views = epi.back_views(k, &at, &known)?;
                if epi.touches_tiles() {
                    whole_or_edge(k, &views, [64, bn], Some(&at), |k, v, whole| {
                        epi.apply_back(k, &at, acc, v, whole)
                    })?;
                }
                self.epilogue_tma(k, &c, vec![block * 64], tile.nb, cw, lt, acc)?;
                // The next tile's staged block is the barriers' next phase.
                match self.staged.as_ref().and_then(|s| s.cursor) {
                    Some(cursor) => Ok(cursor.lap(k.isa())?),
                    None => Ok(()),
                }
            }
            Output::Global(c, _) if self.cfg.swap_ab => {
                scale_only(k, &epi, "swap-AB's transposed store")?;
                let origin = [Expr::from(tile.nb) * bn, Expr::from(block) * 64];
                super::swap_ab::store_transposed(k, &self.fragment, &c, &origin, acc)
            }
            Output::Global(c, _) => {
                if epi.accumulates(k)? {
                    return Err(k.error(
                        "the epilogue op Accumulate with C stored from registers: the output \
                         accumulates in place through the TMA store's reduction \
                         (GemmConfig::tma_store)",
                    ));
                }
                let edge = k.tile_at(&c, [block.into(), tile.nb.into()], [64, bn])?;
                let views = epi.back_views(k, &at, &[(c.name(), &edge)])?;
                self.store_block(k, edge, acc, Some((&epi, &at, views)))
            }
            Output::Grouped { .. } => Err(k.error("a grouped C for a tile without a group")),
            Output::Partials(p) => {
                // A part's tile is added to the others' by the sum that follows: only the
                // per-tensor scale (linear) may apply to it.
                scale_only(k, &epi, "split-K partials")?;
                if let Some(unit) = tile.stream {
                    let Some(fixup) = self.fixup.clone() else {
                        return Err(k.error("stream-K partials without the fixup"));
                    };
                    return self.stream_part(k, &fixup, &p, &unit, [block, tile.nb], (cw, lt), acc);
                }
                let Some(split) = tile.ksplit else {
                    return Err(k.error("split-K partials for a tile without a part"));
                };
                if let Some(fixup) = self.fixup.clone() {
                    let at = [split, block, tile.nb];
                    return self.part_and_fixup(k, &fixup, &p, at, (cw, lt), acc);
                }
                if self.cfg.swap_ab {
                    let origin = [
                        split.into(),
                        Expr::from(tile.nb) * bn,
                        Expr::from(block) * 64,
                    ];
                    return super::swap_ab::store_transposed(k, &self.fragment, &p, &origin, acc);
                }
                let origin = [
                    split.into(),
                    Expr::from(block) * 64,
                    Expr::from(tile.nb) * bn,
                ];
                let edge = k.rows_at(&p, &origin, 1, [64, bn])?;
                self.store_block(k, edge, acc, None)
            }
        }
    }

    /// The epilogue every tile of this GEMM takes: the library's fusions (FP8: `sa·sb` times
    /// the output scale as one scale, the bias per column, fused with it into one fma), the
    /// user's ([`HopperGemm::with_epilogue`]), then `alpha·acc + beta·C`
    /// ([`GemmConfig::alpha_beta`]).
    pub fn tile_epilogue(&self, k: &KernelBuilder) -> Result<Epilogue> {
        let mut epi = Epilogue::new();
        if let Some(alpha) = self.alpha {
            epi = epi.scale(alpha);
        }
        if let Some(bias) = self.bias.clone() {
            epi = epi.cols(bias, Combine::Add);
        }
        epi = epi.then(self.epilogue.clone());
        if let Output::Global(c, Some((alpha, beta))) = &self.c {
            epi = epi.linear(EpilogueTensor::of(k, c)?, *alpha, *beta);
        }
        Ok(epi)
    }

    /// Where consumer warpgroup `cw`'s accumulators of `tile` lie in C (the tile's first row
    /// `row0`, else [`Tile::first_row`], plus `64 cw` where the consumers share the tile).
    fn fragment_at(&self, row0: Option<Expr>, tile: Tile, cw: Var, lt: Var) -> FragmentAt {
        let bn = self.cfg.bn;
        let first = row0.unwrap_or_else(|| tile.first_row());
        FragmentAt {
            thread: lt,
            row0: match self.cfg.pingpong {
                true => first,
                false => first + Expr::from(cw) * 64,
            },
            col0: Expr::from(tile.nb) * bn,
            rows: self.m().into(),
            cols: self.n().into(),
            block: [self.consumer_block(&tile, cw), tile.nb.into()],
            shape: [64, bn],
        }
    }

    /// Consumer warpgroup `cw`'s 64-row block of C in `tile`: `2 mb + cw` where the consumers
    /// share the 128-row tile, the tile itself (`mb`) where they take turns.
    fn consumer_block(&self, tile: &Tile, cw: Var) -> Expr {
        match self.cfg.pingpong {
            true => tile.mb.into(),
            false => Expr::from(tile.mb) * 2 + cw,
        }
    }

    /// The epilogue of consumer warpgroup `cw` for a grouped tile: its 64-row block of C from
    /// the tile's first row plus `64 cw`, of which only the rows before the group's end are
    /// stored. With the TMA-store epilogue a block wholly inside the group goes out by TMA
    /// ([`HopperGemm::epilogue_tma`] on C's TMA view) and a block that holds the group's end from
    /// registers, bounded ([`GroupTile::c_block`]); without it every block from registers.
    #[track_caller]
    pub fn epilogue_grouped(
        &mut self,
        k: &mut KernelBuilder,
        group: GroupTile,
        nb: Var,
        cw: Var,
        lt: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let Output::Grouped { rows: c, tma } = self.c.clone() else {
            return Err(k.error("a grouped tile for a C without groups"));
        };
        let bn = self.cfg.bn;
        let row = k.let_("c_row", cw * 64 + group.row0)?;
        let block = group.c_block(k, &c, row, nb * bn, bn)?;
        match tma {
            None => self.store_block(k, block, acc, None),
            Some(view) => {
                let left = group.rows_left(k, row)?;
                let left = k.bind("c_rows_left", left);
                let whole = k.cmp(CmpOp::Ge, left, 64u32)?;
                let rows = group.rows_origin(row.into());
                let gemm = RefCell::new(self);
                k.if_(whole, |k| {
                    gemm.borrow_mut()
                        .epilogue_tma(k, &view, rows, nb, cw, lt, acc)
                })
                .else_(|k| gemm.borrow_mut().store_block(k, block, acc, None))
            }
        }
    }

    /// The TMA-store epilogue: accumulators → 16-bit pairs (`cast.registers`) → `stmatrix` into
    /// this warpgroup's staging block (`copy.stmatrix_fragment`: 64-column slabs of 64 rows x
    /// 128 bytes, 128B-swizzled as C's tensor map expects: offset(r, c) = c % 64 + 64 r +
    /// 4096 (c / 64) elements) → `fence.proxy.async` → one TMA store per slab, by the warpgroup's
    /// first thread. The staging block may still be read by the previous tile's stores: the
    /// leader waits for them first (PTX ISA 9.7.9.25.4 `cp.async.bulk.wait_group.read`).
    /// `rows` are the outer element coordinates of the block's first row in C (`[64 block]`;
    /// `[g, row]` for a masked grouped C), the slabs' columns follow from `nb`.
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub fn epilogue_tma(
        &mut self,
        k: &mut KernelBuilder,
        c: &TmaTensor<O>,
        rows: Vec<Expr>,
        nb: Var,
        cw: Var,
        lt: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let cfg = self.cfg;
        let cw_r = k.eval(cw)?;
        let bar_id = k.reg::<ty::U32>();
        k.add(bar_id, cw_r, 1u32)?;
        let leader = k.cmp(CmpOp::Eq, lt, 0u32)?;
        k.when(leader).cp_async_bulk_wait_group(0, true)?;
        k.bar_sync(bar_id, Some(128u32.into()))?;
        let Some(staging) = self.staging.as_ref() else {
            return Err(k.error("the TMA-store epilogue without its staging blocks"));
        };
        // This warpgroup's block: the staging ring's stage `cw`.
        let stage_c = staging.first_tile(k, cw_r)?;
        let out = cfg.output;
        let pairs: Vec<RegRef> = k
            .regs::<ty::Bf16x2>(cfg.bn as usize / 4)
            .into_iter()
            .map(|r| r.as_ref())
            .collect();
        let halves = TileRef::registers(out, self.fragment.clone(), pairs);
        k.cast(&halves, acc, ExecScope::Warpgroup)?;
        let staging = staging_slabs(k, out, cfg.bn, stage_c)?;
        k.copy(&staging, &halves, ExecScope::Warpgroup)?;
        // Generic-proxy writes must be visible to the async proxy before the TMA reads them.
        k.fence_proxy_async(Some(StateSpace::Shared(ptx_isa::space::SharedScope::Cta)))?;
        k.bar_sync(bar_id, Some(128u32.into()))?;
        let how = self.c_store(k, &self.tile_epilogue(k)?)?;
        k.if_(leader, |k| {
            let c = k.tma_generic(c)?;
            let slab_bytes = 64 * 64 * out.bytes();
            for slab in 0..cfg.bn / 64 {
                let slab_addr = if slab == 0 {
                    stage_c
                } else {
                    let a = k.reg::<ty::U32>();
                    k.add(a, stage_c, slab * slab_bytes)?;
                    a
                };
                let src = c_slab(out, slab_addr);
                let col = nb * (cfg.bn / 64) + slab;
                let mut origin = rows.clone();
                origin.push(col * 64);
                let dst = k.tma_box_at(&c, &origin)?;
                store_c_box(k, &dst, &src, how)?;
            }
            k.cp_async_bulk_commit_group()?;
            Ok(())
        })
        .end()
    }

    /// How C's boxes leave the staging blocks for the tiles of `epi` ([`CStore`]): reduced into
    /// what C holds where it accumulates ([`Epilogue::accumulate`]; a grouped GEMM's epilogue
    /// refuses the op before), else stored.
    fn c_store(&self, k: &KernelBuilder, epi: &Epilogue) -> Result<CStore> {
        Ok(epi.accumulates(k)?.then_some(TmaReduceOp::Add))
    }

    /// With [`GemmConfig::epilogue_warps`], in a consumer: the staging ring and the consumer's
    /// cursor on it ([`HopperGemm::hand_over`], [`HopperGemm::own_last_tile`]).
    fn handoff_side(&self, k: &KernelBuilder) -> Result<(Ring, RingCursor)> {
        match (self.staging.clone(), self.handoff) {
            (Some(staging), Some(cursor)) => Ok((staging, cursor)),
            _ => Err(k.error("a hand-over outside a consumer with epilogue warps")),
        }
    }

    /// With [`GemmConfig::epilogue_warps`]: consumer warpgroup `cw` hands its tile to its
    /// epilogue warp. Once the warp has handed its staging block back (the staging ring's
    /// `empty` of stage `cw`: its stores of the previous tile have read it; a fresh block is
    /// free), the accumulators are rounded to C's type and written into the block in the TMA
    /// store's slabs (`copy.stmatrix_fragment`), the warpgroup syncs on its named barrier, and its
    /// first thread arrives on `full` (no bytes: the writes are the warpgroup's own, ordered
    /// before the arrival by the barrier, PTX ISA 9.7.13.1 and 9.7.13.15.12).
    fn hand_over(
        &mut self,
        k: &mut KernelBuilder,
        tile: &Tile,
        cw: Var,
        lt: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let (staging, cursor) = self.handoff_side(k)?;
        if tile.group.is_some() {
            return Err(k.error("epilogue warps for a grouped tile"));
        }
        let full = staging.acquire(k, &mut self.sync, &cursor)?;
        let block = staging.first_tile(k, cursor.stage())?;
        let out = self.cfg.output;
        // A 64-column slab at a time (the accumulator's values `32 s .. 32 s + 32` are slab
        // `s`'s columns, PTX ISA 9.7.15.5.1.1.1), so only one slab's pairs are live beside the
        // accumulators: the consumers hand over within their budget.
        let slab_frag = layouts::fragment::wgmma::accumulator(64, self.cfg.input)
            .map_err(|e| k.error(e.to_string()))?;
        let values = acc
            .regs()
            .ok_or_else(|| k.error("the accumulators are not register fragments"))?
            .to_vec();
        for (s, chunk) in values.chunks(32).enumerate() {
            let part = TileRef::registers(
                ScalarType::F32,
                slab_frag.clone(),
                chunk.iter().map(|r| r.as_ref()).collect(),
            );
            let halves = pair_tile(k, &slab_frag, out);
            k.cast(&halves, &part, ExecScope::Warpgroup)?;
            let addr = k.reg::<ty::U32>();
            k.add(addr, block, s as u32 * 64 * 64 * out.bytes())?;
            k.copy(&c_slab(out, addr), &halves, ExecScope::Warpgroup)?;
        }
        let bar_id = k.reg::<ty::U32>();
        let cw_r = k.eval(cw)?;
        k.add(bar_id, cw_r, 1u32)?;
        k.bar_sync(bar_id, Some(128u32.into()))?;
        let leader = k.cmp(CmpOp::Eq, lt, 0u32)?;
        k.if_(leader, |k| staging.commit(k, &mut self.sync, full, 0))
            .end()?;
        Ok(cursor.lap(k.isa())?)
    }

    /// A consumer warpgroup's `leader` loads the current tile's block of the staged input
    /// ([`HopperGemm::staged_input`]) into the warpgroup's staging block: once the block's
    /// previous TMA store has read it (`cp.async.bulk.wait_group.read 0`, PTX ISA 9.7.9.25.4:
    /// the leader issued that store, so its own wait frees the block and no `empty` barrier is
    /// needed), it announces the block's bytes on the block's `full` barrier and issues one TMA
    /// load per 64-column slab (PTX ISA 9.7.9.27), each completing on it. Nothing without a
    /// staged input. Only `slabs` of the block ([`StagedLoadAt::Spread`]): the gate, the wait
    /// for the store and the block's bytes go with slab 0, a later slab is its TMA load alone.
    fn load_staged(
        &mut self,
        k: &mut KernelBuilder,
        leader: ptx_isa::Pred,
        slabs: std::ops::Range<u32>,
    ) -> Result<()> {
        let (Some(staging), Some(staged)) = (self.staging.clone(), self.staged.clone()) else {
            return Ok(());
        };
        let (Some(cursor), Some([row0, col0]), Some(row_tile)) =
            (staged.cursor, staged.origin, staged.row_tile)
        else {
            return Err(k.error("a staged input's load outside a consumer's tile"));
        };
        let (bn, elem) = (self.cfg.bn, O::DTYPE.bytes());
        // With epilogue warps, they load it slab by slab, except on the CTA's last tile, whose
        // epilogue is the consumer's own (HopperGemm::own_last_tile).
        let when = match (self.cfg.epilogue_warps, self.last_tile) {
            (false, _) => leader,
            (true, Some(last)) => {
                let both = k.isa().pred();
                k.and(both, leader, last)?;
                both
            }
            // Every tile handed over: the epilogue warps load it.
            (true, None) => return Ok(()),
        };
        let handed = self.cfg.epilogue_warps;
        let sync = &mut self.sync;
        k.if_(when, |k| {
            let full = if slabs.start > 0 {
                // A later slab of a spread load: slab 0's thread passed the gate and announced
                // the block's bytes (PTX ISA 9.7.13.15.12: the phase waits for all of them).
                staging.full_at(k, cursor.stage())?
            } else {
                // A gated input: its rows are in place (and visible to the TMA) first.
                if let Some(gate) = &staged.gate {
                    gate.wait(k, row_tile)?;
                }
                if handed {
                    // Once the epilogue warp's stores have read the block: the same commit as
                    // the hand-over's in the block's other phases, here with the input's bytes.
                    let full = staging.acquire(k, sync, &cursor)?;
                    let arrival = Arrival::ExpectTx(64 * bn * elem);
                    sync.arrive(k.isa(), full, arrival, ArriveSite::Peeled)?;
                    full
                } else {
                    // The leader issued the block's previous store: its own wait frees it.
                    k.cp_async_bulk_wait_group(0, true)?;
                    let full = staging.full_at(k, cursor.stage())?;
                    staging.commit(k, sync, full, 64 * bn * elem)?;
                    full
                }
            };
            let block = staging.first_tile(k, cursor.stage())?;
            let map = k.tma_generic(&staged.tensor)?;
            for slab in slabs {
                let at = if slab == 0 {
                    block
                } else {
                    let at = k.reg::<ty::U32>();
                    k.add(at, block, slab * 64 * 64 * elem)?;
                    at
                };
                let origin = [row0.clone(), col0.clone() + slab * 64];
                load_c_slab(k, (&map, origin), sync, full, at)?;
            }
            Ok(())
        })
        .end()
    }

    /// The staged input's block of the current tile in the warpgroup's staging block, once its
    /// `full` barrier says the TMA loads have delivered it: the input's name and the block in the
    /// staging slabs' layout ([`staging_slabs`]), for the epilogue's reads. `None` without a
    /// staged input.
    fn staged_block(&mut self, k: &mut KernelBuilder) -> Result<Option<(String, TileRef)>> {
        let (Some(staging), Some(staged)) = (self.staging.as_ref(), self.staged.as_ref()) else {
            return Ok(None);
        };
        let Some(cursor) = staged.cursor else {
            return Err(k.error("a staged input read outside a consumer"));
        };
        staging.wait(k, &mut self.sync, &cursor)?;
        let block = staging.first_tile(k, cursor.stage())?;
        let view = staging_slabs(k, O::DTYPE, self.cfg.bn, block)?;
        Ok(Some((staged.tensor.name().to_string(), view)))
    }

    /// The register epilogue: the warpgroup's 64 x bn accumulators (the m64nNk f32 fragment,
    /// PTX ISA 9.7.15.5.1.1.1) straight to C's block `(block, nb)` through tile ops
    /// (`HopperGemm::store_block`).
    #[track_caller]
    pub fn epilogue_registers(
        &mut self,
        k: &mut KernelBuilder,
        c: &Buffer<O>,
        block: Var,
        nb: Var,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let bn = self.cfg.bn;
        let edge = k.tile_at(c, [block.into(), nb.into()], [64, bn])?;
        self.store_block(k, edge, acc, None)
    }

    /// Split-K with the in-kernel fixup ([`super::fixup`]): consumer `cw` stores its part of
    /// the 64-row block `block` of tile column `nb` (in the kernel's orientation) to the
    /// workspace; the last part to arrive at the block sums them and stores C (transposed
    /// when swapped).
    fn part_and_fixup(
        &mut self,
        k: &mut KernelBuilder,
        fixup: &super::fixup::Fixup<O>,
        partials: &Buffer<ty::F32>,
        [split, block, nb]: [Var; 3],
        (cw, lt): (Var, Var),
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let at = [split, block, nb];
        let parts = self.cfg.split_k;
        fixup.part_and_sum(k, partials, parts, at, (cw, lt), acc, |k| {
            self.fixup_store(k, fixup, [block, nb], acc)
        })
    }

    /// Stream-K ([`GemmConfig::stream_k`]): consumer `cw`'s 64-row block `block` of tile
    /// column `nb` in `unit`. A unit that is the whole tile stores C; a part goes through the
    /// fixup ([`super::fixup::Fixup::stream_part_and_sum`]): the last part to arrive at the
    /// block sums the tile's parts in k order and stores C.
    #[allow(clippy::too_many_arguments)]
    fn stream_part(
        &mut self,
        k: &mut KernelBuilder,
        fixup: &super::fixup::Fixup<O>,
        partials: &Buffer<ty::F32>,
        unit: &StreamUnit,
        [block, nb]: [Var; 2],
        (cw, lt): (Var, Var),
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let whole = k.cmp(CmpOp::Eq, unit.parts, 1u32)?;
        k.if_else_with(
            whole,
            self,
            |k, this| this.fixup_store(k, fixup, [block, nb], acc),
            |k, this| {
                let at = [block, nb];
                fixup.stream_part_and_sum(k, partials, unit, at, (cw, lt), acc, |k| {
                    this.fixup_store(k, fixup, [block, nb], acc)
                })
            },
        )
    }

    /// The fixup's store of a block's sum (or of a whole stream-K tile) into C: consumer's
    /// 64-row block `block` of tile column `nb`, transposed when swapped.
    fn fixup_store(
        &mut self,
        k: &mut KernelBuilder,
        fixup: &super::fixup::Fixup<O>,
        [block, nb]: [Var; 2],
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let bn = self.cfg.bn;
        if self.cfg.swap_ab {
            let origin = [Expr::from(nb) * bn, Expr::from(block) * 64];
            return super::swap_ab::store_transposed(k, &self.fragment, &fixup.c, &origin, acc);
        }
        let edge = k.tile_at(&fixup.c, [block.into(), nb.into()], [64, bn])?;
        self.store_block(k, edge, acc, None)
    }

    /// Stores a warpgroup's accumulators into `edge`, a bounded 64 x bn block of C
    /// (`copy.fragment_view`, through `cast.registers` to 16-bit pairs), after `back` (an
    /// epilogue's ops from its first tensor op on, [`Epilogue::apply_back`], with the views of
    /// its tensors): without bounds (no predicates) when the block lies wholly within them,
    /// else bounded ([`whole_or_edge`]).
    fn store_block(
        &mut self,
        k: &mut KernelBuilder,
        edge: TileRef,
        acc: &Buffer<ty::F32>,
        back: Option<(&Epilogue, &FragmentAt, Vec<TileRef>)>,
    ) -> Result<()> {
        let frag = self.fragment.clone();
        let mut views = vec![edge];
        if let Some((_, _, v)) = &back {
            views.extend(v.iter().cloned());
        }
        whole_or_edge(k, &views, [64, self.cfg.bn], None, |k, v, whole| {
            if let Some((epi, at, _)) = &back {
                epi.apply_back(k, at, acc, &v[1..], whole)?;
            }
            let values = k.tile_ref(acc)?;
            write_from_f32(k, &frag, &v[0], &values, ExecScope::Warpgroup)
        })
    }
}
