//! A 2-D TMA copy through shared memory, written as a kernel author writes one: each CTA loads a
//! 32 x 32 f32 box of `src` with one `cp.async.bulk.tensor` (128-byte swizzle, completing on an
//! mbarrier), adds to every element its row-major index within the box (through the swizzled
//! shared buffer, so a wrong swizzle shows in the result) and stores the box to `dst` with a TMA
//! store. Prints the PTX, then (on a Hopper GPU) runs it on fresh data of several shapes and
//! checks it against the host.
//!
//! The tensors are declared once, in the kernel, with their box and swizzle
//! (`KernelBuilder::tma_tensor`); the kernel copies a CTA's box (`tma_tile_at`) to and from the
//! shared box buffer with the `copy_async` tile op; the launch passes the device tensors themselves
//! and the launcher builds their tensor maps. The shape is symbolic: one kernel serves every whole
//! number of boxes.
//!
//! ```text
//! cargo run --example tma_copy
//! ```

mod kernel;

use ptxkit::runtime::{Arg, DeviceTensor};
use ptxkit::selftest::{exact_verdict, example_start};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = example_start("tma_copy", Some((9, "TMA needs")), kernel::build)? else {
        return Ok(());
    };
    let (stream, loaded) = (&gpu.stream, &gpu.kernel);
    for (rows, cols) in [(32, 32), (256, 512), (96, 1024)] {
        let n = rows * cols;
        let host: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 8.0).collect();
        let src = DeviceTensor::from_host(stream, &host, vec![rows, cols])?;
        let mut dst = DeviceTensor::from_host(stream, &vec![f32::NAN; n], vec![rows, cols])?;
        // The launcher checks both tensors against the kernel's declaration, builds their tensor
        // maps (box 32 x 32, 128-byte swizzle) and sizes the grid from rows and cols.
        loaded.launch(stream, &mut [Arg::tensor(&src), Arg::tensor_mut(&mut dst)])?;
        let what = format!("tma_copy {rows}x{cols}");
        exact_verdict(
            &what,
            &dst.to_host(stream)?,
            &kernel::reference(&host, cols),
        )?;
    }
    // A shape that is not whole boxes is refused by the launcher, naming the symbol.
    let odd = DeviceTensor::from_host(stream, &vec![0f32; 32 * 40], vec![32, 40])?;
    let mut out = DeviceTensor::from_host(stream, &vec![0f32; 32 * 40], vec![32, 40])?;
    match loaded.launch(stream, &mut [Arg::tensor(&odd), Arg::tensor_mut(&mut out)]) {
        Err(e) => println!("PASS refused 32x40: {e}"),
        Ok(_) => return Err("tma_copy: a 32x40 tensor was launched on".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::{ScalarType, Target};
    use ptxkit::runtime::{ArgDesc, RuntimeError};
    use ptxkit::selftest::check_ptx;

    /// `cargo test` holds the example's kernel to ptxas (the example runs it only on a GPU), and
    /// checks what its launch would be given.
    #[test]
    fn the_kernel_assembles_and_checks_its_tensors() {
        let built = super::kernel::build(Target::Sm90a).unwrap();
        let wants = ["cp.async.bulk.tensor.2d.shared::cluster.global"];
        check_ptx(built.ptx(), Target::Sm90a, &wants).unwrap_or_else(|e| panic!("{e}"));
        let t = |shape: &[usize], addr| ArgDesc::tensor(ScalarType::F32, shape, addr, 0);
        let (cfg, symbols) = built
            .config_for(&[t(&[96, 1024], 0x1000), t(&[96, 1024], 0x20_0000)], 0)
            .unwrap();
        assert_eq!(cfg.grid, [32, 3, 1]);
        assert_eq!((symbols["rows"], symbols["cols"]), (96, 1024));
        let e = built
            .config_for(&[t(&[32, 40], 0x1000), t(&[32, 40], 0x20_0000)], 0)
            .unwrap_err();
        assert!(
            matches!(&e, RuntimeError::ExtentFact { symbol, .. } if symbol == "cols"),
            "{e}"
        );
        let r = super::kernel::reference(&[0.5; 64 * 64], 64);
        assert_eq!((r[33], r[64 * 33 + 2]), (1.5, 34.5));
    }
}
