//! `gemm_async.tcgen05_mma` (sm_100a): D (tensor memory, 128 lanes x N f32 columns) = A·Bᵀ (+ D),
//! A (128 x K) and B (N x K) K-major 128B-swizzled in shared memory (K = 64 per row), issued by one
//! thread with `tcgen05.mma.cta_group::1.kind::f16` (PTX ISA 9.7.16.10.9). The instruction
//! descriptor comes from the dtypes, shape and majors (smem's `InstrDesc`, illegal combinations
//! refused there); the shared-memory descriptors from the tiles (sm100 encoding, 128B swizzle code
//! 2, SBO 1024). Completion (`tcgen05.commit` to an mbarrier) is the caller's. Not run on hardware
//! (no Blackwell GPU here): checked by ptxas for sm_100a.

use ptx_isa::builder::{CtaGroup, MmaKindTc, TcA};
use ptx_isa::{FunctionBuilder, Reg, Result, ScalarType, TargetSet, ty};
use smem::desc::idesc::InstrDesc;
use smem::desc::sm100::{UmmaDesc, UmmaSwizzle};

use super::common::scope;
use super::wgmma::operands;
use crate::tile::op::{Accumulate, OpCtx, OpKind};
use crate::tile::operand::{Base, Storage, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// The instruction descriptor of the op.
pub fn instr_desc(a: &TileRef, n: u32) -> std::result::Result<u32, Rejection> {
    let dt = a.dtype;
    if !matches!(dt, ScalarType::Bf16 | ScalarType::F16) {
        return Err(Rejection::operand(
            Aspect::ElementType,
            format!("{dt} inputs: this variant takes f16/bf16"),
        ));
    }
    InstrDesc::new(MmaKindTc::F16, dt, dt, ScalarType::F32, 128, n)
        .encode()
        .map_err(|e| Rejection::operand(Aspect::Shape, e.to_string()))
}

fn shared_k_major(t: &TileRef, rows: u32) -> std::result::Result<Reg<ty::U32>, Rejection> {
    match t.base {
        Base::Shared(base)
            if t.storage == Storage::Shared
                && t.shape == [rows, 64]
                && t.swizzle == smem::SwizzleMode::B128
                && t.is_contiguous()
                && t.align % 1024 == 0 =>
        {
            Ok(base)
        }
        _ => Err(Rejection::operand(
            Aspect::Layout,
            format!(
                "expected a [{rows}, 64] shared tile, dense 128-byte rows, 128B swizzle, 1024-aligned; got {t}"
            ),
        )),
    }
}

/// Four `tcgen05.mma` k-steps of 32 bytes, issued by one thread.
struct Tcgen05Mma {
    d: Reg<ty::U32>,
    a: Reg<ty::U32>,
    b: Reg<ty::U32>,
    idesc: u32,
    accumulate: Accumulate,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, a, b, accumulate, k_extent) = operands(ctx)?;
    if k_extent.is_some() {
        return Err(Rejection::operand(
            Aspect::Op,
            "a run-time K extent (k-steps skipped past it): wgmma only",
        ));
    }
    let n = b.shape.first().copied().unwrap_or(0);
    let (Storage::Tmem, ScalarType::F32, Base::Tmem(dt)) = (d.storage, d.dtype, &d.base) else {
        return Err(Rejection::operand(
            Aspect::Base,
            format!("D must be an f32 tensor-memory tile [128, {n}]"),
        ));
    };
    if d.shape != [128, n] {
        return Err(Rejection::operand(
            Aspect::Shape,
            format!("D must be an f32 tensor-memory tile [128, {n}]"),
        ));
    }
    if a.dtype != b.dtype {
        return Err(Rejection::operand(
            Aspect::ElementType,
            format!("A is {}, B is {}", a.dtype, b.dtype),
        ));
    }
    let ab = shared_k_major(a, 128)?;
    let bb = shared_k_major(b, n)?;
    Ok(Box::new(Tcgen05Mma {
        d: *dt,
        a: ab,
        b: bb,
        idesc: instr_desc(a, n)?,
        accumulate,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::GemmAsync,
    name: "gemm_async.tcgen05_mma",
    targets: TargetSet::Sm100a,
    priority: 30,
    views: false,
    predicates: &[scope!(Thread)],
    planner: Planner {
        name: "operands",
        plan,
    },
};

impl Plan for Tcgen05Mma {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        let desc = UmmaDesc::relative(16, 1024, UmmaSwizzle::B128);
        for step in 0..4u32 {
            let enable = k.pred();
            match (step, self.accumulate) {
                (0, Accumulate::No) => k.mov(enable, ptx_isa::Src::Imm(ptx_isa::Imm::UInt(0)))?,
                (0, Accumulate::Pred(p)) => k.mov(enable, p)?,
                _ => k.mov(enable, ptx_isa::Src::Imm(ptx_isa::Imm::UInt(1)))?,
            }
            let (aa, ba) = (k.reg::<ty::U32>(), k.reg::<ty::U32>());
            k.add(aa, self.a, step * 32)?;
            k.add(ba, self.b, step * 32)?;
            let ad = smem::emit::emit_desc(k, &desc, aa)?;
            let bd = smem::emit::emit_desc(k, &desc, ba)?;
            k.tcgen05_mma(
                CtaGroup::One,
                MmaKindTc::F16,
                false,
                self.d,
                TcA::Desc(ad.retype()?),
                bd.retype()?,
                self.idesc,
                None,
                enable,
            )?;
        }
        Ok(())
    }
}
