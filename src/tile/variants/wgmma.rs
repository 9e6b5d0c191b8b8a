//! `gemm_async.wgmma` (sm_90a): D (f32 registers, the m64nNk accumulator fragment) = A·Bᵀ (+ D)
//! for a warpgroup, A (64 x K) from shared memory or registers (any number of k-steps, four
//! registers each), B (N x K) from shared memory; shared operands are stored in slabs of one
//! swizzle span (128, 64 or 32 bytes) along their contiguous dimension, which is K (K-major) or,
//! for 16-bit types, M or N (MN-major, `imm-trans-a`/`imm-trans-b`: the `V` of an attention's
//! `P·V`, stored d-contiguous; the `dS` of its backward's `dQ = dS·K`, stored as `dSᵀ`); inputs
//! f16, bf16, tf32 or e4m3/e5m2.
//! The descriptors are computed from the shared tiles (PTX ISA 9.7.15.5.1.2: SBO = 8 rows of the
//! atom; LBO unused for swizzled K-major, the slab stride for MN-major). Emits
//! `wgmma.fence`, the K/16 `wgmma.mma_async`, and `wgmma.commit_group` (with a run-time K
//! extent, one such group per path, the path by the extent); waiting (`wgmma.wait_group`) is
//! the caller's.

use layouts::fragment::wgmma::{accumulator, register_a_k};
use ptx_isa::builder::{CmpOp, ScaleD, Wgmma, WgmmaA, WgmmaImm, WgmmaTypes};
use ptx_isa::{FunctionBuilder, Reg, RegRef, Result, ScalarType, TargetSet, ty};
use smem::SwizzleMode;
use smem::desc::sm90::WgmmaDesc;

use super::common::scope_in;
use crate::tile::op::{Accumulate, OpCtx, OpKind, TileOp};
use crate::tile::operand::{Base, ScopeKind, Storage, TileRef};
use crate::tile::registry::{Plan, Planned, Planner, Predicate, Variant};
use crate::tile::reject::{Aspect, Rejection};

/// D, A, B, whether D accumulates and the run-time K extent, of a matrix multiply.
pub(crate) fn operands<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Operands<'a>, Rejection> {
    match &ctx.op {
        TileOp::GemmAsync {
            d,
            a,
            b,
            accumulate,
            k_extent,
        } => Ok((d, a, b, *accumulate, *k_extent)),
        _ => Err(Rejection::operand(Aspect::Op, "not a gemm")),
    }
}

/// What [`operands`] returns.
pub(crate) type Operands<'a> = (
    &'a TileRef,
    &'a TileRef,
    &'a TileRef,
    Accumulate,
    Option<Reg<ty::U32>>,
);

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

#[derive(Clone)]
/// How a shared operand is read: its base, its major, the descriptor's offsets and the start
/// of each k-step from the base.
struct SharedOperand {
    base: Reg<ty::U32>,
    swizzle: SwizzleMode,
    /// MN-major (`imm-trans-a`/`imm-trans-b` = 1) rather than K-major.
    mn_major: bool,
    lbo: u32,
    sbo: u32,
    /// Bytes from the base to each k-step's first element.
    steps: Vec<u32>,
}

/// The per-layout table of [`slabs`].
type SlabsTable = std::cell::RefCell<Vec<((layouts::Layout, u32, u32, u32, bool), (i64, bool))>>;

/// Whether `layout` lays a `rows x k` operand out as wgmma's canonical slabs of `w` elements
/// (K-major: `w` columns of every row, slab after slab along K; MN-major: `w` rows of every
/// column along MN), checked at every element, and the slab's stride in elements. Remembered per
/// layout by [`shared_operand`] (an attention kernel asks for the same few thousands of times).
fn slabs(layout: &layouts::Layout, rows: u32, k: u32, w: u32, mn_major: bool) -> (i64, bool) {
    // The layout at (r, c) (index c + k * r, column fastest).
    let at = |r: u32, c: u32| layout.call(i64::from(c) + i64::from(k) * i64::from(r));
    if mn_major {
        let slab = if rows > w { at(w, 0) } else { i64::from(k * w) };
        let fits = (0..rows).all(|r| {
            (0..k).all(|c| at(r, c) == i64::from(r % w + c * w) + i64::from(r / w) * slab)
        });
        (slab, fits)
    } else {
        let slab = if k > w { at(0, w) } else { i64::from(rows * w) };
        let fits = (0..rows).all(|r| {
            (0..k).all(|c| at(r, c) == i64::from(c % w + r * w) + i64::from(c / w) * slab)
        });
        (slab, fits)
    }
}

