//! One small, complete kernel per form of the table: the review surface for the ISA and what the
//! ptxas sweep assembles. `ptxkit catalog --target T --out DIR` writes them.
//!
//! The match in `example` is exhaustive, so a new row cannot be added without its example.

use crate::builder::*;
use crate::error::Result;
use crate::forms::Form;
use crate::instr::{Imm, Instruction};
use crate::module::{Directive, Module};
use crate::reg::{Pred, RegClass, Sinkable, ty};
use crate::space::{Addr, StateSpace, spaces};
use crate::sreg::{Dim, SpecialReg};
use crate::target::Target;

/// The kernel name of a form's example: `k_` and the form name with `.` and `:` made `_`.
pub fn kernel_name(form: Form) -> String {
    let mut s = String::from("k_");
    s.extend(
        form.spec()
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    s
}

/// The example module of `form` for `target`: fails if the target lacks the form.
pub fn module(form: Form, target: Target) -> Result<Module> {
    build(Module::new(target), form)
}

/// The example module of `form` for `target` with target gating off: the text ptxkit would write
/// if it did not check, for holding the gating against ptxas from the rejecting side.
pub fn module_unchecked(form: Form, target: Target) -> Result<Module> {
    build(Module::new(target).without_target_checks(), form)
}

fn build(mut m: Module, form: Form) -> Result<Module> {
    let mut k = m.entry(&kernel_name(form));
    let out = k.param_ptr("out", StateSpace::Global, Some(16))?;
    let out = k.load_param(&out)?;
    example(form, &mut m, &mut k, out)?;
    k.ret()?;
    let f = k.finish()?;
    m.add(f)?;
    Ok(m)
}

/// Writes a use of `form` into `k`. `out` holds a global pointer for stores.
fn example(
    form: Form,
    m: &mut Module,
    k: &mut FunctionBuilder,
    out: crate::reg::Reg<ty::U64>,
) -> Result<()> {
    use Form::*;
    let g = Addr::<spaces::Global>::reg(out);
    macro_rules! r {
        ($t:ident) => {
            k.reg::<ty::$t>()
        };
    }
    // Rows without a typed builder method yet: the example writes the instruction through `emit`,
    // which checks it against the row like any builder method.
    macro_rules! raw {
        ($op:expr $(; $($o:expr),*)?) => {{
            let mut parts = $op.split('.');
            let mut i = Instruction::new(parts.next().unwrap_or_default());
            for p in parts {
                i = i.modifier(p.to_string());
            }
            $($(i = i.operand($o);)*)?
            k.emit(form, i)
        }};
    }
    let sh = |b: crate::reg::Reg<ty::U32>| Addr::<spaces::SharedCta>::reg32(b);
    let cl = |b: crate::reg::Reg<ty::U32>| Addr::<spaces::SharedCluster>::reg32(b);
    match form {
        Mul24 => {
            let (d, a) = (r!(S32), r!(S32));
            raw!("mul24.lo.s32"; d, a, a)
        }
        Mad24 => {
            let (d, a) = (r!(S32), r!(S32));
            raw!("mad24.hi.sat.s32"; d, a, a, a)
        }
        Sad => {
            let (d, a) = (r!(U32), r!(U32));
            raw!("sad.u32"; d, a, a, a)
        }
        Bfind => {
            let (d, a) = (r!(U32), r!(U64));
            raw!("bfind.shiftamt.u64"; d, a)
        }
        Fns => {
            let (d, a) = (r!(B32), r!(B32));
            raw!("fns.b32"; d, a, a, a)
        }
        Szext => {
            let (d, a) = (r!(U32), r!(U32));
            raw!("szext.wrap.u32"; d, a, a)
        }
        Bmsk => {
            let (d, a) = (r!(B32), r!(B32));
            raw!("bmsk.clamp.b32"; d, a, a)
        }
        Dp4a => {
            let (d, a) = (r!(U32), r!(U32));
            raw!("dp4a.u32.u32"; d, a, a, a)
        }
        Dp2a => {
            let (d, a) = (r!(U32), r!(U32));
            raw!("dp2a.lo.u32.u32"; d, a, a, a)
        }
        Testp => {
            let (p, a) = (k.pred(), r!(F32));
            raw!("testp.finite.f32"; p, a)
        }
        Copysign => {
            let (d, a) = (r!(F32), r!(F32));
            raw!("copysign.f32"; d, a, a)
        }
        Slct => {
            let (d, a, c) = (r!(F32), r!(F32), r!(S32));
            raw!("slct.f32.s32"; d, a, a, c)
        }
        Cnot => {
            let (d, a) = (r!(B32), r!(B32));
            raw!("cnot.b32"; d, a)
        }
        Shf => {
            let (d, a) = (r!(B32), r!(B32));
            raw!("shf.l.wrap.b32"; d, a, a, a)
        }
        Ldu => {
            let d = r!(U32);
            raw!("ldu.global.u32"; d, g.clone())
        }
        Prefetch => k.prefetch_l2(g.clone(), None),
        PrefetchEvict => k.prefetch_l2(g.clone(), Some(L2Evict::Last)),
        Prefetchu => raw!("prefetchu.L1"; g.clone()),
        Applypriority => raw!("applypriority.global.L2::evict_normal"; g.clone(), Imm::UInt(128)),
        Discard => raw!("discard.global.L2"; g.clone(), Imm::UInt(128)),
        Isspacep => {
            let p = k.pred();
            raw!("isspacep.global"; p, out)
        }
        SpaceParam => {
            let p = k.pred();
            let i = Instruction::new("isspacep")
                .modifier("param")
                .operands((p, out));
            k.emit(Form::Isspacep, i)
        }
        SpaceParamEntry => {
            let p = k.pred();
            let i = Instruction::new("isspacep")
                .modifier("param::entry")
                .operands((p, out));
            k.emit(Form::Isspacep, i)
        }
        Movmatrix => {
            let (d, a) = (r!(B32), r!(B32));
            k.movmatrix(d, a)
        }
        MbarrierArriveDrop => {
            let (b, st) = (smem(m, k)?, r!(B64));
            raw!("mbarrier.arrive_drop.shared.b64"; st, Addr::<spaces::Shared>::reg32(b))
        }
        StAsync => {
            let (b, v) = (smem(m, k)?, r!(U32));
            raw!("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32"; cl(b), v, cl(b).offset(8))
        }
        StAsyncGlobal => {
            let v = r!(U32);
            raw!("st.async.release.sys.global.u32"; g.clone(), v)
        }
        RedAsync => {
            let (b, v) = (smem(m, k)?, r!(U32));
            raw!("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32"; cl(b), v, cl(b).offset(8))
        }
        CpReduceBulk => {
            let b = smem(m, k)?;
            k.cp_reduce_bulk(
                TmaReduceOp::Add,
                crate::types::ScalarType::U32,
                g.clone(),
                sh(b),
                256u32,
            )
        }
        CpReduceBulkCluster => {
            let b = smem(m, k)?;
            raw!("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32"; cl(b), sh(b).offset(1024), Imm::UInt(256), cl(b).offset(2048))
        }
        Brkpt => raw!("brkpt"),
        WmmaLoad | WmmaStore | WmmaMma => {
            // Fragments of m16n16k16 (PTX ISA 9.7.14.4): 8 registers each.
            let frag = |k: &mut FunctionBuilder, f32s: bool| {
                let class = if f32s { RegClass::F32 } else { RegClass::B32 };
                let v = k.regs_of(class, 8).into_iter().map(Into::into).collect();
                crate::instr::Operand::Vector(v)
            };
            match form {
                WmmaLoad => {
                    let a = frag(k, false);
                    raw!("wmma.load.a.sync.aligned.row.m16n16k16.global.f16"; a, g.clone())
                }
                WmmaStore => {
                    let d = frag(k, true);
                    raw!("wmma.store.d.sync.aligned.row.m16n16k16.global.f32"; g.clone(), d)
                }
                _ => {
                    let (d, a, b, c) =
                        (frag(k, true), frag(k, false), frag(k, false), frag(k, true));
                    raw!("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"; d, a, b, c)
                }
            }
        }
        WmmaMmaInt | WmmaMmaBf16 | WmmaMmaTf32 | WmmaMmaF64 | WmmaLoadTf32 | WmmaLoadF64
        | WmmaStoreTf32 | WmmaStoreF64 | MmaM16n8k8 => {
            // The fragments of PTX ISA 9.7.14.2 (9.7.14.5.14 for mma) for each shape and type, in
            // operand order; a load's address comes after its fragment, a store's before.
            use RegClass::{B32, F32, F64};
            let (opcode, frags): (&str, &[(RegClass, usize)]) = match form {
                WmmaMmaInt => (
                    "wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.s8.s32",
                    &[(B32, 8), (B32, 2), (B32, 2), (B32, 8)],
                ),
                MmaM16n8k8 => (
                    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
                    &[(F32, 4), (B32, 2), (B32, 1), (F32, 4)],
                ),
                WmmaMmaBf16 => (
                    "wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32",
                    &[(F32, 8), (B32, 4), (B32, 4), (F32, 8)],
                ),
                WmmaMmaTf32 => (
                    "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32",
                    &[(F32, 8), (B32, 4), (B32, 4), (F32, 8)],
                ),
                WmmaMmaF64 => (
                    "wmma.mma.sync.aligned.row.col.m8n8k4.rn.f64.f64.f64.f64",
                    &[(F64, 2), (F64, 1), (F64, 1), (F64, 2)],
                ),
                WmmaLoadTf32 => (
                    "wmma.load.a.sync.aligned.row.m16n16k8.global.tf32",
                    &[(B32, 4)],
                ),
                WmmaLoadF64 => (
                    "wmma.load.c.sync.aligned.row.m8n8k4.global.f64",
                    &[(F64, 2)],
                ),
                WmmaStoreTf32 => (
                    "wmma.store.d.sync.aligned.row.m16n16k8.global.f32",
                    &[(F32, 8)],
                ),
                _ => (
                    "wmma.store.d.sync.aligned.col.m8n8k4.global.f64",
                    &[(F64, 2)],
                ),
            };
            let mut ops: Vec<crate::instr::Operand> = frags
                .iter()
                .map(|&(class, n)| {
                    let v = k.regs_of(class, n).into_iter().map(Into::into).collect();
                    crate::instr::Operand::Vector(v)
                })
                .collect();
            if opcode.starts_with("wmma.load") {
                ops.push(g.clone().into());
            } else if opcode.starts_with("wmma.store") {
                ops.insert(0, g.clone().into());
            }
            let mut i = Instruction::from_opcode(opcode);
            i.operands = ops;
            k.emit(form, i)
        }
        AddInt => {
            let (d, a) = (r!(S32), r!(S32));
            k.add_mods(FloatMods::NONE.sat(), d, a, 7i32)
        }
        // The extended-precision rows have no typed builder method yet: the example writes the
        // instruction through `emit`, which checks it against the row like any builder method.
        AddCc | SubCc => {
            let (d, a) = (r!(U32), r!(U32));
            let mn = if form == AddCc { "add" } else { "sub" };
            let i = Instruction::new(mn)
                .modifier("cc")
                .ty(crate::types::ScalarType::U32);
            k.emit(form, i.operand(d).operand(a).operand(a))
        }
        Addc | Subc => {
            let (d, a) = (r!(U64), r!(U64));
            let mn = if form == Addc { "addc" } else { "subc" };
            let i = Instruction::new(mn)
                .modifier("cc")
                .ty(crate::types::ScalarType::U64);
            k.emit(form, i.operand(d).operand(a).operand(a))
        }
        SubInt => {
            let (d, a) = (r!(U64), r!(U64));
            k.sub(d, a, 1u64)
        }
        MulInt => {
            let (d, a) = (r!(U64), r!(U32));
            k.mul_wide(d, a, a)
        }
        MadF32 => {
            let (d, a) = (r!(F32), r!(F32));
            raw!("mad.rn.ftz.sat.f32"; d, a, a, a)
        }
        MadF64 => {
            let (d, a) = (r!(F64), r!(F64));
            raw!("mad.rz.f64"; d, a, a, a)
        }
        MadInt => {
            let (d, a) = (r!(S32), r!(S32));
            k.mad_lo(d, a, a, 3i32)
        }
        DivInt => {
            let (d, a) = (r!(U32), r!(U32));
            k.div(d, a, 3u32)
        }
        RemInt => {
            let (d, a) = (r!(S64), r!(S64));
            k.rem(d, a, 3i64)
        }
        AbsInt => {
            let (d, a) = (r!(S32), r!(S32));
            k.abs(d, a)
        }
        NegInt => {
            let (d, a) = (r!(S64), r!(S64));
            k.neg(d, a)
        }
        MinInt => {
            let (d, a) = (r!(U32), r!(U32));
            k.min(d, a, 5u32)
        }
        MinIntRelu => {
            let (d, a) = (r!(S32), r!(S32));
            raw!("min.relu.s32"; d, a, a)
        }
        MaxIntRelu => {
            let (d, a) = (r!(S32), r!(S32));
            raw!("max.relu.s32"; d, a, a)
        }
        MaxInt => {
            let (d, a) = (r!(S16), r!(S16));
            k.max(d, a, a)
        }
        Popc => {
            let (d, a) = (r!(U32), r!(B64));
            k.popc(d, a)
        }
        Clz => {
            let (d, a) = (r!(U32), r!(B32));
            k.clz(d, a)
        }
        Brev => {
            let (d, a) = (r!(B32), r!(B32));
            k.brev(d, a)
        }
        Bfe => {
            let (d, a) = (r!(S32), r!(S32));
            k.bfe(d, a, 4u32, 8u32)
        }
        Bfi => {
            let (d, a) = (r!(B32), r!(B32));
            k.bfi(d, a, a, 4u32, 8u32)
        }
        AddF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.add_mods(FloatMods::RN.ftz().sat(), d, a, 1.5f32)
        }
        AddF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.add(d, a, 2.0f64)
        }
        SubF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.sub(d, a, a)
        }
        SubF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.sub_mods(FloatMods::NONE.round(Rounding::Rz), d, a, a)
        }
        MulF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.mul(d, a, a)
        }
        MulF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.mul(d, a, a)
        }
        FmaF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.fma(d, a, a, 1.0f32)
        }
        FmaF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.fma(d, a, a, a)
        }
        DivF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.div_mode(DivMode::Approx, true, d, a, a)
        }
        DivF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.div(d, a, a)
        }
        AbsF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.abs(d, a)
        }
        AbsF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.abs(d, a)
        }
        NegF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.neg(d, a)
        }
        NegF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.neg(d, a)
        }
        MinF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.min(d, a, 0.0f32)
        }
        MinF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.min(d, a, a)
        }
        MaxF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.max(d, a, 0.0f32)
        }
        MaxF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.max(d, a, a)
        }
        // Packed `.f32x2` on `.b64` registers, one opcode a row.
        AddF32x2 | SubF32x2 | MulF32x2 | FmaF32x2 => {
            let (d, a) = (r!(B64), r!(B64));
            match form {
                AddF32x2 => raw!("add.f32x2"; d, a, a),
                SubF32x2 => raw!("sub.rz.f32x2"; d, a, a),
                MulF32x2 => raw!("mul.ftz.f32x2"; d, a, a),
                _ => raw!("fma.rn.f32x2"; d, a, a, a),
            }
        }
        // Mixed precision: a 16-bit source with `.f32` ones.
        AddF32Mixed | SubF32Mixed | FmaF32Mixed => {
            let (d, a, h, b) = (r!(F32), r!(F32), r!(F16), r!(Bf16));
            match form {
                AddF32Mixed => raw!("add.rn.f32.f16"; d, h, a),
                SubF32Mixed => raw!("sub.sat.f32.bf16"; d, b, a),
                _ => raw!("fma.rz.f32.f16"; d, h, h, a),
            }
        }
        Min3F32 | Max3F32 => {
            let (d, a) = (r!(F32), r!(F32));
            let op = if form == Min3F32 {
                "min.NaN.f32"
            } else {
                "max.abs.f32"
            };
            raw!(op; d, a, a, Imm::f32(1.0))
        }
        RcpF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.rcp_approx(d, a)
        }
        RcpF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.rcp(d, a)
        }
        RcpApproxF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.rcp_approx_f64(d, a)
        }
        SqrtF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.sqrt(d, a)
        }
        SqrtF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.sqrt(d, a)
        }
        RsqrtF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.rsqrt(d, a)
        }
        RsqrtF64 => {
            let (d, a) = (r!(F64), r!(F64));
            k.rsqrt_f64(d, a)
        }
        SinF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.sin(d, a)
        }
        CosF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.cos(d, a)
        }
        Lg2F32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.lg2(d, a)
        }
        Ex2F32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.ex2(d, a)
        }
        TanhF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.tanh(d, a)
        }
        AddF16 => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            k.add(d, a, a)
        }
        AddBf16 => {
            let (d, a) = (r!(Bf16), r!(Bf16));
            k.add(d, a, a)
        }
        SubF16 => {
            let (d, a) = (r!(F16), r!(F16));
            k.sub(d, a, a)
        }
        SubBf16 => {
            let (d, a) = (r!(Bf16x2), r!(Bf16x2));
            k.sub(d, a, a)
        }
        MulF16 => {
            let (d, a) = (r!(F16), r!(F16));
            k.mul(d, a, a)
        }
        MulBf16 => {
            let (d, a) = (r!(Bf16), r!(Bf16));
            k.mul(d, a, a)
        }
        FmaF16 => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            k.fma(d, a, a, a)
        }
        FmaBf16 => {
            let (d, a) = (r!(Bf16x2), r!(Bf16x2));
            k.fma(d, a, a, a)
        }
        FmaF16Relu => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            raw!("fma.rn.relu.f16x2"; d, a, a, a)
        }
        FmaOob => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            raw!("fma.rn.oob.relu.f16x2"; d, a, a, a)
        }
        FmaOobBf16 => {
            let (d, a) = (r!(Bf16), r!(Bf16));
            raw!("fma.rz.oob.bf16"; d, a, a, a)
        }
        NegF16 => {
            let (d, a) = (r!(F16), r!(F16));
            k.neg(d, a)
        }
        NegBf16 => {
            let (d, a) = (r!(Bf16), r!(Bf16));
            k.neg(d, a)
        }
        AbsF16 => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            k.abs(d, a)
        }
        AbsBf16 => {
            let (d, a) = (r!(Bf16x2), r!(Bf16x2));
            k.abs(d, a)
        }
        MinF16 => {
            let (d, a) = (r!(F16), r!(F16));
            k.min(d, a, a)
        }
        MinBf16 => {
            let (d, a) = (r!(Bf16), r!(Bf16));
            k.min(d, a, a)
        }
        MaxF16 => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            k.max(d, a, a)
        }
        MaxBf16 => {
            let (d, a) = (r!(Bf16x2), r!(Bf16x2));
            k.max(d, a, a)
        }
        TanhF16 => {
            let (d, a) = (r!(F16), r!(F16));
            k.tanh(d, a)
        }
        TanhBf16 => {
            let (d, a) = (r!(Bf16x2), r!(Bf16x2));
            k.tanh(d, a)
        }
        Ex2F16 => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            k.ex2(d, a)
        }
        Ex2Bf16 => {
            let (d, a) = (r!(Bf16), r!(Bf16));
            k.ex2(d, a)
        }
        SetpInt => {
            let (p, q, a) = (k.pred(), k.pred(), r!(U32));
            k.setp(CmpOp::Lo, p, a, 7u32)?;
            k.setp_bool(CmpOp::Eq, BoolOp::And, p, Some(q), a, a, PredSrc::not(p))
        }
        SetpF32 => {
            let (p, a) = (k.pred(), r!(F32));
            k.setp(CmpOp::Gtu, p, a, 0.0f32)
        }
        SetpF64 => {
            let (p, a) = (k.pred(), r!(F64));
            k.setp(CmpOp::Le, p, a, a)
        }
        SetpF16 => {
            let (p, q, a) = (k.pred(), k.pred(), r!(F16x2));
            k.setp_bool(CmpOp::Lt, BoolOp::Or, p, Some(q), a, a, p)
        }
        SetpBf16 => {
            let (p, a) = (k.pred(), r!(Bf16));
            k.setp(CmpOp::Ge, p, a, a)
        }
        Selp => {
            let (p, d, a) = (k.pred(), r!(F32), r!(F32));
            k.setp(CmpOp::Lt, p, a, 0.0f32)?;
            k.selp(d, a, 1.0f32, p)
        }
        Set => {
            let (d, a) = (r!(U32), r!(S32));
            k.set(CmpOp::Gt, d, a, 0i32)
        }
        And => {
            let (d, a) = (r!(B32), r!(B32));
            k.and(d, a, 0xFFu32)
        }
        Or => {
            let (p, q) = (k.pred(), k.pred());
            k.or(p, p, q)
        }
        Xor => {
            let (d, a) = (r!(U64), r!(U64));
            k.xor(d, a, a)
        }
        Not => {
            let (d, a) = (r!(B16), r!(B16));
            k.not(d, a)
        }
        Lop3 => {
            let (d, a) = (r!(B32), r!(B32));
            k.lop3(d, a, a, a, 0x96)
        }
        Shl => {
            let (d, a) = (r!(U32), r!(U32));
            k.shl(d, a, 3u32)
        }
        Shr => {
            let (d, a) = (r!(S64), r!(S64));
            k.shr(d, a, 3u32)
        }
        Mov => {
            let d = r!(F32);
            k.mov(d, 1.0f32)
        }
        MovB128 => {
            let (d, lo, hi) = (r!(B128), r!(B64), r!(B64));
            k.mov_pack(d, &[lo, hi])
        }
        MovSreg => {
            let d = r!(U32);
            k.mov_sreg(d, SpecialReg::Tid(Dim::X))?;
            let e = r!(U64);
            k.mov_sreg(e, SpecialReg::Clock64)
        }
        MovSregCluster => {
            let d = r!(U32);
            k.mov_sreg(d, SpecialReg::ClusterCtaRank)
        }
        MovSregTotalSmem => {
            let d = r!(U32);
            k.mov_sreg(d, SpecialReg::TotalSmemSize)
        }
        Prmt => {
            let (d, a) = (r!(B32), r!(B32));
            k.prmt(d, a, a, 0x3210u32)
        }
        ShflSync => {
            let (d, p) = (r!(F32), k.pred());
            k.shfl_sync(ShflMode::Bfly, d, Some(p), d, 1u32, 0x1fu32, 0xFFFF_FFFFu32)
        }
        Ld => {
            let d = r!(F32);
            k.ld(d, g.clone())
        }
        LdOrdered => {
            let d = r!(U32);
            k.ld_with(
                &LdOpts {
                    order: MemOrder::Acquire(Scope::Gpu),
                    ..LdOpts::default()
                },
                &[d],
                g.clone(),
            )
        }
        LdGlobalNc => {
            let d = k.regs::<ty::F32>(4);
            k.ld_global_nc(&d, g.clone())
        }
        St => {
            let v = k.regs::<ty::U32>(2);
            k.st_v(g.clone(), &v)
        }
        StOrdered => {
            let v = r!(U32);
            k.st_with(
                &StOpts {
                    order: MemOrder::Release(Scope::Sys),
                    ..StOpts::default()
                },
                g.clone(),
                &[v.into()],
            )
        }
        MemEvictionPriority => {
            let d = r!(U32);
            k.ld_with(
                &LdOpts {
                    evict: Some(Evict::Last),
                    ..LdOpts::default()
                },
                &[d],
                g.clone(),
            )
        }
        MemCacheHint => {
            let (d, pol) = (r!(U32), r!(B64));
            k.mov(pol, 0u64)?;
            k.ld_with(
                &LdOpts {
                    cache_hint: Some(pol),
                    ..LdOpts::default()
                },
                &[d],
                g.clone(),
            )
        }
        MemPrefetchSize => {
            let d = r!(U32);
            k.ld_with(
                &LdOpts {
                    prefetch: Some(PrefetchSize::B128),
                    ..LdOpts::default()
                },
                &[d],
                g.clone(),
            )
        }
        MemScopeCluster => {
            let d = r!(U32);
            k.ld_with(
                &LdOpts {
                    order: MemOrder::Relaxed(Scope::Cluster),
                    ..LdOpts::default()
                },
                &[d],
                g.clone(),
            )
        }
        MemSharedCluster => {
            let (d, a) = (r!(U32), r!(U32));
            k.ld(d, Addr::<spaces::SharedCluster>::reg32(a))
        }
        MemB128 => {
            let d = r!(B128);
            k.ld(d, g.clone())
        }
        Cvt => {
            let (d, a, h) = (r!(S32), r!(F32), r!(F16));
            k.cvt(d, a)?;
            k.cvt(h, a)
        }
        CvtBf16F32 => {
            let (d, a) = (r!(Bf16), r!(F32));
            k.cvt(d, a)
        }
        CvtF32Bf16 => {
            let (d, a) = (r!(F32), r!(Bf16));
            k.cvt(d, a)
        }
        CvtF16F32Relu => {
            let (d, a) = (r!(F16), r!(F32));
            raw!("cvt.rn.relu.f16.f32"; d, a)
        }
        CvtF16F32Satfinite => {
            let (d, a) = (r!(F16), r!(F32));
            raw!("cvt.rz.satfinite.f16.f32"; d, a)
        }
        CvtBf16x2F32 => {
            let (d, a) = (r!(Bf16x2), r!(F32));
            k.cvt_pack_bf16x2(d, a, a, false)
        }
        CvtF16x2F32 => {
            let (d, a) = (r!(F16x2), r!(F32));
            k.cvt_pack_f16x2(d, a, a, true)
        }
        CvtTf32F32 => {
            let (d, a) = (r!(B32), r!(F32));
            k.cvt_tf32(d, a)
        }
        CvtSatfinite => {
            let (d, a) = (r!(F16x2), r!(F32));
            let i = Instruction::new("cvt")
                .modifier("rn")
                .modifier("satfinite")
                .ty(crate::types::ScalarType::F16x2)
                .ty(crate::types::ScalarType::F32)
                .operand(d)
                .operand(a)
                .operand(a);
            k.emit(Form::CvtF16x2F32, i)
        }
        CvtTf32Round => {
            let (d, a) = (r!(B32), r!(F32));
            let i = Instruction::new("cvt")
                .modifier("rn")
                .ty(crate::types::ScalarType::Tf32)
                .ty(crate::types::ScalarType::F32)
                .operand(d)
                .operand(a);
            k.emit(Form::CvtTf32F32, i)
        }
        CvtF8x2F32 => {
            let (d, a) = (r!(B16), r!(F32));
            k.cvt_pack_f8x2(F8Kind::E4m3, d, a, a, false)
        }
        CvtF8x2F16x2 => {
            let (d, a) = (r!(B16), r!(F16x2));
            raw!("cvt.rn.satfinite.relu.e4m3x2.f16x2"; d, a)
        }
        CvtBf16Int => {
            let (d, a) = (r!(Bf16), r!(S32));
            raw!("cvt.rn.bf16.s32"; d, a)
        }
        CvtIntBf16 => {
            let (d, a) = (r!(S32), r!(Bf16));
            raw!("cvt.rzi.s32.bf16"; d, a)
        }
        CvtBf16F64 => {
            let (d, a) = (r!(Bf16), r!(F64));
            raw!("cvt.rn.bf16.f64"; d, a)
        }
        CvtF64Bf16 => {
            let (d, a) = (r!(F64), r!(Bf16));
            raw!("cvt.f64.bf16"; d, a)
        }
        CvtBf16F16 => {
            let (d, a) = (r!(Bf16), r!(F16));
            raw!("cvt.rn.bf16.f16"; d, a)
        }
        CvtF16Bf16 => {
            let (d, a) = (r!(F16), r!(Bf16));
            raw!("cvt.rn.f16.bf16"; d, a)
        }
        CvtF16x2F8x2 => {
            let (d, a) = (r!(F16x2), r!(B16));
            k.cvt_unpack_f8x2(F8Kind::E5m2, d, a, false)
        }
        Cvta => {
            let d = r!(U64);
            k.cvta_to(StateSpace::Global, d, out)
        }
        CvtaParam => {
            let d = r!(U64);
            let p = k.param_bytes("blob", 8, 16)?;
            k.mov_symbol_addr(d, p.name())?;
            k.cvta_from(StateSpace::Param, d, d)
        }
        CvtaCluster => {
            let d = r!(U64);
            k.cvta_from(
                StateSpace::Shared(crate::space::SharedScope::Cluster),
                d,
                out,
            )
        }
        BarSync => k.bar_sync(0u32, None),
        BarArrive => k.bar_arrive(1u32, 64u32),
        MinMaxNaN => {
            let (d, a, b) = (r!(F32), r!(F32), r!(F32));
            let i = Instruction::new("min")
                .modifier("NaN")
                .ty(crate::types::ScalarType::F32)
                .operands((d, a, b));
            k.emit(Form::MinF32, i)
        }
        MinMaxXorsignAbs => {
            let (d, a, b) = (r!(F32), r!(F32), r!(F32));
            let i = Instruction::new("max")
                .modifier("xorsign")
                .modifier("abs")
                .ty(crate::types::ScalarType::F32)
                .operands((d, a, b));
            k.emit(Form::MaxF32, i)
        }
        BarrierClusterSem => raw!("barrier.cluster.arrive.release"),
        BarCta => {
            let i = Instruction::new("bar")
                .modifier("cta")
                .modifier("sync")
                .operand(Imm::UInt(0));
            k.emit(Form::BarSync, i)
        }
        BarRedPopc => {
            let (d, p) = (r!(U32), k.pred());
            k.setp(CmpOp::Eq, p, d, 0u32)?;
            k.bar_red_popc(d, 0u32, None, p)
        }
        BarRedPred => {
            let p = k.pred();
            k.setp(CmpOp::Eq, p, out, 0u64)?;
            k.bar_red_pred(true, p, 0u32, None, PredSrc::not(p))
        }
        BarWarpSync => k.bar_warp_sync(0xFFFF_FFFFu32),
        BarrierSync => k.barrier_sync(false, 2u32, Some(64u32.into())),
        BarrierArrive => k.barrier_arrive(true, 3u32, 128u32),
        Membar => k.membar(BarrierLevel::Gl),
        MembarProxy => raw!("membar.proxy.alias"),
        Fence => k.fence(Some(FenceSem::AcqRel), Scope::Gpu),
        FenceCluster => k.fence(None, Scope::Cluster),
        AtomInt => {
            let d = r!(U32);
            k.atom(AtomOp::Add, d, g.clone(), 1u32)?;
            let c = r!(B64);
            k.atom_cas(c, g.clone(), 0u64, 1u64)
        }
        AtomCas16 => {
            let (d, b) = (r!(B16), r!(B16));
            raw!("atom.global.cas.b16"; d, g.clone(), b, b)
        }
        AtomF32 => {
            let d = r!(F32);
            k.atom(AtomOp::Add, d, g.clone(), 1.0f32)
        }
        AtomF64 => {
            let d = r!(F64);
            k.atom(AtomOp::Add, d, g.clone(), 1.0f64)
        }
        AtomF16 => {
            let (d, a) = (r!(F16x2), r!(F16x2));
            k.atom(AtomOp::Add, d, g.clone(), a)
        }
        AtomBf16 => {
            let (d, a) = (r!(Bf16x2), r!(Bf16x2));
            k.atom(AtomOp::Add, d, g.clone(), a)
        }
        AtomOrdered => {
            let d = r!(U32);
            k.atom_with(
                AtomSem::AcqRel,
                Some(Scope::Gpu),
                AtomOp::Add,
                d,
                g.clone(),
                1u32,
            )
        }
        RedInt => k.red(AtomOp::Max, g.clone(), 3i32),
        RedF32 => k.red(AtomOp::Add, g.clone(), 1.0f32),
        RedF64 => k.red_with(
            AtomSem::Relaxed,
            Some(Scope::Sys),
            AtomOp::Add,
            g.clone(),
            1.0f64,
        ),
        RedF16 => {
            let a = r!(F16);
            k.red(AtomOp::Add, g.clone(), a)
        }
        RedBf16 => {
            let a = r!(Bf16);
            k.red(AtomOp::Add, g.clone(), a)
        }
        VoteSync => {
            let p = k.pred();
            k.setp(CmpOp::Eq, p, out, 0u64)?;
            k.vote_sync(VoteMode::Any, p, p, 0xFFFF_FFFFu32)
        }
        VoteBallot => {
            let (d, p) = (r!(U32), k.pred());
            k.setp(CmpOp::Eq, p, out, 0u64)?;
            k.vote_ballot(d, p, 0xFFFF_FFFFu32)
        }
        MatchAny => {
            let d = r!(U32);
            k.match_any(d, out, 0xFFFF_FFFFu32)
        }
        MatchAll => {
            let (d, p, a) = (r!(U32), k.pred(), r!(B32));
            k.match_all(d, Some(p), a, 0xFFFF_FFFFu32)
        }
        Activemask => {
            let d = r!(U32);
            k.activemask(d)
        }
        ReduxSync => {
            let (d, a) = (r!(S32), r!(S32));
            k.redux_sync(ReduxOp::Max, d, a, 0xFFFF_FFFFu32)
        }
        ReduxSyncF32 => {
            let (d, a) = (r!(F32), r!(F32));
            k.redux_sync_f32(ReduxOp::Max, (true, true), d, a, 0xFFFF_FFFFu32)
        }
        ElectSync => {
            let p: Pred = k.pred();
            k.elect_sync(Sinkable::Sink, p, 0xFFFF_FFFFu32)
        }
        Bra => {
            let (l, p) = (k.label(), k.pred());
            k.setp(CmpOp::Eq, p, out, 0u64)?;
            k.when(p).bra(l)?;
            k.place(l)
        }
        BrxIdx => {
            let (l0, l1, i) = (k.label(), k.label(), r!(U32));
            k.mov(i, 1u32)?;
            let list = k.branch_targets(&[l0, l1])?;
            k.brx_idx(i, list)?;
            k.place(l0)?;
            k.place(l1)
        }
        Call => call_example(m, k),
        Ret => Ok(()),
        Exit => {
            let p = k.pred();
            k.setp(CmpOp::Eq, p, out, 0u64)?;
            k.when(p).exit()
        }
        Trap => {
            let p = k.pred();
            k.setp(CmpOp::Eq, p, out, 0u64)?;
            k.when(p).trap()
        }
        Nanosleep => k.nanosleep(100u32),
        // mbarrier
        MbarrierInit => {
            let b = smem(m, k)?;
            k.mbarrier_init(Addr::<spaces::Shared>::reg32(b), 1u32)
        }
        MbarrierInval => {
            let b = smem(m, k)?;
            k.mbarrier_inval(Addr::<spaces::Shared>::reg32(b))
        }
        MbarrierArrive => {
            let (b, s) = (smem(m, k)?, k.reg::<ty::B64>());
            k.mbarrier_arrive(s.into(), Addr::<spaces::Shared>::reg32(b))
        }
        MbarrierArriveNoComplete => {
            let (b, s) = (smem(m, k)?, k.reg::<ty::B64>());
            k.mbarrier_arrive_with(
                &ArriveOpts {
                    no_complete: true,
                    count: Some(2u32.into()),
                    ..ArriveOpts::default()
                },
                s.into(),
                Addr::<spaces::Shared>::reg32(b),
            )
        }
        MbarrierArriveCount => {
            let (b, s) = (smem(m, k)?, k.reg::<ty::B64>());
            k.mbarrier_arrive_with(
                &ArriveOpts {
                    count: Some(2u32.into()),
                    ..ArriveOpts::default()
                },
                s.into(),
                Addr::<spaces::Shared>::reg32(b),
            )
        }
        MbarrierArriveSink => {
            let b = smem(m, k)?;
            k.mbarrier_arrive(Sinkable::Sink, Addr::<spaces::Shared>::reg32(b))
        }
        MbarrierSem => {
            let (b, s) = (smem(m, k)?, k.reg::<ty::B64>());
            k.mbarrier_arrive_with(
                &ArriveOpts {
                    release: Some(Scope::Cta),
                    ..ArriveOpts::default()
                },
                s.into(),
                Addr::<spaces::Shared>::reg32(b),
            )
        }
        MbarrierArriveExpectTx => {
            let (b, s) = (smem(m, k)?, k.reg::<ty::B64>());
            k.mbarrier_arrive_with(
                &ArriveOpts {
                    expect_tx: Some(1024u32.into()),
                    ..ArriveOpts::default()
                },
                s.into(),
                Addr::<spaces::Shared>::reg32(b),
            )
        }
        MbarrierExpectTx => {
            let b = smem(m, k)?;
            k.mbarrier_expect_tx(Some(Scope::Cta), Addr::<spaces::Shared>::reg32(b), 256u32)
        }
        MbarrierCompleteTx => {
            let b = smem(m, k)?;
            k.mbarrier_complete_tx(None, Addr::<spaces::Shared>::reg32(b), 256u32)
        }
        MbarrierTestWait => {
            let (b, p, s) = (smem(m, k)?, k.pred(), k.reg::<ty::B64>());
            k.mbarrier_arrive(s.into(), Addr::<spaces::Shared>::reg32(b))?;
            k.mbarrier_test_wait(None, p, Addr::<spaces::Shared>::reg32(b), WaitOn::State(s))
        }
        MbarrierTestWaitParity => {
            let (b, p) = (smem(m, k)?, k.pred());
            let b = Addr::<spaces::Shared>::reg32(b);
            k.mbarrier_test_wait(None, p, b, WaitOn::Parity(0u32.into()))
        }
        MbarrierTryWait => {
            let b = smem(m, k)?;
            k.mbarrier_wait_parity(Addr::<spaces::Shared>::reg32(b), 0u32)
        }
        MbarrierPendingCount => {
            let (c, s) = (k.reg::<ty::U32>(), k.reg::<ty::B64>());
            k.mbarrier_pending_count(c, s)
        }
        FenceMbarrierInit => k.fence_mbarrier_init(),
        CpAsyncMbarrierArrive => {
            let b = smem(m, k)?;
            k.cp_async_mbarrier_arrive(true, Addr::<spaces::Shared>::reg32(b))
        }
        // proxies, clusters
        FenceProxyAsync => {
            k.fence_proxy_async(None)?;
            k.fence_proxy_async(Some(StateSpace::Shared(crate::space::SharedScope::Cta)))
        }
        FenceProxyTensormap => {
            k.fence_proxy_tensormap_release(Scope::Gpu)?;
            k.fence_proxy_tensormap_acquire(Scope::Gpu, Addr::<spaces::Generic>::reg(out))
        }
        BarrierClusterArrive => k.barrier_cluster_arrive(ClusterArrive::Relaxed, true),
        BarrierClusterWait => k.barrier_cluster_wait(true, true),
        Mapa => {
            let (b, d) = (smem(m, k)?, k.reg::<ty::U32>());
            k.mapa_shared(d, b, 1u32)
        }
        Getctarank => {
            let (b, d) = (smem(m, k)?, k.reg::<ty::U32>());
            k.getctarank_shared(d, b)
        }
        GriddepcontrolWait => k.griddepcontrol_wait(),
        GriddepcontrolLaunch => k.griddepcontrol_launch_dependents(),
        Setmaxnreg => {
            k.directive(Directive::MaxNtid([384, 1, 1]))?;
            k.setmaxnreg(true, 240)
        }
        // Ampere async copies and warp-level matrices
        CpAsync => {
            let b = smem(m, k)?;
            k.cp_async(
                CpAsyncCache::Cg,
                Addr::<spaces::Shared>::reg32(b),
                g.clone(),
                16,
                Some(8u32.into()),
                None,
            )?;
            k.cp_async(
                CpAsyncCache::Ca,
                Addr::<spaces::Shared>::reg32(b).offset(16),
                g.clone(),
                4,
                None,
                None,
            )
        }
        CpAsyncCommit => k.cp_async_commit_group(),
        CpAsyncWaitGroup => k.cp_async_wait_group(1),
        CpAsyncWaitAll => k.cp_async_wait_all(),
        Ldmatrix => {
            let (b, r) = (smem(m, k)?, k.regs::<ty::B32>(4));
            k.ldmatrix(MatrixCount::X4, true, &r, Addr::<spaces::Shared>::reg32(b))
        }
        LdmatrixB8 => {
            let (b, r) = (smem(m, k)?, k.regs::<ty::B32>(2));
            k.ldmatrix_b8(MatrixCount::X1, &r, Addr::<spaces::Shared>::reg32(b))
        }
        Stmatrix => {
            let (b, r) = (smem(m, k)?, k.regs::<ty::B32>(2));
            k.stmatrix(MatrixCount::X2, false, Addr::<spaces::Shared>::reg32(b), &r)
        }
        StmatrixB8 => {
            let (b, r) = (smem(m, k)?, k.regs::<ty::B32>(1));
            k.stmatrix_b8(MatrixCount::X1, Addr::<spaces::Shared>::reg32(b), &r)
        }
        MmaF16 => {
            let (d, a, b) = (
                refs(k.regs::<ty::F32>(4)),
                refs(k.regs::<ty::B32>(4)),
                refs(k.regs::<ty::B32>(2)),
            );
            k.mma_sync(
                MmaKind::F16F32 {
                    ab: crate::types::ScalarType::Bf16,
                },
                &d,
                &a,
                &b,
                &d,
            )
        }
        MmaTf32 => {
            let (d, a, b) = (
                refs(k.regs::<ty::F32>(4)),
                refs(k.regs::<ty::B32>(4)),
                refs(k.regs::<ty::B32>(2)),
            );
            k.mma_sync(MmaKind::Tf32, &d, &a, &b, &d)
        }
        MmaF8 => {
            use crate::types::ScalarType::*;
            let (d, a, b) = (
                refs(k.regs::<ty::F32>(4)),
                refs(k.regs::<ty::B32>(4)),
                refs(k.regs::<ty::B32>(2)),
            );
            k.mma_sync(MmaKind::F8 { a: E4m3, b: E5m2 }, &d, &a, &b, &d)
        }
        MmaI8 => {
            use crate::types::ScalarType::*;
            let (d, a, b) = (
                refs(k.regs::<ty::S32>(4)),
                refs(k.regs::<ty::B32>(4)),
                refs(k.regs::<ty::B32>(2)),
            );
            k.mma_sync(
                MmaKind::I8 {
                    a: S8,
                    b: U8,
                    satfinite: true,
                },
                &d,
                &a,
                &b,
                &d,
            )
        }
        // bulk copies and the TMA
        CpAsyncBulkG2S => {
            let b = smem(m, k)?;
            k.cp_async_bulk_load(
                &TmaLoadOpts::default(),
                Addr::reg32(b),
                g.clone(),
                256u32,
                Addr::reg32(b).offset(2048),
            )
        }
        CpAsyncBulkS2G => {
            let b = smem(m, k)?;
            k.cp_async_bulk_store(g.clone(), Addr::<spaces::Shared>::reg32(b), 256u32, None)
        }
        CpAsyncBulkS2S => {
            let (b, r) = (smem(m, k)?, k.reg::<ty::U32>());
            k.mapa_shared(r, b, 1u32)?;
            k.cp_async_bulk_shared_to_cluster(
                Addr::reg32(r),
                Addr::<spaces::Shared>::reg32(b),
                256u32,
                Addr::reg32(r).offset(2048),
            )
        }
        CpAsyncBulkCommit => k.cp_async_bulk_commit_group(),
        CpAsyncBulkWait => k.cp_async_bulk_wait_group(0, true),
        CpAsyncBulkPrefetch => k.cp_async_bulk_prefetch(g.clone(), 1024u32),
        BulkMulticast => {
            let b = smem(m, k)?;
            k.cp_async_bulk_load(
                &TmaLoadOpts {
                    multicast: Some(3u16.into()),
                    ..TmaLoadOpts::default()
                },
                Addr::reg32(b),
                g.clone(),
                256u32,
                Addr::reg32(b).offset(2048),
            )
        }
        TmaLoad => {
            let (b, t) = (smem(m, k)?, tmap(k)?);
            let c = k.reg::<ty::S32>();
            k.tma_load(
                &TmaLoadOpts::default(),
                Addr::<spaces::SharedCluster>::reg32(b),
                &t,
                &[c.into(), 0i32.into()],
                Addr::reg32(b).offset(2048),
            )
        }
        TmaLoadIm2col => {
            let (b, t) = (smem(m, k)?, tmap(k)?);
            let c = k.reg::<ty::S32>();
            k.tma_load(
                &TmaLoadOpts {
                    im2col: Some(&[0u16.into(), 1u16.into()]),
                    ..TmaLoadOpts::default()
                },
                Addr::<spaces::SharedCluster>::reg32(b),
                &t,
                &[c.into(), c.into(), c.into(), 0i32.into()],
                Addr::reg32(b).offset(2048),
            )
        }
        TmaStore => {
            let (b, t) = (smem(m, k)?, tmap(k)?);
            k.tma_store(
                &t,
                &[0i32.into(), 64i32.into()],
                Addr::<spaces::Shared>::reg32(b),
                None,
            )
        }
        TmaReduce => {
            let (b, t) = (smem(m, k)?, tmap(k)?);
            k.tma_reduce(
                TmaReduceOp::Add,
                &t,
                &[0i32.into()],
                Addr::<spaces::Shared>::reg32(b),
                None,
            )
        }
        TmaPrefetch => {
            let t = tmap(k)?;
            k.tma_prefetch(&t, &[0i32.into(), 0i32.into(), 0i32.into()])
        }
        TmaCtaGroup => {
            let (b, t) = (smem(m, k)?, tmap(k)?);
            k.tma_load(
                &TmaLoadOpts {
                    cta_group: Some(CtaGroup::Two),
                    ..TmaLoadOpts::default()
                },
                Addr::<spaces::SharedCluster>::reg32(b),
                &t,
                &[0i32.into(), 0i32.into()],
                Addr::reg32(b).offset(2048),
            )
        }
        MemSharedCta => {
            let (d, b) = (r!(U32), smem(m, k)?);
            let i = Instruction::new("ld")
                .modifier("shared::cta")
                .ty(crate::types::ScalarType::U32)
                .operand(d)
                .operand(Addr::<spaces::SharedCta>::reg32(b));
            k.emit(Form::Ld, i)
        }
        TmaSharedCta => {
            let (b, t) = (smem(m, k)?, tmap(k)?);
            k.tma_load(
                &TmaLoadOpts::default(),
                Addr::<spaces::SharedCta>::reg32(b),
                &t,
                &[0i32.into(), 0i32.into()],
                Addr::reg32(b).offset(2048),
            )
        }
        // tensormap.replace and tensormap.cp_fenceproxy have no typed builder method yet: the
        // examples write them through `emit`, which checks them against their rows.
        TensormapReplace
        | TensormapReplaceOrd
        | TensormapReplaceMode
        | TensormapReplaceAtomicity => {
            let field = match form {
                TensormapReplace => "global_address",
                TensormapReplaceOrd => "box_dim",
                TensormapReplaceMode => "swizzle_mode",
                _ => "swizzle_atomicity",
            };
            let mut i = Instruction::new("tensormap")
                .modifier("replace")
                .modifier("tile")
                .modifier(field)
                .modifier("global")
                .modifier("b1024");
            i = if form == TensormapReplace {
                i.ty(crate::types::ScalarType::B64)
                    .operand(g.clone())
                    .operand(out)
            } else {
                i.ty(crate::types::ScalarType::B32).operand(g.clone())
            };
            i = match form {
                TensormapReplace => i,
                TensormapReplaceOrd => i.operand(Imm::UInt(1)).operand(r!(B32)),
                _ => i.operand(Imm::UInt(1)),
            };
            k.emit(form, i)
        }
        TensormapCpFenceproxy => {
            let b = smem(m, k)?;
            let i = Instruction::new("tensormap")
                .modifier("cp_fenceproxy")
                .modifier("global")
                .modifier("shared::cta")
                .modifier("tensormap::generic")
                .modifier("release")
                .modifier("gpu")
                .modifier("sync")
                .modifier("aligned")
                .operand(g.clone())
                .operand(Addr::<spaces::SharedCta>::reg32(b))
                .operand(Imm::UInt(128));
            k.emit(form, i)
        }
        CreatepolicyCvt => {
            let (p, a) = (r!(B64), r!(B64));
            raw!("createpolicy.cvt.L2.b64"; p, a)
        }
        CreatepolicyFractional => {
            let p = r!(B64);
            k.createpolicy_fractional(p, crate::builder::L2Evict::Last, 0.5)
        }
        PrefetchTensormap => {
            let t = tmap(k)?;
            k.prefetch_tensormap(&t)
        }
        // wgmma
        WgmmaFence => k.wgmma_fence(),
        WgmmaCommit => k.wgmma_commit_group(),
        WgmmaWait => k.wgmma_wait_group(0),
        WgmmaF16 => {
            let (d, a, b, p) = (
                refs(k.regs::<ty::F32>(128)),
                k.reg::<ty::B64>(),
                k.reg::<ty::B64>(),
                k.pred(),
            );
            k.setp(CmpOp::Ne, p, out, 0u64)?;
            k.wgmma_mma_async(
                Wgmma {
                    n: 256,
                    types: WgmmaTypes::Half {
                        d: crate::types::ScalarType::F32,
                        ab: crate::types::ScalarType::Bf16,
                    },
                },
                &d,
                WgmmaA::Desc(a),
                b,
                ScaleD::Pred(p),
                WgmmaImm {
                    transpose_b: true,
                    ..WgmmaImm::default()
                },
            )
        }
        WgmmaTf32 => {
            let (d, a, b) = (
                refs(k.regs::<ty::F32>(4)),
                refs(k.regs::<ty::B32>(4)),
                k.reg::<ty::B64>(),
            );
            k.wgmma_mma_async(
                Wgmma {
                    n: 8,
                    types: WgmmaTypes::Tf32,
                },
                &d,
                WgmmaA::Regs(&a),
                b,
                ScaleD::Const(true),
                WgmmaImm::default(),
            )
        }
        WgmmaF8 => {
            use crate::types::ScalarType::*;
            let (d, a, b) = (
                refs(k.regs::<ty::B32>(32)),
                k.reg::<ty::B64>(),
                k.reg::<ty::B64>(),
            );
            k.wgmma_mma_async(
                Wgmma {
                    n: 128,
                    types: WgmmaTypes::F8 {
                        d: F16,
                        a: E4m3,
                        b: E4m3,
                    },
                },
                &d,
                WgmmaA::Desc(a),
                b,
                ScaleD::Const(false),
                WgmmaImm {
                    negate_a: true,
                    ..WgmmaImm::default()
                },
            )
        }
        WgmmaMixedInt => {
            use crate::types::ScalarType::*;
            let (d, a, b) = (
                refs(k.regs::<ty::S32>(4)),
                k.reg::<ty::B64>(),
                k.reg::<ty::B64>(),
            );
            k.wgmma_mma_async(
                Wgmma {
                    n: 8,
                    types: WgmmaTypes::I8 {
                        a: U8,
                        b: S8,
                        satfinite: false,
                    },
                },
                &d,
                WgmmaA::Desc(a),
                b,
                ScaleD::Const(true),
                WgmmaImm::default(),
            )
        }
        WgmmaI8 => {
            use crate::types::ScalarType::*;
            let (d, a, b) = (
                refs(k.regs::<ty::S32>(24)),
                refs(k.regs::<ty::B32>(4)),
                k.reg::<ty::B64>(),
            );
            k.wgmma_mma_async(
                Wgmma {
                    n: 48,
                    types: WgmmaTypes::I8 {
                        a: S8,
                        b: S8,
                        satfinite: true,
                    },
                },
                &d,
                WgmmaA::Regs(&a),
                b,
                ScaleD::Const(true),
                WgmmaImm::default(),
            )
        }
        // tcgen05
        Tcgen05Alloc => {
            let b = smem(m, k)?;
            k.tcgen05_alloc(CtaGroup::One, Addr::<spaces::Shared>::reg32(b), 128u32)
        }
        Tcgen05Dealloc => {
            let t = k.reg::<ty::U32>();
            k.tcgen05_dealloc(CtaGroup::One, t, 128u32)
        }
        Tcgen05Relinquish => k.tcgen05_relinquish_alloc_permit(CtaGroup::Two),
        Tcgen05Ld => {
            let (t, r) = (k.reg::<ty::U32>(), refs(k.regs::<ty::F32>(8)));
            k.tcgen05_ld(TmemShape::S16x256b, 2, false, &r, t, None)
        }
        Tcgen05Ld16x32bx2 => {
            let (t, r) = (k.reg::<ty::U32>(), refs(k.regs::<ty::B32>(4)));
            k.tcgen05_ld(TmemShape::S16x32bx2, 4, true, &r, t, Some(64))
        }
        Tcgen05St => {
            let (t, r) = (k.reg::<ty::U32>(), refs(k.regs::<ty::B32>(32)));
            k.tcgen05_st(TmemShape::S32x32b, 32, false, t, None, &r)
        }
        Tcgen05St16x32bx2 => {
            let (t, r) = (k.reg::<ty::U32>(), refs(k.regs::<ty::B32>(1)));
            k.tcgen05_st(TmemShape::S16x32bx2, 1, false, t, Some(32), &r)
        }
        Tcgen05WaitLd => k.tcgen05_wait_ld(),
        Tcgen05WaitSt => k.tcgen05_wait_st(),
        Tcgen05Cp => {
            let (t, d) = (k.reg::<ty::U32>(), k.reg::<ty::B64>());
            k.tcgen05_cp(CtaGroup::One, TmemCpShape::S128x256b, None, t, d)?;
            k.tcgen05_cp(
                CtaGroup::One,
                TmemCpShape::S64x128bWarpx2_02_13,
                Some(TmemCpDecompress::B6x16P32),
                t,
                d,
            )
        }
        Tcgen05Shift => {
            let t = k.reg::<ty::U32>();
            k.tcgen05_shift(CtaGroup::One, t)
        }
        Tcgen05Mma => {
            let (t, a, b, p) = (
                k.reg::<ty::U32>(),
                k.reg::<ty::B64>(),
                k.reg::<ty::B64>(),
                k.pred(),
            );
            k.setp(CmpOp::Ne, p, out, 0u64)?;
            k.tcgen05_mma(
                CtaGroup::One,
                MmaKindTc::F16,
                false,
                t,
                TcA::Desc(a),
                b,
                0x0810_0490u32,
                None,
                p,
            )
        }
        Tcgen05MmaWs => {
            let (t, a, b, p) = (
                k.reg::<ty::U32>(),
                k.reg::<ty::U32>(),
                k.reg::<ty::B64>(),
                k.pred(),
            );
            k.setp(CmpOp::Ne, p, out, 0u64)?;
            k.tcgen05_mma(
                CtaGroup::One,
                MmaKindTc::Tf32,
                true,
                t,
                TcA::Tmem(a),
                b,
                0x0810_0910u32,
                None,
                p,
            )
        }
        Tcgen05MmaBlockScale | Tcgen05BlockScaleDefault => {
            let (t, a, b, p, sa, sb) = (
                k.reg::<ty::U32>(),
                k.reg::<ty::B64>(),
                k.reg::<ty::B64>(),
                k.pred(),
                k.reg::<ty::U32>(),
                k.reg::<ty::U32>(),
            );
            k.setp(CmpOp::Ne, p, out, 0u64)?;
            if form == Tcgen05MmaBlockScale {
                return k.tcgen05_mma_block_scale(
                    CtaGroup::One,
                    BlockScaleKind::Mxf8f6f4,
                    t,
                    TcA::Desc(a),
                    b,
                    0x0810_0010u32,
                    sa,
                    sb,
                    p,
                );
            }
            // No `.scale_vec`: the `.block32` default (PTX 8.8), which the builder does not write.
            // Tensor-memory addresses `[t]` (PTX ISA 9.7.16.10.9).
            let tmem = |r: crate::reg::Reg<ty::U32>| {
                crate::instr::Operand::Addr(crate::space::Address::at(crate::space::AddrBase::Reg(
                    r.as_ref(),
                )))
            };
            let mut i = Instruction::new("tcgen05");
            for m in ["mma", "cta_group::1", "kind::mxf8f6f4", "block_scale"] {
                i = i.modifier(m);
            }
            let i = i
                .operand(tmem(t))
                .operand(a)
                .operand(b)
                .operand(Imm::UInt(0x0810_0010))
                .operand(tmem(sa))
                .operand(tmem(sb))
                .operand(p);
            k.emit(Form::Tcgen05MmaBlockScale, i)
        }
        Tcgen05Commit => {
            let b = smem(m, k)?;
            k.tcgen05_commit(CtaGroup::One, Addr::<spaces::Shared>::reg32(b), None)
        }
        Tcgen05FenceBefore => k.tcgen05_fence_before_thread_sync(),
        Tcgen05FenceAfter => k.tcgen05_fence_after_thread_sync(),
        // ---- the families added for coverage (issue 14, part 4) --------------------------------
        MadCc | Madc => {
            let (d, a) = (r!(U32), r!(U32));
            let op = if form == MadCc {
                "mad.lo.cc.u32"
            } else {
                "madc.hi.cc.u32"
            };
            raw!(op; d, a, a, a)
        }
        CvtPack16 => {
            let (d, a) = (r!(U32), r!(S32));
            raw!("cvt.pack.sat.u16.s32"; d, a, a)
        }
        CvtPackSub => {
            let (d, a, c) = (r!(U32), r!(S32), r!(B32));
            raw!("cvt.pack.sat.u8.s32.b32"; d, a, a, c)
        }
        StBulk => {
            let size = r!(B64);
            k.mov(size, 128u64)?;
            raw!("st.bulk.weak"; g.clone(), size, Imm::UInt(0))
        }
        MultimemLdReduce => {
            let d = r!(U32);
            raw!("multimem.ld_reduce.relaxed.gpu.global.add.u32"; d, g.clone())
        }
        MultimemSt => {
            let b = r!(B32);
            raw!("multimem.st.relaxed.gpu.global.b32"; g.clone(), b)
        }
        MultimemRed => {
            let b = r!(U32);
            raw!("multimem.red.relaxed.gpu.global.add.u32"; g.clone(), b)
        }
        // Unified texture mode: the 64-bit `out` stands for a texture or surface handle.
        Tex | TexLevel | TexGrad | Tld4 => {
            let d = vector(k.regs::<ty::F32>(4));
            let c = coords(k.regs::<ty::F32>(2), out);
            match form {
                Tex => raw!("tex.2d.v4.f32.f32"; d, c),
                TexLevel => {
                    let lod = r!(F32);
                    raw!("tex.level.2d.v4.f32.f32"; d, c, lod)
                }
                TexGrad => {
                    let dx = vector(k.regs::<ty::F32>(2));
                    let dy = vector(k.regs::<ty::F32>(2));
                    raw!("tex.grad.2d.v4.f32.f32"; d, c, dx, dy)
                }
                _ => raw!("tld4.r.2d.v4.f32.f32"; d, c),
            }
        }
        Txq | Suq => {
            let d = r!(B32);
            let op = if form == Txq {
                "txq.width.b32"
            } else {
                "suq.width.b32"
            };
            raw!(op; d, g.clone())
        }
        TxqLevel => {
            let (d, lod) = (r!(B32), r!(S32));
            raw!("txq.level.width.b32"; d, g.clone(), lod)
        }
        Istypep => {
            let p = k.pred();
            raw!("istypep.texref"; p, out)
        }
        Suld => {
            let d = r!(B32);
            let c = coords(k.regs::<ty::S32>(2), out);
            raw!("suld.b.2d.b32.trap"; d, c)
        }
        Sust | SuredB | SuredP => {
            let c = coords(k.regs::<ty::S32>(2), out);
            let v = r!(B32);
            let op = match form {
                Sust => "sust.b.2d.b32.trap",
                SuredB => "sured.b.add.2d.u32.trap",
                _ => "sured.p.min.2d.b32.clamp",
            };
            raw!(op; c, v)
        }
        ClcTryCancel | ClcTryCancelMulticast => {
            let b = smem(m, k)?;
            let op = if form == ClcTryCancel {
                "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128"
            } else {
                "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128"
            };
            raw!(op; sh(b), sh(b).offset(16))
        }
        ClcQueryCanceled => {
            let (p, q) = (k.pred(), r!(B128));
            raw!("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128"; p, q)
        }
        ClcQueryCtaid => {
            let (d, q) = (r!(B32), r!(B128));
            raw!("clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128"; d, q)
        }
        ClcQueryCtaidV4 => {
            let (d, q) = (vector(k.regs::<ty::B32>(4)), r!(B128));
            raw!("clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128"; d, q)
        }
        Stacksave | Stackrestore => {
            let d = r!(U64);
            if form == Stacksave {
                raw!("stacksave.u64"; d)
            } else {
                raw!("stackrestore.u64"; d)
            }
        }
        Alloca => {
            let (d, size) = (r!(U64), r!(U64));
            k.mov(size, 64u64)?;
            raw!("alloca.u64"; d, size, Imm::UInt(8))
        }
        Vadd | Vsub | Vabsdiff | Vmin | Vmax | Vshl | Vshr | Vset => {
            let (d, a) = (r!(U32), r!(U32));
            let op = match form {
                Vadd => "vadd.u32.u32.u32.sat",
                Vsub => "vsub.s32.s32.s32",
                Vabsdiff => "vabsdiff.u32.u32.u32",
                Vmin => "vmin.u32.u32.u32",
                Vmax => "vmax.u32.u32.u32.max",
                Vshl => "vshl.u32.u32.u32.clamp",
                Vshr => "vshr.u32.u32.u32.wrap",
                _ => "vset.u32.u32.lt",
            };
            if form == Vmax {
                raw!(op; d, a, a, a)
            } else {
                raw!(op; d, a, a)
            }
        }
        Vmad | Vadd2 | Vsub2 | Vavrg2 | Vabsdiff2 | Vmin2 | Vmax2 | Vset2 | Vadd4 | Vsub4
        | Vavrg4 | Vabsdiff4 | Vmin4 | Vmax4 | Vset4 => {
            let (d, a) = (r!(U32), r!(U32));
            let op = match form {
                Vmad => "vmad.u32.u32.u32.shr7",
                Vadd2 => "vadd2.u32.u32.u32.sat",
                Vsub2 => "vsub2.u32.u32.u32",
                Vavrg2 => "vavrg2.u32.u32.u32",
                Vabsdiff2 => "vabsdiff2.u32.u32.u32.add",
                Vmin2 => "vmin2.u32.u32.u32",
                Vmax2 => "vmax2.s32.s32.s32",
                Vset2 => "vset2.u32.u32.lt",
                Vadd4 => "vadd4.u32.u32.u32.sat",
                Vsub4 => "vsub4.u32.u32.u32",
                Vavrg4 => "vavrg4.u32.u32.u32",
                Vabsdiff4 => "vabsdiff4.u32.u32.u32.add",
                Vmin4 => "vmin4.u32.u32.u32",
                Vmax4 => "vmax4.s32.s32.s32",
                _ => "vset4.u32.u32.ne",
            };
            raw!(op; d, a, a, a)
        }
        MmaSpF16 | MmaSpTf32 | MmaSpI8 | MmaSpF8 | MmaSpOrdered => {
            let acc = if form == MmaSpI8 {
                vector(k.regs::<ty::S32>(4))
            } else {
                vector(k.regs::<ty::F32>(4))
            };
            let (a, b, e) = (
                vector(k.regs::<ty::B32>(2)),
                vector(k.regs::<ty::B32>(2)),
                r!(B32),
            );
            let op = match form {
                MmaSpF16 => {
                    "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                }
                MmaSpTf32 => {
                    "mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
                }
                MmaSpI8 => {
                    "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32"
                }
                MmaSpF8 => {
                    let (a, b) = (vector(k.regs::<ty::B32>(4)), vector(k.regs::<ty::B32>(4)));
                    return raw!("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32"; acc.clone(), a, b, acc, e, Imm::UInt(0));
                }
                _ => "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            };
            raw!(op; acc.clone(), a, b, acc, e, Imm::UInt(0))
        }
        WgmmaSpF16 | WgmmaSpTf32 | WgmmaSpF8 | WgmmaSpI8 => {
            let d = if form == WgmmaSpI8 {
                vector(k.regs::<ty::S32>(32))
            } else {
                vector(k.regs::<ty::F32>(32))
            };
            let (a, b, meta, p) = (r!(B64), r!(B64), r!(B32), k.pred());
            k.setp(CmpOp::Ne, p, out, 0u64)?;
            let one = Imm::Int(1);
            match form {
                WgmmaSpF16 => {
                    raw!("wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16"; d, a, b, meta, Imm::UInt(0), p, one, one, Imm::UInt(0), Imm::UInt(1))
                }
                WgmmaSpTf32 => {
                    raw!("wgmma.mma_async.sp.sync.aligned.m64n64k16.f32.tf32.tf32"; d, a, b, meta, Imm::UInt(0), p, one, one)
                }
                WgmmaSpF8 => {
                    raw!("wgmma.mma_async.sp.sync.aligned.m64n64k64.f32.e4m3.e5m2"; d, a, b, meta, Imm::UInt(0), p, one, one)
                }
                _ => {
                    raw!("wgmma.mma_async.sp.sync.aligned.m64n64k64.s32.s8.u8"; d, a, b, meta, Imm::UInt(0), p)
                }
            }
        }
        Tcgen05MmaSp | Tcgen05MmaWsSp => {
            let (t, meta, a, b, p) = (r!(U32), r!(U32), r!(B64), r!(B64), k.pred());
            k.setp(CmpOp::Ne, p, out, 0u64)?;
            let tmem = |r: crate::reg::Reg<ty::U32>| {
                crate::instr::Operand::Addr(crate::space::Address::at(crate::space::AddrBase::Reg(
                    r.as_ref(),
                )))
            };
            let op = if form == Tcgen05MmaSp {
                "tcgen05.mma.sp.cta_group::1.kind::f16"
            } else {
                "tcgen05.mma.ws.sp.cta_group::1.kind::f16"
            };
            raw!(op; tmem(t), a, b, tmem(meta), Imm::UInt(0x0810_0490), p)
        }
        Pmevent => raw!("pmevent"; Imm::UInt(1)),
        PmeventMask => raw!("pmevent.mask"; Imm::UInt(3)),
        DirReqNctaPerCluster => k.directive(Directive::ReqNctaPerCluster([2, 1, 1])),
        DirExplicitCluster => k.directive(Directive::ExplicitCluster),
        DirMaxClusterRank => k.directive(Directive::MaxClusterRank(4)),
        DirBranchTargets => {
            let (l, i) = (k.label(), r!(U32));
            k.mov(i, 0u32)?;
            let list = k.branch_targets(&[l])?;
            k.brx_idx_uni(i, list)?;
            k.place(l)
        }
    }
}

