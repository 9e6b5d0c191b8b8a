//! Memory-bound row kernels written with the authoring model: softmax and log-softmax, RMSNorm
//! (optionally fused with a residual add), LayerNorm, and SwiGLU. One CTA per row; each thread
//! keeps its slice of the row in registers (one read and one write of the data), reduces with
//! [`KernelBuilder::reduce`] and does the math in f32 whatever the element type.
//!
//! The column count is a symbolic extent. A kernel is built for rows of at most
//! [`RowConfig::max_cols`] columns and, in its vector form, for a column count that is a multiple
//! of the vector width: then every access is one 16-byte (f32) vector under one bounds check. The
//! scalar form takes any column count. The caller picks the form from the shape: the vector one
//! when the column count is a multiple of [`RowConfig::vec_for`].

use ptx_isa::{Reg, ScalarType, Target, ty};

use crate::kernel::math::{LOG2_E, Widen};
use crate::kernel::{
    Buffer, BuiltKernel, Caching, Elem, Expr, KernelBuilder, ReduceOp, ReduceScope, Result,
    TensorOpts, Var,
};
use crate::runtime::ExtentFacts;

/// What a row kernel computes for each row `x` of `cols` elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowOp {
    /// `y = e^(x - max) / sum(e^(x - max))`.
    Softmax,
    /// `y = x - max - ln(sum(e^(x - max)))`.
    LogSoftmax,
    /// `y = x / sqrt(mean(x²) + eps) * w`.
    RmsNorm {
        /// Added to the mean square.
        eps: f32,
    },
    /// `h = x + residual` (written back to `residual`), then `y = RMSNorm(h) * w`.
    ResidualRmsNorm {
        /// Added to the mean square.
        eps: f32,
    },
    /// `y = (x - mean) / sqrt(var + eps) * w + b`; the row's mean and `1/sqrt(var + eps)` are
    /// written for a backward pass.
    LayerNorm {
        /// Added to the variance.
        eps: f32,
    },
}

impl RowOp {
    /// Every op, with the epsilons the registry, the self-test and the tests build it with.
    pub const ALL: [RowOp; 5] = [
        RowOp::Softmax,
        RowOp::LogSoftmax,
        RowOp::RmsNorm { eps: 1e-6 },
        RowOp::ResidualRmsNorm { eps: 1e-6 },
        RowOp::LayerNorm { eps: 1e-5 },
    ];

    /// The op's name in kernel names and reports (`softmax`, `residual_rmsnorm`).
    pub fn name(self) -> &'static str {
        match self {
            RowOp::Softmax => "softmax",
            RowOp::LogSoftmax => "log_softmax",
            RowOp::RmsNorm { .. } => "rmsnorm",
            RowOp::ResidualRmsNorm { .. } => "residual_rmsnorm",
            RowOp::LayerNorm { .. } => "layernorm",
        }
    }
}

/// The tensors of one row-kernel launch, by role. [`RowOp::args`] orders the ones an op reads as
/// its kernel's parameters and refuses a launch that lacks one; the launch itself checks each
/// tensor's element type, shape, alignment and the column-count facts against the signature.
#[derive(Default)]
pub struct RowArgs<'a> {
    /// The input rows `[rows, cols]`.
    pub x: Option<crate::runtime::Arg<'a>>,
    /// The residual `[rows, cols]` (residual RMSNorm: read, and overwritten with `x + residual`).
    pub residual: Option<crate::runtime::Arg<'a>>,
    /// The weight `[cols]` (the norms).
    pub w: Option<crate::runtime::Arg<'a>>,
    /// The bias `[cols]` (LayerNorm).
    pub b: Option<crate::runtime::Arg<'a>>,
    /// The output rows `[rows, cols]`.
    pub y: Option<crate::runtime::Arg<'a>>,
    /// Each row's mean `[rows]`, f32 (LayerNorm).
    pub mean: Option<crate::runtime::Arg<'a>>,
    /// Each row's `1 / sqrt(var + eps)` `[rows]`, f32 (LayerNorm).
    pub rstd: Option<crate::runtime::Arg<'a>>,
}

/// The tensors of one row-op problem, every kind of them, owned: [`RowOp::launch`] passes the
/// ones the op's kernel takes (the bench and the self-test hold them all and launch every op
/// on them).
pub struct RowTensors<T: crate::runtime::Element> {
    /// The input rows `[rows, cols]`.
    pub x: crate::runtime::DeviceTensor<T>,
    /// The residual `[rows, cols]`.
    pub residual: crate::runtime::DeviceTensor<T>,
    /// The weight `[cols]`.
    pub w: crate::runtime::DeviceTensor<T>,
    /// The bias `[cols]`.
    pub b: crate::runtime::DeviceTensor<T>,
    /// The output rows `[rows, cols]`.
    pub y: crate::runtime::DeviceTensor<T>,
    /// Each row's mean `[rows]`.
    pub mean: crate::runtime::DeviceTensor<f32>,
    /// Each row's rstd `[rows]`.
    pub rstd: crate::runtime::DeviceTensor<f32>,
}

impl<'a, T: crate::runtime::Element> From<&'a mut RowTensors<T>> for RowArgs<'a> {
    fn from(t: &'a mut RowTensors<T>) -> RowArgs<'a> {
        use crate::runtime::Arg;
        RowArgs {
            x: Some(Arg::tensor(&t.x)),
            residual: Some(Arg::tensor_mut(&mut t.residual)),
            w: Some(Arg::tensor(&t.w)),
            b: Some(Arg::tensor(&t.b)),
            y: Some(Arg::tensor_mut(&mut t.y)),
            mean: Some(Arg::tensor_mut(&mut t.mean)),
            rstd: Some(Arg::tensor_mut(&mut t.rstd)),
        }
    }
}

impl RowOp {
    /// Launches `loaded` (this op's kernel) on `t`'s tensors that the op takes, in its order;
    /// the launch checks their types, shapes and alignment against the kernel's signature.
    pub fn launch<T: crate::runtime::Element>(
        self,
        loaded: &crate::runtime::LoadedKernel,
        stream: &crate::runtime::cuda::CudaStream,
        t: &mut RowTensors<T>,
    ) -> Result<crate::runtime::Symbols, crate::runtime::RuntimeError> {
        let mut args =
            self.args(t.into())
                .map_err(|e| crate::runtime::RuntimeError::InvalidLaunch {
                    reason: e.to_string(),
                })?;
        loaded.launch(stream, &mut args)
    }
}

/// A row-kernel launch without a tensor its op reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{op} needs the `{tensor}` tensor")]
pub struct MissingTensor {
    /// The op's kernel name stem (`rmsnorm`).
    pub op: &'static str,
    /// The tensor's role (`w`).
    pub tensor: &'static str,
}

impl RowOp {
    /// The roles of the tensors `op`'s kernel takes, in parameter order.
    pub fn tensors(self) -> &'static [&'static str] {
        match self {
            RowOp::Softmax | RowOp::LogSoftmax => &["x", "y"],
            RowOp::RmsNorm { .. } => &["x", "w", "y"],
            RowOp::ResidualRmsNorm { .. } => &["x", "residual", "w", "y"],
            RowOp::LayerNorm { .. } => &["x", "w", "b", "y", "mean", "rstd"],
        }
    }

    /// `a`'s tensors in the order this op's kernel takes them.
    pub fn args<'a>(
        self,
        mut a: RowArgs<'a>,
    ) -> Result<Vec<crate::runtime::Arg<'a>>, MissingTensor> {
        self.tensors()
            .iter()
            .map(|&role| {
                let slot = match role {
                    "x" => a.x.take(),
                    "residual" => a.residual.take(),
                    "w" => a.w.take(),
                    "b" => a.b.take(),
                    "y" => a.y.take(),
                    "mean" => a.mean.take(),
                    _ => a.rstd.take(),
                };
                slot.ok_or(MissingTensor {
                    op: self.name(),
                    tensor: role,
                })
            })
            .collect()
    }
}

/// How a row kernel spreads a row over its CTA (or its cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowConfig {
    /// Threads per CTA (a multiple of 32).
    pub threads: u32,
    /// Elements per access per thread (16 bytes: 4 f32, 8 bf16 or f16).
    pub vec: u32,
    /// Accesses per thread: a CTA holds at most `threads * vec * chunks` columns.
    pub chunks: u32,
    /// CTAs per row: a cluster of this many CTAs shares one row, each holding a contiguous
    /// slice of it in registers, the statistics reduced through distributed shared memory
    /// (1: one CTA per row).
    pub cluster: u32,
    /// Whether the kernel assumes the column count is a multiple of `vec` (vector accesses).
    pub vector: bool,
    /// Rows wider than the registers hold: the CTA walks the row in tiles of
    /// `threads * vec * chunks` columns, a first pass for the statistics and a second that
    /// writes (the row comes back from L2 for it).
    pub looped: bool,
    /// What the kernel's accesses tell the caches ([`RowHints`]).
    pub hints: RowHints,
    /// A persistent grid (one CTA per row only): as many CTAs as the device holds at once,
    /// each taking rows `cta, cta + grid, ...` ([`KernelBuilder::persistent_for`]) instead of
    /// one CTA launched per row.
    pub persistent: bool,
    /// The norms' 16-bit rows kept in registers as loaded (two values a 32-bit register) and
    /// widened to f32 at each use, the weight and bias too, each 16-byte chunk of the output
    /// computed and stored in turn: about half the registers of an f32 copy of the row, so
    /// more CTAs share an SM (more bytes in flight). One CTA (or warp, warpgroup) a row in
    /// registers only; no effect on f32 rows or on softmax (its exponentials are f32).
    pub packed: bool,
    /// Threads per row: the whole CTA (`threads`), or a warp (32) or a warpgroup (128) each
    /// on a row of its own, the CTA taking `threads / row_threads` consecutive rows and each
    /// row's statistics reduced within its warp (shuffles only, no barrier) or warpgroup (a
    /// named barrier of 128 threads). One CTA a row only: not looped, clustered or persistent.
    pub row_threads: u32,
    /// At least this many CTAs an SM (`.minnctapersm`, PTX ISA 11.4.4, with `.maxntid` the
    /// thread count): ptxas keeps each thread within `65536 / (threads * min_ctas)` registers,
    /// so that many CTAs are resident, more rows in flight; 0 leaves ptxas free.
    pub min_ctas: u32,
}

