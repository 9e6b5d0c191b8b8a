//! Builds the `tma_copy` kernel and runs it on GPU 0 (fresh random data, checked against the host);
//! `--ptx` prints its PTX first.
//!
//! ```text
//! cargo run --example tma_copy [-- --ptx] [--out FILE] [--target sm_90a] [--no-run]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = ptxkit::kernels::gpu::example_main("tma_copy", false, &args);
    ExitCode::from(code.clamp(0, 255) as u8)
}
