//! The `ptxkit` command-line tool: one module per subcommand, dispatched by name.
//!
//! Every subcommand is a function from its arguments to the text it prints, so the tool is testable
//! without spawning processes. A bad argument is a [`CliError`] with exit status 2 and a one-line
//! message; the binary (`src/bin/ptxkit.rs`) prints it on stderr.

mod args;
mod catalog;
mod check;
mod desc;
mod dump;
mod fmt;
mod idesc;
mod layout;
mod selftest;
mod swizzle;
mod tune;

pub use args::{Args, ValueError};

/// A failed subcommand: the exit status and a one-line message for stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// The process exit status (2 for bad arguments or input).
    pub code: i32,
    /// A one-line message.
    pub message: String,
}

impl CliError {
    /// A usage error: exit status 2.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// What a subcommand printed on success: the text for stdout and the exit status (0 unless the
/// subcommand reports a finding, as `check` does with 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Text for stdout.
    pub stdout: String,
    /// Exit status.
    pub code: i32,
}

impl From<String> for Output {
    fn from(stdout: String) -> Output {
        Output { stdout, code: 0 }
    }
}

/// One subcommand: its name, a one-line summary and its entry point.
pub struct Subcommand {
    /// The name typed after `ptxkit`.
    pub name: &'static str,
    /// A one-line summary for `ptxkit help`.
    pub summary: &'static str,
    /// Runs the subcommand on the arguments after its name.
    pub run: fn(&[String]) -> Result<Output, CliError>,
}

/// Every subcommand, in the order `ptxkit help` lists them.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "catalog",
        summary: "write one kernel per instruction form of a target (--target T --out DIR)",
        run: catalog::run,
    },
    Subcommand {
        name: "forms",
        summary: "list the instruction forms: minimum PTX version, targets, PTX ISA section (--coverage: the manual's families against the table)",
        run: catalog::forms,
    },
    Subcommand {
        name: "dump",
        summary: "write the PTX of a built-in kernel (--list names them)",
        run: dump::run,
    },
    Subcommand {
        name: "check",
        summary: "validate PTX files offline: FILE:LINE:COL diagnostics, exit 1 if any is invalid",
        run: check::run,
    },
    Subcommand {
        name: "fmt",
        summary: "print the canonical PTX of a file",
        run: fmt::run,
    },
    Subcommand {
        name: "swizzle",
        summary: "apply a swizzle to offsets, or draw a swizzled tile",
        run: swizzle::run,
    },
    Subcommand {
        name: "desc",
        summary: "encode or decode a wgmma/tcgen05 shared-memory descriptor",
        run: desc::run,
    },
    Subcommand {
        name: "selftest",
        summary: "run every GPU example on device 0 and check it (exit 3 without a GPU)",
        run: selftest::run,
    },
    Subcommand {
        name: "tune",
        summary: "time a GEMM problem's candidate configurations on device 0 and cache the fastest (exit 3 without a GPU)",
        run: tune::run,
    },
    Subcommand {
        name: "idesc",
        summary: "encode a tcgen05.mma instruction descriptor",
        run: idesc::run,
    },
    Subcommand {
        name: "layout",
        summary: layout::SUMMARY,
        run: layout::run,
    },
];

/// Runs `ptxkit ARGS...` (without the program name).
pub fn run(args: &[String]) -> Result<Output, CliError> {
    let Some((name, rest)) = args.split_first() else {
        return Ok(help().into());
    };
    if name == "help" || name == "--help" || name == "-h" {
        return Ok(help().into());
    }
    match SUBCOMMANDS.iter().find(|s| s.name == name) {
        Some(sub) => (sub.run)(rest),
        None => Err(CliError::usage(format!(
            "unknown subcommand `{name}`; `ptxkit help` lists them"
        ))),
    }
}

fn help() -> String {
    let mut s = String::from("ptxkit: write GPU kernels as PTX from Rust\n\nsubcommands:\n");
    for sub in SUBCOMMANDS {
        s.push_str(&format!("  {:<10} {}\n", sub.name, sub.summary));
    }
    s
}

/// Helpers the subcommands' unit tests share.
#[cfg(test)]
pub(crate) mod tests {
    use super::{CliError, run};

    /// The words of a command line, as owned strings.
    pub(crate) fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    /// Runs `ptxkit LINE` (split on white space) and returns its standard output.
    pub(crate) fn ptxkit(line: &str) -> Result<String, CliError> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        run(&args).map(|o| o.stdout)
    }

    /// Checks that each command line prints exactly its expected output.
    pub(crate) fn prints(cases: &[(&str, &str)]) {
        for (line, want) in cases {
            assert_eq!(ptxkit(line).as_deref(), Ok(*want), "{line}");
        }
    }

    /// Checks that each command line is a usage error (exit 2) with a one-line message: the
    /// given one, or any where the case gives `""`.
    pub(crate) fn refuses(cases: &[(&str, &str)]) {
        for (line, msg) in cases {
            let e = ptxkit(line).unwrap_err();
            assert_eq!(e.code, 2, "{line}");
            assert!(!e.message.contains('\n'), "{line}: {}", e.message);
            if !msg.is_empty() {
                assert_eq!(e.message, *msg, "{line}");
            }
        }
    }
}