/// The cache hints of a row kernel's accesses ([`Caching`]: `.L1::evict_*` and an L2 policy
/// from `createpolicy`, PTX ISA 9.7.9.8, 9.7.9.11, 9.7.9.18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RowHints {
    /// No hints.
    #[default]
    None,
    /// Data read again is kept (a looped pass before the last, the weight and bias every row
    /// reads: evict last), data read for the last time goes first (evict first); stores plain.
    Reuse,
    /// As [`RowHints::Reuse`], and the outputs are written evict-first too.
    ReuseStreamOut,
    /// As [`RowHints::ReuseStreamOut`], and data read for the last time is not allocated in
    /// L1 at all (`.L1::no_allocate`, PTX ISA 9.7.9.8): a streamed row leaves L1 to the weight
    /// and bias every row reads.
    NoAllocate,
}

/// What an access of a row kernel is, for its cache hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Row data a later pass reads again (from L2).
    Again,
    /// Row data read for the last time.
    Last,
    /// A per-column vector (weight, bias) every row reads.
    Shared,
    /// An output no pass reads again.
    Out,
}

impl RowHints {
    /// The hint of an access in `role`.
    fn caching(self, role: Role) -> Caching {
        match (self, role) {
            (RowHints::None, _) => Caching::NONE,
            (_, Role::Again | Role::Shared) => Caching::KEEP,
            (RowHints::NoAllocate, Role::Last) => Caching {
                l1: Some(ptx_isa::builder::Evict::NoAllocate),
                ..Caching::STREAM
            },
            (_, Role::Last) => Caching::STREAM,
            (RowHints::Reuse, Role::Out) => Caching::NONE,
            (RowHints::ReuseStreamOut | RowHints::NoAllocate, Role::Out) => Caching::STREAM,
        }
    }

    /// A letter for reports: `""`, `"h"`, `"H"`, `"n"`.
    fn tag(self) -> &'static str {
        match self {
            RowHints::None => "",
            RowHints::Reuse => "h",
            RowHints::ReuseStreamOut => "H",
            RowHints::NoAllocate => "n",
        }
    }
}

impl std::fmt::Display for RowConfig {
    /// `cluster x threads x values per thread`, after `P` when persistent and `L` when looped,
    /// then `h` (hints), `H` (hints, outputs streamed) or `n` (those and last reads past L1),
    /// then `p` when packed, `m` and the count with [`RowConfig::min_ctas`], then `/r` when
    /// each row has `r` of the CTA's threads: `1x256x32`, `L1x512x8h`, `P1x1024x8h`,
    /// `1x128x64p`, `1x256x32hm4`, `1x256x32/32` (a warp a row).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}{}x{}x{}{}{}",
            if self.persistent { "P" } else { "" },
            if self.looped { "L" } else { "" },
            self.cluster,
            self.threads,
            self.chunks * self.vec,
            self.hints.tag(),
            if self.packed { "p" } else { "" }
        )?;
        if self.min_ctas > 0 {
            write!(f, "m{}", self.min_ctas)?;
        }
        if self.row_threads != self.threads {
            write!(f, "/{}", self.row_threads)?;
        }
        Ok(())
    }
}

/// The most f32 values a thread of a `threads`-thread CTA keeps of its row: about a quarter of
/// the registers it may have (65536 per SM, PTX ISA 5.1 / the sm_90 limits) and never more
/// than 32, so the values, a norm's weight and bias and the addresses fit without spilling
/// and several CTAs share an SM.
fn values_budget(threads: u32) -> u32 {
    (65536 / threads / 4).min(32)
}

/// [`values_budget`] for rows of `dtype` in the vector or scalar form: the scalar form of
/// 16-bit rows loads each element under its own guard into its own 16-bit register, and half
/// the values fit (ptxas 13.0 spills 12 bytes for a bf16 softmax of 4097 columns at 256
/// threads x 24 values).
fn budget_for(dtype: ScalarType, threads: u32, vector: bool) -> u32 {
    if vector || dtype.bytes() != 2 {
        values_budget(threads)
    } else {
        values_budget(threads) / 2
    }
}

impl RowConfig {
    /// The columns of a row one pass over its threads' registers covers.
    pub fn tile(&self) -> u32 {
        self.row_threads * self.vec * self.chunks
    }

    /// The rows a CTA takes (1 unless each row has a warp or a warpgroup of its own).
    pub fn rows_per_cta(&self) -> u32 {
        self.threads / self.row_threads.max(1)
    }

    /// This configuration with `threads` threads, `row_threads` of them on each row, and
    /// `values` values a thread (a multiple of the access width): a warp (32) or warpgroup
    /// (128) a row, several rows a CTA.
    pub fn rows_of(self, threads: u32, row_threads: u32, values: u32) -> RowConfig {
        RowConfig {
            threads,
            row_threads,
            chunks: (values / self.vec).max(1),
            ..self
        }
    }

    /// The widest row this configuration takes: one tile per CTA of the cluster, or (looped)
    /// [`MAX_COLS`].
    pub fn max_cols(&self) -> u32 {
        if self.looped {
            MAX_COLS
        } else {
            self.tile() * self.cluster
        }
    }

    /// Every register-resident configuration for rows of up to `cols` columns of `dtype`
    /// (16-byte accesses): each CTA count per row (1, 2, 4 or 8: a portable cluster) and thread
    /// count (128 to 1024) whose share per thread stays within the register budget, fewest CTAs
    /// first, then fewest threads. Empty when the row is too long for any: use the looped form.
    pub fn candidates(dtype: ScalarType, cols: u32, vector: bool) -> Vec<RowConfig> {
        let vec = RowConfig::vec_for(dtype);
        let mut out = Vec::new();
        for cluster in [1u32, 2, 4, 8] {
            for threads in [128u32, 256, 512, 1024] {
                let chunks = cols.max(1).div_ceil(cluster * threads * vec);
                if chunks * vec <= budget_for(dtype, threads, vector) {
                    out.push(RowConfig {
                        threads,
                        vec,
                        chunks,
                        cluster,
                        vector,
                        looped: false,
                        hints: RowHints::None,
                        persistent: false,
                        row_threads: threads,
                        packed: false,
                        min_ctas: 0,
                    });
                }
            }
        }
        out
    }

    /// The configuration for rows of up to `cols` columns of `dtype`, from
    /// [`RowConfig::candidates`], as the H100's sweep of every candidate ranked them
    /// (`notes/rows-run7-h100-bench.log`, softmax and the norms at 1024 to 65536 columns):
    /// - one CTA per row where the registers hold the row, at 256 threads or the nearest count
    ///   to it whose threads all have columns (1024 f32 columns: 256 x 4; 1024 bf16: 128 x 8;
    ///   4096 f32: 256 x 16, within 0.5% of the best of every op, where the fewest threads,
    ///   128 x 32, lost up to 3.5%);
    /// - else, for 16-bit rows, the smallest cluster of 256-thread CTAs (8 x 256 at 65536 bf16
    ///   columns; 4 x 512 lost up to 36% there), and for f32 the fewest CTAs (4 x 512, up to 6%
    ///   ahead of 8 x 256); the scalar form of 16-bit rows, whose per-element guards spill at
    ///   256 threads, takes the fewest CTAs too;
    /// - else the looped form.
    pub fn for_cols(dtype: ScalarType, cols: u32, vector: bool) -> RowConfig {
        let all = RowConfig::candidates(dtype, cols, vector);
        let has_columns = |c: &RowConfig| c.threads * c.vec <= cols.max(c.vec);
        let one_cta = all.iter().filter(|c| c.cluster == 1);
        one_cta
            .clone()
            .filter(|c| has_columns(c))
            .min_by_key(|c| c.threads.abs_diff(256))
            .or_else(|| one_cta.clone().next())
            .or_else(|| {
                all.iter()
                    .find(|c| c.threads == 256 && vector && dtype.bytes() == 2)
            })
            .or_else(|| all.first())
            .copied()
            .unwrap_or_else(|| RowConfig::looped_for(dtype, vector))
    }

