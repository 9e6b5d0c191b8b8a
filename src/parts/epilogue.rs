//! Epilogues users compose: a list of operations over an accumulator fragment (a warpgroup's
//! block of f32 accumulators), each value with its element `(row, col)` at hand, lowered to
//! tile ops and register math before the output is cast and stored.
//!
//! | op | each value `v` at `(row, col)` becomes |
//! | --- | --- |
//! | [`Epilogue::scale`] | `alpha · v` |
//! | [`Epilogue::cols`], [`Epilogue::rows`] | `v + x[col]` or `v · x[col]` (a bias, a scale; `x[row]` per row) |
//! | [`Epilogue::activation`] | ReLU, GELU (tanh or erf), SiLU of `v` |
//! | [`Epilogue::linear`] | `alpha · v + beta · C[row, col]` (C read at the edges with bounds) |
//! | [`Epilogue::residual`] | `v + R[row, col]` (`R` in global memory, or staged: loaded by TMA into shared memory while the main loop runs) |
//! | [`Epilogue::map`] | anything: a closure given `v` and its `(row, col)` |
//! | [`Epilogue::store`] | `v` unchanged; its value here also stored to a second tensor |
//! | [`Epilogue::accumulate`] (last) | `v` unchanged; the output's store adds it to what C holds: `C = C + v` in L2 |
//!
//! Ops that read or write a `[m, n]` tensor run inside the kernel's whole-tile / edge-tile branch
//! (no bounds on whole tiles); the ops before the first of them run once, before the branch (but
//! a GELU (tanh) right before a residual, which goes with it).
//! A GEMM takes one with `HopperGemm::with_epilogue` (`library::gemm`); its own fusions (FP8
//! scales, bias, output scale, `alpha`/`beta`) are ops of the same list.
//!
//! Neighbouring ops fold into fewer instructions a value, with the same bits: a scale and a column
//! vector added into one `fma`; a vector added, then GELU (tanh), into the GELU's half
//! (`fma(v, 0.5, x/2)`, [`KernelBuilder::gelu_tanh_of_half`]); GELU (tanh), then a residual, into
//! the residual's `fma(y, 0.5, r)` ([`KernelBuilder::gelu_tanh_doubled`]).
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{KernelBuilder, TensorOpts};
//! use ptxkit::parts::{Activation, Combine, Epilogue};
//!
//! let mut k = KernelBuilder::new("e", Target::Sm90a);
//! let n = k.symbol("n")?;
//! let bias = k.tensor::<ty::Bf16>("bias", [n], TensorOpts::default())?;
//! let epi = Epilogue::new()
//!     .cols(&bias, Combine::Add)
//!     .activation(Activation::GeluTanh)
//!     .map(|k, v, _at| k.mul_of(v, 2.0f32));
//! assert_eq!(epi.ops().len(), 3);
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use std::fmt;
use std::rc::Rc;

use layouts::fragment::TvLayout;
use ptx_isa::builder::CmpOp;
use ptx_isa::{Reg, RegRef, ScalarType, Src, ty};

use crate::kernel::math::Widen;
use crate::kernel::{Buffer, Expr, KernelBuilder, KernelError, Result, TmaTensor, Var};
use crate::tile::{Elementwise, ExecScope, Storage, TileRef};

/// A tensor an epilogue reads or writes: bf16, f16 or f32 in global memory, or a bf16 or f16
/// TMA tensor whose blocks the kernel loads into shared memory for the epilogue (a staged
/// `[m, n]` input: the GEMM's `HopperGemm::staged_input`), read there by the ops that read a
/// tensor (`linear`, `residual`).
#[derive(Debug, Clone)]
pub enum EpilogueTensor {
    /// bf16 elements.
    Bf16(Buffer<ty::Bf16>),
    /// f16 elements.
    F16(Buffer<ty::F16>),
    /// f32 elements.
    F32(Buffer<ty::F32>),
    /// A staged bf16 tensor.
    StagedBf16(TmaTensor<ty::Bf16>),
    /// A staged f16 tensor.
    StagedF16(TmaTensor<ty::F16>),
}

macro_rules! tensor_from {
    ($($t:ident => $v:ident),*) => {$(
        impl From<&Buffer<ty::$t>> for EpilogueTensor {
            fn from(b: &Buffer<ty::$t>) -> EpilogueTensor {
                EpilogueTensor::$v(b.clone())
            }
        }
    )*};
}
tensor_from!(Bf16 => Bf16, F16 => F16, F32 => F32);

impl From<&TmaTensor<ty::Bf16>> for EpilogueTensor {
    fn from(t: &TmaTensor<ty::Bf16>) -> EpilogueTensor {
        EpilogueTensor::StagedBf16(t.clone())
    }
}

impl From<&TmaTensor<ty::F16>> for EpilogueTensor {
    fn from(t: &TmaTensor<ty::F16>) -> EpilogueTensor {
        EpilogueTensor::StagedF16(t.clone())
    }
}

/// Calls `$f` with the tensor's buffer, whatever its element type; `$staged` for a staged
/// tensor (it has no global buffer the epilogue addresses).
macro_rules! with_tensor {
    ($t:expr, $b:ident => $e:expr, staged => $staged:expr) => {
        match $t {
            EpilogueTensor::Bf16($b) => $e,
            EpilogueTensor::F16($b) => $e,
            EpilogueTensor::F32($b) => $e,
            EpilogueTensor::StagedBf16(_) | EpilogueTensor::StagedF16(_) => $staged,
        }
    };
}

impl EpilogueTensor {
    /// A tensor of any element type `T`: bf16, f16 or f32 (another type is an error).
    #[track_caller]
    pub fn of<T: crate::kernel::Elem>(k: &KernelBuilder, b: &Buffer<T>) -> Result<EpilogueTensor> {
        let shape = b.shape().to_vec();
        match T::DTYPE {
            ScalarType::Bf16 => Ok(EpilogueTensor::Bf16(b.reinterpret(shape)?)),
            ScalarType::F16 => Ok(EpilogueTensor::F16(b.reinterpret(shape)?)),
            ScalarType::F32 => Ok(EpilogueTensor::F32(b.reinterpret(shape)?)),
            other => Err(k.error(format!(
                "an epilogue tensor of {other} (`{}`): epilogues read and write bf16, f16 and f32",
                b.name()
            ))),
        }
    }

    /// Its name in the kernel.
    pub fn name(&self) -> &str {
        match self {
            EpilogueTensor::Bf16(b) => b.name(),
            EpilogueTensor::F16(b) => b.name(),
            EpilogueTensor::F32(b) => b.name(),
            EpilogueTensor::StagedBf16(t) => t.name(),
            EpilogueTensor::StagedF16(t) => t.name(),
        }
    }

    /// Its element type.
    pub fn dtype(&self) -> ScalarType {
        match self {
            EpilogueTensor::Bf16(_) | EpilogueTensor::StagedBf16(_) => ScalarType::Bf16,
            EpilogueTensor::F16(_) | EpilogueTensor::StagedF16(_) => ScalarType::F16,
            EpilogueTensor::F32(_) => ScalarType::F32,
        }
    }

    /// Its shape.
    pub fn shape(&self) -> &[Expr] {
        match self {
            EpilogueTensor::Bf16(b) => b.shape(),
            EpilogueTensor::F16(b) => b.shape(),
            EpilogueTensor::F32(b) => b.shape(),
            EpilogueTensor::StagedBf16(t) => t.shape(),
            EpilogueTensor::StagedF16(t) => t.shape(),
        }
    }

    /// Whether the kernel loads its blocks into shared memory for the epilogue (a TMA tensor).
    pub fn is_staged(&self) -> bool {
        matches!(
            self,
            EpilogueTensor::StagedBf16(_) | EpilogueTensor::StagedF16(_)
        )
    }

    /// The error for a staged tensor where the epilogue needs a global one.
    fn not_staged(&self, k: &KernelBuilder, what: &str) -> KernelError {
        k.error(format!(
            "the staged tensor `{}` as {what}: a staged tensor is a `[m, n]` input read from \
             the kernel's staging block (by `linear` or `residual`)",
            self.name()
        ))
    }

