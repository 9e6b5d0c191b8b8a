//! `ptxkit fmt FILE`: prints the canonical PTX of a file (parsed, then written by ptxkit's
//! emitter). Reading it again gives the same model; for ptxkit's own kernels the text is unchanged.

use super::{Args, CliError, Output};

pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let mut a = Args::new(args);
    let files = a.positionals();
    a.finish()?;
    let [file] = files.as_slice() else {
        return Err(CliError::usage("usage: ptxkit fmt FILE"));
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::usage(format!("cannot read {file}: {e}")))?;
    let parsed =
        ptx_isa::parse::parse(&text).map_err(|e| CliError::usage(format!("{file}:{e}")))?;
    Ok(parsed.module.print().into())
}

#[cfg(test)]
mod tests {
    use crate::cli::run;

    #[test]
    fn formats_canonically_and_reports_parse_errors() {
        let p = std::env::temp_dir().join(format!("ptxkit-fmt-{}.ptx", std::process::id()));
        // `ptxkit fmt` of a file holding `text`.
        let fmt = |text: &str| {
            std::fs::write(&p, text).unwrap();
            run(&["fmt".into(), p.to_string_lossy().into_owned()])
        };
        let out = fmt(".version 8.0 .target sm_80 .address_size 64\n.visible .entry k() { ret; }")
            .unwrap();
        assert_eq!(out.code, 0);
        let want = ".visible .entry k()\n{\n\tret;\n}\n";
        assert!(out.stdout.contains(want), "{}", out.stdout);
        let e = fmt(".version 8.0\n.target sm_80\n.entry k() { ret }").unwrap_err();
        assert_eq!(e.code, 2);
        let want = ":3:18: expected an operand, found `}`";
        assert!(e.message.ends_with(want), "{}", e.message);
    }
}
