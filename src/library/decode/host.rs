//! Running decode attention: [`Decode`] loads one configuration's kernel and the split combine
//! and launches them on owned device tensors or on memory the caller borrows (an engine owns
//! its cache), after the checks the signature cannot make.

use std::sync::{Arc, Mutex};

use crate::runtime::cuda::{CudaSlice, CudaStream};
use crate::runtime::{
    Arg, Device, DeviceTensor, JitOptions, LoadedKernel, RuntimeError, StreamOrder, TensorMut,
    TensorRef,
};
use ptx_isa::ScalarType;

use super::{DecodeConfig, DecodeConfigError, MAX_Q_LEN};
use crate::library::operands::{OperandError, check_ranks_and_types};

/// Operands whose shapes do not make a decode problem for the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeShapeError {
    /// A tensor of the wrong rank or element type.
    #[error(transparent)]
    Operand(#[from] OperandError),
    /// Query heads that are not the configuration's group times the KV heads.
    #[error(
        "{heads} query heads over {kv_heads} KV heads: the kernel is built for {group} a KV head"
    )]
    Heads {
        /// Query heads.
        heads: usize,
        /// KV heads.
        kv_heads: usize,
        /// The configuration's group.
        group: u32,
    },
    /// More new tokens than the kernel takes.
    #[error("{0} new tokens a sequence: 1 to {MAX_Q_LEN}")]
    QLen(usize),
    /// A split count of 0.
    #[error("0 splits of the keys")]
    Splits,
    /// Scales passed to a kernel over a bf16 cache, or none to one over an FP8 cache.
    #[error("the kernel is built for {}: {}", if *fp8 { "an FP8 cache" } else { "a bf16 cache" }, if *fp8 { "pass `kv_scales`" } else { "pass no `kv_scales`" })]
    Scales {
        /// Whether the kernel reads an FP8 cache.
        fp8: bool,
    },
}

run_error!(
    /// What can go wrong building or running decode attention.
    DecodeError,
    DecodeConfigError,
    "building the decode kernel: {0}",
    DecodeShapeError,
    "decode operands: {0}"
);

/// One call's operands (see [`crate::library::decode`] for the layouts): `q`, the caches,
/// `block_table` and `seq_lens` read, `o` written.
pub struct DecodeArgs<'a> {
    /// The new tokens' queries, `[batch, q_len, heads, d]` bf16.
    pub q: TensorRef<'a>,
    /// The key cache, `[num_pages, page_size, kv_heads, d]` bf16.
    pub k_cache: TensorRef<'a>,
    /// The value cache, like `k_cache`.
    pub v_cache: TensorRef<'a>,
    /// Each sequence's pages, `[batch, max_pages]` i32.
    pub block_table: TensorRef<'a>,
    /// Each sequence's length, its new tokens included, `[batch]` i32.
    pub seq_lens: TensorRef<'a>,
    /// The output, `[batch, q_len, heads, d]` bf16, written.
    pub o: TensorMut<'a>,
    /// The softmax scale (`1 / sqrt(d)` usually).
    pub scale: f32,
    /// The longest sequence (an upper bound is enough): with the batch's shape it chooses the
    /// split ([`DecodeConfig::splits`]).
    pub max_seq_len: usize,
    /// The splits of the keys, instead of [`DecodeConfig::splits`]'s choice.
    pub splits: Option<usize>,
    /// An FP8 cache's scales ([`DecodeConfig::fp8`]); `None` for a bf16 cache.
    pub kv_scales: Option<KvScales<'a>>,
}

/// An FP8 e4m3 cache's dequantization scales, f32 on the device: `[1]` (per tensor) or
/// `[kv_heads]` (per head); a key's value is its e4m3 value times its head's scale.
pub struct KvScales<'a> {
    /// K's scales.
    pub k_scale: TensorRef<'a>,
    /// V's scales.
    pub v_scale: TensorRef<'a>,
}

/// The split workspace: `o_part`, `lse_part` and the folded combine's counters (zero, and
/// left zero by every launch), grown to the largest call's.
#[derive(Default)]
struct Workspace {
    o_part: Option<CudaSlice<f32>>,
    lse_part: Option<CudaSlice<f32>>,
    counters: Option<CudaSlice<u32>>,
}

