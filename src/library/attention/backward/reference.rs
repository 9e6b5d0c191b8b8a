//! The backward's host reference in f64: the gradients of `L = Σ dO ∘ O` with respect to Q, K
//! and V for the forward [`super::super::reference`] computes (the causal mask aligned to the
//! bottom right, grouped-query heads), and its check against finite differences.

use super::super::{AttentionShape, VarlenShape};

/// The gradients `(dQ, dK, dV)` of attention for `q` `[b, sq, h, d]`, `k`, `v` `[b, sk, hk, d]`
/// and the output's gradient `d_o` `[b, sq, h, d]` (row major; `dQ` like `q`, `dK` and `dV` like
/// `k`, each KV head's summed over the query heads of its group), computed in f64 from the
/// exact softmax: `P = softmax(scale · Q·Kᵀ)` over the visible keys, `D_i = Σ dO_i ∘ O_i`,
/// `dS = P ∘ (dO·Vᵀ − D)`, `dQ = scale · dS·K`, `dK = scale · dSᵀ·Q`, `dV = Pᵀ·dO`. A query
/// that sees no key contributes nothing.
pub fn reference_backward(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    d_o: &[f32],
    s: AttentionShape,
    causal: bool,
    scale: f32,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let wide = |x: &[f32]| x.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
    let (dq, dk, dv) = backward_f64(
        &wide(q),
        &wide(k),
        &wide(v),
        &wide(d_o),
        s,
        causal,
        f64::from(scale),
    );
    let narrow = |x: Vec<f64>| x.into_iter().map(|v| v as f32).collect::<Vec<f32>>();
    (narrow(dq), narrow(dk), narrow(dv))
}

/// The gradients of packed sequences ([`VarlenShape`]): [`reference_backward`] on each
/// sequence (its own lengths and causal alignment), `dQ` `[total_q, heads, d]` like `q`, `dK`
/// and `dV` `[total_k, kv_heads, d]` like `k`; a sequence whose rows are past the tensors'
/// ends is left out (its gradients 0).
pub fn reference_backward_varlen(
    [q, k, v, d_o]: [&[f32]; 4],
    s: &VarlenShape,
    causal: bool,
    scale: f32,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let (qw, kw) = (s.heads * s.head_dim, s.kv_heads * s.head_dim);
    let (total_q, total_k) = s.totals();
    let (mut dq, mut dk, mut dv) = (
        vec![0f32; total_q * qw],
        vec![0f32; total_k * kw],
        vec![0f32; total_k * kw],
    );
    for ((q0, sq), (k0, sk)) in s.sequences() {
        let (qr, kr) = (q0 * qw..(q0 + sq) * qw, k0 * kw..(k0 + sk) * kw);
        let (Some(qs), Some(ks), Some(vs), Some(dos)) = (
            q.get(qr.clone()),
            k.get(kr.clone()),
            v.get(kr.clone()),
            d_o.get(qr.clone()),
        ) else {
            continue;
        };
        let one = AttentionShape {
            batch: 1,
            seqlen_q: sq,
            seqlen_k: sk,
            heads: s.heads,
            kv_heads: s.kv_heads,
            head_dim: s.head_dim,
        };
        let (a, b, c) = reference_backward(qs, ks, vs, dos, one, causal, scale);
        for (dst, src, r) in [(&mut dq, a, &qr), (&mut dk, b, &kr), (&mut dv, c, &kr)] {
            if let Some(d) = dst.get_mut(r.clone()) {
                d.copy_from_slice(&src);
            }
        }
    }
    (dq, dk, dv)
}

/// The keys query `i` sees: all `sk`, or with the causal mask those `j <= i + sk - sq`.
fn visible(i: usize, sq: usize, sk: usize, causal: bool) -> usize {
    if !causal {
        sk
    } else if i + sk < sq {
        0
    } else {
        (i + sk - sq + 1).min(sk)
    }
}

