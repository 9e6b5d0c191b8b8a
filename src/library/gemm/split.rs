//! Split-K's second step ([`super::GemmConfig::split_k`]): `C[i, j] = Σ_s partials[s, i, j]`,
//! the parts summed in order `s = 0, 1, ...` (the same order every run, so the result is
//! deterministic: no atomics), in f32, then cast to C's type (`cvt.rn`, PTX ISA 9.7.9.21).
//! One thread per element of C: a row of C per `blockIdx.y`, [`REDUCE_BLOCK`] columns per
//! CTA (the loads of a warp are 128 contiguous bytes of each part). The kernel is built for
//! its number of parts, so a thread issues the loads of all parts before the first add (one
//! wait for L2, not one per part); the adds keep the parts' order. It is launched as a
//! programmatic dependent of the GEMM (`griddepcontrol`, PTX ISA 9.7.13.13): it may be
//! scheduled before the GEMM ends, and reads the parts once the GEMM has completed.

use ptx_isa::builder::CmpOp;
use ptx_isa::{Reg, ScalarType, Target, ty};

use crate::kernel::{Buffer, BuiltKernel, Elem, Expr, KernelBuilder, Result, TensorOpts, Var};

/// Threads (columns of C) per CTA of the sum.
pub const REDUCE_BLOCK: u32 = 256;

/// The largest M the sum's grid takes (a grid's `y` extent, CUDA's limit of 65535).
pub const MAX_ROWS: usize = 65_535;

/// The kernel summing `partials` `[parts, m, n]` (f32) into `c` `[m, n]` of `output`'s type
/// (bf16, f16 or f32), named `gemm_splitk{parts}_sum_{output}`; `parts` from 2 to 16
/// ([`super::GemmConfig::split_k`]).
pub fn reduce_kernel(output: ScalarType, parts: u32, target: Target) -> Result<BuiltKernel> {
    fn cast<O: Elem>(
        k: &mut KernelBuilder,
        c: &Buffer<O>,
        at: [Var; 2],
        sum: Reg<ty::F32>,
    ) -> Result<()> {
        let out = k.reg::<O>();
        k.cvt(out, sum)?;
        k.store(c, at, out)
    }
    match output {
        ScalarType::Bf16 => reduce::<ty::Bf16>(target, parts, cast),
        ScalarType::F16 => reduce::<ty::F16>(target, parts, cast),
        ScalarType::F32 => reduce::<ty::F32>(target, parts, |k, c, at, sum| k.store(c, at, sum)),
        other => {
            let k = KernelBuilder::new("gemm_splitk_sum", target);
            Err(k.error(format!(
                "split-K sums into bf16, f16 or f32, not {}",
                other.name()
            )))
        }
    }
}

/// The sum of `parts` parts, its result written to `c[row, col]` by `write`.
fn reduce<O: Elem>(
    target: Target,
    parts: u32,
    write: impl FnOnce(&mut KernelBuilder, &Buffer<O>, [Var; 2], Reg<ty::F32>) -> Result<()>,
) -> Result<BuiltKernel> {
    let name = format!("gemm_splitk{parts}_sum_{}", O::DTYPE.name());
    let mut k = KernelBuilder::new(&name, target);
    if !(2..=16).contains(&parts) {
        return Err(k.error(format!("split-K sums 2 to 16 parts, not {parts}")));
    }
    let (m, n) = (k.symbol("m")?, k.symbol("n")?);
    let shape = [Expr::from(parts), m.into(), n.into()];
    let partials = k.tensor::<ty::F32>("partials", shape, TensorOpts::default())?;
    let c = k.tensor::<O>("c", [m, n], TensorOpts::default())?;
    let [bx, row] = k.cta_id([Expr::ceil_div(n, REDUCE_BLOCK), Expr::from(m)])?;
    let [t] = k.thread_id([REDUCE_BLOCK])?;
    let col = k.let_("col", Expr::from(bx) * REDUCE_BLOCK + t)?;
    // Launched as a programmatic dependent of the GEMM: the parts are read once it has
    // completed and its writes are visible (PTX ISA 9.7.13.13; at once for an ordinary launch).
    k.isa().griddepcontrol_wait()?;
    let inside = k.cmp(CmpOp::Lt, col, n)?;
    k.if_(inside, |k| {
        // Every part's value loaded first, then added in the parts' order (from 0, as the
        // in-kernel fixup adds them: the same bits).
        let values = (0..parts)
            .map(|s| k.load(&partials, [Expr::from(s), row.into(), col.into()]))
            .collect::<Result<Vec<_>>>()?;
        let sum = k.reg::<ty::F32>();
        k.mov(sum, 0.0f32)?;
        for v in values {
            k.add(sum, sum, v)?;
        }
        write(k, &c, [row, col], sum)
    })
    .end()?;
    k.finish()
}
