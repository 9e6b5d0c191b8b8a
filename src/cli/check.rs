//! `ptxkit check FILE... [--target T]`: validates PTX files offline and prints one line per finding,
//! `FILE:LINE:COL: error: MESSAGE` (and warnings). Exits 0 when every file is valid, 1 otherwise.

use super::{Args, CliError, Output, ValueError};
use ptx_isa::validate::{self, Options, Severity};

pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let mut a = Args::new(args);
    let target = a.parsed("--target", |s| {
        s.parse::<ptx_isa::Target>()
            .map_err(|e| ValueError::Unknown(e.message))
    })?;
    let files = a.positionals();
    a.finish()?;
    if files.is_empty() {
        return Err(CliError::usage("usage: ptxkit check FILE... [--target T]"));
    }
    let opts = Options { target };
    let mut out = String::new();
    let mut invalid = 0usize;
    for f in &files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CliError::usage(format!("cannot read {f}: {e}")))?;
        let diags = validate::check(&text, &opts);
        for d in &diags {
            out.push_str(&format!("{f}:{d}\n"));
        }
        if diags.iter().any(|d| d.severity == Severity::Error) {
            invalid += 1;
        }
    }
    Ok(Output {
        stdout: out,
        code: i32::from(invalid > 0),
    })
}

#[cfg(test)]
mod tests {
    use crate::cli::run;

    fn write(name: &str, text: &str) -> String {
        let p = std::env::temp_dir().join(format!("ptxkit-check-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    const GOOD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 1;\n\tret;\n}\n";

    #[test]
    fn valid_files_exit_0_and_invalid_ones_1() {
        let good = write("good.ptx", GOOD);
        let out = run(&[String::from("check"), good.clone()]).unwrap();
        assert_eq!(out.code, 0, "{}", out.stdout);
        assert!(out.stdout.is_empty());
        let bad = write("bad.ptx", &GOOD.replace("%r1, 1", "%r7, 1"));
        let out = run(&["check".into(), good, bad.clone()]).unwrap();
        assert_eq!(out.code, 1);
        assert_eq!(
            out.stdout,
            format!("{bad}:7:2: error: register `%r7` is not declared\n")
        );
    }

    #[test]
    fn target_option_gates_another_target() {
        let f = write(
            "wgmma.ptx",
            &GOOD
                .replace("mov.u32 %r1, 1;", "wgmma.fence.sync.aligned;")
                .replace("sm_80", "sm_90a"),
        );
        assert_eq!(run(&["check".into(), f.clone()]).unwrap().code, 0);
        let out = run(&["check".into(), f, "--target".into(), "sm_100a".into()]).unwrap();
        assert_eq!(out.code, 1);
        assert!(
            out.stdout.contains("sm_100a lacks `wgmma.fence`"),
            "{}",
            out.stdout
        );
    }

    #[test]
    fn usage_errors_exit_2() {
        assert_eq!(run(&["check".into()]).unwrap_err().code, 2);
        assert_eq!(
            run(&["check".into(), "/nonexistent/x.ptx".into()])
                .unwrap_err()
                .code,
            2
        );
    }
}