/// Query row `i` of head `h` of sequence `b`: its softmax over the visible keys.
fn probs(
    q: &[f64],
    k: &[f64],
    s: &AttentionShape,
    causal: bool,
    scale: f64,
    at: [usize; 3],
) -> Vec<f64> {
    let [b, h, i] = at;
    let (sq, sk, heads, hk, d) = (s.seqlen_q, s.seqlen_k, s.heads, s.kv_heads, s.head_dim);
    let kh = h / (heads / hk.max(1)).max(1);
    let qi = &q[((b * sq + i) * heads + h) * d..][..d];
    let mut p: Vec<f64> = (0..visible(i, sq, sk, causal))
        .map(|j| {
            let kj = &k[((b * sk + j) * hk + kh) * d..][..d];
            scale * qi.iter().zip(kj).map(|(x, y)| x * y).sum::<f64>()
        })
        .collect();
    let m = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut l = 0.0;
    for x in &mut p {
        *x = (*x - m).exp();
        l += *x;
    }
    for x in &mut p {
        *x /= l;
    }
    p
}

/// [`reference_backward`] on f64 inputs.
fn backward_f64(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    d_o: &[f64],
    s: AttentionShape,
    causal: bool,
    scale: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (batch, sq, sk, heads, hk, d) = (
        s.batch, s.seqlen_q, s.seqlen_k, s.heads, s.kv_heads, s.head_dim,
    );
    let group = (heads / hk.max(1)).max(1);
    let mut dq = vec![0f64; q.len()];
    let mut dk = vec![0f64; k.len()];
    let mut dv = vec![0f64; v.len()];
    for b in 0..batch {
        for h in 0..heads {
            let kh = h / group;
            for i in 0..sq {
                let p = probs(q, k, &s, causal, scale, [b, h, i]);
                let row = ((b * sq + i) * heads + h) * d;
                let (qi, doi) = (&q[row..][..d], &d_o[row..][..d]);
                let kv = |j: usize| ((b * sk + j) * hk + kh) * d;
                // D_i = dO_i · O_i, O_i = Σ_j P_ij V_j.
                let mut di = 0.0;
                for (j, pj) in p.iter().enumerate() {
                    let vj = &v[kv(j)..][..d];
                    di += pj * doi.iter().zip(vj).map(|(x, y)| x * y).sum::<f64>();
                }
                for (j, &pj) in p.iter().enumerate() {
                    let (kj, vj) = (&k[kv(j)..][..d], &v[kv(j)..][..d]);
                    let dp: f64 = doi.iter().zip(vj).map(|(x, y)| x * y).sum();
                    let ds = pj * (dp - di);
                    for c in 0..d {
                        dq[row + c] += scale * ds * kj[c];
                        dk[kv(j) + c] += scale * ds * qi[c];
                        dv[kv(j) + c] += pj * doi[c];
                    }
                }
            }
        }
    }
    (dq, dk, dv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Σ dO ∘ O` for f64 inputs: the loss whose gradients the reference returns.
    fn loss(q: &[f64], k: &[f64], v: &[f64], d_o: &[f64], s: AttentionShape, causal: bool) -> f64 {
        let (sq, sk, h, hk, d) = (s.seqlen_q, s.seqlen_k, s.heads, s.kv_heads, s.head_dim);
        let mut out = 0.0;
        for b in 0..s.batch {
            for head in 0..h {
                let kh = head / (h / hk);
                for i in 0..sq {
                    let p = probs(q, k, &s, causal, 0.7, [b, head, i]);
                    let row = ((b * sq + i) * h + head) * d;
                    for (j, pj) in p.iter().enumerate() {
                        let vj = &v[((b * sk + j) * hk + kh) * d..][..d];
                        out += pj
                            * d_o[row..][..d]
                                .iter()
                                .zip(vj)
                                .map(|(x, y)| x * y)
                                .sum::<f64>();
                    }
                }
            }
        }
        out
    }

    /// Packed sequences of equal lengths are the batched problem; a ragged pack's second
    /// sequence is its own problem.
    #[test]
    fn the_packed_gradients_are_each_sequences() {
        let (sq, sk, h, hk, d) = (3, 5, 2, 1, 4);
        let x = |n: usize, salt: f32| -> Vec<f32> {
            (0..n).map(|i| ((i as f32 + salt) * 0.37).sin()).collect()
        };
        let (nq, nk) = (2 * sq * h * d, 2 * sk * hk * d);
        let (q, k, v, d_o) = (x(nq, 0.0), x(nk, 1.0), x(nk, 2.0), x(nq, 3.0));
        // The ragged pack's second sequence, and the batch of two of the equal pack.
        let one = AttentionShape {
            batch: 1,
            seqlen_q: 2,
            seqlen_k: 5,
            heads: h,
            kv_heads: hk,
            head_dim: d,
        };
        let batched = AttentionShape {
            batch: 2,
            seqlen_q: sq,
            seqlen_k: sk,
            ..one
        };
        let packed = VarlenShape::from_lengths(&[(sq, sk); 2], h, hk, d);
        for causal in [false, true] {
            let want = reference_backward(&q, &k, &v, &d_o, batched, causal, 0.5);
            let got = reference_backward_varlen([&q, &k, &v, &d_o], &packed, causal, 0.5);
            assert_eq!(want, got);
        }
        let ragged = VarlenShape::from_lengths(&[(1, 2), (2, 5)], h, hk, d);
        let (dq, dk, dv) = reference_backward_varlen([&q, &k, &v, &d_o], &ragged, true, 0.5);
        let (qr, kr) = (h * d..3 * h * d, 2 * hk * d..7 * hk * d);
        let (wq, wk, wv) = reference_backward(
            &q[qr.clone()],
            &k[kr.clone()],
            &v[kr.clone()],
            &d_o[qr.clone()],
            one,
            true,
            0.5,
        );
        assert_eq!(
            (&dq[qr], &dk[kr.clone()], &dv[kr]),
            (&wq[..], &wk[..], &wv[..])
        );
    }

    /// On a tiny problem with grouped heads, more queries than keys under the causal mask (a
    /// row that sees nothing) and without it, each gradient matches the central difference of
    /// the loss in every element.
    #[test]
    fn gradients_match_finite_differences() {
        let s = AttentionShape {
            batch: 2,
            seqlen_q: 4,
            seqlen_k: 3,
            heads: 2,
            kv_heads: 1,
            head_dim: 3,
        };
        let x = |n: usize, salt: f64| -> Vec<f64> {
            (0..n).map(|i| ((i as f64 + salt) * 0.71).sin()).collect()
        };
        let nq = s.batch * s.seqlen_q * s.heads * s.head_dim;
        let nk = s.batch * s.seqlen_k * s.kv_heads * s.head_dim;
        let (q, k, v, d_o) = (x(nq, 0.0), x(nk, 1.0), x(nk, 2.0), x(nq, 3.0));
        for causal in [false, true] {
            let (dq, dk, dv) = backward_f64(&q, &k, &v, &d_o, s, causal, 0.7);
            let h = 1e-6;
            let mut inputs = [q.clone(), k.clone(), v.clone()];
            for (t, grad) in [dq, dk, dv].iter().enumerate() {
                for e in 0..grad.len() {
                    let x0 = inputs[t][e];
                    inputs[t][e] = x0 + h;
                    let [a, b, c] = &inputs;
                    let up = loss(a, b, c, &d_o, s, causal);
                    inputs[t][e] = x0 - h;
                    let [a, b, c] = &inputs;
                    let down = loss(a, b, c, &d_o, s, causal);
                    inputs[t][e] = x0;
                    let fd = (up - down) / (2.0 * h);
                    assert!(
                        (fd - grad[e]).abs() < 1e-7,
                        "causal {causal}, tensor {t}, element {e}: {fd} against {}",
                        grad[e]
                    );
                }
            }
            // The causal mask's first query sees no key (0 + 3 - 4 < 0): no gradient.
            if causal {
                let (dq, ..) = backward_f64(&q, &k, &v, &d_o, s, causal, 0.7);
                assert!(dq[..s.head_dim].iter().all(|&g| g == 0.0));
            }
        }
    }
}
