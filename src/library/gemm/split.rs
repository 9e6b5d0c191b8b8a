//! Split-K's second step ([`super::GemmConfig::split_k`]): `C[i, j] = Σ_s partials[s, i, j]`,
//! the parts summed in order `s = 0, 1, ...` (the same order every run, so the result is
//! deterministic: no atomics), in f32, then cast to C's type (`cvt.rn`, PTX ISA 9.7.9.21).
//! One thread per element of C: a row of C per `blockIdx.y`, [`REDUCE_BLOCK`] columns per
//! CTA (the loads of a warp are 128 contiguous bytes of each part).

use ptx_isa::builder::CmpOp;
use ptx_isa::{Reg, ScalarType, Target, ty};

use crate::kernel::{Buffer, BuiltKernel, Elem, Expr, KernelBuilder, Result, TensorOpts, Var};

/// Threads (columns of C) per CTA of the sum.
pub const REDUCE_BLOCK: u32 = 256;

/// The largest M the sum's grid takes (a grid's `y` extent, CUDA's limit of 65535).
pub const MAX_ROWS: usize = 65_535;

/// The kernel summing `partials` `[parts, m, n]` (f32) into `c` `[m, n]` of `output`'s type
/// (bf16, f16 or f32), named `gemm_splitk_sum_{output}`.
pub fn reduce_kernel(output: ScalarType, target: Target) -> Result<BuiltKernel> {
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
        ScalarType::Bf16 => reduce::<ty::Bf16>(target, cast),
        ScalarType::F16 => reduce::<ty::F16>(target, cast),
        ScalarType::F32 => reduce::<ty::F32>(target, |k, c, at, sum| k.store(c, at, sum)),
        other => {
            let k = KernelBuilder::new("gemm_splitk_sum", target);
            Err(k.error(format!(
                "split-K sums into bf16, f16 or f32, not {}",
                other.name()
            )))
        }
    }
}

/// The sum, its result written to `c[row, col]` by `write`.
fn reduce<O: Elem>(
    target: Target,
    write: impl FnOnce(&mut KernelBuilder, &Buffer<O>, [Var; 2], Reg<ty::F32>) -> Result<()>,
) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new(&format!("gemm_splitk_sum_{}", O::DTYPE.name()), target);
    let parts = k.symbol("parts")?;
    let (m, n) = (k.symbol("m")?, k.symbol("n")?);
    let partials = k.tensor::<ty::F32>("partials", [parts, m, n], TensorOpts::default())?;
    let c = k.tensor::<O>("c", [m, n], TensorOpts::default())?;
    let [bx, row] = k.cta_id([Expr::ceil_div(n, REDUCE_BLOCK), Expr::from(m)])?;
    let [t] = k.thread_id([REDUCE_BLOCK])?;
    let col = k.let_("col", Expr::from(bx) * REDUCE_BLOCK + t)?;
    let inside = k.cmp(CmpOp::Lt, col, n)?;
    k.if_(inside, |k| {
        let sum = k.reg::<ty::F32>();
        k.mov(sum, 0.0f32)?;
        k.for_range(0u32, parts, |k, s| {
            let v = k.load(&partials, [Expr::from(s), row.into(), col.into()])?;
            k.add(sum, sum, v)?;
            Ok(())
        })?;
        write(k, &c, [row, col], sum)
    })
    .end()?;
    k.finish()
}
