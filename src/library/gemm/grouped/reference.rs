//! The grouped GEMM's host references (from inputs already rounded to the kernel's input type):
//! in f32 for 16-bit inputs, in f64 for block-scaled FP8 (each group a dense block-scaled problem
//! of [`crate::library::gemm::check_block::reference_row`]); what `ptxkit selftest` compares
//! the kernel with.

use crate::library::gemm::SCALE_BLOCK;
use crate::library::gemm::check_block::{BlockOperands, reference_row};

/// `C_g = A_g·B_gᵀ` for one group: `a` its rows (`rows x k`), `b` its B (`n x k`), into `c`
/// (`rows x n`).
fn group(a: &[f32], b: &[f32], n: usize, k: usize, c: &mut [f32]) {
    for (a_row, c_row) in a.chunks_exact(k).zip(c.chunks_exact_mut(n)) {
        for (b_row, out) in b.chunks_exact(k).zip(c_row.iter_mut()) {
            *out = a_row.iter().zip(b_row).map(|(x, y)| x * y).sum();
        }
    }
}

/// The contiguous form: A `[M_total, K]`, B `[G, N, K]`, the cumulative row ends `offs` (the
/// last one M_total); C `[M_total, N]`.
pub fn contiguous(a: &[f32], b: &[f32], offs: &[i32], n: usize, k: usize) -> Vec<f32> {
    let m = a.len() / k.max(1);
    let mut c = vec![0.0f32; m * n];
    let mut start = 0usize;
    for (g, &end) in offs.iter().enumerate() {
        let end = (end.max(0) as usize).clamp(start, m);
        group(
            &a[start * k..end * k],
            &b[g * n * k..(g + 1) * n * k],
            n,
            k,
            &mut c[start * n..end * n],
        );
        start = end;
    }
    c
}

/// The masked form: A `[G, M_cap, K]`, B `[G, N, K]`, the live rows `counts`; C `[G, M_cap, N]`
/// with NaN in the rows past each group's count (the kernel must leave them as they were: a
/// check poisons C with NaN first).
pub fn masked(a: &[f32], b: &[f32], counts: &[i32], m_cap: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![f32::NAN; counts.len() * m_cap * n];
    for (g, &count) in counts.iter().enumerate() {
        let rows = (count.max(0) as usize).min(m_cap);
        let a0 = g * m_cap * k;
        let c0 = g * m_cap * n;
        group(
            &a[a0..a0 + rows * k],
            &b[g * n * k..(g + 1) * n * k],
            n,
            k,
            &mut c[c0..c0 + rows * n],
        );
    }
    c
}

/// Group `g`'s B and its scales from a block-scaled grouped problem's B `[G, N, K]` and `sb`
/// `[G, nb, kb]` (`kb = ceil(K/128)`, `nb = ceil(N/128)`).
fn group_b<'a>(p: &BlockOperands<'a>, g: usize, n: usize, k: usize) -> (&'a [f32], &'a [f32]) {
    let block = SCALE_BLOCK as usize;
    let grid = n.div_ceil(block) * k.div_ceil(block);
    (
        &p.b[g * n * k..(g + 1) * n * k],
        &p.sb[g * grid..(g + 1) * grid],
    )
}

/// The contiguous block-scaled form in f64, `p` every group's operands (A `[M_total, K]`, B
/// `[G, N, K]`, `sa` `[kb, M_total]`, `sb` `[G, nb, kb]`): group g's rows `offs[g-1]..offs[g]`
/// of C `[M_total, N]` from A's same rows, their scales (columns of `sa`) and group g's B and
/// scales; rows outside every group NaN (not written).
pub fn contiguous_block(p: BlockOperands<'_>, offs: &[i32], n: usize, k: usize) -> Vec<f64> {
    let m = p.a.len() / k.max(1);
    let mut c = vec![f64::NAN; m * n];
    let mut start = 0usize;
    for (g, &end) in offs.iter().enumerate() {
        let end = (end.max(0) as usize).clamp(start, m);
        let (b, sb) = group_b(&p, g, n, k);
        let ops = BlockOperands {
            a: p.a,
            b,
            sa: p.sa,
            sb,
        };
        for i in start..end {
            c[i * n..(i + 1) * n].copy_from_slice(&reference_row(ops, (m, n, k), i));
        }
        start = end;
    }
    c
}

