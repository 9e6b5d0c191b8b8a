//! The smallest ptxkit program: define `c = a + b` with `KernelBuilder` (`kernel.rs`), print its
//! PTX, and run it on GPU 0 when there is one (fresh data, checked against the host).
//!
//! ```text
//! cargo run --example vector_add
//! ```

mod kernel;

use ptxkit::isa::Target;
use ptxkit::runtime::{Arg, DeviceTensor, JitOptions};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    print!("{}", kernel::build(Target::Sm90a)?.ptx());

    let Some(dev) = ptxkit::selftest::device_or_skip("vector_add: not run on a GPU") else {
        return Ok(());
    };
    let stream = dev.default_stream();
    let vadd = kernel::build(dev.target())?.load(&dev, &JitOptions::default())?;
    let n = (1 << 20) + 3;
    let ha: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 7.0).collect();
    let hb: Vec<f32> = (0..n)
        .map(|i| ((i * 104_729) % 1000) as f32 / 3.0)
        .collect();
    let a = DeviceTensor::from_host(&stream, &ha, vec![n])?;
    let b = DeviceTensor::from_host(&stream, &hb, vec![n])?;
    let mut c = DeviceTensor::from_host(&stream, &vec![f32::NAN; n], vec![n])?;
    // The launcher checks shapes, dtypes and alignment, reads n from them and sizes the grid.
    vadd.launch(
        &stream,
        &mut [Arg::tensor(&a), Arg::tensor(&b), Arg::tensor_mut(&mut c)],
    )?;
    let got = c.to_host(&stream)?;
    let wrong = got
        .iter()
        .zip(kernel::reference(&ha, &hb))
        .filter(|(g, w)| **g != *w)
        .count();
    println!(
        "{} vector_add: n = {n} ({} blocks of {}), {wrong} elements differ",
        if wrong == 0 { "PASS" } else { "FAIL" },
        n.div_ceil(kernel::BLOCK as usize),
        kernel::BLOCK
    );
    if wrong > 0 {
        return Err("vector_add: wrong result".into());
    }
    Ok(())
}