/// A loaded decode kernel for one configuration (with the combine kernel where it takes one).
pub struct Decode {
    cfg: DecodeConfig,
    kernel: LoadedKernel,
    /// The kernel for launches whose CTAs fit one an SM ([`DecodeConfig::solo_config`]: built
    /// for one CTA an SM, [`DecodeConfig::solo`]; an FP8 cache's 16-row pages by TMA boxes,
    /// [`DecodeConfig::solo_boxes`]).
    solo: Option<LoadedKernel>,
    /// The kernel and the one-CTA kernel with [`DecodeConfig::fold`], for launches that fold
    /// ([`DecodeConfig::folds`]) where `cfg` does not ([`DecodeConfig::folded_config`]).
    folded: Option<(LoadedKernel, Option<LoadedKernel>)>,
    /// The combine kernel, without [`DecodeConfig::fold`].
    combine: Option<LoadedKernel>,
    sms: usize,
    workspace: Mutex<Workspace>,
    limit: Option<std::time::Duration>,
}

impl Decode {
    /// Builds the kernels for `cfg` and loads them on `device`.
    pub fn new(device: &Device, cfg: DecodeConfig) -> Result<Decode, DecodeError> {
        cfg.validate()?;
        let target = device.target();
        let load = |cfg: &DecodeConfig| -> Result<LoadedKernel, DecodeError> {
            Ok(super::build(target, cfg)?.load(device, &JitOptions::default())?)
        };
        let kernel = load(&cfg)?;
        let solo = cfg.solo_config().as_ref().map(load).transpose()?;
        let folded = match cfg.folded_config() {
            Some(f) => Some((load(&f)?, f.solo_config().as_ref().map(load).transpose()?)),
            None => None,
        };
        let combine = match cfg.fold {
            true => None,
            false => Some(
                super::build_combine(target, cfg.head_dim)?.load(device, &JitOptions::default())?,
            ),
        };
        Ok(Decode {
            cfg,
            kernel,
            solo,
            folded,
            combine,
            sms: device.attributes().sm_count as usize,
            workspace: Mutex::new(Workspace::default()),
            limit: None,
        })
    }

    /// The same, each launch then waited for at most `limit` ([`RuntimeError::Timeout`] past
    /// it): the GPU check runs this way.
    pub fn with_limit(mut self, limit: std::time::Duration) -> Decode {
        self.limit = Some(limit);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &DecodeConfig {
        &self.cfg
    }

    /// The loaded decode kernel (its PTX, signature and launch extents).
    pub fn kernel(&self) -> &LoadedKernel {
        &self.kernel
    }

    /// The splits a call of this shape takes when it names none.
    pub fn splits(&self, batch: usize, kv_heads: usize, q_len: usize, max_len: usize) -> usize {
        self.cfg.splits(batch, kv_heads, q_len, max_len, self.sms)
    }

    /// Decode attention on owned device tensors over a bf16 cache (see [`DecodeArgs`]; an FP8
    /// cache's tensors go through [`Decode::run_borrowed`], as views of device tensors too).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        stream: &Arc<CudaStream>,
        [q, k_cache, v_cache]: [&DeviceTensor<half::bf16>; 3],
        block_table: &DeviceTensor<i32>,
        seq_lens: &DeviceTensor<i32>,
        o: &mut DeviceTensor<half::bf16>,
        scale: f32,
        max_seq_len: usize,
    ) -> Result<(), DecodeError> {
        let args = DecodeArgs {
            q: q.into(),
            k_cache: k_cache.into(),
            v_cache: v_cache.into(),
            block_table: block_table.into(),
            seq_lens: seq_lens.into(),
            o: o.into(),
            scale,
            max_seq_len,
            splits: None,
            kv_scales: None,
        };
        self.run_borrowed(stream, args)
    }

