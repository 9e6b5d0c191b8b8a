//! Builds the vector-add kernel and prints its PTX, then runs it on GPU 0 if there is one (fresh
//! random data, checked against the host).
//!
//! ```text
//! cargo run --example vector_add [-- --ptx] [--out FILE] [--target sm_90a] [--no-run]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = ptxkit::kernels::gpu::example_main("vector_add", true, &args);
    ExitCode::from(code.clamp(0, 255) as u8)
}
