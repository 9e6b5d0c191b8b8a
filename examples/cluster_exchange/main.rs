//! Distributed shared memory, written as a kernel author writes it: the grid is made of clusters
//! of 4 CTAs; each CTA stages its 256 elements of `x` in shared memory, the cluster synchronises,
//! and each thread adds the element at the same place in the next CTA's shared memory (its
//! address mapped into that CTA's window with `mapa`, read with `ld.shared::cluster`). A second
//! cluster barrier keeps every CTA's shared memory alive until its neighbour has read it. Prints
//! the PTX, then (on a GPU of compute capability 9.0 or more) runs it on fresh random data of
//! several lengths, the output poisoned with NaN, and checks it against the host.
//!
//! The length is symbolic, declared a whole number of clusters' worth of elements: one kernel
//! serves every such length, the launcher sizes the grid from the tensors and refuses any other
//! length before the launch.
//!
//! ```text
//! cargo run --example cluster_exchange
//! ```

mod kernel;

use ptxkit::runtime::{Arg, DeviceTensor};
use ptxkit::selftest::{Rng, exact_verdict, example_start};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = example_start(
        "cluster_exchange",
        Some((9, "clusters need")),
        kernel::build,
    )?
    else {
        return Ok(());
    };
    let (stream, loaded) = (&gpu.stream, &gpu.kernel);
    let mut rng = Rng::fresh();
    for clusters in [1usize, 33, 1000] {
        let n = clusters * kernel::SPAN as usize;
        let host = rng.vec_f32(n);
        let x = DeviceTensor::from_host(stream, &host, vec![n])?;
        let mut out = DeviceTensor::from_host(stream, &vec![f32::NAN; n], vec![n])?;
        // The launcher checks both tensors, reads n from them (refusing a length that is not
        // whole clusters) and launches n / 1024 clusters of 4 CTAs.
        loaded.launch(stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut out)])?;
        let what = format!("cluster_exchange {clusters} clusters (n = {n})");
        exact_verdict(&what, &out.to_host(stream)?, &kernel::reference(&host))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::{ScalarType, Target};
    use ptxkit::runtime::{ArgDesc, RuntimeError};
    use ptxkit::selftest::check_ptx;

    /// `cargo test` holds the example's kernel to ptxas (the example runs it only on a GPU), and
    /// checks the launch its tensors would get.
    #[test]
    fn the_kernel_assembles_and_launches_whole_clusters() {
        let built = super::kernel::build(Target::Sm90a).unwrap();
        let wants = [
            "%clusterid.x",
            "mapa.shared::cluster.u32",
            "ld.shared::cluster.f32",
            "barrier.cluster.wait.acquire.aligned;",
        ];
        check_ptx(built.ptx(), Target::Sm90a, &wants).unwrap_or_else(|e| panic!("{e}"));
        let t = |n: usize, addr| ArgDesc::tensor(ScalarType::F32, &[n], addr, 0);
        let (cfg, symbols) = built
            .config_for(&[t(33 * 1024, 0x1000), t(33 * 1024, 0x20_0000)], 0)
            .unwrap();
        assert_eq!(symbols["n"], 33 * 1024);
        assert_eq!((cfg.grid, cfg.block), ([132, 1, 1], [256, 1, 1]));
        assert_eq!(cfg.cluster, Some([4, 1, 1]));
        let e = built
            .config_for(&[t(1000, 0x1000), t(1000, 0x20_0000)], 0)
            .unwrap_err();
        assert!(
            matches!(&e, RuntimeError::ExtentFact { symbol, .. } if symbol == "n"),
            "{e}"
        );
        // CTA 1 of a cluster reads CTA 2; CTA 3 reads CTA 0.
        let x: Vec<f32> = (0..2048).map(|i| i as f32).collect();
        let r = super::kernel::reference(&x);
        assert_eq!(
            (r[256 + 5], r[768 + 5], r[1024 + 768]),
            (778.0, 778.0, 2816.0)
        );
    }
}