/// A shared operand `rows x k` (M x K of A, N x K of B) stored in slabs: the contiguous
/// dimension cut into blocks of one swizzle span (128, 64 or 32 bytes), each block all rows of
/// the strided dimension, rows one span apart, the swizzle `t.swizzle` over each. This is how TMA
/// boxes of one span's width lay a wider tile out (and a single slab is dense rows of one span).
///
/// K-major (K contiguous, element `(r, c)` at `c % w + r * w + (c / w) * slab`, `w` the span in
/// elements): each k-step starts `step` columns on, in the next slab after `w` columns; LBO is
/// unused (16) and SBO is 8 rows of a span (PTX ISA 9.7.15.5.1.2.1, the K-major canonical
/// layouts). MN-major (`mn_major`: MN contiguous, element `(r, c)` at `r % w + c * w + (r / w) *
/// slab`, 16-bit types only): each k-step starts `step` rows of a span on; LBO is the distance
/// between MN-adjacent swizzle atoms, the slab stride, and SBO the distance between 8-row groups
/// along K (the MN-major canonical layouts, CuTe `make_gmma_desc`).
fn shared_operand(
    t: &TileRef,
    rows: u32,
    k: u32,
    mn_major: bool,
) -> std::result::Result<SharedOperand, Rejection> {
    let eb = t.dtype.bytes();
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
    let swizzle = t.swizzle;
    if swizzle == SwizzleMode::None {
        return Err(Rejection::operand(
            Aspect::Layout,
            "an unswizzled tile: rows of 32, 64 or 128 bytes with their swizzle",
        ));
    }
    let w = swizzle.span_bytes() / eb;
    let contiguous = if mn_major { rows } else { k };
    if contiguous % w != 0 {
        return Err(Rejection::operand(
            Aspect::Layout,
            format!("a contiguous extent of {contiguous} elements in {swizzle:?} spans of {w}"),
        ));
    }
    let Some(layout) = &t.layout else {
        return Err(Rejection::operand(Aspect::Layout, "no layout"));
    };
    thread_local! {
        static SLABS: SlabsTable = const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = (layout.clone(), rows, k, w, mn_major);
    let (slab, fits) =
        crate::kernel::memo::memoized(&SLABS, &key, || slabs(layout, rows, k, w, mn_major));
    let slab_bytes = u32::try_from(slab * i64::from(eb)).ok();
    let major = if mn_major { "MN" } else { "K" };
    let Some(slab_bytes) = slab_bytes.filter(|&b| fits && b % swizzle.alignment() == 0) else {
        return Err(Rejection::operand(
            Aspect::Layout,
            format!(
                "expected {major}-major slabs of {w} elements with the {swizzle:?} swizzle, \
                 each slab starting on a {}-byte boundary",
                swizzle.alignment()
            ),
        ));
    };
    // The descriptors are written with a zero base offset, which holds where the tile starts at
    // its swizzle pattern's period (1024, 512 or 256 bytes: `SwizzleMode::alignment`, PTX ISA
    // 9.7.15.5.1.2.2).
    if t.align % swizzle.alignment() != 0 {
        return Err(Rejection::operand(
            Aspect::Base,
            format!(
                "base aligned to {} bytes; {swizzle:?} swizzle atoms need {}",
                t.align,
                swizzle.alignment()
            ),
        ));
    }
    let step = k_step(t.dtype);
    let span = swizzle.span_bytes();
    let steps = (0..k / step)
        .map(|s| {
            let c = s * step;
            if mn_major {
                c * span
            } else {
                (c / w) * slab_bytes + (c % w) * eb
            }
        })
        .collect();
    Ok(SharedOperand {
        base: *base,
        swizzle,
        mn_major,
        lbo: if mn_major { slab_bytes } else { 16 },
        sbo: 8 * span,
        steps,
    })
}

/// Where A comes from.
#[derive(Clone)]
enum AFrom<'a, S = SharedOperand> {
    /// A shared tile (in a group: with its base descriptor).
    Shared(S),
    /// The register-A fragment: four registers per k-step.
    Registers(&'a [RegRef]),
}

/// `K / k_step` `wgmma.mma_async` between a fence and a commit.
struct WgmmaPlan<'a> {
    wgmma: Wgmma,
    acc: &'a [RegRef],
    a: AFrom<'a>,
    b: SharedOperand,
    steps: u32,
    accumulate: Accumulate,
    /// K elements per k-step.
    step_k: u32,
    /// The run-time K extent past which k-steps are skipped.
    k_extent: Option<Reg<ty::U32>>,
}

