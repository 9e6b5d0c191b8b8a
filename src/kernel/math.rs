//! Math on register values, written as a kernel author reads it: each call takes its inputs and
//! returns a fresh register with the result (`let e = k.exp(x)?`), so values flow without
//! pre-declared destinations. Transcendentals use the SFU's approximations with the scale folded
//! in (PTX ISA 9.7.3.21 `ex2`, 9.7.3.20 `lg2`: `ex2.approx.ftz.f32` has a maximum relative error
//! of 2^-22 over its range, `lg2.approx` an absolute error of 2^-22 near 1), the rest are single
//! IEEE instructions (9.7.3 "Floating-Point Instructions"). `select` is `selp` (9.7.7.2).
//!
//! The raw builder's destination-first forms (`k.max(d, a, b)`, `k.rsqrt(d, a)`) stay one `Deref`
//! away; the methods here carry an `_of` suffix where a raw form has the plain name.

use ptx_isa::{FunctionBuilder, Pred, Reg, Src, ty};

use super::KernelBuilder;
use super::error::Result;

/// `log2(e)`: `exp(x) = 2^(x * log2(e))`.
pub const LOG2_E: f32 = std::f32::consts::LOG2_E;
/// `ln(2)`: `ln(x) = log2(x) * ln(2)`.
pub const LN_2: f32 = std::f32::consts::LN_2;

/// `$name(x)`: the f32 builder instruction `$op` into a fresh register.
macro_rules! unary_f32_of {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(&mut self, x: impl Into<Src<ty::F32>>) -> Result<Reg<ty::F32>> {
            self.fresh(|f, d| f.$op(d, x))
        }
    )*};
}

/// `$name(a, b)` for register types `$bound`: the builder instruction `$op` into a fresh register.
macro_rules! binary_of {
    ($($(#[$doc:meta])* $name:ident<$bound:path> => $op:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name<T: $bound>(
            &mut self,
            a: impl Into<Src<T>>,
            b: impl Into<Src<T>>,
        ) -> Result<Reg<T>> {
            self.fresh(|f, d| f.$op(d, a, b))
        }
    )*};
}

/// How [`KernelBuilder::widen_bf16_words`] turns a bf16 word's halves into f32 (`a << 16` for
/// the low half, `a & 0xFFFF0000` for the high one: a bf16 is the high half of the f32 of the
/// same value). Two forms of the same values, so that a kernel that widens the same words twice
/// can ask for the second in the other form: ptxas then does not take the second widening for
/// the first and keep the first's f32 registers alive in its stead (ptxas 13.0, RMSNorm of 8192
/// bf16 columns at 256 threads x 32 packed: 63 registers with one form, 40 with the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Widen {
    /// `shl` and `and` (PTX ISA 9.7.7.7, 9.7.7.1).
    Shift,
    /// `prmt` with a zero word (PTX ISA 9.7.9.7: bytes 4-7 of the pair are the zero).
    Permute,
}

