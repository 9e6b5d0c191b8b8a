//! The grouped GEMM's host reference in f32 (from inputs already rounded to the kernel's input
//! type): what `ptxkit selftest` compares the kernel with.

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
}
