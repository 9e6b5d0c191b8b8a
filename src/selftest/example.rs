//! What the examples run by hand share: their start (print the PTX, then load the kernel on
//! device 0 when there is one fit for it, [`example_start`]), the bit-exact comparison that prints
//! their `PASS`/`FAIL` line ([`exact_verdict`]), and the PTX check their `cargo test` runs
//! ([`check_ptx`]).

use std::sync::Arc;

use ptx_isa::Target;

use super::ctx::{GpuCheckError, device_or_skip};
use crate::kernel::BuiltKernel;
use crate::runtime::cuda::CudaStream;
use crate::runtime::{Device, JitOptions, LoadedKernel};

/// What an example runs on: device 0, its default stream and the example's kernel loaded there.
pub struct ExampleGpu {
    /// Device 0.
    pub dev: Device,
    /// Its default stream.
    pub stream: Arc<CudaStream>,
    /// The example's kernel, built for the device's target and loaded.
    pub kernel: LoadedKernel,
}

/// An example's start: prints the sm_90a PTX of `build`'s kernel, then builds it for device 0 and
/// loads it. `None` (after saying why on stderr) where there is no device, or, with
/// `floor = Some((major, needs))`, where its compute capability is below `major.0`.
pub fn example_start(
    program: &str,
    floor: Option<(u32, &str)>,
    build: impl Fn(Target) -> crate::kernel::Result<BuiltKernel>,
) -> Result<Option<ExampleGpu>, GpuCheckError> {
    print!("{}", build(Target::Sm90a)?.ptx());
    let (major, needs) = floor.unwrap_or((0, ""));
    let Some(dev) = device_at_least_or_skip(program, major, needs) else {
        return Ok(None);
    };
    let stream = dev.default_stream();
    let kernel = build(dev.target())?.load(&dev, &JitOptions::default())?;
    Ok(Some(ExampleGpu {
        dev,
        stream,
        kernel,
    }))
}

/// Device 0 for an example when its compute capability is `major.0` or more, else `None` after
/// saying on stderr why `program` did not run (no device, or a lower compute capability, which
/// `needs`, as `TMA needs`, names the reason for), so the program can end quietly.
pub fn device_at_least_or_skip(program: &str, major: u32, needs: &str) -> Option<Device> {
    let dev = device_or_skip(&format!("{program}: not run on a GPU"))?;
    if dev.attributes().compute_capability.0 < major {
        eprintln!("{program}: not run: {needs} compute capability {major}.0 or more");
        return None;
    }
    Some(dev)
}

/// A result that is not bit for bit the host reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: wrong result ({wrong} elements differ)")]
pub struct WrongResult {
    /// The run (`scale m = 333, s = 1.5`).
    pub what: String,
    /// How many elements differ (a length difference counts each missing element).
    pub wrong: usize,
}

/// Compares `got` with `want` bit for bit (a NaN left by a poisoned output differs from every
/// value), prints `PASS {what}: 0 elements differ` (or `FAIL` and the count), and returns the
/// failure as an error.
pub fn exact_verdict(what: &str, got: &[f32], want: &[f32]) -> Result<(), WrongResult> {
    let wrong =
        got.iter().zip(want).filter(|(g, w)| g != w).count() + got.len().abs_diff(want.len());
    let verdict = if wrong == 0 { "PASS" } else { "FAIL" };
    println!("{verdict} {what}: {wrong} elements differ");
    if wrong > 0 {
        return Err(WrongResult {
            what: what.to_string(),
            wrong,
        });
    }
    Ok(())
}

/// Why a kernel's PTX failed [`check_ptx`].
#[derive(Debug, thiserror::Error)]
pub enum PtxCheckError {
    /// The text lacks an instruction the kernel is written to use.
    #[error("missing `{0}`")]
    Missing(String),
    /// The ptxas the tests name could not be found or run.
    #[error("ptxas: {0}")]
    Ptxas(String),
    /// ptxas refused the text.
    #[error("ptxas refused the {target} PTX:\n{log}")]
    Refused {
        /// The target assembled for.
        target: Target,
        /// ptxas's log.
        log: String,
    },
}

/// The check an example's `cargo test` runs on its kernel's PTX: the text holds every string of
/// `wants`, and ptxas (when the tests have one, [`ptx_isa::ptxas::for_tests`]) assembles it for
/// `target`.
pub fn check_ptx(ptx: &str, target: Target, wants: &[&str]) -> Result<(), PtxCheckError> {
    if let Some(want) = wants.iter().find(|w| !ptx.contains(**w)) {
        return Err(PtxCheckError::Missing(want.to_string()));
    }
    if let Some(ptxas) = ptx_isa::ptxas::for_tests().map_err(PtxCheckError::Ptxas)? {
        let out = ptxas
            .assemble(ptx, target, &[])
            .map_err(|e| PtxCheckError::Ptxas(e.to_string()))?;
        if !out.ok {
            return Err(PtxCheckError::Refused {
                target,
                log: out.log,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_counts_every_differing_element() {
        assert_eq!(exact_verdict("same", &[1.0, 2.0], &[1.0, 2.0]), Ok(()));
        let e = exact_verdict("poisoned", &[1.0, f32::NAN, 3.5], &[1.0, 2.0, 3.0]).unwrap_err();
        assert_eq!(e.wrong, 2);
        assert_eq!(e.to_string(), "poisoned: wrong result (2 elements differ)");
        assert_eq!(
            exact_verdict("short", &[1.0], &[1.0, 2.0])
                .unwrap_err()
                .wrong,
            1
        );
    }

    #[test]
    fn a_missing_instruction_is_named() {
        let e = check_ptx("ret;", Target::Sm90a, &["ret;", "bar.sync"]).unwrap_err();
        assert!(
            matches!(&e, PtxCheckError::Missing(w) if w == "bar.sync"),
            "{e}"
        );
    }
}