/// The masked block-scaled form in f64, `p` every group's operands (A `[G, M_cap, K]`, B
/// `[G, N, K]`, `sa` `[G, kb, M_cap]`, `sb` `[G, nb, kb]`): C `[G, M_cap, N]` with group g's
/// first `counts[g]` rows from its A `[M_cap, K]`, its scales `sa[g]` `[kb, M_cap]` and its B
/// and scales; the rows past each count NaN (not written).
pub fn masked_block(
    p: BlockOperands<'_>,
    counts: &[i32],
    m_cap: usize,
    n: usize,
    k: usize,
) -> Vec<f64> {
    let kb = k.div_ceil(SCALE_BLOCK as usize);
    let mut c = vec![f64::NAN; counts.len() * m_cap * n];
    for (g, &count) in counts.iter().enumerate() {
        let rows = (count.max(0) as usize).min(m_cap);
        let (b, sb) = group_b(&p, g, n, k);
        let ops = BlockOperands {
            a: &p.a[g * m_cap * k..(g + 1) * m_cap * k],
            b,
            sa: &p.sa[g * kb * m_cap..(g + 1) * kb * m_cap],
            sb,
        };
        for i in 0..rows {
            let at = (g * m_cap + i) * n;
            c[at..at + n].copy_from_slice(&reference_row(ops, (m_cap, n, k), i));
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two groups of 1 and 2 rows (and an empty one between them), N = K = 2, by hand.
    #[test]
    fn contiguous_groups_use_their_own_b() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [1.0, 0.0, 0.0, 1.0, 9.0, 9.0, 9.0, 9.0, 2.0, 0.0, 0.0, 2.0];
        let c = contiguous(&a, &b, &[1, 1, 3], 2, 2);
        assert_eq!(c, vec![1.0, 2.0, 6.0, 8.0, 10.0, 12.0]);
    }

    /// Rows past a group's count stay NaN; a negative count is an empty group.
    #[test]
    fn masked_rows_past_the_count_are_left() {
        let a = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0];
        let b = [1.0, 1.0, 1.0, -1.0];
        let c = masked(&a, &b[..2], &[1], 4, 1, 2);
        assert_eq!(c[0], 2.0);
        assert!(c[1..].iter().all(|x| x.is_nan()));
        let c = masked(&a, &b[..2], &[-3], 4, 1, 2);
        assert!(c.iter().all(|x| x.is_nan()));
    }

    /// Block-scaled, by hand: K = 130 (two k-blocks, the second of 2 elements), N = 1, two
    /// groups of 1 and 2 rows (contiguous) and the same as masked counts: each value is
    /// `Σ_kb sa·sb·dot`.
    #[test]
    fn block_scaled_groups_use_their_own_scales() {
        let k = 130;
        // A's rows: all ones; B_0 all ones, B_1 all twos.
        let a = vec![1.0f32; 3 * k];
        let mut b = vec![1.0f32; k];
        b.extend(vec![2.0f32; k]);
        // sa [2, 3]: k-block 0 scales 1, 2, 4 by row; k-block 1 all 8. sb [G=2, 1, 2].
        let sa = [1.0, 2.0, 4.0, 8.0, 8.0, 8.0];
        let sb = [1.0, 0.5, 3.0, 1.0];
        let p = BlockOperands {
            a: &a,
            b: &b,
            sa: &sa,
            sb: &sb,
        };
        let c = contiguous_block(p, &[1, 3], 1, k);
        // Row 0, group 0: 128·1·1 + 2·8·0.5; rows 1, 2, group 1: 2·128·sa·3 + 2·2·8·1.
        assert_eq!(c, vec![136.0, 1568.0, 3104.0]);
        let sa_masked = [1.0, 2.0, 8.0, 8.0, 4.0, 4.0, 8.0, 8.0];
        let a_masked = vec![1.0f32; 4 * k];
        let p = BlockOperands {
            a: &a_masked,
            sa: &sa_masked,
            ..p
        };
        let c = masked_block(p, &[1, 1], 2, 1, k);
        assert_eq!(c[0], 136.0);
        assert!(c[1].is_nan());
        assert_eq!(c[2], 2.0 * 128.0 * 4.0 * 3.0 + 2.0 * 2.0 * 8.0);
        assert!(c[3].is_nan());
    }
}
