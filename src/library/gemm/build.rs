//! The GEMM kernel's PTX, written with the ptx-isa builder.

use crate::tile::{
    Accumulate, Elementwise, ExecScope, OpCtx, RunCount, TileOp, TileRef, dispatch, dispatch_on,
};
use ptx_isa::builder::{ArriveOpts, BytesParam, CmpOp, ParamRef, TensorMapRef};
use ptx_isa::{
    Addr, Dim, Directive, FunctionBuilder, Module, Reg, RegRef, ScalarType, Sinkable, SpecialReg,
    StateSpace, Target, spaces, ty,
};
use smem::SwizzleMode;
use smem::mbarrier::MBARRIER_BYTES;
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pipeline::hang::HangSites;
use smem::pipeline::protocol::{ArrayId, BarrierAt};
use smem::pipeline::sync::{BarrierSync, NamedBarrier, WaitMode};

use super::GemmConfig;
use super::layout::SmemLayout;
use crate::signature::{KernelSignature, Param};

type R32 = Reg<ty::U32>;

/// Lowers a tile op through the dispatch registry (sm_90a); a miss becomes an error carrying the
/// rejection table.
fn tile_op(k: &mut FunctionBuilder, op: TileOp<'_>, scope: ExecScope) -> ptx_isa::Result<()> {
    let ctx = OpCtx {
        op,
        scope,
        target: Target::Sm90a,
    };
    dispatch(k, &ctx, None)
        .map(|_| ())
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))
}

/// [`tile_op`] for a copy completing on a named barrier: `sync` records the bytes it delivers.
fn tile_op_on(
    k: &mut FunctionBuilder,
    sync: &mut BarrierSync,
    op: TileOp<'_>,
    scope: ExecScope,
) -> ptx_isa::Result<()> {
    let ctx = OpCtx {
        op,
        scope,
        target: Target::Sm90a,
    };
    dispatch_on(k, sync, &ctx, None)
        .map(|_| ())
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))
}

/// The bytes a copy into `t` delivers to its barrier (the protocol check's count).
fn tile_bytes(t: &TileRef) -> ptx_isa::Result<u32> {
    u32::try_from(t.bytes()).map_err(|_| {
        ptx_isa::Error::new(
            ptx_isa::ErrorKind::Invalid,
            format!("a tile of {} bytes", t.bytes()),
        )
    })
}

/// The same register read as `.s32` (TMA coordinates); both live in the `.b32` class.
fn s32(r: R32) -> ptx_isa::Result<Reg<ty::S32>> {
    Ok(r.retype()?)
}

/// A built GEMM kernel: its module, the signature the launcher checks arguments against, and the
/// wait sites of a debug build.
#[derive(Debug)]
pub struct GemmKernel {
    /// The PTX module (one entry, named [`GemmConfig::name`]).
    pub module: Module,
    /// The kernel's parameters as it declares them: `tma` and `tmb` (tensor maps of A and B:
    /// bf16/f16, 2-D, box 128 x 64 and `bn / cluster_m` x 64, 128B swizzle), with `tma_store`
    /// `tmc` (C in 64 x 64 boxes), `c` (`[m, n]`, aligned as [`GemmConfig::c_align`] says; its
    /// extents are read from its shape), `m`, `n`, `k` (`.u32`), and with `alpha_beta`, `alpha`
    /// and `beta` (`.f32`).
    pub signature: KernelSignature,
    /// The wait sites (located in the PTX in a [`WaitMode::Bounded`] build).
    pub sites: HangSites,
    /// The dynamic shared memory the launch passes ([`GemmConfig::smem_bytes`]).
    pub smem_bytes: u32,
}

/// Builds the GEMM module for `cfg` (target sm_90a: wgmma and setmaxnreg need it); its
/// parameters are [`GemmKernel::signature`]'s.
pub fn build(cfg: &GemmConfig) -> ptx_isa::Result<Module> {
    build_with(cfg, WaitMode::Spin).map(|g| g.module)
}

/// [`build`] with its waits emitted as `mode` says: [`WaitMode::Bounded`] is the debug build
/// (every full/empty wait a bounded loop that writes a hang record and traps), whose wait sites
/// come back with their PTX lines. Either way the barrier protocol (bytes announced vs bytes the
/// TMA loads deliver, arrivals vs init counts) is checked; a broken one is an error naming the
/// barrier.
pub fn build_with(cfg: &GemmConfig, mode: WaitMode) -> ptx_isa::Result<GemmKernel> {
    cfg.validate()
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))?;
    let layout = cfg
        .smem_layout()
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))?;
    let smem_bytes = layout.launch_bytes;
    let mut m = Module::new(Target::Sm90a);
    m.dynamic_shared("smem", layout.base_align)?;
    let sync = BarrierSync::new(&cfg.name(), mode);
    sync.declare_globals(&mut m)?;
    let mut k = m.entry(&cfg.name());
    let gen_ = Gen::new(&mut k, *cfg, layout, sync)?;
    let (sync, signature) = gen_.body()?;
    m.add(k.finish()?)?;
    let mut sites = sync.finish().map_err(|e| {
        ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()).in_function(cfg.name())
    })?;
    if mode == WaitMode::Bounded {
        sites.locate(&m.to_ptx()?);
    }
    Ok(GemmKernel {
        module: m,
        signature,
        sites,
        smem_bytes,
    })
}

