//! GPU check of composed GEMM epilogues ([`crate::parts::Epilogue`] on
//! [`HopperGemm::with_epilogue`]): every op kind, with the TMA-store and the register epilogue
//! and on epilogue warps ([`GemmConfig::epilogue_warps`]: the reference then rounds the
//! accumulator to bf16 first, as the kernel does), at shapes with edges in M, N and K, against
//! an f64 host reference of the same inputs, the outputs poisoned first.
//!
//! Each kernel declares the same extra tensors (a column vector `colv` `[n]` f32, a row vector
//! `rowv` `[m]` bf16, a residual `res` `[m, n]` bf16, an extra output `aux` `[m, n]` f32 and an
//! `amax` `[1]` f32), and each case composes some of them:
//!
//! - `scale·v ⊙ colv[col]`, ReLU, `+ rowv[row]`;
//! - SiLU, a closure of the element's row and column, stored to `aux`, the amax;
//! - GELU (erf), `0.5·v + 2·res`, GELU (tanh) (the residual `+ res` is `examples/gemm_epilogue.rs`'s);
//! - `+ rowv[row]`, SiLU, added in place ([`Epilogue::accumulate`]: C holds `res` before the
//!   launch, the TMA store's reduction adds the bf16 output to it; the reference rounds the
//!   output to bf16, then the sum; an element whose sum must move off `res` by more than 2⁻⁶ of
//!   it and by more than 2⁻⁶ (not the approximate tails' 10⁻⁶ on a residual near 0), and does
//!   not, fails the case). Only where C is stored by TMA (not the register f32 C).

use half::bf16;
use ptx_isa::{Target, ty};

use super::ctx::{GpuCtx, Report, RunResult};
use crate::kernel::{KernelBuilder, Result, TensorOpts};
use crate::library::gemm::check::rel_error;
use crate::library::gemm::{GemmConfig, GemmKernel, HopperGemm};
use crate::parts::{Activation, Combine, Element, Epilogue};
use crate::runtime::{Arg, DeviceTensor};
use smem::pipeline::sync::WaitMode;

/// The epilogue compositions checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    ScaleColsReluRows,
    SiluMapStoreAmax,
    GeluLinearGelu,
    RowsSiluInPlace,
}

impl Case {
    const ALL: [Case; 4] = [
        Case::ScaleColsReluRows,
        Case::SiluMapStoreAmax,
        Case::GeluLinearGelu,
        Case::RowsSiluInPlace,
    ];

    /// Whether the case adds its output to C in place (C stored by TMA only).
    fn in_place(self) -> bool {
        self == Case::RowsSiluInPlace
    }

    /// The closure's term: `v + row / 1024 - col / 2048`.
    fn map(
        k: &mut KernelBuilder,
        v: ptx_isa::Reg<ty::F32>,
        at: &Element,
    ) -> Result<ptx_isa::Reg<ty::F32>> {
        let (r, c) = (k.eval(at.row.clone())?, k.eval(at.col.clone())?);
        let (rf, cf) = (k.reg::<ty::F32>(), k.reg::<ty::F32>());
        k.cvt(rf, r)?;
        k.cvt(cf, c)?;
        let t = k.fma_of(rf, 1.0f32 / 1024.0, v)?;
        k.fma_of(cf, -1.0f32 / 2048.0, t)
    }

    /// The host's value of the case at `(r, c)` for the accumulator `v`, with `aux` (the stored
    /// value, where the case stores one).
    fn reference(self, v: f64, r: usize, c: usize, x: &Host) -> (f64, Option<f64>) {
        let n = x.n;
        match self {
            Case::ScaleColsReluRows => {
                let y = (0.5 * v * x.colv[c]).max(0.0) + x.rowv[r];
                (y, None)
            }
            Case::SiluMapStoreAmax => {
                let s = Activation::Silu.reference(v);
                let y = s + r as f64 / 1024.0 - c as f64 / 2048.0;
                (y, Some(y))
            }
            Case::GeluLinearGelu => {
                let res = x.res[r * n + c];
                let y = 0.5 * Activation::GeluErf.reference(v) + 2.0 * res;
                (Activation::GeluTanh.reference(y), None)
            }
            Case::RowsSiluInPlace => {
                // torch eager's `c += silu(v + rowv)` in bf16: the output rounded, then the sum.
                let y = bf16::from_f64(Activation::Silu.reference(v + x.rowv[r]));
                let sum = bf16::from_f32(y.to_f32() + x.res[r * n + c] as f32);
                (f64::from(sum.to_f32()), None)
            }
        }
    }
}