    /// The library's configuration of `op` for rows of up to `cols` columns of `dtype`:
    /// [`RowConfig::for_cols`], but where the H200's sweeps of every configuration ranked
    /// another first (fractions of the 1 GiB device copy unless GB/s are named). Session 5
    /// call 4 (`notes/session5-call4-h200-rows.log`, every configuration in
    /// `notes/session5-call4-h200-rows-sweep.log`) and session 6 calls 3, 5 and 8
    /// (`notes/session6-h200-rows-sweeps.log`, which also holds torch.compile's Triton launch
    /// shapes, the reason for the one-tile looped forms). The vector form only:
    /// - 4097 to 8192 columns, f32: softmax and RMSNorm looped at 512 threads of 8 values with
    ///   hints, outputs streamed (`L1x512x8H`: softmax 0.934 and 0.997 where `1x256x32`
    ///   reached 0.909 and 0.957; RMSNorm 0.927 and 0.989 against 0.921 and 0.957); residual
    ///   RMSNorm at 1024 threads of 8 (`1x1024x8`: 0.939 and 0.964 against 0.936 and 0.959);
    ///   LayerNorm looped in one 8192-column tile of 512 threads x 16 with hints, the second
    ///   pass reading the row again from L1/L2 (`L1x512x16h`: 3909 and 4229 GB/s against
    ///   `1x1024x8`'s 3873 and 4155);
    /// - 4097 to 8192 columns, bf16: RMSNorm in the same one-tile looped form (`L1x512x16h`:
    ///   3715 and 4147 GB/s against `1x512x16`'s 3545 and 4051); residual RMSNorm looped in one
    ///   tile of 1024 threads x 8 (`L1x1024x8`: 4027 and 4124 against `1x1024x8`'s 3894 and
    ///   4114); LayerNorm keeps `1x256x32` (0.835 and 0.944, first at both);
    /// - 2049 to 4096 columns, f32 (measured at 4096 x 4096): RMSNorm and LayerNorm looped in
    ///   one tile of 512 threads x 8 with hints (`L1x512x8h`: 3752 and 3682 GB/s against
    ///   `1x256x16`'s 3670 and 3635);
    /// - 513 to 1024 columns (measured at 32768 x 1024, two sweeps in one call), f32: softmax,
    ///   RMSNorm and LayerNorm a one-warp CTA a row, as torch.compile's Triton kernels run
    ///   (`1x32x32`: softmax 3985 and 3989 GB/s against `1x128x8`'s 3940 and 3949 and
    ///   `1x256x4`'s 3740, RMSNorm 3951 and 3944 against 3905 and 3927, LayerNorm 3882 and 3885
    ///   against 3857 and 3855 and `1x256x4`'s 3462); bf16: softmax the same (`1x32x32`: 3715
    ///   and 3725 against `1x128x32/32`'s 3647 and 3650), LayerNorm a warp a row, two rows a
    ///   CTA (`1x64x32/32`: 3588 and 3576 against `1x256x32/32`'s 3446 and 3464);
    /// - LayerNorm of 32769 to 65536 bf16 columns (measured at 2048 x 65536): looped at 1024
    ///   threads of 8 with hints (`L1x1024x8h`: 0.722 against 0.641 at the 8-CTA cluster
    ///   `8x256x32`).
    ///
    /// Softmax of bf16 rows of 4097 to 8192 columns kept its default (first at both shapes);
    /// f32 LayerNorm of 65536 columns too (`4x512x32`). The bench prints each case's default
    /// beside the sweep's best.
    pub fn for_op(op: RowOp, dtype: ScalarType, cols: u32, vector: bool) -> RowConfig {
        let base = RowConfig::for_cols(dtype, cols, vector);
        if !vector {
            return base;
        }
        let vec = base.vec;
        let f32_rows = dtype == ScalarType::F32;
        let bf16_rows = dtype == ScalarType::Bf16;
        // One CTA a row holding `values(threads)` values a thread of each row.
        let values = |row_threads: u32| cols.div_ceil(row_threads * vec) * vec;
        let one_cta = |threads: u32| base.rows_of(threads, threads, values(threads));
        let looped = |threads: u32, values: u32, hints: RowHints| {
            RowConfig::looped_with(dtype, vector, threads, values).with_hints(hints)
        };
        let wide = (4097..=8192).contains(&cols);
        let mid = (2049..=4096).contains(&cols);
        let short = (513..=1024).contains(&cols);
        match op {
            RowOp::Softmax | RowOp::RmsNorm { .. } if wide && f32_rows => {
                looped(512, 8, RowHints::ReuseStreamOut)
            }
            RowOp::RmsNorm { .. } if wide && bf16_rows => looped(512, 16, RowHints::Reuse),
            RowOp::LayerNorm { .. } if wide && f32_rows => looped(512, 16, RowHints::Reuse),
            RowOp::ResidualRmsNorm { .. } if wide && f32_rows => one_cta(1024),
            RowOp::ResidualRmsNorm { .. } if wide && bf16_rows => looped(1024, 8, RowHints::None),
            RowOp::RmsNorm { .. } | RowOp::LayerNorm { .. } if mid && f32_rows => {
                looped(512, 8, RowHints::Reuse)
            }
            RowOp::Softmax | RowOp::RmsNorm { .. } | RowOp::LayerNorm { .. }
                if short && f32_rows =>
            {
                one_cta(32)
            }
            RowOp::Softmax if short && bf16_rows => one_cta(32),
            RowOp::LayerNorm { .. } if short && bf16_rows => base.rows_of(64, 32, values(32)),
            RowOp::LayerNorm { .. } if bf16_rows && (32769..=65536).contains(&cols) => {
                looped(1024, 8, RowHints::Reuse)
            }
            _ => base,
        }
    }

    /// The configurations the bench times for `op`: [`RowConfig::for_op`] first, then the
    /// rest of [`RowConfig::sweep`].
    pub fn sweep_for(op: RowOp, dtype: ScalarType, cols: u32, vector: bool) -> Vec<RowConfig> {
        let default = RowConfig::for_op(op, dtype, cols, vector);
        let mut out = vec![default];
        out.extend(
            RowConfig::sweep(dtype, cols, vector)
                .into_iter()
                .filter(|c| *c != default),
        );
        out
    }

    /// Elements of `dtype` in one 16-byte access (4 f32, 8 f16 or bf16).
    pub fn vec_for(dtype: ScalarType) -> u32 {
        (16 / dtype.bytes().max(1)).clamp(1, 8)
    }

    /// The looped form for rows of `dtype`: 16 values a thread per tile, 512 threads (with a
    /// norm's weight and bias beside them that stays under the 128 registers a thread of a
    /// 512-thread CTA may have).
    pub fn looped_for(dtype: ScalarType, vector: bool) -> RowConfig {
        let vec = RowConfig::vec_for(dtype);
        RowConfig {
            threads: 512,
            vec,
            chunks: (16 / vec).max(1),
            cluster: 1,
            vector,
            looped: true,
            hints: RowHints::None,
            persistent: false,
            row_threads: 512,
            packed: false,
            min_ctas: 0,
        }
    }

    /// This configuration with `hints`.
    pub fn with_hints(self, hints: RowHints) -> RowConfig {
        RowConfig { hints, ..self }
    }

    /// This configuration with its 16-bit rows packed ([`RowConfig::packed`]).
    pub fn packed_form(self) -> RowConfig {
        RowConfig {
            packed: true,
            ..self
        }
    }

    /// This configuration with at least `n` CTAs an SM ([`RowConfig::min_ctas`]).
    pub fn with_min_ctas(self, n: u32) -> RowConfig {
        RowConfig {
            min_ctas: n,
            ..self
        }
    }

    /// This configuration on a persistent grid ([`RowConfig::persistent`]).
    pub fn on_persistent_grid(self) -> RowConfig {
        RowConfig {
            persistent: true,
            ..self
        }
    }

    /// The looped form with `threads` threads keeping `values` elements each per tile (a
    /// multiple of the 16-byte access width).
    pub fn looped_with(dtype: ScalarType, vector: bool, threads: u32, values: u32) -> RowConfig {
        let vec = RowConfig::vec_for(dtype);
        RowConfig {
            threads,
            row_threads: threads,
            chunks: (values / vec).max(1),
            ..RowConfig::looped_for(dtype, vector)
        }
    }

