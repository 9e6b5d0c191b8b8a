//! Builds the `cluster_exchange` kernel and runs it on GPU 0 (fresh random data, checked against the host);
//! `--ptx` prints its PTX first.
//!
//! ```text
//! cargo run --example cluster_exchange [-- --ptx] [--out FILE] [--target sm_90a] [--no-run]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = ptxkit::kernels::gpu::example_main("cluster_exchange", false, &args);
    ExitCode::from(code.clamp(0, 255) as u8)
}