    /// Element `at` as f32 (16-bit values converted, PTX ISA 9.7.9.21 `cvt`).
    fn load_f32(&self, k: &mut KernelBuilder, at: Expr) -> Result<Reg<ty::F32>> {
        fn widened<T: crate::kernel::Elem>(
            k: &mut KernelBuilder,
            b: &Buffer<T>,
            at: Expr,
        ) -> Result<Reg<ty::F32>> {
            let h = k.load(b, [at])?;
            let f = k.reg::<ty::F32>();
            k.cvt(f, h)?;
            Ok(f)
        }
        match self {
            EpilogueTensor::F32(b) => k.load(b, [at]),
            EpilogueTensor::Bf16(b) => widened(k, b, at),
            EpilogueTensor::F16(b) => widened(k, b, at),
            EpilogueTensor::StagedBf16(_) | EpilogueTensor::StagedF16(_) => {
                Err(self.not_staged(k, "a vector of rows or columns"))
            }
        }
    }

    /// The `[rows, cols]` block `(bi, bj)` of this rank-2 tensor as a tile with run-time pitch
    /// and bounds ([`KernelBuilder::tile_at`]).
    fn block(&self, k: &mut KernelBuilder, at: [Expr; 2], shape: [u32; 2]) -> Result<TileRef> {
        with_tensor!(self, b => k.tile_at(b, at, shape), staged => {
            Err(self.not_staged(k, "a tensor without its staged block"))
        })
    }
}

/// How a vector combines with the accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// `v + x`.
    Add,
    /// `v · x`.
    Mul,
}

/// An activation function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `max(v, 0)`.
    Relu,
    /// `0.5 v (1 + tanh(sqrt(2/π) (v + 0.044715 v³)))` (`tanh.approx.f32`).
    GeluTanh,
    /// `v Φ(v) = 0.5 v (1 + erf(v / sqrt 2))`, erf to within 1.5e-7
    /// (Abramowitz and Stegun 7.1.26).
    GeluErf,
    /// `v / (1 + e^-v)`.
    Silu,
}

impl Activation {
    /// The function on the host in f64 (GELU erf to 1e-15 by erf's series and tail), what
    /// checks compare a kernel's values with.
    pub fn reference(self, x: f64) -> f64 {
        match self {
            Activation::Relu => x.max(0.0),
            Activation::GeluTanh => {
                let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
                0.5 * x * (1.0 + u.tanh())
            }
            Activation::GeluErf => 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
            Activation::Silu => x / (1.0 + (-x).exp()),
        }
    }
}

/// erf on the host: its Maclaurin series `2/sqrt(pi) Σ (-1)^n z^(2n+1) / (n! (2n+1))` below
/// |z| = 5, ±1 past it (1 - erf 5 < 2e-12).
fn erf(z: f64) -> f64 {
    if z.abs() > 5.0 {
        return z.signum();
    }
    let (mut term, mut sum) = (z, z);
    for n in 1..400 {
        term *= -z * z / n as f64;
        let add = term / (2 * n + 1) as f64;
        sum += add;
        if add.abs() < 1e-17 {
            break;
        }
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

/// A value's element, for [`Epilogue::map`]: its row and column in the output.
#[derive(Debug, Clone)]
pub struct Element {
    /// The row (an expression: evaluating it costs instructions only when used).
    pub row: Expr,
    /// The column.
    pub col: Expr,
}

/// The closure of [`Epilogue::map`].
pub type MapFn = Rc<dyn Fn(&mut KernelBuilder, Reg<ty::F32>, &Element) -> Result<Reg<ty::F32>>>;

/// One operation of an [`Epilogue`].
#[derive(Clone)]
pub enum EpilogueOp {
    /// `alpha · v`.
    Scale(Src<ty::F32>),
    /// `v (op) x[col]` over a vector of the output's columns.
    Cols(EpilogueTensor, Combine),
    /// `v (op) x[row]` over a vector of the output's rows.
    Rows(EpilogueTensor, Combine),
    /// An activation.
    Activation(Activation),
    /// `alpha · v + beta · C[row, col]` over a `[m, n]` tensor.
    Linear {
        /// The tensor.
        tensor: EpilogueTensor,
        /// The factor of the accumulator.
        alpha: Src<ty::F32>,
        /// The factor of the tensor.
        beta: Src<ty::F32>,
    },
    /// `v + R[row, col]` over a `[m, n]` tensor.
    Residual(EpilogueTensor),
    /// `f(v, (row, col))`.
    Map(MapFn),
    /// Stores the values as they are here to a second `[m, n]` tensor (cast to its type).
    Store(EpilogueTensor),
    /// Folds the largest `|v|` of the output's elements (on an edge tile, of those inside the
    /// output) into `out[0]` (f32, zeroed by the caller before the launch): a warp's maximum,
    /// then one `red.global.max.u32` of its bits per warp (PTX ISA 9.7.13.6; non-negative f32
    /// values order as their bits do).
    Amax(Buffer<ty::F32>),
    /// The output's store adds the values to what C holds instead of overwriting it
    /// ([`Epilogue::accumulate`]): the last op, it leaves the values as they are.
    Accumulate,
}

impl fmt::Debug for EpilogueOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EpilogueOp::Scale(a) => write!(f, "Scale({a:?})"),
            EpilogueOp::Cols(t, c) => write!(f, "Cols({}, {c:?})", t.name()),
            EpilogueOp::Rows(t, c) => write!(f, "Rows({}, {c:?})", t.name()),
            EpilogueOp::Activation(a) => write!(f, "Activation({a:?})"),
            EpilogueOp::Linear { tensor, .. } => write!(f, "Linear({})", tensor.name()),
            EpilogueOp::Residual(t) => write!(f, "Residual({})", t.name()),
            EpilogueOp::Map(_) => write!(f, "Map(..)"),
            EpilogueOp::Store(t) => write!(f, "Store({})", t.name()),
            EpilogueOp::Amax(t) => write!(f, "Amax({})", t.name()),
            EpilogueOp::Accumulate => write!(f, "Accumulate"),
        }
    }
}

impl EpilogueOp {
    /// Whether it reads or writes a `[m, n]` tensor, or needs to know which elements lie inside
    /// the output (and so runs inside the whole-tile / edge-tile branch).
    pub fn touches_tile(&self) -> bool {
        matches!(
            self,
            EpilogueOp::Linear { .. }
                | EpilogueOp::Residual(_)
                | EpilogueOp::Store(_)
                | EpilogueOp::Amax(_)
        )
    }

    /// The `[m, n]` tensor it reads or writes.
    fn tile_tensor(&self) -> Option<&EpilogueTensor> {
        match self {
            EpilogueOp::Linear { tensor, .. }
            | EpilogueOp::Residual(tensor)
            | EpilogueOp::Store(tensor) => Some(tensor),
            _ => None,
        }
    }
}

/// An epilogue: its ops in order, and whether the tensors they read are prefetched into L2
/// ([`Epilogue::prefetch`]).
#[derive(Debug, Clone, Default)]
pub struct Epilogue {
    ops: Vec<EpilogueOp>,
    /// [`Epilogue::without_prefetch`] was asked for.
    no_prefetch: bool,
    /// [`Epilogue::with_band_pacing`]: how [`Epilogue::apply_staged`] paces its bands.
    band_pacing: Option<BandPacing>,
}

/// How [`Epilogue::apply_staged`] paces its 8-row bands ([`Epilogue::with_band_pacing`]): a
/// warp that works beside a main loop spreads its shared-memory accesses over it instead of
/// issuing them in a burst. The sleeps are `nanosleep` (PTX ISA 9.7.19: about the time asked,
/// at most 1 ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandPacing {
    /// A pause of this many nanoseconds after each band (a register: 0 for none).
    Pause(Reg<ty::U32>),
    /// Band `q` of the block (band `b` of slab `s`: `q = s · rows / 8 + b`) ends no earlier
    /// than `(q + 1) · step` nanoseconds after `start` (`%globaltimer`, PTX ISA 10.28): after
    /// each band the warp sleeps until then, and not at all while it is behind (`step` 0: no
    /// pacing).
    Schedule {
        /// The block's start, a `%globaltimer` reading.
        start: Reg<ty::U64>,
        /// Nanoseconds a band.
        step: Reg<ty::U32>,
    },
}

