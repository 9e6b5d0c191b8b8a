//! `gemm_async.tcgen05_mma` (sm_100a): D (tensor memory, 128 lanes x N f32 columns) = A·Bᵀ (+ D),
//! A (128 x K) and B (N x K) K-major 128B-swizzled in shared memory (K = 64 per row), issued by one
//! thread with `tcgen05.mma.cta_group::1.kind::f16` (PTX ISA 9.7.16.10.9). The instruction
//! descriptor comes from the dtypes, shape and majors (smem's `InstrDesc`, illegal combinations
//! refused there); the shared-memory descriptors from the tiles (sm100 encoding, 128B swizzle code
//! 2, SBO 1024). Completion (`tcgen05.commit` to an mbarrier) is the caller's. Not run on hardware
//! (no Blackwell GPU here): checked by ptxas for sm_100a.

use ptx_isa::builder::{CtaGroup, MmaKindTc, TcA};
use ptx_isa::{FunctionBuilder, Result, ScalarType, TargetSet, ty};
use smem::desc::idesc::{InstrDesc, MmaKind};
use smem::desc::sm100::{LboMode, UmmaDesc, UmmaSwizzle};

use super::common::scope_in;
use crate::tile::op::{Accumulate, OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, Storage, TileRef};
use crate::tile::registry::{Predicate, Variant};

fn operands<'a>(
    ctx: &'a OpCtx<'a>,
) -> std::result::Result<(&'a TileRef, &'a TileRef, &'a TileRef), String> {
    match &ctx.op {
        TileOp::GemmAsync { d, a, b, .. } => Ok((d, a, b)),
        _ => Err("not a gemm".into()),
    }
}

fn smem_dtype(t: ScalarType) -> Option<smem::Dtype> {
    match t {
        ScalarType::Bf16 => Some(smem::Dtype::BF16),
        ScalarType::F16 => Some(smem::Dtype::F16),
        _ => None,
    }
}

/// The instruction descriptor of the op.
pub fn instr_desc(a: &TileRef, n: u32) -> std::result::Result<u32, String> {
    let dt =
        smem_dtype(a.dtype).ok_or(format!("{} inputs: this variant takes f16/bf16", a.dtype))?;
    InstrDesc::new(MmaKind::F16, dt, dt, smem::Dtype::F32, 128, n)
        .encode()
        .map_err(|e| e.to_string())
}

fn shared_k_major(t: &TileRef, rows: u32) -> std::result::Result<(), String> {
    if t.storage != Storage::Shared
        || t.shape != [rows, 64]
        || t.swizzle != smem::SwizzleMode::B128
        || !t.is_contiguous()
        || t.align % 1024 != 0
    {
        return Err(format!(
            "expected a [{rows}, 64] shared tile, dense 128-byte rows, 128B swizzle, 1024-aligned; got {t}"
        ));
    }
    Ok(())
}

fn check(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, a, b) = operands(ctx)?;
    let n = b.shape.first().copied().unwrap_or(0);
    if d.storage != Storage::Tmem || d.dtype != ScalarType::F32 || d.shape != [128, n] {
        return Err(format!("D must be an f32 tensor-memory tile [128, {n}]"));
    }
    if a.dtype != b.dtype {
        return Err(format!("A is {}, B is {}", a.dtype, b.dtype));
    }
    shared_k_major(a, 128)?;
    shared_k_major(b, n)?;
    instr_desc(a, n).map(|_| ())
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::GemmAsync,
    name: "gemm_async.tcgen05_mma",
    targets: TargetSet::Sm100a,
    priority: 30,
    predicates: &[
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["thread"]),
        },
        Predicate {
            name: "operands",
            check,
        },
    ],
    lower,
};

fn lower(k: &mut FunctionBuilder, ctx: &OpCtx<'_>) -> Result<()> {
    let invalid = |m: String| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, m);
    let (d, a, b) = operands(ctx).map_err(invalid)?;
    let TileOp::GemmAsync { accumulate, .. } = &ctx.op else {
        return Err(invalid("not a gemm".into()));
    };
    let (Base::Tmem(dt), Base::Shared(ab), Base::Shared(bb)) = (&d.base, &a.base, &b.base) else {
        return Err(invalid("operand addresses".into()));
    };
    let idesc = instr_desc(a, b.shape[0]).map_err(invalid)?;
    let desc = UmmaDesc {
        start_addr: 0,
        lbo: 16,
        sbo: 1024,
        base_offset: 0,
        lbo_mode: LboMode::Relative,
        swizzle: UmmaSwizzle::B128,
    };
    for step in 0..4u32 {
        let enable = k.pred();
        match (step, accumulate) {
            (0, Accumulate::No) => k.mov(enable, ptx_isa::Src::Imm(ptx_isa::Imm::UInt(0)))?,
            (0, Accumulate::Pred(p)) => k.mov(enable, *p)?,
            _ => k.mov(enable, ptx_isa::Src::Imm(ptx_isa::Imm::UInt(1)))?,
        }
        let (aa, ba) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
        k.add(aa, *ab, step * 32)?;
        k.add(ba, *bb, step * 32)?;
        let ad = smem::emit::emit_umma_desc(k, &desc, aa)?;
        let bd = smem::emit::emit_umma_desc(k, &desc, ba)?;
        k.tcgen05_mma(
            CtaGroup::One,
            MmaKindTc::F16,
            false,
            *dt,
            TcA::Desc(ptx_isa::Reg::from_index(ad.index())),
            ptx_isa::Reg::from_index(bd.index()),
            idesc,
            None,
            enable,
        )?;
    }
    Ok(())
}
