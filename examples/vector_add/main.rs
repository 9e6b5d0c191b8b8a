//! The smallest ptxkit program: define `c = a + b` with `KernelBuilder` (`kernel.rs`), print its
//! PTX, and run it on GPU 0 when there is one (fresh data, checked against the host).
//!
//! ```text
//! cargo run --example vector_add
//! ```

mod kernel;

use ptxkit::runtime::{Arg, DeviceTensor};
use ptxkit::selftest::{exact_verdict, example_start};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = example_start("vector_add", None, kernel::build)? else {
        return Ok(());
    };
    let (stream, vadd) = (&gpu.stream, &gpu.kernel);
    let n = (1 << 20) + 3;
    let ha: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 7.0).collect();
    let hb: Vec<f32> = (0..n)
        .map(|i| ((i * 104_729) % 1000) as f32 / 3.0)
        .collect();
    let a = DeviceTensor::from_host(stream, &ha, vec![n])?;
    let b = DeviceTensor::from_host(stream, &hb, vec![n])?;
    let mut c = DeviceTensor::from_host(stream, &vec![f32::NAN; n], vec![n])?;
    // The launcher checks shapes, dtypes and alignment, reads n from them and sizes the grid.
    vadd.launch(
        stream,
        &mut [Arg::tensor(&a), Arg::tensor(&b), Arg::tensor_mut(&mut c)],
    )?;
    let blocks = n.div_ceil(kernel::BLOCK as usize);
    let what = format!("vector_add: n = {n} ({blocks} blocks of {})", kernel::BLOCK);
    exact_verdict(&what, &c.to_host(stream)?, &kernel::reference(&ha, &hb))?;
    Ok(())
}
