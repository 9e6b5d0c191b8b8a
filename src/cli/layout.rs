//! `ptxkit layout EXPR`: the layout-algebra calculator.
//!
//! Prints the result in CuTe notation; `--values` adds the line `L(0) L(1) ... L(size-1)`,
//! `--table` the rows × columns picture of a rank-2 result. The parser, the algebra and the
//! printing all live in the `layouts` crate (`layouts::calc`, `layouts::print`).

use layouts::calc::{FUNCTIONS, evaluate};
use layouts::print::{table, values_line};

use super::{Args, CliError, Output};

/// One line for `ptxkit help`.
pub(crate) const SUMMARY: &str =
    "layout-algebra calculator: CuTe notation, composition, complement, divides, products";

/// Runs `ptxkit layout [--values] [--table] EXPR`.
pub(crate) fn run(args: &[String]) -> Result<Output, CliError> {
    let mut args = Args::new(args);
    if args.flag("--help") || args.flag("-h") {
        return Ok(usage().into());
    }
    let values = args.flag("--values");
    let want_table = args.flag("--table");
    // An unquoted expression arrives split at its spaces; the pieces are one expression.
    let expr = args.positionals().join(" ");
    args.finish()?;
    if expr.trim().is_empty() {
        return Err(CliError::usage(
            "layout: missing EXPR; `ptxkit layout --help` shows the syntax",
        ));
    }
    let layout = evaluate(&expr).map_err(|e| CliError::usage(format!("layout: {e}")))?;
    let mut out = format!("{layout}\n");
    if values {
        out.push_str(
            &values_line(&layout).map_err(|e| CliError::usage(format!("layout --values: {e}")))?,
        );
        out.push('\n');
    }
    if want_table {
        out.push_str(&table(&layout).map_err(|e| CliError::usage(format!("layout --table: {e}")))?);
    }
    Ok(out.into())
}

fn usage() -> String {
    let mut s = String::from(
        "usage: ptxkit layout [--values] [--table] EXPR\n\n\
         EXPR is a layout in CuTe notation (`(4,2):(2,1)`, `12:1`, a bare shape is column-major),\n\
         a tiler `<L0, L1>`, or a call, nested freely:\n",
    );
    for f in FUNCTIONS {
        s.push_str(&format!("  {f}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::cli;

    fn run(args: &[&str]) -> Result<cli::Output, cli::CliError> {
        cli::run(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn stdout(args: &[&str]) -> String {
        match run(args) {
            Ok(out) => out.stdout,
            Err(e) => panic!("{args:?} failed: {}", e.message),
        }
    }

    #[test]
    fn prints_the_result_in_cute_notation() {
        assert_eq!(
            stdout(&["layout", "composition((6,2):(8,2), (4,3):(3,1))"]),
            "((2,2),3):((24,2),8)\n"
        );
        assert_eq!(stdout(&["layout", "12:1"]), "12:1\n");
        assert_eq!(stdout(&["layout", "complement(4:2, 24)"]), "(2,3):(1,8)\n");
        assert_eq!(
            stdout(&["layout", "composition((12,(4,8)):(59,(13,1)), <3:4, 8:2>)"]),
            "(3,(2,4)):(236,(26,1))\n"
        );
        assert_eq!(
            stdout(&["layout", "coalesce(logical_divide((4,2,3):(2,1,8), 4:2))"]),
            "(2,4,3):(4,1,8)\n"
        );
        assert_eq!(
            stdout(&["layout", "right_inverse((4,2):(2,1))"]),
            "(2,4):(4,1)\n"
        );
    }

    #[test]
    fn unquoted_expressions_are_joined() {
        assert_eq!(
            stdout(&["layout", "blocked_product((2,2):(1,2),", "(3,4):(4,1))"]),
            "((2,3),(2,4)):((1,16),(2,4))\n"
        );
    }

    #[test]
    fn values_and_table() {
        assert_eq!(
            stdout(&["layout", "--values", "(4,2):(2,1)"]),
            "(4,2):(2,1)\n0 2 4 6 1 3 5 7\n"
        );
        assert_eq!(
            stdout(&["layout", "(2,3):(3,1)", "--table"]),
            "(2,3):(3,1)\n    0   1   2\n  +---+---+---+\n0 | 0 | 1 | 2 |\n  +---+---+---+\n1 | 3 | 4 | 5 |\n  +---+---+---+\n"
        );
    }

    #[test]
    fn bad_input_exits_2_with_one_line() {
        for args in [
            vec!["layout", "complement((2,2):(1,1), 8)"],
            vec!["layout", "(4,2):(1)"],
            vec!["layout", "frobnicate(4:1)"],
            vec!["layout", "(4,2"],
            vec!["layout"],
            vec!["layout", "--table", "8:1"],
            vec!["layout", "--bogus", "8:1"],
            vec!["layout", "composition((4,8):(8,1), 2:3)"],
        ] {
            let e = run(&args).unwrap_err();
            assert_eq!(e.code, 2, "{args:?}");
            assert!(!e.message.contains('\n'), "{args:?}: {}", e.message);
        }
        let e = run(&["layout", "complement((2,2):(1,1), 8)"]).unwrap_err();
        assert!(e.message.contains("injectivity condition"), "{}", e.message);
    }
}
