//! ptxas as a test oracle: finds NVIDIA's offline assembler (from `PTXAS` or `PATH`) and assembles
//! PTX text with it. ptxkit never needs ptxas to build or run kernels; its tests use it to prove that
//! every kernel they emit assembles for its target, and that the form table's gating agrees with it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::target::Target;

/// A ptxas executable.
#[derive(Debug, Clone)]
pub struct Ptxas {
    path: PathBuf,
    version: String,
}

/// The result of one assembly.
#[derive(Debug, Clone)]
pub struct Assembly {
    /// True when ptxas exited 0.
    pub ok: bool,
    /// What ptxas printed (stdout and stderr): diagnostics, and the `-v` resource report.
    pub log: String,
}

impl Ptxas {
    /// The ptxas named by `PTXAS`, else the first `ptxas` on `PATH`.
    pub fn find() -> Option<Ptxas> {
        let candidate = match std::env::var_os("PTXAS") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => std::env::var_os("PATH").map(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("ptxas"))
                    .find(|p| p.is_file())
            })??,
        };
        Ptxas::at(&candidate)
    }

    /// The ptxas at `path`, if it runs.
    pub fn at(path: &Path) -> Option<Ptxas> {
        let out = Command::new(path).arg("--version").output().ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .lines()
            .find(|l| l.contains("release"))
            .unwrap_or("unknown")
            .trim()
            .to_string();
        Some(Ptxas {
            path: path.to_path_buf(),
            version,
        })
    }

    /// The line of `ptxas --version` that names the release.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Assembles `ptx` for `target` (`-arch=sm_XX`), with `extra` arguments such as `-v`.
    pub fn assemble(&self, ptx: &str, target: Target, extra: &[&str]) -> std::io::Result<Assembly> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir();
        let stem = format!("ptxkit-{}-{n}", std::process::id());
        let src = dir.join(format!("{stem}.ptx"));
        let bin = dir.join(format!("{stem}.cubin"));
        std::fs::write(&src, ptx)?;
        let out = Command::new(&self.path)
            .arg(format!("-arch={}", target.name()))
            .args(extra)
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .output();
        let _ = std::fs::remove_file(&src);
        let _ = std::fs::remove_file(&bin);
        let out = out?;
        let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok(Assembly {
            ok: out.status.success(),
            log,
        })
    }
}

/// What the tests do about ptxas: `Ok(Some)` to check with it; `Ok(None)` when it is missing
/// outside CI (the check is skipped, and says so); `Err` when it is missing and `CI=true`, where a
/// missing oracle is a failure.
pub fn for_tests() -> Result<Option<Ptxas>, String> {
    match Ptxas::find() {
        Some(p) => Ok(Some(p)),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => Err(
            "CI=true but ptxas was not found: set PTXAS or put ptxas on PATH (.ci/run installs it)"
                .into(),
        ),
        None => {
            eprintln!("ptxas not found (set PTXAS): the ptxas check was skipped");
            Ok(None)
        }
    }
}
