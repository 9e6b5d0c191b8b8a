//! Builds the vector-add kernel and prints its PTX (`--out FILE` writes it instead; `--target T`
//! picks the target, sm_90a by default).
//!
//! ```text
//! cargo run --example vector_add
//! cargo run --example vector_add -- --target sm_80 --out vector_add.ptx
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = vec!["dump".to_string(), "vector_add".to_string()];
    args.extend(std::env::args().skip(1));
    match ptxkit::cli::run(&args) {
        Ok(out) => {
            print!("{}", out.stdout);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vector_add: {}", e.message);
            ExitCode::from(2)
        }
    }
}