/// The host's copies of the extra inputs.
struct Host {
    n: usize,
    colv: Vec<f64>,
    rowv: Vec<f64>,
    res: Vec<f64>,
}

/// The GEMM of `cfg` (bf16 in, `O` out) with `case`'s epilogue over the extra tensors.
fn build<O: crate::kernel::Elem>(cfg: GemmConfig, case: Case) -> Result<GemmKernel> {
    let mut k = KernelBuilder::new(&format!("gemm_epilogue_{case:?}"), Target::Sm90a);
    let gemm = HopperGemm::<ty::Bf16, O>::declare(&mut k, cfg, WaitMode::Spin)?;
    let (m, n) = (gemm.m(), gemm.n());
    let colv = k.tensor::<ty::F32>("colv", [n], TensorOpts::default())?;
    let rowv = k.tensor::<ty::Bf16>("rowv", [m], TensorOpts::default())?;
    let res = k.tensor::<ty::Bf16>("res", [m, n], TensorOpts::default().align(16))?;
    let aux = k.tensor::<ty::F32>("aux", [m, n], TensorOpts::default().align(16))?;
    let amax = k.tensor::<ty::F32>("amax", [1u32], TensorOpts::default())?;
    let epi = match case {
        Case::ScaleColsReluRows => Epilogue::new()
            .scale(0.5f32)
            .cols(&colv, Combine::Mul)
            .activation(Activation::Relu)
            .rows(&rowv, Combine::Add),
        Case::SiluMapStoreAmax => Epilogue::new()
            .activation(Activation::Silu)
            .map(Case::map)
            .store(&aux)
            .amax(&amax),
        Case::GeluLinearGelu => Epilogue::new()
            .activation(Activation::GeluErf)
            .linear(&res, 0.5f32, 2.0f32)
            .activation(Activation::GeluTanh),
        Case::RowsSiluInPlace => Epilogue::new()
            .rows(&rowv, Combine::Add)
            .activation(Activation::Silu)
            .accumulate(),
    };
    gemm.with_epilogue(epi).build(k)
}

/// The module of the first case with the TMA-store epilogue: what `ptxkit dump gemm_epilogue`
/// writes.
pub fn module(target: Target) -> ptx_isa::Result<ptx_isa::Module> {
    if target != Target::Sm90a {
        return Err(ptx_isa::Error::new(
            ptx_isa::ErrorKind::Invalid,
            format!("the Hopper GEMM's epilogue check is built for sm_90a, not {target}"),
        ));
    }
    build::<ty::Bf16>(GemmConfig::large(), Case::ScaleColsReluRows)
        .map(|g| g.built.into_module())
        .map_err(|e| ptx_isa::Error::new(ptx_isa::ErrorKind::Invalid, e.to_string()))
}