/// GELU (tanh)'s `sqrt(2/π)` ([`KernelBuilder::gelu_tanh`]).
const GELU_C0: f32 = 0.797_884_6;
/// GELU (tanh)'s `sqrt(2/π) · 0.044715`.
const GELU_C1: f32 = 0.035_677_41;

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

    /// A fresh register of `T`, written by `write`.
    fn fresh<T: ty::RegType>(
        &mut self,
        write: impl FnOnce(&mut FunctionBuilder, Reg<T>) -> ptx_isa::Result<()>,
    ) -> Result<Reg<T>> {
        let d = self.f.reg::<T>();
        write(&mut self.f, d)?;
        Ok(d)
    }

    unary_f32_of! {
        /// `sqrt(x)` (`sqrt.approx.ftz.f32`).
        sqrt_of => sqrt_approx;
        /// `1 / sqrt(x)` (`rsqrt.approx.ftz.f32`).
        rsqrt_of => rsqrt;
        /// `1 / x` (`rcp.approx.ftz.f32`).
        rcp_of => rcp_approx;
    }

    /// `a * b + c` (`fma.rn`).
    pub fn fma_of<T: ty::Float>(
        &mut self,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
        c: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        self.fresh(|f, d| f.fma(d, a, b, c))
    }

    binary_of! {
        /// `a * b` (`mul.rn` for floats).
        mul_of<ty::Float> => mul;
        /// `a + b`.
        add_of<ty::RegType> => add;
        /// `a - b`.
        sub_of<ty::RegType> => sub;
        /// `max(a, b)`.
        max_of<ty::RegType> => max;
        /// `min(a, b)`.
        min_of<ty::RegType> => min;
    }

    /// `p ? a : b` (`selp`): a value out of a condition, with no branch.
    pub fn select<T: ty::RegType>(
        &mut self,
        p: Pred,
        a: impl Into<Src<T>>,
        b: impl Into<Src<T>>,
    ) -> Result<Reg<T>> {
        self.fresh(|f, d| f.selp(d, a, b, p))
    }

    /// `x / (1 + e^-x)` (SiLU, the gate of SwiGLU): `ex2`, `add`, `rcp`, `mul`.
    pub fn silu(&mut self, x: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let e = self.exp2_fma(x, -LOG2_E, 0.0f32)?;
        self.f.add(e, e, 1.0f32)?;
        let r = self.rcp_of(e)?;
        self.mul_of(x, r)
    }

    /// GELU with the tanh approximation, `0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³)))`, as
    /// `h + h·tanh(x (c0 + c1 x²))` with `h = x / 2`: `tanh.approx.f32` (PTX ISA 9.7.3.22,
    /// maximum relative error 2^-11) and four multiply-adds.
    pub fn gelu_tanh(&mut self, x: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let th = self.gelu_tanh_tanh(x)?;
        let h = self.mul_of(x, 0.5f32)?;
        self.fma_of(h, th, h)
    }

    /// Twice [`KernelBuilder::gelu_tanh`], `x + x·tanh(...)`: its multiply by a half left to
    /// an operation that follows and takes the half into its own `fma` (a residual added,
    /// `fma(y, 0.5, r)`: the same bits as `gelu_tanh(x) + r` wherever no intermediate value is
    /// subnormal or overflows, a power-of-two scaling commuting with rounding to nearest,
    /// PTX ISA 9.7.3).
    pub fn gelu_tanh_doubled(&mut self, x: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let th = self.gelu_tanh_tanh(x)?;
        self.fma_of(x, th, x)
    }

    /// GELU (tanh)'s `tanh(sqrt(2/π) (x + 0.044715 x³))`, as `tanh(x (c0 + c1 x²))`.
    fn gelu_tanh_tanh(&mut self, x: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let x2 = self.mul_of(x, x)?;
        let inner = self.fma_of(x2, GELU_C1, GELU_C0)?;
        let u = self.mul_of(x, inner)?;
        self.fresh(|f, d| f.tanh(d, u))
    }

    /// [`KernelBuilder::gelu_tanh`] of `2h`, given `h`: `h + h·tanh(h (2 c0 + 8 c1 h²))`, four
    /// instructions and the `tanh` where `gelu_tanh` takes five, for an `h` that costs nothing
    /// extra: the half of a sum an `fma` makes anyway (a bias added before the GELU,
    /// `h = fma(v, 0.5, b/2)`, with `b/2` halved once where the bias is loaded). The same bits as
    /// `gelu_tanh(2h)` wherever no intermediate value is subnormal: every step is a
    /// power-of-two scaling of `gelu_tanh`'s (`h² = x²/4`, `2 c0 + 8 c1 h² = 2 (c0 + c1 x²)`, their
    /// product with `h` the same `u`), and a power-of-two scaling commutes with rounding to
    /// nearest (PTX ISA 9.7.3: `mul`/`fma` `.rn`).
    pub fn gelu_tanh_of_half(&mut self, h: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        let h2 = self.mul_of(h, h)?;
        let inner = self.fma_of(h2, 8.0 * GELU_C1, 2.0 * GELU_C0)?;
        let u = self.mul_of(h, inner)?;
        let th = self.fresh(|f, d| f.tanh(d, u))?;
        self.fma_of(h, th, h)
    }

    /// GELU, `x Φ(x) = 0.5 x (1 + erf(x / sqrt 2))`: `Φ(-|x|) = 0.5 p(t) e^(-x²/2)` with
    /// `t = 1 / (1 + p |x| / sqrt 2)` (Abramowitz and Stegun 7.1.26, erf to within 1.5e-7;
    /// `rcp.approx` and `ex2.approx` add about 2^-22), then `Φ(x)` is that or one minus it by
    /// the sign of `x` (`selp`, PTX ISA 9.7.8.2).
    pub fn gelu_erf(&mut self, x: Reg<ty::F32>) -> Result<Reg<ty::F32>> {
        // p / sqrt 2, and a1..a5.
        const P: f32 = 0.327_591_1 * std::f32::consts::FRAC_1_SQRT_2;
        const A: [f32; 5] = [
            0.254_829_6,
            -0.284_496_74,
            1.421_413_8,
            -1.453_152,
            1.061_405_4,
        ];
        let a = self.fresh(|f, d| f.abs(d, x))?;
        let den = self.fma_of(a, P, 1.0f32)?;
        let t = self.rcp_of(den)?;
        // a1 t + a2 t² + ... + a5 t⁵, by Horner.
        let mut poly = self.fma_of(t, A[4], A[3])?;
        for &c in A[..3].iter().rev() {
            poly = self.fma_of(poly, t, c)?;
        }
        poly = self.mul_of(poly, t)?;
        // e^(-x²/2) = 2^(x² · (-log2 e / 2)).
        let x2 = self.mul_of(a, a)?;
        let e = self.exp2_fma(x2, -LOG2_E * 0.5, 0.0f32)?;
        let half = self.mul_of(poly, 0.5f32)?;
        let low = self.mul_of(half, e)?;
        let high = self.fma_of(low, -1.0f32, 1.0f32)?;
        let neg = self.f.pred();
        self.f.setp(ptx_isa::builder::CmpOp::Lt, neg, x, 0.0f32)?;
        let phi = self.select(neg, low, high)?;
        self.mul_of(x, phi)
    }

    /// Every CTA thread waits here until all have arrived (`bar.sync 0`, PTX ISA 9.7.13.1):
    /// `__syncthreads()`.
    pub fn sync_threads(&mut self) -> Result<()> {
        self.f.bar_sync(0u32, None)?;
        Ok(())
    }

    /// Named barrier `id` (1 to 15; 0 is [`KernelBuilder::sync_threads`]'s) for `threads`
    /// threads, a multiple of 32 (`bar.sync id, threads`, PTX ISA 9.7.13.1): a warpgroup or a
    /// subset of warps synchronising without the rest of the CTA. `id` is a constant or a
    /// register (a warpgroup's own barrier, `1 + warpgroup`); a constant is checked here, a
    /// register's value is the caller's to keep in 1 to 15.
    pub fn sync_named(&mut self, id: impl Into<Src<ty::U32>>, threads: u32) -> Result<()> {
        let id = self.named_barrier(id.into(), threads)?;
        self.f
            .bar_sync(id, Some(Src::Imm(ptx_isa::Imm::UInt(u64::from(threads)))))?;
        Ok(())
    }

    /// Arrives at named barrier `id` for `threads` threads without waiting (`bar.arrive id,
    /// threads`, PTX ISA 9.7.13.1): the producer side of a named barrier, whose consumers wait
    /// with [`KernelBuilder::sync_named`] on the same `id` and count. The count includes both
    /// sides (the arriving and the waiting threads); the barrier completes when that many have
    /// arrived. Ids and counts as for [`KernelBuilder::sync_named`].
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("pingpong", Target::Sm90a);
    /// let [tid] = k.thread_id([256])?;
    /// // Warpgroup 1 lets warpgroup 0 through barrier 1: 128 arrive, 128 wait.
    /// let wg = k.let_("wg", tid / 128)?;
    /// let second = k.cmp(ptxkit::isa::builder::CmpOp::Eq, wg, 1u32)?;
    /// k.if_(second, |k| k.arrive_named(1u32, 256))
    ///     .else_(|k| k.sync_named(1u32, 256))?;
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert!(ptx.contains("bar.arrive 1, 256;") && ptx.contains("bar.sync 1, 256;"));
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    pub fn arrive_named(&mut self, id: impl Into<Src<ty::U32>>, threads: u32) -> Result<()> {
        let id = self.named_barrier(id.into(), threads)?;
        self.f.bar_arrive(id, threads)?;
        Ok(())
    }

    /// Checks a named barrier's constant id (1 to 15) and its thread count (a positive
    /// multiple of 32, PTX ISA 9.7.13.1: "operand b ... must be a multiple of warp size").
    fn named_barrier(&self, id: Src<ty::U32>, threads: u32) -> Result<Src<ty::U32>> {
        let bad_id = matches!(id, Src::Imm(ptx_isa::Imm::UInt(n)) if n == 0 || n > 15);
        if bad_id || threads == 0 || threads % 32 != 0 {
            let named = match id {
                Src::Imm(ptx_isa::Imm::UInt(n)) => n.to_string(),
                _ => "(a register)".to_string(),
            };
            return Err(self.scope_err(format!(
                "named barrier {named} for {threads} threads: ids 1 to 15, a positive multiple of 32 threads"
            )));
        }
        Ok(id)
    }

    /// `words`' bf16 halves in f32, low half first, in the form `how` ([`Widen`]): one integer
    /// instruction a value where `mov.b32 {lo, hi}` and `cvt.f32.bf16` take two for the high
    /// half (ptxas 13.0 moves the half into a register of its own, then shifts it).
    pub fn widen_bf16_words(
        &mut self,
        words: &[Reg<ty::B32>],
        how: Widen,
    ) -> Result<Vec<Reg<ty::F32>>> {
        let mut out = Vec::with_capacity(words.len() * 2);
        for &w in words {
            for high in [false, true] {
                let b = self.reg::<ty::B32>();
                match (how, high) {
                    (Widen::Shift, false) => self.shl(b, w, 16u32)?,
                    (Widen::Shift, true) => self.and(b, w, 0xFFFF_0000u32)?,
                    // Result bytes (low first) 0, 0, then the half's two bytes: 4, 4, 0, 1 or
                    // 4, 4, 2, 3.
                    (Widen::Permute, false) => self.prmt(b, w, 0u32, 0x1044u32)?,
                    (Widen::Permute, true) => self.prmt(b, w, 0u32, 0x3244u32)?,
                }
                let f = self.reg::<ty::F32>();
                self.mov_bits(f, b)?;
                out.push(f);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{GELU_C0, GELU_C1};

    /// The GELU folds' arithmetic in host f32 (`mul_add` rounds once, as `fma.rn`; the host's
    /// `tanh` stands for `tanh.approx`, a function of its argument alone): the half of a bias's
    /// sum, `fma(v, 0.5, b/2)`, through `gelu_tanh_of_half`'s steps, and `x + x·tanh` with a
    /// residual's `fma(y, 0.5, r)`, give `gelu_tanh(v + b)` and `gelu_tanh(x) + r` bit for bit,
    /// over values of both signs from 2^-20 to 2^20 and around the GELU's knee.
    #[test]
    fn the_gelu_folds_give_the_bits_of_the_ops_one_by_one() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut value = |wide: bool| {
            let r = next();
            let frac = (r & 0xFF_FFFF) as f32 / (1u32 << 24) as f32;
            let sign = if r >> 63 == 1 { -1.0 } else { 1.0 };
            match wide {
                true => sign * (1.0 + frac) * 2f32.powi((r >> 32) as i32 % 21),
                false => sign * 6.0 * frac,
            }
        };
        let tanh_arg = |x: f32| x * (x * x).mul_add(GELU_C1, GELU_C0);
        for i in 0..1_000_000 {
            let wide = i % 2 == 0;
            let (v, b, r) = (value(wide), value(wide), value(wide));
            // The ops one by one: the bias's fma, gelu_tanh, the residual's add.
            let x = v.mul_add(1.0, b);
            let t = tanh_arg(x).tanh();
            let h = x * 0.5;
            let gelu = h.mul_add(t, h);
            // The bias's fma making the half: the same tanh argument and GELU.
            let half = v.mul_add(0.5, b * 0.5);
            let u = half * (half * half).mul_add(8.0 * GELU_C1, 2.0 * GELU_C0);
            assert_eq!(u.to_bits(), tanh_arg(x).to_bits(), "{v} {b}");
            let folded = half.mul_add(u.tanh(), half);
            assert_eq!(folded.to_bits(), gelu.to_bits(), "{v} {b}");
            // The residual's fma taking the half.
            let y = x.mul_add(t, x);
            assert_eq!(y.mul_add(0.5, r).to_bits(), (gelu + r).to_bits(), "{x} {r}");
        }
    }
}
