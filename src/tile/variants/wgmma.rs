//! `gemm_async.wgmma` (sm_90a): D (f32 registers, the m64nNk accumulator fragment) = A·Bᵀ (+ D)
//! for a warpgroup, A (64 x K) from shared memory or registers, B (N x K) from shared memory, both
//! K-major with the swizzle their row width implies (128, 64 or 32 bytes: one swizzle atom per
//! row); inputs f16, bf16, tf32 or e4m3/e5m2.
//! The descriptors are computed from the shared tiles (PTX ISA 9.7.15.5.1.2: SBO = 8 rows of the
//! atom, LBO unused when swizzled); each k16 step moves 32 bytes along the rows. Emits
//! `wgmma.fence`, the K/16 `wgmma.mma_async`, and `wgmma.commit_group`; waiting
//! (`wgmma.wait_group`) is the caller's.

use layouts::fragment::wgmma::{Dtype as WgDtype, accumulator, register_a};
use ptx_isa::builder::{ScaleD, Wgmma, WgmmaA, WgmmaImm, WgmmaTypes};
use ptx_isa::{FunctionBuilder, Result, ScalarType, TargetSet, ty};
use smem::SwizzleMode;
use smem::desc::sm90::WgmmaDesc;

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

fn wg_dtype(t: ScalarType) -> Option<WgDtype> {
    match t {
        ScalarType::Bf16 => Some(WgDtype::Bf16),
        ScalarType::F16 => Some(WgDtype::F16),
        ScalarType::Tf32 => Some(WgDtype::Tf32),
        ScalarType::E4m3 => Some(WgDtype::E4m3),
        ScalarType::E5m2 => Some(WgDtype::E5m2),
        _ => None,
    }
}

/// The wgmma types for A and B's element types (f32 accumulators).
fn wgmma_types(a: ScalarType, b: ScalarType) -> Option<WgmmaTypes> {
    use ScalarType::*;
    match (a, b) {
        (F16, F16) | (Bf16, Bf16) => Some(WgmmaTypes::Half { d: F32, ab: a }),
        (Tf32, Tf32) => Some(WgmmaTypes::Tf32),
        (E4m3 | E5m2, E4m3 | E5m2) => Some(WgmmaTypes::F8 { d: F32, a, b }),
        _ => None,
    }
}

/// Elements per k-step: every wgmma k-step reads 32 bytes of each row (k16 of 16-bit, k8 of tf32,
/// k32 of 8-bit elements; PTX ISA 9.7.15.5.2 shapes).
fn k_step(t: ScalarType) -> u32 {
    32 / t.bytes()
}

/// The swizzle a K-major shared operand of `row_bytes` bytes per row uses.
fn swizzle_for(row_bytes: u32) -> Option<SwizzleMode> {
    match row_bytes {
        128 => Some(SwizzleMode::B128),
        64 => Some(SwizzleMode::B64),
        32 => Some(SwizzleMode::B32),
        _ => None,
    }
}

/// A K-major shared operand: dense rows of `K * element` bytes, the matching swizzle, an
/// atom-aligned base.
fn shared_operand(t: &TileRef, rows: u32, k: u32) -> std::result::Result<(), String> {
    let row_bytes = k * t.dtype.bytes();
    if t.storage != Storage::Shared || !matches!(t.base, Base::Shared(_)) {
        return Err(format!("{} is not a shared tile", t.storage));
    }
    if t.shape != [rows, k] {
        return Err(format!("shape {:?}, expected [{rows}, {k}]", t.shape));
    }
    let want = swizzle_for(row_bytes).ok_or(format!(
        "rows of {row_bytes} bytes: K-major rows of 32, 64 or 128 bytes"
    ))?;
    if t.swizzle != want || !t.is_contiguous() {
        return Err(format!("expected dense rows with the {want:?} swizzle"));
    }
    if t.align % 1024 != 0 {
        return Err(format!(
            "base aligned to {} bytes; swizzle atoms need 1024",
            t.align
        ));
    }
    Ok(())
}

