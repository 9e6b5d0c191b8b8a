//! The smallest ptxkit program: define `c = a + b` with `KernelBuilder`, print its PTX, and run it
//! on GPU 0 when there is one (fresh random data, checked against the host).
//!
//! ```text
//! cargo run --example vector_add
//! ```

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{BuiltKernel, Expr, KernelBuilder, Result, TensorOpts};
use ptxkit::runtime::{Arg, Device, DeviceTensor, JitOptions};

const BLOCK: u32 = 256;

/// `c[i] = a[i] + b[i]` for `i < n`; `n` is a symbolic extent the launcher reads from the
/// tensors' shapes, and the grid is `ceil(n / BLOCK)` blocks.
fn vector_add(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("vector_add", target);
    let n = k.symbol("n")?;
    let a = k.tensor::<ty::F32>("a", [n], TensorOpts::default())?;
    let b = k.tensor::<ty::F32>("b", [n], TensorOpts::default())?;
    let c = k.tensor::<ty::F32>("c", [n], TensorOpts::default())?;
    let [block] = k.cta_id([Expr::ceil_div(n, BLOCK)])?;
    let [t] = k.thread_id([BLOCK])?;
    let i = k.let_("i", block * BLOCK + t)?;
    let inside = k.cmp(CmpOp::Lt, i, n)?;
    k.if_(inside, |k| {
        let x = k.load(&a, [i])?;
        let y = k.load(&b, [i])?;
        let sum = k.add_of(x, y)?;
        k.store(&c, [i], sum)
    })
    .end()?;
    k.finish()
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    print!("{}", vector_add(Target::Sm90a)?.ptx());

    let dev = match Device::new(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("vector_add: not run on a GPU: {e}");
            return Ok(());
        }
    };
    let stream = dev.default_stream();
    let kernel = vector_add(dev.target())?.load(&dev, &JitOptions::default())?;
    let n = (1 << 20) + 3;
    let ha: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 7.0).collect();
    let hb: Vec<f32> = (0..n)
        .map(|i| ((i * 104_729) % 1000) as f32 / 3.0)
        .collect();
    let a = DeviceTensor::from_host(&stream, &ha, vec![n])?;
    let b = DeviceTensor::from_host(&stream, &hb, vec![n])?;
    let mut c = DeviceTensor::from_host(&stream, &vec![f32::NAN; n], vec![n])?;
    // The launcher checks shapes, dtypes and alignment, reads n from them and sizes the grid.
    kernel.launch(
        &stream,
        &mut [Arg::tensor(&a), Arg::tensor(&b), Arg::tensor_mut(&mut c)],
    )?;
    let got = c.to_host(&stream)?;
    let wrong = got
        .iter()
        .zip(ha.iter().zip(&hb))
        .filter(|(g, (x, y))| **g != *x + *y)
        .count();
    println!(
        "{} vector_add: n = {n}, {wrong} elements differ",
        if wrong == 0 { "PASS" } else { "FAIL" }
    );
    if wrong > 0 {
        return Err("vector_add: wrong result".into());
    }
    Ok(())
}
