//! `ptxkit selftest`: runs the GPU check of every [`crate::registry`] entry that has one on
//! device 0, on fresh random data, and prints one line per check (the Hopper-only ones are
//! skipped on an older GPU): first the in-process checks ([`Selftest::InProcess`]), then each
//! isolated check ([`Selftest::Isolated`]: planted hangs that end in a trap, device printf) in a
//! child process `ptxkit selftest --only NAME`, whose exit status and output it reads. Exit
//! status 0 when none fails, 1 when one fails, 3 when there is no GPU (said plainly, nothing
//! run). `--only NAME` runs one check in this process.

use super::{Args, CliError, Output};
use crate::registry::{Entry, Selftest, entry, registry};
use crate::selftest::hang_checks::output_has_lines;
use crate::selftest::{GpuCheckError, GpuCtx, RunResult, result_line};

/// The entries with an in-process check, then those with an isolated one, in registry order:
/// what `ptxkit selftest` runs.
pub(crate) fn checks() -> impl Iterator<Item = (&'static Entry, Selftest)> {
    let with = |isolated: bool| {
        registry().iter().filter_map(move |e| match e.selftest {
            Some(s) if matches!(s, Selftest::Isolated(..)) == isolated => Some((e, s)),
            _ => None,
        })
    };
    with(false).chain(with(true))
}

/// Runs one check in this process.
fn run_only(name: &str) -> Result<Output, CliError> {
    let Some(run) = entry(name).and_then(|e| e.selftest).map(|s| s.run()) else {
        return Err(CliError::usage(format!("no GPU example or check `{name}`")));
    };
    let mut ctx = match GpuCtx::open() {
        Ok(c) => c,
        Err(e) => {
            return Ok(Output {
                stdout: format!("selftest: no GPU, nothing run: {e}\n"),
                code: 3,
            });
        }
    };
    let r = run(&mut ctx);
    let passed = matches!(&r, Ok(rep) if rep.passed());
    Ok(Output {
        stdout: format!("{}\n", result_line(name, &r)),
        code: i32::from(!passed),
    })
}

/// Runs the check of `name` in a child `ptxkit selftest --only NAME` and checks its status and
/// its output for the lines `expected`.
fn run_isolated(name: &str, expected: &[&str]) -> Option<RunResult> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem().and_then(|s| s.to_str()) != Some("ptxkit") {
        // Inside a test binary or an example: no `ptxkit` to start.
        return None;
    }
    let out = match std::process::Command::new(&exe)
        .args(["selftest", "--only", name])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            return Some(Err(GpuCheckError::Unexpected {
                check: name.to_string(),
                detail: format!("could not start {}: {e}", exe.display()),
            }));
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = (!out.status.success()).then(|| out.status.to_string());
    Some(judge_child(status.as_deref(), &stdout, &stderr, expected))
}

/// The result of a child run from its exit status (`None`: success), output and the lines the
/// check expects in it.
fn judge_child(status: Option<&str>, stdout: &str, stderr: &str, expected: &[&str]) -> RunResult {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("PASS ") || l.starts_with("FAIL "))
        .unwrap_or("");
    if let Some(status) = status {
        return Err(GpuCheckError::Unexpected {
            check: format!("child {status}"),
            detail: format!("{line} {}", stderr.trim()),
        });
    }
    output_has_lines(stdout, expected).map(|()| crate::selftest::Report {
        max_err: 0.0,
        tolerance: 0.0,
        detail: line.splitn(3, ' ').nth(2).unwrap_or("").trim().to_string(),
    })
}

pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let mut a = Args::new(args);
    let only = a.value("--only")?;
    a.finish()?;
    if let Some(name) = only {
        return run_only(&name);
    }
    let ctx = match GpuCtx::open() {
        Ok(c) => c,
        Err(e) => {
            return Ok(Output {
                stdout: format!("selftest: no GPU, nothing run: {e}\n"),
                code: 3,
            });
        }
    };
    let at = ctx.dev.attributes();
    let mut s = format!(
        "selftest on {} (cc {}.{}, {} SMs), PTX target {}\n",
        at.name,
        at.compute_capability.0,
        at.compute_capability.1,
        at.sm_count,
        ctx.target()
    );
    let hopper = ctx.dev.attributes().compute_capability.0 >= 9;
    let (mut failed, mut skipped, mut total) = (0, 0, 0);
    let mut ctx = Some(ctx);
    for (e, check) in checks() {
        total += 1;
        let r = match check {
            Selftest::InProcess(run) => match ctx.as_mut() {
                Some(ctx) if hopper || !e.hopper => Some(run(ctx)),
                _ => None,
            },
            Selftest::Isolated(_, expected) => {
                // A child gets the device to itself.
                drop(ctx.take());
                if hopper {
                    run_isolated(e.name, expected)
                } else {
                    None
                }
            }
        };
        match r {
            Some(r) => {
                if !matches!(&r, Ok(rep) if rep.passed()) {
                    failed += 1;
                }
                s.push_str(&result_line(e.name, &r));
            }
            None if matches!(check, Selftest::InProcess(_)) => {
                skipped += 1;
                s.push_str(&format!("SKIP {:<17} needs a Hopper GPU (sm_90)", e.name));
            }
            None => {
                skipped += 1;
                s.push_str(&format!(
                    "SKIP {:<17} needs a Hopper GPU and the `ptxkit` binary (runs in a child process)",
                    e.name
                ));
            }
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "{} of {total} passed, {failed} failed, {skipped} skipped\n",
        total - failed - skipped,
    ));
    Ok(Output {
        stdout: s,
        code: i32::from(failed > 0),
    })
}

#[cfg(test)]
mod tests {
    use crate::cli::run;

    /// Without a driver the command says so and exits 3; with one it runs (exit 0 or 1).
    #[test]
    fn a_child_is_judged_by_its_status_and_output() {
        use super::judge_child;
        let lines = ["hello 1"];
        let ok = judge_child(None, "hello 1\nPASS printf  max err 0\n", "", &lines).unwrap();
        assert_eq!(ok.detail, "max err 0");
        assert!(judge_child(None, "PASS printf\n", "", &lines).is_err());
        let e =
            judge_child(Some("exit status: 1"), "FAIL hang_x wrong\n", "boom", &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "child exit status: 1: FAIL hang_x wrong boom"
        );
    }

    #[test]
    fn selftest_without_gpu_exits_3() {
        let out = run(&["selftest".to_string()]).unwrap();
        if crate::runtime::Device::new(0).is_err() {
            assert_eq!(out.code, 3);
            assert!(out.stdout.starts_with("selftest: no GPU"), "{}", out.stdout);
        } else {
            assert!(out.code == 0 || out.code == 1);
        }
        assert!(run(&["selftest".to_string(), "--bogus".to_string()]).is_err());
        let only = |name: &str| run(&["selftest".into(), "--only".into(), name.into()]);
        assert!(only("no_such_check").is_err());
        if crate::runtime::Device::new(0).is_err() {
            assert_eq!(only("printf").unwrap().code, 3);
            assert_eq!(only("vector_add").unwrap().code, 3);
        }
    }
}