/// Declares the kernel's parameters: each call writes the `.param` and records the matching
/// [`Param`], so the PTX and the launcher's signature cannot disagree on a name, a type, the
/// order or C's alignment.
struct Params<'k> {
    k: &'k mut FunctionBuilder,
    list: Vec<Param>,
}

impl Params<'_> {
    /// A tensor map passed by value (`.param .align 64 .b8 name[128]`).
    fn tensor_map(&mut self, name: &str) -> ptx_isa::Result<BytesParam> {
        self.list.push(Param::tensor_map(name));
        self.k.param_bytes(name, 64, 128)
    }

    /// A global tensor of `dtype` with extents named `shape`, whose base is `align`-byte aligned
    /// (the `.ptr .global .align` the PTX declares, PTX ISA 5.1.6.1, and what the launcher
    /// checks of the address passed).
    fn tensor(
        &mut self,
        name: &str,
        dtype: ScalarType,
        shape: [&str; 2],
        align: u32,
    ) -> ptx_isa::Result<ParamRef<ty::U64>> {
        let extents = shape.iter().map(|&s| s.into()).collect();
        self.list
            .push(Param::tensor_aligned(name, dtype, extents, align as usize));
        self.k.param_ptr(name, StateSpace::Global, Some(align))
    }

    /// A `.u32` extent the launcher reads from the shapes that name it.
    fn extent(&mut self, name: &str) -> ptx_isa::Result<ParamRef<ty::U32>> {
        self.list.push(Param::extent_u32(name));
        self.k.param::<ty::U32>(name)
    }

    /// A scalar the caller passes.
    fn scalar<T: ty::RegType>(&mut self, name: &str) -> ptx_isa::Result<ParamRef<T>> {
        self.list.push(Param::scalar(name, T::TYPE));
        self.k.param::<T>(name)
    }
}

/// Registers shared by the producer and the consumers.
struct Common {
    /// This CTA's rank in its cluster (cluster_m = 2).
    rank: Option<R32>,
    /// M-tiles the schedule walks: tiles, or CTA-pair rows of tiles in a cluster.
    sched_m: R32,
    tid: R32,
    base: R32,
    tiles_n: R32,
    tiles: R32,
    ktiles: R32,
    m: R32,
    n: R32,
}

struct Gen<'a> {
    k: &'a mut FunctionBuilder,
    cfg: GemmConfig,
    tma: BytesParam,
    tmb: BytesParam,
    tmc: Option<BytesParam>,
    c: ParamRef<ty::U64>,
    pm: ParamRef<ty::U32>,
    pn: ParamRef<ty::U32>,
    pk: ParamRef<ty::U32>,
    alpha_beta: Option<(ParamRef<ty::F32>, ParamRef<ty::F32>)>,
    /// The m64nNk16 f32 accumulator fragment of a consumer warpgroup (layouts crate).
    fragment: layouts::fragment::TvLayout,
    /// The barrier operations, recorded for the protocol check (and bounded in a debug build).
    sync: BarrierSync,
    /// Where the stages, the C staging blocks and the barriers live.
    layout: SmemLayout,
    /// The launcher's view of the parameters, recorded as they are declared.
    signature: KernelSignature,
    /// The `full` and `empty` barrier arrays in `sync`.
    full: ArrayId,
    empty: ArrayId,
}

