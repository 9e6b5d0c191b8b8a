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

use ptxkit::isa::Target;
use ptxkit::runtime::{Arg, DeviceTensor, JitOptions};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    print!("{}", kernel::build(Target::Sm90a)?.ptx());

    let Some(dev) = ptxkit::selftest::device_or_skip("tma_copy: not run on a GPU") else {
        return Ok(());
    };
    if dev.attributes().compute_capability.0 < 9 {
        eprintln!("tma_copy: not run: TMA needs compute capability 9.0 or more");
        return Ok(());
    }
    let stream = dev.default_stream();
    let loaded = kernel::build(dev.target())?.load(&dev, &JitOptions::default())?;
    for (rows, cols) in [(32, 32), (256, 512), (96, 1024)] {
        let n = rows * cols;
        let host: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 8.0).collect();
        let src = DeviceTensor::from_host(&stream, &host, vec![rows, cols])?;
        let mut dst = DeviceTensor::from_host(&stream, &vec![f32::NAN; n], vec![rows, cols])?;
        // The launcher checks both tensors against the kernel's declaration, builds their tensor
        // maps (box 32 x 32, 128-byte swizzle) and sizes the grid from rows and cols.
        loaded.launch(&stream, &mut [Arg::tensor(&src), Arg::tensor_mut(&mut dst)])?;
        let got = dst.to_host(&stream)?;
        let wrong = got
            .iter()
            .zip(kernel::reference(&host, cols))
            .filter(|(g, w)| **g != *w)
            .count();
        let verdict = if wrong == 0 { "PASS" } else { "FAIL" };
        println!("{verdict} tma_copy {rows}x{cols}: {wrong} elements differ");
        if wrong > 0 {
            return Err(format!("tma_copy {rows}x{cols}: wrong result").into());
        }
    }
    // A shape that is not whole boxes is refused by the launcher, naming the symbol.
    let odd = DeviceTensor::from_host(&stream, &vec![0f32; 32 * 40], vec![32, 40])?;
    let mut out = DeviceTensor::from_host(&stream, &vec![0f32; 32 * 40], vec![32, 40])?;
    match loaded.launch(&stream, &mut [Arg::tensor(&odd), Arg::tensor_mut(&mut out)]) {
        Err(e) => println!("PASS refused 32x40: {e}"),
        Ok(_) => return Err("tma_copy: a 32x40 tensor was launched on".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::{ScalarType, Target};
    use ptxkit::runtime::{ArgDesc, RuntimeError};

    /// `cargo test` holds the example's kernel to ptxas (the example runs it only on a GPU), and
    /// checks what its launch would be given.
    #[test]
    fn the_kernel_assembles_and_checks_its_tensors() {
        let built = super::kernel::build(Target::Sm90a).unwrap();
        assert!(
            built
                .ptx()
                .contains("cp.async.bulk.tensor.2d.shared::cluster.global")
        );
        if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
            let out = ptxas.assemble(built.ptx(), Target::Sm90a, &[]).unwrap();
            assert!(out.ok, "{}", out.log);
        }
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
