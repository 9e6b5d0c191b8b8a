//! Running the attention backward: [`AttentionBackward`] loads one configuration's three
//! kernels and launches them on owned device tensors or on memory the caller borrows, after
//! the checks the signatures cannot make; the f32 workspace (`D`, `LSE · log2 e`, the `dQ`
//! accumulator) is kept between calls.

use std::sync::{Arc, Mutex};

use crate::library::decode::grown;
use crate::runtime::cuda::{CudaSlice, CudaStream};
use crate::runtime::{
    Arg, Device, DeviceTensor, Element, JitOptions, LoadedKernel, StreamOrder, TensorMut, TensorRef,
};

use super::super::host::check_operands;
use super::super::{AttentionError, VarlenArgs};
use super::BackwardConfig;

/// One call's operands on memory the caller owns ([`AttentionBackward::run_borrowed`]): the
/// forward's inputs `q` `[batch, seqlen_q, heads, d]`, `k` and `v` `[batch, seqlen_k,
/// kv_heads, d]`, its output `o` (like `q`), the output's gradient `d_o` (like `q`), its
/// log-sum-exp `lse` `[batch, heads, seqlen_q]` f32, the gradients written (`dq` like `q`, `dk`
/// and `dv` like `k`, each KV head's summed over its query heads), and the softmax scale the
/// forward used; packed sequences ([`BackwardConfig::varlen`]) take rank-3 tensors (`[total,
/// heads, d]`, `lse` `[heads, total_q]`, as the forward's) and their offsets in `seqs`.
pub struct BackwardArgs<'a> {
    /// `[q, k, v, o, d_o]`.
    pub inputs: [TensorRef<'a>; 5],
    /// The forward's row log-sum-exp (natural log).
    pub lse: TensorRef<'a>,
    /// `[dq, dk, dv]`, written.
    pub grads: [TensorMut<'a>; 3],
    /// The softmax scale.
    pub scale: f32,
    /// Packed sequences' offsets, or `None` for batched tensors.
    pub seqs: Option<BackwardSeqs<'a>>,
}

/// Packed sequences' offsets for the backward: the forward's ([`VarlenArgs`]: `cu_seqlens_q`,
/// `cu_seqlens_k`, the longest query sequence, which sizes the preprocess and convert grids)
/// and the longest key sequence, which sizes the main kernel's.
pub struct BackwardSeqs<'a> {
    /// The offsets and the longest query sequence.
    pub offsets: VarlenArgs<'a>,
    /// The longest key sequence (at least each `cu_seqlens_k[b + 1] - cu_seqlens_k[b]`; a
    /// smaller value leaves the keys past it without gradients).
    pub max_seqlen_k: u32,
}