fn check(ctx: &OpCtx<'_>) -> std::result::Result<(), String> {
    let (d, a, b) = operands(ctx)?;
    wgmma_types(a.dtype, b.dtype).ok_or(format!(
        "A {} and B {}: wgmma takes f16, bf16, tf32 or e4m3/e5m2 pairs",
        a.dtype, b.dtype
    ))?;
    let dt = wg_dtype(a.dtype).ok_or(format!("{} inputs", a.dtype))?;
    let [n, k] = b.shape[..] else {
        return Err("B is not 2-D".into());
    };
    if d.storage != Storage::Local || d.dtype != ScalarType::F32 {
        return Err("D must be f32 registers".into());
    }
    let want = accumulator(n as i64, dt).map_err(|e| e.to_string())?;
    let tv = d.fragment.as_ref().ok_or("D has no thread-value layout")?;
    tv.compare(&want)
        .map_err(|e| format!("D is not the m64n{n}k16 accumulator: {e}"))?;
    let Base::Registers(regs) = &d.base else {
        return Err("D has no registers".into());
    };
    if regs.len() != (n / 2) as usize || regs.iter().any(|r| r.class != ptx_isa::RegClass::F32) {
        return Err(format!(
            "{} accumulator registers; m64n{n} takes {} .f32",
            regs.len(),
            n / 2
        ));
    }
    let step = k_step(a.dtype);
    if k % step != 0 || k == 0 {
        return Err(format!("K = {k}: a multiple of {step}"));
    }
    shared_operand(b, n, k)?;
    match a.storage {
        Storage::Shared => shared_operand(a, 64, k),
        Storage::Local => {
            let tv = a.fragment.as_ref().ok_or("A has no thread-value layout")?;
            tv.compare(&register_a(dt).map_err(|e| e.to_string())?)
                .map_err(|e| format!("A is not the register-A fragment: {e}"))?;
            let Base::Registers(r) = &a.base else {
                return Err("A has no registers".into());
            };
            if k != step || r.len() != 4 || r.iter().any(|x| x.class != ptx_isa::RegClass::B32) {
                return Err(format!(
                    "A from registers: K = {step} and four .b32 registers"
                ));
            }
            Ok(())
        }
        other => Err(format!("A in {other}")),
    }
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::GemmAsync,
    name: "gemm_async.wgmma",
    targets: TargetSet::Sm90a,
    priority: 30,
    predicates: &[
        Predicate {
            name: "scope",
            check: |c| scope_in(c, &["warpgroup"]),
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
    let (n, kk) = (b.shape[0], b.shape[1]);
    let Base::Registers(acc) = &d.base else {
        return Err(invalid("no accumulators".into()));
    };
    let Base::Shared(bb) = b.base else {
        return Err(invalid("B not shared".into()));
    };
    let row_bytes = kk * a.dtype.bytes();
    let sw = swizzle_for(row_bytes).ok_or_else(|| invalid("row width".into()))?;
    let desc = WgmmaDesc {
        start_addr: 0,
        lbo: 16,
        sbo: 8 * row_bytes,
        base_offset: 0,
        swizzle: sw,
    };
    let types = wgmma_types(a.dtype, b.dtype).ok_or_else(|| invalid("types".into()))?;
    let w = Wgmma { n, types };
    k.wgmma_fence()?;
    for step in 0..kk / k_step(a.dtype) {
        let scale = match (step, accumulate) {
            (0, Accumulate::No) => ScaleD::Const(false),
            (0, Accumulate::Pred(p)) => ScaleD::Pred(*p),
            _ => ScaleD::Const(true),
        };
        let bd = desc_at(k, &desc, bb, step * 32)?;
        let a_op = match &a.base {
            Base::Shared(ab) => WgmmaA::Desc(desc_at(k, &desc, *ab, step * 32)?),
            Base::Registers(r) => WgmmaA::Regs(r),
            _ => return Err(invalid("A".into())),
        };
        k.wgmma_mma_async(w, acc, a_op, bd, scale, WgmmaImm::default())?;
    }
    k.wgmma_commit_group()
}

fn desc_at(
    k: &mut FunctionBuilder,
    desc: &WgmmaDesc,
    base: ptx_isa::Reg<ty::U32>,
    offset: u32,
) -> Result<ptx_isa::Reg<ty::B64>> {
    let a = if offset == 0 {
        base
    } else {
        let a = k.reg::<ty::U32>();
        k.add(a, base, offset)?;
        a
    };
    let d = smem::emit::emit_wgmma_desc(k, desc, a)?;
    Ok(ptx_isa::Reg::from_index(d.index()))
}
