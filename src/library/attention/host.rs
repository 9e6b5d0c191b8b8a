//! Running the attention kernel: [`Attention`] loads one configuration's kernel and launches it
//! on owned device tensors or on memory the caller borrows, after the checks the signature
//! cannot make (KV heads dividing the query heads, the shapes agreeing with the configuration);
//! its [`Attention::backward`] runs the gradients of the same configuration
//! ([`AttentionBackward`], loaded at its first call).

use std::sync::{Arc, OnceLock};

use crate::runtime::cuda::CudaStream;
use crate::runtime::{
    Arg, Device, DeviceTensor, Element, HangBuffer, JitOptions, LoadedKernel, TensorDesc,
    TensorMut, TensorRef, Watch, debug_hang_from_env,
};

use super::backward::{AttentionBackward, BackwardArgs, BackwardConfig};
use super::{AttentionConfig, AttentionConfigError};
use crate::library::operands::{OperandError, check_ranks_and_types};

/// Operands whose shapes do not make an attention problem for the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A tensor of the wrong rank or element type.
    #[error(transparent)]
    Operand(#[from] OperandError),
    /// KV heads that do not divide the query heads (or none).
    #[error("{kv_heads} KV heads do not divide {heads} query heads")]
    Heads {
        /// Query heads.
        heads: usize,
        /// KV heads.
        kv_heads: usize,
    },
    /// Packed sequences passed to a kernel built for batched ones, or the other way round.
    #[error(
        "the kernel is built for {}: call {}",
        if *varlen { "packed sequences" } else { "batched sequences" },
        if *varlen { "run_borrowed with packed `AttentionArgs`" } else { "run" }
    )]
    Packing {
        /// Whether the kernel takes packed sequences.
        varlen: bool,
    },
}

run_error!(
    /// What can go wrong building or running attention.
    AttentionError,
    AttentionConfigError,
    "building the attention kernel: {0}",
    ShapeError,
    "attention operands: {0}"
);

/// The offsets of packed variable-length sequences ([`AttentionConfig::varlen`]), as
/// FlashAttention's varlen API takes them: `cu_seqlens_q` and `cu_seqlens_k` `[batch + 1]`
/// i32 on the device (sequence `b` at rows `cu[b]..cu[b + 1]`, the last the totals) and the
/// longest query sequence, which sizes the grid.
pub struct VarlenArgs<'a> {
    /// Each sequence's first query row, then the total.
    pub cu_seqlens_q: TensorRef<'a>,
    /// Each sequence's first key row, then the total.
    pub cu_seqlens_k: TensorRef<'a>,
    /// The longest query sequence (at least each `cu_seqlens_q[b + 1] - cu_seqlens_q[b]`; a
    /// smaller value leaves the queries past it unwritten).
    pub max_seqlen_q: u32,
}

/// One call's operands on memory the caller owns ([`Attention::run_borrowed`]): `q`
/// `[batch, seqlen_q, heads, d]`, `k` and `v` `[batch, seqlen_k, kv_heads, d]`, `o` like `q`,
/// `lse` `[batch, heads, seqlen_q]` f32, and the softmax scale; packed sequences (a kernel built
/// with [`AttentionConfig::varlen`]) take rank-3 tensors (`[total, heads, d]`, `lse`
/// `[heads, total_q]`) and their offsets in `seqs`.
pub struct AttentionArgs<'a> {
    /// The queries.
    pub q: TensorRef<'a>,
    /// The keys.
    pub k: TensorRef<'a>,
    /// The values.
    pub v: TensorRef<'a>,
    /// The output, written.
    pub o: TensorMut<'a>,
    /// The row log-sum-exp (natural log), written.
    pub lse: TensorMut<'a>,
    /// The softmax scale (`1 / sqrt(d)` usually).
    pub scale: f32,
    /// Packed sequences' offsets, or `None` for batched tensors.
    pub seqs: Option<VarlenArgs<'a>>,
}

impl<'a> AttentionArgs<'a> {
    /// The operands of batched sequences as views of device tensors: `q`, `k` and `v`, `o`,
    /// `lse` and the scale.
    pub fn new<T: Element>(
        [q, k, v]: [&'a DeviceTensor<T>; 3],
        o: &'a mut DeviceTensor<T>,
        lse: &'a mut DeviceTensor<f32>,
        scale: f32,
    ) -> AttentionArgs<'a> {
        AttentionArgs {
            q: q.into(),
            k: k.into(),
            v: v.into(),
            o: o.into(),
            lse: lse.into(),
            scale,
            seqs: None,
        }
    }