/// Where an accumulator fragment lies in the output: what the epilogue's ops index with.
#[derive(Debug, Clone)]
pub struct FragmentAt {
    /// The thread's index in the fragment's scope (a warpgroup's `tid % 128`).
    pub thread: Var,
    /// The output row and column of the fragment's element `(0, 0)`.
    pub row0: Expr,
    /// See `row0`.
    pub col0: Expr,
    /// The output's rows and columns (vector indices are clamped below them: an element past
    /// them is never stored).
    pub rows: Expr,
    /// See `rows`.
    pub cols: Expr,
    /// The fragment as a block of `[m, n]` tensors: block coordinates and block shape, for
    /// [`KernelBuilder::tile_at`].
    pub block: [Expr; 2],
    /// See `block`.
    pub shape: [u32; 2],
}

/// A 16-bit block of the output staged in shared memory the way a GEMM's TMA-store epilogue
/// stages it: 64-column slabs of `shape[0]` rows one after the other, each row 128 bytes
/// under the 128-byte swizzle (a slab is what one 64 x 64 TMA box store reads), the first slab
/// at `addr` (1024-byte aligned). [`Epilogue::apply_staged`] works on it in place.
#[derive(Debug, Clone)]
pub struct StagedBlock {
    /// The first slab's shared address.
    pub addr: Reg<ty::U32>,
    /// The element type (bf16 or f16).
    pub dtype: ScalarType,
    /// Rows (a multiple of 8) and columns (a multiple of 64).
    pub shape: [u32; 2],
    /// The output row and column of the block's element `(0, 0)`.
    pub row0: Expr,
    /// See `row0`.
    pub col0: Expr,
    /// The output's rows and columns.
    pub extents: [Expr; 2],
    /// The bands (8-row groups) of each slab to work on, `[first, end)`; `None`: all of them.
    /// Several warps share a block this way, each on its own rows of every slab.
    pub bands: Option<[Expr; 2]>,
}

/// The rows of a band an epilogue warp holds at once ([`Epilogue::apply_staged`]).
const BAND_ROWS: u32 = 8;

impl Epilogue {
    /// One warp applies the ops to 64-column slab `slab` of `block` in shared memory, in place,
    /// and returns the slab's address (for a TMA store of it, after the caller's proxy fence
    /// and warp sync): eight rows at a time (a band of 1,024 bytes, which the swizzle maps onto
    /// itself), read with `ldmatrix` into the 8-row band of the accumulator's layout
    /// ([`layouts::fragment::wgmma::accumulator_band`]), widened to f32, run through the ops
    /// and written back with `stmatrix`; `lane` is the thread's lane. The ops' `[m, n]`
    /// tensors are read at the band's block, bounded at the output's edges, from global memory,
    /// or, for a staged tensor named in `inputs`, from its copy of this slab in shared memory
    /// (at the address given, laid out as the slab: the caller loaded it by TMA). A 16-bit
    /// tensor in global memory that the ops only read (`linear`, `residual`; no `store` or
    /// `amax` among them) is read one band ahead into registers (the next band's `ld.global`s
    /// issued before this band's work, bounded at the edges, zeros past them), so its latency
    /// hides behind a band's work and the band needs no edge branch; not after
    /// [`Epilogue::without_prefetch`], which reads each band's where it is used. This is the
    /// epilogue of a GEMM whose accumulator-holding warpgroups have rounded their tile into the
    /// block and moved on ([`crate::library::gemm::GemmConfig::epilogue_warps`]): the ops see
    /// the values rounded to the block's type. Paced ([`Epilogue::with_band_pacing`]), the warp
    /// sleeps after each band's `stmatrix`. With [`StagedBlock::bands`] it works on those bands
    /// of the slab only (bounds known at run time), so several warps share a slab.
    #[track_caller]
    pub fn apply_staged(
        &self,
        k: &mut KernelBuilder,
        lane: Var,
        block: &StagedBlock,
        slab: Var,
        inputs: &[(&str, Reg<ty::U32>)],
    ) -> Result<Reg<ty::U32>> {
        let [rows, cols] = block.shape;
        if block.dtype.bits() != 16 || rows % BAND_ROWS != 0 || cols % 64 != 0 {
            return Err(k.error(format!(
                "a staged block of {} {rows} x {cols}: 16-bit, rows a multiple of 8, 64-column \
                 slabs",
                block.dtype
            )));
        }
        let warp = ExecScope::Warp;
        let frag =
            layouts::fragment::wgmma::accumulator_band(64).map_err(|e| k.error(e.to_string()))?;
        let values = k.alloc_fragment::<ty::F32>("epi_band", frag.clone())?;
        let packed = pair_tile(k, &frag, block.dtype);
        // One slab: `rows` rows of 128 bytes (PTX ISA 9.7.9.27.1: a 64-element box row of a
        // 16-bit tensor under the 128-byte swizzle); a band: eight of them, 1,024 bytes, the
        // swizzle's repeat, so a band at a multiple of 1,024 bytes is swizzled as from 0.
        let band_bytes = BAND_ROWS * 128;
        let front = &self.ops[..self.split()];
        {
            let slab_addr = k.reg::<ty::U32>();
            let slab_r = k.eval(slab)?;
            k.mad_lo(slab_addr, slab_r, rows * 128, block.addr)?;
            let at = |band: Expr| {
                let row0 = block.row0.clone() + band * BAND_ROWS;
                let col0 = block.col0.clone() + Expr::from(slab) * 64u32;
                FragmentAt {
                    thread: lane,
                    block: [row0.clone() / BAND_ROWS, col0.clone() / 64u32],
                    row0,
                    col0,
                    rows: block.extents[0].clone(),
                    cols: block.extents[1].clone(),
                    shape: [BAND_ROWS, 64],
                }
            };
            // The column vectors of the front ops are the same in every band of the slab:
            // loaded once.
            let mut cols_loaded = Vec::new();
            for (i, op) in front.iter().enumerate() {
                if let EpilogueOp::Cols(x, _) = op {
                    let at = at(0u32.into());
                    let v = vector_tile(k, &values, &at, x, Axis::Col, vector_factor(front, i))?;
                    cols_loaded.push((i, v));
                }
            }
            let bands = rows / BAND_ROWS;
            let [first, end] = block
                .bands
                .clone()
                .unwrap_or([Expr::from(0u32), Expr::from(bands)]);
            // The global tensors read one band ahead: this band's pairs and the next's.
            let ahead = self.read_ahead(k, inputs, &frag)?;
            for (t, cur, _) in &ahead {
                let view = t.block(k, at(first.clone()).block, [BAND_ROWS, 64])?;
                k.copy(cur, &view, warp)?;
            }
            // A loop over the bands (written out, ptxas hoisted the later bands' loads until
            // the warp's registers spilled).
            k.for_range(first, end.clone(), |k, band| {
                let band_r = k.eval(band)?;
                if !ahead.is_empty() {
                    let more = k.cmp(CmpOp::Lt, Expr::from(band) + 1u32, end)?;
                    k.if_(more, |k| {
                        for (t, _, next) in &ahead {
                            let at = at(Expr::from(band) + 1u32);
                            let view = t.block(k, at.block, [BAND_ROWS, 64])?;
                            k.copy(next, &view, warp)?;
                        }
                        Ok(())
                    })
                    .end()?;
                }
                let addr = k.reg::<ty::U32>();
                k.mad_lo(addr, band_r, band_bytes, slab_addr)?;
                let window = TileRef::shared_row_major(block.dtype, BAND_ROWS, 64, addr, 1024)
                    .with_swizzle(smem::SwizzleMode::B128);
                k.copy(&packed, &window, warp)?;
                let words = tile_regs(k, &packed)?;
                let regs = regs_of(k, &values)?.to_vec();
                for (&pair, two) in words.iter().zip(regs.chunks(2)) {
                    for (&v, x) in two.iter().zip(widen_pair(k, pair, block.dtype)?) {
                        k.mov(v, x)?;
                    }
                }
                let at = at(band.into());
                apply_ops(k, (front, &cols_loaded), &at, &values, &[], true)?;
                if self.touches_tiles() {
                    // A staged input's band: the same rows of its copy of the slab.
                    let mut known = Vec::with_capacity(inputs.len());
                    for &(name, base) in inputs {
                        let addr = k.reg::<ty::U32>();
                        k.mad_lo(addr, band_r, band_bytes, base)?;
                        let view =
                            TileRef::shared_row_major(block.dtype, BAND_ROWS, 64, addr, 1024)
                                .with_swizzle(smem::SwizzleMode::B128);
                        known.push((name, view));
                    }
                    for (t, cur, _) in &ahead {
                        known.push((t.name(), cur.clone()));
                    }
                    let known: Vec<(&str, &TileRef)> = known.iter().map(|(n, v)| (*n, v)).collect();
                    let views = self.back_views(k, &at, &known)?;
                    // Staged inputs only (their slabs hold the whole band, zeros past the
                    // edges) and no op that asks whether the band is whole (an amax compares
                    // only the values inside): one body, no edge branch, so the views' lane
                    // addresses stay out of the band loop.
                    let shared = views
                        .iter()
                        .all(|v| matches!(v.storage, Storage::Shared | Storage::Local));
                    let amax = self.ops.iter().any(|op| matches!(op, EpilogueOp::Amax(_)));
                    if shared && !amax {
                        self.apply_back(k, &at, &values, &views, true)?;
                    } else {
                        whole_or_edge(k, &views, at.shape, Some(&at), |k, v, whole| {
                            self.apply_back(k, &at, &values, v, whole)
                        })?;
                    }
                }
                k.cast(&packed, &values, warp)?;
                k.copy(&window, &packed, warp)?;
                match self.band_pacing {
                    None => {}
                    Some(BandPacing::Pause(ns)) => k.isa().nanosleep(ns)?,
                    Some(BandPacing::Schedule { start, step }) => {
                        // Due (q + 1)·step after the start; asleep for what is left of it.
                        let q = k.eval(Expr::from(slab) * bands + band + 1u32)?;
                        let due = k.reg::<ty::U32>();
                        k.isa().mul_lo(due, q, step)?;
                        let now = k.reg::<ty::U64>();
                        k.isa().mov_sreg(now, ptx_isa::SpecialReg::GlobalTimer)?;
                        k.isa().sub(now, now, start)?;
                        let since = k.reg::<ty::U32>();
                        k.isa().cvt(since, now)?;
                        let early = k.isa().pred();
                        k.isa().setp(CmpOp::Lt, early, since, due)?;
                        let left = k.reg::<ty::U32>();
                        k.isa().sub(left, due, since)?;
                        k.isa().min(left, left, 1_000_000u32)?;
                        k.when(early).nanosleep(left)?;
                    }
                }
                // The next band's pairs become this band's (after the last band, unused).
                for (_, cur, next) in &ahead {
                    for (c, n) in tile_regs(k, cur)?.into_iter().zip(tile_regs(k, next)?) {
                        k.mov(c, n)?;
                    }
                }
                Ok(())
            })?;
            Ok(slab_addr)
        }
    }