impl<'a> BackwardArgs<'a> {
    /// The operands of batched sequences as views of device tensors: `q`, `k`, `v`, `o` and
    /// `d_o`, `lse`, the gradients `dq`, `dk`, `dv` and the scale.
    pub fn new<T: Element>(
        inputs: [&'a DeviceTensor<T>; 5],
        lse: &'a DeviceTensor<f32>,
        grads: [&'a mut DeviceTensor<T>; 3],
        scale: f32,
    ) -> BackwardArgs<'a> {
        BackwardArgs {
            inputs: inputs.map(TensorRef::from),
            lse: lse.into(),
            grads: grads.map(TensorMut::from),
            scale,
            seqs: None,
        }
    }

    /// The same operands as packed sequences at the offsets `seqs` (rank-3 tensors).
    pub fn packed(self, seqs: BackwardSeqs<'a>) -> BackwardArgs<'a> {
        BackwardArgs {
            seqs: Some(seqs),
            ..self
        }
    }
}

/// The f32 workspace, grown to the largest call's.
#[derive(Default)]
struct Workspace {
    dd: Option<CudaSlice<f32>>,
    lse2: Option<CudaSlice<f32>>,
    dq: Option<CudaSlice<f32>>,
    turns: Option<CudaSlice<u32>>,
}

/// The loaded backward kernels of one configuration.
pub struct AttentionBackward {
    cfg: BackwardConfig,
    preprocess: LoadedKernel,
    main: LoadedKernel,
    convert: LoadedKernel,
    workspace: Mutex<Workspace>,
    limit: Option<std::time::Duration>,
}

impl AttentionBackward {
    /// Builds the three kernels for `cfg` and loads them on `device`.
    pub fn new(device: &Device, cfg: BackwardConfig) -> Result<AttentionBackward, AttentionError> {
        cfg.validate()?;
        let target = device.target();
        let load = |b: crate::kernel::BuiltKernel| b.load(device, &JitOptions::default());
        Ok(AttentionBackward {
            cfg,
            preprocess: load(super::build_preprocess(target, &cfg)?)?,
            main: load(super::build_main(target, &cfg)?)?,
            convert: load(super::build_convert(target, &cfg)?)?,
            workspace: Mutex::new(Workspace::default()),
            limit: None,
        })
    }

    /// The same, each launch then waited for at most `limit`
    /// ([`crate::runtime::RuntimeError::Timeout`] past it): the GPU check runs this way.
    pub fn with_limit(mut self, limit: std::time::Duration) -> AttentionBackward {
        self.limit = Some(limit);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &BackwardConfig {
        &self.cfg
    }

    /// The loaded main kernel (its PTX, signature and launch extents).
    pub fn kernel(&self) -> &LoadedKernel {
        &self.main
    }

    /// The gradients on owned device tensors (see [`BackwardArgs`]).
    #[allow(clippy::too_many_arguments)]
    pub fn run<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        inputs: [&DeviceTensor<T>; 5],
        lse: &DeviceTensor<f32>,
        grads: [&mut DeviceTensor<T>; 3],
        scale: f32,
    ) -> Result<(), AttentionError> {
        self.run_borrowed(stream, BackwardArgs::new(inputs, lse, grads, scale))
    }

    /// The gradients on memory the caller owns: the checks the signatures cannot make first
    /// (packing, ranks, element types, KV heads dividing the query heads: nothing is enqueued
    /// when one fails), then the preprocess, main and convert kernels on `stream` (the last two
    /// programmatic dependents, [`BackwardConfig::dependent`]), each after its signature's checks
    /// (extents, head dim, alignment, tensor maps): a refusal of the main kernel's arguments (K,
    /// V, dK, dV, the key offsets) comes once the preprocess is enqueued, which writes only the
    /// workspace, so no refused call writes a gradient. Batched tensors (rank 4) without
    /// [`BackwardArgs::seqs`], packed ones (rank 3) with them.
    pub fn run_borrowed(
        &self,
        stream: &Arc<CudaStream>,
        args: BackwardArgs<'_>,
    ) -> Result<(), AttentionError> {
        self.launch(stream, args, true)
    }

    /// The preprocess kernel alone on `args`, after [`AttentionBackward::run_borrowed`]'s
    /// checks: `D`, `LSE · log2 e` and the zeroed `dQ` accumulator into the workspace, the
    /// gradients not written. What a benchmark of the preprocess times
    /// (`benches/attention_backward.rs`, variant `pre`).
    pub fn run_preprocess(
        &self,
        stream: &Arc<CudaStream>,
        args: BackwardArgs<'_>,
    ) -> Result<(), AttentionError> {
        self.launch(stream, args, false)
    }

    /// [`AttentionBackward::run_borrowed`]: the preprocess, then with `all` the main and
    /// convert kernels.
    fn launch(
        &self,
        stream: &Arc<CudaStream>,
        args: BackwardArgs<'_>,
        all: bool,
    ) -> Result<(), AttentionError> {
        let BackwardArgs {
            inputs,
            lse,
            grads,
            scale,
            seqs,
        } = args;
        let descs = inputs
            .iter()
            .map(|t| t.desc())
            .chain(grads.iter().map(|t| t.desc()));
        let names = ["q", "k", "v", "o", "d_o", "dq", "dk", "dv"];
        let named: Vec<_> = names.into_iter().zip(descs).collect();
        let packing = (self.cfg.varlen, seqs.is_some());
        let rank = check_operands(packing, self.cfg.dtype, &named)?;
        let [q, k, v, o, d_o] = inputs;
        let qs = q.desc().shape.clone();
        let heads = qs[rank - 2];
        // The rest (equal extents across tensors, the head dim, alignment, tensor maps) is the
        // signatures' to check.
        // D and LSE · log2 e: rows padded to query blocks (the kernels' `stat_len`): each
        // sequence's own, or packed `(total_q / block_m + batch) · block_m`.
        let pad = self.cfg.block_m as usize;
        let (lead, padded) = match &seqs {
            None => (vec![qs[0], heads], qs[1].div_ceil(pad) * pad),
            Some(s) => {
                let batch = s.offsets.cu_seqlens_q.desc().shape[0].saturating_sub(1);
                (vec![heads], (qs[0] / pad + batch) * pad)
            }
        };
        let stats = [lead.as_slice(), &[padded]].concat();
        let n_stats: usize = stats.iter().product();
        // dQ's accumulator: each block's rows (`dq_rows`) in tiles of 64 columns (the kernels'
        // `dq_accum`), and the deterministic mode's counter a tile.
        let (slab, d) = (BackwardConfig::SLAB as usize, qs[rank - 1]);
        let block = self.cfg.dq_rows() as usize;
        let turn_shape = [lead.as_slice(), &[padded / block, d / slab]].concat();
        let acc_shape = [turn_shape.as_slice(), &[block, slab]].concat();
        let n_q: usize = acc_shape.iter().product();
        let n_turns: usize = turn_shape.iter().product();
        // The workspace, grown when too small; a poisoned lock only means a launch failed.
        let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        let Workspace {
            dd,
            lse2,
            dq: acc,
            turns,
        } = &mut *ws;
        let (dd, lse2, acc, turns) = (
            grown(dd, n_stats, stream)?,
            grown(lse2, n_stats, stream)?,
            grown(acc, n_q, stream)?,
            grown(turns, n_turns, stream)?,
        );
        let (mut dd_view, mut lse2_view, mut acc_view, mut turn_view) = (
            dd.slice_mut(0..n_stats),
            lse2.slice_mut(0..n_stats),
            acc.slice_mut(0..n_q),
            turns.slice_mut(0..n_turns),
        );
        let mut dd_t = TensorMut::view(&mut dd_view, stats.clone())?;
        let mut lse2_t = TensorMut::view(&mut lse2_view, stats)?;
        let mut acc_t = TensorMut::view(&mut acc_view, acc_shape)?;
        let mut turn_t = TensorMut::view(&mut turn_view, turn_shape)?;
        let [mut dq, mut dk, mut dv] = grads;
        let mut pre = vec![
            o.into(),
            d_o.clone().into(),
            lse.into(),
            dd_t.reborrow().into(),
            lse2_t.reborrow().into(),
            acc_t.reborrow().into(),
            turn_t.reborrow().into(),
        ];
        pre.extend(seq_args(&seqs, false));
        // The main and convert kernels after the one before each on `stream`, with
        // BackwardConfig::dependent as programmatic dependents of it (launched as usual where the
        // launcher has a limit, LoadedKernel::launch_within).
        let (limit, then) = (self.limit, StreamOrder::dependent_if(self.cfg.dependent));
        self.preprocess
            .launch_within(stream, &mut pre, limit, StreamOrder::After)?;
        if !all {
            return Ok(());
        }
        let mut main = vec![
            q.into(),
            k.into(),
            v.into(),
            d_o.into(),
            lse2_t.into(),
            dd_t.into(),
            acc_t.reborrow().into(),
            turn_t.into(),
            dk.reborrow().into(),
            dv.reborrow().into(),
            Arg::scalar(scale),
        ];
        main.extend(seq_args(&seqs, true));
        self.main.launch_within(stream, &mut main, limit, then)?;
        let mut conv = vec![acc_t.into(), dq.reborrow().into(), Arg::scalar(scale)];
        conv.extend(seq_args(&seqs, false));
        self.convert.launch_within(stream, &mut conv, limit, then)?;
        Ok(())
    }
}

/// Packed sequences' last arguments of a kernel: the offsets and the longest sequence its grid
/// covers (`keys`: the main kernel's, `cu_seqlens_k` and `max_seqlen_k` too); none batched.
fn seq_args<'x>(seqs: &'x Option<BackwardSeqs<'_>>, keys: bool) -> Vec<Arg<'x>> {
    let Some(s) = seqs else {
        return Vec::new();
    };
    let o = &s.offsets;
    match keys {
        true => vec![
            o.cu_seqlens_q.clone().into(),
            o.cu_seqlens_k.clone().into(),
            Arg::scalar(s.max_seqlen_k),
        ],
        false => vec![o.cu_seqlens_q.clone().into(), Arg::scalar(o.max_seqlen_q)],
    }
}

#[cfg(test)]
mod tests {
    use crate::library::OperandError;
    use crate::library::attention::host::{ShapeError, check_operands};
    use crate::runtime::TensorDesc;
    use ptx_isa::ScalarType;

    /// The eight tensors [`super::AttentionBackward::run_borrowed`] checks first, by name.
    const NAMES: [&str; 8] = ["q", "k", "v", "o", "d_o", "dq", "dk", "dv"];

    /// `q`, `k`, `v`, `o`, `d_o`, `dq`, `dk`, `dv` of `heads` query and `kv_heads` KV heads
    /// (`lead` the batch and length, or packed the total), bf16, head dim 128.
    fn operands(lead: &[usize], heads: usize, kv_heads: usize) -> Vec<TensorDesc> {
        NAMES
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let h = if matches!(*name, "k" | "v" | "dk" | "dv") {
                    kv_heads
                } else {
                    heads
                };
                TensorDesc {
                    dtype: ScalarType::Bf16,
                    shape: [lead, &[h, 128]].concat(),
                    addr: 0x100_0000 * (i as u64 + 1),
                    device: 0,
                }
            })
            .collect()
    }