    /// The same operands as packed sequences at the offsets `seqs` (rank-3 tensors).
    pub fn packed(self, seqs: VarlenArgs<'a>) -> AttentionArgs<'a> {
        AttentionArgs {
            seqs: Some(seqs),
            ..self
        }
    }
}

/// The checks of an attention launch (the forward's or the backward's) that the signatures
/// cannot make: packed offsets given (`packing.1`) exactly when the kernel takes packed
/// sequences (`packing.0`), each named tensor of the rank that takes (3 packed, else 4) and of
/// element type `dtype`, and KV heads (the second tensor's, K's) dividing the query heads (the
/// first's, Q's). The rank.
pub(super) fn check_operands(
    (varlen, packed): (bool, bool),
    dtype: ptx_isa::ScalarType,
    named: &[(&'static str, &TensorDesc)],
) -> Result<usize, ShapeError> {
    if packed != varlen {
        return Err(ShapeError::Packing { varlen });
    }
    let rank = if varlen { 3 } else { 4 };
    let typed: Vec<_> = named.iter().map(|&(n, d)| (n, d, rank, dtype)).collect();
    check_ranks_and_types(&typed)?;
    let heads = |i: usize| named.get(i).map_or(0, |(_, d)| d.shape[rank - 2]);
    let (heads, kv_heads) = (heads(0), heads(1));
    if kv_heads == 0 || heads % kv_heads != 0 {
        return Err(ShapeError::Heads { heads, kv_heads });
    }
    Ok(rank)
}

/// A loaded attention kernel for one configuration.
pub struct Attention {
    cfg: AttentionConfig,
    kernel: LoadedKernel,
    /// How long a launch is waited for, if it is ([`Attention::with_limit`]).
    limit: Option<std::time::Duration>,
    /// The hang-record buffer of a debug build ([`crate::runtime::DEBUG_HANG_ENV`] set).
    hang: Option<HangBuffer>,
    /// The device the kernels load on (the backward's at its first call).
    device: Device,
    /// The backward's configuration ([`Attention::backward_config`]).
    backward_cfg: BackwardConfig,
    /// The backward's kernels, loaded at the first [`Attention::backward`].
    backward: OnceLock<AttentionBackward>,
}

impl Attention {
    /// Builds the kernel for `cfg` and loads it on `device`.
    /// With [`crate::runtime::DEBUG_HANG_ENV`] set, the debug build: every mbarrier wait
    /// bounded, each launch waited for, and a hang comes back as
    /// [`crate::runtime::RuntimeError::Hang`] naming the barrier, phase and cause.
    pub fn new(device: &Device, cfg: AttentionConfig) -> Result<Attention, AttentionError> {
        Attention::with_hang_bound(device, cfg, debug_hang_from_env()?)
    }

    /// [`Attention::new`] with the debug build chosen here: `Some(bound)` bounds every wait.
    pub fn with_hang_bound(
        device: &Device,
        cfg: AttentionConfig,
        bound: Option<std::time::Duration>,
    ) -> Result<Attention, AttentionError> {
        cfg.validate()?;
        let mode = HangBuffer::wait_mode(bound);
        let (built, sites) = super::build_with_waits(device.target(), &cfg, mode)?;
        let kernel = built.load(device, &JitOptions::default())?;
        let hang = HangBuffer::for_bound(kernel.kernel().module(), sites, bound)?;
        Ok(Attention {
            cfg,
            kernel,
            limit: None,
            hang,
            device: device.clone(),
            backward_cfg: BackwardConfig {
                varlen: cfg.varlen,
                ..BackwardConfig::new(cfg.dtype, cfg.head_dim, cfg.causal)
            },
            backward: OnceLock::new(),
        })
    }

    /// The same, each launch then waited for at most `limit`: a kernel that has not finished by
    /// then is [`crate::runtime::RuntimeError::Timeout`] (the GPU check runs this way, so a
    /// kernel that never finishes fails the check instead of stopping the process). Without it
    /// a launch only enqueues.
    pub fn with_limit(mut self, limit: std::time::Duration) -> Attention {
        self.limit = Some(limit);
        // The backward, if loaded, takes the limit at its next load.
        self.backward = OnceLock::new();
        self
    }

    /// The configuration.
    pub fn config(&self) -> &AttentionConfig {
        &self.cfg
    }

    /// The loaded kernel (its PTX, signature and launch extents).
    pub fn kernel(&self) -> &LoadedKernel {
        &self.kernel
    }

    /// `O = softmax(Q·Kᵀ·scale)·V` and `LSE` on `stream`: `q` `[batch, seqlen_q, heads, d]`,
    /// `k` and `v` `[batch, seqlen_k, kv_heads, d]`, `o` like `q`, `lse` `[batch, heads,
    /// seqlen_q]`.
    #[allow(clippy::too_many_arguments)]
    pub fn run<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        q: &DeviceTensor<T>,
        k: &DeviceTensor<T>,
        v: &DeviceTensor<T>,
        o: &mut DeviceTensor<T>,
        lse: &mut DeviceTensor<f32>,
        scale: f32,
    ) -> Result<(), AttentionError> {
        self.run_borrowed(stream, AttentionArgs::new([q, k, v], o, lse, scale))
    }

    /// [`Attention::run`] on memory the caller owns (cudarc slices or views with their shapes,
    /// or [`AttentionArgs::new`] of device tensors), packed sequences too: Q, K and V are read through tensor maps of their own
    /// addresses (16-byte aligned), O is written 16-byte aligned; batched tensors (rank 4)
    /// without [`AttentionArgs::seqs`], packed ones (rank 3) with them. The checks the
    /// signature cannot make come first; nothing is enqueued when one fails.
    pub fn run_borrowed<'a>(
        &self,
        stream: &Arc<CudaStream>,
        args: AttentionArgs<'a>,
    ) -> Result<(), AttentionError> {
        let AttentionArgs {
            q,
            k,
            v,
            o,
            lse,
            scale,
            seqs,
        } = args;
        let named = [
            ("q", q.desc()),
            ("k", k.desc()),
            ("v", v.desc()),
            ("o", o.desc()),
        ];
        check_operands((self.cfg.varlen, seqs.is_some()), self.cfg.dtype, &named)?;
        // The rest (equal extents across tensors, the head dim, alignment, tensor maps) is the
        // signature's to check.
        let mut args = vec![
            q.into(),
            k.into(),
            v.into(),
            o.into(),
            lse.into(),
            Arg::scalar(scale),
        ];
        if let Some(s) = seqs {
            args.extend([
                s.cu_seqlens_q.into(),
                s.cu_seqlens_k.into(),
                Arg::scalar(s.max_seqlen_q),
            ]);
        }
        match (self.limit, &self.hang) {
            (None, None) => self.kernel.launch(stream, &mut args)?,
            (timeout, hang) => {
                // A debug build's records are armed before each launch and read if it fails.
                let watch = Watch {
                    timeout,
                    hang: hang.as_ref(),
                };
                self.kernel.launch_watched(stream, &mut args, &watch)?
            }
        };
        Ok(())
    }

    /// The configuration [`Attention::backward`] runs: this forward's element type, head dim,
    /// mask and packing ([`BackwardConfig::new`]), or the deterministic mode's
    /// ([`Attention::with_deterministic_backward`]).
    pub fn backward_config(&self) -> &BackwardConfig {
        &self.backward_cfg
    }

    /// The same, [`Attention::backward`] then in the deterministic mode (dQ summed in the same
    /// order every run: [`BackwardConfig::deterministic`]).
    pub fn with_deterministic_backward(mut self) -> Attention {
        self.backward_cfg = self.backward_cfg.with_deterministic();
        self.backward = OnceLock::new();
        self
    }

    /// The gradients of this attention, `dQ`, `dK` and `dV` ([`BackwardArgs`]: the forward's
    /// inputs, its output and the log-sum-exp it saved, [`Attention::run`]'s `lse`, the
    /// output's gradient `d_o`, the gradients written and the forward's scale), on owned device
    /// tensors ([`BackwardArgs::new`]) or on memory the caller owns. The backward's kernels
    /// ([`AttentionBackward`] of [`Attention::backward_config`]) are loaded at the first call,
    /// then [`AttentionBackward::run_borrowed`] runs, whose checks come first (no refused call
    /// writes a gradient); packed sequences ([`AttentionConfig::varlen`]) take
    /// [`BackwardArgs::packed`].
    pub fn backward(
        &self,
        stream: &Arc<CudaStream>,
        args: BackwardArgs<'_>,
    ) -> Result<(), AttentionError> {
        self.backward_kernels()?.run_borrowed(stream, args)
    }

    /// The backward's kernels, loaded on the first call (with this launcher's limit).
    fn backward_kernels(&self) -> Result<&AttentionBackward, AttentionError> {
        if let Some(b) = self.backward.get() {
            return Ok(b);
        }
        let mut loaded = AttentionBackward::new(&self.device, self.backward_cfg)?;
        if let Some(limit) = self.limit {
            loaded = loaded.with_limit(limit);
        }
        // Another thread may have loaded them meanwhile: either copy serves.
        Ok(self.backward.get_or_init(|| loaded))
    }
}
