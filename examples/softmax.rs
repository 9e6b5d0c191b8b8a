//! A row softmax, written as a kernel author writes one: one CTA per row, each thread holding its
//! slice of the row in registers, `reduce` for the row's maximum and sum, `exp2` with the scale
//! folded in. Prints the PTX, then (when a GPU is there) runs it on fresh random data and checks
//! it against a host reference in f64.
//!
//! ```text
//! cargo run --example softmax            # PTX, then the GPU check if there is a GPU
//! ```

use ptxkit::isa::{Target, ty};
use ptxkit::kernel::math::LOG2_E;
use ptxkit::kernel::{BuiltKernel, KernelBuilder, ReduceOp, ReduceScope, Result, TensorOpts};
use ptxkit::runtime::{Arg, Before, DeviceTensor, ExtentFacts, JitOptions, median_ms};

/// Threads per row, and 4-wide vectors per thread: rows up to 256 * 4 * 8 = 8192 columns.
const THREADS: u32 = 256;
const VECS: u32 = 8;

/// `y[r, :] = softmax(x[r, :])` over f32 rows of `cols` columns, `cols` a multiple of 4.
fn softmax(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("softmax", target);
    let rows = k.symbol("rows")?;
    let facts = ExtentFacts::NONE
        .multiple_of(4)
        .at_least(1)
        .at_most(u64::from(THREADS * 4 * VECS));
    let cols = k.symbol_with("cols", facts)?;
    let x = k.tensor::<ty::F32>("x", [rows, cols], TensorOpts::default().align(16))?;
    let y = k.tensor::<ty::F32>("y", [rows, cols], TensorOpts::default().align(16))?;
    let [row] = k.cta_id([rows])?;
    let [t] = k.thread_id([THREADS])?;

    // The row, 4 columns at a time; columns past the end read as -inf (they add 0 to the sum).
    let mut v = Vec::new();
    for j in 0..VECS {
        v.extend(k.load_n(
            &x,
            [row.into(), (t + j * THREADS) * 4],
            4,
            f32::NEG_INFINITY,
        )?);
    }
    let max = k.reduce(ReduceOp::Max, &v, ReduceScope::Cta)?;
    // e^(x - max) = 2^(x * log2 e - max * log2 e): one fma and one ex2 per element.
    let bias = k.mul_of(max, -LOG2_E)?;
    for r in &mut v {
        *r = k.exp2_fma(*r, LOG2_E, bias)?;
    }
    let sum = k.reduce(ReduceOp::Sum, &v, ReduceScope::Cta)?;
    let inv = k.rcp_of(sum)?;
    for (j, four) in v.chunks(4).enumerate() {
        let out = four
            .iter()
            .map(|&e| k.mul_of(e, inv))
            .collect::<Result<Vec<_>>>()?;
        k.store_n(&y, [row.into(), (t + j as u32 * THREADS) * 4], &out)?;
    }
    k.finish()
}

/// The host reference, in f64.
fn reference(x: &[f32], cols: usize) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|row| {
            let m = row
                .iter()
                .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
            let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - m).exp()).collect();
            let s: f64 = e.iter().sum();
            e.into_iter().map(move |v| (v / s) as f32)
        })
        .collect()
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    println!("{}", softmax(Target::Sm90a)?.ptx());

    let Some(dev) = ptxkit::selftest::device_or_skip("softmax: not run on a GPU") else {
        return Ok(());
    };
    let stream = dev.default_stream();
    let kernel = softmax(dev.target())?.load(&dev, &JitOptions::default())?;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ std::process::id() as u64;
    let mut random = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 * 16.0 - 8.0
    };
    for (rows, cols) in [(1, 4), (3, 1000), (4096, 4096), (1000, 8192)] {
        let host: Vec<f32> = (0..rows * cols).map(|_| random()).collect();
        let x = DeviceTensor::from_host(&stream, &host, vec![rows, cols])?;
        let mut y =
            DeviceTensor::from_host(&stream, &vec![f32::NAN; rows * cols], vec![rows, cols])?;
        kernel.launch(&stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y)])?;
        let got = y.to_host(&stream)?;
        let want = reference(&host, cols);
        let err = got
            .iter()
            .zip(&want)
            .map(|(g, w)| f64::from((g - w).abs()) / f64::from(w.abs()).max(1e-30))
            .fold(0.0, f64::max);
        let ms =
            median_ms::<ptxkit::runtime::RuntimeError>(&stream, 3, 20, Before::Nothing, || {
                kernel.launch(&stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y)])?;
                Ok(())
            })?;
        let gbs = 2.0 * (rows * cols * 4) as f64 / ms / 1e6;
        let verdict = if err < 5e-5 { "PASS" } else { "FAIL" };
        println!(
            "{verdict} {rows}x{cols}: max relative error {err:.2e}, {ms:.3} ms, {gbs:.0} GB/s"
        );
        if err >= 5e-5 {
            return Err(format!("softmax {rows}x{cols}: relative error {err:.2e}").into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `cargo test` holds the example's kernel to ptxas (the example runs it only with a GPU).
    #[test]
    fn the_kernel_assembles() {
        use ptxkit::isa::Target;
        let built = super::softmax(Target::Sm90a).unwrap();
        ptxkit::selftest::check_ptx(built.ptx(), Target::Sm90a, &["ld.global.v4.f32"])
            .unwrap_or_else(|e| panic!("{e}"));
    }
}
