//! The `ptxkit` command-line tool; every subcommand lives in `ptxkit::cli`.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match ptxkit::cli::run(&args) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`ptxkit ... | head`) is not an error worth a message.
            let _ = stdout.write_all(out.stdout.as_bytes());
            ExitCode::from(out.code.clamp(0, 255) as u8)
        }
        Err(e) => {
            eprintln!("ptxkit: {}", e.message);
            ExitCode::from(e.code.clamp(0, 255) as u8)
        }
    }
}