    /// The tensors [`Epilogue::apply_staged`] reads one band ahead, each with two pair tiles of
    /// `frag` (this band's, the next's): the 16-bit global tensors the back ops read, where no
    /// back op writes a tensor or folds an amax and [`Epilogue::without_prefetch`] was not
    /// asked for; staged ones (named in `inputs`) are read from their slabs.
    fn read_ahead(
        &self,
        k: &mut KernelBuilder,
        inputs: &[(&str, Reg<ty::U32>)],
        frag: &TvLayout,
    ) -> Result<Vec<(EpilogueTensor, TileRef, TileRef)>> {
        let back = &self.ops[self.split()..];
        let writes = back
            .iter()
            .any(|op| matches!(op, EpilogueOp::Store(_) | EpilogueOp::Amax(_)));
        if self.no_prefetch || writes {
            return Ok(Vec::new());
        }
        let mut ahead: Vec<(EpilogueTensor, TileRef, TileRef)> = Vec::new();
        for t in back.iter().filter_map(EpilogueOp::tile_tensor) {
            let staged = inputs.iter().any(|(name, _)| *name == t.name());
            let seen = ahead.iter().any(|(a, ..)| a.name() == t.name());
            if t.is_staged() || staged || seen || t.dtype().bits() != 16 {
                continue;
            }
            let (cur, next) = (pair_tile(k, frag, t.dtype()), pair_tile(k, frag, t.dtype()));
            ahead.push((t.clone(), cur, next));
        }
        Ok(ahead)
    }

    /// `self` with the `[m, n]` tensor named `name` that its ops read (`linear`, `residual`)
    /// read from `with` instead: a GEMM's epilogue warps read a staged input from its global
    /// copy (`HopperGemm::staged_input_direct`). Other ops are kept as they are.
    pub fn with_tensor_replaced(mut self, name: &str, with: EpilogueTensor) -> Epilogue {
        for op in &mut self.ops {
            match op {
                EpilogueOp::Linear { tensor, .. } | EpilogueOp::Residual(tensor)
                    if tensor.name() == name =>
                {
                    *tensor = with.clone();
                }
                _ => {}
            }
        }
        self
    }

    /// No ops: the accumulators are stored as they are.
    pub fn new() -> Epilogue {
        Epilogue::default()
    }

    /// The ops, in order.
    pub fn ops(&self) -> &[EpilogueOp] {
        &self.ops
    }

    /// Appends `op`.
    pub fn op(mut self, op: EpilogueOp) -> Epilogue {
        self.ops.push(op);
        self
    }

    /// Appends every op of `other` (after this one's); without the prefetch where either asks
    /// so.
    pub fn then(mut self, other: Epilogue) -> Epilogue {
        self.ops.extend(other.ops);
        self.no_prefetch |= other.no_prefetch;
        self
    }

    /// The same ops, their tensors not prefetched into L2 at the tile's start
    /// ([`Epilogue::prefetch`] does nothing): where the epilogue's latency is hidden anyway (the
    /// GEMM's ping-pong consumers) and the early reads would only compete in L2 with the main
    /// loop's operands.
    pub fn without_prefetch(mut self) -> Epilogue {
        self.no_prefetch = true;
        self
    }

    /// The same ops, [`Epilogue::apply_staged`] pacing its bands as `pacing` says
    /// ([`BandPacing`]; its registers set by the caller per block).
    pub fn with_band_pacing(mut self, pacing: BandPacing) -> Epilogue {
        self.band_pacing = Some(pacing);
        self
    }

    /// `alpha · v` (a register or a constant).
    pub fn scale(self, alpha: impl Into<Src<ty::F32>>) -> Epilogue {
        self.op(EpilogueOp::Scale(alpha.into()))
    }

    /// `v (op) x[col]`: `x` a vector of the output's columns (`[n]`), bf16, f16 or f32.
    pub fn cols(self, x: impl Into<EpilogueTensor>, op: Combine) -> Epilogue {
        self.op(EpilogueOp::Cols(x.into(), op))
    }

    /// `v (op) x[row]`: `x` a vector of the output's rows (`[m]`).
    pub fn rows(self, x: impl Into<EpilogueTensor>, op: Combine) -> Epilogue {
        self.op(EpilogueOp::Rows(x.into(), op))
    }

    /// An activation.
    pub fn activation(self, a: Activation) -> Epilogue {
        self.op(EpilogueOp::Activation(a))
    }

    /// `alpha · v + beta · c[row, col]` (`c` `[m, n]`, row-major).
    pub fn linear(
        self,
        c: impl Into<EpilogueTensor>,
        alpha: impl Into<Src<ty::F32>>,
        beta: impl Into<Src<ty::F32>>,
    ) -> Epilogue {
        self.op(EpilogueOp::Linear {
            tensor: c.into(),
            alpha: alpha.into(),
            beta: beta.into(),
        })
    }

    /// `v + r[row, col]` (`r` `[m, n]`, row-major): a global tensor read at the epilogue, or a
    /// staged TMA tensor (the GEMM's `HopperGemm::staged_input`) whose block the kernel loads
    /// into shared memory while the main loop runs, read there by `ldmatrix`.
    pub fn residual(self, r: impl Into<EpilogueTensor>) -> Epilogue {
        self.op(EpilogueOp::Residual(r.into()))
    }

    /// `f(k, v, element)` for each value: any register math (the element's row and column are
    /// expressions, evaluated only if `f` uses them).
    pub fn map(
        self,
        f: impl Fn(&mut KernelBuilder, Reg<ty::F32>, &Element) -> Result<Reg<ty::F32>> + 'static,
    ) -> Epilogue {
        self.op(EpilogueOp::Map(Rc::new(f)))
    }

    /// Also folds the largest `|v|` of the output's elements at this point into `out[0]` (one
    /// f32, zeroed before the launch): the amax an FP8 recipe scales the next layer by.
    pub fn amax(self, out: &Buffer<ty::F32>) -> Epilogue {
        self.op(EpilogueOp::Amax(out.clone()))
    }

