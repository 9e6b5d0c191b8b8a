//! The tensor-parallel kernels: the all-gather + GEMM's gated GEMM (the library's Hopper GEMM
//! whose producer waits on each chunk's flag and whose tile walk starts at the rank's own rows),
//! the reduce-scatter's slot sum (each owner adds its ranks' partials, its own first), and the
//! owner's GEMM that does that sum in its epilogue instead ([`reduce_scatter_gemm`]).

use ptx_isa::builder::CmpOp;
use ptx_isa::{Target, ty};
use smem::pipeline::sync::WaitMode;

use crate::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};
use crate::library::gemm::{GemmConfig, GemmKernel, HopperGemm, StagedLoadAt};
use crate::parts::{Epilogue, RowGate};

use super::plan::GatePolls;
use crate::signature::ExtentFacts;

/// Threads per block of the slot sum.
pub const SUM_BLOCK: u32 = 256;
/// Elements one thread of the slot sum adds (16 bytes of bf16).
pub const SUM_VEC: u32 = 8;

/// The gated GEMM of an all-gather + GEMM: `cfg`'s bf16 GEMM (`C = A·Bᵀ`, parameters `m`, `n`,
/// `k`, `a`, `b`, `c`) with the parameters `flags` `[chunks]` and `epoch` of its producer's
/// [`RowGate`] (chunks of `chunk_tiles` M-tiles) and `shift`, the M-tiles its walk is rotated by.
/// Named `{cfg.name()}_ag{chunk_tiles}`.
pub fn all_gather_gemm(cfg: &GemmConfig, chunk_tiles: u32) -> Result<GemmKernel> {
    let mut k = KernelBuilder::new(&format!("{}_ag{chunk_tiles}", cfg.name()), Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, *cfg, WaitMode::Spin)?;
    let gate = RowGate::declare(&mut k, chunk_tiles)?;
    let shift = k.scalar::<ty::U32>("shift")?;
    let shift = k.bind("shift", shift);
    gemm.with_row_gate(&k, gate, Some(shift))?.build(k)
}