    /// The configurations worth timing for rows of `cols` columns of `dtype`, the default
    /// ([`RowConfig::for_cols`]) first: the default and each register-resident candidate of the
    /// smallest cluster that holds the row, without and with [`RowHints::Reuse`] (and, for one
    /// CTA a row, with [`RowHints::NoAllocate`] and with hints on a persistent grid), leaving
    /// out those with threads past the row's end; where one CTA holds the row, several rows a
    /// CTA of a warp each (128 or 256 threads) or a warpgroup each (256 or 512), without and
    /// with either hint, when their values fit
    /// the register budget; for 16-bit rows in the vector form where one CTA holds the row,
    /// the same forms packed ([`RowConfig::packed`], up to twice the values a thread at 256
    /// threads or fewer: 128 x 64 bf16) with [`RowHints::Reuse`], and with hints
    /// and a register bound for one more CTA an SM ([`RowConfig::min_ctas`]: 6 at 128, 5 at 256
    /// threads, 4 at 512), packed and not; and, for rows wider than a tile, the looped form at 256, 512 and
    /// 1024 threads of 8 values and 512 of 16, without and with [`RowHints::Reuse`] (the first
    /// pass's loads kept in L2 for the second; 8 values: also on a persistent grid; 512 x 8:
    /// also with [`RowHints::ReuseStreamOut`]).
    pub fn sweep(dtype: ScalarType, cols: u32, vector: bool) -> Vec<RowConfig> {
        let default = RowConfig::for_cols(dtype, cols, vector);
        let mut out = vec![default, default.with_hints(RowHints::Reuse)];
        let all = RowConfig::candidates(dtype, cols, vector);
        let smallest = all.first().map_or(1, |c| c.cluster);
        // (Not those with threads past the row's end: a 1024-column row at 1024 threads of 4.)
        let fits = |c: &RowConfig| c.row_threads * c.vec <= cols.max(c.vec);
        for c in all.into_iter().filter(|c| c.cluster == smallest && fits(c)) {
            out.push(c);
            out.push(c.with_hints(RowHints::Reuse));
            if c.cluster == 1 {
                out.push(c.with_hints(RowHints::NoAllocate));
                out.push(c.with_hints(RowHints::Reuse).on_persistent_grid());
            }
        }
        if smallest == 1 {
            // Several rows a CTA, a warp or a warpgroup each: no CTA-wide barrier (a warp's
            // shuffles, a warpgroup's named barrier), fewer CTAs for many short rows; and a
            // warp a row in CTAs of one or two warps (torch.compile's Triton kernels of 1024
            // columns run one 32-thread CTA a row: `notes/session6-h200-rows-sweeps.log`).
            for (row_threads, ctas) in [(32u32, &[32u32, 64, 128, 256][..]), (128, &[256, 512])] {
                let values = cols.max(1).div_ceil(row_threads * default.vec) * default.vec;
                for &threads in ctas {
                    let c = default.rows_of(threads, row_threads, values);
                    if values <= budget_for(dtype, threads, vector) && fits(&c) {
                        out.push(c);
                        out.push(c.with_hints(RowHints::Reuse));
                        out.push(c.with_hints(RowHints::NoAllocate));
                    }
                }
            }
        }
        if smallest == 1 && dtype.bytes() == 2 && vector {
            // The norms' 16-bit rows packed ([`RowConfig::packed`]): twice the values a thread
            // within the same registers, so 128 threads x 64 bf16 hold an 8192-column row and
            // more CTAs share an SM; one CTA a row at 128 to 1024 threads, and a warp or a
            // warpgroup a row.
            let vec = default.vec;
            let mut packed = Vec::new();
            for threads in [128u32, 256, 512, 1024] {
                packed.push(default.rows_of(threads, threads, cols.div_ceil(threads * vec) * vec));
            }
            for (row_threads, ctas) in [(32u32, [128u32, 256]), (128, [256, 512])] {
                let values = cols.div_ceil(row_threads * vec) * vec;
                for threads in ctas {
                    packed.push(default.rows_of(threads, row_threads, values));
                }
            }
            for c in packed {
                let c = c.packed_form();
                // Twice the budget up to 256 threads (ptxas 13.0: a LayerNorm of 128 x 64
                // bf16 takes 95 registers, no spill; 512 threads x 64 spill at 128).
                let budget =
                    budget_for(dtype, c.threads, vector) * if c.threads <= 256 { 2 } else { 1 };
                if c.vec * c.chunks <= budget && fits(&c) {
                    out.push(c.with_hints(RowHints::Reuse));
                }
            }
            // A register bound for one more CTA an SM than ptxas's own choice gives a
            // LayerNorm of 8192 bf16 columns (ptxas 13.0: 95 registers at 128 threads, 5 CTAs;
            // 59 at 256, 4; 40 at 512, 3), packed and not.
            for (threads, ctas) in [(128u32, 6u32), (256, 5), (512, 4)] {
                let values = cols.div_ceil(threads * vec) * vec;
                let c = default
                    .rows_of(threads, threads, values)
                    .with_hints(RowHints::Reuse)
                    .with_min_ctas(ctas);
                let budget =
                    budget_for(dtype, threads, vector) * if threads <= 256 { 2 } else { 1 };
                if values <= budget && fits(&c) {
                    out.push(c);
                    out.push(c.packed_form());
                }
            }
        }
        for (threads, values) in [(512u32, 8u32), (256, 8), (1024, 8), (512, 16)] {
            let l = RowConfig::looped_with(dtype, vector, threads, values);
            if l.tile() >= cols.max(1) {
                // One tile holds the row: the looped form's second pass reads the row again
                // (from L1 or L2) instead of keeping it in registers, as torch.compile's
                // Triton reductions of 4096 and 8192 columns do (one 8192-wide block of 512
                // threads, the first pass's loads evict-last, the second's evict-first:
                // `notes/session6-h200-rows-sweeps.log`). Only where the tile is at most
                // twice the row.
                if l.tile() < 2 * cols.max(1) {
                    out.push(l);
                    out.push(l.with_hints(RowHints::Reuse));
                }
                continue;
            }
            out.push(l);
            out.push(l.with_hints(RowHints::Reuse));
            if values == 8 {
                out.push(l.with_hints(RowHints::Reuse).on_persistent_grid());
            }
            if (threads, values) == (512, 8) {
                out.push(l.with_hints(RowHints::ReuseStreamOut));
            }
        }
        let mut seen = Vec::new();
        out.retain(|c| {
            let fresh = !seen.contains(c);
            seen.push(*c);
            fresh
        });
        out
    }
}

/// The widest row a looped row kernel takes (the 262144, with room).
pub const MAX_COLS: u32 = 1 << 20;

/// `v` as f32 (a `cvt` for 16-bit data; f32 registers as they are).
fn widen<T: Elem>(k: &mut KernelBuilder, v: &[Reg<T>]) -> Result<Vec<Reg<ty::F32>>> {
    v.iter()
        .map(|&r| match r.retype::<ty::F32>() {
            Ok(f) if T::TYPE == ScalarType::F32 => Ok(f),
            _ => {
                let f = k.reg::<ty::F32>();
                k.cvt(f, r)?;
                Ok(f)
            }
        })
        .collect()
}

/// f32 results as `T` (round to nearest even).
fn narrow<T: Elem>(k: &mut KernelBuilder, v: &[Reg<ty::F32>]) -> Result<Vec<Reg<T>>> {
    v.iter()
        .map(|&f| match f.retype::<T>() {
            Ok(r) if T::TYPE == ScalarType::F32 => Ok(r),
            _ => {
                let r = k.reg::<T>();
                k.cvt_mods(
                    ptx_isa::builder::CvtMods {
                        rounding: Some(ptx_isa::builder::CvtRounding::Rn),
                        ..Default::default()
                    },
                    r,
                    f,
                )?;
                Ok(r)
            }
        })
        .collect()
}

/// The row kernel's parts every op shares: the row index, the thread index and the columns of
/// each of the thread's accesses.
struct Rows {
    row: Var,
    cols: Var,
    starts: Vec<Expr>,
    cfg: RowConfig,
}

impl Rows {
    /// Thread `t`'s columns of the `cfg.tile()` columns from `first` on: `cfg.chunks` accesses of
    /// `cfg.vec` elements, consecutive threads on consecutive vectors.
    fn at(
        k: &mut KernelBuilder,
        row: Var,
        cols: Var,
        t: Var,
        first: impl Into<Expr>,
        cfg: RowConfig,
    ) -> Rows {
        let first = first.into();
        let starts = (0..cfg.chunks)
            .map(|j| k.simplify(&(first.clone() + (t + j * cfg.row_threads) * cfg.vec)))
            .collect();
        Rows {
            row,
            cols,
            starts,
            cfg,
        }
    }