impl<'a> Gen<'a> {
    fn new(
        k: &'a mut FunctionBuilder,
        cfg: GemmConfig,
        layout: SmemLayout,
        mut sync: BarrierSync,
    ) -> ptx_isa::Result<Gen<'a>> {
        let protocol = |e: smem::pipeline::protocol::ProtocolError| {
            ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string())
        };
        // The ring's barriers with the init counts the pool placed them with (the ones `body`
        // initialises them with).
        let full = sync
            .declare_pool_array("full", layout.ring.full())
            .map_err(protocol)?;
        let empty = sync
            .declare_pool_array("empty", layout.ring.empty())
            .map_err(protocol)?;
        // Each parameter is declared once: the `.param` and the launcher's `Param` come from
        // the same call, in the same order.
        let mut params = Params {
            k: &mut *k,
            list: Vec::new(),
        };
        let tma = params.tensor_map("tma")?;
        let tmb = params.tensor_map("tmb")?;
        let tmc = if cfg.tma_store {
            Some(params.tensor_map("tmc")?)
        } else {
            None
        };
        let c = params.tensor("c", cfg.output, ["m", "n"], cfg.c_align())?;
        let pm = params.extent("m")?;
        let pn = params.extent("n")?;
        let pk = params.scalar::<ty::U32>("k")?;
        let alpha_beta = if cfg.alpha_beta {
            Some((
                params.scalar::<ty::F32>("alpha")?,
                params.scalar::<ty::F32>("beta")?,
            ))
        } else {
            None
        };
        let signature = KernelSignature::new(cfg.name(), params.list);
        // setmaxnreg needs a register cap at entry: __launch_bounds__(384, 1).
        k.directive(Directive::MaxNtid([GemmConfig::THREADS, 1, 1]))?;
        k.directive(Directive::MinNctaPerSm(1))?;
        if cfg.cluster_m == 2 {
            k.directive(Directive::ReqNctaPerCluster([2, 1, 1]))?;
        }
        let fragment = layouts::fragment::wgmma::accumulator(cfg.bn as i64, cfg.input)
            .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))?;
        Ok(Gen {
            layout,
            signature,
            sync,
            full,
            empty,
            fragment,
            k,
            cfg,
            tma,
            tmb,
            tmc,
            c,
            pm,
            pn,
            pk,
            alpha_beta,
        })
    }

    fn u32(&mut self) -> R32 {
        self.k.reg()
    }

    /// `ceil(a / b)` for a constant b.
    fn ceil_div(&mut self, a: R32, b: u32) -> ptx_isa::Result<R32> {
        let t = self.u32();
        self.k.add(t, a, b - 1)?;
        self.k.div(t, t, b)?;
        Ok(t)
    }

    fn body(mut self) -> ptx_isa::Result<(BarrierSync, KernelSignature)> {
        let cfg = self.cfg;
        let tid = self.k.sreg_u32(SpecialReg::Tid(Dim::X))?;
        // The dynamic shared array, aligned up to what its tiles need (1024 bytes: 128B-swizzled
        // tiles must sit on a 1024-byte boundary, PTX ISA 9.7.15.5.1.2).
        let align = self.layout.base_align;
        let raw = self.u32();
        self.k.mov_shared_addr(raw, "smem")?;
        let base = self.u32();
        self.k.add(base, raw, align - 1)?;
        self.k.and(base, base, !(align - 1))?;
        let m = self.k.load_param(&self.pm)?;
        let n = self.k.load_param(&self.pn)?;
        let kk = self.k.load_param(&self.pk)?;
        let tiles_m = self.ceil_div(m, GemmConfig::BM)?;
        let tiles_n = self.ceil_div(n, cfg.bn)?;
        let ktiles = self.ceil_div(kk, GemmConfig::BK)?;
        let (rank, sched_m) = if cfg.cluster_m == 2 {
            let rank = self.k.sreg_u32(SpecialReg::ClusterCtaRank)?;
            let pairs = self.ceil_div(tiles_m, 2)?;
            (Some(rank), pairs)
        } else {
            (None, tiles_m)
        };
        let tiles = self.u32();
        self.k.mul_lo(tiles, sched_m, tiles_n)?;
        let cm = Common {
            rank,
            sched_m,
            tid,
            base,
            tiles_n,
            tiles,
            ktiles,
            m,
            n,
        };

        // Thread 0 initialises the barriers: full[s] expects the producer's one arrival (plus the
        // stage's bytes), empty[s] one arrival per consumer warpgroup.
        let is0 = self.k.pred();
        self.k.setp(CmpOp::Eq, is0, tid, 0u32)?;
        let skip_init = self.k.label();
        self.k.unless(is0).bra(skip_init)?;
        let ring = &self.layout.ring;
        let inits: Vec<(u32, u32)> = ring.full().inits().chain(ring.empty().inits()).collect();
        let (full, empty) = inits.split_at(cfg.stages as usize);
        for (&(f, fc), &(e, ec)) in full.iter().zip(empty) {
            for (offset, count) in [(f, fc), (e, ec)] {
                let at = self.u32();
                self.k.add(at, cm.base, offset)?;
                self.k
                    .mbarrier_init(Addr::<spaces::Shared>::reg32(at), count)?;
            }
        }
        self.k.fence_mbarrier_init()?;
        self.k.place(skip_init)?;
        if cfg.cluster_m == 2 {
            // The peer arrives on these barriers and multicasts into this shared memory: the
            // whole cluster must see them initialised.
            self.k.cluster_sync()?;
        } else {
            self.k.bar_sync(0u32, None)?;
        }

        let wg = self.u32();
        self.k.shr(wg, tid, 7u32)?;
        let is_producer = self.k.pred();
        self.k.setp(CmpOp::Eq, is_producer, wg, 0u32)?;
        let consumer = self.k.label();
        let done = self.k.label();
        self.k.unless(is_producer).bra(consumer)?;
        self.producer(&cm)?;
        self.k.bra(done)?;
        self.k.place(consumer)?;
        self.consumer(&cm, wg)?;
        self.k.place(done)?;
        if cfg.cluster_m == 2 {
            // No CTA may leave while its peer can still arrive on its barriers.
            self.k.cluster_sync()?;
        }
        self.k.ret()?;
        Ok((self.sync, self.signature))
    }

    /// The address of full[stage] (or empty[stage]) for a stage in a register.
    fn bar_addr_dyn(&mut self, cm: &Common, stage: R32, empty: bool) -> ptx_isa::Result<R32> {
        let ring = &self.layout.ring;
        let array = if empty { ring.empty() } else { ring.full() };
        let off = array.region().offset;
        let r = self.u32();
        // An mbarrier is 8 bytes (PTX ISA 9.7.13.15.1); the array holds them back to back.
        self.k.mad_lo(r, stage, MBARRIER_BYTES, cm.base)?;
        self.k.add(r, r, off)?;
        Ok(r)
    }

    /// The addresses of stage `stage`'s A and B tiles (the stage in a register): one
    /// multiply-add over the ring's stride.
    fn stage_addrs(&mut self, cm: &Common, stage: R32) -> ptx_isa::Result<(R32, R32)> {
        let ring = &self.layout.ring;
        let (Some(a), Some(b), Some(stride)) = (ring.tile(0, 0), ring.tile(0, 1), ring.stride())
        else {
            return Err(ptx_isa::Error::new(
                ptx_isa::ErrorKind::Invalid,
                "the GEMM's stage ring is not evenly spaced",
            ));
        };
        let (a_off, b_off) = (a.offset, b.offset - a.offset);
        let sa = self.u32();
        self.k.mad_lo(sa, stage, stride, cm.base)?;
        if a_off != 0 {
            self.k.add(sa, sa, a_off)?;
        }
        let sb = self.u32();
        self.k.add(sb, sa, b_off)?;
        Ok((sa, sb))
    }

    /// The tile `(mb, nb)` of linear tile `t`: bands of `group_m` M-tiles, column-major within a
    /// band, so consecutive CTAs share B tiles and a band's A tiles stay in L2.
    fn schedule(&mut self, cm: &Common, t: R32) -> ptx_isa::Result<(R32, R32)> {
        let g = self.cfg.group_m;
        let per_band = self.u32();
        self.k.mul_lo(per_band, cm.tiles_n, g)?;
        let band = self.u32();
        self.k.div(band, t, per_band)?;
        let first_m = self.u32();
        self.k.mul_lo(first_m, band, g)?;
        let rows = self.u32();
        self.k.sub(rows, cm.sched_m, first_m)?;
        self.k.min(rows, rows, g)?;
        let in_band = self.u32();
        self.k.mul_lo(in_band, band, per_band)?;
        self.k.sub(in_band, t, in_band)?;
        let mb = self.u32();
        self.k.rem(mb, in_band, rows)?;
        self.k.add(mb, mb, first_m)?;
        let nb = self.u32();
        self.k.div(nb, in_band, rows)?;
        if let Some(rank) = cm.rank {
            // A CTA pair takes M-tiles 2p and 2p + 1 of one column.
            self.k.mad_lo(mb, mb, 2u32, rank)?;
        }
        Ok((mb, nb))
    }

    /// A persistent loop over this CTA's tiles: `for t = ctaid.x; t < tiles; t += nctaid.x`.
    fn tile_loop(
        &mut self,
        cm: &Common,
        body: impl FnOnce(&mut Self, R32) -> ptx_isa::Result<()>,
    ) -> ptx_isa::Result<()> {
        let (id, count) = if self.cfg.cluster_m == 2 {
            (
                SpecialReg::ClusterId(Dim::X),
                SpecialReg::NClusterId(Dim::X),
            )
        } else {
            (SpecialReg::CtaId(Dim::X), SpecialReg::NCtaId(Dim::X))
        };
        let t = self.k.sreg_u32(id)?;
        let step = self.k.sreg_u32(count)?;
        let (top, end) = (self.k.label(), self.k.label());
        self.k.place(top)?;
        let out = self.k.pred();
        self.k.setp(CmpOp::Ge, out, t, cm.tiles)?;
        self.k.when(out).bra(end)?;
        body(self, t)?;
        self.k.add(t, t, step)?;
        self.k.bra(top)?;
        self.k.place(end)
    }

    /// `for kt in 0..ktiles`.
    fn k_loop(
        &mut self,
        cm: &Common,
        body: impl FnOnce(&mut Self, R32) -> ptx_isa::Result<()>,
    ) -> ptx_isa::Result<()> {
        let kt = self.u32();
        self.k.mov(kt, 0u32)?;
        let (top, end) = (self.k.label(), self.k.label());
        self.k.place(top)?;
        let out = self.k.pred();
        self.k.setp(CmpOp::Ge, out, kt, cm.ktiles)?;
        self.k.when(out).bra(end)?;
        body(self, kt)?;
        self.k.add(kt, kt, 1u32)?;
        self.k.bra(top)?;
        self.k.place(end)
    }

    fn producer(&mut self, cm: &Common) -> ptx_isa::Result<()> {
        let cfg = self.cfg;
        self.k.setmaxnreg(false, GemmConfig::PRODUCER_REGS)?;
        let leader = self.k.pred();
        self.k.setp(CmpOp::Eq, leader, cm.tid, 0u32)?;
        let idle = self.k.label();
        self.k.unless(leader).bra(idle)?;
        let tma = TensorMapRef::Generic(self.k.tensor_map_address(&(&self.tma).into())?);
        let tmb = TensorMapRef::Generic(self.k.tensor_map_address(&(&self.tmb).into())?);
        // The producer's phase counts the laps round the ring (its parity is bit 0): a debug
        // build's hang records read the producer's trip from it and the stage, at no register's
        // cost (the producer runs in 24); the consumers' trips follow from it.
        let ring = RingCursor::new(self.k, cfg.stages, Phase::Laps)?;
        let stage = ring.stage();
        self.sync.count_laps(ring.phase());
        self.tile_loop(cm, |g, t| {
            let (mb, nb) = g.schedule(cm, t)?;
            let (row_a, row_b) = (g.u32(), g.u32());
            g.k.mul_lo(row_a, mb, GemmConfig::BM)?;
            g.k.mul_lo(row_b, nb, cfg.bn)?;
            g.k_loop(cm, |g, kt| {
                // Wait until the consumers have released this stage (a fresh barrier counts as
                // released for parity 1: PTX ISA 9.7.13.15.16).
                let empty = g.bar_addr_dyn(cm, stage, true)?;
                let want = ring.producer_parity(g.k)?;
                let (full_id, empty_id) = (BarrierAt::Each(g.full), BarrierAt::Each(g.empty));
                g.sync.wait(g.k, empty_id, Some(stage), empty, want)?;
                let full = g.bar_addr_dyn(cm, stage, false)?;
                let tx = g.layout.ring.tx_bytes();
                g.sync.arrive_expect_tx(g.k, full_id, full, tx)?;
                let (sa, sb) = g.stage_addrs(cm, stage)?;
                let x = g.u32();
                g.k.mul_lo(x, kt, GemmConfig::BK)?;
                let input = cfg.input;
                let swizzle = g.layout.swizzle();
                let (a_align, b_align) = (g.layout.a.align(), g.layout.b.align());
                let a_dst =
                    TileRef::shared_row_major(input, GemmConfig::BM, GemmConfig::BK, sa, a_align)
                        .with_swizzle(swizzle);
                let a_src = TileRef::tensor_map(
                    input,
                    GemmConfig::BM,
                    GemmConfig::BK,
                    tma.clone(),
                    vec![s32(x)?.into(), s32(row_a)?.into()],
                );
                let full_bar = NamedBarrier {
                    at: full_id,
                    addr: full,
                };
                tile_op_on(
                    g.k,
                    &mut g.sync,
                    TileOp::CopyAsync {
                        dst: &a_dst,
                        src: &a_src,
                        mbar: Some(full_bar),
                        multicast: None,
                    },
                    ExecScope::Thread,
                )?;
                match cm.rank {
                    None => {
                        let b_dst =
                            TileRef::shared_row_major(input, cfg.bn, GemmConfig::BK, sb, b_align)
                                .with_swizzle(swizzle);
                        let b_src = TileRef::tensor_map(
                            input,
                            cfg.bn,
                            GemmConfig::BK,
                            tmb.clone(),
                            vec![s32(x)?.into(), s32(row_b)?.into()],
                        );
                        tile_op_on(
                            g.k,
                            &mut g.sync,
                            TileOp::CopyAsync {
                                dst: &b_dst,
                                src: &b_src,
                                mbar: Some(full_bar),
                                multicast: None,
                            },
                            ExecScope::Thread,
                        )?;
                    }
                    Some(rank) => {
                        // This CTA's half of the shared B tile, written to the same offset of
                        // both CTAs' shared memory and counted by both CTAs' full barriers
                        // (PTX ISA 9.7.9.27: .multicast::cluster, ctaMask).
                        let half = cfg.bn / 2;
                        let (rb, db) = (g.u32(), g.u32());
                        g.k.mad_lo(rb, rank, half, row_b)?;
                        g.k.mad_lo(db, rank, half * GemmConfig::BK * 2, sb)?;
                        let half_dst =
                            TileRef::shared_row_major(input, half, GemmConfig::BK, db, b_align)
                                .with_swizzle(swizzle);
                        let half_src = TileRef::tensor_map(
                            input,
                            half,
                            GemmConfig::BK,
                            tmb.clone(),
                            vec![s32(x)?.into(), s32(rb)?.into()],
                        );
                        tile_op_on(
                            g.k,
                            &mut g.sync,
                            TileOp::CopyAsync {
                                dst: &half_dst,
                                src: &half_src,
                                mbar: Some(full_bar),
                                multicast: Some(0b11u16.into()),
                            },
                            ExecScope::Thread,
                        )?;
                        // This CTA's full barrier also counts the peer's half, which the peer's
                        // producer multicasts here from the same line of the program.
                        g.sync.copy(full_id, tile_bytes(&half_dst)?);
                    }
                }
                ring.advance(g.k)
            })
        })?;
        self.sync.end_trips();
        self.k.place(idle)
    }

    fn consumer(&mut self, cm: &Common, wg: R32) -> ptx_isa::Result<()> {
        let cfg = self.cfg;
        self.k.setmaxnreg(true, GemmConfig::CONSUMER_REGS)?;
        let cw = self.u32();
        self.k.sub(cw, wg, 1u32)?;
        let lt = self.u32();
        self.k.and(lt, cm.tid, 127u32)?;
        let leader = self.k.pred();
        self.k.setp(CmpOp::Eq, leader, lt, 0u32)?;
        let acc: Vec<Reg<ty::F32>> = self.k.regs(cfg.bn as usize / 2);
        let acc_refs: Vec<RegRef> = acc.iter().map(|r| r.as_ref()).collect();
        let d_tile = TileRef::registers(ScalarType::F32, self.fragment.clone(), acc_refs.clone());
        let ring = RingCursor::new(self.k, cfg.stages, Phase::Parity)?;
        let (stage, phase) = (ring.stage(), ring.phase());
        self.tile_loop(cm, |g, t| {
            let (mb, nb) = g.schedule(cm, t)?;
            g.k_loop(cm, |g, kt| {
                let full = g.bar_addr_dyn(cm, stage, false)?;
                let (full_id, empty_id) = (BarrierAt::Each(g.full), BarrierAt::Each(g.empty));
                g.sync.wait(g.k, full_id, Some(stage), full, phase)?;
                let (sa, sb) = g.stage_addrs(cm, stage)?;
                // This warpgroup's 64 rows of A.
                g.k.mad_lo(sa, cw, 64 * GemmConfig::BK * 2, sa)?;
                let first = g.k.pred();
                g.k.setp(CmpOp::Ne, first, kt, 0u32)?;
                // D (+)= A·Bᵀ for this k-tile as one tile op (gemm_async.wgmma: fence, the K/16
                // wgmmas with descriptors from the swizzled tiles, commit).
                let swizzle = g.layout.swizzle();
                let (a_align, b_align) = (g.layout.a.align(), g.layout.b.align());
                let a_s = TileRef::shared_row_major(cfg.input, 64, GemmConfig::BK, sa, a_align)
                    .with_swizzle(swizzle);
                let b_s = TileRef::shared_row_major(cfg.input, cfg.bn, GemmConfig::BK, sb, b_align)
                    .with_swizzle(swizzle);
                tile_op(
                    g.k,
                    TileOp::GemmAsync {
                        d: &d_tile,
                        a: &a_s,
                        b: &b_s,
                        accumulate: Accumulate::Pred(first),
                    },
                    ExecScope::Warpgroup,
                )?;
                g.k.wgmma_wait_group(0)?;
                let empty = g.bar_addr_dyn(cm, stage, true)?;
                // The leaders of both consumer warpgroups: 2 arrivals per phase.
                g.sync.arrive(g.k.when(leader), empty_id, empty, 2)?;
                if let Some(rank) = cm.rank {
                    // The peer's producer also writes this stage (its half of B): release it
                    // there too.
                    let (peer, remote) = (g.u32(), g.u32());
                    g.k.xor(peer, rank, 1u32)?;
                    g.k.mapa_shared(remote, empty, peer)?;
                    g.k.when(leader).mbarrier_arrive_with(
                        &ArriveOpts {
                            release: Some(ptx_isa::builder::Scope::Cluster),
                            ..ArriveOpts::default()
                        },
                        Sinkable::Sink,
                        Addr::<spaces::SharedCluster>::reg32(remote),
                    )?;
                    // And the peer's consumers release this CTA's stage the same way.
                    g.sync.remote_arrive(empty_id, 2);
                }
                ring.advance(g.k)
            })?;
            match g.tmc.clone() {
                Some(tmc) => g.epilogue_tma(cm, cw, lt, mb, nb, &acc, &tmc),
                None => g.epilogue(cm, cw, mb, nb, &acc),
            }
        })?;
        if self.cfg.tma_store {
            // The last tile's stores must be done before the CTA's shared memory goes away.
            self.k.when(leader).cp_async_bulk_wait_group(0, false)?;
        }
        Ok(())
    }

    /// The TMA-store epilogue: accumulators → bf16/f16 pairs → `stmatrix.x4` into this
    /// warpgroup's staging block (64-column slabs of 64 rows x 128 bytes, 128B-swizzled as the
    /// tensor map expects: 16-byte chunk `c` of row `r` at chunk `c ^ (r % 8)`, PTX ISA
    /// 9.7.9.27.1.2? "Tensor-copy swizzle modes") → `fence.proxy.async` → one TMA store per slab.
    /// `stmatrix` matrix `q` (given by lanes 8q..8q+7) holds rows `8(q%2)`.. and columns of
    /// chunk `2j + q/2` of the accumulator fragment (PTX ISA 9.7.14.5.16 and 9.7.15.5.1.1.1).
    #[allow(clippy::too_many_arguments)]
    fn epilogue_tma(
        &mut self,
        cm: &Common,
        cw: R32,
        lt: R32,
        mb: R32,
        nb: R32,
        acc: &[Reg<ty::F32>],
        tmc: &BytesParam,
    ) -> ptx_isa::Result<()> {
        let cfg = self.cfg;
        let bar_id = self.u32();
        self.k.add(bar_id, cw, 1u32)?;
        let leader = self.k.pred();
        self.k.setp(CmpOp::Eq, leader, lt, 0u32)?;
        // The staging block may still be read by the previous tile's stores.
        self.k.when(leader).cp_async_bulk_wait_group(0, true)?;
        self.k.bar_sync(bar_id, Some(128u32.into()))?;
        let Some(staging) = self.layout.c_staging.as_ref() else {
            return Err(ptx_isa::Error::new(
                ptx_isa::ErrorKind::Invalid,
                "the TMA-store epilogue without its staging blocks",
            ));
        };
        // This warpgroup's block: the second consumer's follows the first's.
        let (block, offset) = (staging.bytes / 2, staging.offset);
        let stage_c = self.u32();
        self.k.mad_lo(stage_c, cw, block, cm.base)?;
        self.k.add(stage_c, stage_c, offset)?;
        // Accumulators → 16-bit pairs (cast.registers) → the staging block (copy.stmatrix_fragment):
        // 64-column slabs of 64 rows x 128 bytes, 128B-swizzled as the C tensor map expects
        // (offset(r, c) = c % 64 + 64 r + 4096 (c / 64) elements).
        // The TMA-store epilogue takes a 16-bit C (GemmConfig::validate).
        let out = cfg.output;
        let acc_refs: Vec<RegRef> = acc.iter().map(|r| r.as_ref()).collect();
        let pairs: Vec<RegRef> = self
            .k
            .regs::<ty::Bf16x2>(acc.len() / 2)
            .into_iter()
            .map(|r| r.as_ref())
            .collect();
        let f32s = TileRef::registers(ScalarType::F32, self.fragment.clone(), acc_refs);
        let halves = TileRef::registers(out, self.fragment.clone(), pairs);
        tile_op(
            self.k,
            TileOp::Cast {
                dst: &halves,
                src: &f32s,
            },
            ExecScope::Warpgroup,
        )?;
        use layouts::IntTuple as T;
        let slabs = (cfg.bn / 64) as i64;
        let slab_layout = layouts::Layout::new(
            T::tuple([T::tuple([T::Int(64), T::Int(slabs)]), T::Int(64)]),
            T::tuple([T::tuple([T::Int(1), T::Int(4096)]), T::Int(64)]),
        )
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))?;
        let mut staging = TileRef::shared_row_major(out, 64, cfg.bn, stage_c, 1024)
            .with_swizzle(SwizzleMode::B128);
        staging.layout = Some(slab_layout);
        tile_op(
            self.k,
            TileOp::Copy {
                dst: &staging,
                src: &halves,
            },
            ExecScope::Warpgroup,
        )?;
        // Generic-proxy writes must be visible to the async proxy before the TMA reads them.
        self.k
            .fence_proxy_async(Some(StateSpace::Shared(ptx_isa::space::SharedScope::Cta)))?;
        self.k.bar_sync(bar_id, Some(128u32.into()))?;
        let not_leader = self.k.label();
        self.k.unless(leader).bra(not_leader)?;
        let map = TensorMapRef::Generic(self.k.tensor_map_address(&tmc.into())?);
        let (x, y) = (self.u32(), self.u32());
        self.k.mul_lo(x, nb, cfg.bn)?;
        self.k.mul_lo(y, mb, GemmConfig::BM)?;
        self.k.mad_lo(y, cw, 64u32, y)?;
        for slab in 0..cfg.bn / 64 {
            let xs = self.u32();
            self.k.add(xs, x, slab * 64)?;
            let slab_addr = if slab == 0 {
                stage_c
            } else {
                let a = self.u32();
                self.k.add(a, stage_c, slab * 8192)?;
                a
            };
            let src = TileRef::shared_row_major(cfg.input, 64, 64, slab_addr, 1024)
                .with_swizzle(SwizzleMode::B128);
            let dst = TileRef::tensor_map(
                cfg.input,
                64,
                64,
                map.clone(),
                vec![s32(xs)?.into(), s32(y)?.into()],
            );
            tile_op(
                self.k,
                TileOp::CopyAsync {
                    dst: &dst,
                    src: &src,
                    mbar: None,
                    multicast: None,
                },
                ExecScope::Thread,
            )?;
        }
        self.k.cp_async_bulk_commit_group()?;
        self.k.place(not_leader)
    }

    /// The register epilogue: the warpgroup's 64 x bn accumulators (the m64nNk f32 fragment, PTX
    /// ISA 9.7.15.5.1.1.1) straight to C through tile ops: `copy.fragment_view` (C as a tile of a
    /// matrix with run-time pitch N, bounded on edge tiles), `cast.registers` to bf16/f16 pairs,
    /// and with `alpha_beta` a load of C and `elementwise.registers` for `alpha·acc + beta·C`.
    /// Whole tiles take a copy without bounds (no predicates); edge tiles the bounded one.
    fn epilogue(
        &mut self,
        cm: &Common,
        cw: R32,
        mb: R32,
        nb: R32,
        acc: &[Reg<ty::F32>],
    ) -> ptx_isa::Result<()> {
        let cfg = self.cfg;
        let out = cfg.output;
        let bytes = cfg.output.bytes();
        // The block's first row and column, and its address in C.
        let (row, col) = (self.u32(), self.u32());
        self.k.mul_lo(row, mb, GemmConfig::BM)?;
        self.k.mad_lo(row, cw, 64u32, row)?;
        self.k.mul_lo(col, nb, cfg.bn)?;
        let idx = self.u32();
        self.k.mad_lo(idx, row, cm.n, col)?;
        let c = self.k.load_param(&self.c)?;
        let (cg, off, at) = (
            self.k.reg::<ty::U64>(),
            self.k.reg::<ty::U64>(),
            self.k.reg::<ty::U64>(),
        );
        self.k.cvta_to(StateSpace::Global, cg, c)?;
        self.k.mul_wide(off, idx, bytes)?;
        self.k.add(at, cg, off)?;
        // Rows and columns of the block inside C: max(m, row) - row (zero past the end), n - col.
        let (rows_in, cols_in) = (self.u32(), self.u32());
        self.k.max(rows_in, cm.m, row)?;
        self.k.sub(rows_in, rows_in, row)?;
        self.k.sub(cols_in, cm.n, col)?;
        // With N even every row starts on a pair boundary (C itself is 256-byte aligned).
        let pair = if cfg.n_even { 2 } else { 1 };
        let pitch = RunCount::new(cm.n, pair);
        let whole = TileRef::global_pitched(out, 64, cfg.bn, at, pair * bytes, pitch);
        let edge = whole
            .clone()
            .with_bounds(RunCount::new(rows_in, 1), RunCount::new(cols_in, pair));
        let ab = match &self.alpha_beta {
            Some((pa, pb)) => {
                let (pa, pb) = (pa.clone(), pb.clone());
                Some((self.k.load_param(&pa)?, self.k.load_param(&pb)?))
            }
            None => None,
        };
        let full = self.k.pred();
        let p2 = self.k.pred();
        self.k.setp(CmpOp::Ge, full, rows_in, 64u32)?;
        self.k.setp(CmpOp::Ge, p2, cols_in, cfg.bn)?;
        self.k.and(full, full, p2)?;
        let (partial, end) = (self.k.label(), self.k.label());
        self.k.unless(full).bra(partial)?;
        self.store_c(&whole, acc, ab)?;
        self.k.bra(end)?;
        self.k.place(partial)?;
        self.store_c(&edge, acc, ab)?;
        self.k.place(end)
    }

    /// `c = acc` (or `alpha·acc + beta·c`) for one view of the warpgroup's block of C.
    fn store_c(
        &mut self,
        c: &TileRef,
        acc: &[Reg<ty::F32>],
        ab: Option<(Reg<ty::F32>, Reg<ty::F32>)>,
    ) -> ptx_isa::Result<()> {
        let wg = ExecScope::Warpgroup;
        let f32s = |k: &mut FunctionBuilder, n: usize| -> Vec<RegRef> {
            k.regs::<ty::F32>(n)
                .into_iter()
                .map(|r| r.as_ref())
                .collect()
        };
        let pairs = |k: &mut FunctionBuilder, n: usize| -> Vec<RegRef> {
            k.regs::<ty::Bf16x2>(n)
                .into_iter()
                .map(|r| r.as_ref())
                .collect()
        };
        let frag = self.fragment.clone();
        let mut result = TileRef::registers(
            ScalarType::F32,
            frag.clone(),
            acc.iter().map(|r| r.as_ref()).collect(),
        );
        if let Some((alpha, beta)) = ab {
            // C into f32 registers of the accumulator's fragment (16-bit C through pairs).
            let old = TileRef::registers(ScalarType::F32, frag.clone(), f32s(self.k, acc.len()));
            if c.dtype == ScalarType::F32 {
                tile_op(self.k, TileOp::Copy { dst: &old, src: c }, wg)?;
            } else {
                let packed =
                    TileRef::registers(c.dtype, frag.clone(), pairs(self.k, acc.len() / 2));
                tile_op(
                    self.k,
                    TileOp::Copy {
                        dst: &packed,
                        src: c,
                    },
                    wg,
                )?;
                tile_op(
                    self.k,
                    TileOp::Cast {
                        dst: &old,
                        src: &packed,
                    },
                    wg,
                )?;
            }
            let mixed = TileRef::registers(ScalarType::F32, frag.clone(), f32s(self.k, acc.len()));
            tile_op(
                self.k,
                TileOp::Elementwise {
                    dst: &mixed,
                    a: &result,
                    b: Some(&old),
                    f: Elementwise::Axpby {
                        alpha: alpha.into(),
                        beta: beta.into(),
                    },
                },
                wg,
            )?;
            result = mixed;
        }
        if c.dtype == ScalarType::F32 {
            return tile_op(
                self.k,
                TileOp::Copy {
                    dst: c,
                    src: &result,
                },
                wg,
            );
        }
        let packed = TileRef::registers(c.dtype, frag, pairs(self.k, acc.len() / 2));
        tile_op(
            self.k,
            TileOp::Cast {
                dst: &packed,
                src: &result,
            },
            wg,
        )?;
        tile_op(
            self.k,
            TileOp::Copy {
                dst: c,
                src: &packed,
            },
            wg,
        )
    }
}
