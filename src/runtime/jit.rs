//! Driver-JIT options and the reading of its logs.
//!
//! The driver's PTX JIT (ptxas inside libcuda) writes diagnostics such as
//! `ptxas application ptx input, line 12; error   : Unknown symbol '%r9'`. [`parse_jit_log`] turns
//! those lines into [`JitDiagnostic`]s; [`jit_error`] makes the first error a
//! [`RuntimeError::Jit`] that carries the PTX line it names.

use super::error::RuntimeError;

/// Options for the driver JIT (`CUjit_option`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JitOptions {
    /// `CU_JIT_OPTIMIZATION_LEVEL`, 0..=4 (the driver's default is 4).
    pub opt_level: Option<u32>,
    /// `CU_JIT_MAX_REGISTERS`: registers per thread at most.
    pub max_registers: Option<u32>,
    /// `CU_JIT_GENERATE_LINE_INFO`: keep line information for profilers.
    pub line_info: bool,
    /// `CU_JIT_LOG_VERBOSE`: have the info log report registers and shared memory per kernel.
    pub verbose: bool,
}

impl JitOptions {
    /// Checks the values the driver would reject.
    pub fn check(&self) -> Result<(), RuntimeError> {
        if let Some(o) = self.opt_level {
            if o > 4 {
                return Err(RuntimeError::JitOption {
                    reason: format!("JIT optimisation level {o} is not in 0..=4"),
                });
            }
        }
        if let Some(r) = self.max_registers {
            if !(16..=255).contains(&r) {
                return Err(RuntimeError::JitOption {
                    reason: format!("JIT register limit {r} is not in 16..=255"),
                });
            }
        }
        Ok(())
    }
}

/// How serious a JIT diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// `error`.
    Error,
    /// `fatal` (ends the assembly).
    Fatal,
    /// `warning`.
    Warning,
    /// `info` or anything else.
    Info,
}

/// One line of a JIT log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitDiagnostic {
    /// The 1-based PTX line, when the line names one.
    pub line: Option<usize>,
    /// Its severity.
    pub severity: Severity,
    /// The message after the severity.
    pub message: String,
}

/// Reads the diagnostics of a JIT log, one per line that has a `severity : message` form; lines
/// without a severity are skipped.
pub fn parse_jit_log(log: &str) -> Vec<JitDiagnostic> {
    log.lines().filter_map(parse_line).collect()
}

fn parse_line(text: &str) -> Option<JitDiagnostic> {
    // `<tool> <input>, line <N>; <severity> : <message>` or `<tool> <severity> : <message>`.
    let (head, rest) = match text.find(", line ") {
        Some(i) => {
            let after = &text[i + ", line ".len()..];
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            let line = digits.parse::<usize>().ok();
            let rest = after[digits.len()..].trim_start_matches(';').trim_start();
            (line, rest)
        }
        None => (
            None,
            text.strip_prefix("ptxas").unwrap_or(text).trim_start(),
        ),
    };
    let colon = rest.find(':')?;
    let word = rest[..colon].trim();
    let severity = match word {
        "error" => Severity::Error,
        "fatal" => Severity::Fatal,
        "warning" => Severity::Warning,
        "info" => Severity::Info,
        _ => return None,
    };
    Some(JitDiagnostic {
        line: head,
        severity,
        message: rest[colon + 1..].trim().to_string(),
    })
}

