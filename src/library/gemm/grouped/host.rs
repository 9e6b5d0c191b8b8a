//! Running the grouped GEMM: the built kernel loaded, its operands checked against each other and
//! the configuration (typed errors, before anything is enqueued), C's TMA view encoded over C's
//! memory, and the persistent grid sized from the shapes.

use std::sync::Arc;

use smem::pipeline::sync::WaitMode;

use ptx_isa::ScalarType;

use super::Grouping;
use crate::library::gemm::{GemmConfig, GemmError, SCALE_BLOCK, Scaling};
use crate::runtime::cuda::CudaStream;
use crate::runtime::{
    Arg, Device, JitOptions, LoadedKernel, RuntimeError, TensorDesc, TensorMut, TensorRef,
    tma_map_desc,
};

/// Why a grouped GEMM did not run.
#[derive(Debug, thiserror::Error)]
pub enum GroupedGemmError {
    /// Building or loading the kernel failed.
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// The launch failed (or the launcher refused an argument).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The configuration is not a grouped one ([`GemmConfig::grouping`] is `None`).
    #[error("{0} is not a grouped GEMM configuration")]
    NotGrouped(String),
    /// An operand whose shape or type does not fit the others or the configuration.
    #[error("grouped GEMM operand `{operand}`: {reason}")]
    Operand {
        /// `a`, `b`, `c`, `offs`, `counts`, `scale_a` or `scale_b`.
        operand: &'static str,
        /// What is wrong, with the shapes seen.
        reason: String,
    },
}

/// The extents of one grouped launch, read from its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupedShape {
    /// M_total (contiguous) or M_cap (masked).
    pub m: usize,
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    /// The number of groups G.
    pub groups: usize,
}

/// A loaded grouped GEMM kernel for one configuration.
pub struct GroupedGemm {
    cfg: GemmConfig,
    kernel: LoadedKernel,
    device: Device,
}

