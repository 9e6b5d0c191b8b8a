//! A kernel with a run-time scalar argument and a loop, written with `KernelBuilder`:
//! `y = s * x` over f32 `[m, 64]` tensors, each CTA taking 4 rows in turn and each thread 4
//! consecutive elements of a row as one 16-byte vector load and store (the tensors are declared
//! 16-byte aligned and the column `4 * t` is a multiple of 4, so the vector's alignment is proven
//! when the kernel is built). Prints the PTX, then (on a GPU) runs it on fresh random data of
//! several row counts with a random `s`, the output poisoned with NaN, and checks it against the
//! host.
//!
//! ```text
//! cargo run --example scale
//! ```

mod kernel;

use ptxkit::runtime::{Arg, DeviceTensor};
use ptxkit::selftest::{Rng, exact_verdict, example_start};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = example_start("scale", None, kernel::build)? else {
        return Ok(());
    };
    let (stream, loaded) = (&gpu.stream, &gpu.kernel);
    let mut rng = Rng::fresh();
    let cols = kernel::COLS as usize;
    for m in [1usize, 333, 4099] {
        let host = rng.vec_f32(m * cols);
        let s = rng.f32() * 4.0;
        let x = DeviceTensor::from_host(stream, &host, vec![m, cols])?;
        let mut y = DeviceTensor::from_host(stream, &vec![f32::NAN; m * cols], vec![m, cols])?;
        // The launcher checks the tensors (dtype, shape, 16-byte alignment), reads m from them,
        // sizes the grid to ceil(m / 4) CTAs and passes s by value.
        loaded.launch(
            stream,
            &mut [Arg::tensor(&x), Arg::tensor_mut(&mut y), s.into()],
        )?;
        let what = format!("scale m = {m}, s = {s}");
        exact_verdict(&what, &y.to_host(stream)?, &kernel::reference(&host, s))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::{ScalarType, Target};
    use ptxkit::runtime::{ArgDesc, RuntimeError, Scalar};
    use ptxkit::selftest::check_ptx;

    /// `cargo test` holds the example's kernel to ptxas for sm_80 and sm_90a (the example runs it
    /// only on a GPU), and checks the launch its arguments would get.
    #[test]
    fn the_kernel_assembles_and_checks_its_arguments() {
        for target in [Target::Sm80, Target::Sm90a] {
            let built = super::kernel::build(target).unwrap();
            let wants = ["ld.global.v4.f32", "st.global.v4.f32", "ld.param.f32"];
            check_ptx(built.ptx(), target, &wants).unwrap_or_else(|e| panic!("{target}: {e}"));
        }
        let built = super::kernel::build(Target::Sm90a).unwrap();
        let t = |shape: Vec<usize>, addr| ArgDesc::tensor(ScalarType::F32, &shape, addr, 0);
        let s = ArgDesc::Scalar(Scalar::F32(2.0));
        let (cfg, symbols) = built
            .config_for(
                &[
                    t(vec![333, 64], 0x1000),
                    t(vec![333, 64], 0x4_0000),
                    s.clone(),
                ],
                0,
            )
            .unwrap();
        assert_eq!(symbols["m"], 333);
        assert_eq!((cfg.grid, cfg.block), ([84, 1, 1], [16, 1, 1]));
        // A row of 63 columns, and a tensor off its declared 16-byte alignment, are refused.
        let e = built
            .config_for(
                &[
                    t(vec![333, 63], 0x1000),
                    t(vec![333, 64], 0x4_0000),
                    s.clone(),
                ],
                0,
            )
            .unwrap_err();
        assert!(
            matches!(&e, RuntimeError::ArgShape { param, .. } if param == "x"),
            "{e}"
        );
        let e = built
            .config_for(
                &[t(vec![333, 64], 0x1000), t(vec![333, 64], 0x4_0004), s],
                0,
            )
            .unwrap_err();
        assert!(
            matches!(&e, RuntimeError::Misaligned { param, .. } if param == "y"),
            "{e}"
        );
    }
}
