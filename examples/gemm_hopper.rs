//! The Hopper bf16 GEMM: checks it against cuBLAS on fresh random data (odd shapes included), then
//! times it against cuBLAS in the same process and prints a table. [`gemm_kernel`] is the kernel
//! as its design reads, written from the library's building blocks: the producer warpgroup
//! loads tiles into the shared-memory stage ring, the two consumer warpgroups run the wgmma main
//! loop and the epilogue, over a persistent tile schedule.
//!
//! ```text
//! cargo run --release --example gemm_hopper            # check + time (needs an H100/H200)
//! cargo run --release --example gemm_hopper -- --ptx   # print the kernel's PTX (no GPU needed)
//! cargo run --release --example gemm_hopper -- --check # correctness only
//! cargo run --release --example gemm_hopper -- --small # a few small shapes (for compute-sanitizer)
//! cargo run --release --example gemm_hopper -- --all-configs # also time other configurations
//! ```

use std::cell::RefCell;
use std::process::ExitCode;

use cudarc::cublas::CudaBlas;
use ptxkit::isa::{Target, ty};
use ptxkit::kernel::{KernelBuilder, KernelError};
use ptxkit::library::gemm::{BENCH_SHAPES, Gemm, GemmConfig, GemmKernel, HopperGemm, build, check};
use ptxkit::runtime::Device;
use ptxkit::smem::pipeline::sync::WaitMode;

/// The bf16 GEMM kernel for `cfg` (bf16 in and out), as the library builds it
/// ([`ptxkit::library::gemm::build`]).
fn gemm_kernel(cfg: GemmConfig) -> Result<GemmKernel, KernelError> {
    let mut k = KernelBuilder::new(&cfg.name(), Target::Sm90a);
    // The operands (A, B and C as TMA tensors; m, n, k as symbols with their facts), the block,
    // the persistent grid, shared memory (the stage ring, C staging, barriers) and the protocol.
    let gemm = HopperGemm::<ty::Bf16, ty::Bf16>::declare(&mut k, cfg, WaitMode::Spin)?;
    // Both roles below use the GEMM's state, one after the other.
    let (tid, roles) = (gemm.tid(), gemm.roles());
    let gemm = RefCell::new(gemm);
    gemm.borrow_mut().init_barriers(&mut k)?;
    // Warpgroup 0: 24 registers, one thread loading A and B boxes round the stage ring.
    let producer = |k: &mut KernelBuilder| gemm.borrow_mut().producer(k);
    // Warpgroups 1 and 2: 240 registers, per tile the wgmma main loop, then the epilogue.
    let consumers = |k: &mut KernelBuilder, me| gemm.borrow_mut().consumer(k, me);
    roles.run(&mut k, tid, producer, consumers)?;
    gemm.into_inner().finish(k)
}

/// Odd shapes, checked before the benchmark shapes: edges in M, N and K; K not a multiple of 8,
/// which goes through the zero-padding path.
const EDGE_SHAPES: &[(usize, usize, usize)] = &[
    (128, 256, 64),
    (256, 512, 128),
    (1000, 1000, 520),
    (257, 383, 200),
    (300, 777, 1024),
    (1, 8, 8),
    (257, 383, 203),
    (100, 200, 7),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--ptx") {
        let cfg = GemmConfig::large();
        return match (gemm_kernel(cfg), build(&cfg).and_then(|m| m.to_ptx())) {
            (Ok(ours), Ok(library)) if ours.built.ptx() == library => {
                print!("{library}");
                ExitCode::SUCCESS
            }
            (Ok(_), Ok(_)) => {
                eprintln!("gemm_hopper: the example's kernel differs from the library's");
                ExitCode::from(2)
            }
            (Err(e), _) => {
                eprintln!("gemm_hopper: {e}");
                ExitCode::from(2)
            }
            (_, Err(e)) => {
                eprintln!("gemm_hopper: {e}");
                ExitCode::from(2)
            }
        };
    }
    match run(args.iter().any(|a| a == "--check")) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("gemm_hopper: {e}");
            ExitCode::from(2)
        }
    }
}

fn args_all() -> bool {
    std::env::args().any(|a| a == "--all-configs")
}

fn run(check_only: bool) -> Result<bool, Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let stream = device.default_stream();
    let blas = CudaBlas::new(stream.clone())?;
    println!("device: {}", device.attributes().name);
    let mut ok = true;
    let small = std::env::args().any(|a| a == "--small");
    let shapes: Vec<(usize, usize, usize)> = if small {
        EDGE_SHAPES[..4].to_vec()
    } else {
        EDGE_SHAPES.iter().chain(BENCH_SHAPES).copied().collect()
    };
    for (i, &shape) in shapes.iter().enumerate() {
        let gemm = Gemm::new(&device, check::config_for(&device, shape.0, shape.1))?;
        let r = check::check(&device, &stream, &blas, &gemm, shape, 1000 + i as u64)?;
        println!(
            "check {:>5}x{:>5}x{:>5}: rel err {:.2e} (cuBLAS bf16 {:.2e}), unwritten {} -> {}",
            shape.0,
            shape.1,
            shape.2,
            r.rel_error,
            r.cublas_rel_error,
            r.unwritten,
            if r.passed() { "ok" } else { "FAIL" }
        );
        ok &= r.passed();
    }
    // The other input, output and epilogue variants, on shapes with edges.
    for (i, cfg) in check::variants().into_iter().enumerate() {
        // 300 rows: an odd number of 128-row tiles, so a CTA pair has a CTA past the edge;
        // 2000 x 2056 x 520: more tiles than SMs (each ping-pong consumer gets several) and more
        // k-tiles than stages (the ring wraps within a tile).
        let odd = usize::from(!cfg.n_even);
        for (j, shape) in [(300, 520 - odd, 136), (2000, 2056 - odd, 520)]
            .into_iter()
            .enumerate()
        {
            let seed = 77 + 2 * i as u64 + j as u64;
            let r = check::check_config(&device, &stream, &blas, cfg, shape, seed)?;
            println!(
                "check {} {}x{}x{}: rel err {:.2e}, unwritten {} -> {}",
                cfg.name(),
                shape.0,
                shape.1,
                shape.2,
                r.rel_error,
                r.unwritten,
                if r.passed() { "ok" } else { "FAIL" }
            );
            ok &= r.passed();
        }
    }
    if check_only || small {
        return Ok(ok);
    }
    println!(
        "\n| shape | config | ptxkit TFLOP/s | cuBLAS TFLOP/s | ratio |\n| --- | --- | --- | --- | --- |"
    );
    for &shape in BENCH_SHAPES {
        let mut configs = vec![check::config_for(&device, shape.0, shape.1)];
        if args_all() {
            configs.push(GemmConfig {
                tma_store: false,
                ..configs[0]
            });
            configs.push(GemmConfig {
                cluster_m: 2,
                ..configs[0]
            });
        }
        for cfg in configs {
            let gemm = Gemm::new(&device, cfg)?;
            if cfg.cluster_m == 2 {
                println!(
                    "(cluster occupancy: {} CTA pairs at once)",
                    gemm.max_active_clusters()
                );
            }
            let (ours, theirs) = check::compare(&stream, &blas, &gemm, shape, 20)?;
            println!(
                "| {}x{}x{} | {} | {ours:.0} | {theirs:.0} | {:.3} |",
                shape.0,
                shape.1,
                shape.2,
                cfg.name(),
                ours / theirs
            );
        }
    }
    Ok(ok)
}