    /// This thread's part of row `row` of `buf` as loaded (elements past the row read as
    /// `fill`), every access issued before any value is used.
    fn load_raw<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        fill: ptx_isa::Src<T>,
        role: Role,
    ) -> Result<Vec<Reg<T>>> {
        let caching = self.cfg.hints.caching(role);
        let mut out = Vec::new();
        for c in &self.starts {
            let v = k.load_n_with(
                buf,
                [self.row.into(), c.clone()],
                self.cfg.vec as usize,
                fill,
                caching,
            )?;
            out.extend(v);
        }
        Ok(out)
    }

    /// This thread's part of row `row` of `buf` (0 past the row's end), held as
    /// [`RowConfig::packed`] says.
    fn hold<T: Elem>(&self, k: &mut KernelBuilder, buf: &Buffer<T>, role: Role) -> Result<Held<T>> {
        if self.in_words::<T>() {
            let words = self.load_words(k, buf, self.cfg.hints.caching(role))?;
            return Ok(if self.cfg.packed {
                Held::Words(words)
            } else {
                Held::Wide(k.widen_bf16_words(&words, Widen::Permute)?)
            });
        }
        let raw = self.load_raw(k, buf, T::zero(), role)?;
        Held::of(k, raw, self.cfg.packed)
    }

    /// Whether this thread's accesses of `T` are kept as the loaded `.b32` words (bf16 rows in
    /// the vector form, 8 values an access): ptxas 13.0 gives each 16-bit register split out of
    /// a word a 32-bit register of its own, and widening the words themselves (a bf16 is the
    /// high half of its f32) frees them. A LayerNorm of 8192 bf16 columns at 256 threads x 32
    /// took 80 registers from split halves, 58 from words; at 128 x 64 packed, 156 and 95.
    fn in_words<T: Elem>(&self) -> bool {
        T::TYPE == ScalarType::Bf16 && self.cfg.vector && self.cfg.vec == 8
    }

    /// This thread's accesses of row `row` of `buf` (or, for a rank-1 `buf`, of its columns) as
    /// `.b32` words ([`KernelBuilder::load_words_with`]), 4 an access, 0 past the row's end.
    fn load_words<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        caching: Caching,
    ) -> Result<Vec<ptx_isa::Reg<ty::B32>>> {
        self.each_access(k, |k, j| self.words_of(k, buf, j, caching))
    }

    /// `one(k, j)` of each of this thread's accesses `j`, concatenated.
    fn each_access<R>(
        &self,
        k: &mut KernelBuilder,
        mut one: impl FnMut(&mut KernelBuilder, usize) -> Result<Vec<R>>,
    ) -> Result<Vec<R>> {
        let mut out = Vec::new();
        for j in 0..self.starts.len() {
            out.extend(one(k, j)?);
        }
        Ok(out)
    }

    /// Access `j`'s words of `buf` (row `row`, or the columns of a rank-1 `buf`).
    fn words_of<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        j: usize,
        caching: Caching,
    ) -> Result<Vec<ptx_isa::Reg<ty::B32>>> {
        let c = self.starts[j].clone();
        if buf.shape.len() == 1 {
            k.load_words_with(buf, [c], caching)
        } else {
            k.load_words_with(buf, [self.row.into(), c], caching)
        }
    }

    /// Loads this thread's part of row `row` of `buf` (elements past the row read as `fill`),
    /// widened to f32.
    fn load<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        fill: f32,
        role: Role,
    ) -> Result<Vec<Reg<ty::F32>>> {
        let fill_t = if T::TYPE == ScalarType::F32 {
            ptx_isa::Src::Imm(ptx_isa::Imm::f32(fill))
        } else {
            // The fill goes in after widening (an f32 immediate is not a 16-bit one).
            T::zero()
        };
        let mut out = Vec::new();
        for v in self
            .load_raw(k, buf, fill_t, role)?
            .chunks(self.cfg.vec as usize)
        {
            out.extend(widen(k, v)?);
        }
        if T::TYPE != ScalarType::F32 && fill != 0.0 {
            // Masked elements of 16-bit data: fill them now, in f32.
            for (i, c) in self.starts.iter().enumerate() {
                for j in 0..self.cfg.vec as usize {
                    let col = k.simplify(&(c.clone() + j as i64));
                    let inside = k.cmp(ptx_isa::builder::CmpOp::Lt, col, self.cols)?;
                    let r = out[i * self.cfg.vec as usize + j];
                    let kept = k.select(inside, r, fill)?;
                    k.mov(r, kept)?;
                }
            }
        }
        Ok(out)
    }

    /// `h * rs * w[c]` for this thread's columns (`wv`, from [`Rows::load_cols`]): RMSNorm's
    /// output before it is stored.
    fn rms_scaled(
        &self,
        k: &mut KernelBuilder,
        h: &[Reg<ty::F32>],
        rs: Reg<ty::F32>,
        wv: &[Reg<ty::F32>],
    ) -> Result<Vec<Reg<ty::F32>>> {
        h.iter()
            .zip(wv)
            .map(|(&a, &w)| {
                let n = k.mul_of(a, rs)?;
                k.mul_of(n, w)
            })
            .collect()
    }

    /// Whether each of this thread's columns lies inside the row: one test per access in the
    /// vector form (its start and the column count are multiples of its width, so it is wholly
    /// in or out), one per element in the scalar form.
    fn inside(&self, k: &mut KernelBuilder) -> Result<Vec<ptx_isa::Pred>> {
        let vec = self.cfg.vec as usize;
        let mut out = Vec::with_capacity(self.starts.len() * vec);
        for start in &self.starts {
            if self.cfg.vector {
                let p = k.cmp(ptx_isa::builder::CmpOp::Lt, start.clone(), self.cols)?;
                out.extend(std::iter::repeat_n(p, vec));
            } else {
                for j in 0..vec {
                    let c = k.simplify(&(start.clone() + j as i64));
                    out.push(k.cmp(ptx_isa::builder::CmpOp::Lt, c, self.cols)?);
                }
            }
        }
        Ok(out)
    }

    /// `v - mean` for this thread's columns, 0 past the row's end (so they add nothing to a sum).
    fn centred(
        &self,
        k: &mut KernelBuilder,
        v: &[Reg<ty::F32>],
        mean: impl Into<ptx_isa::Src<ty::F32>> + Copy,
    ) -> Result<Vec<Reg<ty::F32>>> {
        let inside = self.inside(k)?;
        v.iter()
            .zip(inside)
            .map(|(&a, p)| {
                let d = k.sub_of(a, mean)?;
                k.select(p, d, 0.0f32)
            })
            .collect()
    }

    /// Stores f32 values as `T` to this thread's part of row `row` of `buf`.
    fn store<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        v: &[Reg<ty::F32>],
        role: Role,
    ) -> Result<()> {
        let vec = self.cfg.vec as usize;
        self.store_chunks(k, buf, role, |_, j| Ok(v[j * vec..(j + 1) * vec].to_vec()))
    }

    /// Stores this thread's part of row `row` of `buf` one access at a time: `chunk(k, j)`
    /// writes the f32 values of access `j` (the code that computes them sits next to its
    /// store, so a packed row's values are widened where they are used).
    fn store_chunks<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        role: Role,
        mut chunk: impl FnMut(&mut KernelBuilder, usize) -> Result<Vec<Reg<ty::F32>>>,
    ) -> Result<()> {
        let caching = self.cfg.hints.caching(role);
        for (j, c) in self.starts.iter().enumerate() {
            let part = chunk(k, j)?;
            let out = narrow::<T>(k, &part)?;
            k.store_n_with(buf, [self.row.into(), c.clone()], &out, caching)?;
        }
        Ok(())
    }

    /// Stores values already of `T` (a packed residual) to this thread's part of row `row`.
    fn store_raw<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        buf: &Buffer<T>,
        v: &[Reg<T>],
        role: Role,
    ) -> Result<()> {
        let caching = self.cfg.hints.caching(role);
        for (c, part) in self.starts.iter().zip(v.chunks(self.cfg.vec as usize)) {
            k.store_n_with(buf, [self.row.into(), c.clone()], part, caching)?;
        }
        Ok(())
    }

    /// A per-column vector (a norm's weight or bias): this thread's columns of it, in f32.
    fn load_cols<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        w: &Buffer<T>,
    ) -> Result<Vec<Reg<ty::F32>>> {
        self.each_access(k, |k, j| self.col_chunk(k, w, j))
    }

    /// Access `j` of this thread's columns of a per-column vector (a norm's weight or bias), in
    /// f32: loaded where its output chunk is computed, so a thread holds one access of it at a
    /// time (every row reads it: it comes from L2 or L1), not the whole slice beside the row.
    fn col_chunk<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        w: &Buffer<T>,
        j: usize,
    ) -> Result<Vec<Reg<ty::F32>>> {
        let caching = self.cfg.hints.caching(Role::Shared);
        if self.in_words::<T>() {
            let words = self.words_of(k, w, j, caching)?;
            return k.widen_bf16_words(&words, Widen::Shift);
        }
        let v = k.load_n_with(
            w,
            [self.starts[j].clone()],
            self.cfg.vec as usize,
            T::zero(),
            caching,
        )?;
        widen(k, &v)
    }

    /// LayerNorm's output from the values `v`: `(v - mean) * rstd * w[c] + b[c]`, stored to `y`
    /// (columns past the row's end are not stored, so they need no mask here), one access at a
    /// time: the weight's and bias's access loaded, a packed row's values widened, next to the
    /// math and the store (ptxas 13.0, 8192 bf16 columns at 256 threads x 32: the whole weight
    /// and bias held beside the row took 96 registers, 3 CTAs an SM).
    #[allow(clippy::too_many_arguments)]
    fn layer_norm_out<T: Elem>(
        &self,
        k: &mut KernelBuilder,
        v: &Held<T>,
        mean: Reg<ty::F32>,
        rstd: Reg<ty::F32>,
        w: &Buffer<T>,
        b: &Buffer<T>,
        y: &Buffer<T>,
    ) -> Result<()> {
        let vec = self.cfg.vec as usize;
        self.store_chunks(k, y, Role::Out, |k, j| {
            let (w, b) = (self.col_chunk(k, w, j)?, self.col_chunk(k, b, j)?);
            let a = v.f32s_of(k, j * vec..(j + 1) * vec)?;
            a.iter()
                .zip(w.iter().zip(&b))
                .map(|(&a, (&w, &b))| {
                    let d = k.sub_of(a, mean)?;
                    let n = k.mul_of(d, rstd)?;
                    k.fma_of(n, w, b)
                })
                .collect()
        })
    }
}

/// A thread's values of a row (or of a weight): widened to f32 once, as loaded, or (packed)
/// kept as loaded, 16-bit values two a 32-bit register, and widened at each use.
enum Held<T: Elem> {
    /// f32 registers.
    Wide(Vec<Reg<ty::F32>>),
    /// The loaded registers.
    Packed(Vec<Reg<T>>),
    /// bf16 values as loaded, two a `.b32` word (low half first, [`Rows::in_words`]).
    Words(Vec<Reg<ty::B32>>),
}

impl<T: Elem> Held<T> {
    /// `raw` held packed or widened now.
    fn of(k: &mut KernelBuilder, raw: Vec<Reg<T>>, packed: bool) -> Result<Held<T>> {
        Ok(if packed {
            Held::Packed(raw)
        } else {
            Held::Wide(widen(k, &raw)?)
        })
    }

    /// Every value in f32 (packed: widened here, a fresh conversion at each call; words in the
    /// [`Widen::Permute`] form, for the statistics before the output's [`Held::f32s_of`]).
    fn f32s(&self, k: &mut KernelBuilder) -> Result<Vec<Reg<ty::F32>>> {
        match self {
            Held::Words(w) => k.widen_bf16_words(w, Widen::Permute),
            _ => self.f32s_of(k, 0..self.len()),
        }
    }

