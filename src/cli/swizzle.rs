//! `ptxkit swizzle`: apply a swizzle to offsets, or draw where it puts each chunk of a tile.
//!
//! ```text
//! ptxkit swizzle SPEC OFFSET...          SPEC = B,M,S | none | 32B | 64B | 128B
//! ptxkit swizzle SPEC --tile ROWSxBYTES
//! ```

use smem::{Swizzle, SwizzleMode};

use super::desc::number;
use super::{Args, CliError, Output, ValueError};

/// The most cells `--tile` draws.
const MAX_CELLS: u64 = 1 << 16;

fn spec(s: &str) -> Result<Swizzle, CliError> {
    if s.contains(',') {
        let parts: Vec<&str> = s.split(',').collect();
        let [b, m, sh] = parts.as_slice() else {
            return Err(CliError::usage(format!("swizzle: `{s}` is not B,M,S")));
        };
        let n = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| CliError::usage(format!("swizzle: `{s}` is not B,M,S")))
        };
        return Swizzle::new(n(b)?, n(m)?, n(sh)?)
            .map_err(|e| CliError::usage(format!("swizzle: {e}")));
    }
    s.parse::<SwizzleMode>()
        .map(SwizzleMode::swizzle)
        .map_err(|e| CliError::usage(format!("swizzle: {e}")))
}

fn tile_size(s: &str) -> Result<(u64, u64), ValueError> {
    let (rows, bytes) = s.split_once(['x', 'X']).ok_or(ValueError::NotATileSize)?;
    Ok((number(rows)?, number(bytes)?))
}

/// Runs `ptxkit swizzle ARGS...`.
pub fn run(args: &[String]) -> Result<Output, CliError> {
    let mut args = Args::new(args);
    let tile = args.parsed("--tile", tile_size)?;
    let pos = args.positionals();
    args.finish()?;
    let Some((first, offsets)) = pos.split_first() else {
        return Err(CliError::usage(
            "usage: ptxkit swizzle B,M,S|32B|64B|128B OFFSET... | --tile ROWSxBYTES",
        ));
    };
    let sw = spec(first)?;
    match tile {
        Some((rows, bytes)) if offsets.is_empty() => picture(sw, rows, bytes),
        Some(_) => Err(CliError::usage("swizzle: give offsets or --tile, not both")),
        None if offsets.is_empty() => Err(CliError::usage("swizzle: no offsets given")),
        None => {
            let mut out = String::new();
            for o in offsets {
                let x =
                    number(o).map_err(|e| CliError::usage(format!("swizzle: offset {o}: {e}")))?;
                out.push_str(&format!("{}\n", sw.apply(x)));
            }
            Ok(out.into())
        }
    }
}

/// For each logical row, where each of its chunks (2^M units: 16 bytes for the byte modes) is
/// stored: the physical chunk index in the same row, or `row.chunk` when it lands in another.
fn picture(sw: Swizzle, rows: u64, bytes: u64) -> Result<Output, CliError> {
    let chunk = 1u64 << sw.base();
    if rows == 0 || bytes == 0 || bytes % chunk != 0 {
        return Err(CliError::usage(format!(
            "swizzle: --tile needs at least one row of a positive multiple of {chunk} bytes"
        )));
    }
    let chunks = bytes / chunk;
    if rows.saturating_mul(chunks) > MAX_CELLS {
        return Err(CliError::usage(format!(
            "swizzle: --tile draws at most {MAX_CELLS} chunks"
        )));
    }
    let mut cells = Vec::new();
    for r in 0..rows {
        let row: Vec<String> = (0..chunks)
            .map(|c| {
                let phys = sw.apply(r * bytes + c * chunk);
                let (pr, pc) = (phys / bytes, (phys % bytes) / chunk);
                if pr == r {
                    pc.to_string()
                } else {
                    format!("{pr}.{pc}")
                }
            })
            .collect();
        cells.push(row);
    }
    let width = cells.iter().flatten().map(String::len).max().unwrap_or(1);
    let label = rows.saturating_sub(1).to_string().len();
    let mut out = format!(
        "{sw}: {rows} rows x {bytes} bytes, {chunk}-byte chunks; column c of row r shows where chunk c of row r is stored\n"
    );
    for (r, row) in cells.iter().enumerate() {
        let line: Vec<String> = row.iter().map(|c| format!("{c:>width$}")).collect();
        out.push_str(&format!("row {r:>label$}: {}\n", line.join(" ")));
    }
    Ok(out.into())
}

#[cfg(test)]
mod tests {
    use crate::cli::tests::{prints, ptxkit, refuses};

    #[test]
    fn swizzles_offsets() {
        prints(&[
            ("swizzle 128B 0 0x80 144 1023", "0\n144\n128\n911\n"),
            ("swizzle 3,4,3 0x80", "144\n"),
            ("swizzle 32B 128 0x90", "144\n128\n"),
            ("swizzle none 12345", "12345\n"),
        ]);
    }

    #[test]
    fn draws_a_128b_atom() {
        prints(&[(
            "swizzle 128B --tile 8x128",
            "Sw<3,4,3>: 8 rows x 128 bytes, 16-byte chunks; column c of row r shows where chunk c of row r is stored\n\
             row 0: 0 1 2 3 4 5 6 7\n\
             row 1: 1 0 3 2 5 4 7 6\n\
             row 2: 2 3 0 1 6 7 4 5\n\
             row 3: 3 2 1 0 7 6 5 4\n\
             row 4: 4 5 6 7 0 1 2 3\n\
             row 5: 5 4 7 6 1 0 3 2\n\
             row 6: 6 7 4 5 2 3 0 1\n\
             row 7: 7 6 5 4 3 2 1 0\n",
        )]);
    }

    #[test]
    fn draws_rows_narrower_than_the_span() {
        // 64-byte rows under the 128B swizzle: address bits 7-9 are row bits 1-3, and bit 6 is
        // row bit 0, so rows 8 and 9 trade places whole.
        let out = ptxkit("swizzle 128B --tile 10x64").unwrap();
        let rows: Vec<&str> = out.lines().skip(1).collect();
        assert_eq!(rows[0], "row 0:   0   1   2   3");
        assert_eq!(rows[1], "row 1:   0   1   2   3");
        assert_eq!(rows[2], "row 2:   1   0   3   2");
        assert_eq!(rows[7], "row 7:   3   2   1   0");
        assert_eq!(rows[8], "row 8: 9.0 9.1 9.2 9.3");
        assert_eq!(rows[9], "row 9: 8.0 8.1 8.2 8.3");
    }

    #[test]
    fn bad_arguments_exit_2() {
        refuses(&[
            ("swizzle", ""),
            ("swizzle 16B 0", ""),
            ("swizzle 3,4,2 0", ""),
            ("swizzle 3,4 0", ""),
            ("swizzle 128B", ""),
            ("swizzle 128B -1", ""),
            ("swizzle 128B 12 --tile 8x128", ""),
            ("swizzle 128B --tile 8x100", ""),
            ("swizzle 128B --tile 8by128", ""),
            ("swizzle 128B --tile 100000x1024", ""),
            ("swizzle 128B 0 --what", ""),
        ]);
    }
}
