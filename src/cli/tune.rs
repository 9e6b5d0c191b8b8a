//! `ptxkit tune`: times the candidate configurations of a GEMM problem on device 0 and stores the
//! fastest in the tuning cache ([`crate::library::gemm::tune`]), which the library's
//! `config_for_problem` (and so `Gemm::for_problem` and the Python package's GEMMs) reads
//! before its rule: the same default file, `$PTXKIT_TUNE_CACHE` or the cache folder's
//! `tune.tsv`.
//!
//! ```text
//! ptxkit tune gemm M N K [--dtype bf16|e4m3] [--iters N] [--cache FILE]
//! ```
//!
//! Exit status 0 with a table, 2 for bad arguments, 3 without a GPU (said plainly, nothing run).

use ptx_isa::ScalarType;

use super::{Args, CliError, Output};
use crate::library::gemm::tune::{TuneCache, TuneProblem, tune};
use crate::runtime::Device;

const USAGE: &str = "usage: ptxkit tune gemm M N K [--dtype bf16|e4m3] [--iters N] [--cache FILE]";

/// Runs `ptxkit tune ARGS...`.
pub fn run(args: &[String]) -> Result<Output, CliError> {
    let mut args = Args::new(args);
    let dtype = args.value("--dtype")?.unwrap_or_else(|| "bf16".into());
    let iters =
        match args.value("--iters")? {
            Some(v) => v.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
                CliError::usage(format!("tune: --iters {v} is not a positive count"))
            })?,
            None => 20,
        };
    let cache_path = match args.value("--cache")? {
        Some(p) => std::path::PathBuf::from(p),
        None => TuneCache::default_path().ok_or_else(|| {
            CliError::usage("tune: no cache file (set PTXKIT_TUNE_CACHE, PTXKIT_CACHE_DIR or HOME, or pass --cache)")
        })?,
    };
    let pos = args.positionals();
    args.finish()?;
    let [what, m, n, k] = pos.as_slice() else {
        return Err(CliError::usage(USAGE));
    };
    if what != "gemm" {
        return Err(CliError::usage(format!(
            "tune: `{what}` is not tunable; {USAGE}"
        )));
    }
    let extent = |name: &str, v: &str| {
        v.parse::<usize>()
            .ok()
            .filter(|&x| x > 0)
            .ok_or_else(|| CliError::usage(format!("tune: {name} `{v}` is not a positive size")))
    };
    let input = match dtype.as_str() {
        "bf16" => ScalarType::Bf16,
        "e4m3" => ScalarType::E4m3,
        other => {
            return Err(CliError::usage(format!(
                "tune: --dtype {other}: bf16 or e4m3"
            )));
        }
    };
    let problem = TuneProblem::new(
        extent("M", m)?,
        extent("N", n)?,
        extent("K", k)?,
        input,
        ScalarType::Bf16,
    );
    // The cache file is read before the GPU is touched: a malformed one is said first.
    let mut cache =
        TuneCache::load(&cache_path).map_err(|e| CliError::usage(format!("tune: {e}")))?;
    let device = match Device::new(0) {
        Ok(d) => d,
        Err(e) => {
            return Ok(Output {
                stdout: format!("tune: no GPU, nothing run: {e}\n"),
                code: 3,
            });
        }
    };
    let report = tune(&device, &problem, &mut cache, iters).map_err(|e| CliError {
        code: 1,
        message: format!("tune: {e}"),
    })?;
    cache
        .save(&cache_path)
        .map_err(|e| CliError::usage(format!("tune: {e}")))?;
    let mut out = format!(
        "device: {}\n| configuration | TFLOP/s |\n| --- | --- |\n",
        device.attributes().name
    );
    for t in &report.timings {
        let v = t
            .tflops
            .map_or("wrong result".into(), |f| format!("{f:.0}"));
        out.push_str(&format!("| {} | {v} |\n", t.config.name()));
    }
    out.push_str(&format!(
        "best: {} at {:.0} TFLOP/s (the rule's pick: {}); of {:.1} s the PTX took {:.2} s, the \
         driver's JIT and load {:.2} s; stored in {}\n",
        report.best.name(),
        report.best_tflops,
        report.timings[0].config.name(),
        report.total_seconds,
        report.build_seconds,
        report.load_seconds,
        cache_path.display()
    ));
    Ok(out.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for bad in [
            &["gemm", "64", "4096"][..],
            &["attention", "1", "2", "3"],
            &["gemm", "0", "4096", "4096"],
            &["gemm", "64", "x", "4096"],
            &["gemm", "64", "4096", "4096", "--dtype", "f64"],
            &["gemm", "64", "4096", "4096", "--iters", "0"],
        ] {
            let e = run(&args(bad)).unwrap_err();
            assert_eq!(e.code, 2, "{bad:?}: {e}");
            assert!(
                e.message.starts_with("tune: ") || e.message.starts_with("usage"),
                "{e}"
            );
        }
    }

    /// A malformed cache file is refused with its line before anything runs; without a GPU the
    /// tool says so and exits 3, leaving the cache as it was.
    #[test]
    fn the_cache_is_read_first_and_no_gpu_is_exit_3() {
        let dir = std::env::temp_dir().join(format!("ptxkit-tune-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.tsv");
        std::fs::write(&bad, "NVIDIA H200\t132\n").unwrap();
        let e = run(&args(&[
            "gemm",
            "64",
            "256",
            "128",
            "--cache",
            bad.to_str().unwrap(),
        ]))
        .unwrap_err();
        assert!(e.message.contains("line 1"), "{e}");
        if crate::runtime::Device::new(0).is_err() {
            let empty = dir.join("empty.tsv");
            let out = run(&args(&[
                "gemm",
                "64",
                "256",
                "128",
                "--cache",
                empty.to_str().unwrap(),
            ]))
            .unwrap();
            assert_eq!(out.code, 3);
            assert!(out.stdout.contains("no GPU"), "{}", out.stdout);
            assert!(!empty.exists());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