/// Runs every case on both epilogue paths at two shapes with edges.
pub fn run(ctx: &mut GpuCtx) -> RunResult {
    let large = GemmConfig::large();
    let configs = [
        large,
        GemmConfig {
            tma_store: false,
            output: ptx_isa::ScalarType::F32,
            ..large
        },
        large.with_epilogue_warps(),
    ];
    let shapes = [(300usize, 520usize, 136usize), (257, 384, 200)];
    let mut worst: f64 = 0.0;
    let mut cases = 0;
    for &(m, n, kk) in &shapes {
        let a_h = ctx.rng.vec_bf16(m * kk);
        let b_h = ctx.rng.vec_bf16(n * kk);
        let host = Host {
            n,
            colv: ctx.rng.vec_f32(n).into_iter().map(f64::from).collect(),
            rowv: ctx
                .rng
                .vec_f32(m)
                .into_iter()
                .map(|x| f64::from(bf16::from_f32(x).to_f32()))
                .collect(),
            res: ctx
                .rng
                .vec_f32(m * n)
                .into_iter()
                .map(|x| f64::from(bf16::from_f32(x).to_f32()))
                .collect(),
        };
        // A·Bᵀ in f64 of the bf16 inputs.
        let mut acc = vec![0.0f64; m * n];
        for r in 0..m {
            for c in 0..n {
                let (ar, bc) = (&a_h[r * kk..(r + 1) * kk], &b_h[c * kk..(c + 1) * kk]);
                acc[r * n + c] = ar
                    .iter()
                    .zip(bc)
                    .map(|(x, y)| f64::from(x.to_f32()) * f64::from(y.to_f32()))
                    .sum();
            }
        }
        let a = ctx.upload(&a_h, &[m, kk])?;
        let b = ctx.upload(&b_h, &[n, kk])?;
        let colv_h: Vec<f32> = host.colv.iter().map(|&x| x as f32).collect();
        let colv = ctx.upload(&colv_h, &[n])?;
        let rowv_h: Vec<bf16> = host.rowv.iter().map(|&x| bf16::from_f64(x)).collect();
        let rowv = ctx.upload(&rowv_h, &[m])?;
        let res_h: Vec<bf16> = host.res.iter().map(|&x| bf16::from_f64(x)).collect();
        let res = ctx.upload(&res_h, &[m, n])?;
        for cfg in configs {
            for case in Case::ALL
                .into_iter()
                .filter(|c| cfg.tma_store || !c.in_place())
            {
                let mut aux = ctx.poisoned(&[m, n])?;
                let mut amax = ctx.upload(&[0.0f32], &[1])?;
                let (got, want_out): (Vec<f64>, Vec<f64>);
                let mut want_aux = vec![0.0f64; m * n];
                let mut want = vec![0.0f64; m * n];
                for r in 0..m {
                    for c in 0..n {
                        // Epilogue warps see the accumulator rounded to C's bf16.
                        let v = match cfg.epilogue_warps {
                            true => f64::from(bf16::from_f64(acc[r * n + c])),
                            false => acc[r * n + c],
                        };
                        let (y, x) = case.reference(v, r, c, &host);
                        want[r * n + c] = y;
                        if let Some(x) = x {
                            want_aux[r * n + c] = x;
                        }
                    }
                }
                let tol = if cfg.output == ptx_isa::ScalarType::F32 {
                    1e-4
                } else {
                    1e-2
                };
                let ins = Inputs {
                    ab: [&a, &b],
                    colv: &colv,
                    rowv: &rowv,
                    res: &res,
                };
                let outs = (&mut aux, &mut amax);
                // In place, C starts as the residual; else poisoned.
                let c0 = match case.in_place() {
                    true => res_h.clone(),
                    false => vec![POISON; m * n],
                };
                got = match cfg.output {
                    ptx_isa::ScalarType::F32 => {
                        run_case::<ty::F32, f32>(ctx, cfg, case, &ins, vec![f32::NAN; m * n], outs)?
                    }
                    _ => run_case::<ty::Bf16, bf16>(ctx, cfg, case, &ins, c0, outs)?,
                };
                want_out = want;
                let mut err = rel_error(&got, &want_out) / tol;
                if got.iter().any(|x| x.is_nan()) {
                    err = f64::INFINITY;
                }
                // In place: an element whose sum must leave the residual and did not was never
                // added to.
                if case.in_place() {
                    let not_added = (got.iter().zip(&want_out).zip(&host.res))
                        .filter(|((g, w), r)| (*w - *r).abs() > r.abs().max(1.0) / 64.0 && g == r)
                        .count();
                    if not_added > 0 {
                        err = f64::INFINITY;
                    }
                }
                if case == Case::SiluMapStoreAmax {
                    let aux_got: Vec<f64> =
                        ctx.download(&aux)?.into_iter().map(f64::from).collect();
                    err = err.max(rel_error(&aux_got, &want_aux) / 1e-4);
                    if aux_got.iter().any(|x| x.is_nan()) {
                        err = f64::INFINITY;
                    }
                    let amax_want = want_aux.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                    let amax_got = f64::from(ctx.download(&amax)?[0]);
                    err = err.max(((amax_got - amax_want) / amax_want).abs() / 1e-4);
                }
                if err.is_nan() || err > 1.0 {
                    return Ok(Report {
                        max_err: err,
                        tolerance: 1.0,
                        detail: format!(
                            "{case:?} {} at {m}x{n}x{kk}: error / tolerance {err:.3e}",
                            cfg.name()
                        ),
                    });
                }
                worst = worst.max(err);
                cases += 1;
            }
        }
    }
    Ok(Report {
        max_err: worst,
        tolerance: 1.0,
        detail: format!(
            "{cases} cases: scale, column and row vectors, ReLU, SiLU, GELU tanh/erf, a closure of (row, col), a residual, alpha/beta, an extra output, amax, C accumulated in place (TMA reduction); TMA-store bf16, register f32 C and epilogue warps; 300x520x136, 257x384x200; error / tolerance"
        ),
    })
}

