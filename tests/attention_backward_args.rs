//! The attention backward's launches refuse bad arguments without a GPU: the preprocess's and
//! the main kernel's signatures (the checks each of `AttentionBackward::run_borrowed`'s launches
//! makes, `BuiltKernel::config_for`, pure) given the arguments `run_borrowed` passes them, each
//! refusal a typed `RuntimeError` naming the tensor or the extent at fault: a log-sum-exp of the
//! wrong length or type, another head dim, a gradient or a V that disagrees with K, packed
//! offsets that disagree or are not i32. The checks `run_borrowed` makes before any launch
//! (packing, ranks, element types, KV heads dividing the query heads) are unit-tested in
//! `src/library/attention/backward/host.rs`; `ptxkit selftest --only attention_backward` passes
//! the same bad arguments through `Attention::backward` and `run_borrowed` on a device.

mod support;

use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::attention::backward::{BackwardConfig, build_main, build_preprocess};
use ptxkit::runtime::{ArgDesc, RuntimeError, Scalar};

const BF16: ScalarType = ScalarType::Bf16;
const F32: ScalarType = ScalarType::F32;

/// A tensor of `dtype` and `shape` at its own 16 MiB-aligned address (`slot`), on device 0.
fn t(dtype: ScalarType, shape: &[usize], slot: u64) -> ArgDesc {
    ArgDesc::tensor(dtype, shape, 0x100_0000 * (slot + 1), 0)
}

/// One problem's extents: batch (none packed), query rows, heads, key rows, KV heads, head dim.
#[derive(Clone, Copy)]
struct Problem {
    batch: Option<usize>,
    rows: usize,
    heads: usize,
    keys: usize,
    kv_heads: usize,
    d: usize,
}

impl Problem {
    const BATCHED: Problem = Problem {
        batch: Some(2),
        rows: 100,
        heads: 4,
        keys: 130,
        kv_heads: 2,
        d: 128,
    };

    fn lead(&self) -> Vec<usize> {
        self.batch.into_iter().collect()
    }

    /// `[batch, rows, heads, d]` (packed without the batch).
    fn rows(&self, rows: usize, heads: usize, d: usize) -> Vec<usize> {
        [self.lead(), vec![rows, heads, d]].concat()
    }

    /// The workspace's padded statistics' length, as `run_borrowed` sizes it: the query rows
    /// in 64-row blocks (packed, `(total / 64 + sequences) · 64`).
    fn padded(&self, sequences: usize) -> usize {
        match self.batch {
            Some(_) => self.rows.div_ceil(64) * 64,
            None => (self.rows / 64 + sequences) * 64,
        }
    }

    /// The workspace: D and `LSE · log2 e`, the `dQ` accumulator and its turn counters.
    fn workspace(&self, sequences: usize) -> [Vec<usize>; 3] {
        let lead = [self.lead(), vec![self.heads]].concat();
        let padded = self.padded(sequences);
        let turns = [lead.clone(), vec![padded / 64, self.d / 64]].concat();
        let acc = [turns.clone(), vec![64, 64]].concat();
        [[lead, vec![padded]].concat(), acc, turns]
    }

    /// The preprocess's arguments with `lse` for the log-sum-exp and `o` for O.
    fn preprocess(&self, o: ArgDesc, lse: ArgDesc, sequences: usize) -> Vec<ArgDesc> {
        let [stats, acc, turns] = self.workspace(sequences);
        let q = self.rows(self.rows, self.heads, self.d);
        vec![
            o,
            t(BF16, &q, 1),
            lse,
            t(F32, &stats, 3),
            t(F32, &stats, 4),
            t(F32, &acc, 5),
            t(ScalarType::U32, &turns, 6),
        ]
    }

    /// The main kernel's arguments, with `v` and `dk` for V and dK.
    fn main(&self, v: ArgDesc, dk: ArgDesc, sequences: usize) -> Vec<ArgDesc> {
        let [stats, acc, turns] = self.workspace(sequences);
        let q = self.rows(self.rows, self.heads, self.d);
        let kv = self.rows(self.keys, self.kv_heads, self.d);
        vec![
            t(BF16, &q, 0),
            t(BF16, &kv, 1),
            v,
            t(BF16, &q, 3),
            t(F32, &stats, 4),
            t(F32, &stats, 5),
            t(F32, &acc, 6),
            t(ScalarType::U32, &turns, 7),
            dk,
            t(BF16, &kv, 9),
            ArgDesc::Scalar(Scalar::F32(0.088)),
        ]
    }

    fn lse(&self, rows: usize) -> Vec<usize> {
        [self.lead(), vec![self.heads, rows]].concat()
    }
}

