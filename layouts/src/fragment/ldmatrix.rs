//! `ldmatrix` / `stmatrix` fragments of `.m8n8` `.b16` matrices (PTX ISA, "Data Movement and
//! Conversion Instructions": `ldmatrix`, figure "ldmatrix fragment layout"; `stmatrix` stores
//! the same fragments).
//!
//! Each 8×8 matrix of 16-bit elements is held by the warp with thread `t` holding row `t / 4`,
//! elements `2 * (t % 4)` and `+1` (one 32-bit register). With `.trans` the matrix is
//! transposed on the way: thread `t` holds column `t / 4`, rows `2 * (t % 4)` and `+1`.
//! `.x2` / `.x4` repeat this for 2 or 4 matrices into further registers; the matrices are placed
//! here one below the other, matrix `i` in rows `8i..8i+8` of an `8num × 8` tile (where they
//! really are is the caller's choice of row addresses).

use super::{FragmentError, TvLayout};

/// The fragment of `ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`: 32 threads × `2 *
/// num` 16-bit values over an `8num × 8` tile.
pub fn ldmatrix(num: i64, trans: bool) -> Result<TvLayout, FragmentError> {
    fragment("ldmatrix", num, trans)
}

/// The fragment of `stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`: the same as
/// [`ldmatrix`].
pub fn stmatrix(num: i64, trans: bool) -> Result<TvLayout, FragmentError> {
    fragment("stmatrix", num, trans)
}

fn fragment(instruction: &'static str, num: i64, trans: bool) -> Result<TvLayout, FragmentError> {
    if ![1, 2, 4].contains(&num) {
        return Err(FragmentError::Unsupported {
            instruction,
            message: format!(".x{num}: num is 1, 2 or 4"),
        });
    }
    let rows = 8 * num;
    let name = format!(
        "{instruction}.m8n8.x{num}{}",
        if trans { ".trans" } else { "" }
    );
    // offset = row + rows * col; thread t = t0 + 4 * t1 with t0 = t % 4, t1 = t / 4.
    if trans {
        // row = 8m + 2 t0 + j, col = t1
        TvLayout::from_modes(name, rows, 8, &[(4, 2), (8, rows)], &[(2, 1), (num, 8)])
    } else {
        // row = 8m + t1, col = 2 t0 + j
        TvLayout::from_modes(
            name,
            rows,
            8,
            &[(4, 2 * rows), (8, 1)],
            &[(2, rows), (num, 8)],
        )
    }
}
