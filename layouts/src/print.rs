//! Printing helpers for people: the values of a layout on one line, and the 2-D table of a
//! rank-2 layout in the manner of CuTe's `print_layout`.

use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// The most elements [`values_line`] and [`table`] print.
pub const PRINT_LIMIT: i64 = 1 << 20;

/// `L(0) L(1) ... L(size-1)` separated by single spaces.
///
/// * `@pre size(layout) <= PRINT_LIMIT` ([`LayoutError::TooLarge`])
///
/// ```
/// use layouts::{print::values_line, Layout};
/// let l: Layout = "(2,2):(2,1)".parse().unwrap();
/// assert_eq!(values_line(&l).unwrap(), "0 2 1 3");
/// ```
pub fn values_line(layout: &Layout) -> Result<String, LayoutError> {
    check_printable(layout)?;
    Ok(layout
        .values()
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" "))
}

fn check_printable(layout: &Layout) -> Result<(), LayoutError> {
    if layout.size() > PRINT_LIMIT {
        return Err(LayoutError::TooLarge {
            what: "size to print",
            value: layout.size().into(),
        });
    }
    Ok(())
}

/// Rows × columns of offsets of a rank-2 layout: row `i`, column `j` shows `L(i, j)`.
///
/// * `@pre rank(layout) == 2` ([`LayoutError::RankNotTwo`])
/// * `@pre size(layout) <= PRINT_LIMIT` ([`LayoutError::TooLarge`])
///
/// ```
/// use layouts::{print::table, Layout};
/// let l: Layout = "(2,3):(3,1)".parse().unwrap();
/// assert_eq!(
///     table(&l).unwrap(),
///     "    0   1   2\n  +---+---+---+\n0 | 0 | 1 | 2 |\n  +---+---+---+\n1 | 3 | 4 | 5 |\n  +---+---+---+\n"
/// );
/// ```
pub fn table(layout: &Layout) -> Result<String, LayoutError> {
    let (Some(rows), Some(cols), 2) = (layout.mode(0), layout.mode(1), layout.rank()) else {
        return Err(LayoutError::RankNotTwo {
            rank: layout.rank(),
        });
    };
    check_printable(layout)?;
    let (m, n) = (rows.size(), cols.size());
    let cell = |i: i64, j: i64| {
        layout
            .eval(&IntTuple::tuple([IntTuple::Int(i), IntTuple::Int(j)]))
            .unwrap_or(0)
    };
    let width = (0..m)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| cell(i, j).to_string().len())
        .chain([(n - 1).to_string().len()])
        .max()
        .unwrap_or(1);
    let label = (m - 1).to_string().len();
    let rule = format!(
        "{} +{}\n",
        " ".repeat(label),
        format!("{}+", "-".repeat(width + 2)).repeat(n as usize)
    );
    let mut out = format!("{}  ", " ".repeat(label));
    for j in 0..n {
        out.push_str(&format!(" {j:>w$}  ", w = width));
    }
    let header = out.trim_end().to_string();
    out = format!("{header}\n{rule}");
    for i in 0..m {
        out.push_str(&format!("{i:>label$} |"));
        for j in 0..n {
            out.push_str(&format!(" {:>width$} |", cell(i, j)));
        }
        out.push('\n');
        out.push_str(&rule);
    }
    Ok(out)
}
