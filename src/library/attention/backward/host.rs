//! Running the attention backward: [`AttentionBackward`] loads one configuration's three
//! kernels and launches them on owned device tensors or on memory the caller borrows, after
//! the checks the signatures cannot make; the f32 workspace (`D`, `LSE · log2 e`, the `dQ`
//! accumulator) is kept between calls.

use std::sync::{Arc, Mutex};

use crate::library::decode::grown;
use crate::runtime::cuda::{CudaSlice, CudaStream};
use crate::runtime::{
    Arg, Device, DeviceTensor, Element, JitOptions, LoadedKernel, RuntimeError, TensorMut,
    TensorRef,
};

use super::super::{AttentionError, ShapeError};
use super::BackwardConfig;

/// One call's operands on memory the caller owns ([`AttentionBackward::run_borrowed`]): the
/// forward's inputs `q` `[batch, seqlen_q, heads, d]`, `k` and `v` `[batch, seqlen_k,
/// kv_heads, d]`, its output `o` (like `q`) and log-sum-exp `lse` `[batch, heads, seqlen_q]`
/// f32, the output's gradient `d_o` (like `q`), the gradients written (`dq` like `q`, `dk` and
/// `dv` like `k`), and the softmax scale the forward used.
pub struct BackwardArgs<'a> {
    /// The queries.
    pub q: TensorRef<'a>,
    /// The keys.
    pub k: TensorRef<'a>,
    /// The values.
    pub v: TensorRef<'a>,
    /// The forward's output.
    pub o: TensorRef<'a>,
    /// The forward's row log-sum-exp (natural log).
    pub lse: TensorRef<'a>,
    /// The gradient of the loss with respect to `o`.
    pub d_o: TensorRef<'a>,
    /// Q's gradient, written.
    pub dq: TensorMut<'a>,
    /// K's gradient, written (summed over each KV head's query heads).
    pub dk: TensorMut<'a>,
    /// V's gradient, written (summed likewise).
    pub dv: TensorMut<'a>,
    /// The softmax scale.
    pub scale: f32,
}

impl<'a> BackwardArgs<'a> {
    /// The operands as views of device tensors: `q`, `k`, `v`, `o` and `d_o`, `lse`, the
    /// gradients `dq`, `dk`, `dv` and the scale.
    pub fn new<T: Element>(
        [q, k, v, o, d_o]: [&'a DeviceTensor<T>; 5],
        lse: &'a DeviceTensor<f32>,
        [dq, dk, dv]: [&'a mut DeviceTensor<T>; 3],
        scale: f32,
    ) -> BackwardArgs<'a> {
        BackwardArgs {
            q: q.into(),
            k: k.into(),
            v: v.into(),
            o: o.into(),
            lse: lse.into(),
            d_o: d_o.into(),
            dq: dq.into(),
            dk: dk.into(),
            dv: dv.into(),
            scale,
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

    /// The same, each launch then waited for at most `limit` ([`RuntimeError::Timeout`] past
    /// it): the GPU check runs this way.
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
        [q, k, v, o, d_o]: [&DeviceTensor<T>; 5],
        lse: &DeviceTensor<f32>,
        [dq, dk, dv]: [&mut DeviceTensor<T>; 3],
        scale: f32,
    ) -> Result<(), AttentionError> {
        let args = BackwardArgs::new([q, k, v, o, d_o], lse, [dq, dk, dv], scale);
        self.run_borrowed(stream, args)
    }

    /// The gradients on memory the caller owns: the checks the signatures cannot make first
    /// (nothing is enqueued when one fails), then the preprocess, main and convert kernels on
    /// `stream`.
    pub fn run_borrowed(
        &self,
        stream: &Arc<CudaStream>,
        args: BackwardArgs<'_>,
    ) -> Result<(), AttentionError> {
        let BackwardArgs {
            q,
            k,
            v,
            o,
            lse,
            d_o,
            mut dq,
            mut dk,
            mut dv,
            scale,
        } = args;
        let want = self.cfg.dtype;
        for (tensor, d) in [
            ("q", q.desc()),
            ("k", k.desc()),
            ("v", v.desc()),
            ("o", o.desc()),
            ("d_o", d_o.desc()),
            ("dq", dq.desc()),
            ("dk", dk.desc()),
            ("dv", dv.desc()),
        ] {
            if d.shape.len() != 4 {
                let shape = d.shape.clone();
                return Err(ShapeError::Rank {
                    tensor,
                    shape,
                    rank: 4,
                }
                .into());
            }
            if d.dtype != want {
                let got = d.dtype;
                return Err(ShapeError::DType { tensor, got, want }.into());
            }
        }
        let qs = q.desc().shape.clone();
        let (heads, kv_heads) = (qs[2], k.desc().shape[2]);
        if kv_heads == 0 || heads % kv_heads != 0 {
            return Err(ShapeError::Heads { heads, kv_heads }.into());
        }
        // The rest (equal extents across tensors, the head dim, alignment, tensor maps) is the
        // signatures' to check.
        let (batch, seqlen_q) = (qs[0], qs[1]);
        // D and LSE · log2 e: rows padded to a query block (the kernels' `stat_len`).
        let block = BackwardConfig::BLOCK_M as usize;
        let stats = vec![batch, heads, seqlen_q.div_ceil(block) * block];
        let n_stats: usize = stats.iter().product();
        // dQ's accumulator: each query block's rows in tiles of 64 columns (the kernels'
        // `dq_accum`).
        let (slab, d) = (BackwardConfig::SLAB as usize, qs[3]);
        let acc_shape = vec![
            batch,
            heads,
            seqlen_q.div_ceil(block),
            d / slab,
            block,
            slab,
        ];
        let n_q: usize = acc_shape.iter().product();
        // The workspace, grown when too small; a poisoned lock only means a launch failed.
        let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        let Workspace {
            dd,
            lse2,
            dq: acc,
            turns,
        } = &mut *ws;
        let turn_shape = acc_shape[..4].to_vec();
        let n_turns: usize = turn_shape.iter().product();
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
        let mut pre = vec![
            o.into(),
            d_o.clone().into(),
            lse.into(),
            dd_t.reborrow().into(),
            lse2_t.reborrow().into(),
            acc_t.reborrow().into(),
            turn_t.reborrow().into(),
        ];
        self.launch(&self.preprocess, stream, &mut pre)?;
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
        self.launch(&self.main, stream, &mut main)?;
        let mut conv = vec![acc_t.into(), dq.reborrow().into(), Arg::scalar(scale)];
        self.launch(&self.convert, stream, &mut conv)?;
        Ok(())
    }

    /// `kernel` on `args`, waited for when the launcher has a limit.
    fn launch(
        &self,
        kernel: &LoadedKernel,
        stream: &Arc<CudaStream>,
        args: &mut [Arg<'_>],
    ) -> Result<(), RuntimeError> {
        kernel.launch_within(stream, args, self.limit)?;
        Ok(())
    }
}