/// The [`RuntimeError::Jit`] for a failed load of `ptx`: the first error (or fatal) diagnostic
/// that names a line gives the line, shown with its PTX source text; otherwise the first error, or
/// the driver's own message when the log is empty.
pub fn jit_error(ptx: &str, log: &str, driver_message: &str) -> RuntimeError {
    let diags = parse_jit_log(log);
    let is_bad = |d: &&JitDiagnostic| matches!(d.severity, Severity::Error | Severity::Fatal);
    let first = diags
        .iter()
        .filter(is_bad)
        .find(|d| d.line.is_some())
        .or_else(|| diags.iter().find(is_bad));
    let (line, message) = match first {
        Some(d) => (d.line, d.message.clone()),
        None => (None, driver_message.to_string()),
    };
    let source_line = line
        .and_then(|l| ptx.lines().nth(l.checked_sub(1)?))
        .map(|s| s.trim_end().to_string());
    RuntimeError::Jit {
        line,
        source_line,
        message,
        log: log.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry bad(\n    \
        .param .u64 out\n)\n{\n    .reg .b32 %r<4>;\n    .reg .b64 %rd<3>;\n    \
        ld.param.u64 %rd1, [out];\n    mov.u32 %r1, %tid.x;\n    add.u32 %r2, %r1, %r9;\n    \
        frobnicate.u32 %r3, %r2;\n    st.global.u32 [%rd1], %r3;\n    ret;\n}\n";

    /// The log the driver JIT writes for `PTX` (captured from ptxas 13.0, whose messages the
    /// driver JIT shares, with the driver's `application ptx input` name).
    const LOG: &str = "ptxas application ptx input, line 13; error   : Arguments mismatch for instruction 'add'\n\
        ptxas application ptx input, line 14; error   : Not a name of any known instruction: 'frobnicate'\n\
        ptxas application ptx input, line 13; error   : Unknown symbol '%r9'\n\
        ptxas fatal   : Ptx assembly aborted due to errors\n";

    #[test]
    fn parses_every_diagnostic() {
        let d = parse_jit_log(LOG);
        assert_eq!(d.len(), 4);
        assert_eq!(d[0].line, Some(13));
        assert_eq!(d[0].severity, Severity::Error);
        assert_eq!(d[0].message, "Arguments mismatch for instruction 'add'");
        assert_eq!(d[1].line, Some(14));
        assert_eq!(
            d[3],
            JitDiagnostic {
                line: None,
                severity: Severity::Fatal,
                message: "Ptx assembly aborted due to errors".into()
            }
        );
    }

    #[test]
    fn error_names_the_line_and_shows_the_source() {
        let e = jit_error(PTX, LOG, "CUDA_ERROR_INVALID_PTX");
        match &e {
            RuntimeError::Jit {
                line,
                source_line,
                message,
                log,
            } => {
                assert_eq!(*line, Some(13));
                assert_eq!(source_line.as_deref(), Some("    add.u32 %r2, %r1, %r9;"));
                assert_eq!(message, "Arguments mismatch for instruction 'add'");
                assert_eq!(log, LOG);
            }
            e => panic!("{e}"),
        }
        let text = e.to_string();
        assert!(
            text.starts_with("PTX JIT failed at line 13: Arguments mismatch"),
            "{text}"
        );
        assert!(
            text.contains("   13 |     add.u32 %r2, %r1, %r9;"),
            "{text}"
        );
    }

    #[test]
    fn syntax_error_and_warning_lines() {
        let log = "ptxas application ptx input, line 5; warning : Unused parameter\n\
                   ptxas application ptx input, line 9; fatal   : Parsing error near '}': syntax error\n\
                   ptxas fatal   : Ptx assembly aborted due to errors";
        let d = parse_jit_log(log);
        assert_eq!(d[0].severity, Severity::Warning);
        let e = jit_error(PTX, log, "x");
        assert!(matches!(e, RuntimeError::Jit { line: Some(9), .. }), "{e}");
    }

    #[test]
    fn empty_log_falls_back_to_the_driver_message() {
        let e = jit_error(PTX, "", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
        match e {
            RuntimeError::Jit {
                line: None,
                source_line: None,
                message,
                ..
            } => {
                assert_eq!(message, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
            }
            e => panic!("{e}"),
        }
        // A line number past the end of the text (or 0) gives no source line, not a panic.
        for at in [99, 0] {
            let e = jit_error("one line", &format!("x, line {at}; error : boom"), "");
            assert!(
                matches!(e, RuntimeError::Jit { line: Some(l), source_line: None, .. } if l == at),
                "line {at}: {e}"
            );
        }
    }

    #[test]
    fn option_ranges() {
        JitOptions {
            opt_level: Some(3),
            max_registers: Some(128),
            ..Default::default()
        }
        .check()
        .unwrap();
        let opt_level_5 = JitOptions {
            opt_level: Some(5),
            ..Default::default()
        };
        let max_registers_8 = JitOptions {
            max_registers: Some(8),
            ..Default::default()
        };
        for bad in [opt_level_5, max_registers_8] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
