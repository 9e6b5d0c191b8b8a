//! `gemm_async.wgmma` (sm_90a): D (f32 registers, the m64nNk accumulator fragment) = A·Bᵀ (+ D)
//! for a warpgroup, A (64 x K) from shared memory or registers, B (N x K) from shared memory, both
//! K-major with the swizzle their row width implies (128, 64 or 32 bytes: one swizzle atom per
//! row); inputs f16, bf16, tf32 or e4m3/e5m2.
//! The descriptors are computed from the shared tiles (PTX ISA 9.7.15.5.1.2: SBO = 8 rows of the
//! atom, LBO unused when swizzled); each k16 step moves 32 bytes along the rows. Emits
//! `wgmma.fence`, the K/16 `wgmma.mma_async`, and `wgmma.commit_group`; waiting
//! (`wgmma.wait_group`) is the caller's.

use layouts::fragment::wgmma::{accumulator, register_a};
use ptx_isa::builder::{ScaleD, Wgmma, WgmmaA, WgmmaImm, WgmmaTypes};
use ptx_isa::{FunctionBuilder, Reg, RegRef, Result, ScalarType, TargetSet, ty};
use smem::SwizzleMode;
use smem::desc::sm90::WgmmaDesc;

use super::common::scope_in;
use crate::tile::op::{Accumulate, OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, ScopeKind, Storage, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Predicate, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// D, A, B and whether D accumulates, of a matrix multiply.
pub(crate) fn operands<'a>(
    ctx: &'a OpCtx<'a>,
) -> std::result::Result<(&'a TileRef, &'a TileRef, &'a TileRef, Accumulate), Rejection> {
    match &ctx.op {
        TileOp::GemmAsync {
            d,
            a,
            b,
            accumulate,
        } => Ok((d, a, b, *accumulate)),
        _ => Err(Rejection::operand(Aspect::Op, "not a gemm")),
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
/// atom-aligned base. Returns the base.
fn shared_operand(t: &TileRef, rows: u32, k: u32) -> std::result::Result<Reg<ty::U32>, Rejection> {
    let row_bytes = k * t.dtype.bytes();
    let (Storage::Shared, Base::Shared(base)) = (t.storage, &t.base) else {
        return Err(Rejection::operand(
            Aspect::Base,
            format!("{} is not a shared tile", t.storage),
        ));
    };
    if t.shape != [rows, k] {
        return Err(Rejection::operand(
            Aspect::Shape,
            format!("shape {:?}, expected [{rows}, {k}]", t.shape),
        ));
    }
    let want = swizzle_for(row_bytes).ok_or_else(|| {
        Rejection::operand(
            Aspect::Layout,
            format!("rows of {row_bytes} bytes: K-major rows of 32, 64 or 128 bytes"),
        )
    })?;
    if t.swizzle != want || !t.is_contiguous() {
        return Err(Rejection::operand(
            Aspect::Layout,
            format!("expected dense rows with the {want:?} swizzle"),
        ));
    }
    // The descriptors are written with a zero base offset, which holds where the tile starts at
    // its swizzle pattern's period (1024, 512 or 256 bytes: `SwizzleMode::alignment`, PTX ISA
    // 9.7.15.5.1.2.2).
    if t.align % want.alignment() != 0 {
        return Err(Rejection::operand(
            Aspect::Base,
            format!(
                "base aligned to {} bytes; {want:?} swizzle atoms need {}",
                t.align,
                want.alignment()
            ),
        ));
    }
    Ok(*base)
}

/// Where A comes from.
#[derive(Clone, Copy)]
enum AFrom<'a> {
    /// A shared tile at this address.
    Shared(Reg<ty::U32>),
    /// The register-A fragment in these four registers.
    Registers(&'a [RegRef]),
}

/// `K / k_step` `wgmma.mma_async` between a fence and a commit.
struct WgmmaPlan<'a> {
    wgmma: Wgmma,
    acc: &'a [RegRef],
    a: AFrom<'a>,
    b: Reg<ty::U32>,
    desc: WgmmaDesc,
    steps: u32,
    accumulate: Accumulate,
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, a, b, accumulate) = operands(ctx)?;
    let types = wgmma_types(a.dtype, b.dtype).ok_or_else(|| {
        Rejection::operand(
            Aspect::ElementType,
            format!(
                "A {} and B {}: wgmma takes f16, bf16, tf32 or e4m3/e5m2 pairs",
                a.dtype, b.dtype
            ),
        )
    })?;
    // wgmma_types accepted the pair, so A's type is a wgmma input (layouts' fragments take it).
    let dt = a.dtype;
    let [n, k] = b.shape[..] else {
        return Err(Rejection::operand(Aspect::Shape, "B is not 2-D"));
    };
    if d.storage != Storage::Local || d.dtype != ScalarType::F32 {
        return Err(Rejection::operand(
            Aspect::Registers,
            "D must be f32 registers",
        ));
    }
    let frag = |m: String| Rejection::operand(Aspect::Fragment, m);
    let want = accumulator(n as i64, dt).map_err(|e| frag(e.to_string()))?;
    let tv = d
        .fragment
        .as_ref()
        .ok_or_else(|| frag("D has no thread-value layout".into()))?;
    tv.compare(&want)
        .map_err(|e| frag(format!("D is not the m64n{n}k16 accumulator: {e}")))?;
    let Base::Registers(acc) = &d.base else {
        return Err(Rejection::operand(Aspect::Registers, "D has no registers"));
    };
    if acc.len() != (n / 2) as usize || acc.iter().any(|r| r.class != ptx_isa::RegClass::F32) {
        return Err(Rejection::operand(
            Aspect::Registers,
            format!(
                "{} accumulator registers; m64n{n} takes {} .f32",
                acc.len(),
                n / 2
            ),
        ));
    }
    let step = k_step(a.dtype);
    if k % step != 0 || k == 0 {
        return Err(Rejection::operand(
            Aspect::Shape,
            format!("K = {k}: a multiple of {step}"),
        ));
    }
    let b_base = shared_operand(b, n, k)?;
    let a_from = match a.storage {
        Storage::Shared => AFrom::Shared(shared_operand(a, 64, k)?),
        Storage::Local => {
            let tv = a
                .fragment
                .as_ref()
                .ok_or_else(|| frag("A has no thread-value layout".into()))?;
            tv.compare(&register_a(dt).map_err(|e| frag(e.to_string()))?)
                .map_err(|e| frag(format!("A is not the register-A fragment: {e}")))?;
            let Base::Registers(r) = &a.base else {
                return Err(Rejection::operand(Aspect::Registers, "A has no registers"));
            };
            if k != step || r.len() != 4 || r.iter().any(|x| x.class != ptx_isa::RegClass::B32) {
                return Err(Rejection::operand(
                    Aspect::Registers,
                    format!("A from registers: K = {step} and four .b32 registers"),
                ));
            }
            AFrom::Registers(r)
        }
        other => {
            return Err(Rejection::operand(Aspect::Base, format!("A in {other}")));
        }
    };
    let row_bytes = k * a.dtype.bytes();
    let swizzle = swizzle_for(row_bytes)
        .ok_or_else(|| Rejection::operand(Aspect::Layout, format!("rows of {row_bytes} bytes")))?;
    Ok(Box::new(WgmmaPlan {
        wgmma: Wgmma { n, types },
        acc,
        a: a_from,
        b: b_base,
        desc: WgmmaDesc {
            start_addr: 0,
            lbo: 16,
            sbo: 8 * row_bytes,
            base_offset: 0,
            swizzle,
        },
        steps: k / step,
        accumulate,
    }))
}