/// A 16-bit NaN no result can be: what an element the kernel must not touch keeps.
const POISON: bf16 = bf16::from_bits(0x7FC1);

/// The GEMM's operands and the epilogue's inputs of one shape.
struct Inputs<'a> {
    ab: [&'a DeviceTensor<bf16>; 2],
    colv: &'a DeviceTensor<f32>,
    rowv: &'a DeviceTensor<bf16>,
    res: &'a DeviceTensor<bf16>,
}

/// Builds and launches `case`'s kernel (C of `O`, host type `H`) on C filled with `c0` (poison,
/// or the residual for a case in place), the GEMM's operands and the extra tensors in their declared order (`aux` and `amax` the
/// outputs); returns C.
fn run_case<O: crate::kernel::Elem, H: crate::runtime::Element + Into<f64>>(
    ctx: &GpuCtx,
    cfg: GemmConfig,
    case: Case,
    ins: &Inputs<'_>,
    c0: Vec<H>,
    (aux, amax): (&mut DeviceTensor<f32>, &mut DeviceTensor<f32>),
) -> std::result::Result<Vec<f64>, super::ctx::GpuCheckError> {
    let kernel = ctx.load(&build::<O>(cfg, case)?.built)?;
    let [a, b] = ins.ab;
    let (m, n) = (a.shape()[0], b.shape()[0]);
    let mut c = ctx.upload(&c0, &[m, n])?;
    let mut args = [
        Arg::tensor(a),
        Arg::tensor(b),
        Arg::tensor_mut(&mut c),
        Arg::tensor(ins.colv),
        Arg::tensor(ins.rowv),
        Arg::tensor(ins.res),
        Arg::tensor_mut(aux),
        Arg::tensor_mut(amax),
    ];
    kernel.launch(&ctx.stream, &mut args)?;
    ctx.stream.synchronize()?;
    Ok(ctx.download(&c)?.into_iter().map(Into::into).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every case on the three epilogue paths assembles with ptxas, without spills.
    #[test]
    fn every_case_assembles_without_spills() {
        let Some(ptxas) = ptx_isa::ptxas::for_tests().unwrap() else {
            return;
        };
        let large = GemmConfig::large();
        let register = GemmConfig {
            tma_store: false,
            output: ptx_isa::ScalarType::F32,
            ..large
        };
        for case in Case::ALL {
            let mut kernels = vec![
                build::<ty::Bf16>(large, case).unwrap(),
                build::<ty::Bf16>(large.with_epilogue_warps(), case).unwrap(),
            ];
            match build::<ty::F32>(register, case) {
                Ok(g) => kernels.push(g),
                // C from registers cannot accumulate in place: refused, naming the op.
                Err(e) => assert!(case.in_place() && e.to_string().contains("Accumulate")),
            }
            for ptx in kernels.iter().map(|g| g.built.ptx()) {
                let out = ptxas.assemble(ptx, Target::Sm90a, &["-v"]).unwrap();
                assert!(out.ok, "{case:?}: {}", out.log);
                assert!(
                    out.log.contains(" 0 bytes spill stores"),
                    "{case:?}: {}",
                    out.log
                );
                assert!(!out.log.contains("Performance"), "{case:?}: {}", out.log);
            }
        }
    }
}