    /// Values `at` in f32 (words: in the [`Widen::Shift`] form; `at` of whole words).
    fn f32s_of(
        &self,
        k: &mut KernelBuilder,
        at: std::ops::Range<usize>,
    ) -> Result<Vec<Reg<ty::F32>>> {
        match self {
            Held::Wide(v) => Ok(v[at].to_vec()),
            Held::Packed(v) => widen(k, &v[at]),
            Held::Words(w) => {
                k.widen_bf16_words(&w[at.start / 2..at.end.div_ceil(2)], Widen::Shift)
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Held::Wide(v) => v.len(),
            Held::Packed(v) => v.len(),
            Held::Words(w) => w.len() * 2,
        }
    }
}

/// A built row kernel with the configuration it was built for.
#[derive(Debug)]
pub struct RowKernel {
    /// What it computes.
    pub op: RowOp,
    /// How it spreads a row.
    pub cfg: RowConfig,
    /// The kernel.
    pub built: BuiltKernel,
}

impl RowKernel {
    /// Builds `op` over `T` rows for `target`. Parameters, in order: `x[rows, cols]`, then
    /// `residual[rows, cols]` (residual RMSNorm), `w[cols]` (norms), `b[cols]` (LayerNorm),
    /// `y[rows, cols]`, then `mean[rows]` and `rstd[rows]` (LayerNorm, f32).
    pub fn build<T: Elem>(target: Target, op: RowOp, cfg: RowConfig) -> Result<RowKernel> {
        let name = format!(
            "{}_{}{}",
            op.name(),
            T::TYPE.to_string().trim_start_matches('.'),
            if cfg.vector { "_v" } else { "" }
        );
        let mut k = KernelBuilder::new(&name, target);
        if cfg.threads % 32 != 0 || cfg.threads == 0 || cfg.threads > 1024 || cfg.vec == 0 {
            return Err(k.error(format!("{cfg:?}: whole warps, at most 1024 threads")));
        }
        if cfg.persistent && cfg.cluster > 1 && !cfg.looped {
            return Err(k.error(format!("{cfg:?}: a persistent grid of one CTA per row")));
        }
        let grouped = cfg.row_threads != cfg.threads;
        if grouped
            && (!matches!(cfg.row_threads, 32 | 128)
                || cfg.threads % cfg.row_threads != 0
                || cfg.looped
                || cfg.cluster > 1
                || cfg.persistent)
        {
            return Err(k.error(format!(
                "{cfg:?}: rows of a warp (32) or a warpgroup (128) each, in a CTA of whole ones, \
                 one CTA for its rows (not looped, clustered or persistent)"
            )));
        }
        if cfg.packed && cfg.looped {
            return Err(k.error(format!(
                "{cfg:?}: packed rows are held in registers (not looped)"
            )));
        }
        let rows = k.symbol("rows")?;
        let mut facts = ExtentFacts::NONE
            .at_least(1)
            .at_most(u64::from(cfg.max_cols()));
        if cfg.vector {
            facts = facts.multiple_of(u64::from(cfg.vec));
        }
        let cols = k.symbol_with("cols", facts)?;
        let align = TensorOpts::default().align(16);
        let x = k.tensor::<T>("x", [rows, cols], align.clone())?;
        let res = match op {
            RowOp::ResidualRmsNorm { .. } => {
                Some(k.tensor::<T>("residual", [rows, cols], align.clone())?)
            }
            _ => None,
        };
        let w = match op {
            RowOp::RmsNorm { .. } | RowOp::ResidualRmsNorm { .. } | RowOp::LayerNorm { .. } => {
                Some(k.tensor::<T>("w", [cols], align.clone())?)
            }
            _ => None,
        };
        let b = match op {
            RowOp::LayerNorm { .. } => Some(k.tensor::<T>("b", [cols], align.clone())?),
            _ => None,
        };
        let y = k.tensor::<T>("y", [rows, cols], align)?;
        let stats = match op {
            RowOp::LayerNorm { .. } => Some((
                k.tensor::<ty::F32>("mean", [rows], TensorOpts::default())?,
                k.tensor::<ty::F32>("rstd", [rows], TensorOpts::default())?,
            )),
            _ => None,
        };
        // One CTA per row, or one cluster per row with each CTA on a slice of it.
        // One CTA per row, one cluster per row with each CTA on a slice of it, or (persistent)
        // rows handed out in a loop.
        let (row, slice) = if cfg.cluster > 1 && !cfg.looped {
            let [row] = k.cluster_id([rows])?;
            let [rank] = k.cta_id_in_cluster([cfg.cluster], None)?;
            (Some(row), Expr::from(rank) * cfg.tile())
        } else if cfg.persistent || grouped {
            (None, Expr::Const(0))
        } else {
            let [row] = k.cta_id([rows])?;
            (Some(row), Expr::Const(0))
        };
        let [t] = k.thread_id([cfg.threads])?;
        if cfg.min_ctas > 0 {
            k.min_blocks_per_sm(cfg.min_ctas)?;
        }
        if cfg.hints != RowHints::None {
            // One policy of each priority for the whole kernel, made before any loop.
            k.l2_policy(ptx_isa::builder::L2Evict::Last)?;
            k.l2_policy(ptx_isa::builder::L2Evict::First)?;
        }
        let io = RowIo {
            x: &x,
            res: res.as_ref(),
            w: w.as_ref(),
            b: b.as_ref(),
            y: &y,
            stats: stats.as_ref(),
        };
        let job = RowJob {
            op,
            cfg,
            cols,
            io: &io,
        };
        if cfg.cluster > 1 {
            // The start-up barrier of the cluster's shared-memory exchange overlaps the loads.
            k.cluster_arrive_early()?;
        }
        let one_row = |k: &mut KernelBuilder, row: Var| {
            if cfg.looped {
                looped(k, &job, row, t)
            } else {
                in_registers(k, &job, row, t, slice.clone())
            }
        };
        match row {
            Some(row) => one_row(&mut k, row)?,
            None if grouped => {
                // Row `cta * rows_per_cta + t / row_threads`, its thread `t % row_threads`; the
                // last CTA's rows past the end skip it whole (each a whole warp or warpgroup,
                // so its reduction's shuffles and barrier have every thread they name).
                let per = cfg.rows_per_cta();
                let [cta] = k.cta_id([Expr::ceil_div(rows, per)])?;
                let row = k.let_("row", cta * per + t / cfg.row_threads)?;
                let lane = k.let_("row_thread", t % cfg.row_threads)?;
                let real = k.cmp(ptx_isa::builder::CmpOp::Lt, row, rows)?;
                k.if_(real, |k| in_registers(k, &job, row, lane, slice.clone()))
                    .end()?;
            }
            // A persistent grid: each CTA takes rows `cta, cta + grid, ...`.
            None => k.persistent_for(rows, None, one_row)?,
        }
        Ok(RowKernel {
            op,
            cfg,
            built: k.finish()?,
        })
    }
}

/// One row in registers (one read, one write): this thread's columns of it from `slice` on
/// (the cluster's CTA's part), the statistics reduced over the CTA (or the cluster).
fn in_registers<T: Elem>(
    k: &mut KernelBuilder,
    job: &RowJob<'_, T>,
    row: Var,
    t: Var,
    slice: Expr,
) -> Result<()> {
    let (op, cfg, cols, io) = job.parts();
    let r = Rows::at(k, row, cols, t, slice.clone(), cfg);
    let cta = match (cfg.cluster, cfg.row_threads) {
        (2.., _) => ReduceScope::Cluster,
        (_, 32) => ReduceScope::Warp,
        (_, 128) if cfg.threads > 128 => ReduceScope::Warpgroup,
        _ => ReduceScope::Cta,
    };
    match op {
        RowOp::Softmax | RowOp::LogSoftmax => {
            let mut v = r.load(k, io.x, f32::NEG_INFINITY, Role::Last)?;
            let max = k.reduce(ReduceOp::Max, &v, cta)?;
            let bias = k.mul_of(max, -LOG2_E)?;
            let e = v
                .iter()
                .map(|&x| k.exp2_fma(x, LOG2_E, bias))
                .collect::<Result<Vec<_>>>()?;
            let sum = k.reduce(ReduceOp::Sum, &e, cta)?;
            if op == RowOp::Softmax {
                let inv = k.rcp_of(sum)?;
                v = e.iter().map(|&e| k.mul_of(e, inv)).collect::<Result<_>>()?;
            } else {
                // x - (max + ln(sum))
                let ln = k.log(sum)?;
                let shift = k.add_of(max, ln)?;
                v = v
                    .iter()
                    .map(|&x| k.sub_of(x, shift))
                    .collect::<Result<_>>()?;
            }
            r.store(k, io.y, &v, Role::Out)?;
        }
        RowOp::RmsNorm { eps } | RowOp::ResidualRmsNorm { eps } => {
            let Some(w) = io.w else {
                return Err(k.error("a norm without its weight (internal)"));
            };
            let x = r.hold(k, io.x, Role::Last)?;
            let h = match io.res {
                None => x,
                Some(res) => {
                    let rv = r.hold(k, res, Role::Last)?;
                    let (a, b) = (x.f32s(k)?, rv.f32s(k)?);
                    let sum = a
                        .iter()
                        .zip(&b)
                        .map(|(&a, &b)| k.add_of(a, b))
                        .collect::<Result<Vec<_>>>()?;
                    if cfg.packed {
                        // The sum rounded to `T` is what the residual keeps, and what is
                        // normalised.
                        let kept = narrow::<T>(k, &sum)?;
                        r.store_raw(k, res, &kept, Role::Out)?;
                        Held::Packed(kept)
                    } else {
                        r.store(k, res, &sum, Role::Out)?;
                        Held::Wide(sum)
                    }
                }
            };
            let sq = h
                .f32s(k)?
                .iter()
                .map(|&a| k.mul_of(a, a))
                .collect::<Result<Vec<_>>>()?;
            let ss = k.reduce(ReduceOp::Sum, &sq, cta)?;
            let inv_n = inv_count(k, cols)?;
            let ms = k.fma_of(ss, inv_n, eps)?;
            let rs = k.rsqrt_of(ms)?;
            // The weight is loaded here, after the reduction, an access at a time beside its
            // output: loading it with the row (to hide its latency behind the barrier) measured
            // no faster on an H100 and costs registers, which in a cluster's CTAs costs
            // occupancy (up to 25% slower).
            let vec = cfg.vec as usize;
            r.store_chunks(k, io.y, Role::Out, |k, j| {
                let (a, w) = (h.f32s_of(k, j * vec..(j + 1) * vec)?, r.col_chunk(k, w, j)?);
                r.rms_scaled(k, &a, rs, &w)
            })?;
        }
        RowOp::LayerNorm { eps } => {
            let (Some(w), Some(b)) = (io.w, io.b) else {
                return Err(k.error("a layer norm without its weight and bias (internal)"));
            };
            let held = r.hold(k, io.x, Role::Last)?;
            // The statistics widen packed words as the output does (one form, which ptxas
            // takes once and keeps: 95 registers at 128 threads x 64 bf16 where two forms took
            // 119), unlike RMSNorm's, whose single use of each value after its one sum gains
            // from two.
            let v = held.f32s_of(k, 0..held.len())?;
            let inv_n = inv_count(k, cols)?;
            let (mean, ss) = if cfg.cluster == 1 {
                // Both statistics in one barrier round: each thread's mean and squared
                // deviations, merged over the CTA (stable: deviations from each level's mean).
                let inside = r.inside(k)?;
                let m = k.reduce_moments(&v, &inside, cta)?;
                (m.mean, m.m2)
            } else {
                // A cluster exchanges one word a round: the mean, then the squared deviations
                // of the centred values, the columns past the row masked out of the sum.
                let s = k.reduce(ReduceOp::Sum, &v, cta)?;
                let mean = k.mul_of(s, inv_n)?;
                let d = r.centred(k, &v, mean)?;
                let sq = d
                    .iter()
                    .map(|&a| k.mul_of(a, a))
                    .collect::<Result<Vec<_>>>()?;
                (mean, k.reduce(ReduceOp::Sum, &sq, cta)?)
            };
            let var = k.fma_of(ss, inv_n, eps)?;
            let rstd = k.rsqrt_of(var)?;
            r.layer_norm_out(k, &held, mean, rstd, w, b, io.y)?;
            // Thread 0 of the row's first CTA writes the statistics.
            store_stats(k, io, row, slice.clone() + t, mean, rstd)?;
        }
    }
    Ok(())
}

/// LayerNorm's statistics of `row`, written by the thread whose `lead` is 0 (the row's first).
fn store_stats<T: Elem>(
    k: &mut KernelBuilder,
    io: &RowIo<'_, T>,
    row: Var,
    lead: Expr,
    mean: Reg<ty::F32>,
    rstd: Reg<ty::F32>,
) -> Result<()> {
    let Some((m, rs)) = io.stats else {
        return Ok(());
    };
    let first = k.cmp(ptx_isa::builder::CmpOp::Eq, lead, 0)?;
    k.if_(first, |k| {
        k.store(m, [row], mean)?;
        k.store(rs, [row], rstd)
    })
    .end()
}

/// A row kernel's work, the same for every row: what to compute, how a row is spread, the
/// column count, and the kernel's tensors.
struct RowJob<'a, T: Elem> {
    op: RowOp,
    cfg: RowConfig,
    cols: Var,
    io: &'a RowIo<'a, T>,
}