/// The address (in a `.u32` register) of a 4 KB, 1024-aligned static shared buffer `smem`.
fn smem(m: &mut Module, k: &mut FunctionBuilder) -> Result<crate::reg::Reg<ty::U32>> {
    if !m.variables().iter().any(|v| v.name == "smem") {
        m.shared("smem", 1024, 4096)?;
    }
    let r = k.reg::<ty::U32>();
    k.mov_shared_addr(r, "smem")?;
    Ok(r)
}

/// Registers in braces `{a, b, ...}`.
fn vector<T: ty::RegType>(regs: Vec<crate::reg::Reg<T>>) -> crate::instr::Operand {
    crate::instr::Operand::Vector(regs.into_iter().map(Into::into).collect())
}

/// A texture or surface reference with coordinates, `[handle, {x, y}]` (PTX ISA 9.7.10.3,
/// 9.7.11.1).
fn coords<T: ty::RegType>(
    regs: Vec<crate::reg::Reg<T>>,
    handle: crate::reg::Reg<ty::U64>,
) -> crate::instr::Operand {
    crate::instr::Operand::Tensor {
        map: Box::new(crate::space::AddrBase::Reg(handle.as_ref())),
        coords: regs.into_iter().map(Into::into).collect(),
    }
}

/// A tensor-map parameter `.param .align 64 .b8 tmap[128]`.
fn tmap(k: &mut FunctionBuilder) -> Result<TensorMapRef> {
    let p = k.param_bytes("tmap", 64, 128)?;
    Ok((&p).into())
}

fn refs<T: ty::RegType>(regs: Vec<crate::reg::Reg<T>>) -> Vec<crate::reg::RegRef> {
    regs.into_iter().map(|r| r.as_ref()).collect()
}

/// A device function `square(x) -> x * x` and a call to it.
fn call_example(m: &mut Module, k: &mut FunctionBuilder) -> Result<()> {
    let mut f = m.func("square");
    let ret = f.returns::<ty::F32>("result")?;
    let x = f.param::<ty::F32>("x")?;
    let v = f.load_param(&x)?;
    f.mul(v, v, v)?;
    f.store_return(&ret, v)?;
    f.ret()?;
    let func = f.finish()?;
    let (a, d) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
    k.mov(a, 3.0f32)?;
    k.call(
        &func,
        &[(a.as_ref(), crate::types::ScalarType::F32)],
        Some((d.as_ref(), crate::types::ScalarType::F32)),
    )?;
    m.add(func)
}
