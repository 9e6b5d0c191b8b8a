//! Math on register values, written as a kernel author reads it: each call takes its inputs and
//! returns a fresh register with the result (`let e = k.exp(x)?`), so values flow without
//! pre-declared destinations. Transcendentals use the SFU's approximations with the scale folded
//! in (PTX ISA 9.7.3.21 `ex2`, 9.7.3.20 `lg2`: `ex2.approx.ftz.f32` has a maximum relative error
//! of 2^-22 over its range, `lg2.approx` an absolute error of 2^-22 near 1), the rest are single
//! IEEE instructions (9.7.3 "Floating-Point Instructions"). `select` is `selp` (9.7.7.2).
//!
//! The raw builder's destination-first forms (`k.max(d, a, b)`, `k.rsqrt(d, a)`) stay one `Deref`
//! away; the methods here carry an `_of` suffix where a raw form has the plain name.

use ptx_isa::{Pred, Reg, Src, ty};

use super::KernelBuilder;
use super::error::Result;

/// `log2(e)`: `exp(x) = 2^(x * log2(e))`.
pub const LOG2_E: f32 = std::f32::consts::LOG2_E;
/// `ln(2)`: `ln(x) = log2(x) * ln(2)`.
pub const LN_2: f32 = std::f32::consts::LN_2;

impl KernelBuilder {
    /// `2^x` (`ex2.approx.ftz.f32`).
    pub fn exp2(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let d = self.f.reg::<ty::F32>();
        self.f.ex2(d, x)?;
        Ok(d)
    }

    /// `2^(x * scale + bias)`: one `fma` and one `ex2`, the form an online softmax uses
    /// (`exp((x - max) * s)` is `2^(x * s*log2e - max * s*log2e)`).
    pub fn exp2_fma(
        &mut self,
        x: impl Into<Src<ty::F32>>,
        scale: impl Into<Src<ty::F32>>,
        bias: impl Into<Src<ty::F32>>,
    ) -> Result<Reg<ty::F32>> {
        let t = self.f.reg::<ty::F32>();
        self.f.fma(t, x, scale, bias)?;
        self.exp2(t)
    }

    /// `e^x` as `2^(x * log2 e)` (`mul` + `ex2.approx.ftz.f32`).
    pub fn exp(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let t = self.f.reg::<ty::F32>();
        self.f.mul(t, x, LOG2_E)?;
        self.exp2(t)
    }

    /// `log2(x)` (`lg2.approx.ftz.f32`).
    pub fn log2(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let d = self.f.reg::<ty::F32>();
        self.f.lg2(d, x)?;
        Ok(d)
    }

    /// `ln(x)` as `log2(x) * ln 2`.
    pub fn log(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let t = self.log2(x)?;
        self.f.mul(t, t, LN_2)?;
        Ok(t)
    }

    /// `sqrt(x)` (`sqrt.approx.ftz.f32`).
    pub fn sqrt_of(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let d = self.f.reg::<ty::F32>();
        self.f.sqrt_approx(d, x)?;
        Ok(d)
    }

    /// `1 / sqrt(x)` (`rsqrt.approx.ftz.f32`).
    pub fn rsqrt_of(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let d = self.f.reg::<ty::F32>();
        self.f.rsqrt(d, x)?;
        Ok(d)
    }

    /// `1 / x` (`rcp.approx.ftz.f32`).
    pub fn rcp_of(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
        let d = self.f.reg::<ty::F32>();
        self.f.rcp_approx(d, x)?;
        Ok(d)
    }

    /// `a * b + c` (`fma.rn`).
    pub fn fma_of<T: ty::Float>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.fma(d, a, b, c)?;
        Ok(d)
    }

    /// `a * b` (`mul.rn` for floats).
    pub fn mul_of<T: ty::Float>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.mul(d, a, b)?;
        Ok(d)
    }

    /// `a + b`.
    pub fn add_of<T: ty::RegType>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.add(d, a, b)?;
        Ok(d)
    }

    /// `a - b`.
    pub fn sub_of<T: ty::RegType>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.sub(d, a, b)?;
        Ok(d)
    }

    /// `max(a, b)`.
    pub fn max_of<T: ty::RegType>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.max(d, a, b)?;
        Ok(d)
    }

    /// `min(a, b)`.
    pub fn min_of<T: ty::RegType>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.min(d, a, b)?;
        Ok(d)
    }

    /// `p ? a : b` (`selp`): a value out of a condition, with no branch.
    pub fn select<T: ty::RegType>(
        &mut self,
        p: Pred,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        self.f.selp(d, a, b, p)?;
        Ok(d)
    }

    /// `x / (1 + e^-x)` (SiLU, the gate of SwiGLU): `ex2`, `add`, `rcp`, `mul`.
    pub fn silu(&mut self, x: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let e = self.exp2_fma(x, -LOG2_E, 0.0f32)?;
        self.f.add(e, e, 1.0f32)?;
        let r = self.rcp_of(e)?;
        self.mul_of(x, r)
    }

    /// Every CTA thread waits here until all have arrived (`bar.sync 0`, PTX ISA 9.7.13.1):
    /// `__syncthreads()`.
    pub fn sync_threads(&mut self) -> Result<()> {
        self.f.bar_sync(0u32, None)?;
        Ok(())
    }

    /// Named barrier `id` (1 to 15; 0 is [`KernelBuilder::sync_threads`]'s) for `threads`
    /// threads, a multiple of 32 (`bar.sync id, threads`): a warpgroup or a subset of warps
    /// synchronising without the rest of the CTA.
    pub fn sync_named(&mut self, id: u32, threads: u32) -> Result<()> {
        if id == 0 || id > 15 || threads == 0 || threads % 32 != 0 {
            return Err(self.scope_err(format!(
                "named barrier {id} for {threads} threads: ids 1 to 15, a positive multiple of 32 threads"
            )));
        }
        self.f
            .bar_sync(id, Some(Src::Imm(ptx_isa::Imm::UInt(u64::from(threads)))))?;
        Ok(())
    }
}