/// Whether a shared operand (A or B) is MN-major: its layout has the M (N) index contiguous
/// (element `(1, 0)` next to element `(0, 0)`).
fn is_mn_major(b: &TileRef) -> bool {
    let (Some(l), &[_, k]) = (&b.layout, &b.shape[..]) else {
        return false;
    };
    k > 1 && l.call(i64::from(k)) == 1
}

fn plan<'a>(ctx: &'a OpCtx<'a>) -> std::result::Result<Planned<'a>, Rejection> {
    let (d, a, b, accumulate, k_extent) = operands(ctx)?;
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
    // B is N x K; MN-major (N contiguous: `imm-trans-b`) only for 16-bit types (PTX ISA
    // 9.7.15.5.2: the transpose operands apply to .f16/.bf16 only).
    let mn_b = is_mn_major(b);
    let mn_a = a.storage == Storage::Shared && is_mn_major(a);
    for (mn, which) in [(mn_a, "A"), (mn_b, "B")] {
        if mn && !matches!(dt, ScalarType::F16 | ScalarType::Bf16) {
            return Err(Rejection::operand(
                Aspect::Layout,
                format!("an MN-major {which} of {dt}: wgmma transposes f16/bf16 only"),
            ));
        }
    }
    let b_op = shared_operand(b, n, k, mn_b)?;
    let a_from = match a.storage {
        Storage::Shared => AFrom::Shared(shared_operand(a, 64, k, mn_a)?),
        Storage::Local => {
            let tv = a
                .fragment
                .as_ref()
                .ok_or_else(|| frag("A has no thread-value layout".into()))?;
            let want = register_a_k(dt, i64::from(k)).map_err(|e| frag(e.to_string()))?;
            tv.compare(&want)
                .map_err(|e| frag(format!("A is not the register-A fragment: {e}")))?;
            let Base::Registers(r) = &a.base else {
                return Err(Rejection::operand(Aspect::Registers, "A has no registers"));
            };
            let regs = (4 * (k / step)) as usize;
            // Declared .b32: plain .b32 registers or packed bf16x2/f16x2 pairs (a cast's output).
            if r.len() != regs || r.iter().any(|x| x.class.decl_type() != ScalarType::B32) {
                return Err(Rejection::operand(
                    Aspect::Registers,
                    format!("A from registers: {regs} .b32 registers (four per k-step)"),
                ));
            }
            AFrom::Registers(r)
        }
        other => {
            return Err(Rejection::operand(Aspect::Base, format!("A in {other}")));
        }
    };
    Ok(Box::new(WgmmaPlan {
        wgmma: Wgmma { n, types },
        acc,
        a: a_from,
        b: b_op,
        steps: k / step,
        accumulate,
        step_k: step,
        k_extent,
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
        let Some(extent) = self.k_extent else {
            return self.group(k, self.steps);
        };
        // One complete group (fence, k-steps, commit) per path, the path taken by a uniform
        // branch on the extent (`bra.uni`, PTX ISA 9.7.12.3): so a caller's `wgmma.wait_group` counts one group either way,
        // and ptxas sees no group split over branches (guarding single k-steps instead makes
        // it inject `warpgroup.arrive`s, C7519, and, inside a loop, serialize every wgmma of
        // the kernel, C7520).
        let paths = path_steps(self.steps);
        let done = k.label();
        for (i, &steps) in paths.iter().enumerate() {
            if i + 1 == paths.len() {
                self.group(k, steps)?;
                break;
            }
            // This path covers extents up to its k-steps' end.
            let next = k.label();
            let past = k.pred();
            k.setp(CmpOp::Gt, past, extent, steps * self.step_k)?;
            k.when(past).bra_uni(next)?;
            self.group(k, steps)?;
            k.bra_uni(done)?;
            k.place(next)?;
        }
        k.place(done)
    }
}

/// The k-step counts of [`WgmmaPlan`]'s paths for a run-time K extent: quarters of the steps
/// (rounded up, distinct), the last all of them; code grows by at most 2.5 times the steps.
fn path_steps(steps: u32) -> Vec<u32> {
    let mut paths: Vec<u32> = (1..=4).map(|q| (steps * q).div_ceil(4)).collect();
    paths.dedup();
    paths
}

impl WgmmaPlan<'_> {
    /// `wgmma.fence`, the first `steps` k-steps' `wgmma.mma_async`, `wgmma.commit_group`.
    fn group(&self, k: &mut FunctionBuilder, steps: u32) -> Result<()> {
        k.wgmma_fence()?;
        let imm = WgmmaImm {
            transpose_a: matches!(&self.a, AFrom::Shared(a) if a.mn_major),
            transpose_b: self.b.mn_major,
            ..WgmmaImm::default()
        };
        // Each shared operand's descriptor is written once, at its base; the k-steps' follow by
        // one add (`desc_at`).
        let b0 = base_desc(k, &self.b)?;
        let a0 = match &self.a {
            AFrom::Shared(a) => AFrom::Shared((a, base_desc(k, a)?)),
            AFrom::Registers(r) => AFrom::Registers(r),
        };
        for step in 0..steps {
            let scale = match (step, self.accumulate) {
                (0, Accumulate::No) => ScaleD::Const(false),
                (0, Accumulate::Pred(p)) => ScaleD::Pred(p),
                _ => ScaleD::Const(true),
            };
            let bd = desc_at(k, &self.b, b0, step)?;
            let a_op = match a0 {
                AFrom::Shared((a, a0)) => WgmmaA::Desc(desc_at(k, a, a0, step)?),
                AFrom::Registers(r) => {
                    let s = 4 * step as usize;
                    WgmmaA::Regs(&r[s..s + 4])
                }
            };
            k.wgmma_mma_async(self.wgmma, self.acc, a_op, bd, scale, imm)?;
        }
        k.wgmma_commit_group()
    }
}

/// The descriptor of a shared operand at its base (its first k-step's), as the 64-bit register
/// and its two 32-bit words (low first).
fn base_desc(k: &mut FunctionBuilder, op: &SharedOperand) -> Result<BaseDesc> {
    let desc = WgmmaDesc {
        start_addr: 0,
        lbo: op.lbo,
        sbo: op.sbo,
        base_offset: 0,
        swizzle: op.swizzle,
    };
    let whole = smem::emit::emit_desc(k, &desc, op.base)?;
    let words = [k.reg::<ty::B32>(), k.reg::<ty::B32>()];
    k.mov_unpack(&words, whole)?;
    Ok(BaseDesc { whole, words })
}

/// A shared operand's base descriptor ([`base_desc`]).
#[derive(Clone, Copy)]
struct BaseDesc {
    whole: Reg<ty::U64>,
    words: [Reg<ty::B32>; 2],
}

/// The descriptor of k-step `step` of a shared operand, from its base descriptor: the start
/// address field (bits 0-13) holds `(addr & 0x3FFFF) >> 4` (PTX ISA 9.7.15.5.1.2.2), and a CTA's
/// shared addresses lie below 2^18, so the descriptor of `base + offset` is the base's with
/// `offset` encoded in that field ([`smem::desc::encode_field`]: a multiple of 16 that fits)
/// added to its low word, with no carry out of the field: `add.u32` and `mov.b64 {lo, hi}` in
/// place of the address program's four steps, and the high word shared by every step.
fn desc_at(
    k: &mut FunctionBuilder,
    op: &SharedOperand,
    base: BaseDesc,
    step: u32,
) -> Result<Reg<ty::B64>> {
    let offset = op.steps.get(step as usize).copied().unwrap_or(0);
    if offset == 0 {
        return Ok(base.whole.retype()?);
    }
    let field = smem::desc::encode_field(smem::desc::DescField::StartAddress, offset.into())
        .map_err(|e| {
            ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, format!("k-step {step}: {e}"))
                .at_instruction("wgmma.mma_async")
                .on_target(k.target())
                .in_function(k.name())
        })?;
    let [lo, hi] = base.words;
    let lo_k = k.reg::<ty::U32>();
    // The field is bits 0-13, so the encoded offset is below 2^14.
    k.add(lo_k, lo.retype::<ty::U32>()?, field as u32)?;
    let d = k.reg::<ty::B64>();
    k.mov_pack(d, &[lo_k.retype::<ty::B32>()?, hi])?;
    Ok(d)
}
