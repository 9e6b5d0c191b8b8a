//! `ptxkit catalog --target T --out DIR`: one small, complete kernel per instruction form the target
//! has (file name = the form's name), and `ptxkit forms [--target T]`: the form table itself.

use super::{Args, CliError, Output, ValueError};
use ptx_isa::{Form, Target, catalog};

fn target_arg(a: &mut Args) -> Result<Option<Target>, CliError> {
    a.parsed("--target", |s| {
        s.parse::<Target>()
            .map_err(|e| ValueError::Unknown(e.message))
    })
}

pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let mut a = Args::new(args);
    let target = target_arg(&mut a)?
        .ok_or_else(|| CliError::usage("usage: ptxkit catalog --target T --out DIR"))?;
    let out = a
        .value("--out")?
        .ok_or_else(|| CliError::usage("usage: ptxkit catalog --target T --out DIR"))?;
    a.finish()?;
    let dir = std::path::Path::new(&out);
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create {out}: {e}")))?;
    let mut written = 0;
    for spec in Form::all().iter().filter(|f| f.targets.has(target)) {
        let text = catalog::module(spec.form, target)
            .and_then(|m| m.to_ptx())
            .map_err(|e| CliError {
                code: 1,
                message: format!("{}: {e}", spec.name),
            })?;
        let path = dir.join(format!("{}.ptx", spec.name));
        std::fs::write(&path, text)
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?;
        written += 1;
    }
    Ok(format!("wrote {written} kernels for {target} to {out}\n").into())
}

/// `ptxkit forms --coverage`: the families of the manual's chapter 9.7 against the table's rows,
/// group by group.
fn coverage() -> String {
    use ptx_isa::forms::families::{FAMILIES, rows_of};
    let mut s = String::from(
        "instruction families of PTX ISA 9.0 chapter 9.7 (on sm_80 ... sm_120a) and the rows of ptxkit's form table\n\
         (`-`: no rows; such an instruction is kept as written, with a warning)\n",
    );
    let mut groups: Vec<&str> = Vec::new();
    for f in FAMILIES {
        if !groups.contains(&f.group) {
            groups.push(f.group);
        }
    }
    let (mut covered, mut total) = (0, 0);
    for g in groups {
        let fams: Vec<_> = FAMILIES.iter().filter(|f| f.group == g).collect();
        let rows: Vec<(&str, usize)> = fams.iter().map(|f| (f.name, rows_of(f).len())).collect();
        let n = rows.iter().filter(|(_, r)| *r > 0).count();
        s.push_str(&format!("\n{g}: {n} of {} families\n", fams.len()));
        for (name, r) in rows {
            let what = if r == 0 {
                "-".to_string()
            } else {
                format!("{r} row{}", if r == 1 { "" } else { "s" })
            };
            s.push_str(&format!("  {name:<34} {what}\n"));
        }
        covered += n;
        total += fams.len();
    }
    s.push_str(&format!("\n{covered} of {total} families have rows\n"));
    s
}

/// `ptxkit forms [--target T] [--coverage]`: name, minimum PTX version, targets and PTX ISA section
/// of each form; with `--coverage`, the manual's families against the table.
pub(crate) fn forms(args: &[String]) -> Result<Output, CliError> {
    let mut a = Args::new(args);
    let target = target_arg(&mut a)?;
    let cover = a.flag("--coverage");
    a.finish()?;
    if cover {
        return Ok(coverage().into());
    }
    let mut s = String::new();
    for spec in Form::all()
        .iter()
        .filter(|f| target.is_none_or(|t| f.targets.has(t)))
    {
        let ptx = match target {
            Some(t) => spec.form.min_ptx_on(t),
            None => spec.min_ptx,
        };
        s.push_str(&format!(
            "{:<36} PTX {:<4} {:<58} {}\n",
            spec.name,
            ptx.to_string(),
            spec.targets.names(),
            spec.section
        ));
    }
    Ok(s.into())
}

#[cfg(test)]
mod tests {
    use crate::cli::run;
    use crate::cli::tests::args;

    #[test]
    fn writes_one_kernel_per_form() {
        let dir = std::env::temp_dir().join(format!("ptxkit-catalog-{}", std::process::id()));
        let d = dir.to_string_lossy().to_string();
        let out = run(&args(&["catalog", "--target", "sm_100a", "--out", &d])).unwrap();
        let n = ptx_isa::Form::all()
            .iter()
            .filter(|f| f.targets.has(ptx_isa::Target::Sm100a))
            .count();
        assert_eq!(
            out.stdout,
            format!("wrote {n} kernels for sm_100a to {d}\n")
        );
        let tc = std::fs::read_to_string(dir.join("tcgen05.mma.ptx")).unwrap();
        assert!(
            tc.contains(".target sm_100a") && tc.contains("tcgen05.mma.cta_group::1.kind::f16")
        );
        assert!(
            !dir.join("wgmma.fence.ptx").exists(),
            "sm_100a has no wgmma"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn coverage_lists_every_family_of_the_manual() {
        let out = run(&args(&["forms", "--coverage"])).unwrap();
        let fams = ptx_isa::forms::families::FAMILIES;
        assert!(out.stdout.contains("9.7.9 Data Movement and Conversion:"));
        assert!(
            out.stdout
                .lines()
                .any(|l| l.trim_start().starts_with("tensormap.replace ") && l.contains("rows"))
        );
        assert!(
            out.stdout
                .lines()
                .any(|l| l.trim_start().starts_with("brx.idx ") && l.trim_end().ends_with("1 row"))
        );
        // Every family of chapter 9.7 has rows.
        let last = out.stdout.lines().last().unwrap();
        let n = fams.len();
        assert!(
            last.ends_with(&format!("{n} of {n} families have rows")),
            "{last}"
        );
    }

    #[test]
    fn lists_forms_and_rejects_bad_arguments() {
        let out = run(&args(&["forms", "--target", "sm_80"])).unwrap();
        assert!(out.stdout.lines().any(|l| l.starts_with("add.f32 ")));
        assert!(!out.stdout.contains("wgmma"));
        assert_eq!(
            run(&args(&["catalog", "--target", "sm_90a"]))
                .unwrap_err()
                .code,
            2
        );
        assert_eq!(run(&args(&["catalog", "--out", "x"])).unwrap_err().code, 2);
        assert_eq!(
            run(&args(&["forms", "--target", "sm_7"])).unwrap_err().code,
            2
        );
    }
}