    /// Decode attention on memory the caller owns (cudarc slices or views with their shapes,
    /// or foreign tensors): the checks the signature cannot make first (nothing is enqueued when
    /// one fails), then the decode kernel (which combines its splits where the launch folds,
    /// [`DecodeConfig::folds`])
    /// or, with more than one split, the decode kernel and the combine, on `stream`.
    pub fn run_borrowed(
        &self,
        stream: &Arc<CudaStream>,
        args: DecodeArgs<'_>,
    ) -> Result<(), DecodeError> {
        let DecodeArgs {
            q,
            k_cache,
            v_cache,
            block_table,
            seq_lens,
            mut o,
            scale,
            max_seq_len,
            splits,
            kv_scales,
        } = args;
        if kv_scales.is_some() != self.cfg.fp8 {
            return Err(DecodeShapeError::Scales { fp8: self.cfg.fp8 }.into());
        }
        let bf16 = ScalarType::Bf16;
        let cache = if self.cfg.fp8 { ScalarType::E4m3 } else { bf16 };
        check_ranks_and_types(&[
            ("q", q.desc(), 4, bf16),
            ("k_cache", k_cache.desc(), 4, cache),
            ("v_cache", v_cache.desc(), 4, cache),
            ("block_table", block_table.desc(), 2, ScalarType::S32),
            ("seq_lens", seq_lens.desc(), 1, ScalarType::S32),
            ("o", o.desc(), 4, bf16),
        ])
        .map_err(DecodeShapeError::from)?;
        let qs = q.desc().shape.clone();
        let (batch, q_len, heads) = (qs[0], qs[1], qs[2]);
        let (page_size, kv_heads) = (k_cache.desc().shape[1], k_cache.desc().shape[2]);
        if kv_heads * self.cfg.group as usize != heads {
            let group = self.cfg.group;
            return Err(DecodeShapeError::Heads {
                heads,
                kv_heads,
                group,
            }
            .into());
        }
        if !(1..=MAX_Q_LEN as usize).contains(&q_len) {
            return Err(DecodeShapeError::QLen(q_len).into());
        }
        let splits = splits.unwrap_or_else(|| self.splits(batch, kv_heads, q_len, max_seq_len));
        if splits == 0 {
            return Err(DecodeShapeError::Splits.into());
        }
        let d = self.cfg.head_dim as usize;
        let lse_shape = vec![splits, batch, q_len, heads];
        let o_shape = vec![splits, batch, q_len, heads, d];
        let (n_lse, n_o) = (lse_shape.iter().product(), o_shape.iter().product());
        // The workspace, grown when too small; a poisoned lock only means a launch failed.
        let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        let Workspace {
            o_part,
            lse_part,
            counters,
        } = &mut *ws;
        let o_part = grown(o_part, n_o, stream)?;
        let lse_part = grown(lse_part, n_lse, stream)?;
        let mut o_view = o_part.slice_mut(0..n_o);
        let mut lse_view = lse_part.slice_mut(0..n_lse);
        let mut o_t = TensorMut::view(&mut o_view, o_shape.clone())?;
        let mut lse_t = TensorMut::view(&mut lse_view, lse_shape.clone())?;
        let n_counters = batch * kv_heads * q_len;
        let counters = grown(counters, n_counters, stream)?;
        let mut counters_view = counters.slice_mut(0..n_counters);
        let counters_t = TensorMut::view(&mut counters_view, vec![batch, kv_heads, q_len])?;
        let mut main = vec![
            q.into(),
            k_cache.into(),
            v_cache.into(),
            block_table.into(),
            seq_lens.into(),
            o.reborrow().into(),
            o_t.reborrow().into(),
            lse_t.reborrow().into(),
        ];
        // Folded launches take the kernel with `fold` and its counters (DecodeConfig::folds).
        let fold = self.cfg.folds(splits);
        if fold {
            main.push(counters_t.into());
        }
        main.push(Arg::scalar(scale));
        if let Some(s) = kv_scales {
            main.extend([s.k_scale.into(), s.v_scale.into()]);
        }
        // CTAs that fit one an SM, or most of two waves of one over long runs of contiguous
        // keys, take the kernel for them (DecodeConfig::takes_solo, DecodeConfig::solo_config).
        let chunks = q_len.div_ceil(self.cfg.tokens_per_cta() as usize);
        let ctas = splits * chunks * kv_heads * batch;
        let keys = max_seq_len.div_ceil(splits);
        let alone = self.cfg.takes_solo(ctas, keys, page_size, self.sms);
        let (kernel, solo) = match (&self.folded, fold && !self.cfg.fold) {
            (Some((kernel, solo)), true) => (kernel, solo.as_ref()),
            _ => (&self.kernel, self.solo.as_ref()),
        };
        let kernel = match solo {
            Some(one) if alone => one,
            _ => kernel,
        };
        // Launched while the kernel before it ends (DecodeConfig::dependent_launch).
        let order = StreamOrder::dependent_if(self.cfg.dependent_launch);
        kernel.launch_within(stream, &mut main, self.limit, order)?;
        if let Some(combine) = self.combine.as_ref().filter(|_| splits > 1 && !fold) {
            let mut merge = vec![o_t.into(), lse_t.into(), o.reborrow().into()];
            // Launched while the decode kernel ends (DecodeConfig::dependent_combine).
            let order = StreamOrder::dependent_if(self.cfg.dependent_combine);
            combine.launch_within(stream, &mut merge, self.limit, order)?;
        }
        Ok(())
    }
}

/// `have`, or a fresh allocation in its place when it holds fewer than `n` values.
pub(crate) fn grown<'w, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    have: &'w mut Option<CudaSlice<T>>,
    n: usize,
    stream: &Arc<CudaStream>,
) -> Result<&'w mut CudaSlice<T>, RuntimeError> {
    let slice = match have.take() {
        Some(s) if s.len() >= n => s,
        _ => stream.alloc_zeros::<T>(n)?,
    };
    Ok(have.insert(slice))
}