    /// The output accumulated in place: C holds a tensor before the call (a residual stream,
    /// say) and the output's store adds the values to it, `C = round(C + round(v))`, instead of
    /// overwriting it: the in-place update `x += f(x W)` of a transformer block, with no
    /// residual read by the kernel. The values are rounded to C's type as a plain store rounds
    /// them, then the TMA's reduction adds them in L2 (PTX ISA 9.7.9.27
    /// `cp.reduce.async.bulk.tensor...add`; its element type is the tensor map's, `.add` takes
    /// f16 and bf16), which rounds the sum to C's type: torch eager's `x += f(y)` on bf16
    /// tensors, the function's output rounded, then the add. The last op of an epilogue. A GEMM
    /// serves it where C is stored by TMA from its staging blocks (the consumers' TMA-store
    /// epilogue, epilogue warps and the consumers' own last tile beside them); where C would be
    /// stored from registers (`GemmConfig::tma_store` off, swap-AB, split-K or stream-K
    /// partials, grouped problems) the build refuses it ([`Epilogue::accumulates`]).
    pub fn accumulate(self) -> Epilogue {
        self.op(EpilogueOp::Accumulate)
    }

    /// Whether the output's store adds to what C holds ([`Epilogue::accumulate`]); an error
    /// where the op is not the last one (the ops after it would run on values already handed
    /// to the store's reduction).
    #[track_caller]
    pub fn accumulates(&self, k: &KernelBuilder) -> Result<bool> {
        let at = self
            .ops
            .iter()
            .position(|op| matches!(op, EpilogueOp::Accumulate));
        match at {
            None => Ok(false),
            Some(i) if i + 1 == self.ops.len() => Ok(true),
            Some(i) => Err(k.error(format!(
                "the epilogue op Accumulate is op {i} of {}: it must be the last (the output's \
                 store adds the values; {:?} after it would not reach C)",
                self.ops.len(),
                self.ops[i + 1]
            ))),
        }
    }

    /// Also stores the values as they are at this point to `out` (`[m, n]`, row-major; cast to
    /// its element type), e.g. the pre-activation of a fused layer.
    pub fn store(self, out: impl Into<EpilogueTensor>) -> Epilogue {
        self.op(EpilogueOp::Store(out.into()))
    }

    /// Prefetches into L2 the blocks of the `[m, n]` tensors the ops read (a residual, `C` of
    /// `linear`), to be called when the fragment's tile starts, long before the epilogue: each of
    /// the scope's threads (`at.thread`, `0..threads`) issues one `cp.async.bulk.prefetch.L2`
    /// (PTX ISA 9.7.9.25.4.3) of a `cols / (threads / rows)`-element run of a row of the block,
    /// where it lies wholly inside the tensor (the edge runs are left to the loads). The
    /// epilogue's reads then come from L2 instead of DRAM, the DRAM traffic spread over the
    /// mainloop. Only where every run starts 16 bytes aligned, as the instruction needs: the
    /// tensor aligned to 16 bytes and its rows a multiple of `row_multiple` elements that makes
    /// them whole 16-byte units; nothing for other ops, nor after
    /// [`Epilogue::without_prefetch`].
    #[track_caller]
    pub fn prefetch(
        &self,
        k: &mut KernelBuilder,
        at: &FragmentAt,
        threads: u32,
        row_multiple: u32,
    ) -> Result<()> {
        let [rows, cols] = at.shape;
        let per_row = threads / rows;
        if self.no_prefetch || per_row == 0 || cols % per_row != 0 {
            return Ok(());
        }
        let run = cols / per_row;
        for op in &self.ops {
            // A staged tensor's blocks come by TMA into shared memory instead.
            let tensor = match op {
                EpilogueOp::Linear { tensor, .. } | EpilogueOp::Residual(tensor)
                    if !tensor.is_staged() =>
                {
                    tensor
                }
                _ => continue,
            };
            let align = with_tensor!(tensor, b => b.align(), staged => continue);
            let elem = tensor.dtype().bytes();
            let bytes = run * elem;
            if bytes % 16 != 0 || (row_multiple * elem) % 16 != 0 || align < 16 {
                continue;
            }
            let row = at.row0.clone() + Expr::from(at.thread) / per_row;
            let col = at.col0.clone() + (Expr::from(at.thread) % per_row) * run;
            let inside_r = k.cmp(CmpOp::Lt, row.clone(), at.rows.clone())?;
            let inside_c = k.cmp(CmpOp::Le, col.clone() + run, at.cols.clone())?;
            k.and(inside_r, inside_r, inside_c)?;
            let ptr = with_tensor!(tensor, b => k.ptr_to(b, [row.clone(), col.clone()]), staged => continue)?;
            let crate::kernel::Ptr::Global(ptr) = ptr else {
                return Err(k.error(format!("`{}` is not a global tensor", tensor.name())));
            };
            k.when(inside_r).cp_async_bulk_prefetch(
                ptx_isa::Addr::<ptx_isa::spaces::Global>::reg(ptr),
                bytes,
            )?;
        }
        Ok(())
    }

    /// Where the ops that touch a `[m, n]` tensor begin: the ops before run once
    /// ([`Epilogue::apply_front`]), the rest per branch ([`Epilogue::apply_back`]).
    /// A GELU (tanh) right before a residual goes with it (`apply_ops` folds the GELU's half
    /// into the residual's add).
    pub fn split(&self) -> usize {
        let first = self
            .ops
            .iter()
            .position(EpilogueOp::touches_tile)
            .unwrap_or(self.ops.len());
        match (
            first.checked_sub(1).map(|i| &self.ops[i]),
            self.ops.get(first),
        ) {
            (Some(EpilogueOp::Activation(Activation::GeluTanh)), Some(EpilogueOp::Residual(_))) => {
                first - 1
            }
            _ => first,
        }
    }

    /// The `[m, n]` tensors the ops read or write, in order.
    pub fn tile_tensors(&self) -> impl Iterator<Item = &EpilogueTensor> {
        self.ops.iter().filter_map(EpilogueOp::tile_tensor)
    }

    /// Whether any op touches a `[m, n]` tensor.
    pub fn touches_tiles(&self) -> bool {
        self.split() < self.ops.len()
    }

    /// The ops before [`Epilogue::split`], applied to `acc` in place.
    #[track_caller]
    pub fn apply_front(
        &self,
        k: &mut KernelBuilder,
        at: &FragmentAt,
        acc: &Buffer<ty::F32>,
    ) -> Result<()> {
        let front = &self.ops[..self.split()];
        apply_ops(k, (front, &[]), at, acc, &[], true)
    }

    /// The views of the back ops' tensors at this fragment's block, bounded at the edges; a
    /// branch drops the bounds where the block lies wholly inside them. `known`: views the
    /// caller already has of the same block, by tensor name (a kernel's tensor names are
    /// unique), used instead of computing them again (the output itself, say).
    #[track_caller]
    pub fn back_views(
        &self,
        k: &mut KernelBuilder,
        at: &FragmentAt,
        known: &[(&str, &TileRef)],
    ) -> Result<Vec<TileRef>> {
        self.ops[self.split()..]
            .iter()
            .filter_map(EpilogueOp::tile_tensor)
            .map(|t| {
                let want = [at.rows.clone(), at.cols.clone()];
                expect_shape(k, t, &want, "an [m, n] tensor of the output")?;
                match known.iter().find(|(name, _)| *name == t.name()) {
                    Some((_, view)) => Ok((*view).clone()),
                    None => t.block(k, at.block.clone(), at.shape),
                }
            })
            .collect()
    }

    /// The ops from [`Epilogue::split`] on, applied to `acc` in place, the tensors through
    /// `views` ([`Epilogue::back_views`], with or without their bounds); `whole`: the
    /// fragment's block lies wholly inside the output ([`whole_or_edge`]'s branch).
    #[track_caller]
    pub fn apply_back(
        &self,
        k: &mut KernelBuilder,
        at: &FragmentAt,
        acc: &Buffer<ty::F32>,
        views: &[TileRef],
        whole: bool,
    ) -> Result<()> {
        let back = &self.ops[self.split()..];
        apply_ops(k, (back, &[]), at, acc, views, whole)
    }
}