/// The registration.
pub const VARIANT: Variant = Variant {
    op: OpKind::GemmAsync,
    name: "gemm_async.wgmma",
    targets: TargetSet::Sm90a,
    priority: 30,
    views: false,
    predicates: &[Predicate {
        name: "scope",
        check: |c| scope_in(c, &[ScopeKind::Warpgroup]),
    }],
    planner: Planner {
        name: "operands",
        plan,
    },
};

impl Plan for WgmmaPlan<'_> {
    fn emit(&self, k: &mut FunctionBuilder) -> Result<()> {
        k.wgmma_fence()?;
        for step in 0..self.steps {
            let scale = match (step, self.accumulate) {
                (0, Accumulate::No) => ScaleD::Const(false),
                (0, Accumulate::Pred(p)) => ScaleD::Pred(p),
                _ => ScaleD::Const(true),
            };
            let bd = desc_at(k, &self.desc, self.b, step * 32)?;
            let a_op = match self.a {
                AFrom::Shared(ab) => WgmmaA::Desc(desc_at(k, &self.desc, ab, step * 32)?),
                AFrom::Registers(r) => WgmmaA::Regs(r),
            };
            k.wgmma_mma_async(self.wgmma, self.acc, a_op, bd, scale, WgmmaImm::default())?;
        }
        k.wgmma_commit_group()
    }
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
    Ok(d.retype()?)
}
