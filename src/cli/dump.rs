//! `ptxkit dump NAME [--target T] [--out FILE]` and `ptxkit dump --list`: the PTX of a kernel
//! of the [`crate::registry`] (the library's kernels, then the self-test harness's).

use super::{Args, CliError, Output, ValueError};
use crate::registry::{Home, entry, registry};

pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let mut a = Args::new(args);
    if a.flag("--list") {
        a.finish()?;
        let width = registry().iter().map(|e| e.name.len()).max().unwrap_or(0);
        let mut s = String::new();
        for e in registry() {
            let home = match e.home {
                Home::Library => "",
                Home::Selftest => "[selftest] ",
            };
            s.push_str(&format!("{:<width$} {home}{}\n", e.name, e.summary));
        }
        return Ok(s.into());
    }
    let target = a.parsed("--target", |s| {
        s.parse::<ptx_isa::Target>()
            .map_err(|e| ValueError::Unknown(e.message))
    })?;
    let out = a.value("--out")?;
    let names = a.positionals();
    a.finish()?;
    let [name] = names.as_slice() else {
        return Err(CliError::usage(
            "usage: ptxkit dump NAME [--target T] [--out FILE] | --list",
        ));
    };
    let Some(b) = entry(name) else {
        return Err(CliError::usage(format!(
            "no kernel `{name}`; `ptxkit dump --list` names them"
        )));
    };
    let target = target.unwrap_or(ptx_isa::Target::Sm90a);
    let ptx = (b.build)(target)
        .and_then(|m| m.to_ptx())
        .map_err(|e| CliError::usage(format!("{name} for {target}: {e}")))?;
    match out {
        Some(path) => {
            std::fs::write(&path, &ptx)
                .map_err(|e| CliError::usage(format!("cannot write {path}: {e}")))?;
            Ok(String::new().into())
        }
        None => Ok(ptx.into()),
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::run;
    use crate::cli::tests::args;

    #[test]
    fn dumps_and_lists() {
        let out = run(&args(&["dump", "vector_add", "--target", "sm_80"])).unwrap();
        assert!(
            out.stdout.contains(".target sm_80")
                && out.stdout.contains(".visible .entry vector_add(")
        );
        let list = run(&args(&["dump", "--list"])).unwrap();
        assert!(list.stdout.starts_with("vector_add"));
    }

    #[test]
    fn bad_arguments_exit_2() {
        assert_eq!(run(&args(&["dump", "nope"])).unwrap_err().code, 2);
        assert_eq!(
            run(&args(&["dump", "vector_add", "--target", "sm_91"]))
                .unwrap_err()
                .code,
            2
        );
        assert_eq!(run(&args(&["dump"])).unwrap_err().code, 2);
        assert_eq!(
            run(&args(&["dump", "vector_add", "--bogus"]))
                .unwrap_err()
                .code,
            2
        );
    }

    #[test]
    fn writes_a_file() {
        let path = std::env::temp_dir().join(format!("ptxkit-dump-{}.ptx", std::process::id()));
        let p = path.to_string_lossy().to_string();
        run(&args(&["dump", "vector_add", "--out", &p])).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(text.contains("vector_add"));
    }
}
