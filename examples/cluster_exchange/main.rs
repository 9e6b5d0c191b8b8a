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

use ptxkit::isa::Target;
use ptxkit::runtime::{Arg, DeviceTensor, JitOptions};
use ptxkit::selftest::Rng;

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    print!("{}", kernel::build(Target::Sm90a)?.ptx());

    let Some(dev) = ptxkit::selftest::device_or_skip("cluster_exchange: not run on a GPU") else {
        return Ok(());
    };
    if dev.attributes().compute_capability.0 < 9 {
        eprintln!("cluster_exchange: not run: clusters need compute capability 9.0 or more");
        return Ok(());
    }
    let stream = dev.default_stream();
    let loaded = kernel::build(dev.target())?.load(&dev, &JitOptions::default())?;
    let mut rng = Rng::fresh();
    for clusters in [1usize, 33, 1000] {
        let n = clusters * kernel::SPAN as usize;
        let host = rng.vec_f32(n);
        let x = DeviceTensor::from_host(&stream, &host, vec![n])?;
        let mut out = DeviceTensor::from_host(&stream, &vec![f32::NAN; n], vec![n])?;
        // The launcher checks both tensors, reads n from them (refusing a length that is not
        // whole clusters) and launches n / 1024 clusters of 4 CTAs.
        loaded.launch(&stream, &mut [Arg::tensor(&x), Arg::tensor_mut(&mut out)])?;
        let got = out.to_host(&stream)?;
        let wrong = got
            .iter()
            .zip(kernel::reference(&host))
            .filter(|(g, w)| **g != *w)
            .count();
        let verdict = if wrong == 0 { "PASS" } else { "FAIL" };
        println!(
            "{verdict} cluster_exchange {clusters} clusters (n = {n}): {wrong} elements differ"
        );
        if wrong > 0 {
            return Err(format!("cluster_exchange n = {n}: wrong result").into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::{ScalarType, Target};
    use ptxkit::runtime::{ArgDesc, RuntimeError};

    /// `cargo test` holds the example's kernel to ptxas (the example runs it only on a GPU), and
    /// checks the launch its tensors would get.
    #[test]
    fn the_kernel_assembles_and_launches_whole_clusters() {
        let built = super::kernel::build(Target::Sm90a).unwrap();
        for want in [
            "%clusterid.x",
            "mapa.shared::cluster.u32",
            "ld.shared::cluster.f32",
            "barrier.cluster.wait.acquire.aligned;",
        ] {
            assert!(built.ptx().contains(want), "missing `{want}`");
        }
        if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
            let out = ptxas.assemble(built.ptx(), Target::Sm90a, &[]).unwrap();
            assert!(out.ok, "{}", out.log);
        }
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