/// Applies `ops` to `acc` in place; the ops that touch tensors take `views` in order, and the
/// vector ops listed in `loaded` (by index in `ops`) their vectors already in registers.
fn apply_ops(
    k: &mut KernelBuilder,
    (ops, loaded): (&[EpilogueOp], &[(usize, TileRef)]),
    at: &FragmentAt,
    acc: &Buffer<ty::F32>,
    views: &[TileRef],
    whole: bool,
) -> Result<()> {
    let Some(frag) = acc.fragment().cloned() else {
        return Err(k.error("an epilogue runs on a register fragment (alloc_fragment)"));
    };
    let wg = scope_of(k, &frag)?;
    let mut views = views.iter();
    let vector = |k: &mut KernelBuilder, i: usize, x: &EpilogueTensor, axis: Axis| match loaded
        .iter()
        .find(|(op, _)| *op == i)
    {
        Some((_, tile)) => Ok(tile.clone()),
        None => vector_tile(k, acc, at, x, axis, vector_factor(ops, i)),
    };
    let mut i = 0;
    while i < ops.len() {
        let acc_r = k.tile_ref(acc)?;
        match (&ops[i], ops.get(i + 1)) {
            // A scale then a column vector added: one fma per value.
            (EpilogueOp::Scale(alpha), Some(EpilogueOp::Cols(x, Combine::Add))) => {
                let b = vector(k, i + 1, x, Axis::Col)?;
                let fma = Elementwise::Fma { scale: *alpha };
                k.elementwise(&acc_r, &acc_r, Some(&b), fma, wg)?;
                i += 1;
            }
            (EpilogueOp::Scale(alpha), _) => {
                let scale = Elementwise::Scale { alpha: *alpha };
                k.elementwise(&acc_r, &acc_r, None, scale, wg)?;
            }
            // A vector added, then GELU (tanh): the add makes the GELU's half,
            // `fma(v, 0.5, x/2)` (the vector halved where it is loaded, `vector_factor`), and
            // `gelu_tanh_of_half` takes it: a multiply fewer a value, the same bits.
            (EpilogueOp::Cols(x, _) | EpilogueOp::Rows(x, _), _) if adds_half_for_gelu(ops, i) => {
                let axis = match &ops[i] {
                    EpilogueOp::Rows(..) => Axis::Row,
                    _ => Axis::Col,
                };
                let b = vector(k, i, x, axis)?;
                let fma = Elementwise::Fma {
                    scale: Src::from(0.5f32),
                };
                k.elementwise(&acc_r, &acc_r, Some(&b), fma, wg)?;
                for &v in regs_of(k, acc)? {
                    let out = k.gelu_tanh_of_half(v)?;
                    k.mov(v, out)?;
                }
                i += 1;
            }
            (EpilogueOp::Cols(x, Combine::Add), _) => {
                let b = vector(k, i, x, Axis::Col)?;
                let fma = Elementwise::Fma {
                    scale: Src::from(1.0f32),
                };
                k.elementwise(&acc_r, &acc_r, Some(&b), fma, wg)?;
            }
            (EpilogueOp::Cols(x, Combine::Mul), _) => {
                let b = vector(k, i, x, Axis::Col)?;
                k.elementwise(&acc_r, &acc_r, Some(&b), Elementwise::Mul, wg)?;
            }
            (EpilogueOp::Rows(x, op), _) => {
                let b = vector(k, i, x, Axis::Row)?;
                let f = match op {
                    Combine::Add => Elementwise::Add,
                    Combine::Mul => Elementwise::Mul,
                };
                k.elementwise(&acc_r, &acc_r, Some(&b), f, wg)?;
            }
            // GELU (tanh), then a residual added: the GELU leaves its half to the residual's
            // add, `fma(y, 0.5, r)`: one instruction fewer a value, the same bits.
            (EpilogueOp::Activation(Activation::GeluTanh), Some(EpilogueOp::Residual(tensor))) => {
                for &v in regs_of(k, acc)? {
                    let out = k.gelu_tanh_doubled(v)?;
                    k.mov(v, out)?;
                }
                let view = next_view(k, &mut views, tensor)?;
                fold_tile(k, &frag, view, acc, Fold::HalfAdd)?;
                i += 1;
            }
            (EpilogueOp::Activation(Activation::Relu), _) => {
                k.elementwise(&acc_r, &acc_r, None, Elementwise::Relu, wg)?;
            }
            (EpilogueOp::Activation(a), _) => {
                for &v in regs_of(k, acc)? {
                    let out = match a {
                        Activation::GeluTanh => k.gelu_tanh(v)?,
                        Activation::GeluErf => k.gelu_erf(v)?,
                        _ => k.silu(v)?,
                    };
                    k.mov(v, out)?;
                }
            }
            (EpilogueOp::Map(f), _) => {
                let (r0, c0) = k.fragment_origin(acc, at.thread)?;
                let regs = regs_of(k, acc)?.to_vec();
                for (v, &reg) in regs.iter().enumerate() {
                    let (dr, dc) = value_offset(k, &frag, v)?;
                    let element = Element {
                        row: at.row0.clone() + r0.clone() + dr,
                        col: at.col0.clone() + c0.clone() + dc,
                    };
                    let out = f(k, reg, &element)?;
                    if out != reg {
                        k.mov(reg, out)?;
                    }
                }
            }
            (
                EpilogueOp::Linear {
                    tensor,
                    alpha,
                    beta,
                },
                _,
            ) => {
                let view = next_view(k, &mut views, tensor)?;
                fold_tile(k, &frag, view, acc, Fold::Linear(*alpha, *beta))?;
            }
            (EpilogueOp::Residual(tensor), _) => {
                let view = next_view(k, &mut views, tensor)?;
                fold_tile(k, &frag, view, acc, Fold::Add)?;
            }
            (EpilogueOp::Store(tensor), _) => {
                if tensor.is_staged() {
                    return Err(tensor.not_staged(k, "an extra output"));
                }
                let view = next_view(k, &mut views, tensor)?.clone();
                write_from_f32(k, &frag, &view, &acc_r, wg)?;
            }
            (EpilogueOp::Amax(out), _) => amax(k, acc, at, out, whole)?,
            // The store's reduction adds the values (the GEMM's store: `Epilogue::accumulates`).
            (EpilogueOp::Accumulate, _) => {}
        }
        i += 1;
    }
    Ok(())
}

/// [`EpilogueOp::Amax`]: the thread's largest `|v|` (on an edge tile, of the values inside the
/// output: each distinct row and column offset compared once), the warp's by a butterfly, and
/// lane 0's `red.global.max.u32` of its bits.
fn amax(
    k: &mut KernelBuilder,
    acc: &Buffer<ty::F32>,
    at: &FragmentAt,
    out: &Buffer<ty::F32>,
    whole: bool,
) -> Result<()> {
    let Some(frag) = acc.fragment().cloned() else {
        return Err(k.error("an epilogue runs on a register fragment (alloc_fragment)"));
    };
    let regs = regs_of(k, acc)?.to_vec();
    // Inside the output: row < rows and col < cols, per distinct offset.
    let (r0, c0) = k.fragment_origin(acc, at.thread)?;
    let mut inside: Vec<((u32, u32), ptx_isa::Pred)> = Vec::new();
    let mut rows: Vec<(u32, ptx_isa::Pred)> = Vec::new();
    let mut cols: Vec<(u32, ptx_isa::Pred)> = Vec::new();
    let best = k.reg::<ty::F32>();
    k.mov(best, 0.0f32)?;
    for (v, &reg) in regs.iter().enumerate() {
        let a = k.reg::<ty::F32>();
        k.abs(a, reg)?;
        if !whole {
            let (dr, dc) = value_offset(k, &frag, v)?;
            let ok = match inside.iter().find(|(o, _)| *o == (dr, dc)) {
                Some(&(_, p)) => p,
                None => {
                    let row = at.row0.clone() + r0.clone() + dr;
                    let col = at.col0.clone() + c0.clone() + dc;
                    let pr = match rows.iter().find(|(o, _)| *o == dr) {
                        Some(&(_, p)) => p,
                        None => {
                            let p = k.cmp(CmpOp::Lt, row, at.rows.clone())?;
                            rows.push((dr, p));
                            p
                        }
                    };
                    let pc = match cols.iter().find(|(o, _)| *o == dc) {
                        Some(&(_, p)) => p,
                        None => {
                            let p = k.cmp(CmpOp::Lt, col, at.cols.clone())?;
                            cols.push((dc, p));
                            p
                        }
                    };
                    let both = k.pred();
                    k.and(both, pr, pc)?;
                    inside.push(((dr, dc), both));
                    both
                }
            };
            k.selp(a, a, 0.0f32, ok)?;
        }
        k.max(best, best, a)?;
    }
    let warp = k.reduce(
        crate::kernel::ReduceOp::Max,
        &[best],
        crate::kernel::ReduceScope::Warp,
    )?;
    let bits = k.reg::<ty::U32>();
    k.mov_bits(bits, warp)?;
    let lane = k.let_("amax_lane", Expr::from(at.thread) % 32u32)?;
    let first = k.cmp(CmpOp::Eq, lane, 0u32)?;
    let crate::kernel::Ptr::Global(ptr) = k.ptr_to(out, [0u32])? else {
        return Err(k.error(format!(
            "the amax output `{}` is not a global tensor",
            out.name()
        )));
    };
    k.when(first).red(
        ptx_isa::builder::AtomOp::Max,
        ptx_isa::Addr::<ptx_isa::spaces::Global>::reg(ptr),
        bits,
    )?;
    Ok(())
}

