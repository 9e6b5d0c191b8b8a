//! The attention backward's argument checks on a device (run by `ptxkit selftest --only
//! attention_backward` after its gradient cases): bad calls of [`Attention::backward`] and
//! [`AttentionBackward::run_borrowed`] (bf16, head dim 128, batched and packed) each come back
//! as the typed [`AttentionError`] that names the tensor, extent or rule at fault, and the
//! gradients stay as poisoned as they were. The checks before any launch (packing, ranks,
//! element types, KV heads dividing the query heads) refuse with a [`ShapeError`]; the rest are
//! the kernels' signatures' ([`RuntimeError`]): the preprocess's first (the log-sum-exp, the
//! head dim), the main kernel's after the preprocess has run (K, V and their gradients, the key
//! offsets), which writes only the workspace. Tensors on another device are not tried (one GPU).

use half::{bf16, f16};

use super::attention::limit;
use super::ctx::{GpuCheckError, GpuCtx};
use crate::library::OperandError;
use crate::library::attention::{
    Attention, AttentionBackward, AttentionConfig, AttentionError, BackwardArgs, BackwardConfig,
    BackwardSeqs, ShapeError, VarlenArgs,
};
use crate::runtime::{DeviceTensor, RuntimeError, TensorMut, TensorRef};
use ptx_isa::ScalarType;

/// What a refusal must be.
type Expect = fn(&AttentionError) -> bool;

/// Head dim, query heads and KV heads of the problems.
const D: usize = 128;
const HEADS: usize = 4;
const KV_HEADS: usize = 2;

/// The operands of one call: Q, K, V, O, dO (bf16, random), LSE (f32), the gradients (NaN).
struct Operands {
    inputs: [DeviceTensor<bf16>; 5],
    lse: DeviceTensor<f32>,
    grads: [DeviceTensor<bf16>; 3],
}

impl Operands {
    /// Q, O, dO and dQ `[batch, rows, heads, d]`, K, V and their gradients over `keys`, LSE
    /// `[batch, heads, rows]`; packed (`batch` none) without the batch.
    fn new(
        ctx: &mut GpuCtx,
        batch: Option<usize>,
        rows: usize,
        keys: usize,
    ) -> Result<Operands, GpuCheckError> {
        let lead: Vec<usize> = batch.into_iter().collect();
        let q_shape = [&lead[..], &[rows, HEADS, D]].concat();
        let kv_shape = [&lead[..], &[keys, KV_HEADS, D]].concat();
        let lse_shape = [&lead[..], &[HEADS, rows]].concat();
        let mut random = |shape: &[usize]| {
            let n: usize = shape.iter().product();
            let h: Vec<bf16> = ctx.rng.vec_f32(n).into_iter().map(bf16::from_f32).collect();
            ctx.upload(&h, shape)
        };
        let inputs = [
            random(&q_shape)?,
            random(&kv_shape)?,
            random(&kv_shape)?,
            random(&q_shape)?,
            random(&q_shape)?,
        ];
        let stats = ctx.rng.vec_f32(lse_shape.iter().product());
        let lse = ctx.upload(&stats, &lse_shape)?;
        let nan = |shape: &[usize]| {
            let n: usize = shape.iter().product();
            ctx.upload(&vec![bf16::NAN; n], shape)
        };
        let grads = [nan(&q_shape)?, nan(&kv_shape)?, nan(&kv_shape)?];
        Ok(Operands { inputs, lse, grads })
    }

