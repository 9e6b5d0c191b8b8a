//! `ptxkit selftest`: runs every GPU example on device 0 ([`crate::kernels::gpu::GPU_EXAMPLES`])
//! on fresh random data and prints one line per example (the Hopper-only ones are skipped on an
//! older GPU). Exit status 0 when none fails, 1 when one fails, 3 when there is no GPU (said
//! plainly, nothing run).

use super::{Args, CliError, Output};
use crate::kernels::gpu::{GPU_EXAMPLES, GpuCtx, result_line};

pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let a = Args::new(args);
    a.finish()?;
    let mut ctx = match GpuCtx::open() {
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
    let (mut failed, mut skipped) = (0, 0);
    for ex in GPU_EXAMPLES {
        match ex.run_on(&mut ctx) {
            Some(r) => {
                if !matches!(&r, Ok(rep) if rep.passed()) {
                    failed += 1;
                }
                s.push_str(&result_line(ex.name, &r));
            }
            None => {
                skipped += 1;
                s.push_str(&format!("SKIP {:<17} needs a Hopper GPU (sm_90)", ex.name));
            }
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "{} of {} passed, {failed} failed, {skipped} skipped\n",
        GPU_EXAMPLES.len() - failed - skipped,
        GPU_EXAMPLES.len()
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
    fn selftest_without_gpu_exits_3() {
        let out = run(&["selftest".to_string()]).unwrap();
        if crate::runtime::Device::new(0).is_err() {
            assert_eq!(out.code, 3);
            assert!(out.stdout.starts_with("selftest: no GPU"), "{}", out.stdout);
        } else {
            assert!(out.code == 0 || out.code == 1);
        }
        assert!(run(&["selftest".to_string(), "--bogus".to_string()]).is_err());
    }
}