/// The next tensor view of the back ops.
fn next_view<'a>(
    k: &KernelBuilder,
    views: &mut std::slice::Iter<'a, TileRef>,
    tensor: &EpilogueTensor,
) -> Result<&'a TileRef> {
    views.next().ok_or_else(|| {
        k.error(format!(
            "the epilogue's tensor `{}` has no view (Epilogue::back_views)",
            tensor.name()
        ))
    })
}

/// The scope a fragment's threads make: a warp's 32 or a warpgroup's 128.
fn scope_of(k: &KernelBuilder, frag: &TvLayout) -> Result<ExecScope> {
    match frag.threads() {
        32 => Ok(ExecScope::Warp),
        128 => Ok(ExecScope::Warpgroup),
        t => Err(k.error(format!(
            "an epilogue over a fragment of {t} threads: a warp's or a warpgroup's"
        ))),
    }
}

/// The registers of a register fragment.
fn regs_of<'a>(k: &KernelBuilder, acc: &'a Buffer<ty::F32>) -> Result<&'a [Reg<ty::F32>]> {
    acc.regs()
        .ok_or_else(|| k.error("an epilogue runs on a register fragment (alloc_fragment)"))
}

/// Value `v`'s element relative to the thread's first, `(row, col)`.
fn value_offset(k: &KernelBuilder, frag: &TvLayout, v: usize) -> Result<(u32, u32)> {
    let bad = || k.error("a fragment value outside its layout");
    let (r, c) = frag.coord(0, v as i64).map_err(|_| bad())?;
    Ok((
        u32::try_from(r).map_err(|_| bad())?,
        u32::try_from(c).map_err(|_| bad())?,
    ))
}

/// Which index of the output a vector follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    Row,
    Col,
}

/// Whether `apply_ops` folds op `i`, a column or row vector added, into the GELU (tanh) after
/// it (`gelu_tanh_of_half`, the vector halved where it is loaded): not where a scale before it
/// takes the column vector into its own `fma`, nor where a residual after the GELU takes the
/// GELU's half (`Fold::HalfAdd`, which needs no halved vector).
fn adds_half_for_gelu(ops: &[EpilogueOp], i: usize) -> bool {
    let scaled = i > 0 && matches!(ops[i - 1], EpilogueOp::Scale(_));
    let add = match &ops[i] {
        EpilogueOp::Cols(_, Combine::Add) => !scaled,
        EpilogueOp::Rows(_, Combine::Add) => true,
        _ => false,
    };
    let gelu = matches!(
        ops.get(i + 1),
        Some(EpilogueOp::Activation(Activation::GeluTanh))
    );
    let residual = matches!(ops.get(i + 2), Some(EpilogueOp::Residual(_)));
    add && gelu && !residual
}

/// The factor [`vector_tile`] loads op `i`'s vector with: a half where the vector's add is
/// folded into a GELU ([`adds_half_for_gelu`]), else 1.
fn vector_factor(ops: &[EpilogueOp], i: usize) -> f32 {
    match adds_half_for_gelu(ops, i) {
        true => 0.5,
        false => 1.0,
    }
}

/// A vector of the output's rows or columns as an f32 register tile of the fragment: each
/// distinct row (or column) offset of the thread's values loaded once, clamped below the
/// extent (an element past it is never stored), the values of one index sharing its register;
/// times `factor` (a power of two: exact) where it is not 1.
fn vector_tile(
    k: &mut KernelBuilder,
    acc: &Buffer<ty::F32>,
    at: &FragmentAt,
    x: &EpilogueTensor,
    axis: Axis,
    factor: f32,
) -> Result<TileRef> {
    let Some(frag) = acc.fragment() else {
        return Err(k.error("an epilogue runs on a register fragment (alloc_fragment)"));
    };
    let frag = &frag.clone();
    let origin = k.fragment_origin(acc, at.thread)?;
    let (first, extent) = match axis {
        Axis::Row => (at.row0.clone() + origin.0, at.rows.clone()),
        Axis::Col => (at.col0.clone() + origin.1, at.cols.clone()),
    };
    let name = match axis {
        Axis::Row => "vec_row",
        Axis::Col => "vec_col",
    };
    let what = match axis {
        Axis::Row => "a vector of the output's rows",
        Axis::Col => "a vector of the output's columns",
    };
    expect_shape(k, x, std::slice::from_ref(&extent), what)?;
    let mut offsets = Vec::with_capacity(frag.values() as usize);
    for v in 0..frag.values() as usize {
        let (dr, dc) = value_offset(k, frag, v)?;
        offsets.push(if axis == Axis::Row { dr } else { dc });
    }
    let mut distinct = offsets.clone();
    distinct.sort_unstable();
    distinct.dedup();
    // Each distinct offset loaded once. Where the thread's last one lies inside the vector (all
    // but the edge tiles), from one address with constant offsets; else each index clamped to
    // the last element (a value past the extent lands only in values the epilogue never
    // stores).
    let values: Vec<Reg<ty::F32>> = k.regs::<ty::F32>(distinct.len());
    let last_o = distinct.last().copied().unwrap_or(0);
    let inside = k.cmp(CmpOp::Lt, first.clone() + last_o, extent.clone())?;
    k.if_(inside, |k| {
        for (&o, &r) in distinct.iter().zip(&values) {
            let v = x.load_f32(k, first.clone() + o)?;
            scaled_mov(k, r, v, factor)?;
        }
        Ok(())
    })
    .else_(|k| {
        let last = k.let_("vec_last", extent.clone() - 1u32)?;
        for (&o, &r) in distinct.iter().zip(&values) {
            let i = k.eval(first.clone() + o)?;
            let last = k.eval(last)?;
            k.min(i, i, last)?;
            let i = k.bind(name, i);
            let v = x.load_f32(k, i.into())?;
            scaled_mov(k, r, v, factor)?;
        }
        Ok(())
    })?;
    let regs = offsets
        .iter()
        .map(|o| values[distinct.binary_search(o).unwrap_or_default()].as_ref())
        .collect();
    Ok(TileRef::registers(ScalarType::F32, frag.clone(), regs))
}

/// `r = v · factor` (a `mov` where the factor is 1).
fn scaled_mov(k: &mut KernelBuilder, r: Reg<ty::F32>, v: Reg<ty::F32>, factor: f32) -> Result<()> {
    match factor == 1.0 {
        true => k.mov(r, v)?,
        false => k.mul(r, v, factor)?,
    }
    Ok(())
}

/// Refuses `x` unless its shape is `want` (the same extents, as the kernel declared them): a
/// vector or tile of the wrong extent would be indexed past its end or at the wrong elements.
fn expect_shape(k: &KernelBuilder, x: &EpilogueTensor, want: &[Expr], what: &str) -> Result<()> {
    if x.shape() == want {
        return Ok(());
    }
    let show = |e: &[Expr]| {
        let parts: Vec<String> = e.iter().map(|x| k.show(x)).collect();
        format!("[{}]", parts.join(", "))
    };
    Err(k.error(format!(
        "the epilogue's `{}` has shape {}; {what} is {}",
        x.name(),
        show(x.shape()),
        show(want)
    )))
}

/// Fresh f32 registers in the fragment.
fn f32_tile(k: &mut KernelBuilder, frag: &TvLayout) -> TileRef {
    let regs = k
        .regs::<ty::F32>(frag.values() as usize)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    TileRef::registers(ScalarType::F32, frag.clone(), regs)
}