/// The owner's GEMM of a GEMM + reduce-scatter with the slot sum in its epilogue: rank `rank`
/// of `world` computes its partial of its own shard (`cfg`'s bf16 GEMM, parameters `m`, `n`,
/// `k`, `a`, `b`, `c`), rounds it to bf16 (the partial the unfused path stores in its slot),
/// then adds its peers' partials `slot{r}` `[m, n]` (parameters in rank order, its own left out)
/// in f32 in [`super::plan::sum_order`] (its own first, then its peers' in rank order) and stores
/// the sum, rounded once, to `c`: the slot sum's result to the bit ([`slot_sum`]). With the
/// TMA-store epilogue its first peer's partial is a staged input
/// ([`HopperGemm::staged_input`]): a TMA tensor whose block each consumer loads into its C
/// staging block under its main loop (from the owner's own memory, or a peer's across the
/// links where the partials stay with their writers: [`super::plan::Placement::Writer`]); the
/// others (more than two ranks) are read from global memory in the epilogue.
/// Gated (`gated` some: two ranks and the TMA-store epilogue, the one peer's partial is the
/// staged input, [`super::ReduceScatterPlan::gated`]) that input's loads wait on a [`RowGate`]
/// of one flag (parameters `flags` `[chunks]` and `epoch`, after the slots): the peer raises it
/// once its partial is written, so the owner's GEMM need not wait for the peer before it
/// starts. The loading thread polls the flag before each tile's load, or with
/// [`GatePolls::Once`] before its first only ([`RowGate::remembered`]). The staged input is
/// loaded under k-tile `staged_load` of each tile's main loop
/// ([`HopperGemm::with_staged_load_at`]). Named `{cfg.name()}_rs{rank}of{world}`, `_gated`
/// after it (`_gated1` polling once), then `_kt{n}` where the load is under k-tile `n`,
/// `_sp{first}x{every}` where it is spread slab by slab.
pub fn reduce_scatter_gemm(
    cfg: &GemmConfig,
    world: u32,
    rank: u32,
    gated: Option<GatePolls>,
    staged_load: StagedLoadAt,
) -> Result<GemmKernel> {
    let gate_name = match gated {
        None => "",
        Some(GatePolls::EveryTile) => "_gated",
        Some(GatePolls::Once) => "_gated1",
    };
    let at_name = match staged_load {
        StagedLoadAt::Middle => String::new(),
        StagedLoadAt::KTile(n) => format!("_kt{n}"),
        StagedLoadAt::Spread { first, every } => format!("_sp{first}x{every}"),
    };
    let name = format!("{}_rs{rank}of{world}{gate_name}{at_name}", cfg.name());
    let mut k = KernelBuilder::new(&name, Target::Sm90a);
    if rank >= world {
        return Err(k.error(format!("rank {rank} of {world}")));
    }
    if gated.is_some() && (world != 2 || !cfg.tma_store) {
        return Err(k.error(format!(
            "a gated owner's GEMM at {world} ranks, TMA store {}: the gate is on the staged \
             input, the one peer's partial of two ranks with the TMA-store epilogue",
            cfg.tma_store
        )));
    }
    let mut gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, *cfg, WaitMode::Spin)?;
    let (m, n) = (gemm.m(), gemm.n());
    // Rounded as the GEMM's own bf16 store rounds (round to nearest even, PTX ISA 9.7.9.21
    // `cvt.rn.bf16.f32`), and widened back exactly.
    let mut epilogue = Epilogue::new().map(|k, v, _| {
        let half = k.reg::<ty::Bf16>();
        k.cvt(half, v)?;
        let wide = k.reg::<ty::F32>();
        k.cvt(wide, half)?;
        Ok(wide)
    });
    let aligned = TensorOpts::default().align(16);
    // The parameters in rank order; the sum in the owner's order (the same peers' order).
    let peers = super::plan::sum_order(world as usize, rank as usize);
    for (i, r) in peers.into_iter().skip(1).enumerate() {
        let name = format!("slot{r}");
        epilogue = match i == 0 && cfg.tma_store {
            true => epilogue.residual(&gemm.staged_input(&mut k, &name)?),
            false => epilogue.residual(&k.tensor::<ty::Bf16>(&name, [m, n], aligned.clone())?),
        };
    }
    let gemm = match gated {
        Some(polls) => {
            let gate = RowGate::declare_whole(&mut k)?;
            let gate = match polls {
                GatePolls::EveryTile => gate,
                // Here, at the kernel's top level: every thread that waits sets its memory.
                GatePolls::Once => gate.remembered(&mut k)?,
            };
            gemm.with_staged_gate(&k, gate)?
        }
        None => gemm,
    };
    // A staged input only with the TMA store and a peer (one rank adds nothing).
    let gemm = match (cfg.tma_store && world > 1, staged_load) {
        (true, at) if at != StagedLoadAt::Middle => gemm.with_staged_load_at(&k, at)?,
        _ => gemm,
    };
    gemm.with_epilogue(epilogue).build(k)
}