impl<'a, T: Elem> RowJob<'a, T> {
    /// Its parts: op, configuration, column count, tensors.
    fn parts(&self) -> (RowOp, RowConfig, Var, &'a RowIo<'a, T>) {
        (self.op, self.cfg, self.cols, self.io)
    }
}

/// A row kernel's tensors.
struct RowIo<'a, T: Elem> {
    x: &'a Buffer<T>,
    res: Option<&'a Buffer<T>>,
    w: Option<&'a Buffer<T>>,
    b: Option<&'a Buffer<T>>,
    y: &'a Buffer<T>,
    stats: Option<&'a (Buffer<ty::F32>, Buffer<ty::F32>)>,
}

/// Runs `body` once per tile of the row, with the tile's [`Rows`] (its columns start at
/// `tile * i`).
fn each_tile(
    k: &mut KernelBuilder,
    cfg: RowConfig,
    row: Var,
    cols: Var,
    t: Var,
    mut body: impl FnMut(&mut KernelBuilder, &Rows) -> Result<()>,
) -> Result<()> {
    let tiles = Expr::ceil_div(cols, cfg.tile());
    k.for_range(0, tiles, |k, i| {
        let r = Rows::at(k, row, cols, t, i * cfg.tile(), cfg);
        body(k, &r)
    })
}

/// A mutable f32 scalar starting at `init` (`mov` into it to change it).
fn acc(k: &mut KernelBuilder, init: f32) -> Result<Reg<ty::F32>> {
    let r = k.reg::<ty::F32>();
    k.mov(r, ptx_isa::Src::Imm(ptx_isa::Imm::f32(init)))?;
    Ok(r)
}

/// `p ? 0 : x`, for a maximum that is still `-inf` (no element seen): `x - max` would be NaN.
fn finite_or_zero(k: &mut KernelBuilder, m: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
    let p = k.pred();
    k.setp::<ty::F32>(ptx_isa::builder::CmpOp::Eq, p, m, f32::NEG_INFINITY)?;
    k.select(p, 0.0f32, m)
}

/// The long-row form: statistics in a first pass over the row's tiles (online softmax: a running
/// maximum and a sum rescaled when it grows; LayerNorm: a running count, mean and squared
/// deviation merged tile by tile), reduced over the CTA, then a pass that writes.
fn looped<T: Elem>(k: &mut KernelBuilder, job: &RowJob<'_, T>, row: Var, t: Var) -> Result<()> {
    let (op, cfg, cols, io) = job.parts();
    let cta = ReduceScope::Cta;
    match op {
        RowOp::Softmax | RowOp::LogSoftmax => {
            let (m, s) = (acc(k, f32::NEG_INFINITY)?, acc(k, 0.0)?);
            each_tile(k, cfg, row, cols, t, |k, r| {
                let v = r.load(k, io.x, f32::NEG_INFINITY, Role::Again)?;
                let tm = k.reduce(ReduceOp::Max, &v, ReduceScope::Thread)?;
                let m2 = k.max_of(m, tm)?;
                let safe = finite_or_zero(k, m2)?;
                let bias = k.mul_of(safe, -LOG2_E)?;
                // s = s * 2^((m - m2) log2 e) + sum 2^((v - m2) log2 e)
                let scale = k.exp2_fma(m, LOG2_E, bias)?;
                let e = v
                    .iter()
                    .map(|&x| k.exp2_fma(x, LOG2_E, bias))
                    .collect::<Result<Vec<_>>>()?;
                let ts = k.reduce(ReduceOp::Sum, &e, ReduceScope::Thread)?;
                let s2 = k.fma_of(s, scale, ts)?;
                k.mov(s, s2)?;
                k.mov(m, m2)?;
                Ok(())
            })?;
            let max = k.reduce(ReduceOp::Max, &[m], cta)?;
            let bias = k.mul_of(max, -LOG2_E)?;
            let mine = k.exp2_fma(m, LOG2_E, bias)?;
            let scaled = k.mul_of(s, mine)?;
            let sum = k.reduce(ReduceOp::Sum, &[scaled], cta)?;
            let inv = k.rcp_of(sum)?;
            let ln = k.log(sum)?;
            let shift = k.add_of(max, ln)?;
            each_tile(k, cfg, row, cols, t, |k, r| {
                let v = r.load(k, io.x, 0.0, Role::Last)?;
                let out = v
                    .iter()
                    .map(|&x| {
                        if op == RowOp::Softmax {
                            let e = k.exp2_fma(x, LOG2_E, bias)?;
                            k.mul_of(e, inv)
                        } else {
                            k.sub_of(x, shift)
                        }
                    })
                    .collect::<Result<Vec<_>>>()?;
                r.store(k, io.y, &out, Role::Out)
            })
        }
        RowOp::RmsNorm { eps } | RowOp::ResidualRmsNorm { eps } => {
            let ss = acc(k, 0.0)?;
            let src = io.res.unwrap_or(io.x);
            each_tile(k, cfg, row, cols, t, |k, r| {
                // With a residual, the second pass reads the sum back from it, not `x`.
                let x_role = if io.res.is_some() {
                    Role::Last
                } else {
                    Role::Again
                };
                let mut h = r.load(k, io.x, 0.0, x_role)?;
                if let Some(res) = io.res {
                    let rv = r.load(k, res, 0.0, Role::Last)?;
                    h = h
                        .iter()
                        .zip(&rv)
                        .map(|(&a, &b)| k.add_of(a, b))
                        .collect::<Result<_>>()?;
                    r.store(k, res, &h, Role::Again)?;
                }
                for &a in &h {
                    k.fma(ss, a, a, ss)?;
                }
                Ok(())
            })?;
            let total = k.reduce(ReduceOp::Sum, &[ss], cta)?;
            let inv_n = inv_count(k, cols)?;
            let ms = k.fma_of(total, inv_n, eps)?;
            let rs = k.rsqrt_of(ms)?;
            let Some(w) = io.w else {
                return Err(k.error("a norm without its weight (internal)"));
            };
            each_tile(k, cfg, row, cols, t, |k, r| {
                // The residual's new values were written by this thread in the first pass.
                let h = r.load(k, src, 0.0, Role::Last)?;
                let wv = r.load_cols(k, w)?;
                let out = r.rms_scaled(k, &h, rs, &wv)?;
                r.store(k, io.y, &out, Role::Out)
            })
        }
        RowOp::LayerNorm { eps } => {
            let (Some(w), Some(b)) = (io.w, io.b) else {
                return Err(k.error("a layer norm without its weight and bias (internal)"));
            };
            // One pass for both statistics: each thread keeps the count, mean and sum of
            // squared deviations of the columns it has seen, and merges each tile's own (its
            // mean, and its values' squared deviations from it) into them with Chan et al.'s
            // pairwise update: as stable as centring the whole row, with one read of it.
            let (n, m, m2) = (acc(k, 0.0)?, acc(k, 0.0)?, acc(k, 0.0)?);
            let running = crate::kernel::Moments {
                count: n,
                mean: m,
                m2,
            };
            each_tile(k, cfg, row, cols, t, |k, r| {
                let v = r.load(k, io.x, 0.0, Role::Again)?;
                let inside = r.inside(k)?;
                let tile = k.reduce_moments(&v, &inside, ReduceScope::Thread)?;
                let next = k.combine_moments(running, tile)?;
                k.mov(n, next.count)?;
                k.mov(m, next.mean)?;
                k.mov(m2, next.m2)?;
                Ok(())
            })?;
            // The threads' count, mean and squared deviations merged over the CTA in one
            // barrier round.
            let inv_n = inv_count(k, cols)?;
            let row_m = k.merge_moments(running, cta)?;
            let mean = row_m.mean;
            let var = k.fma_of(row_m.m2, inv_n, eps)?;
            let rstd = k.rsqrt_of(var)?;
            each_tile(k, cfg, row, cols, t, |k, r| {
                let v = Held::Wide(r.load(k, io.x, 0.0, Role::Last)?);
                r.layer_norm_out(k, &v, mean, rstd, w, b, io.y)
            })?;
            store_stats(k, io, row, t.into(), mean, rstd)
        }
    }
}