    fn check(packing: (bool, bool), descs: &[TensorDesc]) -> Result<usize, ShapeError> {
        let named: Vec<_> = NAMES.into_iter().zip(descs).collect();
        check_operands(packing, ScalarType::Bf16, &named)
    }

    /// What `run_borrowed` refuses before it enqueues anything, without a GPU: offsets given
    /// to a batched kernel or none to a packed one, a tensor of the wrong rank or element type
    /// (the first in order named), KV heads that do not divide the query heads; each a typed
    /// [`ShapeError`] naming its place.
    #[test]
    fn the_backward_operands_are_checked_by_name_before_any_launch() {
        let batched = operands(&[2, 100], 4, 2);
        assert_eq!(check((false, false), &batched), Ok(4));
        assert_eq!(check((true, true), &operands(&[300], 4, 2)), Ok(3));
        assert_eq!(
            check((false, true), &batched),
            Err(ShapeError::Packing { varlen: false })
        );
        assert_eq!(
            check((true, false), &operands(&[300], 4, 2)),
            Err(ShapeError::Packing { varlen: true })
        );
        // Rank 3 tensors for a batched kernel: the first, Q, is named.
        assert!(matches!(
            check((false, false), &operands(&[300], 4, 2)),
            Err(ShapeError::Operand(OperandError::Rank {
                tensor: "q",
                rank: 4,
                ..
            }))
        ));
        // dO of rank 3 among rank-4 tensors.
        let mut flat = batched.clone();
        flat[4].shape = vec![200, 4, 128];
        assert!(matches!(
            check((false, false), &flat),
            Err(ShapeError::Operand(OperandError::Rank {
                tensor: "d_o",
                rank: 4,
                ..
            }))
        ));
        // A gradient in f16: the last tensor, dV.
        let mut half = batched.clone();
        half[7].dtype = ScalarType::F16;
        assert_eq!(
            check((false, false), &half),
            Err(ShapeError::Operand(OperandError::DType {
                tensor: "dv",
                got: ScalarType::F16,
                want: ScalarType::Bf16,
            }))
        );
        // 3 KV heads for 4 query heads; no KV head at all.
        for kv_heads in [3, 0] {
            assert_eq!(
                check((false, false), &operands(&[2, 100], 4, kv_heads)),
                Err(ShapeError::Heads { heads: 4, kv_heads })
            );
        }
    }
}