/// `out[i] = Σ_s slots[s, i]` over `world` slots of bf16, added in f32 in owner `owner`'s
/// [`super::plan::sum_order`] (its own slot first, then the others in rank order) and rounded
/// once: the deterministic sum of a reduce-scatter's partials. `len` (a multiple of
/// [`SUM_VEC`]) is read from the tensors; a thread adds [`SUM_VEC`] consecutive elements.
/// Named `tp_slot_sum_w{world}_o{owner}`.
pub fn slot_sum(world: u32, owner: u32) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new(&format!("tp_slot_sum_w{world}_o{owner}"), Target::Sm90a);
    if owner >= world {
        return Err(k.error(format!("owner {owner} of {world}")));
    }
    let facts = ExtentFacts::NONE
        .at_least(1)
        .multiple_of(u64::from(SUM_VEC));
    let len = k.symbol_with("len", facts)?;
    let aligned = TensorOpts::default().align(16);
    let slots = k.tensor::<ty::Bf16>("slots", [Expr::from(world), len.into()], aligned.clone())?;
    let out = k.tensor::<ty::Bf16>("out", [len], aligned)?;
    let [block] = k.cta_id([Expr::ceil_div(len, SUM_BLOCK * SUM_VEC)])?;
    let [t] = k.thread_id([SUM_BLOCK])?;
    let i = k.let_("i", (block * SUM_BLOCK + t) * SUM_VEC)?;
    let inside = k.cmp(CmpOp::Lt, i, len)?;
    k.if_(inside, |k| {
        let acc: Vec<_> = (0..SUM_VEC).map(|_| k.reg::<ty::F32>()).collect();
        for (nth, s) in super::plan::sum_order(world as usize, owner as usize)
            .into_iter()
            .enumerate()
        {
            let zero = ptx_isa::Src::Imm(ptx_isa::Imm::UInt(0));
            let v = k.load_n(
                &slots,
                [Expr::from(s as u32), i.into()],
                SUM_VEC as usize,
                zero,
            )?;
            for (a, x) in acc.iter().zip(v) {
                if nth == 0 {
                    k.cvt(*a, x)?;
                } else {
                    let f = k.reg::<ty::F32>();
                    k.cvt(f, x)?;
                    k.add(*a, *a, f)?;
                }
            }
        }
        let packed: Vec<_> = (0..SUM_VEC).map(|_| k.reg::<ty::Bf16>()).collect();
        for (p, a) in packed.iter().zip(&acc) {
            k.cvt(*p, *a)?;
        }
        k.store_n(&out, [i], &packed)
    })
    .end()?;
    k.finish()
}

/// `count[0] += #{i : got[i] != want[i]}` over bf16 tensors of `len` elements (a multiple of
/// [`SUM_VEC`]), compared as f32 (`setp.neu`: a NaN never matches): the device-side check of a
/// stress loop, which adds every launch's mismatches into one counter and reads it once.
pub fn count_mismatches() -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("tp_count_mismatches", Target::Sm90a);
    let facts = ExtentFacts::NONE
        .at_least(1)
        .multiple_of(u64::from(SUM_VEC));
    let len = k.symbol_with("len", facts)?;
    let aligned = TensorOpts::default().align(16);
    let got = k.tensor::<ty::Bf16>("got", [len], aligned.clone())?;
    let want = k.tensor::<ty::Bf16>("want", [len], aligned)?;
    let count = k.tensor::<ty::U32>("count", [1u32], TensorOpts::default())?;
    let [block] = k.cta_id([Expr::ceil_div(len, SUM_BLOCK * SUM_VEC)])?;
    let [t] = k.thread_id([SUM_BLOCK])?;
    let i = k.let_("i", (block * SUM_BLOCK + t) * SUM_VEC)?;
    let inside = k.cmp(CmpOp::Lt, i, len)?;
    k.if_(inside, |k| {
        let zero = ptx_isa::Src::Imm(ptx_isa::Imm::UInt(0));
        let g = k.load_n(&got, [i], SUM_VEC as usize, zero)?;
        let w = k.load_n(&want, [i], SUM_VEC as usize, zero)?;
        let n = k.reg::<ty::U32>();
        k.mov(n, 0u32)?;
        for (g, w) in g.into_iter().zip(w) {
            let (gf, wf) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
            k.cvt(gf, g)?;
            k.cvt(wf, w)?;
            let differ = k.isa().pred();
            k.isa().setp(CmpOp::Neu, differ, gf, wf)?;
            let one = k.select(differ, 1u32, 0u32)?;
            k.add(n, n, one)?;
        }
        k.red_release_add(&count, [0u32], n, ptx_isa::builder::Scope::Gpu)
    })
    .end()?;
    k.finish()
}