/// `1 / cols` in f32.
fn inv_count(k: &mut KernelBuilder, cols: Var) -> Result<Reg<ty::F32>> {
    let n = k.eval(cols)?;
    let f = k.reg::<ty::F32>();
    k.cvt_mods(
        ptx_isa::builder::CvtMods {
            rounding: Some(ptx_isa::builder::CvtRounding::Rn),
            ..Default::default()
        },
        f,
        n,
    )?;
    k.rcp_of(f)
}

/// A SwiGLU kernel's common start: its builder (named `stem_dtype[_v]`), the 16-byte access
/// width, and the facts of its innermost extent (a multiple of the width in the vector form).
fn swiglu_start<T: Elem>(
    target: Target,
    stem: &str,
    vector: bool,
) -> (KernelBuilder, u32, ExtentFacts) {
    let vec = RowConfig::vec_for(T::TYPE);
    let name = format!(
        "{stem}_{}{}",
        T::TYPE.to_string().trim_start_matches('.'),
        if vector { "_v" } else { "" }
    );
    let facts = if vector {
        ExtentFacts::NONE.multiple_of(u64::from(vec))
    } else {
        ExtentFacts::NONE
    };
    (KernelBuilder::new(&name, target), vec, facts)
}

/// `silu(g) * u` of `T` registers, in f32, back as `T`.
fn silu_mul<T: Elem>(k: &mut KernelBuilder, g: &[Reg<T>], u: &[Reg<T>]) -> Result<Vec<Reg<T>>> {
    let (g, u) = (widen(k, g)?, widen(k, u)?);
    let out = g
        .iter()
        .zip(&u)
        .map(|(&g, &u)| {
            let s = k.silu(g)?;
            k.mul_of(s, u)
        })
        .collect::<Result<Vec<_>>>()?;
    narrow::<T>(k, &out)
}

/// Threads per CTA of the SwiGLU kernels.
const SWIGLU_THREADS: u32 = 256;

/// How the flat SwiGLU kernel ([`build_swiglu_with`]) spreads its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SwigluConfig {
    /// Threads per CTA (a multiple of 32, at most 1024).
    pub threads: u32,
    /// 16-byte accesses per thread and tensor, all loaded before any is stored.
    pub vectors: u32,
    /// Every access streamed ([`Caching::STREAM`]: each element is read or written once).
    pub hints: bool,
}

impl Default for SwigluConfig {
    fn default() -> SwigluConfig {
        SwigluConfig {
            threads: SWIGLU_THREADS,
            vectors: 1,
            hints: false,
        }
    }
}

impl std::fmt::Display for SwigluConfig {
    /// `threads x vectors`, then `h` when streamed: `256x1`, `512x2h`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = if self.hints { "h" } else { "" };
        write!(f, "{}x{}{h}", self.threads, self.vectors)
    }
}

impl SwigluConfig {
    /// The configurations worth timing, the default first: 1, 2 or 4 accesses a thread at
    /// 128 to 512 threads, with and without streaming hints (128 x 1 is torch.compile's
    /// Triton launch shape: `notes/session6-h200-rows-sweeps.log`).
    pub fn sweep() -> Vec<SwigluConfig> {
        let c = |threads, vectors, hints| SwigluConfig {
            threads,
            vectors,
            hints,
        };
        vec![
            SwigluConfig::default(),
            c(256, 1, true),
            c(256, 2, false),
            c(256, 2, true),
            c(256, 4, true),
            c(512, 2, true),
            c(128, 4, true),
            c(128, 1, false),
            c(128, 2, false),
        ]
    }
}

/// `y = silu(g) * u` element by element over `n` elements (`g` and `u` separate tensors), one
/// 16-byte access per thread and tensor when `n` is a multiple of the width.
pub fn build_swiglu<T: Elem>(target: Target, vector: bool) -> Result<BuiltKernel> {
    build_swiglu_with::<T>(target, vector, SwigluConfig::default())
}

/// [`build_swiglu`] spread as `cfg` says: each thread takes `cfg.vectors` accesses per tensor,
/// a CTA's threads side by side on consecutive vectors within each.
pub fn build_swiglu_with<T: Elem>(
    target: Target,
    vector: bool,
    cfg: SwigluConfig,
) -> Result<BuiltKernel> {
    let (mut k, vec, facts) = swiglu_start::<T>(target, "swiglu", vector);
    if cfg.threads % 32 != 0 || cfg.threads == 0 || cfg.threads > 1024 || cfg.vectors == 0 {
        return Err(k.error(format!("{cfg:?}: whole warps, at most 1024 threads")));
    }
    let n = k.symbol_with("n", facts)?;
    let align = TensorOpts::default().align(16);
    let g = k.tensor::<T>("g", [n], align.clone())?;
    let u = k.tensor::<T>("u", [n], align.clone())?;
    let y = k.tensor::<T>("y", [n], align)?;
    let per_cta = cfg.threads * vec * cfg.vectors;
    let [bx] = k.cta_id([Expr::ceil_div(n, per_cta)])?;
    let [t] = k.thread_id([cfg.threads])?;
    let caching = if cfg.hints {
        Caching::STREAM
    } else {
        Caching::NONE
    };
    let at: Vec<Expr> = (0..cfg.vectors)
        .map(|j| k.simplify(&((bx * cfg.vectors + j) * (cfg.threads * vec) + t * vec)))
        .collect();
    // Every load before the first store: `y` may alias `g` or `u`, so a load after a store
    // could not be moved above it.
    let mut loaded = Vec::new();
    for i in &at {
        let gv = k.load_n_with(&g, [i.clone()], vec as usize, T::zero(), caching)?;
        let uv = k.load_n_with(&u, [i.clone()], vec as usize, T::zero(), caching)?;
        loaded.push((gv, uv));
    }
    for (i, (gv, uv)) in at.into_iter().zip(loaded) {
        let out = silu_mul(&mut k, &gv, &uv)?;
        k.store_n_with(&y, [i], &out, caching)?;
    }
    k.finish()
}

/// `y[r, c] = silu(x[r, 0, c]) * x[r, 1, c]`: gate and up as the two halves of one tensor of
/// shape `[rows, 2, cols]` (a `[rows, 2 * cols]` projection output viewed with its halves as an
/// axis), `y` of shape `[rows, cols]`. 16-byte accesses when `cols` is a multiple of the width.
pub fn build_swiglu_halves<T: Elem>(target: Target, vector: bool) -> Result<BuiltKernel> {
    let (mut k, vec, facts) = swiglu_start::<T>(target, "swiglu_halves", vector);
    let rows = k.symbol("rows")?;
    let cols = k.symbol_with("cols", facts)?;
    let align = TensorOpts::default().align(16);
    let x = k.tensor::<T>(
        "x",
        [rows.into(), Expr::from(2), cols.into()],
        align.clone(),
    )?;
    let y = k.tensor::<T>("y", [rows, cols], align)?;
    let [bx, row] = k.cta_id([Expr::ceil_div(cols, SWIGLU_THREADS * vec), rows.into()])?;
    let [t] = k.thread_id([SWIGLU_THREADS])?;
    let c = k.simplify(&((bx * SWIGLU_THREADS + t) * vec));
    // Gate, then up: the same columns of half 0 and half 1.
    let mut half = |h: u32| {
        k.load_n(
            &x,
            [row.into(), h.into(), c.clone()],
            vec as usize,
            T::zero(),
        )
    };
    let (g, u) = (half(0)?, half(1)?);
    let out = silu_mul(&mut k, &g, &u)?;
    k.store_n(&y, [row.into(), c], &out)?;
    k.finish()
}

/// The host reference of `op` on one row (and its residual, weight, bias): the outputs, the
/// new residual, and the LayerNorm statistics.
pub fn reference(
    op: RowOp,
    x: &[f32],
    res: &[f32],
    w: &[f32],
    b: &[f32],
) -> (Vec<f64>, Vec<f64>, (f64, f64)) {
    let x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let n = x.len() as f64;
    match op {
        RowOp::Softmax | RowOp::LogSoftmax => {
            let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
            let y = x
                .iter()
                .map(|v| {
                    if op == RowOp::Softmax {
                        (v - m).exp() / s
                    } else {
                        v - m - s.ln()
                    }
                })
                .collect();
            (y, Vec::new(), (0.0, 0.0))
        }
        RowOp::RmsNorm { eps } | RowOp::ResidualRmsNorm { eps } => {
            let h: Vec<f64> = if res.is_empty() {
                x
            } else {
                x.iter().zip(res).map(|(a, &r)| a + f64::from(r)).collect()
            };
            let ms = h.iter().map(|v| v * v).sum::<f64>() / n;
            let r = 1.0 / (ms + f64::from(eps)).sqrt();
            let y = h
                .iter()
                .zip(w)
                .map(|(v, &w)| v * r * f64::from(w))
                .collect();
            (y, if res.is_empty() { Vec::new() } else { h }, (0.0, 0.0))
        }
        RowOp::LayerNorm { eps } => {
            let mean = x.iter().sum::<f64>() / n;
            let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            let rstd = 1.0 / (var + f64::from(eps)).sqrt();
            let y = x
                .iter()
                .zip(w.iter().zip(b))
                .map(|(v, (&w, &b))| (v - mean) * rstd * f64::from(w) + f64::from(b))
                .collect();
            (y, Vec::new(), (mean, rstd))
        }
    }
}

/// The host reference of SwiGLU: `silu(g) * u` per element, in f64.
pub fn swiglu_reference(g: &[f32], u: &[f32]) -> Vec<f64> {
    g.iter()
        .zip(u)
        .map(|(&g, &u)| {
            let g = f64::from(g);
            g / (1.0 + (-g).exp()) * f64::from(u)
        })
        .collect()
}