#[test]
fn the_preprocess_refuses_a_wrong_log_sum_exp_and_head_dim() {
    let cfg = BackwardConfig::new(BF16, 128, false);
    let pre = build_preprocess(Target::Sm90a, &cfg).unwrap();
    let p = Problem::BATCHED;
    let o = t(BF16, &p.rows(p.rows, p.heads, p.d), 0);
    let lse = t(F32, &p.lse(p.rows), 2);
    pre.config_for(&p.preprocess(o.clone(), lse.clone(), 0), 0)
        .unwrap();
    // LSE one row longer than O's rows.
    support::assert_err!(
        pre.config_for(&p.preprocess(o.clone(), t(F32, &p.lse(p.rows + 1), 2), 0), 0),
        RuntimeError::SymbolMismatch { symbol, .. } if symbol == "seqlen_q"
    );
    // LSE in bf16.
    support::assert_err!(
        pre.config_for(&p.preprocess(o.clone(), t(BF16, &p.lse(p.rows), 2), 0), 0),
        RuntimeError::ArgDtype { param, .. } if param == "lse"
    );
    // LSE without its heads (rank 2).
    support::assert_err!(
        pre.config_for(&p.preprocess(o, t(F32, &[2, p.rows], 2), 0), 0),
        RuntimeError::ArgShape { param, .. } if param == "lse"
    );
    // Head dim 64 for a kernel of 128.
    let p64 = Problem { d: 64, ..p };
    let o64 = t(BF16, &p64.rows(p.rows, p.heads, 64), 0);
    support::assert_err!(
        pre.config_for(&p64.preprocess(o64, lse, 0), 0),
        RuntimeError::ArgShape { param, .. } if param == "o"
    );
}

#[test]
fn the_main_kernel_refuses_gradients_and_values_that_disagree_with_k() {
    let cfg = BackwardConfig::new(BF16, 128, true);
    let main = build_main(Target::Sm90a, &cfg).unwrap();
    let p = Problem::BATCHED;
    let kv = p.rows(p.keys, p.kv_heads, p.d);
    main.config_for(&p.main(t(BF16, &kv, 2), t(BF16, &kv, 8), 0), 0)
        .unwrap();
    // dK one key longer than K.
    let longer = p.rows(p.keys + 1, p.kv_heads, p.d);
    support::assert_err!(
        main.config_for(&p.main(t(BF16, &kv, 2), t(BF16, &longer, 8), 0), 0),
        RuntimeError::SymbolMismatch { symbol, .. } if symbol == "seqlen_k"
    );
    // V with one KV head, K with two.
    let one_head = p.rows(p.keys, 1, p.d);
    support::assert_err!(
        main.config_for(&p.main(t(BF16, &one_head, 2), t(BF16, &kv, 8), 0), 0),
        RuntimeError::SymbolMismatch { symbol, .. } if symbol == "kv_heads"
    );
    // dK in f16.
    support::assert_err!(
        main.config_for(&p.main(t(BF16, &kv, 2), t(ScalarType::F16, &kv, 8), 0), 0),
        RuntimeError::ArgDtype { param, .. } if param == "dk"
    );
}

#[test]
fn packed_offsets_that_disagree_or_are_not_i32_are_refused() {
    let cfg = BackwardConfig::new(BF16, 128, false).with_varlen();
    let (pre, main) = (
        build_preprocess(Target::Sm90a, &cfg).unwrap(),
        build_main(Target::Sm90a, &cfg).unwrap(),
    );
    let p = Problem {
        batch: None,
        ..Problem::BATCHED
    };
    let cu = |dtype: ScalarType, n: usize, slot: u64| t(dtype, &[n], slot);
    let longest = |n: u32| ArgDesc::Scalar(Scalar::U32(n));
    let o = t(BF16, &p.rows(p.rows, p.heads, p.d), 0);
    let lse = t(F32, &p.lse(p.rows), 2);
    // Two sequences: 3 offsets each.
    let mut good = p.preprocess(o.clone(), lse.clone(), 2);
    good.extend([cu(ScalarType::S32, 3, 10), longest(60)]);
    pre.config_for(&good, 0).unwrap();
    let mut unsigned = p.preprocess(o, lse, 2);
    unsigned.extend([cu(ScalarType::U32, 3, 10), longest(60)]);
    support::assert_err!(
        pre.config_for(&unsigned, 0),
        RuntimeError::ArgDtype { param, .. } if param == "cu_seqlens_q"
    );
    let kv = p.rows(p.keys, p.kv_heads, p.d);
    let main_args = |keys: usize| {
        let mut args = p.main(t(BF16, &kv, 2), t(BF16, &kv, 8), 2);
        args.extend([
            cu(ScalarType::S32, 3, 10),
            cu(ScalarType::S32, keys, 11),
            longest(70),
        ]);
        args
    };
    main.config_for(&main_args(3), 0).unwrap();
    // Three sequences' key offsets for two sequences' query offsets.
    support::assert_err!(
        main.config_for(&main_args(4), 0),
        RuntimeError::SymbolMismatch { symbol, .. } if symbol == "offsets"
    );
}