/// The packed 16-bit pairs of a register tile ([`pair_tile`]).
fn tile_regs(k: &KernelBuilder, t: &TileRef) -> Result<Vec<Reg<ty::Bf16x2>>> {
    let bad = || k.error("a register tile of 16-bit pairs expected");
    match &t.base {
        crate::tile::Base::Registers(regs) => regs
            .iter()
            .map(|r| r.retype::<ty::Bf16x2>().map_err(|_| bad()))
            .collect(),
        _ => Err(bad()),
    }
}

/// Fresh 16-bit pairs of `dtype` in the fragment.
pub(crate) fn pair_tile(k: &mut KernelBuilder, frag: &TvLayout, dtype: ScalarType) -> TileRef {
    let regs: Vec<RegRef> = k
        .regs::<ty::Bf16x2>(frag.values() as usize / 2)
        .into_iter()
        .map(|r| r.as_ref())
        .collect();
    TileRef::registers(dtype, frag.clone(), regs)
}

/// How [`fold_tile`] combines a value `v` with the tensor's `r`.
#[derive(Debug, Clone, Copy)]
enum Fold {
    /// `v + r`.
    Add,
    /// `v / 2 + r`, one `fma`: a GELU's half taken in (`gelu_tanh_doubled`).
    HalfAdd,
    /// `alpha·v + beta·r`.
    Linear(Src<ty::F32>, Src<ty::F32>),
}

/// `acc = acc (fold) view` ([`Fold`]). An f32 view is read into f32 registers of the fragment
/// and combined by `elementwise.registers`; a 16-bit view is read as packed pairs
/// (`copy.fragment_view`: pair `j` holds values `2j` and `2j + 1`) and each pair widened
/// ([`widen_pair`]) into its two values just before they are used, so the block never holds a
/// second f32 tile (a 64 x 256 block's would not fit beside the accumulators).
fn fold_tile(
    k: &mut KernelBuilder,
    frag: &TvLayout,
    view: &TileRef,
    acc: &Buffer<ty::F32>,
    fold: Fold,
) -> Result<()> {
    let wg = scope_of(k, frag)?;
    let acc_r = k.tile_ref(acc)?;
    if view.dtype == ScalarType::F32 {
        let old = read_f32(k, frag, view, wg)?;
        let f = match fold {
            Fold::Linear(alpha, beta) => Elementwise::Axpby { alpha, beta },
            Fold::HalfAdd => Elementwise::Fma {
                scale: Src::from(0.5f32),
            },
            Fold::Add => Elementwise::Add,
        };
        k.elementwise(&acc_r, &acc_r, Some(&old), f, wg)?;
        return Ok(());
    }
    // A view in registers (read ahead, `Epilogue::apply_staged`) holds the pairs already.
    let regs: Vec<Reg<ty::Bf16x2>> = if view.storage == Storage::Local {
        tile_regs(k, view)?
    } else {
        let packed = pair_tile(k, frag, view.dtype);
        k.copy(&packed, view, wg)?;
        tile_regs(k, &packed)?
    };
    if regs.len() * 2 != frag.values() as usize {
        return Err(k.error("a register view of another fragment than the accumulator's"));
    }
    let values = regs_of(k, acc)?.to_vec();
    for (&pair, two) in regs.iter().zip(values.chunks(2)) {
        let halves = widen_pair(k, pair, view.dtype)?;
        for (&v, x) in two.iter().zip(halves) {
            match fold {
                Fold::Add => k.add(v, v, x)?,
                Fold::HalfAdd => k.fma(v, v, 0.5f32, x)?,
                Fold::Linear(alpha, beta) => {
                    let t = k.mul_of(x, beta)?;
                    k.fma(v, v, alpha, t)?;
                }
            }
        }
    }
    Ok(())
}

/// A packed pair of 16-bit values of `dtype` as two f32 (low half first): an f16 pair unpacked
/// (`mov.b32 {lo, hi}`, PTX ISA 9.7.9.1) and converted (`cvt.f32.f16`, 9.7.9.21); a bf16 half
/// is the high half of its f32, so one shift or mask each (`Widen::Shift`), where ptxas 13.0
/// makes `cvt.f32.bf16` of a pair's high half a `PRMT` and a shift.
fn widen_pair(
    k: &mut KernelBuilder,
    pair: Reg<ty::Bf16x2>,
    dtype: ScalarType,
) -> Result<[Reg<ty::F32>; 2]> {
    if dtype == ScalarType::F16 {
        let h = [k.reg::<ty::F16>(), k.reg::<ty::F16>()];
        k.mov_unpack(&h, pair)?;
        let f = [k.reg::<ty::F32>(), k.reg::<ty::F32>()];
        k.cvt(f[0], h[0])?;
        k.cvt(f[1], h[1])?;
        return Ok(f);
    }
    let word = k.reg::<ty::B32>();
    k.mov_bits(word, pair)?;
    let f = k.widen_bf16_words(&[word], Widen::Shift)?;
    Ok([f[0], f[1]])
}

/// A block of a tensor read into f32 registers of the fragment (`copy.fragment_view`; a 16-bit
/// tensor through pairs and `cast.registers`).
fn read_f32(
    k: &mut KernelBuilder,
    frag: &TvLayout,
    view: &TileRef,
    wg: ExecScope,
) -> Result<TileRef> {
    let out = f32_tile(k, frag);
    if view.dtype == ScalarType::F32 {
        k.copy(&out, view, wg)?;
    } else {
        let packed = pair_tile(k, frag, view.dtype);
        k.copy(&packed, view, wg)?;
        k.cast(&out, &packed, wg)?;
    }
    Ok(out)
}

/// `view = values` cast to the view's type (a 16-bit view through pairs).
pub(crate) fn write_from_f32(
    k: &mut KernelBuilder,
    frag: &TvLayout,
    view: &TileRef,
    values: &TileRef,
    wg: ExecScope,
) -> Result<()> {
    if view.dtype == ScalarType::F32 {
        k.copy(view, values, wg)?;
        return Ok(());
    }
    let packed = pair_tile(k, frag, view.dtype);
    k.cast(&packed, values, wg)?;
    k.copy(view, &packed, wg)?;
    Ok(())
}

/// Runs `body` on `views` without their bounds where the fragment's block lies wholly inside
/// the output, else on the bounded views: a whole tile's accesses carry no predicates. `body`
/// learns which (`true`: whole). The test reads the first global view's bounds (`rows x cols`
/// left from the block's origin reach `shape`) or, with no global view (none, or only staged
/// blocks in shared memory), `at`'s extents (`row0 + rows of the block <= rows`, the same for
/// columns: no unsigned wrap past the edge).
pub fn whole_or_edge(
    k: &mut KernelBuilder,
    views: &[TileRef],
    [h, w]: [u32; 2],
    at: Option<&FragmentAt>,
    body: impl Fn(&mut KernelBuilder, &[TileRef], bool) -> Result<()>,
) -> Result<()> {
    let full = k.pred();
    let p2 = k.pred();
    // A staged block in shared memory holds the whole block (zeros past the edges): a view in
    // global memory decides.
    let global = views.iter().find(|v| v.storage != Storage::Shared);
    match (global.map(|v| v.bounds.clone()), at) {
        (Some(None), _) => return body(k, views, true),
        (Some(Some([rows, cols])), _) => {
            k.setp(CmpOp::Ge, full, rows.value, h)?;
            k.setp(CmpOp::Ge, p2, cols.value, w)?;
        }
        (None, None) => return Err(k.error("a whole-or-edge branch with no view and no extents")),
        (None, Some(at)) => {
            let (end_r, end_c) = (at.row0.clone() + h, at.col0.clone() + w);
            let (end_r, rows) = (k.eval(end_r)?, k.eval(at.rows.clone())?);
            k.setp(CmpOp::Le, full, end_r, rows)?;
            let (end_c, cols) = (k.eval(end_c)?, k.eval(at.cols.clone())?);
            k.setp(CmpOp::Le, p2, end_c, cols)?;
        }
    }
    k.and(full, full, p2)?;
    let whole: Vec<TileRef> = views
        .iter()
        .map(|v| TileRef {
            bounds: None,
            ..v.clone()
        })
        .collect();
    k.if_(full, |k| body(k, &whole, true))
        .else_(|k| body(k, views, false))
}