    /// The arguments with the tensors as they are (batched).
    fn args(&mut self) -> BackwardArgs<'_> {
        let [q, k, v, o, d_o] = &self.inputs;
        let [dq, dk, dv] = &mut self.grads;
        BackwardArgs::new([q, k, v, o, d_o], &self.lse, [dq, dk, dv], 0.088)
    }

    /// Whether every gradient is still NaN.
    fn untouched(&self, ctx: &GpuCtx) -> Result<bool, GpuCheckError> {
        for g in &self.grads {
            if ctx.download(g)?.iter().any(|v| !v.is_nan()) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `r` must be the error `ok` takes; `what` names the case in the failure.
fn refused(what: &str, r: Result<(), AttentionError>, ok: Expect) -> Result<(), GpuCheckError> {
    let unexpected = |detail: String| GpuCheckError::Unexpected {
        check: format!("attention backward arguments: {what}"),
        detail,
    };
    match r {
        Err(e) if ok(&e) => Ok(()),
        Err(e) => Err(unexpected(format!("wrong error: {e}"))),
        Ok(()) => Err(unexpected("not refused".into())),
    }
}

/// Packed offsets: two sequences of 100 queries, and of 130 keys (`cu_k` three of them where it
/// holds four offsets).
fn seqs<'a>(cu_q: &'a DeviceTensor<i32>, cu_k: &'a DeviceTensor<i32>) -> BackwardSeqs<'a> {
    BackwardSeqs {
        offsets: VarlenArgs {
            cu_seqlens_q: cu_q.into(),
            cu_seqlens_k: cu_k.into(),
            max_seqlen_q: 100,
        },
        max_seqlen_k: 130,
    }
}

/// Whether `e` is a [`RuntimeError::SymbolMismatch`] of the extent `name`.
fn symbol(e: &AttentionError, name: &str) -> bool {
    matches!(e, AttentionError::Runtime(RuntimeError::SymbolMismatch { symbol, .. }) if symbol == name)
}

/// Every bad call, then the gradients checked untouched; the number of calls refused.
pub(crate) fn run(ctx: &mut GpuCtx) -> Result<usize, GpuCheckError> {
    let cfg = BackwardConfig::new(ScalarType::Bf16, D as u32, false);
    let named = |e: AttentionError| GpuCheckError::Case {
        case: format!("{} arguments", cfg.name()),
        source: Box::new(e.into()),
    };
    let fwd = Attention::new(
        &ctx.dev,
        AttentionConfig::new(ScalarType::Bf16, D as u32, false),
    )
    .map(|a| a.with_limit(limit()))
    .map_err(named)?;
    let bwd = AttentionBackward::new(&ctx.dev, cfg)
        .map(|b| b.with_limit(limit()))
        .map_err(named)?;
    let packed = AttentionBackward::new(&ctx.dev, cfg.with_varlen())
        .map(|b| b.with_limit(limit()))
        .map_err(named)?;
    let (rows, keys) = (100, 130);
    let mut x = Operands::new(ctx, Some(2), rows, keys)?;
    let stream = ctx.stream.clone();
    let mut count = 0;
    let mut check = |what: &str, r: Result<(), AttentionError>, ok: Expect| {
        count += 1;
        refused(what, r, ok)
    };

    // Before any launch: the element type, the rank, the packing, the head grouping.
    let mut dv16 = ctx.upload(
        &vec![f16::NAN; 2 * keys * KV_HEADS * D],
        &[2, keys, KV_HEADS, D],
    )?;
    let mut args = x.args();
    args.grads[2] = TensorMut::from(&mut dv16);
    check("dV in f16", fwd.backward(&stream, args), |e| {
        matches!(
            e,
            AttentionError::Shape(ShapeError::Operand(OperandError::DType {
                tensor: "dv",
                ..
            }))
        )
    })?;
    let flat = ctx.upload(
        &vec![bf16::ZERO; 2 * rows * HEADS * D],
        &[2 * rows, HEADS, D],
    )?;
    let mut args = x.args();
    args.inputs[4] = TensorRef::from(&flat);
    check("dO of rank 3", bwd.run_borrowed(&stream, args), |e| {
        matches!(
            e,
            AttentionError::Shape(ShapeError::Operand(OperandError::Rank {
                tensor: "d_o",
                rank: 4,
                ..
            }))
        )
    })?;
    let cu = ctx.upload(&[0i32, 100, 200], &[3])?;
    let cu_k = ctx.upload(&[0i32, 130, 260], &[3])?;
    check(
        "offsets to a batched kernel",
        bwd.run_borrowed(&stream, x.args().packed(seqs(&cu, &cu_k))),
        |e| {
            matches!(
                e,
                AttentionError::Shape(ShapeError::Packing { varlen: false })
            )
        },
    )?;
    let mut g = Operands::new(ctx, Some(2), rows, keys)?;
    let k3 = ctx.upload(&vec![bf16::ZERO; 2 * keys * 3 * D], &[2, keys, 3, D])?;
    let mut args = g.args();
    args.inputs[1] = TensorRef::from(&k3);
    check(
        "3 KV heads for 4 query heads",
        fwd.backward(&stream, args),
        |e| {
            matches!(
                e,
                AttentionError::Shape(ShapeError::Heads {
                    heads: 4,
                    kv_heads: 3
                })
            )
        },
    )?;

    // The preprocess's signature: the log-sum-exp and the head dim.
    let long_lse = ctx.upload(&vec![0f32; 2 * HEADS * (rows + 1)], &[2, HEADS, rows + 1])?;
    let mut args = x.args();
    args.lse = TensorRef::from(&long_lse);
    check("LSE one row longer", bwd.run_borrowed(&stream, args), |e| {
        symbol(e, "seqlen_q")
    })?;
    let lse16 = ctx.upload(&vec![bf16::ZERO; 2 * HEADS * rows], &[2, HEADS, rows])?;
    let mut args = x.args();
    args.lse = TensorRef::from(&lse16);
    check(
        "LSE in bf16",
        bwd.run_borrowed(&stream, args),
        |e| matches!(e, AttentionError::Runtime(RuntimeError::ArgDtype { param, .. }) if param == "lse"),
    )?;
    let q64 = |n: usize| vec![bf16::ZERO; n * HEADS * 64];
    let (o64, do64) = (
        ctx.upload(&q64(2 * rows), &[2, rows, HEADS, 64])?,
        ctx.upload(&q64(2 * rows), &[2, rows, HEADS, 64])?,
    );
    let mut args = x.args();
    args.inputs[3] = TensorRef::from(&o64);
    args.inputs[4] = TensorRef::from(&do64);
    check(
        "O and dO of head dim 64",
        bwd.run_borrowed(&stream, args),
        |e| matches!(e, AttentionError::Runtime(RuntimeError::ArgShape { param, .. }) if param == "o"),
    )?;

    // The main kernel's: K, V and the gradients agree.
    let mut long_dk = ctx.upload(
        &vec![bf16::NAN; 2 * (keys + 1) * KV_HEADS * D],
        &[2, keys + 1, KV_HEADS, D],
    )?;
    let mut args = x.args();
    args.grads[1] = TensorMut::from(&mut long_dk);
    check("dK one key longer", bwd.run_borrowed(&stream, args), |e| {
        symbol(e, "seqlen_k")
    })?;
    let v1 = ctx.upload(&vec![bf16::ZERO; 2 * keys * D], &[2, keys, 1, D])?;
    let mut args = x.args();
    args.inputs[2] = TensorRef::from(&v1);
    check(
        "V with 1 KV head, K with 2",
        fwd.backward(&stream, args),
        |e| symbol(e, "kv_heads"),
    )?;

    // Packed: offsets missing, not i32, or disagreeing (the main kernel's).
    let mut p = Operands::new(ctx, None, 200, 260)?;
    check(
        "a packed kernel without offsets",
        packed.run_borrowed(&stream, p.args()),
        |e| {
            matches!(
                e,
                AttentionError::Shape(ShapeError::Packing { varlen: true })
            )
        },
    )?;
    let unsigned = ctx.upload(&[0u32, 100, 200], &[3])?;
    let mut unsigned_seqs = seqs(&cu, &cu_k);
    unsigned_seqs.offsets.cu_seqlens_q = (&unsigned).into();
    check(
        "u32 query offsets",
        packed.run_borrowed(&stream, p.args().packed(unsigned_seqs)),
        |e| matches!(e, AttentionError::Runtime(RuntimeError::ArgDtype { param, .. }) if param == "cu_seqlens_q"),
    )?;
    let cu_k3 = ctx.upload(&[0i32, 100, 200, 260], &[4])?;
    check(
        "three sequences' key offsets, two sequences' query offsets",
        packed.run_borrowed(&stream, p.args().packed(seqs(&cu, &cu_k3))),
        |e| symbol(e, "offsets"),
    )?;

    for (name, ops) in [("batched", &x), ("GQA", &g), ("packed", &p)] {
        if !ops.untouched(ctx)? {
            return Err(GpuCheckError::Unexpected {
                check: format!("attention backward arguments ({name})"),
                detail: "a refused call wrote a gradient".into(),
            });
        }
    }
    Ok(count)
}