impl GroupedGemm {
    /// Builds the kernel of `cfg` (its [`GemmConfig::grouping`] must be a grouped one) and loads
    /// it on `device`.
    pub fn new(device: &Device, cfg: GemmConfig) -> Result<GroupedGemm, GroupedGemmError> {
        if cfg.grouping == Grouping::None {
            return Err(GroupedGemmError::NotGrouped(cfg.name()));
        }
        let built =
            crate::library::gemm::build_with(&cfg, WaitMode::Spin).map_err(GemmError::from)?;
        let kernel = built.built.load(device, &JitOptions::default())?;
        Ok(GroupedGemm {
            cfg,
            kernel,
            device: device.clone(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &GemmConfig {
        &self.cfg
    }

    /// The loaded kernel.
    pub fn kernel(&self) -> &LoadedKernel {
        &self.kernel
    }

    /// `C_g = A_g·B_gᵀ` for every group, on `stream`, without waiting for it. Contiguous: A
    /// `[M_total, K]`, B `[G, N, K]`, `rows` = `offs` (int32 `[G]`, the cumulative row ends,
    /// non-decreasing, the last M_total), C `[M_total, N]`. Masked: A `[G, M_cap, K]`, B
    /// `[G, N, K]`, `rows` = `counts` (int32 `[G]`, each at most M_cap), C `[G, M_cap, N]`, whose
    /// rows past each count are left as they were. All row-major; A, B and C are read and written
    /// through tensor maps of their own addresses, so they must be 16-byte aligned and K a multiple
    /// of 8. No rows at all (M_total or M_cap of 0) is nothing to do. The row array is read on the
    /// device, so its values are not checked here: the kernel clamps them into range.
    ///
    /// `scales` are `[scale_a, scale_b]` exactly when the kernel is the grouped block-scaled FP8
    /// GEMM ([`Scaling::Block`], DeepSeek-V3's scales; else [`GemmError::ScalingMismatch`]):
    /// `C_g[i, j] = Σ_kb sa[kb, i]·sb_g[j / 128, kb]·Σ_{k in kb} A_g[i, k]·B_g[j, k]` (A and B
    /// 8-bit, K a multiple of 16), with `scale_a` (f32) `[ceil(K/128), M_total]` indexed by A's
    /// global row for the contiguous form, `[G, ceil(K/128), M_cap]` for the masked one, and
    /// `scale_b` (f32) `[G, ceil(N/128), ceil(K/128)]`, one grid per group's B. Wrong scale
    /// shapes are [`GroupedGemmError::Operand`] naming the scale, before anything is enqueued.
    pub fn run(
        &self,
        stream: &Arc<CudaStream>,
        a: &TensorRef<'_>,
        b: &TensorRef<'_>,
        rows: &TensorRef<'_>,
        scales: Option<[&TensorRef<'_>; 2]>,
        mut c: TensorMut<'_>,
    ) -> Result<(), GroupedGemmError> {
        let shape = check_grouped(&self.cfg, a.desc(), b.desc(), rows.desc(), c.desc())?;
        check_block_scales(
            &self.cfg,
            &shape,
            scales.map(|[sa, sb]| [sa.desc(), sb.desc()]),
        )?;
        if shape.m == 0 {
            return Ok(());
        }
        // C's TMA view: a map over C's own memory in the box the kernel declared it with.
        let c_map = if self.cfg.tma_store {
            let desc = tma_map_desc(
                "c_map",
                self.cfg.output,
                &super::c_box(self.cfg.grouping),
                c.desc(),
            )?;
            Some(self.device.encode_tensor_map(&desc)?)
        } else {
            None
        };
        let mut args: Vec<Arg<'_>> = vec![a.clone().into(), b.clone().into(), c.reborrow().into()];
        if let Some(map) = &c_map {
            args.push(Arg::tensor_map(map));
        }
        args.push(rows.clone().into());
        if let Some([sa, sb]) = scales {
            args.push(sa.clone().into());
            args.push(sb.clone().into());
        }
        // The launch checks the arguments against the signature and derives the grid from the
        // extents they carry (m, n, k, g), the persistent grid sized to the device's residency.
        self.kernel.launch(stream, &mut args)?;
        Ok(())
    }
}

/// Checks a grouped launch's block scales against `cfg` and `shape`: given exactly when the
/// kernel was built with [`Scaling::Block`] ([`GemmError::ScalingMismatch`]), and then f32
/// `scale_a` `[kb, M_total]` (contiguous) or `[G, kb, M_cap]` (masked) and `scale_b` `[G, nb,
/// kb]` with `kb = ceil(K / 128)`, `nb = ceil(N / 128)` ([`GroupedGemmError::Operand`]).
pub fn check_block_scales(
    cfg: &GemmConfig,
    shape: &GroupedShape,
    scales: Option<[&TensorDesc; 2]>,
) -> Result<(), GroupedGemmError> {
    let [sa, sb] = match (scales, cfg.scaling) {
        (None, Scaling::Block) => {
            return Err(GemmError::ScalingMismatch {
                given: "no",
                built: Scaling::Block,
            }
            .into());
        }
        (Some(_), built @ (Scaling::None | Scaling::PerTensor)) => {
            return Err(GemmError::ScalingMismatch {
                given: "block",
                built,
            }
            .into());
        }
        (None, _) => return Ok(()),
        (Some(scales), Scaling::Block) => scales,
    };
    let block = SCALE_BLOCK as usize;
    let (kb, nb, g) = (
        shape.k.div_ceil(block),
        shape.n.div_ceil(block),
        shape.groups,
    );
    let want_a = match cfg.grouping {
        Grouping::Masked => vec![g, kb, shape.m],
        _ => vec![kb, shape.m],
    };
    for (operand, t, want) in [("scale_a", sa, want_a), ("scale_b", sb, vec![g, nb, kb])] {
        if t.shape != want || t.dtype != ScalarType::F32 {
            return Err(GroupedGemmError::Operand {
                operand,
                reason: format!(
                    "{} {:?}: want f32 {want:?} (blocks of {block} of K and N)",
                    t.dtype.name(),
                    t.shape
                ),
            });
        }
    }
    Ok(())
}

/// Checks a grouped launch's operands against `cfg` and each other and returns its extents: the
/// shapes [`GroupedGemm::run`] names (A and B of the input type, `rows` int32 `[G]`, C of the
/// output type), `G >= 1`, `K > 0` and a multiple of 16 bytes (16-byte rows for the tensor maps), N's
/// parity and multiple as the kernel was built. Alignment, devices and the tensor-map rules are
/// the launcher's checks.
pub fn check_grouped(
    cfg: &GemmConfig,
    a: &TensorDesc,
    b: &TensorDesc,
    rows: &TensorDesc,
    c: &TensorDesc,
) -> Result<GroupedShape, GroupedGemmError> {
    let bad = |operand: &'static str, reason: String| GroupedGemmError::Operand { operand, reason };
    let masked = cfg.grouping == Grouping::Masked;
    let rows_name = cfg.grouping.rows_name();
    let (sa, sb, sr, sc) = (&a.shape, &b.shape, &rows.shape, &c.shape);
    if sb.len() != 3 {
        return Err(bad("b", format!("B {sb:?}: want [G, N, K]")));
    }
    let (groups, n, k) = (sb[0], sb[1], sb[2]);
    if *sr != [groups] {
        return Err(bad(
            if masked { "counts" } else { "offs" },
            format!("{rows_name} {sr:?}: want [G] = [{groups}] (B is {sb:?})"),
        ));
    }
    let m = match (masked, sa.as_slice()) {
        (false, &[m, ka]) if ka == k => m,
        (true, &[ga, m, ka]) if ga == groups && ka == k => m,
        _ => {
            let want = if masked {
                "[G, M_cap, K]"
            } else {
                "[M_total, K]"
            };
            return Err(bad("a", format!("A {sa:?}: want {want} with B {sb:?}")));
        }
    };
    let want_c = if masked {
        vec![groups, m, n]
    } else {
        vec![m, n]
    };
    if *sc != want_c {
        return Err(bad("c", format!("C {sc:?}: want {want_c:?}")));
    }
    if a.dtype != cfg.input || b.dtype != cfg.b_type() {
        return Err(bad(
            "a",
            format!(
                "A is {}, B {}; this kernel takes {}",
                a.dtype.name(),
                b.dtype.name(),
                cfg.input.name()
            ),
        ));
    }
    if rows.dtype != ScalarType::S32 {
        return Err(bad(
            if masked { "counts" } else { "offs" },
            format!("{} elements: want int32", rows.dtype.name()),
        ));
    }
    if c.dtype != cfg.output {
        return Err(bad(
            "c",
            format!(
                "C is {}; this kernel writes {}",
                c.dtype.name(),
                cfg.output.name()
            ),
        ));
    }
    if groups == 0 {
        return Err(bad("b", "G = 0 groups".into()));
    }
    let k_multiple = 16 / cfg.input.bytes().max(1) as usize;
    if k == 0 || k % k_multiple != 0 {
        return Err(bad(
            "a",
            format!(
                "k = {k}: a positive multiple of {k_multiple} (16-byte rows for the tensor maps)"
            ),
        ));
    }
    if n == 0 || (n % 2 == 0) != cfg.n_even || (cfg.tma_store && n % 8 != 0) {
        return Err(bad(
            "b",
            format!(
                "n = {n}, but the kernel was built for {}",
                if cfg.tma_store {
                    "a multiple of 8"
                } else if cfg.n_even {
                    "an even N"
                } else {
                    "an odd N"
                }
            ),
        ));
    }
    Ok(GroupedShape { m, n, k, groups })
}
